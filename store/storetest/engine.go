package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// bank is an engine over a store of the harness, with a manual clock and
// three accounts.
type bank struct {
	eng   *engine.Engine
	db    Store
	clock *engine.ManualClock
}

func newBank(t testing.TB, db Store, p engine.Policy, o engine.Options) *bank {
	t.Helper()
	clock := engine.NewManualClock(t0)
	if o.Clock == nil {
		o.Clock = clock
	}
	b := &bank{eng: engine.New(db, p, o), db: db, clock: clock}
	ctx := context.Background()
	for id, bal := range map[string]int64{"alice": 1_000_000, "bob": 0, "carol": 500_000} {
		_, err := db.PutAccount(ctx, id, bal)
		require.NoError(t, err)
	}
	return b
}

func transferReq(customer, key, body string) engine.Request {
	r := engine.Request{Method: "POST", Path: "/transfers", Customer: customer, HasCustomer: customer != "",
		Body: []byte(body), ContentType: "application/json"}
	if key != "" {
		r.Key = []string{`"` + key + `"`}
	}
	return r
}

const body200k = `{"from":"alice","to":"bob","amount":200000}`

func (b *bank) do(r engine.Request) engine.Result { return b.eng.Handle(context.Background(), r) }

func (b *bank) balance(t testing.TB, id string) int64 {
	t.Helper()
	a, err := b.db.GetAccount(context.Background(), id)
	require.NoError(t, err)
	return a.Balance
}

// barrier holds every attempt before part of phase until n have arrived.
func barrier(n int, phase engine.Phase, part string) engine.Hook {
	var mu sync.Mutex
	arrived := 0
	open := make(chan struct{})
	return func(ctx context.Context, s engine.Step) engine.Fault {
		if s.Phase != phase || s.Part != part {
			return engine.FaultNone
		}
		mu.Lock()
		arrived++
		if arrived == n {
			close(open)
		}
		mu.Unlock()
		select {
		case <-open:
		case <-ctx.Done():
		}
		return engine.FaultNone
	}
}

// testSimultaneousRetries fires many goroutines at one key. The full engine
// pays once; naive pays every time; check-then-insert, when every lane has
// looked before any inserts, pays every time too: the broken rungs break
// on every store, and the fixed one holds on every store.
func testSimultaneousRetries(t *testing.T, h Harness) {
	const n = 24
	cases := []struct {
		name      string
		policy    func() engine.Policy
		hook      func() engine.Hook
		transfers int
	}{
		{"naive", func() engine.Policy { return engine.MustPreset(engine.LevelNaive) }, func() engine.Hook { return nil }, n},
		{"check-then-insert", func() engine.Policy {
			p := engine.MustPreset(engine.LevelUnique)
			p.Claim = engine.ClaimCheckThenInsert
			return p
		}, func() engine.Hook { return barrier(n, engine.PhaseClaim, "insert") }, n},
		{"insert-or-ignore", func() engine.Policy {
			p := engine.MustPreset(engine.LevelUnique)
			p.Claim = engine.ClaimInsertOrIgnore
			return p
		}, func() engine.Hook { return barrier(n, engine.PhaseExecute, "") }, n},
		{"execute-first", func() engine.Policy {
			p := engine.MustPreset(engine.LevelScoped)
			p.InProgress = engine.InProgressExecuteFirst
			return p
		}, func() engine.Hook { return barrier(n, engine.PhaseExecute, "") }, n},
		{"scoped", func() engine.Policy { return engine.MustPreset(engine.LevelScoped) }, func() engine.Hook { return nil }, 1},
		{"scoped, all lanes lined up at the claim", func() engine.Policy { return engine.MustPreset(engine.LevelScoped) },
			func() engine.Hook { return barrier(n, engine.PhaseClaim, "") }, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBank(t, h.Open(t), c.policy(), engine.Options{Hook: c.hook(), PaymentLatency: 5 * time.Millisecond})
			results := make([]engine.Result, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := transferReq("c1", "storm-key", `{"from":"alice","to":"bob","amount":10000}`)
					r.Lane = fmt.Sprintf("lane-%d", i)
					results[i] = b.eng.Handle(context.Background(), r)
				}()
			}
			wg.Wait()
			assert.Len(t, snapshot(t, b.db).Transfers, c.transfers)
			assert.Equal(t, int64(1_000_000-10_000*c.transfers), b.balance(t, "alice"))
			if c.transfers == 1 {
				var created, conflicts, replays int
				for _, r := range results {
					switch r.Response.Status {
					case 201:
						created++
						if r.Replayed {
							replays++
						}
					case 409:
						conflicts++
						assert.Equal(t, "1", r.Response.Get("Retry-After"))
					default:
						t.Errorf("unexpected answer %d %s", r.Response.Status, r.Response.Body)
					}
				}
				assert.Equal(t, n, created+conflicts)
				assert.Equal(t, 1, created-replays, "exactly one attempt executes")
			}
		})
	}
}

