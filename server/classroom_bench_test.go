package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"idemlab/classroom"
)

// The classroom's load benchmark: 300 websocket clients in one room (one
// projector, 299 phones) and a storm of 2,000 requests (1,000 clients × 2
// attempts). The server runs in a child process (this test binary again),
// so that its memory is its own. Measured:
//
//   - the delay from a trace event's emission in the engine to its arrival
//     at the slowest healthy client, p50 and p99 over all events. Each
//     batch carries its oldest event's emission time and every event of the
//     batch is charged that oldest delay, an upper bound;
//   - the server's peak resident memory (VmHWM);
//   - the storm's duration as the server measured it.

const benchEnv = "IDEMLAB_CLASSROOM_BENCH_SERVER"

// TestClassroomBenchServer is the benchmark's server process; it does
// nothing in a normal test run.
func TestClassroomBenchServer(t *testing.T) {
	if os.Getenv(benchEnv) == "" {
		t.Skip("runs only as the classroom benchmark's server process")
	}
	banks, err := OpenBanks(Config{Open: testBanks("")})
	if err != nil {
		t.Fatal(err)
	}
	defer CloseBanks(banks)
	// A class of 300: the instructor sets the class size to fit it.
	srv, err := New(banks, testOptions(Options{InstructorToken: os.Getenv(benchEnv), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Classroom: classroom.Config{Limits: classroom.Limits{ClassSize: 1000}}}))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := HTTPServer(ln.Addr().String(), srv)
	go hs.Serve(ln)
	if path := os.Getenv(benchEnv + "_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			pprof.StartCPUProfile(f)
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}
	fmt.Printf("ADDR %s\n", ln.Addr())
	io.Copy(io.Discard, os.Stdin) // until the benchmark closes our stdin
	hs.Close()
}

// benchClient is one websocket of the benchmark. Every client records when
// each message's first frame arrived, and nothing more: it skips the
// payload as raw bytes, compressed or not, as 300 phones would inflate
// their streams on their own CPUs rather than on the server's. One probe
// client (the projector) also reads each message's header. Every client
// receives the room's broadcasts in the same order, so the probe's k-th
// message after the quiet point is every client's k-th.
type benchClient struct {
	ws    *websocket.Conn
	wire  *countingConn
	probe bool

	count    atomic.Int64
	arrivals []int64 // Unix µs, one per message
	headers  []benchHeader
	err      error
}

type benchHeader struct {
	kind     string // "events", "storm-report" or ""
	batch    int64
	t0, size int64
	sent     int64 // when the server encoded the batch
}

func headerInt(h []byte, name string) (int64, bool) {
	i := bytes.Index(h, []byte(`"`+name+`":`))
	if i < 0 {
		return 0, false
	}
	rest := h[i+len(name)+3:]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	v, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	return v, err == nil
}

func (c *benchClient) read(joined chan<- struct{}) {
	buf := make([]byte, 160)
	sentJoined := false
	for {
		_, r, err := c.ws.NextReader()
		if err != nil {
			c.err = err
			return
		}
		c.arrivals = append(c.arrivals, time.Now().UnixMicro())
		if c.probe || !sentJoined {
			n, _ := io.ReadFull(r, buf)
			h := buf[:n]
			var hd benchHeader
			switch {
			case bytes.HasPrefix(h, []byte(`{"type":"events"`)):
				hd.kind = "events"
				hd.batch, _ = headerInt(h, "batch")
				hd.t0, _ = headerInt(h, "t0_us")
				hd.size, _ = headerInt(h, "n")
				hd.sent, _ = headerInt(h, "sent_us")
			case bytes.HasPrefix(h, []byte(`{"type":"report"`)) && bytes.Contains(h, []byte(`"storm":`)):
				hd.kind = "storm-report"
			case bytes.HasPrefix(h, []byte(`{"type":"joined"`)), bytes.HasPrefix(h, []byte(`{"type":"welcome","role":"projector"`)):
				if !sentJoined {
					sentJoined = true
					joined <- struct{}{}
				}
			}
			c.headers = append(c.headers, hd)
		}
		c.count.Add(1)
	}
}

// countingConn counts the bytes a client reads off the wire.
type countingConn struct {
	net.Conn
	n int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n += int64(n)
	return n, err
}

// BenchmarkClassroomStorm runs the load twice: with permessage-deflate, as
// every browser negotiates it (the server compresses each batch once and
// shares the compressed frame), and without, the worst case for bytes.
func BenchmarkClassroomStorm(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads the server's memory from /proc")
	}
	b.Run("deflate", func(b *testing.B) { benchClassroomStorm(b, true) })
	b.Run("plain", func(b *testing.B) { benchClassroomStorm(b, false) })
}

