package scenario_test

// (Over 500 lines on purpose: one table per lesson rung, each played with
// the same step helpers.)

import (
	"encoding/json"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/lab"
	"idemlab/lab/scenario"
)

// race is two retries of one transfer under one key, the schedule lining
// up both lookups before either insert.
const race = `{
  "id": "race", "level": "unique", "policy": {"claim": "check-then-insert"},
  "accounts": {"alice": 1000000, "bob": 0},
  "lanes": [
    {"id": "A1", "intent": "pay-bob", "customer": "c1", "key": "k-1", "body": {"from": "alice", "to": "bob", "amount": 200000}},
    {"id": "A2", "intent": "pay-bob", "customer": "c1", "key": "k-1", "body": {"from": "alice", "to": "bob", "amount": 200000}}
  ],
  "schedule": ["A1@claim", "A2@claim", "A1", "A2", "A1", "A2"],
  "goals": [
    {"id": "g1", "text": "Cause a double transfer", "expect": "break", "rule": "one-transfer-per-intent"},
    {"id": "g2", "text": "Try to cause one now", "expect": "hold", "rule": "one-transfer-per-intent", "policy": {"claim": "constraint"}}
  ]
}`

func open(t testing.TB, src string, override func(*engine.Policy)) *scenario.Session {
	t.Helper()
	spec, err := scenario.Parse([]byte(src))
	require.NoError(t, err)
	p, err := spec.BasePolicy()
	require.NoError(t, err)
	if override != nil {
		p = p.With(override)
	}
	s, err := scenario.New(spec, p, scenario.Memory)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

func step(t testing.TB, s *scenario.Session, lane string) scenario.State {
	t.Helper()
	st, err := s.Step(lane)
	require.NoError(t, err)
	return st
}

// stepTo moves a lane until it is parked before phase (and part).
func stepTo(t testing.TB, s *scenario.Session, lane string, phase engine.Phase, part string) scenario.State {
	t.Helper()
	st := s.State()
	for i := 0; i < 20; i++ {
		l := laneOf(t, st, lane)
		if l.State == scenario.LaneRunning && l.NextPhase == phase && l.NextPart == part {
			return st
		}
		require.NotEqual(t, scenario.LaneDone, l.State, "lane %s finished before %s:%s", lane, phase, part)
		st = step(t, s, lane)
	}
	t.Fatalf("lane %s never reached %s:%s", lane, phase, part)
	return st
}

func laneOf(t testing.TB, st scenario.State, id string) scenario.LaneState {
	t.Helper()
	for _, l := range st.Lanes {
		if l.ID == id {
			return l
		}
	}
	t.Fatalf("no lane %s", id)
	return scenario.LaneState{}
}

func lastSQL(t testing.TB, st scenario.State) string {
	t.Helper()
	require.NotNil(t, st.Last)
	return st.Last.SQL
}

func finish(t testing.TB, s *scenario.Session) scenario.State {
	t.Helper()
	st, err := s.Run()
	require.NoError(t, err)
	require.True(t, st.Done)
	return st
}

// TestCheckThenInsertRacePaysTwice schedules SELECT, SELECT, INSERT, INSERT
// by hand: both lookups see no key, both inserts succeed, both lanes pay.
func TestCheckThenInsertRacePaysTwice(t *testing.T) {
	s := open(t, race, nil)
	stepTo(t, s, "A1", engine.PhaseClaim, "check")
	stepTo(t, s, "A2", engine.PhaseClaim, "check")
	st := step(t, s, "A1")
	assert.Contains(t, lastSQL(t, st), "SELECT")
	assert.Equal(t, "insert", laneOf(t, st, "A1").NextPart)
	st = step(t, s, "A2")
	assert.Contains(t, lastSQL(t, st), "SELECT")
	assert.Equal(t, "SELECT found no row: the key looks free", st.Last.Note)
	st = step(t, s, "A1")
	assert.Contains(t, lastSQL(t, st), "INSERT INTO idem_keys_unconstrained")
	st = step(t, s, "A2")
	assert.Contains(t, lastSQL(t, st), "INSERT INTO idem_keys_unconstrained")
	assert.Len(t, st.LooseKeys, 2, "nothing stopped the second row")
	assert.Equal(t, []string{"A1", "A2"}, []string{st.LooseKeys[0].Owner, st.LooseKeys[1].Owner})

	st = finish(t, s)
	assert.Len(t, st.Transfers, 2)
	assert.Equal(t, int64(600_000), balance(st, "alice"))
	rr := st.Report.Rule(lab.RuleOneTransfer)
	require.False(t, rr.OK)
	assert.ElementsMatch(t, []string{"A1", "A2"}, rr.Violations[0].Lanes)
	assert.Equal(t, int64(200_000), st.Report.Summary.PaidTwice)
	for _, l := range st.Lanes {
		assert.Equal(t, scenario.VerdictFail, l.Verdict, l.ID)
		assert.Contains(t, l.VerdictText, "at most one transfer per intent")
		assert.Contains(t, l.VerdictTextKo, "깨뜨린 규칙: 의도 하나에 송금은 최대 한 번")
	}
	assert.True(t, goal(st, "g1").Met)
	assert.False(t, goal(st, "g2").Met)
}

// TestConstraintRacePaysOnce plays the same schedule with the claim as one
// INSERT against the constrained table: SQLite's own error is the verdict.
func TestConstraintRacePaysOnce(t *testing.T) {
	s := open(t, race, func(p *engine.Policy) { p.Claim = engine.ClaimConstraint })
	stepTo(t, s, "A1", engine.PhaseClaim, "")
	stepTo(t, s, "A2", engine.PhaseClaim, "")
	st := step(t, s, "A1")
	assert.Equal(t, engine.OutcomeClaimed, st.Last.Outcome)
	st = step(t, s, "A2")
	assert.Equal(t, engine.OutcomeDuplicate, st.Last.Outcome)
	assert.Contains(t, st.Last.Note, "UNIQUE constraint failed", "SQLite's own error text")
	assert.Contains(t, lastSQL(t, st), "INSERT INTO idem_keys")
	st = finish(t, s)
	assert.Len(t, st.Transfers, 1)
	assert.Len(t, st.Keys, 1)
	assert.Empty(t, st.LooseKeys)
	assert.True(t, st.Report.Rule(lab.RuleOneTransfer).OK)
	assert.True(t, goal(st, "g2").Met, "the hold goal is met under its own policy")
	assert.False(t, goal(st, "g1").Met)
}

func TestRunFollowsTheSchedule(t *testing.T) {
	for _, c := range []struct {
		claim     engine.ClaimStrategy
		transfers int
	}{{engine.ClaimCheckThenInsert, 2}, {engine.ClaimInsertOrIgnore, 2}, {engine.ClaimConstraint, 1}} {
		t.Run(c.claim.String(), func(t *testing.T) {
			s := open(t, race, func(p *engine.Policy) { p.Claim = c.claim })
			st := finish(t, s)
			assert.Len(t, st.Transfers, c.transfers)
		})
	}
}

func balance(st scenario.State, id string) int64 {
	for _, a := range st.Accounts {
		if a.ID == id {
			return a.Balance
		}
	}
	return -1
}

func goal(st scenario.State, id string) scenario.GoalState {
	for _, g := range st.Goals {
		if g.ID == id {
			return g
		}
	}
	return scenario.GoalState{}
}

func asJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	require.NoError(t, err)
	return string(b)
}

