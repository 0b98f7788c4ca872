package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"idemlab/engine"
	"idemlab/lab"
)

// State is everything the page draws after a call: the lanes with their
// trace events and answers, the last SQL that ran, both key tables, the
// balances and the ledger, the checker's report on the history so far and
// the goals.
type State struct {
	Scenario string        `json:"scenario"`
	Step     int           `json:"step"`
	Done     bool          `json:"done"`
	Policy   engine.Policy `json:"policy"`
	// Next is the lane the default schedule (then lane order) moves next.
	Next string `json:"next,omitempty"`
	// ClockMS is the manual clock, in milliseconds since the start.
	ClockMS int64 `json:"clock_ms"`
	// StartMS is the scenario's start (Start) in Unix milliseconds, so a
	// view can show a key's expiry relative to it.
	StartMS int64 `json:"start_ms"`
	// Servers is how many app servers the lanes reach (at least one).
	Servers   int           `json:"servers"`
	Lanes     []LaneState   `json:"lanes"`
	Last      *engine.Event `json:"last,omitempty"`
	Keys      []KeyRow      `json:"keys"`
	LooseKeys []KeyRow      `json:"loose_keys"`
	// Caches are the keys each server holds in its own memory, under the
	// server-cache claim; empty under every other.
	Caches    []ServerKeys      `json:"caches,omitempty"`
	Accounts  []engine.Account  `json:"accounts"`
	Transfers []engine.Transfer `json:"transfers"`
	// Charges are the payment processor's records, which no rollback of
	// the ledger undoes.
	Charges []engine.Charge `json:"charges"`
	Report  lab.Report      `json:"report"`
	Goals   []GoalState     `json:"goals"`
}

// Lane states.
const (
	LaneWaiting = "waiting" // not sent yet
	LaneRunning = "running" // parked before NextPhase
	LaneDone    = "done"
	LaneCrashed = "crashed"
)

// Lane verdicts. The page shows the word and an icon, never colour alone.
const (
	VerdictOK      = "ok"
	VerdictInfo    = "info"
	VerdictFail    = "fail"
	VerdictPending = "pending"
)

// LaneState is one lane as the page draws it.
type LaneState struct {
	ID       string `json:"id"`
	Intent   string `json:"intent"`
	Customer string `json:"customer"`
	Key      string `json:"key"`
	Body     string `json:"body"`
	// Server is the app server the attempt reaches, from 1.
	Server    int          `json:"server"`
	State     string       `json:"state"`
	NextPhase engine.Phase `json:"next_phase,omitempty"`
	NextPart  string       `json:"next_part,omitempty"`
	// Fault is the fault scripted for this lane, if any.
	Fault       *LaneFault     `json:"fault,omitempty"`
	Events      []engine.Event `json:"events"`
	Response    *ResponseView  `json:"response,omitempty"`
	Delivered   bool           `json:"delivered"`
	Verdict     string         `json:"verdict"`
	VerdictText string         `json:"verdict_text"`
	// VerdictTextKo is VerdictText in Korean.
	VerdictTextKo string `json:"verdict_text_ko"`
}

// ResponseView is a response with its body as text.
type ResponseView struct {
	Status int             `json:"status"`
	Header []engine.Header `json:"header"`
	Body   string          `json:"body"`
}

func viewOf(r *engine.Response) *ResponseView {
	if r == nil {
		return nil
	}
	h := r.Header
	if h == nil {
		h = []engine.Header{}
	}
	return &ResponseView{Status: r.Status, Header: h, Body: string(r.Body)}
}

// KeyRow is one row of a key table as the page draws it: the row, with the
// owner token shown as the lane that wrote it and the stored response as
// text (Response hides the record's own).
type KeyRow struct {
	engine.KeyRecord
	Response *ResponseView `json:"response,omitempty"`
}

// ServerKeys is what one server remembers in its own memory.
type ServerKeys struct {
	Server int      `json:"server"`
	Keys   []KeyRow `json:"keys"`
}

// GoalState is a goal and whether the session has reached it.
type GoalState struct {
	Goal
	Met bool `json:"met"`
}

