// Package scenario plays a lesson's scenario against the real engine and a
// real store, one phase of one lane at a time, with the learner as the
// scheduler. Its caller hands in the store (an Opener: the browser's
// module passes SQLite on the memdb VFS); the package imports no store. A
// Session owns the databases it opens, a manual clock and an engine whose step hook parks every lane before every
// phase until it is told to move, so every state it reports is reproducible
// and Back is a replay of the moves made so far, less the last.
//
// The package imports no net/http: the browser's WebAssembly module carries
// it.
package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"idemlab/engine"
	"idemlab/lab"
)

// Spec is one scenario: the accounts, the client attempts (lanes), the
// default order of moves and the goals a learner is asked to reach. Its JSON
// form is what a lesson's ```scenario block holds and what the page passes
// back to open a session.
type Spec struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
	// Level is the ladder rung whose preset the scenario starts from.
	Level string `json:"level"`
	// Policy holds knob overrides on top of the level's preset, in the
	// engine's JSON names: {"claim":"check-then-insert"}.
	Policy json.RawMessage `json:"policy,omitempty"`
	// Sandbox marks a scenario where the page offers every knob to flip.
	Sandbox bool `json:"sandbox,omitempty"`
	// LatencyMS is how long the payment network takes, in manual-clock
	// milliseconds: the clock moves by it whenever a lane executes.
	LatencyMS int64 `json:"latency_ms,omitempty"`
	// Servers is how many app servers (engines) stand behind the load
	// balancer, all on the one database and clock; zero means one. Each
	// server's memory is its own, which is what the scale-out lesson shows.
	Servers  int              `json:"servers,omitempty"`
	Accounts map[string]int64 `json:"accounts"`
	Lanes    []Lane           `json:"lanes,omitempty"`
	// Schedule is the default order of moves, used by Run and shown as the
	// suggested next lane. An entry is a lane id (one phase of that lane) or
	// "lane@phase" / "lane@phase:part" (move that lane until it is about to
	// run that phase, or has finished).
	Schedule []string  `json:"schedule,omitempty"`
	Advance  []Advance `json:"advance,omitempty"`
	// Day asks for a generated day of traffic (the lab's generator, played
	// by RunDay) instead of lanes. Zero fields take the lab's defaults.
	Day *lab.DayParams `json:"day,omitempty"`
	// RetryHorizon is how long the scenario's clients keep retrying; the
	// checker's retention rule compares the policy's retention with it.
	RetryHorizon engine.Duration `json:"retry_horizon,omitempty"`
	Goals        []Goal          `json:"goals,omitempty"`
}

// Lane is one client attempt: one request, sent once.
type Lane struct {
	ID string `json:"id"`
	// Intent is the user's wish this attempt serves; attempts that retry
	// one another share it. Empty means the lane's own id.
	Intent   string `json:"intent,omitempty"`
	Customer string `json:"customer"`
	// Key is the idempotency key, sent as a Structured Field string. Empty
	// sends no Idempotency-Key header.
	Key  string `json:"key,omitempty"`
	Body Body   `json:"body"`
	// Fault strikes this lane when it reaches the named phase.
	Fault *LaneFault `json:"fault,omitempty"`
	// Server is the app server (1 to Spec.Servers) the load balancer sends
	// this attempt to; zero means server 1.
	Server int `json:"server,omitempty"`
	// AfterMS is when the lane is sent, in milliseconds after the start:
	// the clock moves forward to it (never back) when the lane first moves.
	AfterMS int64 `json:"after_ms,omitempty"`
}

// ServerNo returns the server the lane reaches, counting from 1.
func (l Lane) ServerNo() int { return max(l.Server, 1) }

// ServerCount returns how many app servers the scenario has, at least one.
func (s Spec) ServerCount() int { return max(s.Servers, 1) }

// IntentID returns the lane's intent, or its id when it names none.
func (l Lane) IntentID() string {
	if l.Intent != "" {
		return l.Intent
	}
	return l.ID
}

// LaneFault is a fault scripted at a phase ("respond", or "claim:insert"
// for one part of a phase).
type LaneFault struct {
	Phase string       `json:"phase"`
	Kind  engine.Fault `json:"kind"`
}

// Advance moves the clock forward just before a lane first moves: "25 hours
// later, the client retries".
type Advance struct {
	BeforeLane string          `json:"before_lane"`
	By         engine.Duration `json:"by"`
}

// Goal is something the learner is asked to make happen, judged by the
// lab's checker on the session's state.
type Goal struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	// Expect is "break" (Rule is broken), "hold" (Rule holds, or every rule
	// when Rule is empty, once every lane has finished) or "status" (Lane
	// finished with Status).
	Expect string `json:"expect"`
	Rule   string `json:"rule,omitempty"`
	Lane   string `json:"lane,omitempty"`
	Status int    `json:"status,omitempty"`
	// Policy holds knob overrides under which the author expects the goal
	// to be reached with the default schedule (a sandbox's "flip this
	// knob"); the lessons' content test plays it so. For a "hold" goal the
	// session must run under exactly that policy.
	Policy json.RawMessage `json:"policy,omitempty"`
}

