package server

import (
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// CertReloader serves idemlab's own HTTPS certificate (--tls-cert,
// --tls-key) and loads it again when either file changes, so that a
// renewal (certbot, acme.sh, a school's IT) takes effect without a
// restart and without dropping the class. The files are looked at again
// at most once every CheckEvery; a pair that does not load (a renewal
// caught half written) keeps the last good certificate and is logged.
// It is safe for concurrent use.
type CertReloader struct {
	certFile, keyFile string
	log               *slog.Logger
	// CheckEvery bounds how often the files are looked at; zero means
	// every second.
	CheckEvery time.Duration

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   [32]byte // the digest of the files' contents when loaded
	checked time.Time
}

// NewCertReloader loads the pair once; an error stops the start, with the
// file named.
func NewCertReloader(certFile, keyFile string, log *slog.Logger) (*CertReloader, error) {
	if certFile == "" || keyFile == "" {
		return nil, fmt.Errorf("--tls-cert and --tls-key go together: give both files")
	}
	c := &CertReloader{certFile: certFile, keyFile: keyFile, log: log}
	stamp, err := c.stampNow()
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("load --tls-cert %s and --tls-key %s: %w", certFile, keyFile, err)
	}
	c.cert, c.stamp, c.checked = &cert, stamp, time.Now()
	return c, nil
}

// stampNow digests both files' contents: a renewal is told by what the
// files hold, not by their times or sizes (a copy may keep the old time,
// and a new key is as long as the old one).
func (c *CertReloader) stampNow() ([32]byte, error) {
	h := sha256.New()
	for _, name := range []string{c.certFile, c.keyFile} {
		b, err := os.ReadFile(name)
		if err != nil {
			return [32]byte{}, fmt.Errorf("TLS file: %w", err)
		}
		h.Write(b)
		h.Write([]byte{0})
	}
	return [32]byte(h.Sum(nil)), nil
}

// GetCertificate is tls.Config's: the current certificate, loaded again
// first when the files changed.
func (c *CertReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	every := c.CheckEvery
	if every <= 0 {
		every = time.Second
	}
	if now := time.Now(); now.Sub(c.checked) >= every {
		c.checked = now
		if stamp, err := c.stampNow(); err == nil && stamp != c.stamp {
			cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
			if err != nil {
				c.log.Warn("TLS certificate changed but does not load; the previous one is kept", "cert", c.certFile, "err", err)
			} else {
				c.cert, c.stamp = &cert, stamp
				c.log.Info("TLS certificate loaded again", "cert", c.certFile)
			}
		}
	}
	return c.cert, nil
}

// TLSConfig is the server's TLS configuration over the reloader. It
// offers HTTP/1.1 only: the classroom's websockets are HTTP/1.1 upgrades.
func (c *CertReloader) TLSConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: c.GetCertificate, NextProtos: []string{"http/1.1"}}
}