func (w *world) keyRows(recs []engine.KeyRecord) []KeyRow {
	out := make([]KeyRow, 0, len(recs))
	for _, r := range recs {
		owner := r.Owner
		if lane, ok := w.owners[owner]; ok {
			owner = lane
		} else if owner != "" {
			owner = "?"
		}
		row := KeyRow{KeyRecord: r, Response: viewOf(r.Response)}
		row.Owner, row.KeyRecord.Response = owner, nil
		out = append(out, row)
	}
	return out
}

// intentsOf lists the scenario's intents, each once, in lane order, with
// what its body asks for.
func intentsOf(spec Spec) []lab.Intent {
	var out []lab.Intent
	seen := map[string]bool{}
	for _, l := range spec.Lanes {
		if seen[l.IntentID()] {
			continue
		}
		seen[l.IntentID()] = true
		in := lab.Intent{ID: l.IntentID(), Customer: l.Customer}
		if t, p := engine.ParseTransfer(l.Body.Bytes); p == nil {
			in.From, in.To, in.Amount = t.From, t.To, t.Amount
		}
		out = append(out, in)
	}
	return out
}

// history is what the checker judges: every lane that has been sent, in
// the order sent, with the ledger and the balances now. A lane still on its
// way counts as an attempt with no answer yet, so a transfer it committed
// is tied to its intent at once.
func (w *world) history(accounts []engine.Account, transfers []engine.Transfer, charges []engine.Charge) (lab.History, int) {
	h := lab.History{Ledger: lab.LedgerOf(transfers), Charges: lab.ChargesOf(charges), StartBalances: map[string]int64{},
		EndBalances: lab.BalancesOf(accounts), Retention: w.policy.Retention.D(), RetryHorizon: w.spec.RetryHorizon.D(),
		MemoryGuard: lab.MemoryGuardOf(w.policy), Keyless: !w.policy.Keyed()}
	for id, b := range w.spec.Accounts {
		h.StartBalances[id] = b
	}
	h.Intents = append([]lab.Intent(nil), w.intents...)
	started := make([]*laneRun, 0, len(w.order))
	for _, lr := range w.order {
		if lr.started {
			started = append(started, lr)
		}
	}
	// The learner may send lanes in any order: the history is in the order
	// they were sent, which is what "first use of a key" means.
	sort.Slice(started, func(i, j int) bool { return started[i].startSeq < started[j].startSeq })
	pending := 0
	for _, lr := range started {
		if lr.finished {
			a := lab.AttemptOf(lr.req, lr.result, lr.sentAt)
			a.Server = lr.spec.ServerNo()
			h.Attempts = append(h.Attempts, a)
			continue
		}
		pending++
		a := lab.AttemptOf(lr.req, engine.Result{}, lr.sentAt)
		a.Server = lr.spec.ServerNo()
		h.Attempts = append(h.Attempts, a)
	}
	return h, pending
}

// state builds the State after step moves.
func (w *world) state(step int) State {
	st := State{Scenario: w.spec.ID, Step: step, Done: w.done(), Policy: w.policy, Next: w.next(),
		ClockMS: w.clock.Now().Sub(Start).Milliseconds(), StartMS: Start.UnixMilli(), Servers: w.servers}
	snap, caches, err := w.snapshot()
	if err != nil {
		// The store is in memory and private to this world: a failure here
		// is a bug, shown as the last event rather than hidden.
		st.Last = &engine.Event{Phase: "snapshot", Outcome: engine.OutcomeError, Note: err.Error()}
	}
	st.Accounts, st.Transfers, st.Charges = nonNil(snap.Accounts), nonNil(snap.Transfers), nonNil(snap.Charges)
	st.Keys, st.LooseKeys = w.keyRows(snap.Keys), w.keyRows(snap.LooseKeys)
	if w.policy.Claim == engine.ClaimServerCache {
		for i, keys := range caches {
			st.Caches = append(st.Caches, ServerKeys{Server: i + 1, Keys: w.keyRows(keys)})
		}
	}

	h, pending := w.history(snap.Accounts, snap.Transfers, snap.Charges)
	st.Report = lab.Check(h)
	st.Report.Summary.Lost -= pending // a lane still on its way has not lost anything yet
	failing := map[string][]lab.Rule{}
	for _, rr := range st.Report.Rules {
		for _, v := range rr.Violations {
			for _, l := range v.Lanes {
				if n := len(failing[l]); n == 0 || failing[l][n-1] != rr.Rule {
					failing[l] = append(failing[l], rr.Rule)
				}
			}
		}
	}

	w.evMu.Lock()
	events := append([]engine.Event(nil), w.events...)
	w.evMu.Unlock()
	if len(events) > 0 && st.Last == nil {
		last := events[len(events)-1]
		st.Last = &last
	}
	byLane := map[string][]engine.Event{}
	for _, e := range events {
		byLane[e.Lane] = append(byLane[e.Lane], e)
	}
	for _, lr := range w.order {
		st.Lanes = append(st.Lanes, w.laneState(lr, byLane[lr.spec.ID], failing[lr.spec.ID]))
	}
	for _, g := range w.spec.Goals {
		st.Goals = append(st.Goals, GoalState{Goal: g, Met: w.met(g, st)})
	}
	if st.Goals == nil {
		st.Goals = []GoalState{}
	}
	return st
}

