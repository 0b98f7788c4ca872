package handlers_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/lab/handlers"
	"idemlab/lab/jsrun"
)

// TestAnExceptionReleasesTheClaim plants a fault in the rungs that claim a
// key as in_progress: an exception after the money moved, inside the
// transaction, while an account named "fault" has the balance 1. The
// attempt is answered 500, nothing moves, and the claim is released, so
// the client's retry under the same key, once the fault is gone, is
// executed instead of getting 409 for ever.
func TestAnExceptionReleasesTheClaim(t *testing.T) {
	const fault = `  if ((await db.get("SELECT balance FROM accounts WHERE id = 'fault'")) ?.balance === 1) throw new Error('planted');
  const done = await db.run(`
	for _, name := range []string{"in-progress", "replay", "scoped"} {
		t.Run(name, func(t *testing.T) {
			src, err := handlers.Source(name)
			require.NoError(t, err)
			planted := strings.Replace(string(src), "  const done = await db.run(", fault, 1)
			require.NotEqual(t, string(src), planted)
			s := serveSource(t, name, []byte(planted))
			send := func(method, path, body string) (int, string) {
				req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Customer-ID", "shop")
				req.Header.Set("Idempotency-Key", `"order-1"`)
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				return resp.StatusCode, string(b)
			}
			for _, a := range []string{"alice 100", "bob 0", "fault 1"} {
				id, balance, _ := strings.Cut(a, " ")
				status, body := send("PUT", "/accounts/"+id, `{"balance": `+balance+`}`)
				require.Equal(t, 200, status, body)
			}
			const transfer = `{"from": "alice", "to": "bob", "amount": 10}`
			status, body := send("POST", "/transfers", transfer)
			assert.Equal(t, 500, status, body)
			assert.Contains(t, body, "planted")
			_, body = send("GET", "/accounts/alice", "")
			assert.JSONEq(t, `{"id": "alice", "balance": 100}`, body, "the transaction was rolled back")

			send("PUT", "/accounts/fault", `{"balance": 0}`)
			status, body = send("POST", "/transfers", transfer)
			assert.Equal(t, 201, status, "the retry is executed: %s", body)
			_, body = send("GET", "/accounts/alice", "")
			assert.JSONEq(t, `{"id": "alice", "balance": 90}`, body)
		})
	}
}

// TestScopedTakesOverAClaimWhoseLeaseRanOut: an attempt stopped by the
// time budget (an endless loop planted while an account named "fault" has
// the balance 1) cannot release its claim. A retry meanwhile gets 409; a
// retry after the 30-second lease takes the claim over and is executed,
// once.
func TestScopedTakesOverAClaimWhoseLeaseRanOut(t *testing.T) {
	src, err := handlers.Source("scoped")
	require.NoError(t, err)
	planted := strings.Replace(string(src), "  await db.begin();",
		`  if ((await db.get("SELECT balance FROM accounts WHERE id = 'fault'")) ?.balance === 1) while (true) {}
  await db.begin();`, 1)
	require.NotEqual(t, string(src), planted)
	var now atomic.Int64
	now.Store(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC).UnixMilli())
	h, err := jsrun.Load("scoped.js", []byte(planted), jsrun.Options{DB: filepath.Join(t.TempDir(), "bank.db"),
		Budget: 300 * time.Millisecond, Log: testLog{t}, Now: func() time.Time { return time.UnixMilli(now.Load()) }})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); h.Close() })
	send := func(method, path, body string) (int, string) {
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("X-Customer-ID", "shop")
		req.Header.Set("Idempotency-Key", `"order-1"`)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	for _, a := range []string{"alice 100", "bob 0", "fault 1"} {
		id, balance, _ := strings.Cut(a, " ")
		status, body := send("PUT", "/accounts/"+id, `{"balance": `+balance+`}`)
		require.Equal(t, 200, status, body)
	}
	const transfer = `{"from": "alice", "to": "bob", "amount": 10}`
	status, body := send("POST", "/transfers", transfer)
	require.Equal(t, 500, status, body)
	assert.Contains(t, body, "time budget")
	send("PUT", "/accounts/fault", `{"balance": 0}`)

	now.Add(29_000)
	status, body = send("POST", "/transfers", transfer)
	assert.Equal(t, 409, status, "the lease has not run out: %s", body)

	now.Add(2_000)
	status, body = send("POST", "/transfers", transfer)
	assert.Equal(t, 201, status, "the claim is taken over: %s", body)
	status, again := send("POST", "/transfers", transfer)
	assert.Equal(t, 201, status)
	assert.Equal(t, body, again, "and its answer replayed")
	_, balance := send("GET", "/accounts/alice", "")
	assert.JSONEq(t, `{"id": "alice", "balance": 90}`, balance)
}
