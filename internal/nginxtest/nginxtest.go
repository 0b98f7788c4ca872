// Package nginxtest puts, for one test, the reverse proxy that
// docs/DEPLOY.md publishes in front of a server the test started: Debian's
// nginx running the configuration between DEPLOY.md's <!-- nginx:begin -->
// and <!-- nginx:end --> markers (Start), or Caddy running the Caddyfile
// between <!-- caddy:begin --> and <!-- caddy:end --> (StartCaddy). Either
// speaks HTTPS on 127.0.0.1 with a self-signed certificate made by openssl
// for the name phones open, and stops, workers and all, when the test ends.
//
// DEPLOY.md writes the values an instructor changes as real ones: the name
// class.school.test, ports 443 and 80, the upstream 127.0.0.1:8080 and the
// certificate files. The proxy runs the published text with only those put
// in (the test's name, free ports, its upstream, its certificate) and fails
// the test when one of them is not where the guide had it, so that the guide
// and what the tests run cannot drift apart.
//
// Where nginx, Caddy or openssl is missing the test is skipped with the
// package to install, as the browser tests skip without Chromium; under CI
// (the CI environment variable set) it fails instead, since .ci/run
// installs them.
package nginxtest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"idemlab/internal/freeport"
)

// The values DEPLOY.md's configurations are written with, which a test's
// own take the place of.
const (
	DocServerName = "class.school.test"
	DocUpstream   = "127.0.0.1:8080"
)

// Options says what a proxy stands in front of.
type Options struct {
	// Upstream is the host:port of the server behind the proxy, such as
	// an httptest.Server's listener or an idemlab serve --addr.
	Upstream string
	// UpstreamTLS says the upstream speaks HTTPS (idemlab's own
	// --tls-cert behind the proxy). The proxy does not check its
	// certificate, as DEPLOY.md says for a server on the same machine.
	UpstreamTLS bool
	// ServerName is the name the proxy's certificate is made for and the
	// URL names; DocServerName when empty.
	ServerName string
	// DeployMD is the path of docs/DEPLOY.md; when empty, the one in the
	// module that holds the working directory.
	DeployMD string
}

// Proxy is a reverse proxy that a test started; the test's cleanup stops
// it. Its methods are safe for concurrent use.
type Proxy struct {
	// URL is https://ServerName:Port. ServerName does not resolve: dial
	// it with DialContext, or use Client.
	URL string
	// Port is the HTTPS port on 127.0.0.1.
	Port int
	// HTTPURL is http://ServerName:HTTPPort, where the proxy redirects
	// to HTTPS (DEPLOY.md's port 80).
	HTTPURL  string
	HTTPPort int
	// CertFile is the PEM certificate the proxy presents, for a client's
	// RootCAs (TLSConfig and Client trust it already).
	CertFile string
	// Config is the whole configuration the proxy runs.
	Config string
	// Dir is the proxy's own temporary directory: its configuration,
	// certificate, logs and temporary files.
	Dir string

	kind  string // "nginx" or "caddy"
	roots *x509.CertPool

	mu  sync.Mutex
	cmd *exec.Cmd
	// exited is closed when cmd has been waited for.
	exited chan struct{}
}

// Start runs nginx with DEPLOY.md's configuration in front of
// opts.Upstream and stops it when t ends.
func Start(t testing.TB, opts Options) *Proxy {
	t.Helper()
	return start(t, "nginx", opts)
}

// StartCaddy runs Caddy with DEPLOY.md's Caddyfile in front of
// opts.Upstream and stops it when t ends.
func StartCaddy(t testing.TB, opts Options) *Proxy {
	t.Helper()
	return start(t, "caddy", opts)
}

