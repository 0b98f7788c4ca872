package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/internal/freeport"
	"idemlab/internal/nginxtest"
)

// A class as docs/DEPLOY.md sets it up: Debian's nginx, run from the
// guide's own configuration, terminates TLS in front of a real `idemlab
// serve` with TLS of its own, --trusted-proxy and --public-url; phones in
// Chromium open the public name (mapped to this machine) over HTTPS.

// writeCert writes a self-signed certificate and key for 127.0.0.1 into
// dir, under name, and returns the two paths and the serial number.
func writeCert(t *testing.T, dir, name string) (certFile, keyFile string, serial *big.Int) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	serial, err = rand.Int(rand.Reader, big.NewInt(1<<62))
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: "idemlab test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kb, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	return certFile, keyFile, serial
}

// servedSerial is the serial number of the certificate addr serves.
func servedSerial(t *testing.T, addr string) *big.Int {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	require.NoError(t, err)
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber
}

func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := freeport.Addr()
	require.NoError(t, err)
	return addr
}

// deployedServe runs idemlab as the guide's systemd unit does, on addr,
// and returns the process and the sign-in link it printed.
func deployedServe(t *testing.T, bin, addr string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd, _, link := serveWithSecret(t, bin, append([]string{"--addr", addr}, args...)...)
	return cmd, link
}

// deployBrowser starts a Chromium of the test's own that maps the class's
// public name to this machine and accepts the test's self-signed
// certificates, as a phone that trusts the school's would.
func deployBrowser(t *testing.T, name string) context.Context {
	t.Helper()
	path := ""
	for _, p := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if full, err := exec.LookPath(p); err == nil {
			path = full
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no Chromium installed under CI")
		}
		t.Skip("no Chromium installed: apt-get install -y chromium (CI's .ci/run does)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true),
		chromedp.Flag("ignore-certificate-errors", true),
		chromedp.Flag("host-resolver-rules", "MAP "+name+" 127.0.0.1"))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	require.NoError(t, chromedp.Do(browser))
	t.Cleanup(func() { cancelBrowser(); cancelAlloc() })
	return browser
}

// phoneTab opens a tab in a browser context of its own (its own cookies
// and localStorage: another phone).
func phoneTab(t *testing.T, browser context.Context) context.Context {
	t.Helper()
	tab, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	require.NoError(t, chromedp.Do(tab))
	ctx, cancelT := context.WithTimeout(tab, 4*time.Minute)
	t.Cleanup(func() { cancelT(); cancel() })
	return ctx
}

// waitFor polls a JavaScript condition until it is true, for a minute.
func waitFor(t *testing.T, ctx context.Context, cond string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(time.Minute)))
	require.NoError(t, err, "wait for %s", cond)
}

func evalJS[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err, expr)
	return v
}

// do runs browser steps.
func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, steps...))
}

func clickOn(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		_, err := chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)(ctx, tgt)
		return err
	})
}

func setJS(expr string) chromedp.Action[chromedp.Void] { return chromedp.Evaluate[chromedp.Void](expr) }

