package handlers_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ncruces/go-sqlite3"

	"idemlab/lab"
	"idemlab/lab/grade"
	"idemlab/lab/handlers"
	"idemlab/lab/jsrun"
)

// served is a handler file running under lab/jsrun.
type served struct {
	base string // the base URL, on 127.0.0.1
	db   string // the bank's SQLite file
	h    *jsrun.Handler
}

// serve runs the handler named name with lab/jsrun on a fresh SQLite file,
// over real HTTP on 127.0.0.1.
func serve(t *testing.T, name string) served {
	t.Helper()
	src, err := handlers.Source(name)
	require.NoError(t, err)
	return serveSource(t, name, src)
}

// serveSource is serve for a handler file's source.
func serveSource(t *testing.T, name string, src []byte) served {
	t.Helper()
	db := filepath.Join(t.TempDir(), "bank.db")
	h, err := jsrun.Load(name+".js", src, jsrun.Options{DB: db, Log: testLog{t}})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); h.Close() })
	return served{base: srv.URL, db: db, h: h}
}

// payments says how many transfers the ledger holds, how many charges the
// payment network made and how many calls to pay it answered.
func (s served) payments(t *testing.T) (transfers, charges, calls int64) {
	t.Helper()
	c, err := sqlite3.Open(s.db)
	require.NoError(t, err)
	defer c.Close()
	st, _, err := c.Prepare("SELECT count(*) FROM transfers")
	require.NoError(t, err)
	require.True(t, st.Step())
	transfers = st.ColumnInt64(0)
	require.NoError(t, st.Close())
	charges, calls, err = s.h.Payments()
	require.NoError(t, err)
	return transfers, charges, calls
}

// testLog sends the handler's log to the test's.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// gradeOpts grades with a fixed seed and a short day, to keep -race quick.
func gradeOpts() grade.Options {
	d := lab.DefaultDayParams()
	d.Customers, d.Intents, d.TellerRate, d.SequenceKeyRate = 6, 30, 0.05, 0.3
	return grade.Options{Seed: 99, Day: d}
}

func gradeHandler(t *testing.T, name string) (grade.Report, served) {
	t.Helper()
	s := serve(t, name)
	rep, err := grade.Grade(context.Background(), s.base, gradeOpts())
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, rep.WriteText(&b))
	t.Log("\n" + b.String())
	for _, c := range rep.Checks {
		assert.Empty(t, c.Error, c.Name)
	}
	transfers, charges, calls := s.payments(t)
	t.Logf("%d transfers, %d charges, %d calls to pay", transfers, charges, calls)
	require.Positive(t, transfers)
	assert.GreaterOrEqual(t, calls, transfers, "every transfer calls pay")
	return rep, s
}

// TestRungsGradeAsTheLadder serves every reference handler with lab/jsrun
// and grades it: each breaks exactly the rules idemlab's level of the same
// name breaks, and scoped passes.
func TestRungsGradeAsTheLadder(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: grading six handlers over HTTP takes tens of seconds under -race (make test runs it)")
	}
	for _, r := range handlers.Rungs() {
		require.Equal(t, r == "scoped", len(handlers.RungBreaks(r)) == 0, "every rung but scoped has its expected breaks: %s", r)
	}
	for _, name := range handlers.Rungs() {
		t.Run(name, func(t *testing.T) {
			rep, s := gradeHandler(t, name)
			assert.ElementsMatch(t, handlers.RungBreaks(name), rep.Broken())
			assert.Equal(t, name == "scoped", rep.OK)
			if name == "scoped" {
				transfers, charges, _ := s.payments(t)
				assert.Equal(t, transfers, charges, "scoped passes its key to the network: one charge per transfer")
			}
		})
	}
}

// TestMistakesAreFound serves every mistake handler with lab/jsrun and
// grades it: the grader finds the rule the mistake breaks, names its cause,
// and blames nothing else.
func TestMistakesAreFound(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: grading eight handlers over HTTP takes tens of seconds under -race (make test runs it)")
	}
	for _, m := range handlers.Mistakes() {
		require.Contains(t, handlers.Rungs(), m.From)
		require.NotEmpty(t, m.What)
		require.NotEmpty(t, m.Breaks)
	}
	for _, m := range handlers.Mistakes() {
		t.Run(m.Name, func(t *testing.T) {
			rep, s := gradeHandler(t, m.Name)
			assert.False(t, rep.OK)
			broken := rep.Broken()
			for _, r := range m.Breaks {
				assert.Contains(t, broken, r)
			}
			assert.Subset(t, append(slices.Clone(m.Breaks), m.MayAlsoBreak...), broken, "nothing outside the mistake is blamed")
			var causes []string
			for _, f := range rep.Failures {
				if f.Cause != "" && !slices.Contains(causes, f.Cause) {
					causes = append(causes, f.Cause)
				}
			}
			assert.ElementsMatch(t, m.Causes, causes)
			if m.Name == "insert-or-ignore" {
				transfers, _, calls := s.payments(t)
				assert.Greater(t, calls, transfers, "a retry that carried on as new called the network again")
			}
		})
	}
}
