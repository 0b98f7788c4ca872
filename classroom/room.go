package classroom

import (
	"bytes"
	"context"
	"net/netip"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"idemlab/engine"
	"idemlab/internal/peer"
)

// Room is one class: its connections, students, vote, and the current
// ledger that storms and students' transfers run against.
//
// One goroutine owns the room's state (loop): the roster, the vote, the
// level, the lock and the kicked, the ledger and its run number, the
// record of what was broadcast, and what is due to be saved. Everything
// else asks it: a connection's reader, the HTTP handler that attaches a
// socket, a storm that ends and a student's transfer that returns each
// hand it a command (do) and wait for it to run. The room's goroutine is
// also the only one that broadcasts, so every screen receives the room's
// messages in one order, and a screen that attaches is greeted, replayed
// the record and registered in one command: nothing comes between.
//
// The one exception is the trace events, which the engine's goroutines
// emit on every phase of every request: they are queued under a short lock
// of their own (pending) and the room's goroutine takes them at each tick.
//
// Room is safe for concurrent use; its goroutines (its own, storms,
// students' transfers) stop when the room closes.
type Room struct {
	cl     *Classroom
	code   string
	ctx    context.Context
	cancel context.CancelFunc
	// cmds carries commands to the room's goroutine; stopped is closed
	// when it has returned, after which no command runs.
	cmds    chan func()
	stopped chan struct{}
	// sockets are the addresses whose sockets were refused since the
	// room's last tick (noteRefusedSocket), counted by the tick: any
	// goroutine adds one without waiting for the room.
	socketsMu sync.Mutex
	sockets   map[netip.Addr]peer.Peer
	// loopID is the room's goroutine's id, for do to know its own caller.
	loopID    atomic.Uint64
	closeOnce sync.Once
	// wg counts the goroutines the room's goroutine spawned (spawn).
	wg sync.WaitGroup

	// Owned by the room's goroutine.
	conns     map[*conn]struct{}
	reserved  int
	students  map[string]*student // by the hash of the student's secret
	byID      map[string]*student
	level     string
	run       *run
	runSeq    int
	storming  bool
	votes     map[string]string // student id → choice
	vote      vote
	dirtyView bool // the state changed since the last tick
	dirtyRun  bool // a student's transfer finished since the last report
	closed    bool
	// restoredRun is the ledger whose record a restarted server brought
	// back (no ledger is open yet); interrupted says its storm was cut off
	// by the restart.
	restoredRun int
	interrupted bool
	// lastState is when the last state message went out (StatesPerSecond).
	lastState time.Time
	// locked closes the room to new students; classSize is how many
	// students it admits; kicked counts the students the instructor removed.
	locked    bool
	classSize int
	kicked    int
	// refused are the clients turned away lately, by their secret's hash
	// (or "addr:" and the address), for the presenter's count (limits.go).
	refused map[string]refusedClient
	// swept is when the room last closed sockets that never joined.
	swept time.Time
	// rosterSent is the roster the projectors were last sent.
	rosterSent []rosterEntry
	// emptySince is when the last connection left; zero while any is open.
	emptySince time.Time
	// rec is the current ledger's record: what a screen that connects is
	// replayed. batch numbers the events messages.
	rec   *record
	batch int64
	// saveDoc and saveRecord ask the next tick to write the room, and its
	// record, to the rooms file; saveRecordNow, the record without waiting
	// (a storm announced, a verdict). savedRecord is when it last was.
	saveDoc, saveRecord, saveRecordNow bool
	savedRecord                        time.Time

	// dropped counts connections cut off for being too slow. A connection
	// is dropped from inside a broadcast, on the room's goroutine, so the
	// count cannot be a command.
	dropped atomic.Int64

	// known are the addresses that reached the room with its right code:
	// they are never held off by their wrong guesses at other codes. It
	// has its own lock: the HTTP handlers ask it before the room's
	// goroutine is involved.
	kmu   sync.Mutex
	known map[netip.Addr]struct{}

	// pending holds trace events until the next tick sends them as one
	// batch. It has its own lock because the engine's goroutines append to
	// it on every phase.
	pmu     sync.Mutex
	pending []wireEvent

	// reportSeq numbers the reports as their reading begins (sendReport,
	// off the room's goroutine); reportSent, owned by the room's goroutine,
	// is the number of the last one broadcast.
	reportSeq  atomic.Int64
	reportSent int64
}

