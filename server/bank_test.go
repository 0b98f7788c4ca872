package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/internal/stores"
	"idemlab/server"
)

// newServer serves every level over a real loopback socket, on SQLite files
// in a temporary directory, as `idemlab serve` does.
func newServer(t testing.TB, latency time.Duration) *httptest.Server {
	t.Helper()
	banks, err := stores.OpenBanks(filepath.Join(t.TempDir(), "idemlab.db"), server.Config{PaymentLatency: latency})
	require.NoError(t, err)
	h, err := server.New(banks, stores.Options(server.Options{}))
	require.NoError(t, err)
	ts := httptest.NewUnstartedServer(h)
	ts.Config = server.HTTPServer("", h)
	ts.Start()
	t.Cleanup(func() {
		ts.Close()
		h.Close()
		server.CloseBanks(banks)
	})
	return ts
}

type client struct {
	t    testing.TB
	base string
	http *http.Client
}

func (c client) do(method, path string, headers map[string]string, body string) (*http.Response, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	require.NoError(c.t, err)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	return resp, b
}

func (c client) putAccount(id string, balance int64) {
	c.t.Helper()
	resp, body := c.do("PUT", "/accounts/"+id, map[string]string{"Content-Type": "application/json"}, fmt.Sprintf(`{"balance":%d}`, balance))
	require.Equal(c.t, 200, resp.StatusCode, "%s", body)
}

func (c client) balance(id string) int64 {
	c.t.Helper()
	resp, body := c.do("GET", "/accounts/"+id, nil, "")
	require.Equal(c.t, 200, resp.StatusCode, "%s", body)
	var a engine.Account
	require.NoError(c.t, json.Unmarshal(body, &a))
	return a.Balance
}

func (c client) transfer(customer, key, body string) (*http.Response, []byte) {
	c.t.Helper()
	h := map[string]string{"Content-Type": "application/json"}
	if customer != "" {
		h["X-Customer-ID"] = customer
	}
	if key != "" {
		h["Idempotency-Key"] = key
	}
	return c.do("POST", "/transfers", h, body)
}

func TestEveryLevelIsServedOnItsOwnLedger(t *testing.T) {
	ts := newServer(t, 0)
	for _, level := range engine.Levels() {
		c := client{t, ts.URL + "/bank/" + level, ts.Client()}
		c.putAccount("alice", 1_000_000)
		c.putAccount("bob", 0)
		resp, body := c.transfer("c1", `"k1"`, `{"from":"alice","to":"bob","amount":1000}`)
		require.Equal(t, 201, resp.StatusCode, "%s: %s", level, body)
		// Levels never interfere: each has paid exactly once on its own ledger.
		assert.Equal(t, int64(999_000), c.balance("alice"), level)
	}
	resp, body := client{t, ts.URL, ts.Client()}.do("GET", "/healthz", nil, "")
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "ok\n", string(body))

	resp, body = client{t, ts.URL, ts.Client()}.do("GET", "/bank/scoped", nil, "")
	require.Equal(t, 200, resp.StatusCode)
	var pub struct {
		Retention int64  `json:"retention_seconds"`
		Level     string `json:"level"`
	}
	require.NoError(t, json.Unmarshal(body, &pub))
	assert.Equal(t, int64(86400), pub.Retention, "the published retention")
}

func TestContractOverHTTP(t *testing.T) {
	ts := newServer(t, 0)
	c := client{t, ts.URL + "/bank/scoped", ts.Client()}
	c.putAccount("alice", 1_000_000)
	c.putAccount("bob", 0)
	first, firstBody := c.transfer("c1", `"8e03978e-40d5-43e8-bc93-6894a57f9324"`, `{"from":"alice","to":"bob","amount":200000}`)
	require.Equal(t, 201, first.StatusCode, "%s", firstBody)
	again, againBody := c.transfer("c1", `"8e03978e-40d5-43e8-bc93-6894a57f9324"`, "{\"to\":\"bob\",\n \"amount\":200000, \"from\":\"alice\"}")
	assert.Equal(t, 201, again.StatusCode)
	assert.Equal(t, firstBody, againBody, "byte-for-byte replay")
	assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
	assert.Empty(t, first.Header.Get("Idempotent-Replayed"))

	wrong, body := c.transfer("c1", `"8e03978e-40d5-43e8-bc93-6894a57f9324"`, `{"from":"alice","to":"bob","amount":300000}`)
	assert.Equal(t, 422, wrong.StatusCode, "%s", body)
	assert.Equal(t, "application/problem+json", wrong.Header.Get("Content-Type"))
	assert.Equal(t, int64(800_000), c.balance("alice"))
}