// snapshot reads the database and what each server keeps in memory. A
// world whose database is not open yet has never moved: it reads what the
// database will hold once open, the scenario's accounts and nothing else
// (TestFirstStateNeedsNoDatabase holds the two to the same state).
func (w *world) snapshot() (engine.Snapshot, [][]engine.KeyRecord, error) {
	caches := make([][]engine.KeyRecord, w.servers)
	if !w.isOpen() {
		var snap engine.Snapshot
		for id, b := range w.spec.Accounts {
			snap.Accounts = append(snap.Accounts, engine.Account{ID: id, Balance: b})
		}
		sort.Slice(snap.Accounts, func(i, j int) bool { return snap.Accounts[i].ID < snap.Accounts[j].ID })
		return snap, caches, nil
	}
	for i, e := range w.engs {
		caches[i] = e.CachedKeys()
	}
	snap, err := w.db.Snapshot(w.ctx)
	return snap, caches, err
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (w *world) laneState(lr *laneRun, events []engine.Event, broken []lab.Rule) LaneState {
	l := lr.spec
	ls := LaneState{ID: l.ID, Intent: l.IntentID(), Customer: l.Customer, Key: l.Key, Body: string(l.Body.Bytes),
		Server: l.ServerNo(), Fault: l.Fault, Events: nonNil(events)}
	switch {
	case !lr.started:
		ls.State, ls.NextPhase = LaneWaiting, engine.PhaseReceive
	case !lr.finished:
		ls.State, ls.NextPhase, ls.NextPart = LaneRunning, lr.next.Phase, lr.next.Part
	case lr.result.Fault == engine.FaultCrash:
		ls.State = LaneCrashed
	default:
		ls.State = LaneDone
		ls.Response = viewOf(&lr.result.Response)
		ls.Delivered = lr.result.Delivered
	}
	committed := false
	for _, e := range events {
		if e.Outcome == engine.OutcomeCommitted {
			committed = true
		}
	}
	ls.Verdict, ls.VerdictText, ls.VerdictTextKo = verdict(lr, committed, broken)
	return ls
}

// verdict says, in words, how this attempt ended: its code, and the words
// in English and in Korean.
func verdict(lr *laneRun, committed bool, broken []lab.Rule) (code, en, ko string) {
	if len(broken) > 0 {
		titles, titlesKo := make([]string, len(broken)), make([]string, len(broken))
		for i, r := range broken {
			titles[i], titlesKo[i] = r.Title, r.TitleIn("ko")
		}
		return VerdictFail, "breaks: " + strings.Join(titles, "; "), "깨뜨린 규칙: " + strings.Join(titlesKo, "; ")
	}
	if !lr.finished {
		return VerdictPending, "on its way", "처리 중"
	}
	r := lr.result
	if !r.Delivered {
		what, whatKo := "the client got no answer", "클라이언트가 응답을 받지 못했습니다"
		switch r.Fault {
		case engine.FaultCrash:
			what = "the server crashed before " + string(r.Phase) + "; the client got no answer"
			whatKo = "서버가 " + string(r.Phase) + " 전에 멈췄고, 클라이언트는 응답을 받지 못했습니다"
		case engine.FaultClientTimeout:
			what, whatKo = "the client timed out", "클라이언트가 기다리다 포기했습니다"
		case engine.FaultLoseResponse:
			what, whatKo = "the response was lost on the way", "응답이 오는 길에 사라졌습니다"
		}
		if committed {
			return VerdictInfo, what + ", but the server committed the transfer", whatKo + ". 그런데 서버는 송금을 커밋했습니다"
		}
		return VerdictInfo, what + "; nothing moved", whatKo + ". 돈은 움직이지 않았습니다"
	}
	st := r.Response.Status
	en = fmt.Sprintf("answered %d %s", st, statusText(st))
	ko = strings.TrimSpace(fmt.Sprintf("%d %s", st, statusText(st))) + " 응답"
	switch {
	case r.Replayed:
		en += ", from what the key table remembered"
		ko += ": 키 테이블이 기억해 둔 응답입니다"
	case st == 409:
		en += ": the first attempt is still running, try again later"
		ko += ": 첫 시도를 아직 처리하고 있으니 잠시 뒤에 다시 보내세요"
	case st == 422:
		en += ": this key was used for a different request"
		ko += ": 이 키는 다른 요청에 쓰였습니다"
	}
	return VerdictOK, en, ko
}

func statusText(code int) string {
	switch code {
	case 200:
		return "OK"
	case 201:
		return "Created"
	case 400:
		return "Bad Request"
	case 401:
		return "Unauthorized"
	case 402:
		return "Payment Required"
	case 404:
		return "Not Found"
	case 409:
		return "Conflict"
	case 415:
		return "Unsupported Media Type"
	case 422:
		return "Unprocessable Content"
	}
	return ""
}

// met judges one goal on a state.
func (w *world) met(g Goal, st State) bool {
	switch g.Expect {
	case ExpectBreak:
		// "Break it by switching the claim to insert-or-ignore" is met only
		// with that claim, whatever else broke the rule.
		if len(g.Policy) > 0 && !knobsHold(g.Policy, w.policy) {
			return false
		}
		r, _ := ruleByName(g.Rule)
		return !st.Report.Rule(r).OK
	case ExpectHold:
		if !st.Done {
			return false
		}
		if len(g.Policy) > 0 {
			want, err := w.spec.GoalPolicy(g)
			if err != nil || !samePolicy(want, w.policy) {
				return false
			}
		}
		if g.Rule == "" {
			return st.Report.OK
		}
		r, _ := ruleByName(g.Rule)
		return st.Report.Rule(r).OK
	case ExpectStatus:
		lr := w.lanes[g.Lane]
		return lr != nil && lr.finished && lr.result.Fault != engine.FaultCrash && lr.result.Response.Status == g.Status
	}
	return false
}

// knobsHold reports whether p has every knob that overrides names set to
// the value it names (durations compared as durations: "30s" is "30s0ms").
func knobsHold(overrides json.RawMessage, p engine.Policy) bool {
	want, err := applyOverrides(p, overrides)
	if err != nil {
		return false
	}
	return samePolicy(want, p)
}

// JudgeDayGoals judges a day scenario's goals on the day's report: "break"
// wants its rule broken, "hold" wants its rule (or, with none named, every
// rule) to hold. The page shows them as judged here.
func JudgeDayGoals(goals []Goal, rep lab.Report) []GoalState {
	out := make([]GoalState, 0, len(goals))
	for _, g := range goals {
		r, named := ruleByName(g.Rule)
		met := false
		switch g.Expect {
		case ExpectBreak:
			met = named && !rep.Rule(r).OK
		case ExpectHold:
			met = rep.OK
			if named {
				met = rep.Rule(r).OK
			}
		}
		out = append(out, GoalState{Goal: g, Met: met})
	}
	return out
}

func samePolicy(a, b engine.Policy) bool {
	a.Level, b.Level = "", ""
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}