func start(t testing.TB, kind string, opts Options) *Proxy {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: no %s process (make test runs the reverse proxy tests)", kind)
	}
	need(t, kind, "openssl")
	if opts.Upstream == "" {
		t.Fatal("nginxtest: Options.Upstream is empty")
	}
	if opts.ServerName == "" {
		opts.ServerName = DocServerName
	}
	if opts.DeployMD == "" {
		path, err := deployMD()
		if err != nil {
			t.Fatalf("nginxtest: %v", err)
		}
		opts.DeployMD = path
	}
	published, err := Published(opts.DeployMD, kind)
	if err != nil {
		t.Fatalf("nginxtest: %v", err)
	}

	// The directory is the proxy's prefix. nginx's workers drop root for
	// nobody, so it must be one they can enter; nginx itself makes the
	// temporary folders inside it theirs.
	dir, err := os.MkdirTemp("", "idemlab-"+kind+"-")
	if err != nil {
		t.Fatalf("nginxtest: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatalf("nginxtest: %v", err)
	}
	p := &Proxy{kind: kind, Dir: dir, CertFile: filepath.Join(dir, "cert.pem")}
	keyFile := filepath.Join(dir, "key.pem")
	if err := selfSigned(opts.ServerName, p.CertFile, keyFile); err != nil {
		t.Fatalf("nginxtest: %v", err)
	}
	pem, err := os.ReadFile(p.CertFile)
	if err != nil {
		t.Fatalf("nginxtest: %v", err)
	}
	p.roots = x509.NewCertPool()
	p.roots.AppendCertsFromPEM(pem)

	// A port picked free can be taken before the proxy binds it; then
	// pick again.
	for try := 1; ; try++ {
		if p.Port, err = freePort(); err == nil {
			p.HTTPPort, err = freePort()
		}
		if err != nil {
			t.Fatalf("nginxtest: %v", err)
		}
		s := site{name: opts.ServerName, port: p.Port, httpPort: p.HTTPPort, upstream: opts.Upstream, upstreamTLS: opts.UpstreamTLS, cert: p.CertFile, key: keyFile, dir: dir}
		if kind == "nginx" {
			p.Config, err = nginxConfig(published, s)
		} else {
			p.Config, err = caddyConfig(published, s)
		}
		if err != nil {
			t.Fatalf("nginxtest: %s: %v", opts.DeployMD, err)
		}
		if err := os.WriteFile(p.confFile(), []byte(p.Config), 0o644); err != nil {
			t.Fatalf("nginxtest: %v", err)
		}
		err = p.run()
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "address already in use") || try == 3 {
			break
		}
	}
	if err != nil {
		t.Fatalf("nginxtest: start %s: %v", kind, err)
	}
	p.URL = fmt.Sprintf("https://%s:%d", opts.ServerName, p.Port)
	p.HTTPURL = fmt.Sprintf("http://%s:%d", opts.ServerName, p.HTTPPort)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("nginxtest: %s's log:\n%s", kind, p.log())
		}
		p.Stop()
	})
	return p
}

// Stop stops the proxy and waits until it and its worker processes are
// gone. Stopping a stopped proxy does nothing.
func (p *Proxy) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stop()
}

// Restart stops the proxy and starts it again on the same ports and
// configuration, as a proxy's restart looks to the phones: every
// connection through it is cut. It returns the error of the new start
// rather than failing the test that started the proxy, since the test
// that restarts it may be a subtest: require.NoError(t, p.Restart()).
func (p *Proxy) Restart() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stop()
	if err := p.start(); err != nil {
		return fmt.Errorf("nginxtest: restart %s: %w", p.kind, err)
	}
	return nil
}

// DialContext dials 127.0.0.1 whatever host addr names, so that the
// proxy's URL, whose name does not resolve, reaches it with the name
// intact for TLS and the Host header.
func (p *Proxy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
}

// TLSConfig trusts the proxy's certificate and nothing else.
func (p *Proxy) TLSConfig() *tls.Config {
	return &tls.Config{RootCAs: p.roots}
}