// testCrashAtEveryPhase crashes the first attempt before each phase, then
// retries, and checks what each in-progress mode leaves behind.
func testCrashAtEveryPhase(t *testing.T, h Harness) {
	type outcome struct {
		transfers   int // after the crash and one retry
		retryStatus int
	}
	modes := map[string]func() engine.Policy{
		"completed-first": func() engine.Policy {
			return engine.MustPreset(engine.LevelReplay).With(func(p *engine.Policy) { p.InProgress = engine.InProgressCompletedFirst })
		},
		"execute-first": func() engine.Policy {
			return engine.MustPreset(engine.LevelReplay).With(func(p *engine.Policy) { p.InProgress = engine.InProgressExecuteFirst })
		},
		"scoped": func() engine.Policy { return engine.MustPreset(engine.LevelScoped) },
	}
	want := map[string]map[engine.Phase]outcome{
		"completed-first": {
			engine.PhaseClaim: {1, 201}, engine.PhaseExecute: {0, 200}, engine.PhaseCommit: {0, 200},
			engine.PhaseStoreResponse: {1, 200}, engine.PhaseRespond: {1, 201},
		},
		"execute-first": {
			engine.PhaseClaim: {1, 201}, engine.PhaseExecute: {1, 201}, engine.PhaseCommit: {1, 201},
			engine.PhaseStoreResponse: {2, 201}, engine.PhaseRespond: {1, 201},
		},
		// The full engine: before the lease runs out a retry gets 409; after
		// it, the retry takes over and pays exactly once.
		"scoped": {
			engine.PhaseClaim: {1, 201}, engine.PhaseFingerprint: {1, 201}, engine.PhaseExecute: {1, 201},
			engine.PhaseCommit: {1, 201}, engine.PhaseRespond: {1, 201},
		},
	}
	for mode, phases := range want {
		for phase, w := range phases {
			t.Run(mode+"/"+string(phase), func(t *testing.T) {
				crashed := false
				hook := func(ctx context.Context, s engine.Step) engine.Fault {
					if s.Lane == "first" && s.Phase == phase && !crashed {
						crashed = true
						return engine.FaultCrash
					}
					return engine.FaultNone
				}
				b := newBank(t, h.Open(t), modes[mode](), engine.Options{Hook: hook})
				first := transferReq("c1", "k1", body200k)
				first.Lane = "first"
				res := b.do(first)
				require.True(t, crashed, "the hook reached %s", phase)
				assert.False(t, res.Delivered)
				assert.Equal(t, engine.FaultCrash, res.Fault)
				retry := b.do(transferReq("c1", "k1", body200k))
				if mode == "scoped" && (phase == engine.PhaseExecute || phase == engine.PhaseCommit) {
					assert.Equal(t, 409, retry.Response.Status, "the dead worker's claim still holds")
					b.clock.Advance(engine.ScopedLease + time.Second)
					retry = b.do(transferReq("c1", "k1", body200k))
				}
				assert.Equal(t, w.retryStatus, retry.Response.Status, "%s", retry.Response.Body)
				snap := snapshot(t, b.db)
				assert.Len(t, snap.Transfers, w.transfers)
				if mode == "scoped" {
					// The full engine passes the key downstream: a crash
					// after the payment call and the retry's takeover still
					// leave one charge at the processor.
					assert.LessOrEqual(t, len(snap.Charges), 1, "the processor's charges: %+v", snap.Charges)
				}
			})
		}
	}
}

