package scenario

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
	"idemlab/store"
)

// Start is the moment every scenario begins: 09:00 in Seoul on the day the
// lab first ran. A fixed start keeps every timestamp, and so every replayed
// state, identical.
var Start = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// ErrFinished is returned when a lane that has finished is asked to move.
var ErrFinished = errors.New("scenario: lane has finished")

// Session plays one scenario under one policy. The learner moves one lane
// through one phase at a time; everything else stands still. A Session is
// safe for concurrent use (calls are serialised) and must be closed.
type Session struct {
	mu     sync.Mutex
	spec   Spec
	policy engine.Policy
	moves  []move
	w      *world
	closed bool
	// spare is a fresh world being built in the background, so that Back
	// and Reset need not wait for a new database; nil when none is coming.
	spare   *spareWorld
	spareWG sync.WaitGroup
	stop    chan struct{} // closed by Close: a spare not yet started is not built
}

// spareWorld is a world on its way: ch delivers it (nil if it could not be
// built); closing hurry makes the builder skip its pause.
type spareWorld struct {
	ch    chan *world
	hurry chan struct{}
}

// sparePause is how long the background build of a spare world waits
// before it starts. In the browser the module has one thread: the pause
// lets the answer of the call that asked for the spare reach the page
// first, and a learner who reads before pressing Back never waits for a
// database.
const sparePause = 300 * time.Millisecond

// move is one recorded move: a lane through one phase, with the fault the
// learner injected there (FaultNone for a plain step). schedPos is where
// the default schedule stood after it (-1: the learner left the schedule).
type move struct {
	lane     string
	fault    engine.Fault
	schedPos int
}

// New opens a session on a fresh in-memory database with the scenario's
// accounts. The policy is usually spec.BasePolicy().
func New(spec Spec, policy engine.Policy) (*Session, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if len(spec.Lanes) == 0 {
		return nil, fmt.Errorf("scenario %q is a day of traffic: play it with day(), not as a session of lanes", spec.ID)
	}
	w, err := newWorld(spec, policy)
	if err != nil {
		return nil, err
	}
	s := &Session{spec: spec, policy: policy, w: w, stop: make(chan struct{})}
	s.prepareSpare()
	return s, nil
}

// prepareSpare starts building a fresh world for the current policy in the
// background. Callers hold s.mu.
func (s *Session) prepareSpare() {
	if s.spare != nil {
		return
	}
	sp := &spareWorld{ch: make(chan *world, 1), hurry: make(chan struct{})}
	s.spare = sp
	ch, spec, policy, stop := sp.ch, s.spec, s.policy, s.stop
	s.spareWG.Add(1)
	go func() {
		defer s.spareWG.Done()
		t := time.NewTimer(sparePause)
		defer t.Stop()
		select {
		case <-t.C:
		case <-sp.hurry:
		case <-stop:
			ch <- nil
			return
		}
		w, err := newWorld(spec, policy)
		if err != nil {
			w = nil // the caller builds its own and reports the error
		}
		ch <- w
	}()
}

// freshWorld returns a world nobody has moved in: the spare when it was
// built for the current policy, else a new one. Callers hold s.mu.
func (s *Session) freshWorld() (*world, error) {
	if sp := s.spare; sp != nil {
		s.spare = nil
		close(sp.hurry) // needed now: building it costs no more than a new one
		if w := <-sp.ch; w != nil {
			if w.policy == s.policy {
				return w, nil
			}
			w.close()
		}
	}
	return newWorld(s.spec, s.policy)
}

// dropSpare closes the spare world, waiting for it if it is being built.
// Callers hold s.mu.
func (s *Session) dropSpare() {
	if sp := s.spare; sp != nil {
		s.spare = nil
		if w := <-sp.ch; w != nil {
			w.close()
		}
	}
	s.spareWG.Wait()
}

// Spec returns the scenario being played.
func (s *Session) Spec() Spec { return s.spec }

// Policy returns the policy the session plays under.
func (s *Session) Policy() engine.Policy {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.policy
}

// Step moves one lane through its next phase, and only that lane.
func (s *Session) Step(lane string) (State, error) {
	return s.do(lane, engine.FaultNone)
}

// Inject moves a lane through its next phase with a fault: a crash stops it
// before the phase runs; a lost response or a client timeout lets the
// server carry on while the client hears nothing.
func (s *Session) Inject(lane string, fault engine.Fault) (State, error) {
	if fault == engine.FaultNone {
		return State{}, errors.New("scenario: inject needs a fault (crash, lose-response, client-timeout)")
	}
	return s.do(lane, fault)
}

func (s *Session) do(lane string, fault engine.Fault) (State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return State{}, err
	}
	if err := s.w.move(lane, fault); err != nil {
		return s.w.state(len(s.moves)), err
	}
	s.moves = append(s.moves, move{lane: lane, fault: fault, schedPos: s.w.schedPos})
	return s.w.state(len(s.moves)), nil
}