// Client is an HTTP client that reaches the proxy at its URL, trusting
// its certificate, and does not follow redirects (a test reads them).
func (p *Proxy) Client() *http.Client {
	return &http.Client{
		Transport: &http.Transport{DialContext: p.DialContext, TLSClientConfig: p.TLSConfig(), ForceAttemptHTTP2: false},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
		Timeout: 30 * time.Second,
	}
}

// Published returns the text of the fenced code block in the Markdown
// file at path that stands between <!-- name:begin --> and
// <!-- name:end -->, without its fences.
func Published(path, name string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	begin, end := "<!-- "+name+":begin -->", "<!-- "+name+":end -->"
	s := string(b)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("%s: no %s … %s", path, begin, end)
	}
	block := strings.TrimSpace(s[i+len(begin) : j])
	lines := strings.Split(block, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "```") || strings.TrimSpace(lines[len(lines)-1]) != "```" {
		return "", fmt.Errorf("%s: between %s and %s there must be one fenced code block and nothing else", path, begin, end)
	}
	return strings.Join(lines[1:len(lines)-1], "\n") + "\n", nil
}

// site is what a test puts into a published configuration.
type site struct {
	name           string
	port, httpPort int
	upstream       string
	upstreamTLS    bool
	cert, key      string
	dir            string
}

// substitute replaces every match of re in s with repl, and fails unless
// there are exactly want of them.
func substitute(s, what string, re *regexp.Regexp, want int, repl string) (string, error) {
	if n := len(re.FindAllStringIndex(s, -1)); n != want {
		return "", fmt.Errorf("the published configuration has %d × %s, the test expects %d", n, what, want)
	}
	return re.ReplaceAllString(s, repl), nil
}

var (
	nginxListen443  = regexp.MustCompile(`(?m)^(\s*listen\s+)443(\s+ssl\s*;)`)
	nginxListen80   = regexp.MustCompile(`(?m)^(\s*listen\s+)80(\s*;)`)
	nginxCert       = regexp.MustCompile(`(?m)^(\s*ssl_certificate\s+)\S+;`)
	nginxCertKey    = regexp.MustCompile(`(?m)^(\s*ssl_certificate_key\s+)\S+;`)
	nginxProxyPass  = regexp.MustCompile(`(?m)^(\s*)proxy_pass\s+http://` + regexp.QuoteMeta(DocUpstream) + `;`)
	docServerNameRe = regexp.MustCompile(`\b` + regexp.QuoteMeta(DocServerName) + `\b`)
)

// nginxConfig wraps the published http-level block in what a test's nginx
// needs around it, with the test's values put in.
func nginxConfig(published string, s site) (string, error) {
	c := published
	var err error
	steps := []struct {
		what string
		re   *regexp.Regexp
		want int
		repl string
	}{
		{"listen 443 ssl", nginxListen443, 1, fmt.Sprintf("${1}127.0.0.1:%d${2}", s.port)},
		{"listen 80", nginxListen80, 1, fmt.Sprintf("${1}127.0.0.1:%d${2}", s.httpPort)},
		{"ssl_certificate", nginxCert, 1, "${1}" + s.cert + ";"},
		{"ssl_certificate_key", nginxCertKey, 1, "${1}" + s.key + ";"},
		{"proxy_pass http://" + DocUpstream, nginxProxyPass, 1, "${1}proxy_pass " + upstreamURL(s) + ";" + nginxUpstreamTLS(s)},
	}
	for _, st := range steps {
		if c, err = substitute(c, st.what, st.re, st.want, st.repl); err != nil {
			return "", err
		}
	}
	c = docServerNameRe.ReplaceAllLiteralString(c, s.name)
	tmp := func(name string) string { return filepath.Join(s.dir, "tmp", name) }
	// The top level a test's nginx needs: in the foreground, so that the
	// test owns it; everything it writes inside its own directory (Debian's
	// defaults are under /var, which a test neither owns nor may fill).
	// sendfile, tcp_nopush and gzip are on, as in Debian's nginx.conf, so
	// that the block runs as it would there.
	return fmt.Sprintf(`# nginxtest: DEPLOY.md's nginx block inside a test's top level.
daemon off;
worker_processes 1;
pid %s;
error_log %s notice;
events {
    worker_connections 256;
}
http {
    access_log %s;
    client_body_temp_path %s;
    proxy_temp_path %s;
    fastcgi_temp_path %s;
    uwsgi_temp_path %s;
    scgi_temp_path %s;
    sendfile on;
    tcp_nopush on;
    gzip on;

# DEPLOY.md's block begins.
%s# DEPLOY.md's block ends.
}
`, filepath.Join(s.dir, "nginx.pid"), filepath.Join(s.dir, "error.log"), filepath.Join(s.dir, "access.log"),
		tmp("client_body"), tmp("proxy"), tmp("fastcgi"), tmp("uwsgi"), tmp("scgi"), c), nil
}

