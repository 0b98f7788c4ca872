// Command wasm is the playground's engine for the browser: the engine, the
// SQLite store on the memdb VFS and the lab's scenario runner, compiled to
// WebAssembly (GOOS=js GOARCH=wasm) and exposed to JavaScript as
// globalThis.idemlab. Every function takes and returns JSON strings and
// returns a Promise. This file is the bridge's logic in plain Go, so that
// it is tested natively too; only the _js.go files touch syscall/js.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"idemlab/engine"
	"idemlab/lab"
	"idemlab/lab/scenario"
	"idemlab/store/sqlite"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// MaxSessions bounds the open sessions of one page: a page that forgets to
// close them gets an error, not a tab that eats memory.
const MaxSessions = 64

// bridge holds the open sessions. It is safe for concurrent use: the
// JavaScript side may call while an earlier call is still running.
type bridge struct {
	mu       sync.Mutex
	sessions map[string]*scenario.Session
	seq      int
	max      int
	// days holds the way to stop each day that is replaying, by the run
	// name the page gave it.
	days map[string]context.CancelFunc
}

// memory is the store every session and day plays on: SQLite on the memdb
// VFS, a fresh database each time. The scenario runner imports no store;
// this module chooses it.
func memory() (scenario.Store, error) { return sqlite.OpenMemory() }

func newBridge() *bridge {
	return &bridge{sessions: map[string]*scenario.Session{}, max: MaxSessions, days: map[string]context.CancelFunc{}}
}

// errorJSON is how every failure is answered: {"error":"…"}.
func errorJSON(err error) string {
	b, _ := json.Marshal(map[string]string{"error": err.Error()})
	return string(b)
}

func encode(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return errorJSON(fmt.Errorf("encode: %w", err))
	}
	return string(b)
}

// version lists what the page offers: the levels with their presets,
// every knob's values and the faults.
func (b *bridge) version() string {
	presets := map[string]engine.Policy{}
	for _, l := range engine.Levels() {
		presets[l] = engine.MustPreset(l)
	}
	knobs := engine.KnobValues()
	faults := names(func(i int) string { return engine.Fault(i).String() })[1:] // not "none"
	return encode(map[string]any{"version": version, "levels": engine.Levels(), "presets": presets,
		"knobs": knobs, "faults": faults, "rules": lab.Rules()})
}

// names lists an enum's names: its values count up from zero.
func names(name func(int) string) []string {
	var out []string
	for i := 0; i < 32; i++ {
		n := name(i)
		if strings.HasPrefix(n, "unknown(") {
			break
		}
		out = append(out, n)
	}
	return out
}

// open starts a session on a scenario. policy "" plays the scenario's own
// level and overrides; otherwise policy holds knobs (some or all) applied
// on top of it.
func (b *bridge) open(scenarioJSON, policyJSON string) string {
	spec, err := scenario.Parse([]byte(scenarioJSON))
	if err != nil {
		return errorJSON(err)
	}
	p, err := spec.BasePolicy()
	if err == nil {
		p, err = scenario.ApplyPolicy(p, []byte(policyJSON))
	}
	if err != nil {
		return errorJSON(err)
	}
	b.mu.Lock()
	if len(b.sessions) >= b.max {
		b.mu.Unlock()
		return errorJSON(fmt.Errorf("too many open sessions (%d); close the ones you no longer show", b.max))
	}
	b.seq++
	id := "s-" + strconv.Itoa(b.seq)
	b.mu.Unlock()
	s, err := scenario.New(spec, p, memory)
	if err != nil {
		return errorJSON(err)
	}
	b.mu.Lock()
	b.sessions[id] = s
	b.mu.Unlock()
	return encode(map[string]any{"session": id, "state": s.State()})
}

func (b *bridge) session(id string) (*scenario.Session, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.sessions[id]
	if !ok {
		return nil, fmt.Errorf("no open session %q", id)
	}
	return s, nil
}

// call runs one session method and encodes its state.
func (b *bridge) call(id string, f func(*scenario.Session) (scenario.State, error)) string {
	s, err := b.session(id)
	if err != nil {
		return errorJSON(err)
	}
	st, err := f(s)
	if err != nil {
		return errorJSON(err)
	}
	return encode(st)
}

func (b *bridge) step(id, lane string) string {
	return b.call(id, func(s *scenario.Session) (scenario.State, error) { return s.Step(lane) })
}

func (b *bridge) back(id string) string {
	return b.call(id, (*scenario.Session).Back)
}

func (b *bridge) run(id string) string {
	return b.call(id, (*scenario.Session).Run)
}

func (b *bridge) reset(id string) string {
	return b.call(id, (*scenario.Session).Reset)
}

