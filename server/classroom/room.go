package classroom

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"idemlab/engine"
)

// student is one phone's identity in a room. Its secret lives in the
// phone's localStorage, so a reload is the same student; the room keeps
// only the secret's hash.
type student struct {
	id       string
	nickname string
	sends    *bucket
	vote     string

	// The student's current wish and its key. open is true while the last
	// attempt got no final answer, so pressing again retries it.
	intent   string
	key      string
	attempts int
	open     bool
	inFlight bool
	lanes    int
	// kicked is set when the instructor removed the student: its secret
	// joins no more.
	kicked bool
	// addr is the address the student last joined from.
	addr netip.Addr
}

// vote is the room's prediction: what will the second retry of the next
// storm get? It belongs to one storm: asked before it, locked when it
// starts (Run is then that storm's ledger), judged by its verdict alone and
// cleared by the storm after it.
type vote struct {
	Open     bool   `json:"open"`
	Revealed bool   `json:"revealed"`
	Question string `json:"question,omitempty"`
	Level    string `json:"level,omitempty"`
	// Choices are the answers offered, fitted to the level (ChoicesFor).
	Choices []string `json:"choices,omitempty"`
	Run     int      `json:"run,omitempty"`
	// Votes is the number cast; Counts is shown only once revealed.
	Votes  int            `json:"votes"`
	Counts map[string]int `json:"counts,omitempty"`
	Actual *actual        `json:"actual,omitempty"`
}

// actual is what the second retry really got.
type actual struct {
	Choice string `json:"choice,omitempty"`
	Status int    `json:"status"`
	Lane   string `json:"lane"`
}

const question = "The first attempt's answer is lost and the client sends it again. What will the second retry get?"

// Room is one class: its connections, students, vote, and the current
// ledger that storms and students' transfers run against. It is safe for
// concurrent use; its goroutines (the ticker, storms, students' transfers)
// stop when the room closes.
type Room struct {
	cl     *Classroom
	code   string
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
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
	dropped   int
	closed    bool
	// restoredRun is the ledger whose record a restarted server brought
	// back (no ledger is open yet); interrupted says its storm was cut off
	// by the restart.
	restoredRun int
	interrupted bool
	// lastState is when the last state message went out (StatesPerSecond).
	lastState time.Time
	// locked closes the room to new students; banned are the addresses of
	// kicked students, which may add no new student to the room.
	locked bool
	banned map[netip.Addr]bool
	kicked int
	// rosterSent is the roster the projectors were last sent.
	rosterSent []rosterEntry
	// firstMu makes the first presses of a room open one ledger between
	// them (firstRun).
	firstMu sync.Mutex
	// emptySince is when the last connection left; zero while any is open.
	emptySince time.Time

	// pending holds trace events until the next tick sends them as one
	// batch. It has its own lock because the engine's goroutines append to
	// it on every phase.
	pmu     sync.Mutex
	pending []wireEvent
	batch   int64

	// bmu serialises broadcasts, so that every connection receives the
	// room's messages in one order: a storm's last events before its report.
	// It also guards rec, the current ledger's record, which mirrors them.
	bmu sync.Mutex
	rec *record

	// saveDoc and saveRecord ask the ticker to write the room, and its
	// record, to the rooms file; saveRecordNow, the record without waiting
	// (a storm announced, a verdict).
	saveDoc, saveRecord, saveRecordNow atomic.Bool
}

// newRoom opens a room; fill, when not nil, sets what a saved room had
// before the room's goroutines start.
func newRoom(c *Classroom, code string, fill func(*Room)) *Room {
	ctx, cancel := context.WithCancel(c.ctx)
	r := &Room{cl: c, code: code, ctx: ctx, cancel: cancel, conns: map[*conn]struct{}{}, emptySince: time.Now(),
		students: map[string]*student{}, byID: map[string]*student{}, level: engine.LevelNaive,
		votes: map[string]string{}}
	if fill != nil {
		fill(r)
	}
	r.wg.Add(1)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer r.wg.Done()
		r.tickLoop()
	}()
	return r
}

