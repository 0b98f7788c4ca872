package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
)

// servers is one database behind n app servers: n engines over the same
// store and clock, each with its own memory, as n processes would be.
type servers struct {
	*bank
	engines []*engine.Engine
}

func newServers(t *testing.T, n int, p engine.Policy, o engine.Options) *servers {
	t.Helper()
	b := newBank(t, p, o)
	s := &servers{bank: b}
	for i := range n {
		oi := o
		oi.Clock, oi.Server = b.clock, fmt.Sprint(i+1)
		s.engines = append(s.engines, engine.New(b.db, p, oi))
	}
	return s
}

// insertGate is a hook that holds the first attempt to reach its claim's
// INSERT until a second attempt reaches it too, or until another attempt
// is seen waiting for the in-memory lock. Whichever comes first, the
// interleaving is the one the lesson shows: two attempts between their
// SELECT and their INSERT, unless the lock kept the second one out.
type insertGate struct {
	mu      sync.Mutex
	arrived int
	open    chan struct{}
	once    sync.Once
}

func newInsertGate() *insertGate { return &insertGate{open: make(chan struct{})} }

func (g *insertGate) release() { g.once.Do(func() { close(g.open) }) }

func (g *insertGate) hook(ctx context.Context, s engine.Step) engine.Fault {
	if s.Phase != engine.PhaseClaim || s.Part != "insert" {
		return engine.FaultNone
	}
	g.mu.Lock()
	g.arrived++
	if g.arrived >= 2 {
		g.release()
	}
	g.mu.Unlock()
	select {
	case <-g.open:
	case <-ctx.Done():
	}
	return engine.FaultNone
}

func (g *insertGate) trace(e engine.Event) {
	if e.Outcome == engine.OutcomeWaiting {
		g.release()
	}
}

// sendTogether sends one retry of one transfer to each engine named by
// on (an index into engines), all at once, each in its own goroutine.
func (s *servers) sendTogether(t *testing.T, on []int, key string) []engine.Result {
	t.Helper()
	out := make([]engine.Result, len(on))
	var wg sync.WaitGroup
	for i, e := range on {
		wg.Go(func() {
			r := transferReq("c1", key, body200k)
			r.Lane, r.Intent = fmt.Sprintf("A%d", i+1), "pay-bob"
			out[i] = s.engines[e].Handle(context.Background(), r)
		})
	}
	wg.Wait()
	return out
}

func statuses(rs []engine.Result) []int {
	var out []int
	for _, r := range rs {
		out = append(out, r.Response.Status)
	}
	return out
}

// The in-memory lock serialises the retries of one key on one server, so
// check-then-insert pays once there; across two servers each takes its own
// lock and both pay. Two goroutines per case race for real; the gate only
// makes sure that, without a lock between them, both have done their
// SELECT before either INSERTs.
func TestMemoryLockHoldsOnOneServerOnly(t *testing.T) {
	p := engine.MustPreset(engine.LevelUnique).With(func(p *engine.Policy) {
		p.Claim, p.Lock = engine.ClaimCheckThenInsert, engine.LockMemory
	})
	cases := []struct {
		name      string
		on        []int
		transfers int
	}{
		{"one server", []int{0, 0}, 1},
		{"two servers", []int{0, 1}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newInsertGate()
			var mu sync.Mutex
			var events []engine.Event
			s := newServers(t, 2, p, engine.Options{Hook: g.hook, Trace: func(e engine.Event) {
				g.trace(e)
				mu.Lock()
				events = append(events, e)
				mu.Unlock()
			}})
			rs := s.sendTogether(t, c.on, "k1")
			assert.Len(t, s.snapshot(t).Transfers, c.transfers, "statuses %v", statuses(rs))
			assert.Equal(t, 1_000_000-int64(c.transfers)*200_000, s.balance(t, "alice"))
			waited := 0
			servers := map[string]bool{}
			for _, e := range events {
				servers[e.Server] = true
				if e.Outcome == engine.OutcomeWaiting {
					waited++
					assert.Contains(t, e.Note, "in-memory lock")
				}
			}
			if c.transfers == 1 {
				assert.Equal(t, 1, waited, "the second attempt waited for the first's lock")
			} else {
				assert.Zero(t, waited, "a lock in one server's memory never makes the other server wait")
				assert.Equal(t, map[string]bool{"1": true, "2": true}, servers, "each event names its server")
			}
		})
	}
}