// testLeaseTakeOver: a slow worker (not dead) whose lease ran out loses its
// claim: its commit rolls back, so the ledger still pays once. It had
// called the processor already, and so does the retry that took its claim
// over: without the key passed downstream the processor charges twice;
// with it, once.
func testLeaseTakeOver(t *testing.T, h Harness) {
	for _, c := range []struct {
		name       string
		downstream engine.DownstreamMode
		charges    int
	}{
		{"key passed downstream", engine.DownstreamOn, 1},
		{"no key downstream", engine.DownstreamOff, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := engine.MustPreset(engine.LevelScoped).With(func(p *engine.Policy) { p.DownstreamKey = c.downstream })
			b := leaseTakeOver(t, h, p)
			snap := snapshot(t, b.db)
			require.Len(t, snap.Charges, c.charges, "the processor's charges: %+v", snap.Charges)
			for _, ch := range snap.Charges {
				assert.Equal(t, "k1", ch.Key, "a charge names the request's key")
				assert.Equal(t, int64(200_000), ch.Amount)
			}
			if c.downstream == engine.DownstreamOn {
				assert.Equal(t, "c1:k1", snap.Charges[0].IdempotencyKey)
			} else {
				assert.Empty(t, snap.Charges[0].IdempotencyKey)
			}
		})
	}
}

// leaseTakeOver runs a slow worker whose lease runs out before its commit
// and the retry that takes its claim over, and checks the ledger.
func leaseTakeOver(t *testing.T, h Harness, p engine.Policy) *bank {
	step, parked := make(chan struct{}), make(chan struct{})
	hook := func(ctx context.Context, s engine.Step) engine.Fault {
		if s.Lane == "slow" && s.Phase == engine.PhaseCommit {
			close(parked)
			<-step
		}
		return engine.FaultNone
	}
	b := newBank(t, h.Open(t), p, engine.Options{Hook: hook})
	done := make(chan engine.Result)
	go func() {
		r := transferReq("c1", "k1", body200k)
		r.Lane = "slow"
		done <- b.eng.Handle(context.Background(), r)
	}()
	// The slow worker has claimed the key and done all it does before its
	// commit (the payment call, a recovery point) when its lease runs out.
	select {
	case <-parked:
	case <-time.After(time.Minute):
		t.Fatal("the slow worker never reached its commit")
	}
	b.clock.Advance(engine.ScopedLease + time.Second)
	fast := b.do(transferReq("c1", "k1", body200k))
	require.Equal(t, 201, fast.Response.Status)
	close(step)
	slow := <-done
	assert.Equal(t, 409, slow.Response.Status, "the slow worker lost its claim")
	assert.Len(t, snapshot(t, b.db).Transfers, 1)
	replay := b.do(transferReq("c1", "k1", body200k))
	assert.Equal(t, fast.Response.Body, replay.Response.Body)
	assert.Equal(t, int64(800_000), b.balance(t, "alice"))
	return b
}

func testRetention(t *testing.T, h Harness) {
	cases := []struct {
		level     string
		after     time.Duration
		transfers int
	}{
		{engine.LevelReplay, engine.ShortRetention - time.Second, 1},
		{engine.LevelReplay, engine.ShortRetention + time.Second, 2}, // a late retry pays again
		{engine.LevelScoped, time.Hour, 1},
		{engine.LevelScoped, engine.ScopedRetention + time.Second, 2},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s after %s", c.level, c.after), func(t *testing.T) {
			b := newBank(t, h.Open(t), engine.MustPreset(c.level), engine.Options{})
			require.Equal(t, 201, b.do(transferReq("c1", "k1", body200k)).Response.Status)
			b.clock.Advance(c.after)
			b.do(transferReq("c1", "k1", body200k))
			snap := snapshot(t, b.db)
			assert.Len(t, snap.Transfers, c.transfers)
			assert.Len(t, snap.Keys, 1, "one row per key: the expired row was taken over")
		})
	}
}