// Limits on a scenario, so that a hostile or mistaken block cannot make
// the page's engine work without end.
const (
	MaxLanes     = 64
	MaxAccounts  = 64
	MaxSchedule  = 1024
	MaxGoals     = 32
	MaxServers   = 4
	MaxIDLen     = 32
	MaxClockMove = 400 * 24 * time.Hour
)

// Goal expectations.
const (
	ExpectBreak  = "break"
	ExpectHold   = "hold"
	ExpectStatus = "status"
)

// Body is a request body exactly as sent. In JSON it is either an object
// (sent compacted, fields in the order written) or a string (sent as is, to
// show reordered or re-spaced JSON).
type Body struct {
	Bytes []byte
	// Raw is true when the body was written as a string.
	Raw bool
}

// MarshalJSON writes the body in the form it was written in.
func (b Body) MarshalJSON() ([]byte, error) {
	if b.Raw || !json.Valid(b.Bytes) {
		return json.Marshal(string(b.Bytes))
	}
	return b.Bytes, nil
}

// UnmarshalJSON reads an object or a string.
func (b *Body) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		b.Bytes, b.Raw = []byte(s), true
		return nil
	}
	var out bytes.Buffer
	if err := json.Compact(&out, data); err != nil {
		return err
	}
	b.Bytes, b.Raw = out.Bytes(), false
	return nil
}

// Parse reads a scenario from its block text (the JSON form) and checks it.
// Errors name the line and column.
func Parse(src []byte) (Spec, error) {
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("scenario: %s", located(src, err))
	}
	if dec.More() {
		return Spec{}, fmt.Errorf("scenario: %s: one JSON object per block", at(src, dec.InputOffset()))
	}
	if err := s.Validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

func located(src []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return at(src, syn.Offset) + ": " + syn.Error()
	case errors.As(err, &typ):
		return at(src, typ.Offset) + ": " + fmt.Sprintf("field %q: cannot use %s here", typ.Field, typ.Value)
	}
	msg := err.Error()
	if i := strings.Index(msg, `unknown field "`); i >= 0 {
		name := msg[i+len(`unknown field `):]
		if j := bytes.Index(src, []byte(name)); j >= 0 {
			return at(src, int64(j)) + ": " + strings.TrimPrefix(msg, "json: ")
		}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return at(src, int64(len(src))) + ": the block ends before the JSON object does"
	}
	return strings.TrimPrefix(msg, "json: ")
}

// at turns a byte offset into "line L, column C".
func at(src []byte, off int64) string {
	if off > int64(len(src)) {
		off = int64(len(src))
	}
	line, col := 1, 1
	for _, c := range src[:off] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("line %d, column %d", line, col)
}

// ruleByName finds one of the checker's rules by the name a goal uses.
func ruleByName(name string) (lab.Rule, bool) {
	for _, r := range lab.Rules() {
		if r.Name == name {
			return r, true
		}
	}
	return lab.Rule{}, false
}

func ruleNames() []string {
	var out []string
	for _, r := range lab.Rules() {
		out = append(out, r.Name)
	}
	return out
}

