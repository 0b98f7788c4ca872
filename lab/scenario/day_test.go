package scenario_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/lab"
	"idemlab/lab/scenario"
)

// TestDayBreaksNaiveAndHoldsScoped replays one small generated day at the
// bottom and the top of the ladder.
func TestDayBreaksNaiveAndHoldsScoped(t *testing.T) {
	params, _, err := scenario.ParseDayRequest([]byte(`{"level":"naive","day":{"seed":7,"customers":12,"intents":150}}`))
	require.NoError(t, err)
	if runtime.GOOS == "js" {
		params.Intents = 50 // SQLite is interpreted under WebAssembly in Node
	}
	calls := 0
	naive, err := scenario.RunDay(context.Background(), scenario.Memory, params, engine.MustPreset(engine.LevelNaive), func(done, total int) {
		calls++
		assert.LessOrEqual(t, done, total)
	})
	require.NoError(t, err)
	assert.Positive(t, calls, "progress is reported")
	assert.False(t, naive.Report.Rule(lab.RuleOneTransfer).OK)
	assert.Positive(t, naive.Report.Summary.PaidTwice)

	scoped, err := scenario.RunDay(context.Background(), scenario.Memory, params, engine.MustPreset(engine.LevelScoped), nil)
	require.NoError(t, err)
	assert.True(t, scoped.Report.OK, "%v", scoped.Report.Broken())
	assert.Zero(t, scoped.Report.Summary.Duplicates)
	assert.Equal(t, naive.Attempts, scoped.Attempts, "the same day")
}

func TestDayRequestErrors(t *testing.T) {
	for _, src := range []string{`{"level":"naive"}`, `{"level":"nope","day":{}}`, `{"level":"naive","day":{"customers":1}}`, `[`} {
		_, _, err := scenario.ParseDayRequest([]byte(src))
		assert.Error(t, err, src)
	}
	_, err := scenario.RunDay(context.Background(), scenario.Memory, lab.DayParams{Intents: lab.MaxTaughtDayIntents + 1}, engine.MustPreset(engine.LevelNaive), nil)
	assert.Error(t, err)
}