// storm has faults, a late retry and a reordered body: everything a
// replayed world must reproduce exactly.
const storm = `{
  "id": "storm", "level": "scoped", "latency_ms": 250,
  "accounts": {"alice": 1000000, "bob": 0, "carol": 300000},
  "lanes": [
    {"id": "A1", "intent": "rent", "customer": "c1", "key": "k-1", "body": {"from": "alice", "to": "bob", "amount": 200000},
     "fault": {"phase": "respond", "kind": "lose-response"}},
    {"id": "A2", "intent": "rent", "customer": "c1", "key": "k-1", "body": "{ \"amount\": 200000, \"to\": \"bob\", \"from\": \"alice\" }"},
    {"id": "B1", "intent": "gift", "customer": "c2", "key": "k-1", "body": {"from": "carol", "to": "bob", "amount": 50000}, "after_ms": 1000},
    {"id": "A3", "intent": "rent", "customer": "c1", "key": "k-1", "body": {"from": "alice", "to": "bob", "amount": 200000}}
  ],
  "schedule": ["A1@execute", "A2@end", "A1@end"],
  "advance": [{"before_lane": "A3", "by": "1h"}],
  "retry_horizon": "1h",
  "goals": [{"id": "g1", "text": "Try to break it", "expect": "hold"}]
}`

