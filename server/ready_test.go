package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/internal/pgtest"
	"idemlab/internal/stores"
	"idemlab/server"
)

// serveBanks serves banks over a real loopback socket with a logger that
// writes to the returned buffer.
func serveBanks(t testing.TB, banks []*server.Bank) (*httptest.Server, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	h, err := server.New(banks, stores.Options(server.Options{Logger: slog.New(slog.NewJSONHandler(logs, nil))}))
	require.NoError(t, err)
	ts := httptest.NewUnstartedServer(h)
	ts.Config = server.HTTPServer("", h)
	ts.Start()
	t.Cleanup(func() {
		ts.Close()
		h.Close()
		server.CloseBanks(banks)
	})
	return ts, logs
}

// messages are the messages of the log's records, one per record.
func (s *syncBuffer) messages(t testing.TB) []string {
	var out []string
	for _, rec := range s.records(t) {
		out = append(out, rec["msg"].(string))
	}
	return out
}

// readyProblem is what a /readyz that fails answers with.
type readyProblem struct {
	Type   string `json:"type"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
}

func getReady(t testing.TB, base string) (*http.Response, []byte) {
	t.Helper()
	return client{t, base, http.DefaultClient}.do("GET", "/readyz", nil, "")
}

// TestReadyzAndHealthz: on SQLite files every level's database answers,
// so /readyz is ready; /healthz, liveness, is ok.
func TestReadyzAndHealthz(t *testing.T) {
	banks, err := stores.OpenBanks(filepath.Join(t.TempDir(), "idemlab.db"), server.Config{})
	require.NoError(t, err)
	ts, logs := serveBanks(t, banks)
	resp, body := getReady(t, ts.URL)
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	assert.Equal(t, "ready\n", string(body))
	resp, body = client{t, ts.URL, http.DefaultClient}.do("GET", "/healthz", nil, "")
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "ok\n", string(body))
	assert.Empty(t, logs.records(t), "a server that was ready all along says nothing")
}

// TestReadyzFollowsPostgreSQL: with the levels on a PostgreSQL that is
// stopped, /readyz names every level and the bank answers 503 with
// Retry-After, never 500; once it is started again, both recover without
// restarting the server.
func TestReadyzFollowsPostgreSQL(t *testing.T) {
	cluster := pgtest.NewCluster(t)
	banks, err := stores.OpenBanks(cluster.Database(t), server.Config{})
	require.NoError(t, err)
	ts, logs := serveBanks(t, banks)
	c := client{t, ts.URL + "/bank/scoped", http.DefaultClient}
	c.putAccount("alice", 1000)
	c.putAccount("bob", 0)
	resp, body := getReady(t, ts.URL)
	require.Equal(t, 200, resp.StatusCode, "%s", body)

	cluster.Stop(t)
	for range 2 {
		resp, body = getReady(t, ts.URL)
		require.Equal(t, 503, resp.StatusCode, "%s", body)
		assert.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
		assert.NotEmpty(t, resp.Header.Get("Retry-After"))
		var p readyProblem
		require.NoError(t, json.Unmarshal(body, &p))
		assert.Equal(t, "/problems/not-ready", p.Type)
		for _, level := range engine.Levels() {
			assert.Contains(t, p.Detail, level)
		}
	}
	assert.Equal(t, []string{"not ready: a level's database does not answer"}, logs.messages(t), "a change of verdict is logged once, not every check")
	resp, body = c.transfer("c1", `"k1"`, `{"from":"alice","to":"bob","amount":10}`)
	assert.Equal(t, 503, resp.StatusCode, "%s", body)
	assert.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
	assert.Equal(t, "2", resp.Header.Get("Retry-After"))
	assert.Contains(t, string(body), "/problems/unavailable")
	for _, rec := range logs.records(t) {
		assert.NotEqual(t, "ERROR", rec["level"], "%v", rec)
	}
	recs := logs.records(t)
	last := recs[len(recs)-1]
	assert.Equal(t, "database unavailable", last["msg"], "the transfer's 503 is logged as what it was")
	assert.Equal(t, "WARN", last["level"])

	cluster.Start(t)
	resp, body = getReady(t, ts.URL)
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	resp, body = c.transfer("c1", `"k1"`, `{"from":"alice","to":"bob","amount":10}`)
	require.Equal(t, 201, resp.StatusCode, "the retry with the key pays once: %s", body)
	assert.Equal(t, int64(990), c.balance("alice"))
	assert.Contains(t, logs.messages(t), "ready: every level's database answers")
}

// TestAClientThatGoesAwayIsLoggedAsSuch: a client that gives up while its
// transfer is at the payment call is logged once, at INFO, as a client
// that closed the request, not as a server error; and the claim its
// attempt made is released, so that its retry pays at once rather than
// hearing 409 until the lease runs out.
func TestAClientThatGoesAwayIsLoggedAsSuch(t *testing.T) {
	banks, err := stores.OpenBanks(filepath.Join(t.TempDir(), "idemlab.db"), server.Config{PaymentLatency: time.Minute})
	require.NoError(t, err)
	ts, logs := serveBanks(t, banks)
	c := client{t, ts.URL + "/bank/scoped", http.DefaultClient}
	c.putAccount("alice", 1000)
	c.putAccount("bob", 0)

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/bank/scoped/transfers", strings.NewReader(`{"from":"alice","to":"bob","amount":10}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Customer-ID", "c1")
	req.Header.Set("Idempotency-Key", `"gone"`)
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	// The payment call takes a minute: the claim is in, the client leaves.
	require.Eventually(t, func() bool { return strings.Contains(snapshotKeys(t, banks), "gone") }, time.Minute, 5*time.Millisecond)
	cancel()
	require.Error(t, <-done)
	require.Eventually(t, func() bool { return len(logs.records(t)) > 0 }, time.Minute, 5*time.Millisecond)

	recs := logs.records(t)
	require.Len(t, recs, 1, "one record for the one cause")
	assert.Equal(t, "client closed the request", recs[0]["msg"])
	assert.Equal(t, "INFO", recs[0]["level"])
	assert.Equal(t, `"gone"`, recs[0]["key"])
	assert.NotContains(t, recs[0], "status", "no answer was delivered")
	assert.NotContains(t, snapshotKeys(t, banks), "gone", "the claim of the attempt whose client left is released")
}

// snapshotKeys lists the scoped level's keys.
func snapshotKeys(t testing.TB, banks []*server.Bank) string {
	t.Helper()
	for _, b := range banks {
		if b.Level == engine.LevelScoped {
			snap, err := b.DB.Snapshot(context.Background())
			require.NoError(t, err)
			var keys []string
			for _, k := range snap.Keys {
				keys = append(keys, k.Key)
			}
			return strings.Join(keys, " ")
		}
	}
	return ""
}
