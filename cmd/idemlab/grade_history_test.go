package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/internal/stores"
	"idemlab/lab/grade"
	"idemlab/server"
)

// init keeps every grade this test binary runs out of the user's own
// cache folder, tests that do not set XDG_CACHE_HOME themselves included:
// a test must not change what the student's next real run compares with.
func init() {
	os.Setenv("XDG_CACHE_HOME", filepath.Join(os.TempDir(), "idemlab-test-cache"))
}

// studentEndpoint serves, at the root of one loopback URL, whichever level
// of idemlab's bank the student's code is "at" right now: the student
// changes their code between runs and grades the same URL again.
func studentEndpoint(t *testing.T) (url string, level *atomic.Value) {
	t.Helper()
	banks, err := stores.OpenBanks("", server.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { server.CloseBanks(banks) })
	h, err := server.New(banks, stores.Options(server.Options{}))
	require.NoError(t, err)
	t.Cleanup(h.Close)
	level = &atomic.Value{}
	level.Store("unique")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.URL.Path = "/bank/" + level.Load().(string) + strings.TrimSuffix(r.URL.Path, "/")
		r.URL.RawPath = ""
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, level
}

// sinceBlock is the report's comparison: the lines before the retention.
func sinceBlock(t *testing.T, out string) string {
	t.Helper()
	i, j := strings.Index(out, "Since the last run"), strings.Index(out, "Published retention")
	require.True(t, i > 0 && j > i, "the comparison comes first, before the checks:\n%s", out)
	return out[i:j]
}

func TestGradeSinceTheLastRun(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	url, level := studentEndpoint(t)
	grade := func(args ...string) string {
		out, _, _ := runCmd(t, append([]string{"grade", url, "--seed", "7", "--intents", "40"}, args...)...)
		return out
	}

	first := sinceBlock(t, grade())
	assert.Equal(t, "Since the last run: there is no earlier run of this endpoint to compare with.\n\n", first)

	level.Store("replay") // the student stores the first answer's bytes and fingerprints
	second := sinceBlock(t, grade())
	assert.Contains(t, second, "  fixed:\n")
	assert.Contains(t, second, "    rule 2, different-request-never-succeeds: broken → holds\n")
	assert.Contains(t, second, "    rule 3, replay-is-byte-identical: broken → holds\n")
	assert.Contains(t, second, "    check retry: FAIL → ok (")
	assert.Contains(t, second, "    check correction: FAIL → ok (")
	assert.Contains(t, second, "newly broken: none\n")
	assert.Regexp(t, `day: .*422 answers \d+ → \d+`, second, "the day now refuses corrections")

	level.Store("naive") // a regression: the key table is gone
	third := sinceBlock(t, grade())
	fixed, broke, ok := strings.Cut(third, "  newly broken:\n")
	require.True(t, ok, third)
	assert.Contains(t, fixed, "    rule 4, completion-has-its-transfer: broken → holds\n")
	assert.Contains(t, fixed, "    rule 5, customers-see-own-responses: broken → holds\n")
	assert.Contains(t, fixed, "    rule 7, retention-outlasts-retries: broken → holds\n")
	assert.Contains(t, broke, "    rule 1, one-transfer-per-intent: holds → broken\n")
	assert.Contains(t, broke, "    rule 2, different-request-never-succeeds: holds → broken\n")
	assert.Contains(t, broke, "    check together: ok → FAIL (", "together paid twice")
	assert.Regexp(t, `day: extra transfers 0 → [1-9]`, third)

	// --no-history neither compares nor keeps: the next run still compares
	// with the naive one.
	out := grade("--no-history")
	assert.NotContains(t, out, "Since the last run")
	level.Store("scoped")
	fourth := sinceBlock(t, grade())
	assert.Contains(t, fourth, "    rule 1, one-transfer-per-intent: broken → holds\n")
	assert.Contains(t, fourth, "newly broken: none")
}

func TestGradeCompareWithAReport(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	banks, err := stores.OpenBanks("", server.Config{})
	require.NoError(t, err)
	defer server.CloseBanks(banks)
	h, err := server.New(banks, stores.Options(server.Options{}))
	require.NoError(t, err)
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	out, _, err := runCmd(t, "grade", "--json", srv.URL+"/bank/unique", "--intents", "40", "--no-history")
	require.Error(t, err, "unique breaks rules")
	file := filepath.Join(t.TempDir(), "unique.json")
	require.NoError(t, os.WriteFile(file, []byte(out), 0o600))
	prev, err := grade.ReadReport(file)
	require.NoError(t, err, "the JSON report carries what a comparison needs")
	assert.Nil(t, prev.Since, "--no-history: no comparison in the report")

	out, _, err = runCmd(t, "grade", srv.URL+"/bank/scoped", "--intents", "40", "--compare", file)
	require.NoError(t, err)
	since := sinceBlock(t, out)
	assert.Contains(t, since, "Since the last run (run "+prev.Run)
	assert.Contains(t, since, srv.URL+"/bank/unique")
	for _, rule := range []string{"different-request-never-succeeds", "replay-is-byte-identical", "completion-has-its-transfer", "customers-see-own-responses", "retention-outlasts-retries"} {
		assert.Regexp(t, "    rule [0-9], "+rule+": broken → holds\n", since)
	}
	assert.Contains(t, since, "    check other-customer: FAIL → ok (")
	assert.Contains(t, since, "newly broken: none")

	// The same comparison the other way, as JSON: what scoped had and
	// unique lacks is newly broken.
	scopedJSON, _, err := runCmd(t, "grade", "--json", srv.URL+"/bank/scoped", "--intents", "40", "--no-history")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, []byte(scopedJSON), 0o600))
	out, _, err = runCmd(t, "grade", "--json", srv.URL+"/bank/unique", "--intents", "40", "--compare", file)
	require.Error(t, err)
	require.NoError(t, os.WriteFile(file, []byte(out), 0o600))
	rep, err := grade.ReadReport(file)
	require.NoError(t, err)
	require.NotNil(t, rep.Since)
	assert.False(t, rep.Since.First)
	assert.Empty(t, rep.Since.Fixed)
	var broke []string
	for _, c := range rep.Since.Broke {
		if c.Kind == "rule" {
			broke = append(broke, c.Name)
		}
	}
	assert.ElementsMatch(t, []string{"different-request-never-succeeds", "replay-is-byte-identical", "completion-has-its-transfer", "customers-see-own-responses", "retention-outlasts-retries"}, broke)

	for name, args := range map[string][]string{
		"missing file": {"--compare", filepath.Join(t.TempDir(), "nope.json")},
		"not a report": {"--compare", writeFile(t, `{"target":"x"}`)},
		"both":         {"--compare", file, "--no-history"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := runCmd(t, append([]string{"grade", srv.URL + "/bank/scoped"}, args...)...)
			assert.Error(t, err)
		})
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.json")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}
