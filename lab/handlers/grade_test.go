package handlers_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/lab"
	"idemlab/lab/grade"
	"idemlab/lab/handlers"
	"idemlab/lab/jsrun"
)

// serve runs the handler named name with lab/jsrun on a fresh SQLite file,
// over real HTTP on 127.0.0.1, and returns its base URL and the handler.
func serve(t *testing.T, name string) (string, *jsrun.Handler) {
	t.Helper()
	src, err := handlers.Source(name)
	require.NoError(t, err)
	dir := t.TempDir()
	h, err := jsrun.Load(name+".js", src, jsrun.Options{DB: filepath.Join(dir, "bank.db"), Log: testLog{t}})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); h.Close() })
	return srv.URL, h
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

func gradeHandler(t *testing.T, name string) grade.Report {
	t.Helper()
	base, _ := serve(t, name)
	rep, err := grade.Grade(context.Background(), base, gradeOpts())
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, rep.WriteText(&b))
	t.Log("\n" + b.String())
	for _, c := range rep.Checks {
		assert.Empty(t, c.Error, c.Name)
	}
	return rep
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
			rep := gradeHandler(t, name)
			assert.ElementsMatch(t, rungExpectations[name], rep.Broken())
			assert.Equal(t, name == "scoped", rep.OK)
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
