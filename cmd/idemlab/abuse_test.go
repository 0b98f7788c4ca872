package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The attacks of "Hold up under abuse" against a real `idemlab serve`
// process, each attacker from another loopback address (127.0.0.2 and up
// stand for other machines on the classroom's network).

const abuseToken = "abuse-test-instructor-secret-0123456789"

// abuseBinary is the binary under attack: IDEMLAB_TEST_BIN when set (to
// measure another build, such as the one before a fix), else this one.
func abuseBinary(t *testing.T) string {
	if bin := os.Getenv("IDEMLAB_TEST_BIN"); bin != "" {
		return bin
	}
	return buildBinary(t)
}

// startAttacked runs the server with the instructor's secret in its
// environment and returns the process and its base URL.
func startAttacked(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd, base, _ := serveWithSecret(t, abuseBinary(t), append([]string{"--addr", "127.0.0.1:0", "--db", ""}, args...)...)
	return cmd, base
}

// serveWithSecret runs `idemlab serve` with args and the instructor's
// secret in its environment, and returns the process, the address it
// listens on and the sign-in link it printed.
func serveWithSecret(t *testing.T, bin string, args ...string) (cmd *exec.Cmd, base, link string) {
	t.Helper()
	cmd = exec.Command(bin, append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), "IDEMLAB_INSTRUCTOR_TOKEN="+abuseToken)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	signIn := regexp.MustCompile(`sign-in link \(works once; keep it private\): (\S+)`)
	found := make(chan [2]string, 1)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		sc := bufio.NewScanner(stdout)
		addr := ""
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addr = m[1]
			}
			if m := signIn.FindStringSubmatch(sc.Text()); m != nil {
				found <- [2]string{addr, m[1]}
			}
		}
	}()
	select {
	case f := <-found:
		return cmd, f[0], f[1]
	case <-ended:
		t.Fatalf("idemlab serve %s ended before it printed its sign-in link; it said:\n%s", strings.Join(args, " "), stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("idemlab serve printed no sign-in link in a minute; it said:\n%s", stderr.String())
	}
	return nil, "", ""
}

// httpFrom is a client whose connections leave from addr.
func httpFrom(addr string, jar http.CookieJar) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}, Timeout: 10 * time.Second}
	return &http.Client{Jar: jar, Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 30 * time.Second}
}