func benchClassroomStorm(b *testing.B, deflate bool) {
	const clients, token = 300, "bench-instructor-token-0123456789"
	spec := classroom.StormSpec{Level: "scoped", Clients: 1000, Keys: 500, Attempts: 2, LatencyMS: 50}
	// Figures pool every iteration's storm: all their events' delays, the
	// highest peak memory, the mean duration and bytes.
	var (
		delays, queued  []int64
		peakMB          float64
		stormMS, wireMB float64
		dropped, storms int
	)
	for range b.N {
		b.StopTimer()
		cmd := exec.Command(os.Args[0], "-test.run=^TestClassroomBenchServer$", "-test.count=1")
		cmd.Env = append(os.Environ(), benchEnv+"="+token)
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "ADDR ") {
			b.Fatalf("server did not start: %q %v", line, err)
		}
		addr := strings.TrimSpace(strings.TrimPrefix(line, "ADDR "))
		base := "http://" + addr
		stop := func() { stdin.Close(); cmd.Wait() }

		jar, _ := cookiejar.New(nil)
		hc := &http.Client{Jar: jar}
		post := func(path, body string) []byte {
			req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
			req.Header.Set("Origin", base)
			req.Header.Set("Content-Type", "application/json")
			res, err := hc.Do(req)
			if err != nil {
				stop()
				b.Fatal(err)
			}
			defer res.Body.Close()
			out, _ := io.ReadAll(res.Body)
			return out
		}
		post("/classroom/api/session", `{"token":"`+token+`"}`)
		var room struct{ Code string }
		json.Unmarshal(post("/classroom/api/rooms", `{}`), &room)

		joined := make(chan struct{}, clients)
		all := make([]*benchClient, clients)
		var dialWG, readers sync.WaitGroup
		sem := make(chan struct{}, 16)
		for i := range all {
			dialWG.Add(1)
			go func() {
				defer dialWG.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				wire := &countingConn{}
				d := &websocket.Dialer{HandshakeTimeout: 30 * time.Second, ReadBufferSize: 64 << 10, EnableCompression: deflate,
					NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
						c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
						wire.Conn = c
						return wire, err
					}}
				u := "ws://" + addr + "/classroom/ws/" + room.Code
				if i == 0 {
					d.Jar, u = jar, u+"?role=projector"
				}
				ws, _, err := d.Dial(u, http.Header{"Origin": {base}})
				if err != nil {
					b.Errorf("dial %d: %v", i, err)
					return
				}
				c := &benchClient{ws: ws, wire: wire, probe: i == 0}
				all[i] = c
				readers.Add(1)
				go func() { defer readers.Done(); c.read(joined) }()
				if i > 0 {
					ws.WriteJSON(map[string]string{"type": "join", "nickname": "phone " + strconv.Itoa(i), "secret": fmt.Sprintf("%032x", i+1)})
				}
			}()
		}
		dialWG.Wait()
		if b.Failed() {
			stop()
			return
		}
		for range clients {
			<-joined
		}
		time.Sleep(200 * time.Millisecond) // let the joins' state broadcasts settle

		// Quiet: every client has had every message of the joins.
		quiet := make([]int64, clients)
		for i, c := range all {
			quiet[i] = c.count.Load()
		}
		probe := all[0]

		b.StartTimer()
		begin := time.Now()
		all[0].ws.WriteJSON(map[string]any{"type": "storm", "storm": spec})
		// The probe finds the storm's report; every client is done when it
		// has as many messages since the quiet point.
		end := int64(-1)
		deadline := time.Now().Add(5 * time.Minute)
		for end < 0 && time.Now().Before(deadline) && probe.err == nil {
			time.Sleep(5 * time.Millisecond)
			// headers is appended by the probe's reader only; count orders the reads.
			n := probe.count.Load()
			for k := quiet[0]; k < n; k++ {
				if probe.headers[k].kind == "storm-report" {
					end = k - quiet[0] + 1
					break
				}
			}
		}
		healthy := 0
		for i, c := range all {
			for c.count.Load() < quiet[i]+end && time.Now().Before(deadline) && c.err == nil {
				time.Sleep(5 * time.Millisecond)
			}
			if end > 0 && c.count.Load() >= quiet[i]+end {
				healthy++
			}
		}
		wall := time.Since(begin)
		b.StopTimer()

		status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
		peakMB = max(peakMB, procKB(status, "VmHWM:")/1024)
		for _, c := range all {
			c.ws.Close()
		}
		readers.Wait()
		stop()
		if end < 0 {
			b.Fatal("the storm's report never came")
		}

		// The slowest healthy client's delay per batch; every event of a
		// batch is charged the delay of the batch's oldest event.
		for k := int64(0); k < end; k++ {
			hd := probe.headers[quiet[0]+k]
			if hd.kind != "events" {
				continue
			}
			var worst int64
			for i, c := range all {
				if int64(len(c.arrivals)) >= quiet[i]+end {
					worst = max(worst, c.arrivals[quiet[i]+k]-hd.t0)
				}
			}
			for range hd.size {
				delays = append(delays, worst)
				queued = append(queued, hd.sent-hd.t0)
			}
		}
		var wireBytes int64
		for _, c := range all {
			wireBytes += c.wire.n
		}
		storms++
		stormMS += float64(wall.Milliseconds())
		wireMB += float64(wireBytes) / float64(len(all)) / 1e6
		dropped += clients - healthy
	}
	slices.Sort(delays)
	slices.Sort(queued)
	pct := func(d []int64, p float64) float64 {
		if len(d) == 0 {
			return 0
		}
		return float64(d[min(len(d)-1, int(p*float64(len(d))))]) / 1000
	}
	b.ReportMetric(pct(delays, 0.50), "p50_ms")
	b.ReportMetric(pct(delays, 0.99), "p99_ms")
	b.ReportMetric(pct(delays, 1), "max_ms")
	// Of the delay, how long events waited in the server before their
	// batch was encoded (the tick, and any CPU the storm itself took).
	b.ReportMetric(pct(queued, 0.99), "p99_queued_ms")
	b.ReportMetric(peakMB, "server_peak_MB")
	b.ReportMetric(stormMS/float64(storms), "storm_ms")
	b.ReportMetric(float64(len(delays))/float64(storms), "events/storm")
	b.ReportMetric(float64(dropped), "dropped")
	b.ReportMetric(wireMB/float64(storms), "wire_MB/client")
}

func procKB(status []byte, field string) float64 {
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			v, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return v
		}
	}
	return 0
}
