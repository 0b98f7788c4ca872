package nginxtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seen is what the backend got, as it echoes it back.
type seen struct {
	Host, Origin                                   string
	XForwardedFor, XForwardedProto, XForwardedHost string
	Connection, Upgrade                            string
	TLS                                            bool
	BodyBytes                                      int
}

func seenOf(r *http.Request) seen {
	return seen{
		Host: r.Host, Origin: r.Header.Get("Origin"),
		XForwardedFor: r.Header.Get("X-Forwarded-For"), XForwardedProto: r.Header.Get("X-Forwarded-Proto"), XForwardedHost: r.Header.Get("X-Forwarded-Host"),
		Connection: r.Header.Get("Connection"), Upgrade: r.Header.Get("Upgrade"),
		TLS: r.TLS != nil,
	}
}

// sameOrigin is the classroom's own check (package classroom): the page's
// Origin must name the Host the request arrived with. Through a proxy it
// holds only if the proxy passes the Host on as the browser wrote it.
func sameOrigin(r *http.Request) bool {
	u, err := url.Parse(r.Header.Get("Origin"))
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// bigBody is the large answer: larger than nginx's proxy buffers, so that
// the worker spills it into its temporary folder.
var bigBody = bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB

// backend stands where idemlab would: it echoes the headers it got, the
// length of a body, a large answer, and a websocket that first says what
// headers its upgrade came with, then echoes.
func backend(t *testing.T, tlsToo bool) *httptest.Server {
	t.Helper()
	upgrader := websocket.Upgrader{CheckOrigin: sameOrigin, EnableCompression: true}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /echo", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(seenOf(r))
	})
	mux.HandleFunc("POST /body", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		s := seenOf(r)
		s.BodyBytes = len(b)
		json.NewEncoder(w).Encode(s)
	})
	mux.HandleFunc("GET /big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(bigBody)
	})
	mux.HandleFunc("GET /classroom/ws/{code}", func(w http.ResponseWriter, r *http.Request) {
		s := seenOf(r)
		c, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return // the upgrader has answered
		}
		defer c.Close()
		if err := c.WriteJSON(s); err != nil {
			return
		}
		for {
			kind, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			if err := c.WriteMessage(kind, msg); err != nil {
				return
			}
		}
	})
	srv := httptest.NewUnstartedServer(mux)
	if tlsToo {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

// TestPublishedProxies runs DEPLOY.md's nginx block and Caddyfile in front
// of a backend and checks, over HTTPS, what the guide promises of them.
func TestPublishedProxies(t *testing.T) {
	cases := []struct {
		name        string
		start       func(testing.TB, Options) *Proxy
		upstreamTLS bool
		// wantXFF is X-Forwarded-For as the backend gets it when the
		// client sent "203.0.113.9" itself.
		wantXFF string
		// limitsBodies: nginx refuses a body over 64 KiB (the Caddyfile
		// leaves that to idemlab).
		limitsBodies bool
	}{
		{"nginx", Start, false, "203.0.113.9, 127.0.0.1", true},
		{"nginx to idemlab's own HTTPS", Start, true, "203.0.113.9, 127.0.0.1", true},
		{"caddy", StartCaddy, false, "127.0.0.1", false},
		{"caddy to idemlab's own HTTPS", StartCaddy, true, "127.0.0.1", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			be := backend(t, tc.upstreamTLS)
			p := tc.start(t, Options{Upstream: be.Listener.Addr().String(), UpstreamTLS: tc.upstreamTLS})
			hostPort := strings.TrimPrefix(p.URL, "https://")
			require.Equal(t, DocServerName+":"+strconv.Itoa(p.Port), hostPort)
			client := p.Client()

			t.Run("headers", func(t *testing.T) {
				req, err := http.NewRequest("GET", p.URL+"/echo", nil)
				require.NoError(t, err)
				req.Header.Set("X-Forwarded-For", "203.0.113.9")
				got := getSeen(t, client, req)
				assert.Equal(t, hostPort, got.Host, "Host: the name and port the browser opened")
				assert.Equal(t, hostPort, got.XForwardedHost)
				assert.Equal(t, "https", got.XForwardedProto)
				assert.Equal(t, tc.wantXFF, got.XForwardedFor, "the last address is the one the proxy saw")
				assert.Equal(t, tc.upstreamTLS, got.TLS, "the proxy spoke HTTPS to the upstream")
			})

			t.Run("websocket", func(t *testing.T) {
				c := dialWS(t, p)
				var got seen
				require.NoError(t, c.ReadJSON(&got))
				assert.Equal(t, hostPort, got.Host)
				assert.Equal(t, p.URL, got.Origin, "the Origin passes idemlab's same-origin check")
				assert.True(t, strings.EqualFold(got.Upgrade, "websocket"), "Upgrade: %q", got.Upgrade)
				assert.Contains(t, strings.ToLower(got.Connection), "upgrade")
				assert.Equal(t, "https", got.XForwardedProto)
				assert.Equal(t, "127.0.0.1", lastAddr(got.XForwardedFor))
				for _, msg := range []string{`{"type":"hello"}`, strings.Repeat("x", 2000)} {
					require.NoError(t, c.WriteMessage(websocket.TextMessage, []byte(msg)))
					_, echo, err := c.ReadMessage()
					require.NoError(t, err)
					assert.Equal(t, msg, string(echo))
				}
			})

			t.Run("a plain request is not upgraded", func(t *testing.T) {
				req, err := http.NewRequest("GET", p.URL+"/echo", nil)
				require.NoError(t, err)
				got := getSeen(t, client, req)
				assert.Empty(t, got.Upgrade)
				assert.NotContains(t, strings.ToLower(got.Connection), "upgrade")
			})

			t.Run("bodies", func(t *testing.T) {
				// 64 KiB is more than nginx keeps in memory: its worker
				// writes the body into its temporary folder, which it
				// must be allowed to.
				resp, body := post(t, client, p.URL+"/body", 64<<10)
				require.Equal(t, 200, resp.StatusCode, "%s", body)
				var got seen
				require.NoError(t, json.Unmarshal(body, &got))
				assert.Equal(t, 64<<10, got.BodyBytes)
				if p.kind == "nginx" {
					log, err := os.ReadFile(filepath.Join(p.Dir, "error.log"))
					require.NoError(t, err)
					assert.Contains(t, string(log), "a client request body is buffered to a temporary file",
						"the body did not pass through the worker's temporary folder, so this did not check that it may write there")
				}
				if tc.limitsBodies {
					resp, _ := post(t, client, p.URL+"/body", 64<<10+1)
					assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "client_max_body_size 64k")
				}
			})

			t.Run("a large answer", func(t *testing.T) {
				resp, err := client.Get(p.URL + "/big")
				require.NoError(t, err)
				defer resp.Body.Close()
				require.Equal(t, 200, resp.StatusCode)
				b, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				assert.Equal(t, sha256.Sum256(bigBody), sha256.Sum256(b))
			})

			t.Run("plain HTTP is sent to HTTPS", func(t *testing.T) {
				resp, err := client.Get(p.HTTPURL + "/classroom/?room=ABCDEF")
				require.NoError(t, err)
				resp.Body.Close()
				assert.Contains(t, []int{301, 308}, resp.StatusCode)
				loc, err := url.Parse(resp.Header.Get("Location"))
				require.NoError(t, err)
				assert.Equal(t, "https", loc.Scheme)
				assert.Equal(t, DocServerName, loc.Hostname())
				assert.Equal(t, "/classroom/?room=ABCDEF", loc.RequestURI())
			})

			t.Run("a restart cuts sockets and serves again", func(t *testing.T) {
				c := dialWS(t, p)
				var hello seen
				require.NoError(t, c.ReadJSON(&hello))
				require.NoError(t, p.Restart())
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				_, _, err := c.ReadMessage()
				require.Error(t, err, "the socket outlived the proxy")
				c = dialWS(t, p)
				require.NoError(t, c.ReadJSON(&hello))
				assert.Equal(t, hostPort, hello.Host)
			})
		})
	}
}