// goroutineID is the id of the calling goroutine, read from the first
// line of its stack ("goroutine 42 [running]:"). Go keeps the id out of
// its API on purpose; do needs it only to tell its own loop from everyone
// else. It answers 0, which no goroutine has, if the line ever reads
// otherwise; do then takes the channel, as before.
func goroutineID() uint64 {
	var buf [32]byte
	n := runtime.Stack(buf[:], false)
	b := bytes.TrimPrefix(buf[:n], []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}

// newRoom opens a room; fill, when not nil, sets what a saved room had
// before the room's goroutine starts.
func newRoom(c *Classroom, code string, fill func(*Room)) *Room {
	ctx, cancel := context.WithCancel(c.ctx)
	r := &Room{cl: c, code: code, ctx: ctx, cancel: cancel, cmds: make(chan func()), stopped: make(chan struct{}),
		conns: map[*conn]struct{}{}, emptySince: time.Now(),
		students: map[string]*student{}, byID: map[string]*student{}, level: engine.LevelNaive,
		votes: map[string]string{}, classSize: c.cfg.Limits.ClassSize, refused: map[string]refusedClient{},
		known: map[netip.Addr]struct{}{}}
	if fill != nil {
		fill(r)
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		r.loop()
	}()
	return r
}

// loop is the room's goroutine: it runs the commands it is handed, one at
// a time, and at every tick sends what accumulated.
func (r *Room) loop() {
	r.loopID.Store(goroutineID())
	defer close(r.stopped)
	t := time.NewTicker(r.cl.cfg.Tick)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case f := <-r.cmds:
			r.command(f)
		case <-t.C:
			r.command(r.tick)
		}
	}
}

