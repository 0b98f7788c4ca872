package scenario

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
)

// raceOfThree is a wish sent three times: two attempts that race to the
// claim, the first of them losing its answer, and a late retry.
const raceOfThree = `{"id": "r", "level": "unique",
  "accounts": {"a": 1000, "b": 0},
  "lanes": [
    {"id": "A1", "intent": "i", "customer": "c", "key": "k", "body": {"from": "a", "to": "b", "amount": 10},
     "fault": {"phase": "respond", "kind": "lose-response"}},
    {"id": "A2", "intent": "i", "customer": "c", "key": "k", "body": {"from": "a", "to": "b", "amount": 10}},
    {"id": "A3", "intent": "i", "customer": "c", "key": "k", "body": {"from": "a", "to": "b", "amount": 10}}
  ],
  "schedule": ["A1@claim", "A2@claim", "A1@commit", "A2", "A1", "A2", "A1", "A2", "A1@end", "A2@end", "A3@end"]}`

// withoutNotes is st with every event's note taken out.
func withoutNotes(st State) State {
	lanes := make([]LaneState, len(st.Lanes))
	for i, l := range st.Lanes {
		events := make([]engine.Event, len(l.Events))
		for j, e := range l.Events {
			e.Note = ""
			events[j] = e
		}
		l.Events = events
		lanes[i] = l
	}
	st.Lanes = lanes
	if st.Last != nil {
		last := *st.Last
		last.Note = ""
		st.Last = &last
	}
	return st
}

// TestStateIgnoresNotes plays a race at every level and under every claim,
// then rewords every note the engine traced and builds the state again:
// what the page draws from it (the lanes, their verdicts, the report, the
// goals) is the same. Notes are words for people (STYLE.md 13); no Go code
// reads them either.
func TestStateIgnoresNotes(t *testing.T) {
	spec, err := Parse([]byte(raceOfThree))
	require.NoError(t, err)
	policies := map[string]engine.Policy{}
	for _, level := range engine.Levels() {
		policies[level] = engine.MustPreset(level)
	}
	for _, c := range []engine.ClaimStrategy{engine.ClaimCheckThenInsert, engine.ClaimInsertOrIgnore, engine.ClaimServerCache} {
		policies["unique, claim "+c.String()] = engine.MustPreset(engine.LevelUnique).With(func(p *engine.Policy) { p.Claim = c })
	}
	rewordings := map[string]func(string) string{
		"reversed": func(n string) string {
			r := []rune(n)
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			return string(r)
		},
		"decoy": func(string) string { return "0 rows inserted; moved 1 won as t-decoy" },
	}
	for name, p := range policies {
		t.Run(name, func(t *testing.T) {
			s, err := New(spec, p, Memory)
			require.NoError(t, err)
			defer s.Close()
			st, err := s.Run()
			require.NoError(t, err)
			require.True(t, st.Done)
			for how, reword := range rewordings {
				s.w.evMu.Lock()
				for i := range s.w.events {
					s.w.events[i].Note = reword(s.w.events[i].Note)
				}
				s.w.evMu.Unlock()
				again := s.w.state(st.Step)
				require.NotEqual(t, stateJSON(t, st), stateJSON(t, again), "the notes were reworded (%s)", how)
				assert.Equal(t, stateJSON(t, withoutNotes(st)), stateJSON(t, withoutNotes(again)), "notes %s", how)
			}
		})
	}
}