// Without the lock, the same two attempts on one server pay twice: the
// lock, not the gate, is what kept the one-server case safe.
func TestCheckThenInsertWithoutLockPaysTwiceOnOneServer(t *testing.T) {
	p := engine.MustPreset(engine.LevelUnique).With(func(p *engine.Policy) { p.Claim = engine.ClaimCheckThenInsert })
	g := newInsertGate()
	s := newServers(t, 1, p, engine.Options{Hook: g.hook, Trace: g.trace})
	s.sendTogether(t, []int{0, 0}, "k1")
	assert.Len(t, s.snapshot(t).Transfers, 2)
}

// A storm of simultaneous retries spread over two servers: the in-memory
// lock lets through at most one per server, the database's constraint
// exactly one in all.
func TestStormAcrossTwoServers(t *testing.T) {
	const n = 16
	on := make([]int, n)
	for i := range on {
		on[i] = i % 2
	}
	unique := engine.MustPreset(engine.LevelUnique).With(func(p *engine.Policy) {
		p.Claim, p.Lock = engine.ClaimCheckThenInsert, engine.LockMemory
	})
	cases := []struct {
		name     string
		p        engine.Policy
		min, max int
	}{
		{"memory lock", unique, 1, 2},
		{"scoped", engine.MustPreset(engine.LevelScoped), 1, 1},
		{"scoped with a memory lock too", engine.MustPreset(engine.LevelScoped).With(func(p *engine.Policy) { p.Lock = engine.LockMemory }), 1, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newServers(t, 2, c.p, engine.Options{})
			rs := s.sendTogether(t, on, "k1")
			got := len(s.snapshot(t).Transfers)
			assert.GreaterOrEqual(t, got, c.min)
			assert.LessOrEqual(t, got, c.max, "statuses %v", statuses(rs))
			for _, r := range rs {
				assert.Contains(t, []int{200, 201, 409}, r.Response.Status, "%s", r.Response.Body)
			}
		})
	}
}

// The database's constraint is the verdict across servers: two attempts
// that reach their claim at the same moment on two servers pay once.
func TestConstraintHoldsAcrossServers(t *testing.T) {
	arrived := make(chan struct{}, 2)
	both := make(chan struct{})
	var once sync.Once
	hook := func(ctx context.Context, s engine.Step) engine.Fault {
		if s.Phase == engine.PhaseClaim {
			arrived <- struct{}{}
			if len(arrived) == 2 {
				once.Do(func() { close(both) })
			}
			select {
			case <-both:
			case <-ctx.Done():
			}
		}
		return engine.FaultNone
	}
	s := newServers(t, 2, engine.MustPreset(engine.LevelScoped), engine.Options{Hook: hook})
	rs := s.sendTogether(t, []int{0, 1}, "k1")
	assert.Len(t, s.snapshot(t).Transfers, 1)
	paid := 0
	for _, r := range rs {
		assert.Contains(t, []int{201, 409}, r.Response.Status)
		if r.Response.Status == 201 && !r.Replayed {
			paid++
		}
	}
	assert.Equal(t, 1, paid, "the other attempt got 409 or the first one's stored answer")
}