func upstreamURL(s site) string {
	if s.upstreamTLS {
		return "https://" + s.upstream
	}
	return "http://" + s.upstream
}

// nginxUpstreamTLS is what DEPLOY.md says of idemlab's own HTTPS behind
// nginx: proxy_ssl_verify stays off. Written out, so that a change of
// nginx's default cannot turn it on under the test.
func nginxUpstreamTLS(s site) string {
	if !s.upstreamTLS {
		return ""
	}
	return " proxy_ssl_verify off;"
}

var (
	caddySite         = regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(DocServerName) + `\s*\{\s*$`)
	caddyReverseProxy = regexp.MustCompile(`(?m)^(\s*)reverse_proxy\s+` + regexp.QuoteMeta(DocUpstream) + `\s*$`)
)

// caddyConfig puts the test's values into the published Caddyfile, with a
// certificate and 127.0.0.1 written into the site (Caddy would otherwise
// ask Let's Encrypt and listen on every interface) and global options
// that keep Caddy inside the test: no admin endpoint, its storage in the
// test's directory, the test's ports.
func caddyConfig(published string, s site) (string, error) {
	c := published
	var err error
	site := fmt.Sprintf("%s {\n\ttls %s %s\n\tbind 127.0.0.1", s.name, s.cert, s.key)
	if c, err = substitute(c, DocServerName+" {", caddySite, 1, site); err != nil {
		return "", err
	}
	rp := "${1}reverse_proxy " + s.upstream
	if s.upstreamTLS {
		rp = "${1}reverse_proxy https://" + s.upstream + " {\n${1}\ttransport http {\n${1}\t\ttls_insecure_skip_verify\n${1}\t}\n${1}}"
	}
	if c, err = substitute(c, "reverse_proxy "+DocUpstream, caddyReverseProxy, 1, rp); err != nil {
		return "", err
	}
	return fmt.Sprintf(`# nginxtest: DEPLOY.md's Caddyfile inside a test's global options.
{
	admin off
	storage file_system %s
	http_port %d
	https_port %d
	grace_period 2s
	log {
		output file %s
	}
}

%s`, filepath.Join(s.dir, "caddy"), s.httpPort, s.port, filepath.Join(s.dir, "error.log"), c), nil
}

func (p *Proxy) confFile() string {
	if p.kind == "nginx" {
		return filepath.Join(p.Dir, "nginx.conf")
	}
	return filepath.Join(p.Dir, "Caddyfile")
}

// run starts the proxy's process and waits until it accepts connections
// on its HTTPS port, or has exited.
func (p *Proxy) run() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.start()
}

