package server_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/internal/stores"
	"idemlab/server"
)

// limitedServer serves every level on SQLite files with limits, over a
// real loopback socket; it returns the base URL and the database path.
func limitedServer(t testing.TB, l server.BankLimits) (string, string) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "idemlab.db")
	banks, err := stores.OpenBanks(db, server.Config{})
	require.NoError(t, err)
	h, err := server.New(banks, stores.Options(server.Options{BankLimits: l}))
	require.NoError(t, err)
	ts := httptest.NewUnstartedServer(h)
	ts.Config = server.HTTPServer("", h)
	ts.Start()
	t.Cleanup(func() {
		ts.Close()
		h.Close()
		server.CloseBanks(banks)
	})
	return ts.URL, db
}

// clientFrom is an HTTP client whose connections leave from addr: another
// machine, as far as the server can tell.
func clientFrom(t testing.TB, base, addr string) client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}, Timeout: 10 * time.Second}
	return client{t: t, base: base, http: &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}}
}

func transferHeaders(key string) map[string]string {
	return map[string]string{"Content-Type": "application/json", "X-Customer-ID": "c1", "Idempotency-Key": `"` + key + `"`}
}

// TestBankRateLimitIsPerAddress: one address past its allowance gets 429
// problems with Retry-After; another address, and 127.0.0.1, are served.
func TestBankRateLimitIsPerAddress(t *testing.T) {
	clk := engine.NewManualClock(time.Unix(1_700_000_000, 0))
	base, _ := limitedServer(t, server.BankLimits{Now: clk.Now})
	noisy := clientFrom(t, base, "127.0.0.2")
	statuses := map[int]int{}
	for i := range server.DefaultBankBurst + 50 {
		res, body := noisy.do("POST", "/bank/scoped/transfers", transferHeaders(fmt.Sprintf("k%d", i)), `{"from":"a","to":"b","amount":1}`)
		statuses[res.StatusCode]++
		if res.StatusCode == 429 {
			assert.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
			assert.Equal(t, "1", res.Header.Get("Retry-After"))
			assert.Contains(t, string(body), "/problems/rate-limited")
		}
	}
	assert.Equal(t, map[int]int{404: server.DefaultBankBurst, 429: 50}, statuses, "404: the accounts do not exist, a stored outcome")
	res, _ := clientFrom(t, base, "127.0.0.3").do("GET", "/bank/scoped/accounts/a", nil, "")
	assert.Equal(t, 404, res.StatusCode, "another address has its own allowance")
	local := clientFrom(t, base, "127.0.0.1")
	for i := range 3 * server.DefaultBankBurst {
		res, _ := local.do("GET", "/bank/scoped/accounts/a", nil, "")
		require.Equal(t, 404, res.StatusCode, "127.0.0.1 is exempt (request %d)", i)
	}
}

