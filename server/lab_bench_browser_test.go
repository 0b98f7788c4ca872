package server_test

// The lab's explorer in Chromium: schedules a second.

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkLabExplorer measures the lab's explorer in headless Chromium:
// schedules a second on two attempts of the naive handler
// (web/lab/testdata/naive.js, the simultaneous retries), each schedule
// what the explorer does for one (reset the database, start both
// attempts, step them to their answers in the schedule's order, judge
// with the checker in Go). The budget is at least 1,000 a
// second. It reports the median of five runs of 2,000 schedules after a
// warm-up (schedules/s) and the slowest (schedules/s-min).
func BenchmarkLabExplorer(b *testing.B) {
	ctx, _ := openLabRunner(b, 60000)
	labLoad(b, ctx, handlerFile(b, "naive.js"))
	labJS[map[string]any](b, ctx, `labRunner.measure('simultaneous-retries', 500)`) // the JIT warms up
	var rates []float64
	for i := 0; i < max(b.N, 5); i++ {
		got := labJS[struct {
			PerSecond float64 `json:"perSecond"`
		}](b, ctx, `labRunner.measure('simultaneous-retries', 2000)`)
		require.Positive(b, got.PerSecond)
		rates = append(rates, got.PerSecond)
	}
	sortFloats(rates)
	b.ReportMetric(rates[len(rates)/2], "schedules/s")
	b.ReportMetric(rates[0], "schedules/s-min")
}

func sortFloats(v []float64) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}