// inject takes the fault's name, bare or as a JSON string.
func (b *bridge) inject(id, lane, fault string) string {
	var f engine.Fault
	name := strings.Trim(strings.TrimSpace(fault), `"`)
	if err := f.UnmarshalText([]byte(name)); err != nil {
		return errorJSON(err)
	}
	return b.call(id, func(s *scenario.Session) (scenario.State, error) { return s.Inject(lane, f) })
}

// setPolicy applies knobs (some or all) on top of the session's policy and
// starts the scenario over.
func (b *bridge) setPolicy(id, policyJSON string) string {
	return b.call(id, func(s *scenario.Session) (scenario.State, error) {
		if strings.TrimSpace(policyJSON) == "" {
			return scenario.State{}, errors.New("setPolicy needs a policy")
		}
		p, err := scenario.ApplyPolicy(s.Policy(), []byte(policyJSON))
		if err != nil {
			return scenario.State{}, err
		}
		return s.SetPolicy(p)
	})
}

func (b *bridge) close(id string) string {
	b.mu.Lock()
	s, ok := b.sessions[id]
	delete(b.sessions, id)
	b.mu.Unlock()
	if !ok {
		return errorJSON(fmt.Errorf("no open session %q", id))
	}
	s.Close()
	return `{"closed":true}`
}

// dayTally is what day answers: the lab's tally, the policy played, and
// the day drawn (as data and as an SVG document).
type dayTally struct {
	lab.Tally
	Policy     engine.Policy `json:"policy"`
	Params     lab.DayParams `json:"params"`
	Picture    lab.Picture   `json:"picture"`
	PictureSVG string        `json:"picture_svg"`
	// Goals are the day scenario's goals, judged on the report.
	Goals []scenario.GoalState `json:"goals"`
}

// dayStopped is what day answers when the page stopped it: how far it got.
// A day cut short is not judged: its half-replayed retries would read as
// lost money.
type dayStopped struct {
	Stopped bool `json:"stopped"`
	Done    int  `json:"done"`
	Total   int  `json:"total"`
}

// MaxRunName bounds the run name a page gives a day.
const MaxRunName = 64

// day replays a generated day. paramsJSON is {"level","policy","day"} (a
// day scenario's JSON will do), with "lang":"ko" for the picture's words
// in Korean and "run": a name under which stopDay can stop it. progress is
// called with the attempts done.
func (b *bridge) day(paramsJSON string, progress func(done, total int)) string {
	params, p, err := scenario.ParseDayRequest([]byte(paramsJSON))
	if err != nil {
		return errorJSON(err)
	}
	var words struct {
		Lang  string          `json:"lang"`
		Goals []scenario.Goal `json:"goals"`
		Run   string          `json:"run"`
	}
	_ = json.Unmarshal([]byte(paramsJSON), &words) // ParseDayRequest has read it already
	if len(words.Run) > MaxRunName {
		return errorJSON(fmt.Errorf("day: a run name has at most %d bytes", MaxRunName))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if words.Run != "" {
		b.mu.Lock()
		if _, busy := b.days[words.Run]; busy {
			b.mu.Unlock()
			return errorJSON(fmt.Errorf("day: a day named %q is already running", words.Run))
		}
		b.days[words.Run] = cancel
		b.mu.Unlock()
		defer func() {
			b.mu.Lock()
			delete(b.days, words.Run)
			b.mu.Unlock()
		}()
	}
	var done, total int
	t, err := scenario.RunDay(ctx, memory, params, p, func(d, n int) {
		done, total = d, n
		if progress != nil {
			progress(d, n)
		}
	})
	if ctx.Err() != nil {
		return encode(dayStopped{Stopped: true, Done: done, Total: total})
	}
	if err != nil {
		return errorJSON(err)
	}
	pic := lab.NewPicture(t.History, t.Report, lab.DayPictureOptions(params))
	return encode(dayTally{Tally: t, Policy: p, Params: params, Picture: pic, PictureSVG: string(pic.SVG(words.Lang)),
		Goals: scenario.JudgeDayGoals(words.Goals, t.Report)})
}

// stopDay stops the day replaying under run, between two groups of
// retries: {"stopping":true}, or false when no such day runs.
func (b *bridge) stopDay(run string) string {
	b.mu.Lock()
	cancel, ok := b.days[run]
	b.mu.Unlock()
	if ok {
		cancel()
	}
	return encode(map[string]bool{"stopping": ok})
}

// closeAll closes every session, when the module shuts down.
func (b *bridge) closeAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, s := range b.sessions {
		s.Close()
		delete(b.sessions, id)
	}
}
