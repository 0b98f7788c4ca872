package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/internal/pgtest"
	"idemlab/internal/stores"
	"idemlab/store/postgres"
)

func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	if binary.dir != "" {
		os.RemoveAll(binary.dir)
	}
	os.Exit(code)
}

// roundRobin is the load balancer in front of several idemlab servers: each
// request goes to the next server in turn. A server that is down answers
// 502 through it, as a real balancer's would.
type roundRobin struct {
	next     atomic.Uint64
	backends []atomic.Value // base URL strings; replaced when a server restarts

	mu sync.Mutex
	// answers counts the servers' answers by status, and by problem type
	// for those of 500 and more; the proxy's own 502s (no server) are
	// not among them.
	answers map[string]int
}

// count is how many answers had status (or, for 5xx, "status type").
func (rr *roundRobin) count(what string) int {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return rr.answers[what]
}

// serverErrors are the answers of 500 or more the servers gave, by status
// and problem type.
func (rr *roundRobin) serverErrors() map[string]int {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	out := map[string]int{}
	for k, n := range rr.answers {
		if k >= "5" {
			out[k] = n
		}
	}
	return out
}

func (rr *roundRobin) note(resp *http.Response) error {
	what := strconv.Itoa(resp.StatusCode)
	if resp.StatusCode >= 500 {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		var p struct{ Type string }
		json.Unmarshal(body, &p)
		what += " " + p.Type
	}
	rr.mu.Lock()
	defer rr.mu.Unlock()
	rr.answers[what]++
	return nil
}

func newRoundRobin(t testing.TB, bases []string) (*roundRobin, string) {
	t.Helper()
	rr := &roundRobin{backends: make([]atomic.Value, len(bases)), answers: map[string]int{}}
	for i, b := range bases {
		rr.backends[i].Store(b)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			i := rr.next.Add(1) % uint64(len(rr.backends))
			u, _ := url.Parse(rr.backends[i].Load().(string))
			r.SetURL(u)
			r.Out.Host = u.Host // the servers answer only to their own (loopback) Host
		},
		ModifyResponse: rr.note,
		Transport:      &http.Transport{DisableKeepAlives: true},
		ErrorHandler:   func(w http.ResponseWriter, r *http.Request, err error) { w.WriteHeader(http.StatusBadGateway) },
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: proxy}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return rr, "http://" + ln.Addr().String()
}

func post(t testing.TB, c *http.Client, url, customer, key, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Customer-ID", customer)
	req.Header.Set("Idempotency-Key", `"`+key+`"`)
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// TestServersShareOnePostgres runs two `idemlab serve` processes on one
// PostgreSQL database: an account set through one is seen by the other, a
// transfer made through one is replayed by the other byte for byte, a
// retry storm split between them pays once, and the levels do not see each
// other's tables.
func TestServersShareOnePostgres(t *testing.T) {
	db := pgtest.URL(t)
	bin := buildBinary(t)
	_, a := startServe(t, bin, "--db", db)
	_, b := startServe(t, bin, "--db", db)
	c := &http.Client{Timeout: 30 * time.Second}

	put := func(base, id string, balance int) {
		req, _ := http.NewRequest("PUT", base+"/bank/scoped/accounts/"+id, strings.NewReader(fmt.Sprintf(`{"balance":%d}`, balance)))
		resp, err := c.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode)
	}
	put(a, "alice", 1_000_000)
	put(a, "bob", 0)
	resp, err := c.Get(b + "/bank/scoped/accounts/alice")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.JSONEq(t, `{"id":"alice","balance":1000000}`, string(body), "server B reads what server A wrote")
	resp, err = c.Get(b + "/bank/naive/accounts/alice")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 404, resp.StatusCode, "each level keeps its own tables")

	first, firstBody := post(t, c, a+"/bank/scoped/transfers", "c1", "k1", `{"from":"alice","to":"bob","amount":1000}`)
	require.Equal(t, 201, first.StatusCode, "%s", firstBody)
	again, againBody := post(t, c, b+"/bank/scoped/transfers", "c1", "k1", `{"from":"alice","to":"bob","amount":1000}`)
	assert.Equal(t, 201, again.StatusCode)
	assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
	assert.Equal(t, firstBody, againBody, "the other server replays the stored answer byte for byte")
	other, otherBody := post(t, c, b+"/bank/scoped/transfers", "c1", "k1", `{"from":"alice","to":"bob","amount":2000}`)
	assert.Equal(t, 422, other.StatusCode, "%s", otherBody)
	assert.Equal(t, "application/problem+json", other.Header.Get("Content-Type"))

	// A storm of one key, half to each server, all at once.
	var wg sync.WaitGroup
	var created atomic.Int32
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := a
			if i%2 == 1 {
				base = b
			}
			resp, _ := post(t, c, base+"/bank/scoped/transfers", "c1", "storm", `{"from":"alice","to":"bob","amount":10}`)
			if resp.StatusCode == 201 && resp.Header.Get("Idempotent-Replayed") == "" {
				created.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(1), created.Load(), "one attempt executes across both servers")
	store, err := postgres.Open(context.Background(), db, stores.LevelSchema(engine.LevelScoped))
	require.NoError(t, err)
	defer store.Close()
	snap, err := store.Snapshot(context.Background())
	require.NoError(t, err)
	assert.Len(t, snap.Transfers, 2)
}