// reserve counts a connection about to be upgraded against MaxConns.
func (r *Room) reserve() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || len(r.conns)+r.reserved >= r.cl.cfg.MaxConns {
		return false
	}
	r.reserved++
	return true
}

func (r *Room) unreserve() {
	r.mu.Lock()
	r.reserved--
	r.mu.Unlock()
}

// attach starts a connection's reader and writer and greets it with the
// room's state and the record of its current ledger, so that a screen that
// connects mid-storm, or again after a blip, draws everything it missed.
// Greeting and registering happen under bmu: no broadcast can come between
// the record and what follows it.
func (r *Room) attach(c *conn) {
	r.bmu.Lock()
	defer r.bmu.Unlock()
	r.flushLocked() // what is pending goes to the record before it is replayed
	r.mu.Lock()
	r.reserved--
	if r.closed {
		r.mu.Unlock()
		c.close()
		return
	}
	r.conns[c] = struct{}{}
	r.emptySince = time.Time{}
	r.dirtyView = true
	r.mu.Unlock()
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
	r.mu.Lock()
	delete(r.conns, c)
	if len(r.conns) == 0 {
		r.emptySince = time.Now()
	}
	r.dirtyView = true
	r.mu.Unlock()
}

// idleSince reports how long the room has had no connection (zero while
// it has one, or before anyone joined: a room just opened is not idle
// until IdleRoom after it was opened).
func (r *Room) idleSince(now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.conns) > 0 || r.reserved > 0 || r.storming {
		return 0
	}
	return now.Sub(r.emptySince)
}

func (r *Room) noteDropped() {
	r.mu.Lock()
	r.dropped++
	r.mu.Unlock()
}

// Dropped reports how many connections were cut off for being too slow.
func (r *Room) Dropped() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dropped
}

func (r *Room) close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	conns := make([]*conn, 0, len(r.conns))
	for c := range r.conns {
		conns = append(conns, c)
	}
	r.mu.Unlock()
	r.cancel()
	for _, c := range conns {
		c.close()
	}
	r.wg.Wait()
	r.mu.Lock()
	run := r.run
	r.run = nil
	r.mu.Unlock()
	if run != nil {
		run.close()
	}
}

// spawn runs f as one of the room's goroutines, unless the room is closed.
func (r *Room) spawn(f func()) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
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

// tell sends one message to one connection.
func (r *Room) tell(c *conn, v any) {
	m, err := prepare(v)
	if err != nil {
		r.cl.cfg.Logger.Error("classroom: encode message", "err", err)
		return
	}
	c.offer(m)
}

func prepare(v any) (*websocket.PreparedMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return websocket.NewPreparedMessage(websocket.TextMessage, b)
}

// broadcast sends prepared messages to every connection: proj to
// projectors, stud to phones (either may be nil). The caller holds bmu.
func (r *Room) broadcast(proj, stud *websocket.PreparedMessage) {
	r.mu.Lock()
	conns := make([]*conn, 0, len(r.conns))
	for c := range r.conns {
		conns = append(conns, c)
	}
	r.mu.Unlock()
	for _, c := range conns {
		m := stud
		if c.role == RoleProjector {
			m = proj
		}
		if m != nil {
			c.offer(m)
		}
	}
}

// broadcastAll encodes v once and sends the same bytes to every connection.
func (r *Room) broadcastAll(v any) {
	m, err := prepare(v)
	if err != nil {
		r.cl.cfg.Logger.Error("classroom: encode message", "err", err)
		return
	}
	r.broadcastPrepared(m, m)
}

