package scenario_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/lab"
	"idemlab/lab/scenario"
)

// twoServers is the race of check-then-insert guarded by a mutex in the
// server's memory, A1 on server 1 and A2 on the server named by %s.
func twoServers(a2Server string) string {
	return `{
  "id": "scale", "level": "unique", "policy": {"claim": "check-then-insert", "lock": "memory"},
  "servers": 2,
  "accounts": {"alice": 1000000, "bob": 0},
  "lanes": [
    {"id": "A1", "intent": "pay-bob", "customer": "c1", "key": "k-1", "server": 1, "body": {"from": "alice", "to": "bob", "amount": 200000}},
    {"id": "A2", "intent": "pay-bob", "customer": "c1", "key": "k-1", "server": ` + a2Server + `, "body": {"from": "alice", "to": "bob", "amount": 200000}}
  ],
  "schedule": ["A1@claim:insert", "A2@claim:insert", "A1@end", "A2@end"]
}`
}

func TestMemoryLockOnOneServerMakesTheRetryWait(t *testing.T) {
	s := open(t, twoServers("1"), nil)
	stepTo(t, s, "A1", engine.PhaseClaim, "insert")
	stepTo(t, s, "A2", engine.PhaseClaim, "check")
	st := step(t, s, "A2")
	a2 := laneOf(t, st, "A2")
	assert.Equal(t, engine.PartLockWait, a2.NextPart, "A2 parks waiting for server 1's lock")
	assert.Equal(t, 1, a2.Server)
	require.NotEmpty(t, a2.Events)
	last := a2.Events[len(a2.Events)-1]
	assert.Equal(t, engine.OutcomeWaiting, last.Outcome)
	assert.Contains(t, last.Note, "server 1's in-memory lock")
	assert.Contains(t, last.Note, "held by A1")

	st = step(t, s, "A2") // looks again: still held, still waiting
	assert.Equal(t, engine.PartLockWait, laneOf(t, st, "A2").NextPart)
	assert.Len(t, laneOf(t, st, "A2").Events, len(a2.Events), "a second look adds no event")

	st = finish(t, s) // Run passes over the waiting lane and finishes A1 first
	assert.Len(t, st.Transfers, 1)
	assert.True(t, st.Report.Rule(lab.RuleOneTransfer).OK)
	assert.Equal(t, 2, st.Servers)
}

func TestMemoryLockAcrossTwoServersPaysTwice(t *testing.T) {
	s := open(t, twoServers("2"), nil)
	st := finish(t, s)
	assert.Len(t, st.Transfers, 2)
	assert.Equal(t, 1, laneOf(t, st, "A1").Server)
	assert.Equal(t, 2, laneOf(t, st, "A2").Server)
	for _, l := range st.Lanes {
		for _, e := range l.Events {
			assert.NotEqual(t, engine.OutcomeWaiting, e.Outcome, "nobody waits for another server's lock")
			assert.Equal(t, map[string]string{"A1": "1", "A2": "2"}[l.ID], e.Server)
		}
	}
	rr := st.Report.Rule(lab.RuleOneTransfer)
	require.False(t, rr.OK)
	require.Len(t, rr.Violations, 1)
	v := rr.Violations[0]
	assert.Equal(t, lab.MemoryGuardLock, v.Cause)
	assert.Contains(t, v.Message, "servers 1 and 2")
	assert.Contains(t, v.Message, "one server's memory")

	// The database's constraint, same two servers, same schedule: one
	// transfer, whatever each server's memory holds.
	st, err := s.SetPolicy(engine.MustPreset(engine.LevelScoped).With(func(p *engine.Policy) { p.Lock = engine.LockMemory }))
	require.NoError(t, err)
	require.Empty(t, st.Transfers)
	st = finish(t, s)
	assert.Len(t, st.Transfers, 1)
	assert.True(t, st.Report.OK, "%+v", st.Report.Broken())
}

func TestServerCacheMissesOnTheOtherServer(t *testing.T) {
	src := strings.Replace(twoServers("2"), `"check-then-insert", "lock": "memory"`, `"server-cache"`, 1)
	src = strings.Replace(src, `"A1@claim:insert", "A2@claim:insert", `, ``, 1)
	s := open(t, src, nil)
	st := finish(t, s)
	assert.Len(t, st.Transfers, 2)
	assert.Empty(t, st.Keys, "no key table is written")
	require.Len(t, st.Caches, 2)
	for i, c := range st.Caches {
		assert.Equal(t, i+1, c.Server)
		require.Len(t, c.Keys, 1, "each server remembers the key it saw")
		assert.Equal(t, []string{"A1", "A2"}[i], c.Keys[0].Owner)
	}
	v := st.Report.Rule(lab.RuleOneTransfer).Violations
	require.Len(t, v, 1)
	assert.Equal(t, lab.MemoryGuardCache, v[0].Cause)
	assert.Contains(t, v[0].Message, "cache miss")
}

func TestServersAreValidated(t *testing.T) {
	lane := `{"id":"A","customer":"c","body":{}%s}`
	cases := []struct {
		name, src, want string
	}{
		{"too many servers", `{"id":"x","level":"naive","servers":5,"lanes":[` + strings.Replace(lane, "%s", "", 1) + `]}`, "servers must be between 1 and 4"},
		{"negative servers", `{"id":"x","level":"naive","servers":-1,"lanes":[` + strings.Replace(lane, "%s", "", 1) + `]}`, "servers must be between 1 and 4"},
		{"lane on a missing server", `{"id":"x","level":"naive","lanes":[` + strings.Replace(lane, "%s", `,"server":2`, 1) + `]}`, `lane "A": server 2: the scenario has servers 1 to 1`},
		{"lane on server 0 of 2", `{"id":"x","level":"naive","servers":2,"lanes":[` + strings.Replace(lane, "%s", `,"server":3`, 1) + `]}`, "servers 1 to 2"},
		{"negative lane server", `{"id":"x","level":"naive","servers":2,"lanes":[` + strings.Replace(lane, "%s", `,"server":-1`, 1) + `]}`, "server -1"},
		{"bad lock", `{"id":"x","level":"naive","policy":{"lock":"mutex"},"lanes":[` + strings.Replace(lane, "%s", "", 1) + `]}`, `unknown lock mode "mutex"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := scenario.Parse([]byte(c.src))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
