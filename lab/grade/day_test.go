package grade_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/lab"
	"idemlab/lab/grade"
)

func httpDay() lab.Day {
	p := lab.DefaultDayParams()
	p.Seed, p.Customers, p.Intents = 11, 8, 150
	p.TellerRate, p.SequenceKeyRate = 0.03, 0.3
	return lab.GenerateDay(p)
}

func TestReplayDayHTTPAgainstIdemlab(t *testing.T) {
	base := bankServer(t)
	d := httpDay()
	want := map[string][]string{
		"naive":  {"one-transfer-per-intent", "different-request-never-succeeds", "replay-is-byte-identical"},
		"scoped": nil,
	}
	for level, broken := range want {
		t.Run(level, func(t *testing.T) {
			var calls atomic.Int64
			run, err := grade.ReplayDayHTTP(context.Background(), d.WithPrefix("t1-"), base+"/bank/"+level,
				grade.DayOptions{Progress: func(done, total int) { calls.Add(1) }})
			require.NoError(t, err)
			var b strings.Builder
			require.NoError(t, run.Tally.WriteText(&b))
			t.Log("\n" + b.String())
			assert.Zero(t, run.Errors)
			assert.EqualValues(t, len(d.Attempts), calls.Load())
			assert.True(t, run.Tally.RetentionKnown)
			assert.ElementsMatch(t, broken, run.Tally.Report.Broken())
			s := run.Tally.Report.Summary
			assert.Equal(t, s.Lost, run.Tally.Statuses[0], "every lost answer was cut, none failed")
			if level == "scoped" {
				assert.Zero(t, s.Duplicates)
				assert.Positive(t, s.Mismatches, "corrections get 422")
			} else {
				assert.Positive(t, s.Duplicates)
			}
		})
	}
}