// recordAndBroadcast encodes proj for the projectors and stud for the
// phones, keeps them in the record of ledger runID (keepAs says where:
// the storm's announcement or its verdict), and sends them in the room's
// one order, as broadcastAll does.
func (r *Room) recordAndBroadcast(runID int, keepAs recordPart, proj, stud any) {
	pb, err := json.Marshal(proj)
	var sb []byte
	if err == nil {
		sb, err = json.Marshal(stud)
	}
	if err != nil {
		r.cl.cfg.Logger.Error("classroom: encode message", "err", err)
		return
	}
	pm, err1 := websocket.NewPreparedMessage(websocket.TextMessage, pb)
	sm, err2 := websocket.NewPreparedMessage(websocket.TextMessage, sb)
	if err1 != nil || err2 != nil {
		return
	}
	r.bmu.Lock()
	defer r.bmu.Unlock()
	r.flushLocked()
	if r.rec != nil && r.rec.Run == runID {
		switch keepAs {
		case keepStorm:
			r.rec.setStorm(pb)
		case keepReport, keepFinalReport:
			r.rec.setReport(pb, sb, keepAs == keepFinalReport)
		}
		r.saveRecordNow.Store(true)
	}
	r.broadcast(pm, sm)
}

// recordPart names what a message is in a ledger's record.
type recordPart int

const (
	keepStorm recordPart = iota
	keepReport
	keepFinalReport // a storm's verdict: the record is complete
)

// broadcastPrepared sends proj to the projectors and stud to the phones,
// after whatever is queued, in the room's one order.
func (r *Room) broadcastPrepared(proj, stud *websocket.PreparedMessage) {
	r.bmu.Lock()
	defer r.bmu.Unlock()
	r.flushLocked()
	r.broadcast(proj, stud)
}

