package classroom

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/gorilla/websocket"

	"idemlab/engine"
)

// What the room sends: every message is encoded once and the same bytes
// (a prepared message) are queued for every connection that gets it.
// Broadcasts run on the room's goroutine only, which is what orders them.

// tell sends one message to one connection. It touches no room state, so
// any goroutine may call it.
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
// projectors, stud to phones (either may be nil). A connection too slow to
// take its message is dropped (offer), never waited for.
func (r *Room) broadcast(proj, stud *websocket.PreparedMessage) {
	for c := range r.conns {
		m := stud
		if c.role == RoleProjector {
			m = proj
		}
		if m != nil {
			c.offer(m)
		}
	}
}

// recordAndBroadcast encodes proj for the projectors and stud for the
// phones, keeps them in the record of ledger runID (keepAs says where:
// the storm's announcement or its verdict), and sends them after whatever
// events are pending.
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
	r.flush()
	if r.rec != nil && r.rec.Run == runID {
		switch keepAs {
		case keepStorm:
			r.rec.setStorm(pb)
		case keepReport, keepFinalReport:
			r.rec.setReport(pb, sb, keepAs == keepFinalReport)
		}
		r.saveRecordNow = true
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

// errMsg tells one connection why its message was refused.
type errMsg struct {
	Type   string `json:"type"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
	// RetryAfter, on a refusal, is how many seconds the phone waits before
	// it asks again on its own; absent when asking again would not help.
	RetryAfter int `json:"retry_after,omitempty"`
}

func errorMsg(code, detail string) errMsg { return errMsg{Type: "error", Code: code, Detail: detail} }

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
// next tick. It is called on every phase of every request, on the
// engine's goroutines, so it only appends under a short lock.
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

// flush sends the pending events as batches, each encoded once and shared
// by every connection, and keeps them in the record.
func (r *Room) flush() {
	r.pmu.Lock()
	evs := r.pending
	r.pending = nil
	r.pmu.Unlock()
	if r.rec != nil && len(evs) > 0 {
		r.rec.keep(evs)
		r.saveRecord = true
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
	// ClassSize is how many students the room admits; Refused, for
	// projectors, the clients turned away in the last minute, by reason
	// (full, locked, paced, network).
	ClassSize int            `json:"class_size"`
	Refused   map[string]int `json:"refused,omitempty"`
}

type rosterEntry struct {
	ID       string `json:"id"`
	Nickname string `json:"nickname"`
	Online   bool   `json:"online"`
}

func (r *Room) state(projector bool) stateMsg {
	s := stateMsg{Type: "state", Code: r.code, Level: r.level, Storming: r.storming, Students: r.seated(),
		Vote: r.vote, Levels: engine.Levels(), Faults: StormFaults(), Phases: engine.Phases(), Dropped: r.Dropped(),
		Locked: r.locked, ClassSize: r.classSize}
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
		s.Refused = r.refusedCounts()
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
// second; a new projector's welcome carries it whole.
func (r *Room) sendState() {
	ps, ss := r.state(true), r.state(false)
	if slices.Equal(ps.Roster, r.rosterSent) && r.rosterSent != nil {
		ps.Roster = nil
	} else {
		r.rosterSent = ps.Roster
	}
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
	return welcomeMsg{Type: "welcome", Role: c.role, Code: r.code, JoinURL: c.joinURL, State: r.state(c.role == RoleProjector)}
}
