package scenario

// world.go is one playing of a scenario under the session: its engines,
// the goroutine each lane runs in, the step hook that parks them and the
// schedule that says who moves next.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"idemlab/engine"
	"idemlab/lab"
)

// world is one live playing of a scenario: the database, the clock, one
// engine per app server (all on that database and clock, each with its own
// memory) and one goroutine per lane that has started.
//
// The database and the engines come last (open). A session's first world
// opens them in the background (openLater): its first state needs none of
// them, and in the browser SQLite's first statements are most of the time
// between the engine's start and the learner's first picture.
type world struct {
	spec      Spec
	policy    engine.Policy
	openStore Opener // opens the world's database
	ctx       context.Context
	cancel    context.CancelFunc
	clock     *engine.ManualClock
	servers   int
	lanes     map[string]*laneRun
	order     []*laneRun
	wg        sync.WaitGroup
	schedPos  int
	schedule  []schedEntry
	latency   time.Duration
	sent      int

	evMu   sync.Mutex
	events []engine.Event
	// owners maps the engine's owner tokens to the lane that wrote them, so
	// the key table shows "A1" instead of a random token and a replayed
	// world shows the same rows.
	owners map[string]string
	start  map[string]int64
	// intents are the scenario's intents, read from the lanes' bodies once:
	// the checker is given them after every step.
	intents []lab.Intent

	// opened is closed once db and engs are set (or openErr says why not);
	// until then nothing reads them. hurry cuts openLater's pause short.
	opened    chan struct{}
	hurry     chan struct{}
	hurryOnce sync.Once
	openOnce  sync.Once
	openErr   error
	db        Store
	engs      []*engine.Engine // by server, from server 1
}

type schedEntry struct {
	lane   string
	target string // "" (one phase), "end", "phase" or "phase:part"
}

// laneRun is one lane's goroutine and what it has done.
type laneRun struct {
	spec     Lane
	started  bool
	finished bool
	next     engine.Step
	arrived  chan engine.Step
	release  chan engine.Fault
	done     chan struct{}
	result   engine.Result
	req      engine.Request
	sentAt   time.Time
	startSeq int  // the order lanes were sent in
	scripted bool // the scripted fault has struck
}

// newWorld returns a world with its database open.
func newWorld(spec Spec, policy engine.Policy, open Opener) (*world, error) {
	w := newUnopenedWorld(spec, policy, open)
	if err := w.open(); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

// newUnopenedWorld returns a world whose database is not open yet: call
// open or openLater.
func newUnopenedWorld(spec Spec, policy engine.Policy, open Opener) *world {
	ctx, cancel := context.WithCancel(context.Background())
	w := &world{spec: spec, policy: policy, openStore: open, ctx: ctx, cancel: cancel, servers: spec.ServerCount(),
		clock: engine.NewManualClock(Start), lanes: map[string]*laneRun{},
		owners: map[string]string{}, latency: time.Duration(spec.LatencyMS) * time.Millisecond, intents: intentsOf(spec),
		opened: make(chan struct{}), hurry: make(chan struct{})}
	for _, l := range spec.Lanes {
		lr := &laneRun{spec: l, arrived: make(chan engine.Step), release: make(chan engine.Fault),
			done: make(chan struct{}), next: engine.Step{Lane: l.ID, Phase: engine.PhaseReceive}}
		w.lanes[l.ID] = lr
		w.order = append(w.order, lr)
	}
	for _, e := range spec.Schedule {
		lane, target, _ := strings.Cut(e, "@")
		w.schedule = append(w.schedule, schedEntry{lane: lane, target: target})
	}
	return w
}

// openPause is how long openLater waits before it opens the database. In
// the browser the module has one thread: any pause at all lets the answer
// of the call that opened the session reach the page first; a little more
// leaves the page's first layout and paint the machine to themselves.
const openPause = 50 * time.Millisecond

// openLater opens the world's database in a goroutine after openPause; a
// move that comes sooner waits for it (ready) without the pause.
func (w *world) openLater() {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTimer(openPause)
		defer t.Stop()
		select {
		case <-t.C:
		case <-w.hurry:
		case <-w.ctx.Done():
		}
		w.open()
	}()
}