// TestHostileRequests sends what a careless or hostile client might. Each
// gets a clear 4xx problem and nothing moves.
func TestHostileRequests(t *testing.T) {
	ts := newServer(t, 0)
	c := client{t, ts.URL + "/bank/scoped", ts.Client()}
	c.putAccount("alice", 1_000_000)
	c.putAccount("bob", 0)
	valid := `{"from":"alice","to":"bob","amount":1000}`
	json := map[string]string{"Content-Type": "application/json", "X-Customer-ID": "c1", "Idempotency-Key": `"k"`}
	with := func(k, v string) map[string]string {
		h := map[string]string{}
		for a, b := range json {
			h[a] = b
		}
		if v == "" {
			delete(h, k)
		} else {
			h[k] = v
		}
		return h
	}
	cases := []struct {
		name    string
		method  string
		path    string
		headers map[string]string
		body    string
		status  int
	}{
		{"oversized body", "POST", "/transfers", json, `{"from":"alice","to":"bob","amount":1,"pad":"` + strings.Repeat("x", 70<<10) + `"}`, 413},
		{"truncated body", "POST", "/transfers", json, `{"from":"alice","to":"bob","amou`, 400},
		{"deep nesting", "POST", "/transfers", json, strings.Repeat("[", 10000) + strings.Repeat("]", 10000), 400},
		{"nested value", "POST", "/transfers", json, `{"from":"alice","to":"bob","amount":{"$gt":0}}`, 400},
		{"fractional amount", "POST", "/transfers", json, `{"from":"alice","to":"bob","amount":0.5}`, 400},
		{"huge amount", "POST", "/transfers", json, `{"from":"alice","to":"bob","amount":1` + strings.Repeat("0", 400) + `}`, 400},
		{"negative amount", "POST", "/transfers", json, `{"from":"alice","to":"bob","amount":-1000}`, 400},
		{"amount as string", "POST", "/transfers", json, `{"from":"alice","to":"bob","amount":"1000"}`, 400},
		{"null amount", "POST", "/transfers", json, `{"from":"alice","to":"bob","amount":null}`, 400},
		{"invalid utf-8", "POST", "/transfers", json, "{\"from\":\"alice\xc3\x28\",\"to\":\"bob\",\"amount\":1}", 400},
		{"form body", "POST", "/transfers", with("Content-Type", "application/x-www-form-urlencoded"), "from=alice&to=bob&amount=1", 415},
		{"key unquoted", "POST", "/transfers", with("Idempotency-Key", "k"), valid, 400},
		{"key with control character", "POST", "/transfers", with("Idempotency-Key", "\"a\tb\""), valid, 400},
		{"key too long", "POST", "/transfers", with("Idempotency-Key", `"`+strings.Repeat("k", 256)+`"`), valid, 400},
		{"key as a list", "POST", "/transfers", with("Idempotency-Key", `"a", "b"`), valid, 400},
		{"key with parameters", "POST", "/transfers", with("Idempotency-Key", `"a";v=1`), valid, 400},
		{"key is a number", "POST", "/transfers", with("Idempotency-Key", `42`), valid, 400},
		{"no customer", "POST", "/transfers", with("X-Customer-ID", ""), valid, 401},
		{"customer with spaces", "POST", "/transfers", with("X-Customer-ID", "a b"), valid, 401},
		{"account path traversal", "GET", "/accounts/..%2f..%2fetc", nil, "", 404},
		{"account id with quote", "PUT", "/accounts/al'ice", map[string]string{"Content-Type": "application/json"}, `{"balance":1}`, 400},
		{"delete account", "DELETE", "/accounts/alice", nil, "", 405},
		{"get transfers", "GET", "/transfers", nil, "", 405},
		{"unknown path", "POST", "/transfer", json, valid, 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := c.do(tc.method, tc.path, tc.headers, tc.body)
			assert.Equal(t, tc.status, resp.StatusCode, "%s", body)
			assert.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"), "%s", body)
		})
	}
	assert.Equal(t, int64(1_000_000), c.balance("alice"), "nothing moved")
	resp, body := c.transfer("c1", `"k"`, valid)
	assert.Equal(t, 201, resp.StatusCode, "the key is still free after every rejection: %s", body)

	// Outside the bank API too, unknown paths are problems, not HTML.
	resp, _ = client{t, ts.URL, ts.Client()}.do("GET", "/bank/nope/transfers", nil, "")
	assert.Equal(t, 404, resp.StatusCode)
}

