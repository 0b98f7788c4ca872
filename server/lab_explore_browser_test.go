package server_test

// The explorer's answers (web/lab/runner.js explore): the shortest
// counterexample it finds among the three retries' random schedules.

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomFound is what explore({only: ['three-retries'], …}) answered.
type randomFound struct {
	Broke    bool     `json:"broke"`
	Steps    int      `json:"steps"`
	Tried    int      `json:"tried"`
	Schedule []string `json:"schedule"`
}

// TestLabExploreRandomKeepsTheShortest: the three retries are searched by
// seeded random schedules, and with one seed the first k schedules are
// the same whatever the count. uneven.js breaks rule 1 in every schedule,
// each of a length that depends on the interleaving: the explorer plays
// all n schedules and answers the shortest, not the first (which the
// count of 1 answers).
func TestLabExploreRandomKeepsTheShortest(t *testing.T) {
	ctx, _ := openLabRunner(t, 5000)
	labLoad(t, ctx, handlerFile(t, "uneven.js"))
	const n = 30
	got := labJS[[]randomFound](t, ctx, `(async () => {
  const out = [];
  for (let k = 1; k <= `+itoa(n)+`; k++) {
    const r = await labRunner.explore({ only: ['three-retries'], randomSchedules: k });
    out.push({ broke: r.broke, steps: r.steps || 0, tried: r.tried, schedule: r.schedule || [] });
  }
  return out;
})()`)
	require.Len(t, got, n)
	first, all := got[0], got[n-1]
	require.True(t, first.Broke, "uneven breaks in every schedule")
	assert.Equal(t, 1, first.Tried)
	assert.Equal(t, n, all.Tried, "every seeded schedule is played")
	for k := 1; k < n; k++ {
		require.True(t, got[k].Broke)
		assert.LessOrEqual(t, got[k].Steps, got[k-1].Steps, "one more schedule never makes the answer longer (k=%d)", k+1)
	}
	assert.Less(t, all.Steps, first.Steps, "the first break is not the shortest of %d", n)
	t.Logf("uneven: first schedule %d steps; shortest of %d: %d steps; per count: %v", first.Steps, n, all.Steps, stepsOf(got))
}

func stepsOf(rs []randomFound) []int {
	var out []int
	for _, r := range rs {
		out = append(out, r.Steps)
	}
	return out
}