func getSeen(t *testing.T, client *http.Client, req *http.Request) seen {
	t.Helper()
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	var got seen
	require.NoError(t, json.Unmarshal(body, &got), "%s", body)
	return got
}

func post(t *testing.T, client *http.Client, url string, size int) (*http.Response, []byte) {
	t.Helper()
	resp, err := client.Post(url, "application/json", bytes.NewReader(bytes.Repeat([]byte("x"), size)))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, body
}

// dialWS opens a websocket to the proxy as the classroom's page would:
// the page's own Origin, compression offered.
func dialWS(t *testing.T, p *Proxy) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{NetDialContext: p.DialContext, TLSClientConfig: p.TLSConfig(), HandshakeTimeout: 10 * time.Second, EnableCompression: true}
	u := "wss://" + strings.TrimPrefix(p.URL, "https://") + "/classroom/ws/ABCDEF"
	c, resp, err := d.Dial(u, http.Header{"Origin": {p.URL}})
	if resp != nil {
		resp.Body.Close()
	}
	require.NoError(t, err, "dial %s", u)
	t.Cleanup(func() { c.Close() })
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	return c
}

func lastAddr(xff string) string {
	parts := strings.Split(xff, ",")
	return strings.TrimSpace(parts[len(parts)-1])
}

// TestPublishedNginxKeepsQuietWebsockets reads the timeouts of DEPLOY.md's
// nginx block rather than waiting them out: nginx's own 60 s would cut a
// socket whose pings (every 54 s) come a little late.
func TestPublishedNginxKeepsQuietWebsockets(t *testing.T) {
	block, err := Published(docsFile(t), "nginx")
	require.NoError(t, err)
	for _, directive := range []string{"proxy_read_timeout", "proxy_send_timeout"} {
		t.Run(directive, func(t *testing.T) {
			m := regexp.MustCompile(`(?m)^\s*`+directive+`\s+([^;]+);`).FindAllStringSubmatch(block, -1)
			require.Len(t, m, 1, "one %s in the block", directive)
			d, err := nginxDuration(strings.TrimSpace(m[0][1]))
			require.NoError(t, err)
			assert.GreaterOrEqual(t, d, 120*time.Second)
		})
	}
}