// open opens the database with the scenario's accounts and the engines on
// it, once; it returns why it could not.
func (w *world) open() error {
	w.openOnce.Do(func() {
		defer close(w.opened)
		if err := w.ctx.Err(); err != nil {
			w.openErr = err
			return
		}
		db, err := w.openStore.open()
		if err != nil {
			w.openErr = fmt.Errorf("scenario %q: %w", w.spec.ID, err)
			return
		}
		ids := make([]string, 0, len(w.spec.Accounts))
		for id := range w.spec.Accounts {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			if _, err := db.PutAccount(w.ctx, id, w.spec.Accounts[id]); err != nil {
				db.Close()
				w.openErr = fmt.Errorf("scenario %q: account %s: %w", w.spec.ID, id, err)
				return
			}
		}
		// The payment latency is played on the manual clock, not slept: the
		// learner is the one who decides when the network answers.
		for i := range w.servers {
			o := engine.Options{Clock: w.clock, Hook: w.hook, Trace: w.trace}
			if w.servers > 1 {
				o.Server = strconv.Itoa(i + 1)
			}
			w.engs = append(w.engs, engine.New(db, w.policy, o))
		}
		w.db = db
	})
	return w.openErr
}

// ready waits until the database is open, hurrying openLater along.
func (w *world) ready() error {
	w.hurryOnce.Do(func() { close(w.hurry) })
	<-w.opened
	return w.openErr
}

// isOpen reports whether the database is open, without waiting.
func (w *world) isOpen() bool {
	select {
	case <-w.opened:
		return w.openErr == nil
	default:
		return false
	}
}

// hook parks the calling lane's goroutine before a phase until the session
// releases it. When the session closes, the lane crashes out at once.
func (w *world) hook(ctx context.Context, s engine.Step) engine.Fault {
	lr := w.lanes[s.Lane]
	if lr == nil {
		return engine.FaultNone
	}
	select {
	case lr.arrived <- s:
	case <-ctx.Done():
		return engine.FaultCrash
	}
	select {
	case f := <-lr.release:
		return f
	case <-ctx.Done():
		return engine.FaultCrash
	}
}

func (w *world) trace(e engine.Event) {
	w.evMu.Lock()
	w.events = append(w.events, e)
	w.evMu.Unlock()
}

// move runs one phase of one lane and waits until the lane is parked again
// or has finished, so that the state read afterwards is settled.
func (w *world) move(lane string, fault engine.Fault) error {
	lr := w.lanes[lane]
	if lr == nil {
		return fmt.Errorf("scenario: no lane %q", lane)
	}
	if lr.finished {
		return fmt.Errorf("%w: %s", ErrFinished, lane)
	}
	if err := w.ready(); err != nil {
		return err
	}
	onSchedule := w.scheduled() == lane
	if !lr.started {
		w.startLane(lr)
		if err := w.wait(lr); err != nil {
			return err
		}
		if lr.finished {
			return nil
		}
	}
	if fault == engine.FaultNone && lr.spec.Fault != nil && !lr.scripted && matches(lr.next, lr.spec.Fault.Phase) {
		fault, lr.scripted = lr.spec.Fault.Kind, true
	}
	if lr.next.Phase == engine.PhaseExecute && w.latency > 0 && fault != engine.FaultCrash {
		w.clock.Advance(w.latency)
	}
	phase := lr.next.Phase
	select {
	case lr.release <- fault:
	case <-lr.done:
	}
	if err := w.wait(lr); err != nil {
		return err
	}
	if phase == engine.PhaseClaim || phase == engine.PhaseStoreResponse {
		// Only these phases write a key row with a new owner token.
		w.noteOwners(lane)
	}
	w.advanceSchedule(lane, onSchedule)
	return nil
}