// TestBackReturnsThePreviousStateExactly plays a whole scenario and, after
// every move, steps back and compares the state with the one before.
func TestBackReturnsThePreviousStateExactly(t *testing.T) {
	s := open(t, storm, nil)
	prev := asJSON(t, s.State())
	first := prev
	for i := 0; ; i++ {
		require.Less(t, i, 100, "the scenario must finish")
		st := s.State()
		if st.Done {
			break
		}
		next, err := s.Step(st.Next)
		require.NoError(t, err)
		require.Equal(t, i+1, next.Step)
		if runtime.GOOS == "js" && i%4 != 0 {
			// Under WebAssembly in Node, SQLite is interpreted: step back at
			// every fourth move only (natively, at every move).
			prev = asJSON(t, next)
			continue
		}
		back, err := s.Back()
		require.NoError(t, err)
		require.Equal(t, prev, asJSON(t, back), "back after move %d (%s)", i+1, st.Next)
		again, err := s.Step(st.Next)
		require.NoError(t, err)
		require.Equal(t, asJSON(t, next), asJSON(t, again), "the same move again gives the same state")
		prev = asJSON(t, again)
	}
	final := s.State()
	assert.True(t, final.Report.OK, "%v", final.Report.Broken())
	assert.True(t, goal(final, "g1").Met)
	assert.Len(t, final.Transfers, 2, "rent once, gift once")
	a1 := laneOf(t, final, "A1")
	assert.Equal(t, scenario.VerdictInfo, a1.Verdict)
	assert.Contains(t, a1.VerdictText, "but the server committed")
	assert.Equal(t, 409, laneOf(t, final, "A2").Response.Status, "a retry while the first is running")
	a3 := laneOf(t, final, "A3")
	assert.Equal(t, "true", headerOf(a3.Response, "Idempotent-Replayed"))
	assert.Equal(t, laneOf(t, final, "A1").Response.Body, a3.Response.Body, "byte for byte")

	st, err := s.Reset()
	require.NoError(t, err)
	assert.Equal(t, first, asJSON(t, st))
	for range 3 {
		st, err = s.Back()
		require.NoError(t, err)
	}
	assert.Equal(t, first, asJSON(t, st), "back at the start stays at the start")
}