// command runs f on the room's goroutine. A command that panics is logged
// and the room goes on: one bad message must not take down every room of
// the server, as a panic on this goroutine otherwise would (net/http
// recovers its handlers' panics, not those of goroutines they hand work to).
func (r *Room) command(f func()) {
	defer func() {
		if p := recover(); p != nil {
			r.cl.cfg.Logger.Error("classroom: a room's command panicked; the room goes on", "room", r.code, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	f()
}

// do runs f on the room's goroutine and returns once it has run. It
// reports false, without running f, when the room has stopped. Called on
// the room's goroutine itself (a command that reaches code written for
// other goroutines), it runs f there and then: handing f to the loop would
// wait for the loop, which is the caller, forever.
func (r *Room) do(f func()) bool {
	if id := goroutineID(); id != 0 && id == r.loopID.Load() {
		f()
		return true
	}
	done := make(chan struct{})
	select {
	case r.cmds <- func() { defer close(done); f() }:
	case <-r.stopped:
		return false
	}
	<-done
	return true
}

// tick sends what accumulated since the last one: the trace events of
// every running request, the room's state if it changed, and a fresh
// report after students' transfers; then it writes the room if it changed.
func (r *Room) tick() {
	r.countRefusedSockets()
	r.flush()
	if wall := time.Now(); wall.Sub(r.swept) >= time.Second {
		r.swept = wall
		r.sweepUnjoined(wall)
		if r.forgetRefused() {
			r.dirtyView = true // a refused phone dropped out of the presenter's count
		}
	}
	// State changes that come faster than StatesPerSecond wait for the
	// next turn and go out together: a machine that opens and closes
	// sockets as fast as it can costs the projector 4 states a second,
	// not 100.
	now := r.cl.cfg.Now()
	view := r.dirtyView && now.Sub(r.lastState).Seconds()*r.cl.cfg.Limits.StatesPerSecond >= 1
	report := r.dirtyRun && !r.storming
	if view {
		r.dirtyView = false
		r.lastState = now
		r.sendState()
	}
	if report {
		r.dirtyRun = false
		if run := r.run; run != nil {
			r.spawn(func() { r.sendReport(run, nil) })
		}
	}
	// The room is written when it changed; its record (a storm's events,
	// megabytes for a big one) at most every recordEvery while events
	// stream in, at once when a verdict completes it.
	wall := time.Now()
	rec := r.saveRecordNow || (r.saveRecord && wall.Sub(r.savedRecord) >= recordEvery)
	r.saveRecordNow = false
	if view || r.saveDoc || rec {
		r.saveDoc = false
		if rec {
			r.saveRecord = false
			r.savedRecord = wall
		}
		r.save(rec)
	}
}

// reserve counts a connection about to be upgraded against MaxConns.
func (r *Room) reserve() bool {
	ok := false
	r.do(func() {
		if r.closed || len(r.conns)+r.reserved >= r.cl.cfg.MaxConns {
			return
		}
		r.reserved++
		ok = true
	})
	return ok
}

func (r *Room) unreserve() { r.do(func() { r.reserved-- }) }

// attach starts a connection's reader and writer and greets it with the
// room's state and the record of its current ledger, so that a screen that
// connects mid-storm, or again after a blip, draws everything it missed.
// It is one command: no broadcast comes between the record and what
// follows it.
func (r *Room) attach(c *conn) {
	if !r.do(func() { r.attachOwned(c) }) {
		c.close()
	}
}

func (r *Room) attachOwned(c *conn) {
	r.reserved--
	if r.closed {
		c.close()
		return
	}
	r.flush() // what is pending goes to the record before it is replayed
	r.conns[c] = struct{}{}
	c.opened = time.Now()
	r.emptySince = time.Time{}
	r.dirtyView = true
	r.cl.wg.Add(2)
	go func() { defer r.cl.wg.Done(); c.writeLoop() }()
	go func() { defer r.cl.wg.Done(); c.readLoop() }()
	r.tell(c, r.welcome(c))
	if r.rec != nil {
		for _, m := range r.rec.replay(c.role == RoleProjector) {
			c.offer(m)
		}
	}
}

// leave forgets a connection; its student stays, to come back after a reload.
func (r *Room) leave(c *conn) {
	r.do(func() {
		delete(r.conns, c)
		if st := c.student; st != nil {
			st.conns = slices.DeleteFunc(st.conns, func(o *conn) bool { return o == c })
		}
		if len(r.conns) == 0 {
			r.emptySince = time.Now()
		}
		r.dirtyView = true
	})
}

// idleSince reports how long the room has had no connection (zero while
// it has one, or before anyone joined: a room just opened is not idle
// until IdleRoom after it was opened). A room that has stopped is idle
// for ever.
func (r *Room) idleSince(now time.Time) time.Duration {
	idle := time.Duration(1<<63 - 1)
	r.do(func() {
		if len(r.conns) > 0 || r.reserved > 0 || r.storming {
			idle = 0
			return
		}
		idle = now.Sub(r.emptySince)
	})
	return idle
}

func (r *Room) noteDropped() { r.dropped.Add(1) }

// Dropped reports how many connections were cut off for being too slow.
func (r *Room) Dropped() int { return int(r.dropped.Load()) }

// close stops the room: no command runs after it, its connections are
// closed, and it returns when every goroutine of the room has returned and
// its ledger is closed.
func (r *Room) close() {
	r.closeOnce.Do(func() {
		r.do(func() { r.closed = true })
		r.cancel()
		<-r.stopped
		// The room's goroutine has returned: what it owned is this one's.
		r.closed = true
		for c := range r.conns {
			c.close()
		}
		r.wg.Wait()
		if r.run != nil {
			r.run.close()
			r.run = nil
		}
	})
}

// spawn runs f as one of the room's goroutines, unless the room is closed.
// It is called on the room's goroutine, so that no goroutine is added once
// close is waiting for them.
func (r *Room) spawn(f func()) bool {
	if r.closed {
		return false
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		f()
	}()
	return true
}

// handle acts on one validated message from a connection. It runs on the
// connection's reader (readLoop): an instructor-only message from a phone
// is refused there, and anything else is handed to the room's goroutine
// (do), where the room's state is read and changed.
func (r *Room) handle(c *conn, m ClientMessage) {
	if instructorOnly[m.Type] && c.role != RoleProjector {
		r.tell(c, errorMsg("forbidden", "only the instructor controls the room"))
		return
	}
	r.do(func() {
		switch m.Type {
		case MsgJoin:
			r.join(c, m)
		case MsgSend:
			r.studentSend(c, m.Basement)
		case MsgVote:
			r.castVote(c, m.Choice)
		case MsgLevel:
			r.setLevel(c, m.Level)
		case MsgReset:
			r.setLevel(c, r.level)
		case MsgAsk:
			r.ask(m.Level)
		case MsgReveal:
			r.reveal(nil)
		case MsgStorm:
			r.startStorm(c, *m.Storm)
		case MsgKick:
			r.kick(c, m.Student)
		case MsgLock, MsgUnlock:
			r.locked = m.Type == MsgLock
			r.dirtyView = true
		case MsgSize:
			r.classSize = m.Size
			r.dirtyView = true
		}
	})
}
