package lab

import (
	"context"
	"fmt"
	"sync"
	"time"

	"idemlab/engine"
)

// DayStart is the moment a replayed day begins on the engine's clock.
var DayStart = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// HoldLimit is the longest an attempt is held for the attempts that
// overlap it. It only matters when an overlapping attempt is itself stuck;
// then the held one goes on rather than wedge the replay.
const HoldLimit = 10 * time.Second

// dayCtxKey carries an attempt's script to dayHook through the request's
// context.
type dayCtxKey struct{}

// attemptScript is what dayHook does to one attempt. Only the attempt's
// own goroutine touches it.
type attemptScript struct {
	loss  string
	fired bool
	hold  *hold
}

// hold keeps an attempt at the point where it has committed to working
// (its claim is in, or it is about to pay) until the attempts that overlap
// it have run.
type hold struct {
	held    chan struct{}
	release chan struct{}
	once    sync.Once
}

func newHold() *hold { return &hold{held: make(chan struct{}), release: make(chan struct{})} }

func (h *hold) reached() { h.once.Do(func() { close(h.held) }) }

// lossFault says where each cause of loss strikes and how: a gateway that
// times out gives up while the payment call runs; a phone in a basement
// drops out as the work begins; a load balancer cuts the finished answer.
func lossFault(loss string) (engine.Phase, engine.Fault) {
	switch loss {
	case LossGatewayTimeout:
		return engine.PhaseCommit, engine.FaultClientTimeout
	case LossBasement:
		return engine.PhaseExecute, engine.FaultClientTimeout
	case LossLBCut:
		return engine.PhaseRespond, engine.FaultLoseResponse
	}
	return "", engine.FaultNone
}

// dayHook is the engine hook of a day's replay: it loses the responses the
// day says are lost and holds attempts while the retries that overlap them
// arrive. It acts on requests whose context ReplayDay prepared. It is safe
// for concurrent use.
func dayHook(ctx context.Context, s engine.Step) engine.Fault {
	sc, _ := ctx.Value(dayCtxKey{}).(*attemptScript)
	if sc == nil {
		return engine.FaultNone
	}
	if h := sc.hold; h != nil && (s.Phase == engine.PhaseExecute || s.Phase == engine.PhaseClaim && s.Part == "insert") {
		select {
		case <-h.held:
			// Held once already (check-then-insert reaches both points).
		default:
			h.reached()
			t := time.NewTimer(HoldLimit)
			select {
			case <-h.release:
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
	}
	if sc.fired {
		return engine.FaultNone
	}
	phase, fault := lossFault(sc.loss)
	// A replayed answer never reaches execute or commit; it is lost on its
	// way back instead.
	if fault != engine.FaultNone && (s.Phase == phase || s.Phase == engine.PhaseRespond) {
		sc.fired = true
		return fault
	}
	return engine.FaultNone
}

// DayStore is what a day is replayed on: the engine's store, and a read of
// the ledger, the balances and the processor's charges at the end, for the
// checker. *sqlite.DB is one.
type DayStore interface {
	engine.Store
	Ledger(ctx context.Context) ([]engine.Transfer, []engine.Account, error)
	Charges(ctx context.Context) ([]engine.Charge, error)
}

// ReplayOptions tune ReplayDay. The zero value replays with no payment
// latency and reports no progress.
type ReplayOptions struct {
	// PaymentLatency is how long each payment-network call takes.
	PaymentLatency time.Duration
	// Progress, when not nil, is called after each group of attempts with
	// the attempts done so far.
	Progress func(done, total int)
}

// ReplayDay runs a day in-process on st at policy and judges it. It builds
// its own engine: a manual clock it moves through the day (from DayStart)
// so that retention runs out as it would, and the hook that loses the
// responses the day says are lost. The day's accounts are set first; the
// ledger is read at the end for the checker. Attempts run in the day's
// order, one group at a time; an attempt that others overlap runs in its
// own goroutine and is held after its claim, or before it pays, while the
// overlapping attempts run concurrently, so a retry really does arrive
// while the first is in flight. It stops early with ctx's error.
func ReplayDay(ctx context.Context, d Day, st DayStore, policy engine.Policy, opts ReplayOptions) (Tally, error) {
	start := time.Now()
	clock := engine.NewManualClock(DayStart)
	eng := engine.New(st, policy, engine.Options{Clock: clock, Hook: dayHook, PaymentLatency: opts.PaymentLatency})
	progress := opts.Progress
	for _, a := range d.Accounts {
		if _, err := st.PutAccount(ctx, a.ID, a.Balance); err != nil {
			return Tally{}, fmt.Errorf("replay day: open account %s: %w", a.ID, err)
		}
	}
	startBal := d.StartBalances()
	attempts := make([]Attempt, len(d.Attempts))
	r := &inProcess{d: d, eng: eng, out: attempts}
	var err error
	done := 0
	for _, g := range d.Groups() {
		if err = ctx.Err(); err != nil {
			break
		}
		clock.Set(DayStart.Add(time.Duration(d.Attempts[g.Root].AtMS) * time.Millisecond))
		r.runTree(ctx, g.Root, g.Children)
		done += g.Size
		if progress != nil {
			progress(done, len(d.Attempts))
		}
	}
	if err == nil {
		err = r.err()
	}
	if err != nil {
		return Tally{}, fmt.Errorf("replay day: %w", err)
	}
	transfers, accounts, err := st.Ledger(ctx)
	if err != nil {
		return Tally{}, fmt.Errorf("replay day: read ledger: %w", err)
	}
	charges, err := st.Charges(ctx)
	if err != nil {
		return Tally{}, fmt.Errorf("replay day: read charges: %w", err)
	}
	h := History{Intents: d.HistoryIntents(), Attempts: attempts, Ledger: LedgerOf(transfers), Charges: ChargesOf(charges),
		StartBalances: startBal, EndBalances: BalancesOf(accounts),
		Retention: eng.Policy().Retention.D(), RetryHorizon: d.RetryHorizon(), Keyless: !eng.Policy().Keyed()}
	t := NewTally(d, h, perIntentFromLedger(h))
	t.Level, t.Elapsed = eng.Policy().Level, time.Since(start)
	t.RetentionKnown, t.ChargesKnown = true, true
	return t, nil
}

// DayGroup is an attempt that overlaps no other, with the attempts that
// overlap it (and those that overlap them): the unit a replay runs at once.
// Indexes are into Day.Attempts.
type DayGroup struct {
	Root int
	// Children maps an attempt to the attempts that overlap it.
	Children map[int][]int
	// Size counts the group's attempts.
	Size int
}

// Groups splits the day into groups, in the order of their first attempts.
func (d Day) Groups() []DayGroup {
	byLane := make(map[string]int, len(d.Attempts))
	for i, a := range d.Attempts {
		byLane[a.Lane] = i
	}
	kids := map[int][]int{}
	for i, a := range d.Attempts {
		if a.Overlaps == "" {
			continue
		}
		if j, ok := byLane[a.Overlaps]; ok && j < i {
			kids[j] = append(kids[j], i)
		}
	}
	var out []DayGroup
	for i, a := range d.Attempts {
		if j, ok := byLane[a.Overlaps]; a.Overlaps != "" && ok && j < i {
			continue // runs with the attempt it overlaps
		}
		g := DayGroup{Root: i, Size: 1}
		var walk func(int)
		walk = func(n int) {
			for _, c := range kids[n] {
				if g.Children == nil {
					g.Children = map[int][]int{}
				}
				g.Children[n] = append(g.Children[n], c)
				g.Size++
				walk(c)
			}
		}
		walk(i)
		out = append(out, g)
	}
	return out
}

// inProcess replays attempts against an engine in this process.
type inProcess struct {
	d   Day
	eng *engine.Engine
	out []Attempt
	mu  sync.Mutex
	e   error
}

func (r *inProcess) fail(err error) {
	r.mu.Lock()
	if r.e == nil {
		r.e = err
	}
	r.mu.Unlock()
}

func (r *inProcess) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.e
}

// runTree sends attempt i; when others overlap it, it holds i in flight,
// runs them concurrently, then lets i finish.
func (r *inProcess) runTree(ctx context.Context, i int, children map[int][]int) {
	kids := children[i]
	if len(kids) == 0 {
		r.send(ctx, i, nil)
		return
	}
	h := newHold()
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.send(ctx, i, h)
	}()
	select {
	case <-h.held:
	case <-done:
	}
	var wg sync.WaitGroup
	for _, k := range kids {
		wg.Go(func() { r.runTree(ctx, k, children) })
	}
	wg.Wait()
	close(h.release)
	<-done
}