// errMsg tells one connection why its message was refused.
type errMsg struct {
	Type   string `json:"type"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

func errorMsg(code, detail string) errMsg { return errMsg{Type: "error", Code: code, Detail: detail} }

// votedMsg confirms a phone's vote.
type votedMsg struct {
	Type   string `json:"type"`
	Choice string `json:"choice"`
}

// wireEvent is a trace event as the room sends it: the engine's Event plus
// the run it belongs to and when the engine emitted it (Unix µs), which is
// how a screen, or the benchmark, measures how late it arrived.
type wireEvent struct {
	engine.Event
	Run int   `json:"run"`
	TUS int64 `json:"t_us"`
	// SkewUS is how far the ledger's clock runs ahead of the wall clock
	// (a late-retry storm moves it an hour on): the race view draws the
	// event at t_us + skew_us, so the hour between a lost answer and its
	// late retry is on the time axis ("≈ 1 h 0 min").
	SkewUS int64 `json:"skew_us,omitempty"`
}

// tracer returns the engine Tracer of a run: it queues each event for the
// next tick. It is called on every phase of every request, so it only
// appends under a short lock.
func (r *Room) tracer(runID int, clock *offsetClock) engine.Tracer {
	return func(e engine.Event) {
		w := wireEvent{Event: e, Run: runID, TUS: time.Now().UnixMicro(), SkewUS: clock.offset.Load() / 1000}
		r.pmu.Lock()
		r.pending = append(r.pending, w)
		r.pmu.Unlock()
	}
}

// maxBatch bounds one events message, so that no single frame is huge.
const maxBatch = 2000

// flushLocked sends the pending events as batches, each encoded once and
// shared by every connection. The caller holds bmu.
func (r *Room) flushLocked() {
	r.pmu.Lock()
	evs := r.pending
	r.pending = nil
	r.pmu.Unlock()
	if r.rec != nil && len(evs) > 0 {
		r.rec.keep(evs)
		r.markSaved()
	}
	for len(evs) > 0 {
		n := min(len(evs), maxBatch)
		r.batch++
		m, err := websocket.NewPreparedMessage(websocket.TextMessage, encodeBatch(r.batch, evs[:n]))
		if err == nil {
			r.broadcast(m, m)
		}
		evs = evs[n:]
	}
}

// encodeBatch writes an events message. The header comes first and holds
// the oldest event's emission time and the time the batch was encoded, so
// that a reader can judge the batch's lateness, and where it was spent,
// without parsing the events.
func encodeBatch(seq int64, evs []wireEvent) []byte {
	b := make([]byte, 0, 256*len(evs)+96)
	b = append(b, `{"type":"events","batch":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"t0_us":`...)
	b = strconv.AppendInt(b, evs[0].TUS, 10)
	b = append(b, `,"sent_us":`...)
	b = strconv.AppendInt(b, time.Now().UnixMicro(), 10)
	b = append(b, `,"n":`...)
	b = strconv.AppendInt(b, int64(len(evs)), 10)
	b = append(b, `,"events":[`...)
	for i := range evs {
		if i > 0 {
			b = append(b, ',')
		}
		e, _ := json.Marshal(&evs[i]) // strings and integers only
		b = append(b, e...)
	}
	return append(b, "]}"...)
}

// tickLoop sends what accumulated since the last tick: the trace events of
// every running request, the room's state if it changed, and a fresh
// report after students' transfers.
func (r *Room) tickLoop() {
	t := time.NewTicker(r.cl.cfg.Tick)
	defer t.Stop()
	var savedRecord time.Time
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-t.C:
		}
		r.bmu.Lock()
		r.flushLocked()
		r.bmu.Unlock()
		r.mu.Lock()
		// State changes that come faster than StatesPerSecond wait for the
		// next turn and go out together: a machine that opens and closes
		// sockets as fast as it can costs the projector 4 states a second,
		// not 100.
		now := r.cl.cfg.Now()
		view, report := r.dirtyView && now.Sub(r.lastState).Seconds()*r.cl.cfg.Limits.StatesPerSecond >= 1, r.dirtyRun && !r.storming
		if view {
			r.dirtyView = false
			r.lastState = now
		}
		if report {
			r.dirtyRun = false
		}
		run := r.run
		r.mu.Unlock()
		if view {
			r.sendState()
		}
		if report && run != nil {
			r.sendReport(run, nil)
		}
		// The room is written when it changed; its record (a storm's
		// events, megabytes for a big one) at most every recordEvery
		// while events stream in, at once when a verdict completes it.
		wall := time.Now()
		rec := r.saveRecordNow.Swap(false) || (r.saveRecord.Load() && wall.Sub(savedRecord) >= recordEvery)
		if view || r.saveDoc.Swap(false) || rec {
			if rec {
				r.saveRecord.Store(false)
				savedRecord = wall
			}
			r.save(rec)
		}
	}
}

// stateMsg is the room as screens show it. Phones get the number of
// students, not their nicknames.
type stateMsg struct {
	Type     string         `json:"type"`
	Code     string         `json:"code"`
	Level    string         `json:"level"`
	Run      int            `json:"run"`
	Storming bool           `json:"storming"`
	Students int            `json:"students"`
	Online   int            `json:"online"`
	Roster   []rosterEntry  `json:"roster"` // projectors only, and only when it changed (sendState)
	Vote     vote           `json:"vote"`
	Levels   []string       `json:"levels"`
	Faults   []string       `json:"faults"`
	Phases   []engine.Phase `json:"phases"`
	Dropped  int            `json:"dropped"`
	// Interrupted says the room's last storm was cut off when the server
	// stopped: its events up to then are drawn, and it has no verdict.
	Interrupted bool `json:"interrupted,omitempty"`
	Locked      bool `json:"locked"`
}

type rosterEntry struct {
	ID       string `json:"id"`
	Nickname string `json:"nickname"`
	Online   bool   `json:"online"`
}

func (r *Room) stateLocked(projector bool) stateMsg {
	s := stateMsg{Type: "state", Code: r.code, Level: r.level, Storming: r.storming, Students: len(r.byID) - r.kicked,
		Vote: r.vote, Levels: engine.Levels, Faults: StormFaults, Phases: engine.Phases, Dropped: r.dropped,
		Locked: r.locked}
	if r.run != nil {
		s.Run = r.run.id
	} else {
		s.Run, s.Interrupted = r.restoredRun, r.interrupted
	}
	online := map[*student]bool{}
	for c := range r.conns {
		if c.student != nil {
			online[c.student] = true
		}
	}
	s.Online = len(online)
	if projector {
		s.Roster = make([]rosterEntry, 0, len(r.byID))
		for i := 1; i <= len(r.byID); i++ {
			st := r.byID["s"+strconv.Itoa(i)]
			if st != nil && !st.kicked {
				s.Roster = append(s.Roster, rosterEntry{ID: st.id, Nickname: st.nickname, Online: online[st]})
			}
		}
	}
	return s
}

// sendState broadcasts the room's state: one encoding for projectors, one
// for phones.
//
// The projectors' roster goes out only when it differs from the last one
// sent (sockets that open and close without joining change nothing in it),
// so an unchanged roster of hundreds of names is not sent four times a
// second; a new projector's welcome carries it whole. bmu is held from the
// roster's comparison to the broadcast, so that states go out in the order
// they were read.
func (r *Room) sendState() {
	r.bmu.Lock()
	defer r.bmu.Unlock()
	r.mu.Lock()
	ps, ss := r.stateLocked(true), r.stateLocked(false)
	if slices.Equal(ps.Roster, r.rosterSent) && r.rosterSent != nil {
		ps.Roster = nil
	} else {
		r.rosterSent = ps.Roster
	}
	r.mu.Unlock()
	pm, err1 := prepare(ps)
	sm, err2 := prepare(ss)
	if err1 != nil || err2 != nil {
		return
	}
	r.broadcast(pm, sm)
}

// welcomeMsg greets a new connection with its role and the room's state.
// Like every message, it names its type first, so that a reader can switch
// on the first bytes.
type welcomeMsg struct {
	Type    string   `json:"type"`
	Role    string   `json:"role"`
	Code    string   `json:"code"`
	JoinURL string   `json:"join_url,omitempty"`
	State   stateMsg `json:"state"`
}

func (r *Room) welcome(c *conn) welcomeMsg {
	r.mu.Lock()
	defer r.mu.Unlock()
	return welcomeMsg{Type: "welcome", Role: c.role, Code: r.code, JoinURL: c.joinURL, State: r.stateLocked(c.role == RoleProjector)}
}

// joinedMsg tells a phone who it is in the room.
type joinedMsg struct {
	Type     string `json:"type"`
	ID       string `json:"id"`
	Nickname string `json:"nickname"`
	Vote     string `json:"vote"`
	Retrying bool   `json:"retrying"`
	Level    string `json:"level"`
}

// handle acts on one validated message from a connection.
func (r *Room) handle(c *conn, m ClientMessage) {
	if instructorOnly[m.Type] && c.role != RoleProjector {
		r.tell(c, errorMsg("forbidden", "only the instructor controls the room"))
		return
	}
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
		r.mu.Lock()
		level := r.level
		r.mu.Unlock()
		r.setLevel(c, level)
	case MsgAsk:
		r.mu.Lock()
		level := m.Level
		if level == "" {
			level = r.level
		}
		r.votes = map[string]string{}
		r.vote = vote{Open: true, Question: question, Level: level, Choices: ChoicesFor(level)}
		for _, st := range r.byID {
			st.vote = ""
		}
		r.dirtyView = true
		r.mu.Unlock()
	case MsgReveal:
		r.mu.Lock()
		r.revealLocked(nil)
		r.mu.Unlock()
	case MsgStorm:
		r.startStorm(c, *m.Storm)
	case MsgKick:
		r.kick(c, m.Student)
	case MsgLock, MsgUnlock:
		r.mu.Lock()
		r.locked = m.Type == MsgLock
		r.dirtyView = true
		r.mu.Unlock()
	}
}

func (r *Room) join(c *conn, m ClientMessage) {
	if c.role != RoleStudent {
		r.tell(c, errorMsg("bad-message", "the projector does not join"))
		return
	}
	sum := sha256.Sum256([]byte(m.Secret))
	h := hex.EncodeToString(sum[:])
	r.mu.Lock()
	if c.student != nil {
		r.mu.Unlock()
		r.tell(c, errorMsg("bad-message", "already joined"))
		return
	}
	st := r.students[h]
	if st != nil && st.kicked {
		r.mu.Unlock()
		r.tell(c, errorMsg("kicked", "the instructor removed you from this room"))
		return
	}
	if st == nil {
		if refusal := r.newStudentRefusedLocked(c); refusal != nil {
			r.mu.Unlock()
			r.tell(c, *refusal)
			return
		}
		if len(r.byID) >= r.cl.cfg.MaxConns {
			r.mu.Unlock()
			r.tell(c, errorMsg("full", "this room is full"))
			return
		}
		st = &student{id: "s" + strconv.Itoa(len(r.byID)+1), sends: newBucket(r.cl.cfg.SendsPerSecond, r.cl.cfg.SendBurst)}
		r.students[h] = st
		r.byID[st.id] = st
	}
	st.nickname = r.uniqueNicknameLocked(st, m.Nickname)
	st.addr = c.client
	c.student = st
	r.dirtyView = true
	you := joinedMsg{Type: "joined", ID: st.id, Nickname: st.nickname, Vote: st.vote, Retrying: st.open, Level: r.level}
	r.mu.Unlock()
	r.tell(c, you)
}

func (r *Room) castVote(c *conn, choice string) {
	r.mu.Lock()
	st := c.student
	switch {
	case st == nil:
		r.mu.Unlock()
		r.tell(c, errorMsg("not-joined", "join the room first"))
		return
	case !r.vote.Open:
		r.mu.Unlock()
		r.tell(c, errorMsg("vote-closed", "no vote is open"))
		return
	case !slices.Contains(r.vote.Choices, choice):
		r.mu.Unlock()
		r.tell(c, errorMsg("bad-message", "that answer is not one of this vote's"))
		return
	}
	st.vote = choice
	r.votes[st.id] = choice
	r.vote.Votes = len(r.votes)
	r.dirtyView = true
	r.mu.Unlock()
	r.tell(c, votedMsg{Type: "voted", Choice: choice})
}

// clearVoteLocked forgets the vote and every student's choice. The caller
// holds mu.
func (r *Room) clearVoteLocked() {
	r.vote = vote{}
	r.votes = map[string]string{}
	for _, st := range r.byID {
		st.vote = ""
	}
}

// revealLocked closes the vote and shows its histogram, with what the
// second retry really got when a run is known. The caller holds mu.
func (r *Room) revealLocked(a *actual) {
	if !r.vote.Open && !r.vote.Revealed && r.vote.Question == "" {
		return
	}
	counts := map[string]int{}
	for _, ch := range r.vote.Choices {
		counts[ch] = 0
	}
	for _, ch := range r.votes {
		counts[ch]++
	}
	r.vote.Open, r.vote.Revealed, r.vote.Counts, r.vote.Votes = false, true, counts, len(r.votes)
	if a != nil {
		r.vote.Actual = a
	}
	r.dirtyView = true
}

// setLevel switches the room to a level on a fresh ledger.
func (r *Room) setLevel(c *conn, level string) {
	r.mu.Lock()
	if r.storming {
		r.mu.Unlock()
		r.tell(c, errorMsg("busy", "wait for the storm to end"))
		return
	}
	r.mu.Unlock()
	nr, err := r.newRun(level, nil)
	if err != nil {
		r.tell(c, errorMsg("internal", "could not open a fresh ledger"))
		return
	}
	r.sendState()
	r.sendReport(nr, nil)
}

// uniqueNicknameLocked is nick, or nick with the first free number after
// it ("ana 2") when another student of the room already has it (compared
// without case): the projector's names and a lane's label must each point
// at one phone. The caller holds mu.
func (r *Room) uniqueNicknameLocked(st *student, nick string) string {
	taken := func(n string) bool {
		for _, o := range r.byID {
			if o != st && strings.EqualFold(o.nickname, n) {
				return true
			}
		}
		return false
	}
	if !taken(nick) {
		return nick
	}
	for i := 2; ; i++ {
		suffix := " " + strconv.Itoa(i)
		base := []rune(nick)
		if len(base)+len([]rune(suffix)) > MaxNicknameRunes {
			base = base[:MaxNicknameRunes-len([]rune(suffix))]
		}
		if n := string(base) + suffix; !taken(n) {
			return n
		}
	}
}
