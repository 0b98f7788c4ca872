package grade_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/lab"
	"idemlab/lab/grade"
)

// gradeOpts grades with a fixed seed and a short day, to keep -race quick.
func gradeOpts() grade.Options {
	d := lab.DefaultDayParams()
	d.Customers, d.Intents, d.TellerRate, d.SequenceKeyRate = 6, 60, 0.05, 0.3
	return grade.Options{Seed: 99, Day: d}
}

func TestGradeIdemlabLadder(t *testing.T) {
	base := bankServer(t)
	for _, level := range engine.Levels() {
		t.Run(level, func(t *testing.T) {
			rep, err := grade.Grade(context.Background(), base+"/bank/"+level, gradeOpts())
			require.NoError(t, err)
			var b strings.Builder
			require.NoError(t, rep.WriteText(&b))
			t.Log("\n" + b.String())
			assert.ElementsMatch(t, ladderExpectations[level], rep.Broken())
			assert.Equal(t, level == engine.LevelScoped, rep.OK)
			for _, c := range rep.Checks {
				assert.Empty(t, c.Error, c.Name)
			}
			for _, f := range rep.Failures {
				if f.Check == "other-customer" {
					// The lines reproduce the failure only with the first
					// customer's use of the key before it.
					assert.Contains(t, strings.Join(f.Curl, "\n"), "X-Customer-ID: "+rep.Run+"-shop-a'", f.Message)
				}
			}
		})
	}
}
