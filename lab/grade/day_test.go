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

// TestDayTallyLaysRefusalsAtTheirCause replays the day of `idemlab day
// generate --seed 7 --customers 50 --intents 2000`, where customers that
// number their keys order-1, order-2, … share key strings: against
// correctly scoped endpoints (idemlab's scoped, and the Python example
// outside Go) no refusal is laid at another customer's key, though the
// first request of an impatient press is now and then refused 409 because
// its own overlapping retry got there first; against global keys the line
// is there.
func TestDayTallyLaysRefusalsAtTheirCause(t *testing.T) {
	p := lab.DefaultDayParams()
	// 500 wishes: the global keys still refuse dozens of first requests
	// for another customer's key, and the Python bank, which serves one
	// request at a time, replays them in seconds (2,000 took 32 s of the
	// package's time under -race).
	p.Seed, p.Customers, p.Intents = 7, 50, 500
	d := lab.GenerateDay(p)
	bank := bankServer(t)
	cases := []struct {
		name   string
		base   func(t *testing.T) string
		global bool
	}{
		{"scoped", func(*testing.T) string { return bank + "/bank/scoped" }, false},
		{"python", func(t *testing.T) string { return pythonBank(t, "") }, false},
		{"replay: global keys", func(*testing.T) string { return bank + "/bank/replay" }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run, err := grade.ReplayDayHTTP(context.Background(), d.WithPrefix("t7-"), c.base(t), grade.DayOptions{})
			require.NoError(t, err)
			var b strings.Builder
			require.NoError(t, run.Tally.WriteText(&b))
			t.Log("\n" + b.String())
			if c.global {
				assert.Positive(t, run.Tally.ForeignKeyRefusals)
				assert.Contains(t, b.String(), "refused: another customer's key")
				return
			}
			assert.Zero(t, run.Tally.ForeignKeyRefusals, "%v", run.Tally.FirstRefusals)
			assert.NotContains(t, b.String(), "another customer")
			assert.Zero(t, run.Tally.FirstRefusals[lab.RefusedOtherCustomersKey])
			assert.Empty(t, run.Tally.Report.Broken())
		})
	}
}
