package server

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"idemlab/engine"
	"idemlab/engine/httpapi"
	"idemlab/internal/limit"
	"idemlab/internal/peer"
)

// BankLimits hold the bank API up on a network anyone can reach: a request
// rate per client address, and a size budget per level that no client,
// whatever its address, can grow the level's database past. Zero fields
// take the defaults below, which the README and GET /bank/{level} publish.
type BankLimits struct {
	// RequestsPerSecond and Burst bound each client address's requests to
	// the bank API. 127.0.0.1, the server's own machine (the instructor,
	// the benchmarks), is exempt when it connects directly; no other
	// address is, nor anyone through a proxy (package peer).
	RequestsPerSecond, Burst float64
	// The size budget of each level: rows of the key tables, accounts and
	// ledger, and the database's bytes in use. Past any of them, a request
	// that would add rows is refused with 507; a replay of a key already
	// stored, a PUT of an account that exists and every read still answer.
	MaxKeys, MaxAccounts, MaxTransfers, MaxBytes int64
	// Now is the rate limit's clock; nil means time.Now.
	Now func() time.Time
}

// The defaults of BankLimits. MaxKeys is no more than ReapPerTick, so that
// one tick of the reaper (every minute) can sweep a level whose key table
// is full: the reaper keeps up with any insert rate the budget allows.
// The figures hold `make bench`'s 100,000-attempt day (66,928 accounts,
// fewer keys than attempts, about 100 MB at scoped).
const (
	DefaultBankRequestsPerSecond = 50
	DefaultBankBurst             = 100
	DefaultMaxKeys               = 100_000
	DefaultMaxAccounts           = 100_000
	DefaultMaxTransfers          = 200_000
	DefaultMaxBytes              = 128 << 20
)

func (l *BankLimits) defaults() {
	setF, setI := limit.Default[float64], limit.Default[int64]
	setF(&l.RequestsPerSecond, DefaultBankRequestsPerSecond)
	setF(&l.Burst, DefaultBankBurst)
	setI(&l.MaxKeys, DefaultMaxKeys)
	setI(&l.MaxAccounts, DefaultMaxAccounts)
	setI(&l.MaxTransfers, DefaultMaxTransfers)
	setI(&l.MaxBytes, DefaultMaxBytes)
}

// Problems the bank's limits answer with.
var (
	causeBankRateLimited = engine.Cause{Slug: "rate-limited", Title: "Too many requests from your address", Status: http.StatusTooManyRequests}
	causeBudgetSpent     = engine.Cause{Slug: "budget-spent", Title: "This level's size budget is spent", Status: http.StatusInsufficientStorage}
)

// budgetRetryAfter is what a 507 tells the client: the reaper's next tick
// may have freed expired keys by then.
const budgetRetryAfter = 60

// rowBytes is what the budget assumes each admitted write adds until the
// next count: more than a scoped key's row, about 900 bytes measured.
const rowBytes = 2048

// bankGuard wraps one level's handler with the per-address rate and the
// level's size budget. It is safe for concurrent use.
type bankGuard struct {
	bank   *Bank
	limits BankLimits
	rate   *limit.Rate
	next   http.Handler

	mu sync.Mutex
	// usage is the last count; pending the writes admitted since, which the
	// budget counts as rows added until the next count says otherwise.
	usage     engine.Usage
	pending   int64
	counted   bool
	countedAt time.Time
	// overUntil caches a spent budget for a second, so that a flood of
	// refused writes does not count the tables for each; one per kind of
	// write (an account, a transfer).
	overUntil [2]time.Time
}

// A write adds an account or a transfer (and its key): each is held to the
// figures it can grow, so that a level whose accounts are all taken still
// takes transfers between them.
const (
	writeAccount = iota
	writeTransfer
)

func newBankGuard(b *Bank, l BankLimits, next http.Handler) *bankGuard {
	return &bankGuard{bank: b, limits: l, rate: limit.NewRate(l.RequestsPerSecond, l.Burst, l.Now), next: next}
}