func testReapInBatches(t *testing.T, h Harness) {
	b := newBank(t, h.Open(t), engine.MustPreset(engine.LevelScoped), engine.Options{})
	for i := range 25 {
		r := b.do(transferReq("c1", fmt.Sprintf("k%d", i), `{"from":"alice","to":"bob","amount":1}`))
		require.Equal(t, 201, r.Response.Status)
	}
	ctx := context.Background()
	// A sweep in steps of 10 keys: the constrained table's 25 keys, then the
	// unconstrained table, empty, which ends the sweep.
	sweep := func(now int64) (deleted []int) {
		for range 10 {
			n, swept, err := b.db.Reap(ctx, now, 10)
			require.NoError(t, err)
			deleted = append(deleted, n)
			if swept {
				return deleted
			}
		}
		t.Fatal("the sweep never ended")
		return nil
	}
	assert.Equal(t, []int{0, 0, 0, 0}, sweep(b.clock.Now().UnixMilli()), "nothing has expired yet")
	assert.Len(t, snapshot(t, b.db).Keys, 25)
	b.clock.Advance(engine.ScopedRetention + time.Second)
	assert.Equal(t, []int{10, 10, 5, 0}, sweep(b.clock.Now().UnixMilli()))
	assert.Empty(t, snapshot(t, b.db).Keys)
}

// testHostileInput sends what a hostile client would, through the engine at
// the full level: keys and customers that look like SQL, quotes, the
// longest key, bodies that are not I-JSON. What the engine accepts is
// stored and replayed exactly; what it refuses is a problem, and nothing
// moves or is stored.
func testHostileInput(t *testing.T, h Harness) {
	b := newBank(t, h.Open(t), engine.MustPreset(engine.LevelScoped), engine.Options{})
	long := make([]byte, 255)
	for i := range long {
		long[i] = 'a' + byte(i%26)
	}
	accepted := []struct{ customer, key string }{
		{"c1", `'); DROP TABLE idem_keys; --`},
		{"c1", `\" OR 1=1 --`},
		{`c1';DELETE-FROM-accounts;--`, "k"},
		{"c1", string(long)},
		{"c1", `%s%n$1$2?1`},
	}
	paid := 0
	for _, c := range accepted {
		first := b.do(transferReq(c.customer, c.key, `{"from":"alice","to":"bob","amount":1}`))
		require.Equal(t, 201, first.Response.Status, "%q/%q: %s", c.customer, c.key, first.Response.Body)
		paid++
		again := b.do(transferReq(c.customer, c.key, `{"from":"alice","to":"bob","amount":1}`))
		assert.True(t, again.Replayed, "%q/%q is replayed", c.customer, c.key)
		assert.Equal(t, first.Response.Body, again.Response.Body)
	}
	refused := []engine.Request{
		transferReq("c1", "", `{"from":"alice","to":"bob","amount":1}`),
		transferReq("", "k-no-customer", `{"from":"alice","to":"bob","amount":1}`),
		transferReq("c 1", "k-bad-customer", `{"from":"alice","to":"bob","amount":1}`),
		transferReq("c\xff", "k-bad-customer", `{"from":"alice","to":"bob","amount":1}`),
		transferReq("c1", "k-dup", `{"from":"alice","from":"carol","to":"bob","amount":1}`),
		transferReq("c1", "k-neg", `{"from":"alice","to":"bob","amount":-1}`),
		transferReq("c1", "k-float", `{"from":"alice","to":"bob","amount":1.5}`),
		transferReq("c1", "k-utf8", "{\"from\":\"alice\xff\",\"to\":\"bob\",\"amount\":1}"),
		transferReq("c1", "k-acct", `{"from":"alice'; --","to":"bob","amount":1}`),
		transferReq("c1", "k-big", `{"from":"alice","to":"bob","amount":99999999999999999999999}`),
	}
	bad := transferReq("c1", "", `{"from":"alice","to":"bob","amount":1}`)
	bad.Key = []string{"\"k\x00\""}
	refused = append(refused, bad)
	for _, r := range refused {
		res := b.do(r)
		assert.GreaterOrEqual(t, res.Response.Status, 400, "%q %s", r.Key, r.Body)
		assert.Less(t, res.Response.Status, 500, "%q %s: %s", r.Key, r.Body, res.Response.Body)
		assert.Equal(t, "application/problem+json", res.Response.Get("Content-Type"))
	}
	snap := snapshot(t, b.db)
	assert.Len(t, snap.Transfers, paid)
	assert.Len(t, snap.Keys, len(accepted), "refused requests store no key")
	assert.Equal(t, int64(1_000_000-paid), b.balance(t, "alice"))
}

