package lab_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/lab"
	"idemlab/store/sqlite"
)

// benchAttempts is the size of the day the benchmarks replay.
const benchAttempts = 100_000

// benchDay is the benchmarks' day: 200 customers, at least n attempts.
func benchDay(n int) lab.Day {
	p := lab.DefaultDayParams()
	p.Customers = 200
	return lab.GenerateDayOfSize(p, n)
}

// BenchmarkDayReplayInProcess replays a 100,000-attempt day at scoped
// against a SQLite file, checker included, and reports attempts per second.
func BenchmarkDayReplayInProcess(b *testing.B) {
	d := benchDay(benchAttempts)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		db, err := sqlite.OpenFile(filepath.Join(b.TempDir(), "day.db"))
		require.NoError(b, err)
		b.StartTimer()
		start := time.Now()
		tally, err := lab.ReplayDay(context.Background(), d, db, engine.MustPreset(engine.LevelScoped), lab.ReplayOptions{})
		elapsed := time.Since(start)
		b.StopTimer()
		require.NoError(b, err)
		require.True(b, tally.OK(), "%v", tally.Report.Broken())
		b.ReportMetric(float64(len(d.Attempts)), "attempts/day")
		b.ReportMetric(float64(len(d.Attempts))/elapsed.Seconds(), "attempts/s")
		b.ReportMetric(elapsed.Seconds(), "s/day")
		require.NoError(b, db.Close())
		b.StartTimer()
	}
}
