package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/internal/peer"
)

// TestHTTPSMakesCookiesSecure: the instructor's cookie is Secure and the
// answer carries HSTS when the browser reached idemlab over HTTPS, its own
// TLS or a trusted proxy's; a forwarded "https" from anyone else changes
// nothing.
// testToken is the instructor's secret the tests sign in with.
const testToken = "instructor-secret-for-tests-0123456789"

func TestHTTPSMakesCookiesSecure(t *testing.T) {
	trusted, err := peer.ParseTrusted([]string{"127.0.0.1/32"})
	require.NoError(t, err)
	banks, err := OpenBanks(Config{Open: testBanks("")})
	require.NoError(t, err)
	t.Cleanup(func() { CloseBanks(banks) })
	for _, tc := range []struct {
		name    string
		tls     bool
		proxies peer.Trusted
		proto   string
		secure  bool
	}{
		{name: "plain HTTP", secure: false},
		{name: "idemlab's own TLS", tls: true, secure: true},
		{name: "a trusted proxy's TLS", proxies: trusted, proto: "https", secure: true},
		{name: "a forwarded https from an untrusted peer", proto: "https", secure: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := New(banks, testOptions(Options{InstructorToken: testToken, TrustedProxies: tc.proxies, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
			require.NoError(t, err)
			defer srv.Close()
			ts := httptest.NewUnstartedServer(srv)
			if tc.tls {
				ts.StartTLS()
			} else {
				ts.Start()
			}
			defer ts.Close()
			req, _ := http.NewRequest("POST", ts.URL+"/classroom/api/session", strings.NewReader(`{"token":"`+testToken+`"}`))
			req.Header.Set("Content-Type", "application/json")
			origin := ts.URL
			if tc.proto != "" {
				req.Header.Set("X-Forwarded-Proto", tc.proto)
				req.Header.Set("X-Forwarded-For", "192.0.2.8")
				origin = strings.Replace(ts.URL, "http://", "https://", 1)
				if !tc.secure {
					origin = ts.URL
				}
			}
			req.Header.Set("Origin", origin)
			res, err := ts.Client().Do(req)
			require.NoError(t, err)
			res.Body.Close()
			require.Equal(t, 200, res.StatusCode)
			cookies := res.Cookies()
			require.Len(t, cookies, 1)
			assert.Equal(t, tc.secure, cookies[0].Secure, "Secure cookie")
			assert.Equal(t, tc.secure, res.Header.Get("Strict-Transport-Security") != "", "HSTS")
		})
	}
}

// writeKeyPair writes a fresh self-signed certificate and its key.
func writeKeyPair(t *testing.T, certFile, keyFile string) *big.Int {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: "idemlab"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kb, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	return serial
}

// TestCertReloader: a renewed pair is served once the files change; a pair
// caught half written (a new certificate beside the old key) keeps the
// last good one until the key follows.
func TestCertReloader(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	first := writeKeyPair(t, certFile, keyFile)
	r, err := NewCertReloader(certFile, keyFile, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	r.CheckEvery = time.Nanosecond
	serial := func() *big.Int {
		c, err := r.GetCertificate(&tls.ClientHelloInfo{})
		require.NoError(t, err)
		leaf, err := x509.ParseCertificate(c.Certificate[0])
		require.NoError(t, err)
		return leaf.SerialNumber
	}
	assert.Equal(t, first, serial())

	otherCert, otherKey := filepath.Join(dir, "new-cert.pem"), filepath.Join(dir, "new-key.pem")
	second := writeKeyPair(t, otherCert, otherKey)
	require.NoError(t, os.Rename(otherCert, certFile))
	assert.Equal(t, first, serial(), "a certificate without its key: the last good pair stays")
	require.NoError(t, os.Rename(otherKey, keyFile))
	assert.Equal(t, second, serial(), "the renewed pair")

	_, err = NewCertReloader(certFile, filepath.Join(dir, "missing.pem"), nil)
	assert.ErrorContains(t, err, "missing.pem")
	_, err = NewCertReloader(certFile, "", nil)
	assert.ErrorContains(t, err, "go together")
}