// TestClassThroughNginxWithTLS: every phone of a class joins through nginx
// over HTTPS, the instructor's cookie is Secure and the projected address
// names https://, a storm reaches every screen, a restart of idemlab
// brings every phone back, wrong secrets from one machine behind the
// proxy leave the instructor's sign-in from another alone, and idemlab's
// own certificate is loaded again when its files change.
func TestClassThroughNginxWithTLS(t *testing.T) {
	const name = nginxtest.DocServerName
	bin := buildBinary(t)
	dir := t.TempDir()
	certFile, keyFile, firstSerial := writeCert(t, dir, "idemlab")
	addr := freeAddr(t)
	proxy := nginxtest.Start(t, nginxtest.Options{Upstream: addr, UpstreamTLS: true})
	public := proxy.URL // https://class.school.test:PORT
	args := []string{"--db", filepath.Join(dir, "idemlab.db"), "--tls-cert", certFile, "--tls-key", keyFile,
		"--trusted-proxy", "127.0.0.1/32", "--public-url", public}
	srv, link := deployedServe(t, bin, addr, args...)
	require.True(t, strings.HasPrefix(link, public+"/classroom/teach#signin="), "the printed link names the public address: %s", link)

	browser := deployBrowser(t, name)
	proj := phoneTab(t, browser)
	do(t, proj, chromedp.EmulateViewport(1920, 1080), chromedp.Navigate(link))
	waitFor(t, proj, `!document.getElementById('lobby').hidden`)
	do(t, proj, clickOn("#create"))
	waitFor(t, proj, `document.getElementById('code').textContent.length === 6 && document.getElementById('conn').textContent === 'online'`)
	code := evalJS[string](t, proj, `document.getElementById('code').textContent`)
	waitFor(t, proj, `document.getElementById('join-url').textContent.startsWith('https://')`)
	assert.Equal(t, public+"/classroom/", evalJS[string](t, proj, `document.getElementById('join-url').textContent`), "the projector names the address with its scheme")
	var cookies network.GetCookiesResult
	do(t, proj, chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		var err error
		cookies, err = cdp.Call(ctx, tgt, network.GetCookies, network.GetCookiesParams{URLs: []string{public + "/classroom/"}})
		return err
	}))
	require.Len(t, cookies.Cookies, 1)
	assert.True(t, cookies.Cookies[0].Secure, "the instructor's cookie is Secure behind the TLS proxy")

	// A class of 12 phones (the number nginx let 4 of in before).
	const phones = 12
	var tabs []context.Context
	for i := range phones {
		p := phoneTab(t, browser)
		do(t, p, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(public+"/classroom/?room="+code))
		waitFor(t, p, `document.getElementById('room-code').value === '`+code+`'`)
		do(t, p, setJS(`document.getElementById('nickname').value = 'phone`+strconv.Itoa(i)+`'`), clickOn(`#join-form button[type=submit]`))
		tabs = append(tabs, p)
	}
	for i, p := range tabs {
		waitFor(t, p, `!document.getElementById('client').hidden`)
		assert.Equal(t, "wss:", evalJS[string](t, p, `location.protocol === 'https:' ? 'wss:' : 'ws:'`), "phone %d", i)
	}
	waitFor(t, proj, `document.getElementById('online').dataset.online === '`+strconv.Itoa(phones)+`'`)

	// A storm reaches every screen.
	do(t, proj, setJS(`(() => {
		document.getElementById('storm-panel').open = true;
		const set = (id, v) => { document.getElementById(id).value = v; };
		set('level', 'naive'); set('clients', '6'); set('keys', '2'); set('attempts', '2'); set('fault', 'none'); set('latency', '20'); set('slow', '0');
	})()`), clickOn("#fire"))
	waitFor(t, proj, `document.getElementById('tally').dataset.duplicates === '10'`)
	for _, p := range tabs {
		waitFor(t, p, `document.getElementById('room-verdict').textContent.includes('10 extra transfers')`)
	}

	// Wrong secrets from one machine behind the proxy: that machine is
	// held off, the instructor at another signs in.
	through := func(from string) *http.Client {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second}
		jar, _ := cookiejar.New(nil)
		return &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: proxy.TLSConfig(),
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, "127.0.0.1:"+strconv.Itoa(proxy.Port))
			}}}
	}
	signIn := func(c *http.Client, token string) int {
		req, _ := http.NewRequest("POST", public+"/classroom/api/session", strings.NewReader(`{"token":"`+token+`"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", public)
		res, err := c.Do(req)
		require.NoError(t, err)
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	guesser := through("127.0.0.5")
	statuses := map[int]int{}
	for range 20 {
		statuses[signIn(guesser, "wrong-wrong-wrong-wrong")]++
	}
	assert.Equal(t, map[int]int{401: 5, 429: 15}, statuses, "the guessing machine, counted as itself through the proxy")
	assert.Equal(t, 200, signIn(through("127.0.0.6"), abuseToken), "the instructor at another machine behind the same proxy")

	// idemlab's own certificate is loaded again when its files change.
	assert.Equal(t, firstSerial, servedSerial(t, addr))
	newCert, newKey, newSerial := writeCert(t, dir, "renewed")
	require.NoError(t, os.Rename(newKey, keyFile))
	require.NoError(t, os.Rename(newCert, certFile))
	deadline := time.Now().Add(10 * time.Second)
	for servedSerial(t, addr).Cmp(newSerial) != 0 {
		require.True(t, time.Now().Before(deadline), "the renewed certificate was never served")
		time.Sleep(200 * time.Millisecond)
	}

	// A restart: every phone comes back, with its name.
	require.NoError(t, srv.Process.Signal(syscall.SIGTERM))
	srv.Wait()
	for _, p := range tabs {
		waitFor(t, p, `document.getElementById('conn').dataset.status !== 'online'`)
	}
	deployedServe(t, bin, addr, args...)
	for i, p := range tabs {
		waitFor(t, p, `document.getElementById('conn').dataset.status === 'online' && !document.getElementById('client').hidden`)
		assert.Equal(t, fmt.Sprintf("phone%d", i), evalJS[string](t, p, `document.getElementById('me').textContent`))
	}
	waitFor(t, proj, `document.getElementById('online').dataset.online === '`+strconv.Itoa(phones)+`'`)
}
