package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"idemlab/engine"
	"idemlab/engine/httpapi"
	"idemlab/internal/pgtest"
	"idemlab/store"
)

// BenchmarkScopedLoopback is /bank/scoped over loopback HTTP, 16 clients
// each sending transfers with fresh keys, on three set-ups side by side in
// one run: one server on a SQLite file (WAL, group commit), one server on
// PostgreSQL, and three servers (each its own engine, connection pool and
// HTTP listener, in this process) sharing one PostgreSQL schema, the
// clients going round-robin over them. Rounds alternate between the three
// (3,000 transfers each, four rounds each) so that the shared machine's
// changes of speed fall on all of them. It reports each one's transfers
// per second, PostgreSQL on one server ÷ SQLite, and PostgreSQL's commits
// per transfer (from pg_stat_database).
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
	lite, err := store.OpenFile(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { lite.Close() })
	account(lite)
	setups := []struct {
		name string
		urls []string
	}{{"sqlite-1-server", []string{serve(lite)}}}

	one := openSchema(b, url, "bench_one")
	account(one)
	setups = append(setups, struct {
		name string
		urls []string
	}{"postgres-1-server", []string{serve(one)}})
	var three []string
	for i := range 3 {
		db := openSchema(b, url, "bench_three")
		if i == 0 {
			account(db)
		}
		three = append(three, serve(db))
	}
	setups = append(setups, struct {
		name string
		urls []string
	}{"postgres-3-servers", three})

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	commits := func() int64 {
		var n int64
		conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()")
		if err := conn.QueryRow(ctx, "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()").Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	const rounds, perRound = 4, 3000
	took := map[string]time.Duration{}
	var pgCommits, pgTransfers int64
	b.ResetTimer()
	for range b.N {
		for range rounds {
			for _, s := range setups {
				before := commits()
				start := time.Now()
				send(b, client, s.urls, perRound)
				took[s.name] += time.Since(start)
				if s.name != "sqlite-1-server" {
					pgCommits += commits() - before
					pgTransfers += perRound
				}
			}
		}
	}
	b.StopTimer()
	rate := func(name string) float64 { return float64(b.N*rounds*perRound) / took[name].Seconds() }
	for _, s := range setups {
		b.ReportMetric(rate(s.name), s.name+"-req/s")
	}
	b.ReportMetric(rate("postgres-1-server")/rate("sqlite-1-server"), "pg1/sqlite")
	b.ReportMetric(float64(pgCommits)/float64(pgTransfers), "pg-commits/transfer")
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
