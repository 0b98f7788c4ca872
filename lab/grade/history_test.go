package grade_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/internal/stores"
	"idemlab/lab/grade"
	"idemlab/server"
)

// TestHistorySinceInProgress grades the rung before in-progress and
// in-progress itself, as a student's runs 3 and 4: the rules broken are
// the same, and still the comparison names what the change fixed.
func TestHistorySinceInProgress(t *testing.T) {
	// A payment that takes as long as a real one, as the contract asks:
	// without it, a retry never finds the first still running.
	banks, err := stores.OpenBanks("", server.Config{PaymentLatency: 30 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { server.CloseBanks(banks) })
	srv, err := server.New(banks, stores.Options(server.Options{}))
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	base := ts.URL
	h := grade.History{Dir: t.TempDir()}
	key := grade.HistoryKey(base + "/student/")
	last, err := h.Last(key)
	require.NoError(t, err)
	require.Nil(t, last, "no earlier run")

	before, err := grade.Grade(context.Background(), base+"/bank/fingerprint", gradeOpts())
	require.NoError(t, err)
	before.Since = grade.Compare(nil, before)
	assert.True(t, before.Since.First)
	require.NoError(t, h.Keep(key, before))

	after, err := grade.Grade(context.Background(), base+"/bank/in-progress", gradeOpts())
	require.NoError(t, err)
	require.Equal(t, before.Broken(), after.Broken(), "the same rules broken: the verdict line alone shows no progress")
	last, err = h.Last(grade.HistoryKey(base + "/student"))
	require.NoError(t, err)
	require.NotNil(t, last)
	assert.Equal(t, before.Run, last.Run)
	assert.Nil(t, last.Since, "the kept report holds no comparison of its own")

	s := grade.Compare(last, after)
	after.Since = s
	var b strings.Builder
	require.NoError(t, after.WriteText(&b))
	t.Log("\n" + b.String())
	assert.False(t, s.First)
	assert.Empty(t, s.Broke)
	assert.Contains(t, s.Fixed, grade.Change{Kind: "cause", Name: "completed-before-paid", Title: causeTitle(last, "completed-before-paid"),
		Rule: "replay-is-byte-identical", N: 3, Was: grade.Broken}, "in-progress stops the generic success while the transfer runs")
	assert.Contains(t, b.String(), "    cause completed-before-paid of rule 3, replay-is-byte-identical: no longer seen, though the rule is still broken (")
	var conflicts *grade.DayChange
	for i, d := range s.Day {
		if d.Name == "409 answers" {
			conflicts = &s.Day[i]
		}
	}
	require.NotNil(t, conflicts, "the day's 409s changed: %+v", s.Day)
	assert.Zero(t, conflicts.Was)
	assert.Positive(t, conflicts.Now)
	assert.Less(t, strings.Index(b.String(), "Since the last run"), strings.Index(b.String(), "Checks ("), "the comparison comes before the checks")
}

func TestHistoryKeyAndFiles(t *testing.T) {
	assert.Equal(t, grade.HistoryKey("http://a:1", "http://b:2/"), grade.HistoryKey("http://b:2", "http://a:1"), "replicas in any order are one endpoint")
	assert.NotEqual(t, grade.HistoryKey("http://a:1/bank/unique"), grade.HistoryKey("http://a:1/bank/scoped"))

	h := grade.History{Dir: filepath.Join(t.TempDir(), "deep", "grade")}
	require.NoError(t, os.MkdirAll(h.Dir, 0o700))
	require.NoError(t, os.WriteFile(h.Path("x"), []byte("{not json"), 0o600))
	_, err := h.Last("x")
	assert.Error(t, err, "a damaged file is an error, not a first run")
	require.NoError(t, os.WriteFile(h.Path("x"), []byte(`{"run":"g1","rules":[],"checks":[]}`), 0o600))
	_, err = h.Last("x")
	assert.Error(t, err, "a file without rules and checks is not a report")
}

func causeTitle(r *grade.Report, cause string) string {
	for _, f := range r.Failures {
		if f.Cause == cause {
			return f.Diagnosis
		}
	}
	return ""
}

// TestHistoryCompareRetentionUnpublished: a rule that held and can no
// longer be judged (the retention went unpublished) is news, not silence.
func TestHistoryCompareRetentionUnpublished(t *testing.T) {
	base := bankServer(t)
	before, err := grade.Grade(context.Background(), base+"/bank/scoped", gradeOpts())
	require.NoError(t, err)
	after := before
	after.Rules = append([]grade.RuleVerdict(nil), before.Rules...)
	after.Rules[6].Verdict = grade.Unknown
	s := grade.Compare(&before, after)
	require.Len(t, s.Broke, 1)
	assert.Equal(t, "retention-outlasts-retries", s.Broke[0].Name)
	assert.Equal(t, grade.Holds, s.Broke[0].Was)
	assert.Empty(t, s.Fixed)
	assert.Empty(t, s.Day, "the same run: the same day")
}