func (r *inProcess) send(ctx context.Context, i int, h *hold) {
	a := r.d.Attempts[i]
	sc := &attemptScript{loss: a.Loss, hold: h}
	req := DayRequest(a)
	res := r.eng.Handle(context.WithValue(ctx, dayCtxKey{}, sc), req)
	if h != nil {
		h.reached() // it never reached a hold point: nothing to wait for
	}
	r.out[i] = AttemptOf(req, res, DayStart.Add(time.Duration(a.AtMS)*time.Millisecond))
}

// DayRequest is the engine request of a day's attempt.
func DayRequest(a DayAttempt) engine.Request {
	return engine.Request{Method: "POST", Path: engine.TransfersRoute, Customer: a.Customer, HasCustomer: true,
		Key: []string{QuoteKey(a.Key)}, Body: []byte(a.Body), ContentType: "application/json",
		Lane: a.Lane, Intent: a.Intent}
}

// QuoteKey writes a key as the Idempotency-Key header carries it: an RFC
// 8941 string, in double quotes with '"' and '\' escaped.
func QuoteKey(k string) string {
	b := make([]byte, 0, len(k)+2)
	b = append(b, '"')
	for i := 0; i < len(k); i++ {
		if k[i] == '"' || k[i] == '\\' {
			b = append(b, '\\')
		}
		b = append(b, k[i])
	}
	return string(append(b, '"'))
}

// perIntentFromLedger counts each intent's transfers from the ledger as the
// checker does: a transfer belongs to the intent that first used its
// (customer, key).
func perIntentFromLedger(h History) map[string]int {
	first := map[keyID]string{}
	for _, a := range h.Attempts {
		k := keyID{a.Customer, a.Key}
		if _, ok := first[k]; !ok && a.Key != "" {
			first[k] = a.Intent
		}
	}
	out := map[string]int{}
	for _, t := range h.Ledger {
		if in, ok := first[keyID{t.Customer, t.Key}]; ok {
			out[in]++
		}
	}
	return out
}
