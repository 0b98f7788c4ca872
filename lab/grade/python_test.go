package grade_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/internal/endpointtest"
	"idemlab/lab/grade"
)

// slowPayment runs bank.py with its payment step made to take a while, as
// a real payment network call does: the script imports bank.py and wraps
// its execute function, then runs its main. Without the wait, this
// endpoint finishes a transfer in about a millisecond, and a bug that
// shows only while a transfer is in flight (no in-progress state) is
// rarely visible from outside.
const slowPayment = `
import importlib.util, sys, time
spec = importlib.util.spec_from_file_location("bank", sys.argv[1])
bank = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bank)
pay = bank.execute
def slow(conn, t):
    time.sleep(0.02)
    return pay(conn, t)
bank.execute = slow
sys.argv = [sys.argv[1]] + sys.argv[2:]
bank.main()
`

// pythonBank starts docs/examples/bank.py, the lab contract written the way
// a student writes it (http.server and sqlite3), with one planted bug or
// none and a 20 ms payment call, and returns its base URL.
func pythonBank(t *testing.T, bug string) string {
	t.Helper()
	args := []string{"-c", slowPayment, filepath.Join("..", "..", "docs", "examples", "bank.py"),
		"--port", "0", "--db", filepath.Join(t.TempDir(), "bank.db")}
	if bug != "" {
		args = append(args, "--bug", bug)
	}
	return endpointtest.Start(t, "python3", args...)
}

// TestGradePythonEndpoints grades the Python endpoint correct and with each
// of its planted bugs: the correct one passes, each bug is named by its
// rule, and nothing outside what that bug can break is blamed.
func TestGradePythonEndpoints(t *testing.T) {
	cases := []struct {
		bug     string
		target  []string
		allowed []string
	}{
		{"", nil, nil},
		{"key-only", []string{"different-request-never-succeeds"}, nil},
		// A corrected amount sent with the first request may see no key
		// either, and be paid too (rule 2).
		{"check-then-insert", []string{"one-transfer-per-intent"}, []string{"one-transfer-per-intent", "replay-is-byte-identical", "different-request-never-succeeds"}},
		{"raw-bytes", []string{"replay-is-byte-identical"}, nil},
		{"no-in-progress", []string{"replay-is-byte-identical"}, []string{"replay-is-byte-identical", "completion-has-its-transfer"}},
		{"recompute", []string{"replay-is-byte-identical"}, nil},
		{"global-keys", []string{"customers-see-own-responses"}, []string{"customers-see-own-responses", "completion-has-its-transfer"}},
	}
	for _, c := range cases {
		name := c.bug
		if name == "" {
			name = "correct"
		}
		t.Run(name, func(t *testing.T) {
			// Each bank is its own process, and most of a run is spent waiting
			// on its answers, so the seven run side by side.
			t.Parallel()
			o := gradeOpts()
			o.Day.Intents = 30 // the Python endpoint answers in tens of milliseconds
			rep, err := grade.Grade(context.Background(), pythonBank(t, c.bug), o)
			require.NoError(t, err)
			var b strings.Builder
			require.NoError(t, rep.WriteText(&b))
			t.Log("\n" + b.String())
			for _, ch := range rep.Checks {
				assert.Empty(t, ch.Error, ch.Name)
			}
			if c.bug == "" {
				assert.True(t, rep.OK, "%v", rep.Broken())
				return
			}
			assert.False(t, rep.OK)
			for _, r := range c.target {
				assert.Contains(t, rep.Broken(), r)
			}
			allowed := c.allowed
			if allowed == nil {
				allowed = c.target
			}
			assert.Subset(t, allowed, rep.Broken())
		})
	}
}
