package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/internal/pgtest"
	"idemlab/internal/stores"
	"idemlab/lab"
	"idemlab/lab/grade"
	"idemlab/store/postgres"
)

// peakConnections samples how many client connections the database db
// holds until the test ends, and returns a function that reads the most
// seen. Its own connection is a superuser's, from the reserved ones.
func peakConnections(t *testing.T, admin, db string) func() int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := pgx.Connect(ctx, admin)
	require.NoError(t, err)
	var peak atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			var n int64
			if conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", db).Scan(&n) == nil && n > peak.Load() {
				peak.Store(n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		conn.Close(context.Background())
	})
	return func() int { return int(peak.Load()) }
}

// dbName is the database a URL names.
func dbName(url string) string {
	name := url[strings.LastIndex(url, "/")+1:]
	return name[:strings.IndexByte(name+"?", '?')]
}

// TestFourServersOnADefaultPostgres runs four `idemlab serve` on one
// database of a PostgreSQL with its default max_connections (100, 3 of
// them reserved), behind a round-robin proxy: the black-box contract
// client at every level, then the SIGKILL harness. Each server keeps to
// its budget of --db-max-conns (16), so together they never ask for more
// than PostgreSQL allows: no answer of 500, none of 503 for a refused
// connection, and PostgreSQL never says "too many clients".
func TestFourServersOnADefaultPostgres(t *testing.T) {
	const servers = 4
	cluster := pgtest.NewCluster(t)
	bin := buildBinary(t)

	t.Run("contract", func(t *testing.T) {
		db := cluster.Database(t)
		peak := peakConnections(t, cluster.URL(), dbName(db))
		var bases []string
		for range servers {
			_, base := startServe(t, bin, "--db", db, "--bank-rate", "100000")
			bases = append(bases, base)
		}
		rr, front := newRoundRobin(t, bases)
		day := lab.DefaultDayParams()
		day.Customers, day.Intents, day.TellerRate, day.SequenceKeyRate = 6, 60, 0.05, 0.3
		for _, level := range engine.Levels() {
			rep, err := grade.Grade(context.Background(), front+"/bank/"+level, grade.Options{Seed: 27, Day: day})
			require.NoError(t, err, level)
			assert.Equal(t, level == engine.LevelScoped, rep.OK, "%s: %v", level, rep.Broken())
			for _, c := range rep.Checks {
				assert.Empty(t, c.Error, "%s: %s", level, c.Name)
			}
		}
		t.Logf("%d servers, every level graded: %d answers 2xx/4xx through the proxy, at most %d connections held",
			servers, rr.count("200")+rr.count("201")+rr.count("409")+rr.count("422"), peak())
		assert.Empty(t, rr.serverErrors(), "no answer of 500 or more")
		// Each server keeps to its budget of sockets; PostgreSQL may count a
		// backend or two more for a moment, whose client closed it (a level
		// shedding an idle connection for another) and which has not yet
		// exited. What matters is that they stay within what it allows.
		assert.Less(t, peak(), 100-3, "the servers stay within max_connections less the reserved ones")
	})
	t.Run("SIGKILL", func(t *testing.T) {
		db := cluster.Database(t)
		peak := peakConnections(t, cluster.URL(), dbName(db))
		rr := crashAcrossServers(t, bin, db, servers)
		// (The proxy's own 502s, while a killed server restarts, are not
		// the servers' answers and are not counted.)
		assert.Empty(t, rr.serverErrors(), "no answer of 500 or more from a server")
		t.Logf("at most %d connections held", peak())
	})
	assert.NotContains(t, cluster.Log(), "too many clients", "PostgreSQL refused no connection")
}