// A key cache in each server's memory: a retry that reaches the other
// server is a cache miss there and pays again; on the first server it is
// a hit and is answered from the cache.
func TestServerCache(t *testing.T) {
	p := engine.MustPreset(engine.LevelScoped).With(func(p *engine.Policy) { p.Claim = engine.ClaimServerCache })
	var events []engine.Event
	s := newServers(t, 2, p, engine.Options{Trace: func(e engine.Event) { events = append(events, e) }})
	ctx := context.Background()
	first := s.engines[0].Handle(ctx, transferReq("c1", "k1", body200k))
	require.Equal(t, 201, first.Response.Status)
	again := s.engines[0].Handle(ctx, transferReq("c1", "k1", body200k))
	assert.Equal(t, 201, again.Response.Status)
	assert.True(t, again.Replayed, "a hit on the same server is replayed from its cache")
	assert.Equal(t, string(first.Response.Body), string(again.Response.Body))
	other := s.engines[1].Handle(ctx, transferReq("c1", "k1", body200k))
	assert.Equal(t, 201, other.Response.Status)
	assert.False(t, other.Replayed, "server 2 never saw the key")
	assert.Len(t, s.snapshot(t).Transfers, 2, "the retry on server 2 paid again")
	assert.Empty(t, s.snapshot(t).Keys, "the cache writes no key table")
	assert.Len(t, s.engines[0].CachedKeys(), 1)
	assert.Len(t, s.engines[1].CachedKeys(), 1)

	var notes []string
	for _, e := range events {
		if e.Phase == engine.PhaseClaim {
			notes = append(notes, e.Server+": "+e.Note)
		}
	}
	require.Len(t, notes, 3)
	assert.Contains(t, notes[0], "cache miss on server 1")
	assert.Contains(t, notes[1], "cache hit on server 1")
	assert.Contains(t, notes[2], "cache miss on server 2")
}

// On one server the cache is checked and set under one mutex: a storm of
// simultaneous retries pays once.
func TestServerCacheHoldsOnOneServer(t *testing.T) {
	p := engine.MustPreset(engine.LevelScoped).With(func(p *engine.Policy) { p.Claim = engine.ClaimServerCache })
	s := newServers(t, 1, p, engine.Options{PaymentLatency: 0})
	rs := s.sendTogether(t, make([]int, 12), "k1")
	assert.Len(t, s.snapshot(t).Transfers, 1, "statuses %v", statuses(rs))
}

// An attempt waiting for the in-memory lock gives up when its context
// ends, charges nothing and leaves the lock to its holder.
func TestMemoryLockWaitEndsWithContext(t *testing.T) {
	p := engine.MustPreset(engine.LevelScoped).With(func(p *engine.Policy) { p.Lock = engine.LockMemory })
	holding, letGo, waiting := make(chan struct{}), make(chan struct{}), make(chan struct{})
	hook := func(ctx context.Context, s engine.Step) engine.Fault {
		if s.Lane == "holder" && s.Phase == engine.PhaseExecute {
			close(holding)
			<-letGo
		}
		return engine.FaultNone
	}
	var once sync.Once
	trace := func(e engine.Event) {
		if e.Outcome == engine.OutcomeWaiting {
			once.Do(func() { close(waiting) })
		}
	}
	b := newBank(t, p, engine.Options{})
	eng := engine.New(b.db, p, engine.Options{Clock: b.clock, Trace: trace, Hook: hook})
	held := make(chan engine.Result, 1)
	go func() {
		r := transferReq("c1", "k1", body200k)
		r.Lane = "holder"
		held <- eng.Handle(context.Background(), r)
	}()
	<-holding
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan engine.Result, 1)
	go func() { gaveUp <- eng.Handle(ctx, transferReq("c1", "k1", body200k)) }()
	<-waiting
	cancel()
	r := <-gaveUp // answered while the holder is still paying
	assert.Equal(t, 500, r.Response.Status, "%s", r.Response.Body)
	assert.Empty(t, b.snapshot(t).Transfers)
	close(letGo)
	assert.Equal(t, 201, (<-held).Response.Status)
	assert.Len(t, b.snapshot(t).Transfers, 1)
}
