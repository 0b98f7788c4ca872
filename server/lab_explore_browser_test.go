package server_test

// The explorer's answers (web/lab/runner.js explore): the shortest
// counterexample it finds among the three retries' random schedules.

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/lab/handlers"
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
	t.Parallel()
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

// replayed is a found schedule played back on the bench, pick by pick,
// as the lab page's Replay button does.
type replayed struct {
	Found struct {
		Scenario      string   `json:"scenario"`
		Steps         int      `json:"steps"`
		ReplayedSteps int      `json:"replayedSteps"`
		Schedule      []string `json:"schedule"`
		Broken        []string `json:"broken"`
	} `json:"found"`
	Bench struct {
		Done     bool     `json:"done"`
		Steps    int      `json:"steps"`
		Schedule []string `json:"schedule"`
		Broken   []string `json:"broken"`
		Waits    int      `json:"waits"`
	} `json:"bench"`
}

// TestLabExploreScheduleReplays: the schedule the explorer hands out is
// one pick per step, and played back (the explorer's own replay, and the
// bench's, with a Busy the handler's as when it was found) it takes the
// same steps to the same verdict. The three retries wait for the write
// lock: a pick that waited is no step, and is not in the schedule.
func TestLabExploreScheduleReplays(t *testing.T) {
	t.Parallel()
	ctx, _ := openLabRunner(t, 5000)
	for _, name := range []string{"naive.js", "look-then-insert.js", "uneven.js"} {
		labLoad(t, ctx, handlerFile(t, name))
		got := labJS[replayed](t, ctx, `(async () => {
  const r = await labRunner.explore({ only: ['three-retries'], randomSchedules: 30 });
  const sc = (await labRunner.scenarios()).find((s) => s.name === r.scenario);
  let s = await labRunner.start(sc);
  for (const pick of r.schedule) s = pick.startsWith('crash:') ? await labRunner.inject(pick.slice(6), 'crash') : await labRunner.step(pick, true);
  return {
    found: { scenario: r.scenario, steps: r.steps, replayedSteps: r.replayedSteps, schedule: r.schedule, broken: r.verdict.broken },
    bench: { done: s.done, steps: s.steps, schedule: s.schedule, broken: s.verdict ? s.verdict.broken : [],
      waits: s.trace.filter((e) => e.phase === 'wait').length },
  };
})()`)
		f, b := got.Found, got.Bench
		require.Equal(t, "three-retries", f.Scenario, name)
		assert.Len(t, f.Schedule, f.Steps, "%s: one pick per step", name)
		assert.Equal(t, f.Steps, f.ReplayedSteps, "%s: the explorer's replay", name)
		assert.True(t, b.Done, name)
		assert.Equal(t, f.Steps, b.Steps, "%s: the bench's replay", name)
		assert.Equal(t, f.Schedule, b.Schedule, name)
		assert.Zero(t, b.Waits, "%s: no pick of a found schedule waits", name)
		assert.NotEmpty(t, f.Broken, name)
		assert.Equal(t, f.Broken, b.Broken, "%s: the same verdict", name)
		t.Logf("%s: %d steps, %v", name, f.Steps, f.Schedule)
	}
}

// TestLabExploreGraderScenarios: the scenarios the grader tells that the
// explorer lacked are in scenarios(), so explore() and the lab page's
// list have them. On the bench, scoped answers each as the grader
// expects, and the lab's own write (setBalance) happened before the
// retry: alice topped up, dave's account opened. The explorer breaks
// the handlers that only these scenarios caught.
func TestLabExploreGraderScenarios(t *testing.T) {
	t.Parallel()
	ctx, _ := openLabRunner(t, 5000)
	src, err := handlers.Source("scoped")
	require.NoError(t, err)
	labLoad(t, ctx, string(src))
	type played struct {
		Done     bool             `json:"done"`
		Statuses []int            `json:"statuses"`
		Accounts map[string]int64 `json:"accounts"`
		Bodies   []string         `json:"bodies"`
		Broken   []string         `json:"broken"`
	}
	want := map[string][]int{
		"other-customer-same-body":  {201, 201},
		"refusal-then-top-up":       {402, 402},
		"unknown-payee-then-opened": {404, 404},
		"reordered-after-answer":    {201, 201},
	}
	got := labJS[map[string]played](t, ctx, `(async () => {
  const out = {};
  for (const sc of await labRunner.scenarios()) {
    if (!`+quoteJS(strings.Join(slices.Collect(maps.Keys(want)), ","))+`.split(',').includes(sc.name)) continue;
    let s = await labRunner.start(sc);
    for (let i = 0; i < 200 && !s.done; i++) s = await labRunner.step(s.attempts.find((a) => a.state === 'parked').id);
    out[sc.name] = { done: s.done, statuses: s.attempts.map((a) => (a.answer ? a.answer.status : 0)),
      bodies: s.attempts.map((a) => (a.answer ? a.answer.body : '')),
      accounts: Object.fromEntries(s.db.tables.accounts.map((r) => [r.id, r.balance])), broken: s.verdict ? s.verdict.broken : null };
  }
  return out;
})()`)
	require.Len(t, got, len(want))
	for name, statuses := range want {
		p := got[name]
		assert.True(t, p.Done, name)
		assert.Equal(t, statuses, p.Statuses, name)
		assert.Empty(t, p.Broken, "%s: scoped keeps every rule", name)
	}
	assert.Equal(t, int64(2000000), got["refusal-then-top-up"].Accounts["alice"], "alice was topped up before the retry")
	assert.Equal(t, got["refusal-then-top-up"].Bodies[0], got["refusal-then-top-up"].Bodies[1], "the 402, replayed")
	assert.Contains(t, got["unknown-payee-then-opened"].Accounts, "dave", "dave's account was opened before the retry")
	assert.NotEqual(t, got["other-customer-same-body"].Bodies[0], got["other-customer-same-body"].Bodies[1], "cust-2's own transfer")

	for _, c := range []struct{ handler, scenario, rule string }{
		{"release-on-402", "refusal-then-top-up", "replay-is-byte-identical"},
		{"fingerprint", "other-customer-same-body", "customers-see-own-responses"},
	} {
		src, err := handlers.Source(c.handler)
		require.NoError(t, err)
		labLoad(t, ctx, string(src))
		r := labJS[explored](t, ctx, `labRunner.explore({only: [`+quoteJS(c.scenario)+`]})`)
		require.True(t, r.Broke, "%s in %s", c.handler, c.scenario)
		assert.Contains(t, r.Verdict.Broken, c.rule, c.handler)
		t.Logf("%s: broken in %s in %d steps: %v", c.handler, c.scenario, r.Steps, r.Verdict.Broken)
	}
}