// testRetriesAcrossTwoHandles is two servers over one database: two
// engines, each on its own handle, a storm of retries of one key split
// between them, all lined up at the claim. The database's constraint is
// the only thing they share, and it is enough: one payment.
func testRetriesAcrossTwoHandles(t *testing.T, h Harness) {
	if h.Share == nil {
		t.Skip("this store cannot open a second handle on one database")
	}
	const n = 16
	first := h.Open(t)
	hook := barrier(n, engine.PhaseClaim, "")
	servers := []*bank{
		newBank(t, first, engine.MustPreset(engine.LevelScoped), engine.Options{Hook: hook, PaymentLatency: 5 * time.Millisecond}),
		newBank(t, h.Share(t, first), engine.MustPreset(engine.LevelScoped), engine.Options{Hook: hook, PaymentLatency: 5 * time.Millisecond}),
	}
	var wg sync.WaitGroup
	results := make([]engine.Result, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := transferReq("c1", "one-key", `{"from":"alice","to":"bob","amount":10000}`)
			r.Lane = fmt.Sprintf("lane-%d", i)
			results[i] = servers[i%2].eng.Handle(context.Background(), r)
		}()
	}
	wg.Wait()
	executed := 0
	for _, r := range results {
		if r.Response.Status == 201 && !r.Replayed {
			executed++
		}
	}
	assert.Equal(t, 1, executed, "one attempt executes, whichever server it reached")
	assert.Len(t, snapshot(t, first).Transfers, 1)
	assert.Equal(t, int64(990_000), servers[1].balance(t, "alice"))
}

// testRecoveryPoints: with recovery points, a slow worker that recorded
// charge_made before its lease ran out is carried on from by the retry
// that takes its claim over, without a second call, even with no key
// downstream. A worker that dies between the call and charge_made leaves
// only charge_started: the retry calls again, and only the key passed
// downstream keeps that to one charge.
func testRecoveryPoints(t *testing.T, h Harness) {
	policy := func(down engine.DownstreamMode) engine.Policy {
		return engine.MustPreset(engine.LevelScoped).With(func(p *engine.Policy) {
			p.RecoveryPoints, p.DownstreamKey = engine.RecoveryPoints, down
		})
	}
	t.Run("slow worker after charge_made", func(t *testing.T) {
		b := leaseTakeOver(t, h, policy(engine.DownstreamOff))
		snap := snapshot(t, b.db)
		require.Len(t, snap.Charges, 1, "the retry carried on from the recorded charge")
		rp, err := b.db.LookupRecoveryPoint(context.Background(), "c1 POST /transfers", "k1")
		require.NoError(t, err)
		require.NotNil(t, rp.Point)
		assert.Equal(t, engine.RecoveryChargeMade, rp.Point.Point)
		assert.Equal(t, snap.Charges[0].ID, rp.Point.ChargeID)
	})
	for _, c := range []struct {
		name    string
		down    engine.DownstreamMode
		charges int
	}{
		{"crash before charge_made, no key downstream", engine.DownstreamOff, 2},
		{"crash before charge_made, key downstream", engine.DownstreamOn, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			crashed := false
			hook := func(ctx context.Context, s engine.Step) engine.Fault {
				if s.Lane == "first" && s.Phase == engine.PhaseExecute && s.Part == engine.PartRecord && !crashed {
					crashed = true
					return engine.FaultCrash
				}
				return engine.FaultNone
			}
			b := newBank(t, h.Open(t), policy(c.down), engine.Options{Hook: hook})
			first := transferReq("c1", "k1", body200k)
			first.Lane = "first"
			b.do(first)
			require.True(t, crashed)
			b.clock.Advance(engine.ScopedLease + time.Second)
			retry := b.do(transferReq("c1", "k1", body200k))
			assert.Equal(t, 201, retry.Response.Status, "%s", retry.Response.Body)
			snap := snapshot(t, b.db)
			assert.Len(t, snap.Transfers, 1)
			assert.Len(t, snap.Charges, c.charges)
		})
	}
}
