package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/store/sqlite"
)

var soak = flag.Bool("soak", false, "run the long form of the crash test (make soak)")

// TestCrashRecovery runs `idemlab serve` as a real process on a SQLite file,
// drives a storm of retrying clients at /bank/scoped, kills the process with
// SIGKILL at random moments, restarts it on the same file, and lets the
// clients keep retrying. Then it proves, from the database itself: no
// duplicate transfers, every completed key has its transfer, money is
// conserved, and no key is left in progress.
func TestCrashRecovery(t *testing.T) {
	cycles, intentsPerClient, clients := 20, 12, 8
	if *soak {
		cycles, intentsPerClient, clients = 200, 60, 16
	}
	if testing.Short() {
		cycles = 5
	}
	bin := buildBinary(t)
	dbPath := filepath.Join(t.TempDir(), "idemlab.db")
	// A short lease so that claims abandoned by a killed process are taken
	// over within the test; a payment latency so that kills land mid-request.
	args := []string{"--db", dbPath, "--lease", "300ms", "--payment-latency", "3ms"}
	cmd, url := startServe(t, bin, args...)
	var base atomic.Value
	base.Store(url + "/bank/scoped")

	const accounts, opening = 6, 10_000_000
	httpc := &http.Client{Timeout: 5 * time.Second}
	openAccounts(t, httpc, base.Load().(string), accounts, opening)

	type intent struct {
		customer, key, body string
		final               int
	}
	// Each client keeps starting new intents while the process is being
	// killed, so that kills land in the middle of claims and commits.
	var (
		mu        sync.Mutex
		intents   []*intent
		killing   atomic.Bool
		attempts  atomic.Int64
		conflicts atomic.Int64
		downs     atomic.Int64
	)
	killing.Store(true)
	newIntent := func(c, i int) *intent {
		from, to := rand.IntN(accounts), rand.IntN(accounts-1)
		if to >= from {
			to++
		}
		in := &intent{customer: fmt.Sprintf("cust-%d", c), key: fmt.Sprintf("crash-%d-%d", c, i),
			body: fmt.Sprintf(`{"from":"acct-%d","to":"acct-%d","amount":%d}`, from, to, 1+rand.IntN(5000))}
		mu.Lock()
		intents = append(intents, in)
		mu.Unlock()
		return in
	}

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < intentsPerClient || killing.Load(); i++ {
				in := newIntent(c, i)
				for in.final == 0 && ctx.Err() == nil {
					attempts.Add(1)
					req, _ := http.NewRequestWithContext(ctx, "POST", base.Load().(string)+"/transfers", strings.NewReader(in.body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("X-Customer-ID", in.customer)
					req.Header.Set("Idempotency-Key", `"`+in.key+`"`)
					resp, err := httpc.Do(req)
					if err != nil {
						downs.Add(1)
						time.Sleep(5 * time.Millisecond) // the server is down or was killed: retry
						continue
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					switch resp.StatusCode {
					case 201, 402, 404, 422:
						in.final = resp.StatusCode
					case 409, 503:
						conflicts.Add(1)
						time.Sleep(20 * time.Millisecond)
					default:
						t.Errorf("intent %s: unexpected status %d", in.key, resp.StatusCode)
						in.final = resp.StatusCode
					}
				}
			}
		}()
	}

	for range cycles {
		time.Sleep(time.Duration(10+rand.IntN(60)) * time.Millisecond)
		require.NoError(t, cmd.Process.Kill())
		cmd.Wait()
		cmd, url = startServe(t, bin, args...)
		base.Store(url + "/bank/scoped")
	}
	killing.Store(false)
	wg.Wait()
	require.NoError(t, ctx.Err(), "every client reached a final answer")
	require.NoError(t, cmd.Process.Kill())
	cmd.Wait()
	t.Logf("%d kills, %d intents, %d attempts, %d refused or cut by a dead server, %d answered 409 while a dead worker's lease ran",
		cycles, len(intents), attempts.Load(), downs.Load(), conflicts.Load())
	assert.Positive(t, downs.Load(), "the kills landed while clients were sending")

	db, err := sqlite.OpenFile(filepath.Join(filepath.Dir(dbPath), "idemlab-scoped.db"))
	require.NoError(t, err)
	defer db.Close()
	snap, err := db.Snapshot(context.Background())
	require.NoError(t, err)

	perKey := map[string]int{}
	for _, tr := range snap.Transfers {
		perKey[tr.Customer+"/"+tr.Key]++
	}
	for k, n := range perKey {
		assert.Equal(t, 1, n, "key %s paid %d times", k, n)
	}
	var total int64
	for _, a := range snap.Accounts {
		total += a.Balance
	}
	assert.Equal(t, int64(accounts*opening), total, "money is conserved")
	transferIDs := map[string]bool{}
	for _, tr := range snap.Transfers {
		transferIDs[tr.ID] = true
	}
	for _, k := range snap.Keys {
		assert.Equal(t, engine.StateCompleted, k.State, "key %s is stuck in progress", k.Key)
		if k.Response != nil && k.Response.Status == 201 {
			assert.True(t, transferIDs[k.TransferID], "completed key %s has its transfer", k.Key)
		}
	}
	for _, in := range intents {
		if in.final == 201 {
			assert.Equal(t, 1, perKey[in.customer+"/"+in.key], "intent %s answered 201 has exactly one transfer", in.key)
		}
		assert.NotZero(t, in.final, "intent %s never got an answer", in.key)
	}
	assert.Len(t, snap.Keys, len(intents), "every intent's key is recorded once")
}

// openAccounts opens accounts acct-0 … acct-(n-1) at a level's URL, each
// with opening won, as a crash test's clients find them.
func openAccounts(t *testing.T, httpc *http.Client, level string, n int, opening int64) {
	t.Helper()
	for i := range n {
		req, _ := http.NewRequest("PUT", fmt.Sprintf("%s/accounts/acct-%d", level, i), strings.NewReader(fmt.Sprintf(`{"balance":%d}`, opening)))
		resp, err := httpc.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode)
	}
}