// TestPostgresStopsAndStartsUnderLoad: four servers on one PostgreSQL,
// clients retrying transfers at /bank/scoped through a round-robin proxy,
// and PostgreSQL stopped (pg_ctl stop -m fast) under them and started
// again. While it is down every answer is 503 problem+json with
// Retry-After, never 500, and each server's /readyz names every level;
// once it is back, /readyz is ready again without a restart, and every
// intent is settled exactly once: no duplicate, none lost, money
// conserved, no key left in progress.
func TestPostgresStopsAndStartsUnderLoad(t *testing.T) {
	const servers, clients, intentsPerClient = 4, 6, 6
	cluster := pgtest.NewCluster(t)
	db := cluster.Database(t)
	bin := buildBinary(t)
	args := []string{"--db", db, "--lease", "300ms", "--payment-latency", "3ms"}
	var bases []string
	for range servers {
		_, base := startServe(t, bin, args...)
		bases = append(bases, base)
	}
	rr, front := newRoundRobin(t, bases)
	const accounts, opening = 6, 10_000_000
	httpc := &http.Client{Timeout: 30 * time.Second}
	openAccounts(t, httpc, bases[0]+"/bank/scoped", accounts, opening)

	type intent struct {
		customer, key, body string
		final               int
	}
	var (
		mu          sync.Mutex
		intents     []*intent
		running     atomic.Bool
		settled     atomic.Int64
		unavailable atomic.Int64
		noRetry     atomic.Int64
	)
	running.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < intentsPerClient || running.Load(); i++ {
				from, to := rand.IntN(accounts), rand.IntN(accounts-1)
				if to >= from {
					to++
				}
				in := &intent{customer: fmt.Sprintf("cust-%d", c), key: fmt.Sprintf("down-%d-%d", c, i),
					body: fmt.Sprintf(`{"from":"acct-%d","to":"acct-%d","amount":%d}`, from, to, 1+rand.IntN(5000))}
				mu.Lock()
				intents = append(intents, in)
				mu.Unlock()
				for in.final == 0 && ctx.Err() == nil {
					req, _ := http.NewRequestWithContext(ctx, "POST", front+"/bank/scoped/transfers", strings.NewReader(in.body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("X-Customer-ID", in.customer)
					req.Header.Set("Idempotency-Key", `"`+in.key+`"`)
					resp, err := httpc.Do(req)
					if err != nil {
						t.Errorf("intent %s: %v", in.key, err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					switch resp.StatusCode {
					case 201, 402, 404, 422:
						in.final = resp.StatusCode
						settled.Add(1)
					case 503:
						unavailable.Add(1)
						if resp.Header.Get("Retry-After") == "" || resp.Header.Get("Content-Type") != "application/problem+json" {
							noRetry.Add(1)
						}
						// A real client waits Retry-After; the test retries
						// sooner to keep its time down.
						time.Sleep(20 * time.Millisecond)
					case 409:
						time.Sleep(20 * time.Millisecond)
					default:
						t.Errorf("intent %s: unexpected status %d", in.key, resp.StatusCode)
						in.final = resp.StatusCode
					}
				}
			}
		}()
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			require.NoError(t, ctx.Err(), "waiting for %s", what)
			time.Sleep(10 * time.Millisecond)
		}
	}
	readyz := func(base string) (int, string) {
		resp, err := http.Get(base + "/readyz")
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	waitFor("transfers before the stop", func() bool { return settled.Load() >= clients })
	cluster.Stop(t)
	stoppedAt := settled.Load()
	for _, base := range bases {
		status, body := readyz(base)
		require.Equal(t, 503, status, "%s/readyz while PostgreSQL is down: %s", base, body)
		var p struct{ Type, Detail string }
		require.NoError(t, json.Unmarshal([]byte(body), &p))
		assert.Equal(t, "/problems/not-ready", p.Type)
		for _, level := range engine.Levels() {
			assert.Contains(t, p.Detail, level, "/readyz names the level that failed")
		}
	}
	waitFor("answers while PostgreSQL is down", func() bool { return unavailable.Load() >= 2*clients })
	downAnswers := unavailable.Load()
	cluster.Start(t)
	for _, base := range bases {
		waitFor(base+"/readyz after the start", func() bool { status, _ := readyz(base); return status == 200 })
	}
	waitFor("transfers after the start", func() bool { return settled.Load() >= stoppedAt+2*clients })
	running.Store(false)
	wg.Wait()
	require.NoError(t, ctx.Err(), "every client reached a final answer")
	t.Logf("%d intents; %d answers of 503 (%d while PostgreSQL was down); server errors through the proxy: %v",
		len(intents), unavailable.Load(), downAnswers, rr.serverErrors())
	assert.Zero(t, noRetry.Load(), "every 503 is problem+json with Retry-After")
	assert.Zero(t, rr.count("500 /problems/internal"), "no answer of 500")
	assert.Empty(t, func() map[string]int {
		errs := rr.serverErrors()
		delete(errs, "503 /problems/unavailable")
		return errs
	}(), "no server error but 503 unavailable")

	store, err := postgres.Open(context.Background(), db, stores.LevelSchema(engine.LevelScoped))
	require.NoError(t, err)
	defer store.Close()
	snap, err := store.Snapshot(context.Background())
	require.NoError(t, err)
	perKey := map[string]int{}
	for _, tr := range snap.Transfers {
		perKey[tr.Customer+"/"+tr.Key]++
	}
	var total int64
	for _, a := range snap.Accounts {
		total += a.Balance
	}
	assert.Equal(t, int64(accounts*opening), total, "money is conserved")
	for _, k := range snap.Keys {
		assert.Equal(t, engine.StateCompleted, k.State, "key %s is left in progress", k.Key)
	}
	for _, in := range intents {
		want := 0
		if in.final == 201 {
			want = 1
		}
		assert.Equal(t, want, perKey[in.customer+"/"+in.key], "intent %s answered %d", in.key, in.final)
	}
	assert.Len(t, snap.Keys, len(intents), "every intent's key is recorded once")
}