func signInFrom(t *testing.T, base, addr, token string, jar http.CookieJar) int {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/classroom/api/session", strings.NewReader(`{"token":"`+token+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", base)
	res, err := httpFrom(addr, jar).Do(req)
	require.NoError(t, err)
	res.Body.Close()
	return res.StatusCode
}

// openRoomAs signs the instructor in from 127.0.0.1 and opens a room.
func openRoomAs(t *testing.T, base string) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	require.Equal(t, 200, signInFrom(t, base, "127.0.0.1", abuseToken, jar))
	return openRoomFrom(t, base, "127.0.0.1", jar)
}

// peakRSS is the process's high-water mark of resident memory (VmHWM), in
// bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// TestCompressedBombsKeepMemoryLow: 500 sockets, each from its own
// address, each send three messages of 2,000,000 bytes deflated to about
// 2 KB, all at once. Each socket is closed at the read limit, and the
// server's peak memory stays under 200 MB (before the inflated size was
// capped, the same attack took it from 45 MB to 388 MB and more).
func TestCompressedBombsKeepMemoryLow(t *testing.T) {
	if testing.Short() {
		t.Skip("500 sockets")
	}
	// The sockets wait, unjoined, until all 500 are open, which on a busy
	// machine takes longer than the default --join-wait.
	cmd, base := startAttacked(t, "--join-wait", "10m")
	code := openRoomAs(t, base)
	before := peakRSS(t, cmd.Process.Pid)
	bomb := []byte(`{"type":"join","secret":"` + strings.Repeat("0", 64) + `","nickname":"` + strings.Repeat("a", 2_000_000) + `"}`)
	// Compressed once, sent by every socket: the same bytes on the wire as
	// 1,500 compressions of it at level 9 (each socket's own), which cost
	// the test two minutes of CPU under -race and told nothing more.
	prepared, err := websocket.NewPreparedMessage(websocket.TextMessage, bomb)
	require.NoError(t, err)
	const sockets = 500
	u := "ws" + strings.TrimPrefix(base, "http") + "/classroom/ws/" + code
	var (
		wg     sync.WaitGroup
		gate   = make(chan struct{})
		mu     sync.Mutex
		closes = map[string]int{}
		tooBig int
		sent   atomic.Int64 // bytes the sockets wrote, handshakes included
	)
	for i := range sockets {
		addr := fmt.Sprintf("127.1.%d.%d", i/250, i%250+1)
		local := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}}
		d := &websocket.Dialer{NetDial: func(network, address string) (net.Conn, error) {
			c, err := local.Dial(network, address)
			return &countedConn{Conn: c, n: &sent}, err
		}, HandshakeTimeout: 30 * time.Second, EnableCompression: true}
		ws, _, err := d.Dial(u, http.Header{"Origin": {base}})
		require.NoError(t, err, "socket %d", i)
		require.NoError(t, ws.SetCompressionLevel(9))
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer ws.Close()
			<-gate
			for range 3 {
				if ws.WritePreparedMessage(prepared) != nil {
					break
				}
			}
			ws.SetReadDeadline(time.Now().Add(60 * time.Second))
			// The server closes the socket at the limit. Its close frame
			// (1009) may not arrive: closing a socket with the rest of the
			// bombs unread makes the kernel reset the connection, which
			// discards what was on its way. Either way the socket is closed
			// by the server; what must never come back is the bomb read
			// whole (an error message), or a socket left open.
			outcome := "still open"
			for {
				_, data, err := ws.ReadMessage()
				if err != nil {
					var ne net.Error
					switch ce, ok := err.(*websocket.CloseError); {
					case ok:
						outcome = "closed" // 1009, or 1006 when the frame was lost to the reset
						if ce.Code == websocket.CloseMessageTooBig {
							mu.Lock()
							tooBig++
							mu.Unlock()
						}
					case errors.As(err, &ne) && ne.Timeout():
						outcome = "still open"
					default:
						outcome = "closed" // reset or EOF
					}
					break
				}
				if bytes.Contains(data, []byte(`"code":"bad-message"`)) {
					outcome = "read whole and refused"
					break
				}
			}
			mu.Lock()
			closes[outcome]++
			mu.Unlock()
		}()
	}
	close(gate)
	wg.Wait()
	after := peakRSS(t, cmd.Process.Pid)
	t.Logf("peak RSS: %.1f MB before the attack, %.1f MB after; outcomes %v (%d with close code 1009)",
		float64(before)/(1<<20), float64(after)/(1<<20), closes, tooBig)
	assert.Equal(t, map[string]int{"closed": sockets}, closes, "every socket closed by the server at the limit")
	// The bombs went compressed: each socket sent a few kilobytes that
	// inflate to megabytes, not the megabytes themselves.
	assert.Less(t, sent.Load(), int64(sockets*len(bomb)/20), "the bombs were sent compressed")
	assert.Less(t, after, int64(200<<20), "peak memory under 200 MB")

	res, err := http.Get(base + "/healthz")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, 200, res.StatusCode, "the server is still up")
}

// TestInstructorSignsInWhileAnotherMachineGuesses: a machine sends 20
// wrong secrets a second; the instructor, from another machine, signs in
// every time.
func TestInstructorSignsInWhileAnotherMachineGuesses(t *testing.T) {
	_, base := startAttacked(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	guesses := map[int]int{}
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			guesses[signInFrom(t, base, "127.0.0.2", "wrong-secret-wrong-secret", nil)]++
			time.Sleep(50 * time.Millisecond)
		}
	}()
	for i := range 13 {
		jar, _ := cookiejar.New(nil)
		assert.Equal(t, 200, signInFrom(t, base, "127.0.0.3", abuseToken, jar), "try %d", i)
		time.Sleep(100 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	assert.Positive(t, guesses[429], "the guessing machine is held off: %v", guesses)
}

// TestServeRefusesForeignHosts is DNS rebinding against the real process:
// a page on evil.example that made its name resolve to this machine sends
// Host: evil.example and is refused; the listening address, localhost and
// --public-url's host answer. Listening on every interface, each
// interface's address answers too.
func TestServeRefusesForeignHosts(t *testing.T) {
	get := func(base, host string) int {
		req, _ := http.NewRequest("GET", base+"/bank/scoped", nil)
		req.Host = host
		res, err := httpFrom("127.0.0.2", nil).Do(req)
		require.NoError(t, err)
		res.Body.Close()
		if res.StatusCode == 421 {
			assert.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
		}
		return res.StatusCode
	}
	_, base := startAttacked(t, "--public-url", "https://idemlab.school.example/")
	port := base[strings.LastIndex(base, ":"):]
	for host, want := range map[string]int{
		"127.0.0.1" + port:         200,
		"localhost" + port:         200,
		"idemlab.school.example":   200,
		"evil.example" + port:      421,
		"school.example":           421,
		"idemlab.school.example.x": 421,
	} {
		assert.Equal(t, want, get(base, host), "Host %s", host)
	}

	cmd := exec.Command(abuseBinary(t), "serve", "--addr", "0.0.0.0:0", "--db", "")
	cmd.Env = append(os.Environ(), "IDEMLAB_INSTRUCTOR_TOKEN="+abuseToken)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	var all string
	for sc.Scan() {
		if m := listening.FindStringSubmatch(sc.Text()); m != nil {
			all = m[1]
			break
		}
	}
	require.NotEmpty(t, all)
	go io.Copy(io.Discard, stdout)
	allPort := all[strings.LastIndex(all, ":"):]
	local := "http://127.0.0.1" + allPort
	addrs, err := net.InterfaceAddrs()
	require.NoError(t, err)
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
			assert.Equal(t, 200, get(local, n.IP.String()+allPort), "an interface's address %s", n.IP)
		}
	}
	assert.Equal(t, 421, get(local, "evil.example"+allPort))
}

// countedConn counts the bytes written through a connection into n.
type countedConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countedConn) Write(b []byte) (int, error) {
	k, err := c.Conn.Write(b)
	c.n.Add(int64(k))
	return k, err
}
