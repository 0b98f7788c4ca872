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
// rounds that alternate (naive, scoped, naive, …; 3,000 requests each,
// eight rounds per level), so that the shared machine's changes of speed
// fall on both. It does so twice: every request a new transfer with a
// fresh key, then the mix the bar is measured with from outside, where
// one request in five is a retry of its client's previous one (the same
// key and body: naive pays it again, scoped replays the stored answer).
// It reports each level's requests per second and their ratio, for each.
func BenchmarkLoopbackRatio(b *testing.B) {
	urls := map[string]string{}
	for _, level := range []string{engine.LevelNaive, engine.LevelScoped} {
		ts := httptest.NewServer(httpapi.Handler{Engine: benchEngine(b, level)})
		defer ts.Close()
		urls[level] = ts.URL
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	const rounds, perRound = 8, 3000
	for _, mix := range []struct {
		name       string
		retryEvery int
	}{{"", 0}, {"retries-", 5}} {
		took := map[string]time.Duration{}
		for range b.N {
			for range rounds {
				for _, level := range []string{engine.LevelNaive, engine.LevelScoped} {
					start := time.Now()
					sendMix(b, client, urls[level], perRound, mix.retryEvery)
					took[level] += time.Since(start)
				}
			}
		}
		rate := func(level string) float64 { return float64(b.N*rounds*perRound) / took[level].Seconds() }
		b.ReportMetric(rate(engine.LevelNaive), mix.name+"naive-req/s")
		b.ReportMetric(rate(engine.LevelScoped), mix.name+"scoped-req/s")
		b.ReportMetric(rate(engine.LevelScoped)/rate(engine.LevelNaive), mix.name+"scoped/naive")
	}
}

// BenchmarkLoopbackCeiling says how close each level is to what the HTTP
// stack allows on this machine: the same 16-client load, fresh keys, in
// alternating rounds, against three servers: a ledger in memory behind
// net/http (the body parsed and validated as the engine does, a mutex, a
// map of balances, the engine's 201 rendered; no database and no key: the
// ceiling), naive (no idempotency, the ledger and the processor on a
// SQLite file) and scoped (every rung). It reports each one's requests per
// second and each level ÷ the ceiling.
func BenchmarkLoopbackCeiling(b *testing.B) {
	var mu sync.Mutex
	balances := map[string]int64{"alice": 1 << 50, "bob": 0}
	var lastID int64
	memory := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		t, prob := engine.ParseTransfer(body)
		if prob != nil {
			http.Error(w, prob.Detail, prob.Status)
			return
		}
		mu.Lock()
		if balances[t.From] < t.Amount {
			mu.Unlock()
			http.Error(w, "insufficient funds", 422)
			return
		}
		balances[t.From] -= t.Amount
		balances[t.To] += t.Amount
		lastID++
		tr := engine.Transfer{ID: engine.TransferID(lastID), From: t.From, To: t.To, Amount: t.Amount, BalanceAfter: balances[t.From]}
		mu.Unlock()
		resp := engine.RenderTransfer(tr)
		for _, h := range resp.Header {
			w.Header().Add(h.Name, h.Value)
		}
		w.WriteHeader(resp.Status)
		w.Write(resp.Body)
	}))
	defer memory.Close()
	urls := map[string]string{"memory": memory.URL}
	for _, level := range []string{engine.LevelNaive, engine.LevelScoped} {
		ts := httptest.NewServer(httpapi.Handler{Engine: benchEngine(b, level)})
		defer ts.Close()
		urls[level] = ts.URL
	}
	order := []string{"memory", engine.LevelNaive, engine.LevelScoped}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	const rounds, perRound = 8, 3000
	took := map[string]time.Duration{}
	for range b.N {
		for range rounds {
			for _, name := range order {
				start := time.Now()
				sendTransfers(b, client, urls[name], perRound)
				took[name] += time.Since(start)
			}
		}
	}
	rate := func(name string) float64 { return float64(b.N*rounds*perRound) / took[name].Seconds() }
	for _, name := range order {
		b.ReportMetric(rate(name), name+"-req/s")
	}
	b.ReportMetric(rate(engine.LevelNaive)/rate("memory"), "naive/ceiling")
	b.ReportMetric(rate(engine.LevelScoped)/rate("memory"), "scoped/ceiling")
}

// sendTransfers sends n transfers, each with a fresh key, from 16 workers,
// and returns their latencies.
func sendTransfers(b *testing.B, client *http.Client, url string, n int) []time.Duration {
	return sendMix(b, client, url, n, 0)
}

// sendMix is sendTransfers where, when retryEvery is above 0, every
// retryEvery-th request of a worker is a retry: its previous request
// again, with the same key and body.
func sendMix(b *testing.B, client *http.Client, url string, n, retryEvery int) []time.Duration {
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
			key := ""
			for i := 1; next.Add(1) <= int64(n); i++ {
				req, _ := http.NewRequest("POST", url+"/transfers", bytes.NewReader([]byte(benchBody)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Customer-ID", "bench")
				if key == "" || retryEvery == 0 || i%retryEvery != 0 {
					key = fmt.Sprintf(`"l-%d"`, benchKeys.Add(1))
				}
				req.Header.Set("Idempotency-Key", key)
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
