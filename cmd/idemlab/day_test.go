package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/internal/stores"
	"idemlab/lab"
	"idemlab/server"
)

func runCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestDayGenerateAndReplay(t *testing.T) {
	a, _, err := runCmd(t, "day", "generate", "--seed", "4", "--customers", "6", "--intents", "80")
	require.NoError(t, err)
	b, _, err := runCmd(t, "day", "generate", "--seed", "4", "--customers", "6", "--intents", "80")
	require.NoError(t, err)
	assert.Equal(t, a, b, "the same seed prints the same day")
	d, err := lab.ReadDay(strings.NewReader(a))
	require.NoError(t, err)
	assert.Equal(t, int64(4), d.Params.Seed)

	file := filepath.Join(t.TempDir(), "day.jsonl")
	require.NoError(t, os.WriteFile(file, []byte(a), 0o600))
	out, _, err := runCmd(t, "day", "replay", file, "--level", "naive")
	require.NoError(t, err)
	assert.Contains(t, out, "one-transfer-per-intent            BROKEN")
	assert.NotContains(t, out, "extra transfers                    0\n")

	out, _, err = runCmd(t, "day", "replay", "--level", "scoped", "--db", filepath.Join(t.TempDir(), "x.db"), file)
	require.NoError(t, err)
	assert.Contains(t, out, "extra transfers                    0\n")
	assert.Contains(t, out, "Every rule holds")

	out, _, err = runCmd(t, "day", "replay", file, "--policy", `{"fingerprint":"none"}`)
	require.NoError(t, err)
	assert.Contains(t, out, "different-request-never-succeeds   BROKEN")

	out, _, err = runCmd(t, "day", "replay", file, "--level", "ladder")
	require.NoError(t, err)
	lines := strings.Split(out, "\n")
	require.Greater(t, len(lines), 9, out)
	assert.Regexp(t, `^naive +\d+ +[1-9]\d* `, lines[3], "naive pays retries again")
	assert.Regexp(t, `^scoped +\d+ +0 +0 .* none$`, lines[8], "scoped: no duplicates, no broken rule")
}

func TestDayRefusesBadInput(t *testing.T) {
	for name, args := range map[string][]string{
		"no subcommand": {"day"},
		"unknown":       {"day", "dance"},
		"bad mix":       {"day", "generate", "--mix", "panic=1"},
		"bad rate":      {"day", "generate", "--loss-rate", "2"},
		"no file":       {"day", "replay"},
		"missing file":  {"day", "replay", filepath.Join(t.TempDir(), "nope.jsonl")},
		"unknown level": {"day", "replay", "-", "--level", "perfect"},
		"two files":     {"day", "replay", "a", "b"},
		"bad target":    {"day", "replay", "--target", "ftp://x", "-"},
		"grade no url":  {"grade"},
		"grade bad url": {"grade", "gopher://x"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := runCmd(t, args...)
			assert.Error(t, err)
		})
	}
}

func TestDayReplayOverHTTPAndGrade(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the grader's history stays in the test
	banks, err := stores.OpenBanks("", server.Config{})
	require.NoError(t, err)
	defer server.CloseBanks(banks)
	h, err := server.New(banks, stores.Options(server.Options{}))
	require.NoError(t, err)
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	a, _, err := runCmd(t, "day", "generate", "--seed", "5", "--customers", "6", "--intents", "60")
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "day.jsonl")
	require.NoError(t, os.WriteFile(file, []byte(a), 0o600))
	for range 2 { // twice: the fresh prefix keeps the runs apart
		out, _, err := runCmd(t, "day", "replay", file, "--target", srv.URL+"/bank/scoped")
		require.NoError(t, err)
		assert.Contains(t, out, "Every rule holds")
	}

	out, errOut, err := runCmd(t, "grade", srv.URL+"/bank/scoped", "--seed", "3", "--intents", "40")
	require.NoError(t, err)
	assert.Contains(t, out, "Verdict: every rule holds, and every check keeps the contract's promise.")
	assert.Empty(t, errOut, "no progress line when stderr is not a terminal")
	out, _, err = runCmd(t, "grade", "--json", srv.URL+"/bank/naive", "--intents", "40")
	require.ErrorContains(t, err, "one-transfer-per-intent")
	assert.Contains(t, out, `"ok": false`)
}

// TestDayReplayOverReplicas replays a day over two replicas of /bank/scoped
// (two listeners over one database): each retry reaches another replica
// than its first attempt, the tally names both, and every rule holds. A
// replica without the endpoint it belongs to is refused in words.
func TestDayReplayOverReplicas(t *testing.T) {
	banks, err := stores.OpenBanks("", server.Config{})
	require.NoError(t, err)
	defer server.CloseBanks(banks)
	var urls []string
	for range 2 {
		h, err := server.New(banks, stores.Options(server.Options{}))
		require.NoError(t, err)
		defer h.Close()
		srv := httptest.NewServer(h)
		defer srv.Close()
		urls = append(urls, srv.URL+"/bank/scoped")
	}
	a, _, err := runCmd(t, "day", "generate", "--seed", "5", "--customers", "6", "--intents", "60")
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "day.jsonl")
	require.NoError(t, os.WriteFile(file, []byte(a), 0o600))

	out, _, err := runCmd(t, "day", "replay", file, "--target", urls[0], "--replica", urls[1])
	require.NoError(t, err)
	assert.Contains(t, out, "Day replayed against "+urls[0]+" and "+urls[1])
	assert.Contains(t, out, "Every rule holds")

	_, _, err = runCmd(t, "day", "replay", file, "--replica", urls[1])
	require.ErrorContains(t, err, "name --target too")
}