// TestCrashRecoveryAcrossServers is the crash test across processes: three
// `idemlab serve` on one PostgreSQL behind a round-robin proxy, clients
// retrying every intent through it until it has a final answer, and
// servers SIGKILLed and restarted at random (crashAcrossServers).
func TestCrashRecoveryAcrossServers(t *testing.T) {
	crashAcrossServers(t, buildBinary(t), pgtest.URL(t), 3)
}

// crashAcrossServers runs n `idemlab serve` on the database db behind a
// round-robin proxy, clients retrying every intent at /bank/scoped
// through it until it has a final answer, and servers SIGKILLed and
// restarted at random. Then, from the database: no duplicate, no
// completed key without its transfer, money conserved, and no key left
// in progress (every claim a killed server abandoned was taken over once
// its lease ran out). It returns the proxy, which counted the answers.
func crashAcrossServers(t *testing.T, bin, db string, n int) *roundRobin {
	cycles, intentsPerClient, clients := 24, 10, 9
	if *soak {
		cycles, intentsPerClient, clients = 200, 60, 16
	}
	args := []string{"--db", db, "--lease", "300ms", "--payment-latency", "3ms"}
	cmds := make([]*exec.Cmd, n)
	bases := make([]string, n)
	for i := range cmds {
		cmds[i], bases[i] = startServe(t, bin, args...)
	}
	rr, front := newRoundRobin(t, bases)
	base := front + "/bank/scoped"

	const accounts, opening = 6, 10_000_000
	httpc := &http.Client{Timeout: 10 * time.Second}
	openAccounts(t, httpc, bases[0]+"/bank/scoped", accounts, opening)

	type intent struct {
		customer, key, body string
		final               int
	}
	var (
		mu        sync.Mutex
		intents   []*intent
		killing   atomic.Bool
		attempts  atomic.Int64
		conflicts atomic.Int64
		downs     atomic.Int64
	)
	killing.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < intentsPerClient || killing.Load(); i++ {
				from, to := rand.IntN(accounts), rand.IntN(accounts-1)
				if to >= from {
					to++
				}
				in := &intent{customer: fmt.Sprintf("cust-%d", c), key: fmt.Sprintf("crash-%d-%d", c, i),
					body: fmt.Sprintf(`{"from":"acct-%d","to":"acct-%d","amount":%d}`, from, to, 1+rand.IntN(5000))}
				mu.Lock()
				intents = append(intents, in)
				mu.Unlock()
				for in.final == 0 && ctx.Err() == nil {
					attempts.Add(1)
					req, _ := http.NewRequestWithContext(ctx, "POST", base+"/transfers", strings.NewReader(in.body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("X-Customer-ID", in.customer)
					req.Header.Set("Idempotency-Key", `"`+in.key+`"`)
					resp, err := httpc.Do(req)
					if err != nil {
						downs.Add(1)
						time.Sleep(5 * time.Millisecond)
						continue
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					switch resp.StatusCode {
					case 201, 402, 404, 422:
						in.final = resp.StatusCode
					case 502:
						downs.Add(1) // the server the proxy chose is down or was killed mid-request
						time.Sleep(5 * time.Millisecond)
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

	killed := make([]int, len(cmds))
	for range cycles {
		time.Sleep(time.Duration(20+rand.IntN(80)) * time.Millisecond)
		i := rand.IntN(len(cmds))
		require.NoError(t, cmds[i].Process.Kill())
		cmds[i].Wait()
		killed[i]++
		cmds[i], bases[i] = startServe(t, bin, args...)
		rr.backends[i].Store(bases[i])
	}
	killing.Store(false)
	wg.Wait()
	require.NoError(t, ctx.Err(), "every client reached a final answer")
	t.Logf("%d kills (per server %v), %d intents, %d attempts, %d cut by a dead server, %d answered 409 while a dead worker's lease ran",
		cycles, killed, len(intents), attempts.Load(), downs.Load(), conflicts.Load())
	assert.Positive(t, downs.Load(), "the kills landed while clients were sending")

	store, err := postgres.Open(context.Background(), db, stores.LevelSchema(engine.LevelScoped))
	require.NoError(t, err)
	defer store.Close()
	snap, err := store.Snapshot(context.Background())
	require.NoError(t, err)
	perKey := map[string]int{}
	transferIDs := map[string]bool{}
	for _, tr := range snap.Transfers {
		perKey[tr.Customer+"/"+tr.Key]++
		transferIDs[tr.ID] = true
	}
	for k, n := range perKey {
		assert.Equal(t, 1, n, "key %s paid %d times", k, n)
	}
	var total int64
	for _, a := range snap.Accounts {
		total += a.Balance
	}
	assert.Equal(t, int64(accounts*opening), total, "money is conserved")
	for _, k := range snap.Keys {
		assert.Equal(t, engine.StateCompleted, k.State, "key %s is stuck in progress past its lease", k.Key)
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
	return rr
}
