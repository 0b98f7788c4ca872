package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"idemlab/engine"
	"idemlab/engine/httpapi"
	"idemlab/internal/endpointtest"
	"idemlab/store/sqlite"
)

// The bank API benchmarks run side by side in one `make bench`: transfers
// per second through the HTTP handler at naive and at scoped (each with a
// fresh key), replays per second at scoped, and the engine called directly
// without HTTP, all against a SQLite file in WAL mode.

const benchBody = `{"from":"alice","to":"bob","amount":1}`

func benchEngine(b *testing.B, level string) *engine.Engine {
	b.Helper()
	db, err := sqlite.OpenFile(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	ctx := context.Background()
	if _, err := db.PutAccount(ctx, "alice", 1<<50); err != nil {
		b.Fatal(err)
	}
	if _, err := db.PutAccount(ctx, "bob", 0); err != nil {
		b.Fatal(err)
	}
	return engine.New(db, engine.MustPreset(level), engine.Options{})
}

var benchKeys atomic.Int64

func benchRequest(key string) *http.Request {
	r := httptest.NewRequest("POST", "/transfers", bytes.NewReader([]byte(benchBody)))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-Customer-ID", "bench")
	r.Header.Set("Idempotency-Key", `"`+key+`"`)
	return r
}

func BenchmarkHandler(b *testing.B) {
	for _, tc := range []struct {
		name, level string
		replay      bool
	}{
		{"naive/new-key", engine.LevelNaive, false},
		{"scoped/new-key", engine.LevelScoped, false},
		{"scoped/replay", engine.LevelScoped, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			h := httpapi.Handler{Engine: benchEngine(b, tc.level)}
			if tc.replay {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, benchRequest("replayed-key"))
				if w.Code != 201 {
					b.Fatalf("first request: %d %s", w.Code, w.Body)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					key := "replayed-key"
					if !tc.replay {
						key = fmt.Sprintf("k-%d", benchKeys.Add(1))
					}
					w := httptest.NewRecorder()
					h.ServeHTTP(w, benchRequest(key))
					if w.Code != 201 {
						b.Fatalf("status %d: %s", w.Code, w.Body)
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

// BenchmarkEngine is the limit: the same statements without HTTP.
func BenchmarkEngine(b *testing.B) {
	for _, level := range []string{engine.LevelNaive, engine.LevelScoped} {
		b.Run(level, func(b *testing.B) {
			eng := benchEngine(b, level)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					res := eng.Handle(ctx, engine.Request{Method: "POST", Path: "/transfers", Customer: "bench", HasCustomer: true,
						Key: []string{fmt.Sprintf(`"e-%d"`, benchKeys.Add(1))}, Body: []byte(benchBody)})
					if res.Response.Status != 201 {
						b.Fatalf("status %d: %s", res.Response.Status, res.Response.Body)
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

// BenchmarkLoopback sends real HTTP requests over loopback from 16
// concurrent clients and reports throughput and p50/p99 latency: idemlab's
// naive and scoped levels, and beside them the lab contract written with
// Python's standard library (docs/examples/bank.py), under the same load.
func BenchmarkLoopback(b *testing.B) {
	for _, level := range []string{engine.LevelNaive, engine.LevelScoped} {
		b.Run(level, func(b *testing.B) {
			ts := httptest.NewServer(httpapi.Handler{Engine: benchEngine(b, level)})
			defer ts.Close()
			loadRun(b, ts.URL)
		})
	}
	b.Run("python-stdlib", func(b *testing.B) {
		url := endpointtest.Start(b, "python3", "../docs/examples/bank.py", "--port", "0", "--db", filepath.Join(b.TempDir(), "py.db"))
		for _, acct := range []string{"alice", "bob"} {
			req, _ := http.NewRequest("PUT", url+"/accounts/"+acct, strings.NewReader(`{"balance":1125899906842624}`))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
		}
		loadRun(b, url)
	})
}

// loadRun sends b.N transfers, each with a fresh key, from 16 workers.
func loadRun(b *testing.B, url string) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.ResetTimer()
	lats := sendTransfers(b, client, url, b.N)
	b.StopTimer()
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	if len(lats) > 0 {
		b.ReportMetric(float64(lats[len(lats)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lats[len(lats)*99/100].Microseconds()), "p99-µs")
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkLoopbackRatio measures scoped ÷ naive over loopback HTTP the way
// the bar is set: both levels on one server, the same 16-client load, and
// rounds that alternate (naive, scoped, naive, …; 3,000 transfers each,
// eight rounds per level), so that the shared machine's changes of speed
// fall on both. It reports each level's transfers per second over all its
// rounds and their ratio.
func BenchmarkLoopbackRatio(b *testing.B) {
	urls := map[string]string{}
	for _, level := range []string{engine.LevelNaive, engine.LevelScoped} {
		ts := httptest.NewServer(httpapi.Handler{Engine: benchEngine(b, level)})
		defer ts.Close()
		urls[level] = ts.URL
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	const rounds, perRound = 8, 3000
	took := map[string]time.Duration{}
	for range b.N {
		for range rounds {
			for _, level := range []string{engine.LevelNaive, engine.LevelScoped} {
				start := time.Now()
				sendTransfers(b, client, urls[level], perRound)
				took[level] += time.Since(start)
			}
		}
	}
	rate := func(level string) float64 { return float64(b.N*rounds*perRound) / took[level].Seconds() }
	b.ReportMetric(rate(engine.LevelNaive), "naive-req/s")
	b.ReportMetric(rate(engine.LevelScoped), "scoped-req/s")
	b.ReportMetric(rate(engine.LevelScoped)/rate(engine.LevelNaive), "scoped/naive")
}

// sendTransfers sends n transfers, each with a fresh key, from 16 workers,
// and returns their latencies.
func sendTransfers(b *testing.B, client *http.Client, url string, n int) []time.Duration {
	const workers = 16
	var (
		mu   sync.Mutex
		lats []time.Duration
		next atomic.Int64
	)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for next.Add(1) <= int64(n) {
				req, _ := http.NewRequest("POST", url+"/transfers", bytes.NewReader([]byte(benchBody)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Customer-ID", "bench")
				req.Header.Set("Idempotency-Key", fmt.Sprintf(`"l-%d"`, benchKeys.Add(1)))
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mine = append(mine, time.Since(start))
				if resp.StatusCode != 201 {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
			}
			mu.Lock()
			lats = append(lats, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return lats
}

// BenchmarkRetainedKeys reports what 10,000 retained keys cost: the SQLite
// file (key rows with their stored responses, the ledger rows beside them)
// and the Go heap, which must not grow with the keys (they live on disk).
func BenchmarkRetainedKeys(b *testing.B) {
	for range b.N {
		dir := b.TempDir()
		db, err := sqlite.OpenFile(filepath.Join(dir, "keys.db"))
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		db.PutAccount(ctx, "alice", 1<<50)
		db.PutAccount(ctx, "bob", 0)
		eng := engine.New(db, engine.MustPreset(engine.LevelScoped), engine.Options{})
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		const keys = 10_000
		for i := range keys {
			res := eng.Handle(ctx, engine.Request{Method: "POST", Path: "/transfers", Customer: "bench", HasCustomer: true,
				Key: []string{fmt.Sprintf(`"r-%d"`, i)}, Body: []byte(benchBody)})
			if res.Response.Status != 201 {
				b.Fatalf("status %d", res.Response.Status)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		db.Close() // checkpoints the WAL into the file
		fi, err := os.Stat(filepath.Join(dir, "keys.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(fi.Size())/(1<<20), "MB-on-disk/10k-keys")
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "MB-heap-growth/10k-keys")
	}
}
