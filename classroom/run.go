package classroom

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"idemlab/engine"
	"idemlab/lab"
)

// Accounts of every classroom ledger: the payer starts rich enough that no
// storm ever runs out of funds, so every refusal on the screen is about
// idempotency, not money.
const (
	payer        = "alice"
	payee        = "bob"
	startBalance = 100_000_000
	amount       = 10_000
	// correctedAmount is what a retry carries when the storm changes the
	// amount under the same key.
	correctedAmount = 12_000
)

// offsetClock is the wall clock plus an offset that a late-retry storm
// advances: "an hour later" in one call, while leases and latencies still
// run in real time.
type offsetClock struct{ offset atomic.Int64 }

func (c *offsetClock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

func (c *offsetClock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

// run is one ledger: a fresh SQLite database with one engine at one level,
// and the history of every attempt against it, for the checker.
type run struct {
	id     int
	level  string
	policy engine.Policy
	db     Ledger
	path   string
	eng    *engine.Engine
	clock  *offsetClock
	slow   time.Duration
	lanes  sync.Map // lane → *laneCtl
	// horizon is how long this run's clients keep retrying.
	horizon time.Duration

	// inflight counts requests still inside the engine, so the database is
	// closed only after the last one.
	inflight sync.WaitGroup

	mu       sync.Mutex
	intents  map[string]lab.Intent
	order    []string
	attempts []lab.Attempt
}

// ledgerPath is where a run's SQLite file lives: beside the bank API's
// database, one file per run, removed when the run is replaced.
func ledgerPath(db, code string, id int) string {
	ext := filepath.Ext(db)
	return strings.TrimSuffix(db, ext) + "-classroom-" + code + "-" + strconv.Itoa(id) + ext
}

// newRun opens a fresh ledger at level and makes it the room's current
// run. The previous run is closed once its last request has finished. It
// runs on the room's goroutine.
func (r *Room) newRun(level string, spec *StormSpec) (*run, error) {
	r.runSeq++
	id := r.runSeq

	p := engine.MustPreset(level)
	nr := &run{id: id, level: level, policy: p, clock: &offsetClock{}, horizon: r.cl.cfg.LateRetryAfter,
		intents: map[string]lab.Intent{}}
	var err error
	if r.cl.cfg.DB != "" {
		nr.path = ledgerPath(r.cl.cfg.DB, r.code, id)
		removeDB(nr.path) // a leftover from a crashed server is not this run's ledger
	}
	nr.db, err = r.cl.cfg.OpenLedger(nr.path)
	if err != nil {
		return nil, fmt.Errorf("open classroom ledger: %w", err)
	}
	ctx := r.ctx
	for _, a := range []struct {
		id  string
		bal int64
	}{{payer, startBalance}, {payee, 0}} {
		if _, err := nr.db.PutAccount(ctx, a.id, a.bal); err != nil {
			nr.close()
			return nil, fmt.Errorf("seed classroom ledger: %w", err)
		}
	}
	latency := r.cl.cfg.StudentLatency
	if spec != nil {
		latency = time.Duration(spec.LatencyMS) * time.Millisecond
		nr.slow = time.Duration(spec.SlowMS) * time.Millisecond
	}
	nr.eng = engine.New(nr.db, p, engine.Options{Clock: nr.clock, Hook: nr.hook, Trace: r.tracer(id, nr.clock), PaymentLatency: latency})

	r.flush() // the old ledger's events go out before the new record starts
	r.rec = &record{Run: id}
	old := r.run
	r.run, r.level, r.dirtyView = nr, level, true
	r.restoredRun, r.interrupted = 0, false
	for _, st := range r.byID {
		st.open = false // a fresh ledger: the next press is a new wish
	}
	if old != nil {
		if !r.spawn(func() { old.inflight.Wait(); old.close() }) {
			old.inflight.Wait()
			old.close()
		}
	}
	return nr, nil
}

func removeDB(path string) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
}

func (run *run) close() {
	run.db.Close()
	if run.path != "" {
		removeDB(run.path)
	}
}

// history gathers what the checker judges. The attempts are copied before
// the ledger is read: an attempt is recorded only once its request has
// finished, so every transfer of a recorded attempt is in the ledger read
// after it. (Read the other way round, an attempt that finished in between
// was judged against a ledger without its transfer: a report of two
// attempts and one transfer where there were two.) A transfer of a request
// still running may be in the ledger before its attempt is recorded, which
// is what happened.
func (run *run) history(ctx context.Context) (lab.History, engine.Snapshot, error) {
	run.mu.Lock()
	h := lab.History{
		Attempts:      append([]lab.Attempt(nil), run.attempts...),
		StartBalances: map[string]int64{payer: startBalance, payee: 0},
		Retention:     run.policy.Retention.D(),
		RetryHorizon:  run.horizon,
		Keyless:       !run.policy.Keyed(),
	}
	for _, id := range run.order {
		h.Intents = append(h.Intents, run.intents[id])
	}
	run.mu.Unlock()
	snap, err := run.db.Snapshot(ctx)
	if err != nil {
		return lab.History{}, snap, fmt.Errorf("snapshot run %d: %w", run.id, err)
	}
	h.Ledger = lab.LedgerOf(snap.Transfers)
	h.Charges = lab.ChargesOf(snap.Charges)
	h.EndBalances = lab.BalancesOf(snap.Accounts)
	sort.SliceStable(h.Attempts, func(i, j int) bool { return h.Attempts[i].SentAt.Before(h.Attempts[j].SentAt) })
	return h, snap, nil
}