// TestHalfSentRequestTimesOut opens a connection, sends headers promising a
// body and never sends it: the server gives up and closes the connection.
func TestHalfSentRequestTimesOut(t *testing.T) {
	banks, err := stores.OpenBanks("", server.Config{})
	require.NoError(t, err)
	defer server.CloseBanks(banks)
	h, err := server.New(banks, stores.Options(server.Options{}))
	require.NoError(t, err)
	srv := server.HTTPServer("", h)
	srv.ReadTimeout = 300 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go srv.Serve(ln)
	defer srv.Close()

	conn, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	fmt.Fprintf(conn, "POST /bank/scoped/transfers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\nX-Customer-ID: c1\r\nIdempotency-Key: \"k\"\r\n\r\n{\"from\":")
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil {
		// The server answered without waiting forever; it must be a refusal.
		assert.GreaterOrEqual(t, resp.StatusCode, 400)
	} else {
		var ne net.Error
		assert.False(t, errorsAs(err, &ne) && ne.Timeout(), "the server, not the client, must end a half-sent request: %v", err)
	}
}

func errorsAs(err error, target *net.Error) bool {
	ne, ok := err.(net.Error)
	if ok {
		*target = ne
	}
	return ok
}

// TestSimultaneousRetriesOverHTTP fires dozens of retries of one key at the
// same moment through real sockets, at naive and at scoped, on SQLite files.
func TestSimultaneousRetriesOverHTTP(t *testing.T) {
	const n = 40
	ts := newServer(t, 20*time.Millisecond)
	for _, tc := range []struct {
		level     string
		transfers int64
	}{{engine.LevelNaive, n}, {engine.LevelScoped, 1}} {
		t.Run(tc.level, func(t *testing.T) {
			c := client{t, ts.URL + "/bank/" + tc.level, ts.Client()}
			c.putAccount("alice", 1_000_000)
			c.putAccount("bob", 0)
			start := make(chan struct{})
			statuses := make([]int, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					resp, _ := c.transfer("c1", `"same-key"`, `{"from":"alice","to":"bob","amount":1000}`)
					statuses[i] = resp.StatusCode
				}()
			}
			close(start)
			wg.Wait()
			assert.Equal(t, 1000*tc.transfers, c.balance("bob"))
			for _, s := range statuses {
				assert.Contains(t, []int{201, 409}, s, "no 500: the database never reports itself locked")
			}
		})
	}
}

func TestProblemTypesAreDescribed(t *testing.T) {
	ts := newServer(t, 0)
	c := client{t, ts.URL, ts.Client()}
	for _, slug := range []string{"idempotency-key-reused", "classroom-forbidden"} {
		resp, body := c.do("GET", "/problems/"+slug, nil, "")
		assert.Equal(t, 200, resp.StatusCode, "%s: %s", slug, body)
		assert.Contains(t, string(body), `"/problems/`+slug+`"`)
	}
	resp, _ := c.do("GET", "/problems/no-such-thing", nil, "")
	assert.Equal(t, 404, resp.StatusCode)
}

// The reaper, as `idemlab serve` runs it each minute, collects every
// expired key of a bank in one tick, over several sweep steps, and nothing
// before its time.
func TestReaperCollectsExpiredKeys(t *testing.T) {
	clock := engine.NewManualClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	banks, err := stores.OpenBanks(filepath.Join(t.TempDir(), "idemlab.db"), server.Config{Clock: clock})
	require.NoError(t, err)
	t.Cleanup(func() { server.CloseBanks(banks) })
	var bank *server.Bank
	for _, b := range banks {
		if b.Level == engine.LevelScoped {
			bank = b
		}
	}
	require.NotNil(t, bank)
	ctx := t.Context()
	_, err = bank.DB.PutAccount(ctx, "alice", 1_000_000)
	require.NoError(t, err)
	_, err = bank.DB.PutAccount(ctx, "bob", 0)
	require.NoError(t, err)
	const n = server.ReapBatch*2 + 7
	for i := range n {
		res := bank.Engine.Handle(ctx, engine.Request{Method: "POST", Path: "/transfers", Customer: "c1", HasCustomer: true,
			Key: []string{fmt.Sprintf(`"k-%d"`, i)}, Body: []byte(`{"from":"alice","to":"bob","amount":1}`)})
		require.Equal(t, 201, res.Response.Status, "%s", res.Response.Body)
	}
	log := slog.New(slog.DiscardHandler)
	assert.Zero(t, server.ReapOnce(ctx, bank, log), "nothing has expired")
	clock.Advance(engine.ScopedRetention + time.Second)
	assert.Equal(t, n, server.ReapOnce(ctx, bank, log))
	snap, err := bank.DB.Snapshot(ctx)
	require.NoError(t, err)
	assert.Empty(t, snap.Keys)
	assert.Len(t, snap.Transfers, n, "the ledger keeps every transfer")
}