// TestBankBudgetStopsGrowth is the 20,000-new-keys attack, scaled down: a
// level with a budget of 40 keys takes 40 new keys, refuses the rest with
// 507 (nothing stored, the file stops growing), and still replays every
// stored key; the naive level's ledger and the accounts stop at theirs.
func TestBankBudgetStopsGrowth(t *testing.T) {
	base, db := limitedServer(t, server.BankLimits{MaxKeys: 40, MaxTransfers: 30, MaxAccounts: 5})
	c := clientFrom(t, base, "127.0.0.1") // exempt from the rate: the budget is for everyone
	statuses := map[int]int{}
	for i := range 100 {
		res, body := c.do("POST", "/bank/scoped/transfers", transferHeaders(fmt.Sprintf("k%d", i)), `{"from":"a","to":"b","amount":1}`)
		statuses[res.StatusCode]++
		if res.StatusCode == 507 {
			assert.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
			assert.Equal(t, "60", res.Header.Get("Retry-After"))
			assert.Contains(t, string(body), "/problems/budget-spent")
		}
	}
	assert.Equal(t, map[int]int{404: 40, 507: 60}, statuses)
	size := func() int64 {
		var n int64
		for _, suffix := range []string{"", "-wal"} {
			if fi, err := os.Stat(stores.LevelPath(db, engine.LevelScoped) + suffix); err == nil {
				n += fi.Size()
			}
		}
		return n
	}
	before := size()
	for i := range 200 {
		res, _ := c.do("POST", "/bank/scoped/transfers", transferHeaders(fmt.Sprintf("more%d", i)), `{"from":"a","to":"b","amount":1}`)
		require.Equal(t, 507, res.StatusCode)
	}
	assert.Equal(t, before, size(), "refused writes leave the files as they were")
	for i := range 40 {
		res, _ := c.do("POST", "/bank/scoped/transfers", transferHeaders(fmt.Sprintf("k%d", i)), `{"from":"a","to":"b","amount":1}`)
		require.Equal(t, 404, res.StatusCode, "a stored key is replayed past the budget (key %d)", i)
		assert.Equal(t, "true", res.Header.Get("Idempotent-Replayed"))
	}
	res, _ := c.do("POST", "/bank/scoped/transfers", transferHeaders("k0"), `{"from":"a","to":"b","amount":2}`)
	assert.Equal(t, 422, res.StatusCode, "a stored key with another body is still judged")

	// Accounts: five, then 507; a PUT on one that exists still answers.
	for i := range 5 {
		res, _ := c.do("PUT", fmt.Sprintf("/bank/naive/accounts/acct%d", i), map[string]string{"Content-Type": "application/json"}, `{"balance":1000}`)
		require.Equal(t, 200, res.StatusCode)
	}
	res, _ = c.do("PUT", "/bank/naive/accounts/acct5", map[string]string{"Content-Type": "application/json"}, `{"balance":1000}`)
	assert.Equal(t, 507, res.StatusCode)
	res, _ = c.do("PUT", "/bank/naive/accounts/acct0", map[string]string{"Content-Type": "application/json"}, `{"balance":5000}`)
	assert.Equal(t, 200, res.StatusCode)
	// The naive ledger: every transfer is a row, so 30, then 507.
	statuses = map[int]int{}
	for i := range 40 {
		res, _ := c.do("POST", "/bank/naive/transfers", transferHeaders(fmt.Sprintf("n%d", i)), `{"from":"acct0","to":"acct1","amount":1}`)
		statuses[res.StatusCode]++
	}
	assert.Equal(t, map[int]int{201: 30, 507: 10}, statuses)
	res, body := c.do("GET", "/bank/naive/accounts/acct0", nil, "")
	assert.Equal(t, 200, res.StatusCode, "reads answer past the budget")
	assert.JSONEq(t, `{"id":"acct0","balance":4970}`, string(body))
}

// TestBankPublishesItsLimits: GET /bank/{level} says the rate, the budget
// and what the level holds.
func TestBankPublishesItsLimits(t *testing.T) {
	base, _ := limitedServer(t, server.BankLimits{})
	res, body := clientFrom(t, base, "127.0.0.2").do("GET", "/bank/scoped", nil, "")
	require.Equal(t, 200, res.StatusCode)
	var pub struct {
		Level            string `json:"level"`
		RetentionSeconds int64  `json:"retention_seconds"`
		Limits           struct {
			RequestsPerSecond float64 `json:"requests_per_second_per_address"`
			Burst             float64 `json:"burst_per_address"`
			Exempt            string  `json:"exempt_address"`
			MaxKeys           int64   `json:"max_keys"`
			MaxAccounts       int64   `json:"max_accounts"`
			MaxTransfers      int64   `json:"max_transfers"`
			MaxBytes          int64   `json:"max_bytes"`
			Usage             struct{ Keys, Bytes int64 }
		} `json:"limits"`
	}
	require.NoError(t, json.Unmarshal(body, &pub), "%s", body)
	assert.Equal(t, "scoped", pub.Level)
	assert.Equal(t, int64(engine.ScopedRetention/time.Second), pub.RetentionSeconds, "the engine's publication is still there")
	assert.Equal(t, float64(server.DefaultBankRequestsPerSecond), pub.Limits.RequestsPerSecond)
	assert.Equal(t, float64(server.DefaultBankBurst), pub.Limits.Burst)
	assert.Equal(t, "127.0.0.1", pub.Limits.Exempt)
	assert.Equal(t, int64(server.DefaultMaxKeys), pub.Limits.MaxKeys)
	assert.Equal(t, int64(server.DefaultMaxAccounts), pub.Limits.MaxAccounts)
	assert.Equal(t, int64(server.DefaultMaxTransfers), pub.Limits.MaxTransfers)
	assert.Equal(t, int64(server.DefaultMaxBytes), pub.Limits.MaxBytes)
	assert.Positive(t, pub.Limits.Usage.Bytes)
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	for _, figure := range []string{"50 requests a second", "bursts of 100", "100,000 keys", "100,000 accounts", "200,000 transfers", "128 MiB"} {
		assert.True(t, strings.Contains(string(readme), figure), "the README publishes %q", figure)
	}
}

// TestReaperKeepsUpWithTheBudget: one tick of the reaper looks at every
// key a full level can hold, so expired keys never outrun it, whatever
// the insert rate (TestReaperCollectsExpiredKeys shows one tick sweeping
// them all).
func TestReaperKeepsUpWithTheBudget(t *testing.T) {
	assert.LessOrEqual(t, server.DefaultMaxKeys, server.ReapPerTick)
}