func (w *world) startLane(lr *laneRun) {
	lr.started = true
	for _, a := range w.spec.Advance {
		if a.BeforeLane == lr.spec.ID {
			w.clock.Advance(a.By.D())
		}
	}
	if at := Start.Add(time.Duration(lr.spec.AfterMS) * time.Millisecond); w.clock.Now().Before(at) {
		w.clock.Set(at)
	}
	lr.sentAt = w.clock.Now()
	w.sent++
	lr.startSeq = w.sent
	l := lr.spec
	lr.req = engine.Request{Method: "POST", Path: engine.TransfersRoute, Customer: l.Customer,
		HasCustomer: l.Customer != "", Body: l.Body.Bytes, ContentType: "application/json",
		Lane: l.ID, Intent: l.IntentID()}
	if l.Key != "" {
		lr.req.Key = []string{lab.QuoteKey(l.Key)}
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer close(lr.done)
		defer func() {
			// A bug in the engine must not take the browser's module down
			// with it: the lane ends with a 500, and the page keeps working.
			if r := recover(); r != nil {
				lr.result = engine.Result{Delivered: true,
					Response: engine.CauseInternal.Problemf("the engine failed: %v", r).Response()}
			}
		}()
		lr.result = w.engs[l.ServerNo()-1].Handle(w.ctx, lr.req)
	}()
}

// wait blocks until the lane is parked at its next phase or has finished.
func (w *world) wait(lr *laneRun) error {
	select {
	case s := <-lr.arrived:
		lr.next = s
	case <-lr.done:
		lr.finished = true
		lr.next = engine.Step{Lane: lr.spec.ID}
	case <-w.ctx.Done():
		return errors.New("scenario: session is closed")
	}
	return nil
}

func matches(s engine.Step, target string) bool {
	phase, part, _ := strings.Cut(target, ":")
	return string(s.Phase) == phase && (part == "" || part == s.Part)
}

// noteOwners maps owner tokens that appeared during lane's move to lane.
func (w *world) noteOwners(lane string) {
	snap, err := w.db.Snapshot(w.ctx)
	if err != nil {
		return
	}
	all := [][]engine.KeyRecord{snap.Keys, snap.LooseKeys}
	for _, e := range w.engs {
		all = append(all, e.CachedKeys())
	}
	for _, rows := range all {
		for _, r := range rows {
			if _, ok := w.owners[r.Owner]; !ok && r.Owner != "" {
				w.owners[r.Owner] = lane
			}
		}
	}
}

// scheduled is the lane the default schedule moves next, skipping entries
// that are already satisfied; "" when the schedule is used up or left.
func (w *world) scheduled() string {
	if w.schedPos < 0 {
		return ""
	}
	for w.schedPos < len(w.schedule) {
		e := w.schedule[w.schedPos]
		lr := w.lanes[e.lane]
		if lr.finished || (e.target != "" && e.target != "end" && lr.started && matches(lr.next, e.target)) {
			w.schedPos++
			continue
		}
		return e.lane
	}
	return ""
}

func (w *world) advanceSchedule(lane string, onSchedule bool) {
	if !onSchedule {
		if w.schedPos < len(w.schedule) {
			w.schedPos = -1 // the learner took over; Run finishes lanes in order
		}
		return
	}
	if e := w.schedule[w.schedPos]; e.target == "" {
		w.schedPos++
	}
}

// next is the lane Run moves next: the schedule's, then the first
// unfinished lane in order; "" when every lane has finished. A lane
// waiting for a server's in-memory lock is passed over while another lane
// can move, since moving it only looks at the lock again.
func (w *world) next() string {
	if l := w.scheduled(); l != "" && !w.lanes[l].lockWaiting() {
		return l
	}
	first := ""
	for _, lr := range w.order {
		if lr.finished {
			continue
		}
		if !lr.lockWaiting() {
			return lr.spec.ID
		}
		if first == "" {
			first = lr.spec.ID
		}
	}
	return first
}

// lockWaiting reports whether the lane is parked waiting for a server's
// in-memory lock.
func (lr *laneRun) lockWaiting() bool {
	return lr.started && !lr.finished && lr.next.Phase == engine.PhaseClaim && lr.next.Part == engine.PartLockWait
}

func (w *world) done() bool {
	for _, lr := range w.order {
		if !lr.finished {
			return false
		}
	}
	return true
}

// close crashes every parked lane out, waits for their goroutines and
// closes the database.
func (w *world) close() {
	if w == nil {
		return
	}
	w.cancel()
	w.wg.Wait()
	if w.isOpen() {
		w.db.Close()
	}
}
