package grade_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"idemlab/internal/stores"
	"idemlab/lab"
	"idemlab/lab/grade"
	"idemlab/server"
)

// benchDay is the benchmarks' day: 200 customers, at least n attempts.
func benchDay(n int) lab.Day {
	p := lab.DefaultDayParams()
	p.Customers = 200
	return lab.GenerateDayOfSize(p, n)
}

// BenchmarkDayReplayHTTP replays a 100,000-attempt day over HTTP against
// idemlab's own server (SQLite files, loopback socket, one connection per
// request), accounts and balance reads included, and reports attempts per
// second.
func BenchmarkDayReplayHTTP(b *testing.B) {
	d := benchDay(100_000)
	for range b.N {
		b.StopTimer()
		banks, err := stores.OpenBanks(filepath.Join(b.TempDir(), "bank.db"), server.Config{})
		require.NoError(b, err)
		h, err := server.New(banks, stores.Options(server.Options{}))
		require.NoError(b, err)
		srv := httptest.NewServer(h)
		b.StartTimer()
		start := time.Now()
		run, err := grade.ReplayDayHTTP(context.Background(), d, srv.URL+"/bank/scoped", grade.DayOptions{})
		elapsed := time.Since(start)
		b.StopTimer()
		require.NoError(b, err)
		require.Zero(b, run.Errors)
		require.True(b, run.Tally.OK(), "%v", run.Tally.Report.Broken())
		b.ReportMetric(float64(len(d.Attempts)), "attempts/day")
		b.ReportMetric(float64(len(d.Attempts))/elapsed.Seconds(), "attempts/s")
		// Every account is also opened with PUT and read back with GET.
		b.ReportMetric(float64(len(d.Attempts)+2*len(d.Accounts))/elapsed.Seconds(), "requests/s")
		b.ReportMetric(elapsed.Seconds(), "s/day")
		srv.Close()
		h.Close()
		server.CloseBanks(banks)
		b.StartTimer()
	}
}