// Run finishes the scenario: the rest of the default schedule, then every
// unfinished lane in order. Each phase is recorded as a move, so Back
// steps back through them one by one.
func (s *Session) Run() (State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return State{}, err
	}
	for {
		lane := s.w.next()
		if lane == "" {
			break
		}
		if err := s.w.move(lane, engine.FaultNone); err != nil {
			return s.w.state(len(s.moves)), err
		}
		s.moves = append(s.moves, move{lane: lane, schedPos: s.w.schedPos})
	}
	return s.w.state(len(s.moves)), nil
}

// Back undoes the last move by playing every move but the last on a fresh
// database. With no moves made it returns the state unchanged.
func (s *Session) Back() (State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return State{}, err
	}
	if len(s.moves) == 0 {
		return s.w.state(0), nil
	}
	if err := s.replay(s.moves[:len(s.moves)-1]); err != nil {
		return State{}, err
	}
	return s.w.state(len(s.moves)), nil
}

// replay rebuilds the world from scratch and plays moves on it.
func (s *Session) replay(moves []move) error {
	s.w.close()
	s.w = nil
	s.moves = nil
	w, err := s.freshWorld()
	if err != nil {
		return err
	}
	s.w = w
	defer s.prepareSpare()
	for _, m := range moves {
		if err := w.move(m.lane, m.fault); err != nil {
			return fmt.Errorf("scenario: replay: %w", err)
		}
		w.schedPos = m.schedPos
		s.moves = append(s.moves, m)
	}
	return nil
}

// Reset starts the scenario over.
func (s *Session) Reset() (State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return State{}, err
	}
	if err := s.replay(nil); err != nil {
		return State{}, err
	}
	return s.w.state(0), nil
}

// SetPolicy switches the session to another policy (the sandbox's knobs)
// and starts over.
func (s *Session) SetPolicy(p engine.Policy) (State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return State{}, err
	}
	s.policy = p
	if err := s.replay(nil); err != nil {
		return State{}, err
	}
	return s.w.state(0), nil
}

// State returns what the page draws now.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return State{Scenario: s.spec.ID}
	}
	return s.w.state(len(s.moves))
}

// Close stops every lane's goroutine and closes the database, and the
// spare one being prepared. It is safe to call more than once.
func (s *Session) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		close(s.stop)
	}
	s.closed = true
	if s.w != nil {
		s.w.close()
		s.w = nil
	}
	s.dropSpare()
}

func (s *Session) usable() error {
	if s.closed || s.w == nil {
		return errors.New("scenario: session is closed")
	}
	return nil
}

// world is one live playing of a scenario: the database, the clock, one
// engine per app server (all on that database and clock, each with its own
// memory) and one goroutine per lane that has started.
type world struct {
	spec     Spec
	policy   engine.Policy
	ctx      context.Context
	cancel   context.CancelFunc
	db       *store.DB
	clock    *engine.ManualClock
	engs     []*engine.Engine // by server, from server 1
	lanes    map[string]*laneRun
	order    []*laneRun
	wg       sync.WaitGroup
	schedPos int
	schedule []schedEntry
	latency  time.Duration
	sent     int

	evMu   sync.Mutex
	events []engine.Event
	// owners maps the engine's owner tokens to the lane that wrote them, so
	// the key table shows "A1" instead of a random token and a replayed
	// world shows the same rows.
	owners map[string]string
	start  map[string]int64
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

func newWorld(spec Spec, policy engine.Policy) (*world, error) {
	db, err := store.OpenMemory()
	if err != nil {
		return nil, fmt.Errorf("scenario %q: %w", spec.ID, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &world{spec: spec, policy: policy, ctx: ctx, cancel: cancel, db: db,
		clock: engine.NewManualClock(Start), lanes: map[string]*laneRun{},
		owners: map[string]string{}, latency: time.Duration(spec.LatencyMS) * time.Millisecond}
	ids := make([]string, 0, len(spec.Accounts))
	for id := range spec.Accounts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if _, err := db.PutAccount(ctx, id, spec.Accounts[id]); err != nil {
			w.close()
			return nil, fmt.Errorf("scenario %q: account %s: %w", spec.ID, id, err)
		}
	}
	// The payment latency is played on the manual clock, not slept: the
	// learner is the one who decides when the network answers.
	for i := range spec.ServerCount() {
		o := engine.Options{Clock: w.clock, Hook: w.hook, Trace: w.trace}
		if spec.ServerCount() > 1 {
			o.Server = strconv.Itoa(i + 1)
		}
		w.engs = append(w.engs, engine.New(db, policy, o))
	}
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
	return w, nil
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
	w.db.Close()
}