func headerOf(r *scenario.ResponseView, name string) string {
	if r == nil {
		return ""
	}
	for _, h := range r.Header {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

// TestCrashLeavesTheDatabaseAsItWas crashes a lane before each phase and
// compares the database before and after.
func TestCrashLeavesTheDatabaseAsItWas(t *testing.T) {
	for _, level := range []string{engine.LevelUnique, engine.LevelScoped} {
		for _, phase := range []engine.Phase{engine.PhaseClaim, engine.PhaseExecute, engine.PhaseCommit, engine.PhaseRespond} {
			t.Run(level+"/"+string(phase), func(t *testing.T) {
				s := open(t, storm, func(p *engine.Policy) { *p = engine.MustPreset(level) })
				before := stepTo(t, s, "A1", phase, "")
				st, err := s.Inject("A1", engine.FaultCrash)
				require.NoError(t, err)
				a1 := laneOf(t, st, "A1")
				assert.Equal(t, scenario.LaneCrashed, a1.State)
				assert.Equal(t, engine.OutcomeCrashed, st.Last.Outcome)
				assert.Equal(t, asJSON(t, before.Keys), asJSON(t, st.Keys))
				assert.Equal(t, asJSON(t, before.Accounts), asJSON(t, st.Accounts))
				assert.Equal(t, asJSON(t, before.Transfers), asJSON(t, st.Transfers))
				_, err = s.Step("A1")
				assert.ErrorIs(t, err, scenario.ErrFinished)
			})
		}
	}
}

func TestCrashUnderCompletedFirstLosesTheMoney(t *testing.T) {
	s := open(t, race, func(p *engine.Policy) { *p = engine.MustPreset(engine.LevelUnique) })
	stepTo(t, s, "A1", engine.PhaseExecute, "")
	_, err := s.Inject("A1", engine.FaultCrash)
	require.NoError(t, err)
	st := finish(t, s)
	assert.Empty(t, st.Transfers)
	assert.False(t, st.Report.Rule(lab.RuleNothingLost).OK, "retries hear \"done\" and no money moved")
}

func TestInjectLosesTheResponseButTheServerCommits(t *testing.T) {
	s := open(t, race, func(p *engine.Policy) { *p = engine.MustPreset(engine.LevelScoped) })
	stepTo(t, s, "A1", engine.PhaseRespond, "")
	st, err := s.Inject("A1", engine.FaultClientTimeout)
	require.NoError(t, err)
	a1 := laneOf(t, st, "A1")
	assert.Equal(t, scenario.VerdictInfo, a1.Verdict)
	assert.Equal(t, "the client timed out, but the server committed the transfer", a1.VerdictText)
	assert.Equal(t, "클라이언트가 기다리다 포기했습니다. 그런데 서버는 송금을 커밋했습니다", a1.VerdictTextKo)
	assert.False(t, a1.Delivered)
	_, err = s.Inject("A2", engine.FaultNone)
	assert.Error(t, err)
	_, err = s.Step("nobody")
	assert.Error(t, err)
}

func TestSetPolicyStartsOver(t *testing.T) {
	s := open(t, race, nil)
	step(t, s, "A1")
	st, err := s.SetPolicy(engine.MustPreset(engine.LevelNaive))
	require.NoError(t, err)
	assert.Equal(t, 0, st.Step)
	assert.Equal(t, engine.LevelNaive, st.Policy.Level)
	st = finish(t, s)
	assert.Len(t, st.Transfers, 2)
	assert.Empty(t, st.Keys)
}

func TestCloseStopsEveryLane(t *testing.T) {
	before := runtime.NumGoroutine()
	spec, err := scenario.Parse([]byte(storm))
	require.NoError(t, err)
	for range 5 {
		p, _ := spec.BasePolicy()
		s, err := scenario.New(spec, p, scenario.Memory)
		require.NoError(t, err)
		for _, l := range []string{"A1", "A2", "B1", "A2"} {
			_, err := s.Step(l)
			require.NoError(t, err)
		}
		s.Close()
		s.Close()
		_, err = s.Step("A1")
		assert.Error(t, err, "a closed session refuses moves")
	}
	// Close waits for every lane's goroutine, so none is left over; allow
	// for the runtime's own background goroutines.
	assert.LessOrEqual(t, runtime.NumGoroutine(), before+2)
}

func TestParseErrorsNameTheLine(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"syntax", "{\n  \"id\": \"x\",\n  \"level\" \"naive\"\n}", "line 3"},
		{"unknown field", "{\n \"id\": \"x\",\n \"levle\": \"naive\"}", `line 3, column 2: unknown field "levle"`},
		{"truncated", "{\n \"id\": \"x\",", "ends before"},
		{"type", "{\"id\": \"x\",\n\"latency_ms\": \"fast\"}", "line 2"},
		{"unknown level", `{"id":"x","level":"nope","lanes":[{"id":"A","customer":"c","body":{}}]}`, "unknown level"},
		{"unknown knob", `{"id":"x","level":"naive","policy":{"claim":"maybe"},"lanes":[{"id":"A","customer":"c","body":{}}]}`, "unknown claim strategy"},
		{"no lanes", `{"id":"x","level":"naive"}`, "needs lanes or a day"},
		{"bad schedule", `{"id":"x","level":"naive","lanes":[{"id":"A","customer":"c","body":{}}],"schedule":["B"]}`, "names no lane"},
		{"bad phase", `{"id":"x","level":"naive","lanes":[{"id":"A","customer":"c","body":{},"fault":{"phase":"pay","kind":"crash"}}]}`, "unknown phase"},
		{"bad fault", `{"id":"x","level":"naive","lanes":[{"id":"A","customer":"c","body":{},"fault":{"phase":"execute","kind":"boom"}}]}`, "unknown fault"},
		{"bad rule", `{"id":"x","level":"naive","lanes":[{"id":"A","customer":"c","body":{}}],"goals":[{"id":"g","text":"t","expect":"break","rule":"be-good"}]}`, "rule \"be-good\""},
		{"duplicate lane", `{"id":"x","level":"naive","lanes":[{"id":"A","customer":"c","body":{}},{"id":"A","customer":"c","body":{}}]}`, "appears twice"},
		{"lane id", `{"id":"x","level":"naive","lanes":[{"id":"A@1","customer":"c","body":{}}]}`, "lane 1: an id"},
		{"clock jump", `{"id":"x","level":"naive","lanes":[{"id":"A","customer":"c","body":{}}],"advance":[{"before_lane":"A","by":"100000h"}]}`, "at most"},
		{"too many lanes", `{"id":"x","level":"naive","lanes":[` + strings.Repeat(`{"id":"A","customer":"c","body":{}},`, scenario.MaxLanes) + `{"id":"B","customer":"c","body":{}}]}`, "at most 64 lanes"},
		{"two objects", `{"id":"x","level":"naive","lanes":[{"id":"A","customer":"c","body":{}}]} {}`, "one JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := scenario.Parse([]byte(c.src))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestBodyKeepsItsForm(t *testing.T) {
	spec, err := scenario.Parse([]byte(storm))
	require.NoError(t, err)
	assert.Equal(t, `{"from":"alice","to":"bob","amount":200000}`, string(spec.Lanes[0].Body.Bytes))
	assert.Equal(t, `{ "amount": 200000, "to": "bob", "from": "alice" }`, string(spec.Lanes[1].Body.Bytes))
	b, err := json.Marshal(spec)
	require.NoError(t, err)
	again, err := scenario.Parse(b)
	require.NoError(t, err)
	assert.Equal(t, spec, again, "the JSON form round-trips")
}

// TestHistoryFollowsTheOrderLanesWereSent sends the corrected amount
// first: the key's first use is then the 300,000 won request, and it is the
// 200,000 won one that is wrongly told success.
func TestHistoryFollowsTheOrderLanesWereSent(t *testing.T) {
	const teller = `{"id": "t", "level": "unique",
	  "accounts": {"bakery": 2000000, "mill": 0},
	  "lanes": [
	    {"id": "A1", "intent": "inv", "customer": "b12", "key": "inv-1", "body": {"from": "bakery", "to": "mill", "amount": 200000}},
	    {"id": "A2", "intent": "inv", "customer": "b12", "key": "inv-1", "body": {"from": "bakery", "to": "mill", "amount": 300000}}
	  ]}`
	s := open(t, teller, nil)
	stepTo(t, s, "A2", engine.PhaseRespond, "")
	step(t, s, "A2")
	st := finish(t, s)
	rr := st.Report.Rule(lab.RuleNoSilentWrong)
	require.False(t, rr.OK)
	assert.Equal(t, []string{"A2", "A1"}, rr.Violations[0].Lanes)
	assert.Contains(t, rr.Violations[0].Message, `"amount":300000}, then for {"from":"bakery","to":"mill","amount":200000}`)
	assert.Equal(t, int64(300_000), st.Transfers[0].Amount)
}

// TestRandomPlaysStepBackExactly moves random lanes with random faults
// under every level and checks, at every move, that Back gives back the
// state before it.
func TestRandomPlaysStepBackExactly(t *testing.T) {
	faults := []engine.Fault{engine.FaultNone, engine.FaultNone, engine.FaultNone, engine.FaultNone,
		engine.FaultCrash, engine.FaultLoseResponse, engine.FaultClientTimeout}
	for seed, level := range engine.Levels() {
		t.Run(level, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			s := open(t, storm, func(p *engine.Policy) { *p = engine.MustPreset(level) })
			prev := asJSON(t, s.State())
			for moves := 0; ; moves++ {
				require.Less(t, moves, 200)
				st := s.State()
				if st.Done {
					break
				}
				var movable []string
				for _, l := range st.Lanes {
					if l.State == scenario.LaneWaiting || l.State == scenario.LaneRunning {
						movable = append(movable, l.ID)
					}
				}
				lane := movable[rng.IntN(len(movable))]
				f := faults[rng.IntN(len(faults))]
				var err error
				if f == engine.FaultNone {
					_, err = s.Step(lane)
				} else {
					_, err = s.Inject(lane, f)
				}
				require.NoError(t, err)
				if rng.IntN(3) == 0 {
					back, err := s.Back()
					require.NoError(t, err)
					require.Equal(t, prev, asJSON(t, back))
					if f == engine.FaultNone {
						_, err = s.Step(lane)
					} else {
						_, err = s.Inject(lane, f)
					}
					require.NoError(t, err)
				}
				prev = asJSON(t, s.State())
			}
			final := s.State()
			assert.Equal(t, final.Report.Summary.Transfers, len(final.Transfers))
			if level == engine.LevelScoped {
				assert.True(t, final.Report.Rule(lab.RuleOneTransfer).OK, "the full engine never pays twice, whatever the order")
				assert.True(t, final.Report.Rule(lab.RuleOwnResponses).OK)
				assert.True(t, final.Report.Rule(lab.RuleConservation).OK)
			}
		})
	}
}

// FuzzParse feeds the parser arbitrary blocks: it must refuse or accept,
// never panic, and what it accepts must open as a session or a day.
func FuzzParse(f *testing.F) {
	f.Add(race)
	f.Add(storm)
	f.Add(`{"id":"d","level":"naive","day":{"intents":5}}`)
	f.Add(`{"id":"x","level":"naive","lanes":[{"id":"A","customer":"c","body":"{\"a\":1}"}]}`)
	f.Fuzz(func(t *testing.T, src string) {
		spec, err := scenario.Parse([]byte(src))
		if err != nil || spec.Day != nil {
			return
		}
		p, err := spec.BasePolicy()
		require.NoError(t, err)
		s, err := scenario.New(spec, p, scenario.Memory)
		require.NoError(t, err)
		defer s.Close()
		st, err := s.Run()
		require.NoError(t, err)
		require.True(t, st.Done)
	})
}

// TestAStepMovesOneLaneOnePhase checks every move of a whole play: the lane
// that moved gains exactly one trace event, every other lane none.
func TestAStepMovesOneLaneOnePhase(t *testing.T) {
	s := open(t, storm, nil)
	count := func(st scenario.State) map[string]int {
		m := map[string]int{}
		for _, l := range st.Lanes {
			m[l.ID] = len(l.Events)
		}
		return m
	}
	before := count(s.State())
	for moves := 0; ; moves++ {
		require.Less(t, moves, 100)
		st := s.State()
		if st.Done {
			break
		}
		next, err := s.Step(st.Next)
		require.NoError(t, err)
		after := count(next)
		for id, n := range after {
			want := before[id]
			if id == st.Next {
				want++
			}
			require.Equal(t, want, n, "move %d (%s): events of lane %s", moves+1, st.Next, id)
		}
		require.Equal(t, st.Next, next.Last.Lane, "the last event is the moved lane's")
		before = after
	}
}

// TestBreakGoalIsMetOnlyUnderItsKnob judges a "break it by switching the
// claim to X" goal in Go, so the page only shows it: broken under another
// claim, the goal is not met; under the named claim, it is.
func TestBreakGoalIsMetOnlyUnderItsKnob(t *testing.T) {
	src := strings.Replace(race, `"goals": [`, `"goals": [
    {"id": "g3", "text": "Break it with insert-or-ignore", "expect": "break", "rule": "one-transfer-per-intent", "policy": {"claim": "insert-or-ignore"}},`, 1)
	s := open(t, src, nil)
	st := finish(t, s)
	require.False(t, st.Report.Rule(lab.RuleOneTransfer).OK, "check-then-insert paid twice")
	assert.True(t, goal(st, "g1").Met)
	assert.False(t, goal(st, "g3").Met, "broken, but not by the knob the goal names")

	ignore := open(t, src, func(p *engine.Policy) { p.Claim = engine.ClaimInsertOrIgnore })
	st = finish(t, ignore)
	require.False(t, st.Report.Rule(lab.RuleOneTransfer).OK, "insert-or-ignore pays the retry too")
	assert.True(t, goal(st, "g3").Met)
}

// TestJudgeDayGoals judges a day's goals on its report.
func TestJudgeDayGoals(t *testing.T) {
	goals := []scenario.Goal{
		{ID: "break", Expect: scenario.ExpectBreak, Rule: "one-transfer-per-intent"},
		{ID: "hold", Expect: scenario.ExpectHold, Rule: "one-transfer-per-intent"},
		{ID: "all", Expect: scenario.ExpectHold},
	}
	broken := lab.Report{OK: false, Rules: []lab.RuleResult{{Rule: lab.RuleOneTransfer, OK: false}}}
	held := lab.Report{OK: true, Rules: []lab.RuleResult{{Rule: lab.RuleOneTransfer, OK: true}}}
	met := func(gs []scenario.GoalState) map[string]bool {
		out := map[string]bool{}
		for _, g := range gs {
			out[g.ID] = g.Met
		}
		return out
	}
	assert.Equal(t, map[string]bool{"break": true, "hold": false, "all": false}, met(scenario.JudgeDayGoals(goals, broken)))
	assert.Equal(t, map[string]bool{"break": false, "hold": true, "all": true}, met(scenario.JudgeDayGoals(goals, held)))
}

// TestNaiveBenchSpeaksOfTheSameRequestSentAgain: lesson 1's bench (naive:
// no key table) breaks the byte-identical rule in the level's own terms, the
// same request sent again, under the key row that says "no key table";
// the same bench at unique names the key.
func TestNaiveBenchSpeaksOfTheSameRequestSentAgain(t *testing.T) {
	const rent = `{"id": "s1", "level": "naive",
	  "accounts": {"minji": 1000000, "landlord": 0},
	  "lanes": [
	    {"id": "A1", "intent": "rent", "customer": "minji", "key": "rent-2611",
	     "body": {"from": "minji", "to": "landlord", "amount": 500000},
	     "fault": {"phase": "respond", "kind": "lose-response"}},
	    {"id": "A2", "intent": "rent", "customer": "minji", "key": "rent-2611",
	     "body": {"from": "minji", "to": "landlord", "amount": 500000}}
	  ]}`
	st := finish(t, open(t, rent, nil))
	rr := st.Report.Rule(lab.RuleByteReplay)
	require.False(t, rr.OK)
	v := rr.Violations[0]
	assert.True(t, strings.HasPrefix(v.Message, "the same request sent again got 201 "), v.Message)
	assert.True(t, strings.HasPrefix(v.MessageKo, "다시 보낸 같은 요청이 응답(201 "), v.MessageKo)
	assert.NotContains(t, v.Message, "rent-2611")
	one := st.Report.Rule(lab.RuleOneTransfer).Violations[0]
	assert.True(t, strings.HasPrefix(one.Message, "1 extra transfer: 500,000 won moved more than once"), one.Message)

	st = finish(t, open(t, rent, func(p *engine.Policy) { p.Claim = engine.ClaimInsertOrIgnore }))
	rr = st.Report.Rule(lab.RuleByteReplay)
	require.False(t, rr.OK, "INSERT OR IGNORE answers the retry with what it did not do")
	assert.Contains(t, rr.Violations[0].Message, `a retry under key "rent-2611"`)
}