// ServeHTTP answers 429 past the address's rate, 507 for a write that
// would grow a level past its budget, and hands everything else on.
func (g *bankGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if client := peer.Of(r); !client.Exempt() {
		if ok, wait := g.rate.Allow(client.Addr); !ok {
			p := causeBankRateLimited.Problemf("each address may send %g requests a second (bursts of %g)", g.limits.RequestsPerSecond, g.limits.Burst)
			p.RetryAfter = limit.RetryAfter(wait)
			httpapi.Write(w, p.Response())
			return
		}
	}
	if r.Method == http.MethodGet && (r.URL.Path == "" || r.URL.Path == "/") {
		httpapi.WriteJSON(w, r, 200, g.publication(r.Context()))
		return
	}
	req := httpapi.Request(r, nil)
	if engine.AddsRows(req) {
		ok, err := g.admit(r.Context(), req)
		if err != nil {
			httpapi.WriteError(w, r, fmt.Errorf("size budget: %w", err))
			return
		}
		if !ok {
			p := causeBudgetSpent.Problemf("level %s holds its published budget (%d keys, %d accounts, %d transfers, %d bytes); replays of stored keys still answer",
				g.bank.Level, g.limits.MaxKeys, g.limits.MaxAccounts, g.limits.MaxTransfers, g.limits.MaxBytes)
			p.RetryAfter = budgetRetryAfter
			httpapi.Write(w, p.Response())
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

// admit reports whether a write may go on: the budget has room, or the
// store can answer it without a new row.
func (g *bankGuard) admit(ctx context.Context, req engine.Request) (bool, error) {
	kind := writeTransfer
	if req.Method == http.MethodPut {
		kind = writeAccount
	}
	room, err := g.room(ctx, kind)
	if err != nil || room {
		return room, err
	}
	return g.bank.Engine.Recorded(ctx, req)
}

// room reports whether the budget has room for one more write, and counts
// it. The tables are counted again only when the writes admitted since the
// last count could have reached a limit.
func (g *bankGuard) room(ctx context.Context, kind int) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	if now.Before(g.overUntil[kind]) {
		return false, nil
	}
	if !g.counted || g.over(g.usage, g.pending+1, kind) {
		u, err := g.bank.DB.Usage(ctx)
		if err != nil {
			return false, err
		}
		g.usage, g.pending, g.counted, g.countedAt = u, 0, true, now
		if g.over(u, 1, kind) {
			g.overUntil[kind] = now.Add(time.Second)
			return false, nil
		}
	}
	g.pending++
	return true, nil
}

// over reports whether u plus n more writes of a kind passes a limit that
// kind can grow.
func (g *bankGuard) over(u engine.Usage, n int64, kind int) bool {
	l := g.limits
	if u.Bytes+n*rowBytes > l.MaxBytes {
		return true
	}
	if kind == writeAccount {
		return u.Accounts+n > l.MaxAccounts
	}
	return u.Keys+n > l.MaxKeys || u.Transfers+n > l.MaxTransfers
}

// bankPublication is GET /bank/{level}: the engine's publication and the
// limits clients are held to.
type bankPublication struct {
	engine.Publication
	Limits publishedLimits `json:"limits"`
}

type publishedLimits struct {
	RequestsPerSecond float64      `json:"requests_per_second_per_address"`
	Burst             float64      `json:"burst_per_address"`
	Exempt            string       `json:"exempt_address"`
	MaxKeys           int64        `json:"max_keys"`
	MaxAccounts       int64        `json:"max_accounts"`
	MaxTransfers      int64        `json:"max_transfers"`
	MaxBytes          int64        `json:"max_bytes"`
	Usage             engine.Usage `json:"usage"`
	Note              string       `json:"note"`
}

// publication counts the tables at most once a second, however often it
// is asked.
func (g *bankGuard) publication(ctx context.Context) bankPublication {
	g.mu.Lock()
	defer g.mu.Unlock()
	if now := time.Now(); !g.counted || now.Sub(g.countedAt) >= time.Second {
		if u, err := g.bank.DB.Usage(ctx); err == nil {
			g.usage, g.pending, g.counted, g.countedAt = u, 0, true, now
		}
	}
	u := g.usage
	return bankPublication{Publication: g.bank.Engine.Published(), Limits: publishedLimits{
		RequestsPerSecond: g.limits.RequestsPerSecond, Burst: g.limits.Burst, Exempt: "127.0.0.1",
		MaxKeys: g.limits.MaxKeys, MaxAccounts: g.limits.MaxAccounts, MaxTransfers: g.limits.MaxTransfers, MaxBytes: g.limits.MaxBytes,
		Usage: u,
		Note:  "past the rate: 429 with Retry-After; past the budget: 507 with Retry-After for writes that add rows, while replays of stored keys, PUTs of existing accounts and reads still answer",
	}}
}