func (p *Proxy) start() error {
	bin, err := program(p.kind)
	if err != nil {
		return err
	}
	var cmd *exec.Cmd
	if p.kind == "nginx" {
		// nginx makes only the last folder of a temporary path.
		if err := os.MkdirAll(filepath.Join(p.Dir, "tmp"), 0o755); err != nil {
			return err
		}
		cmd = exec.Command(bin, "-p", p.Dir, "-c", p.confFile(), "-e", filepath.Join(p.Dir, "error.log"))
	} else {
		cmd = exec.Command(bin, "run", "--adapter", "caddyfile", "--config", p.confFile())
		// Caddy keeps its state under $HOME and the XDG folders.
		cmd.Env = append(os.Environ(), "HOME="+p.Dir, "XDG_DATA_HOME="+filepath.Join(p.Dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(p.Dir, "config"))
	}
	cmd.Dir = p.Dir
	out, err := os.OpenFile(filepath.Join(p.Dir, "output.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	p.cmd, p.exited = cmd, exited

	deadline := time.Now().Add(15 * time.Second)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(p.Port))
	for {
		select {
		case <-exited:
			p.cmd = nil
			return fmt.Errorf("%s exited: %s", p.kind, lastLines(p.log(), 5))
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			p.stop()
			return fmt.Errorf("%s did not listen on %s within 15 s: %s", p.kind, addr, lastLines(p.log(), 5))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop ends the process group: SIGTERM, which nginx's master passes on to
// its workers and waits for (a fast shutdown: open websockets are cut,
// not waited on), then SIGKILL to the whole group if it lingers.
func (p *Proxy) stop() {
	if p.cmd == nil {
		return
	}
	pgid := p.cmd.Process.Pid
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		killGroup(p.cmd)
		<-p.exited
	}
	// The master waits for its workers before it exits; a worker that
	// outlived a killed master still belongs to the group.
	if len(groupMembers(pgid)) > 0 {
		killGroup(p.cmd)
	}
	p.cmd = nil
}

// log is the proxy's own output and error log, for a failing test.
func (p *Proxy) log() string {
	var b bytes.Buffer
	for _, name := range []string{"output.log", "error.log"} {
		if data, err := os.ReadFile(filepath.Join(p.Dir, name)); err == nil && len(data) > 0 {
			fmt.Fprintf(&b, "== %s\n%s", name, data)
		}
	}
	return b.String()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// program finds an installed program: on PATH, else in /usr/sbin, where
// Debian puts nginx and which a user's PATH, unlike root's, leaves out.
func program(name string) (string, error) {
	if path, err := exec.LookPath(name); err == nil {
		return path, nil
	}
	return exec.LookPath(filepath.Join("/usr/sbin", name))
}

// need skips t, or under CI fails it, when a program is not installed.
func need(t testing.TB, programs ...string) {
	t.Helper()
	for _, prog := range programs {
		if _, err := program(prog); err == nil {
			continue
		}
		msg := fmt.Sprintf("no %s installed: apt-get install -y %s (CI's .ci/run does) to run the reverse proxy tests", prog, prog)
		if os.Getenv("CI") != "" {
			t.Fatal(msg + "; CI is set, so a missing program is a failure")
		}
		t.Skip(msg)
	}
}

// selfSigned makes a certificate for name, valid for a day, with name as
// its subjectAltName (browsers and Go ignore the common name).
func selfSigned(name, certFile, keyFile string) error {
	openssl, err := program("openssl")
	if err != nil {
		return err
	}
	out, err := exec.Command(openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
		"-nodes", "-days", "1", "-subj", "/CN="+name, "-addext", "subjectAltName=DNS:"+name,
		"-keyout", keyFile, "-out", certFile).CombinedOutput()
	if err != nil {
		return fmt.Errorf("openssl req: %v: %s", err, lastLines(string(out), 3))
	}
	return nil
}

// deployMD finds docs/DEPLOY.md in the module that holds the working
// directory, as a test runs in its package's directory.
func deployMD() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "docs", "DEPLOY.md"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory, so no docs/DEPLOY.md; set Options.DeployMD")
		}
		dir = parent
	}
}

// freePort picks a port number no TCP listener on 127.0.0.1 holds,
// outside the range the kernel gives outgoing connections.
func freePort() (int, error) { return freeport.Port() }
