package stores_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"idemlab/engine"
	"idemlab/engine/httpapi"
	"idemlab/internal/pgtest"
	"idemlab/store/postgres"
	"idemlab/store/sqlite"
)

// BenchmarkScopedLoopback is /bank/scoped over loopback HTTP, 16 clients
// each sending transfers with fresh keys, on three set-ups side by side in
// one run: one server on a SQLite file (WAL, group commit), one server on
// PostgreSQL, and three servers (each its own engine, connection pool and
// HTTP listener, in this process) sharing one PostgreSQL schema, the
// clients going round-robin over them. Rounds alternate between the three
// (twelve rounds of 1,000 transfers each: short rounds, so that the shared
// machine's swings fall on all three alike). It reports each one's
// transfers per second, PostgreSQL on one server ÷ SQLite, and where
// PostgreSQL's time goes: round trips per transfer (counted by the pools'
// tracer), commits per transfer (PostgreSQL: transaction ids drawn, as
// every write transaction here commits; SQLite: its group commits), and
// CPU time per transfer in this process (HTTP, engine, driver, clients)
// and in the cluster's processes. The CPU times hold still when the
// shared machine is busy; the rates do not.
//
// $IDEMLAB_BENCH_POOL, when set, is the pools' size (pool_max_conns);
// otherwise each pool has the store's default size.
func BenchmarkScopedLoopback(b *testing.B) {
	url := pgtest.URL(b)
	ctx := context.Background()
	account := func(s engine.Store) {
		if _, err := s.PutAccount(ctx, "alice", 1<<50); err != nil {
			b.Fatal(err)
		}
		if _, err := s.PutAccount(ctx, "bob", 0); err != nil {
			b.Fatal(err)
		}
	}
	serve := func(s engine.Store) string {
		ts := httptest.NewServer(httpapi.Handler{Engine: engine.New(s, engine.MustPreset(engine.LevelScoped), engine.Options{})})
		b.Cleanup(ts.Close)
		return ts.URL
	}
	lite, err := sqlite.OpenFile(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { lite.Close() })
	account(lite)
	type setup struct {
		name string
		urls []string
		pg   bool
	}
	setups := []setup{{"sqlite-1-server", []string{serve(lite)}, false}}

	poolURL := url
	if n := os.Getenv("IDEMLAB_BENCH_POOL"); n != "" {
		poolURL += "&pool_max_conns=" + n
	}
	trips := &pgtest.RoundTrips{}
	openPG := func(schema string) *postgres.DB {
		db, err := postgres.OpenWith(ctx, poolURL, schema, postgres.Options{Configure: func(c *pgxpool.Config) { c.ConnConfig.Tracer = trips }})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		return db
	}
	one := openPG("bench_one")
	account(one)
	setups = append(setups, setup{"postgres-1-server", []string{serve(one)}, true})
	var three []string
	for i := range 3 {
		db := openPG("bench_three")
		if i == 0 {
			account(db)
		}
		three = append(three, serve(db))
	}
	setups = append(setups, setup{"postgres-3-servers", three, true})

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	// The next transaction id, read without drawing one: the difference is
	// how many write transactions ran meanwhile.
	nextXact := func() int64 {
		var n int64
		if err := conn.QueryRow(ctx, "SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint").Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	var backend int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		b.Fatal(err)
	}
	postmaster := parentOf(backend)

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	const rounds, perRound = 12, 1000
	type tally struct {
		took               time.Duration
		appCPU, clusterCPU time.Duration
		transfers          int64
		xacts, trips       int64
	}
	tallies := map[string]*tally{}
	for _, s := range setups {
		tallies[s.name] = &tally{}
	}
	b.ResetTimer()
	for range b.N {
		for range rounds {
			for _, s := range setups {
				t := tallies[s.name]
				x0, r0, app0, pg0 := nextXact(), trips.N.Load(), processCPU(), clusterCPU(postmaster)
				g0, _ := lite.GroupCommits()
				start := time.Now()
				send(b, client, s.urls, perRound)
				t.took += time.Since(start)
				t.appCPU += processCPU() - app0
				t.clusterCPU += clusterCPU(postmaster) - pg0
				t.trips += trips.N.Load() - r0
				if s.pg {
					t.xacts += nextXact() - x0
				} else {
					g, _ := lite.GroupCommits()
					t.xacts += g - g0
				}
				t.transfers += perRound
			}
		}
	}
	b.StopTimer()
	rate := func(name string) float64 { return float64(tallies[name].transfers) / tallies[name].took.Seconds() }
	perTransfer := func(t *tally, d time.Duration) float64 { return float64(d.Microseconds()) / float64(t.transfers) }
	for _, s := range setups {
		t := tallies[s.name]
		b.ReportMetric(rate(s.name), s.name+"-req/s")
		b.ReportMetric(perTransfer(t, t.appCPU), s.name+"-app-cpu-µs/transfer")
		b.ReportMetric(float64(t.xacts)/float64(t.transfers), s.name+"-commits/transfer")
		if s.pg {
			b.ReportMetric(perTransfer(t, t.clusterCPU), s.name+"-pg-cpu-µs/transfer")
			b.ReportMetric(float64(t.trips)/float64(t.transfers), s.name+"-round-trips/transfer")
		}
	}
	b.ReportMetric(rate("postgres-1-server")/rate("sqlite-1-server"), "pg1/sqlite")
}

var benchKeys atomic.Int64

// send sends n transfers with fresh keys from 16 workers, round-robin over
// urls.
func send(b *testing.B, client *http.Client, urls []string, n int) {
	const workers = 16
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				req, _ := http.NewRequest("POST", urls[int(i)%len(urls)]+"/transfers", bytes.NewReader([]byte(`{"from":"alice","to":"bob","amount":1}`)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Customer-ID", "bench")
				req.Header.Set("Idempotency-Key", fmt.Sprintf(`"b-%d"`, benchKeys.Add(1)))
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 201 {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
}
