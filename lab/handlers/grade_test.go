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

// rungExpectations is what grading each reference handler must find
// broken: the table "What idemlab's own levels fail" in
// docs/lab-contract.md, which idemlab's own levels are held to as well
// (lab/grade's ladderExpectations). Rule 8 is not judged by the grader.
var rungExpectations = map[string][]string{
	"naive":       {"one-transfer-per-intent", "different-request-never-succeeds", "replay-is-byte-identical"},
	"unique":      {"different-request-never-succeeds", "replay-is-byte-identical", "completion-has-its-transfer", "customers-see-own-responses", "retention-outlasts-retries"},
	"fingerprint": {"replay-is-byte-identical", "completion-has-its-transfer", "customers-see-own-responses", "retention-outlasts-retries"},
	"in-progress": {"replay-is-byte-identical", "completion-has-its-transfer", "customers-see-own-responses", "retention-outlasts-retries"},
	"replay":      {"completion-has-its-transfer", "customers-see-own-responses", "retention-outlasts-retries"},
	"scoped":      nil,
}

// TestRungsGradeAsTheLadder serves every reference handler with lab/jsrun
// and grades it: each breaks exactly the rules idemlab's level of the same
// name breaks, and scoped passes.
func TestRungsGradeAsTheLadder(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: grading six handlers over HTTP takes tens of seconds under -race (make test runs it)")
	}
	require.ElementsMatch(t, handlers.Rungs, keys(rungExpectations), "one expectation per rung")
	for _, name := range handlers.Rungs {
		t.Run(name, func(t *testing.T) {
			rep, s := gradeHandler(t, name)
			assert.ElementsMatch(t, rungExpectations[name], rep.Broken())
			assert.Equal(t, name == "scoped", rep.OK)
			if name == "scoped" {
				transfers, charges, _ := s.payments(t)
				assert.Equal(t, transfers, charges, "scoped passes its key to the network: one charge per transfer")
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// mistakeExpectations is what grading each mistake handler must find: the
// rules it breaks (target; allowed, when a race may break one more), and
// the causes the grader names for them. Each mistake is scoped with one
// idea changed, so nothing else breaks.
var mistakeExpectations = map[string]struct {
	target, allowed, causes []string
}{
	// A race: simultaneous retries both look before either inserts. A
	// retry that lands between two rows may also get the other's answer.
	"look-then-insert": {target: []string{"one-transfer-per-intent"},
		allowed: []string{"one-transfer-per-intent", "replay-is-byte-identical"}},
	// The owner check saves the ledger (the retry's completion finds no
	// claim of its own and rolls back), so rule 1 holds and the retry gets
	// 409 instead of the first answer. The grader, seeing the reordered
	// retry refused, names raw-bytes-fingerprint; the doubled charge
	// (rule 8) is out of its sight, and asserted below from the network.
	"insert-or-ignore":      {target: []string{"replay-is-byte-identical"}},
	"completed-first":       {target: []string{"replay-is-byte-identical"}, causes: []string{"completed-before-paid"}},
	"raw-bytes-fingerprint": {target: []string{"replay-is-byte-identical"}, causes: []string{"raw-bytes-fingerprint"}},
	"rerendered-replay":     {target: []string{"replay-is-byte-identical"}, causes: []string{"recomputed-replay"}},
	"global-keys": {target: []string{"customers-see-own-responses", "completion-has-its-transfer"},
		causes: []string{"global-keys"}},
	"short-retention": {target: []string{"retention-outlasts-retries"}, causes: []string{"short-retention"}},
	"release-on-402":  {target: []string{"replay-is-byte-identical"}, causes: []string{"refusal-not-stored"}},
}

// TestMistakesAreFound serves every mistake handler with lab/jsrun and
// grades it: the grader finds the rule the mistake breaks, names its cause,
// and blames nothing else.
func TestMistakesAreFound(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: grading eight handlers over HTTP takes tens of seconds under -race (make test runs it)")
	}
	var names []string
	for _, m := range handlers.Mistakes {
		names = append(names, m.Name)
		require.Contains(t, handlers.Rungs, m.From)
		require.NotEmpty(t, m.What)
	}
	require.ElementsMatch(t, names, keys(mistakeExpectations), "one expectation per mistake")
	for _, m := range handlers.Mistakes {
		t.Run(m.Name, func(t *testing.T) {
			want := mistakeExpectations[m.Name]
			rep, s := gradeHandler(t, m.Name)
			assert.False(t, rep.OK)
			broken := rep.Broken()
			for _, r := range want.target {
				assert.Contains(t, broken, r)
			}
			allowed := want.allowed
			if allowed == nil {
				allowed = want.target
			}
			assert.Subset(t, allowed, broken, "nothing outside the mistake is blamed")
			var causes []string
			for _, f := range rep.Failures {
				if f.Cause != "" && !slices.Contains(causes, f.Cause) {
					causes = append(causes, f.Cause)
				}
			}
			if want.causes != nil {
				assert.ElementsMatch(t, want.causes, causes)
			}
			if m.Name == "insert-or-ignore" {
				transfers, _, calls := s.payments(t)
				assert.Greater(t, calls, transfers, "a retry that carried on as new called the network again")
			}
		})
	}
}