// nginxDuration reads one of nginx's times: a number with an optional
// unit (seconds without one).
func nginxDuration(s string) (time.Duration, error) {
	m := regexp.MustCompile(`^(\d+)(ms|s|m|h|d)?$`).FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not a time this test reads", s)
	}
	n, _ := strconv.Atoi(m[1])
	unit := map[string]time.Duration{"": time.Second, "ms": time.Millisecond, "s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[m[2]]
	return time.Duration(n) * unit, nil
}

func TestNginxDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{{"60", time.Minute}, {"3600s", time.Hour}, {"2m", 2 * time.Minute}, {"1h", time.Hour}, {"500ms", 500 * time.Millisecond}} {
		got, err := nginxDuration(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	_, err := nginxDuration("1h 30m")
	assert.Error(t, err)
}

// TestStopEndsNginxAndItsWorkers checks that a test's nginx, master and
// workers, is gone once the test has ended.
func TestStopEndsNginxAndItsWorkers(t *testing.T) {
	var pids []int
	var port int
	t.Run("a test with nginx", func(t *testing.T) {
		be := backend(t, false)
		p := Start(t, Options{Upstream: be.Listener.Addr().String()})
		// nginx answers once its master listens; the worker it forks may
		// show up a moment later (seen in a clean-clone run: the log said
		// "start worker process" while the group held only the master).
		require.Eventually(t, func() bool {
			pids = groupMembers(p.cmd.Process.Pid)
			return len(pids) >= 2
		}, 10*time.Second, 20*time.Millisecond, "a master and a worker")
		port = p.Port
	})
	if t.Skipped() || len(pids) == 0 {
		return
	}
	for _, pid := range pids {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		assert.True(t, os.IsNotExist(err), "process %d outlived its test", pid)
	}
	assert.Empty(t, groupMembers(pids[0]))
	_, err := (&http.Client{Timeout: time.Second}).Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
	assert.Error(t, err, "the port still answers")
}

// TestPublishedConfigurationsAreWhereTheTestExpects: a block that lost a
// line the test puts its values into fails with that line's name, not with
// a proxy that listens somewhere unexpected.
func TestPublishedConfigurationsAreWhereTheTestExpects(t *testing.T) {
	block, err := Published(docsFile(t), "nginx")
	require.NoError(t, err)
	s := site{name: "x.test", port: 1, httpPort: 2, upstream: "127.0.0.1:3", cert: "/c", key: "/k", dir: "/d"}
	conf, err := nginxConfig(block, s)
	require.NoError(t, err)
	assert.Contains(t, conf, "listen 127.0.0.1:1 ssl;")
	assert.Contains(t, conf, "listen 127.0.0.1:2;")
	assert.Contains(t, conf, "proxy_pass http://127.0.0.1:3;")
	assert.NotContains(t, conf, DocServerName)

	_, err = nginxConfig(strings.Replace(block, "listen 443 ssl;", "listen 8443 ssl;", 1), s)
	assert.ErrorContains(t, err, "listen 443 ssl")
	_, err = nginxConfig(strings.Replace(block, "proxy_pass http://127.0.0.1:8080;", "proxy_pass http://idemlab;", 1), s)
	assert.ErrorContains(t, err, "proxy_pass")

	caddy, err := Published(docsFile(t), "caddy")
	require.NoError(t, err)
	conf, err = caddyConfig(caddy, s)
	require.NoError(t, err)
	assert.Contains(t, conf, "reverse_proxy 127.0.0.1:3")
	assert.Contains(t, conf, "bind 127.0.0.1")
	assert.NotContains(t, conf, DocServerName)
}

// TestPublishedSystemdUnitVerifies has systemd read DEPLOY.md's unit:
// a misspelt or unknown setting is only a warning when the unit starts,
// and a hardening line that does nothing is worse than none.
func TestPublishedSystemdUnitVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("no systemd-analyze to read the unit with (Debian's systemd package has it)")
	}
	unit, err := Published(docsFile(t), "systemd")
	require.NoError(t, err)
	// verify wants the program to exist; the test has no installed idemlab.
	require.Contains(t, unit, "ExecStart=/usr/local/bin/idemlab serve")
	unit = strings.Replace(unit, "/usr/local/bin/idemlab", "/bin/true", 1)
	path := filepath.Join(t.TempDir(), "idemlab.service")
	require.NoError(t, os.WriteFile(path, []byte(unit), 0o644))
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	assert.NoError(t, err)
	assert.Empty(t, strings.TrimSpace(string(out)), "systemd-analyze verify says")
}

func docsFile(t *testing.T) string {
	t.Helper()
	path, err := deployMD()
	require.NoError(t, err)
	return path
}