// Validate checks that the scenario can be played: known level and knobs,
// unique lane ids, schedule and faults that name real lanes and phases,
// goals the checker can judge.
func (s Spec) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("scenario %q: "+format, append([]any{s.ID}, args...)...)
	}
	if s.ID == "" {
		return errors.New("scenario: an id is required")
	}
	if _, err := s.BasePolicy(); err != nil {
		return bad("%v", err)
	}
	if len(s.Lanes) == 0 && s.Day == nil {
		return bad("needs lanes or a day")
	}
	switch {
	case len(s.ID) > MaxIDLen:
		return bad("the id is longer than %d characters", MaxIDLen)
	case len(s.Lanes) > MaxLanes || len(s.Accounts) > MaxAccounts || len(s.Schedule) > MaxSchedule || len(s.Goals) > MaxGoals:
		return bad("at most %d lanes, %d accounts, %d schedule entries and %d goals", MaxLanes, MaxAccounts, MaxSchedule, MaxGoals)
	case s.LatencyMS > MaxClockMove.Milliseconds() || s.RetryHorizon < 0 || s.RetryHorizon.D() > MaxClockMove:
		return bad("latency_ms and retry_horizon must be between 0 and %s", MaxClockMove)
	}
	if s.Day != nil {
		if err := s.Day.WithDefaults().Validate(); err != nil {
			return bad("day: %v", err)
		}
	}
	if s.LatencyMS < 0 {
		return bad("latency_ms must not be negative")
	}
	if s.Servers < 0 || s.Servers > MaxServers {
		return bad("servers must be between 1 and %d", MaxServers)
	}
	for id, bal := range s.Accounts {
		if !engine.ValidAccountID(id) || bal < 0 {
			return bad("account %q: an id of letters, digits, '-', '_', '.' and a balance of 0 or more", id)
		}
	}
	lanes := map[string]bool{}
	for i, l := range s.Lanes {
		switch {
		case !engine.ValidAccountID(l.ID) || len(l.ID) > MaxIDLen:
			return bad("lane %d: an id of 1 to %d letters, digits, '-', '_' or '.' is required", i+1, MaxIDLen)
		case lanes[l.ID]:
			return bad("lane %q appears twice", l.ID)
		case len(l.Body.Bytes) == 0:
			return bad("lane %q: a body is required", l.ID)
		case l.AfterMS < 0 || l.AfterMS > MaxClockMove.Milliseconds():
			return bad("lane %q: after_ms must be between 0 and %d", l.ID, MaxClockMove.Milliseconds())
		case len(l.Body.Bytes) > engine.MaxBodyBytes:
			return bad("lane %q: the body is over %d bytes", l.ID, engine.MaxBodyBytes)
		case l.Server < 0 || l.Server > s.ServerCount():
			return bad("lane %q: server %d: the scenario has servers 1 to %d (set \"servers\" for more)", l.ID, l.Server, s.ServerCount())
		}
		lanes[l.ID] = true
		if l.Fault != nil {
			if _, _, err := parseTarget(l.Fault.Phase); err != nil {
				return bad("lane %q: fault: %v", l.ID, err)
			}
			if l.Fault.Kind == engine.FaultNone {
				return bad("lane %q: fault needs a kind (crash, lose-response, client-timeout)", l.ID)
			}
		}
	}
	for _, e := range s.Schedule {
		lane, target, _ := strings.Cut(e, "@")
		if !lanes[lane] {
			return bad("schedule entry %q names no lane", e)
		}
		if target != "" && target != "end" {
			if _, _, err := parseTarget(target); err != nil {
				return bad("schedule entry %q: %v", e, err)
			}
		}
	}
	for _, a := range s.Advance {
		if !lanes[a.BeforeLane] || a.By <= 0 || a.By.D() > MaxClockMove {
			return bad("advance: before_lane must name a lane and by must be positive, at most %s", MaxClockMove)
		}
	}
	goals := map[string]bool{}
	for _, g := range s.Goals {
		if g.ID == "" || len(g.ID) > MaxIDLen || goals[g.ID] || g.Text == "" {
			return bad("every goal needs a unique id and a text")
		}
		goals[g.ID] = true
		switch g.Expect {
		case ExpectBreak, ExpectHold:
			if _, ok := ruleByName(g.Rule); !ok && !(g.Expect == ExpectHold && g.Rule == "") {
				return bad("goal %q: rule %q is none of %v", g.ID, g.Rule, ruleNames())
			}
		case ExpectStatus:
			if !lanes[g.Lane] || g.Status < 100 || g.Status > 599 {
				return bad("goal %q: a status goal names a lane and an HTTP status", g.ID)
			}
		default:
			return bad("goal %q: expect must be break, hold or status", g.ID)
		}
		if _, err := s.GoalPolicy(g); err != nil {
			return bad("goal %q: %v", g.ID, err)
		}
	}
	return nil
}

// BasePolicy is the scenario's level preset with its overrides applied.
func (s Spec) BasePolicy() (engine.Policy, error) {
	level := s.Level
	if level == "" {
		return engine.Policy{}, fmt.Errorf("level is required (one of %v)", engine.Levels())
	}
	p, ok := engine.Preset(level)
	if !ok {
		return engine.Policy{}, fmt.Errorf("unknown level %q (one of %v)", level, engine.Levels())
	}
	return applyOverrides(p, s.Policy)
}

// GoalPolicy is the policy a goal is meant to be reached under: the
// scenario's own, with the goal's overrides.
func (s Spec) GoalPolicy(g Goal) (engine.Policy, error) {
	p, err := s.BasePolicy()
	if err != nil {
		return p, err
	}
	return applyOverrides(p, g.Policy)
}

// ApplyPolicy returns base with the knobs raw names changed: a few
// overrides ({"claim":"constraint"}) or a whole policy. The level label
// stays base's unless raw names one.
func ApplyPolicy(base engine.Policy, raw []byte) (engine.Policy, error) {
	return applyOverrides(base, raw)
}

func applyOverrides(p engine.Policy, raw json.RawMessage) (engine.Policy, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return p, nil
	}
	level := p.Level
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	p.Level = ""
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("policy: %w", err)
	}
	if p.Level == "" {
		p.Level = level
	}
	return p, nil
}

// parseTarget reads "phase" or "phase:part".
func parseTarget(t string) (engine.Phase, string, error) {
	phase, part, _ := strings.Cut(t, ":")
	for _, p := range engine.Phases() {
		if string(p) == phase {
			return p, part, nil
		}
	}
	names := make([]string, len(engine.Phases()))
	for i, p := range engine.Phases() {
		names[i] = string(p)
	}
	sort.Strings(names)
	return "", "", fmt.Errorf("unknown phase %q (one of %s)", phase, strings.Join(names, ", "))
}
