package scenario

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
)

const twoLanes = `{"id": "t", "level": "unique", "policy": {"claim": "check-then-insert"},
  "accounts": {"a": 1000, "b": 0},
  "lanes": [
    {"id": "A1", "intent": "i", "customer": "c", "key": "k", "body": {"from": "a", "to": "b", "amount": 10}},
    {"id": "A2", "intent": "i", "customer": "c", "key": "k", "body": {"from": "a", "to": "b", "amount": 10}}
  ]}`

func stateJSON(t *testing.T, st State) string {
	t.Helper()
	b, err := json.Marshal(st)
	require.NoError(t, err)
	return string(b)
}

// TestSpareWorldIsFresh takes the spare world on Back, Reset and SetPolicy
// and checks that it behaves exactly as a world built on the spot.
func TestSpareWorldIsFresh(t *testing.T) {
	spec, err := Parse([]byte(twoLanes))
	require.NoError(t, err)
	p, err := spec.BasePolicy()
	require.NoError(t, err)
	s, err := New(spec, p, Memory)
	require.NoError(t, err)
	defer s.Close()
	require.NotNil(t, s.spare, "a spare is prepared from the start")

	var states []string
	for _, lane := range []string{"A1", "A1", "A2", "A2", "A1"} {
		st, err := s.Step(lane)
		require.NoError(t, err)
		states = append(states, stateJSON(t, st))
	}
	for i := len(states) - 2; i >= 0; i-- {
		spare := s.spare
		require.NotNil(t, spare)
		st, err := s.Back()
		require.NoError(t, err)
		assert.Equal(t, states[i], stateJSON(t, st), "back to move %d", i+1)
		assert.NotSame(t, spare, s.spare, "the spare was used and another is on its way")
	}
	st, err := s.Reset()
	require.NoError(t, err)
	assert.Equal(t, 0, st.Step)

	other := p.With(func(p *engine.Policy) { p.Claim = engine.ClaimConstraint })
	st, err = s.SetPolicy(other)
	require.NoError(t, err)
	assert.Equal(t, other, st.Policy, "a spare built for the old policy is not used")
	assert.Equal(t, other, s.w.policy)
	st, err = s.Run()
	require.NoError(t, err)
	assert.Len(t, st.Transfers, 1)

	s.Close()
	assert.Nil(t, s.spare, "closing drops the spare")
}
