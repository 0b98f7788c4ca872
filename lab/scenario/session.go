package scenario

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"idemlab/engine"
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
	open   Opener
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

// New opens a session on a fresh database from open with the scenario's
// accounts; open is called again for each world Back and Reset replay on.
// The policy is usually spec.BasePolicy().
func New(spec Spec, policy engine.Policy, open Opener) (*Session, error) {
	if open == nil {
		return nil, errNoOpener
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if len(spec.Lanes) == 0 {
		return nil, fmt.Errorf("scenario %q is a day of traffic: play it with day(), not as a session of lanes", spec.ID)
	}
	// The first state needs no database: it opens while the page draws
	// that state.
	w := newUnopenedWorld(spec, policy, open)
	w.openLater()
	s := &Session{spec: spec, policy: policy, open: open, w: w, stop: make(chan struct{})}
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
	ch, spec, policy, open, stop := sp.ch, s.spec, s.policy, s.open, s.stop
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
		w, err := newWorld(spec, policy, open)
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
	return newWorld(s.spec, s.policy, s.open)
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
