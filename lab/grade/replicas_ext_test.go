package grade_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/internal/endpointtest"
	"idemlab/lab"
	"idemlab/lab/grade"
	"idemlab/store/sqlite"
)

// pythonReplicas starts docs/examples/bank.py twice, two processes on two
// ports over one SQLite file (WAL mode), with the same planted bug or none
// and a 20 ms payment call, and returns their base URLs.
func pythonReplicas(t *testing.T, bug string) []string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "bank.db")
	var bases []string
	for range 2 {
		args := []string{"-c", slowPayment, filepath.Join("..", "..", "docs", "examples", "bank.py"), "--port", "0", "--db", db}
		if bug != "" {
			args = append(args, "--bug", bug)
		}
		bases = append(bases, endpointtest.Start(t, "python3", args...))
	}
	return bases
}

// gradeReplicas grades bases[0] with the others as its replicas and logs
// the report.
func gradeReplicas(t *testing.T, bases []string, intents int) grade.Report {
	t.Helper()
	o := gradeOpts()
	o.Day.Intents = intents
	o.Replicas = bases[1:]
	rep, err := grade.Grade(context.Background(), bases[0], o)
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, rep.WriteText(&b))
	t.Log("\n" + b.String())
	for _, ch := range rep.Checks {
		assert.Empty(t, ch.Error, ch.Name)
	}
	return rep
}

// assertInProcessLock checks that rule 1 broke with the in-process-lock
// cause and its fix, on failures whose attempts reached both replicas.
func assertInProcessLock(t *testing.T, rep grade.Report) {
	t.Helper()
	assert.Contains(t, rep.Broken(), lab.RuleOneTransfer.Name)
	var v grade.RuleVerdict
	for _, r := range rep.Rules {
		if r.Name == lab.RuleOneTransfer.Name {
			v = r
		}
	}
	assert.Equal(t, []string{"in-process-lock"}, v.Causes, "rule 1's causes")
	assert.Contains(t, v.Fix, "UNIQUE constraint")
	assert.Contains(t, v.Fix, "SELECT … FOR UPDATE")
	found := false
	for _, f := range rep.Failures {
		if f.Rule != lab.RuleOneTransfer.Name {
			continue
		}
		found = true
		assert.Equal(t, "in-process-lock", f.Cause, f.Message)
		assert.Contains(t, f.Message, "its attempts reached replicas 1 (")
		assert.Contains(t, f.Message, "replica 1 alone made one transfer per intent")
		curl := strings.Join(f.Curl, "\n")
		assert.Contains(t, curl, rep.Replicas[0]+"/transfers", "the lines send to the first replica…")
		assert.Contains(t, curl, rep.Replicas[1]+"/transfers", "…and to the second, as the grader did")
	}
	assert.True(t, found, "a rule 1 failure")
}

// TestGradeReplicasPython grades the Python endpoint as two processes on
// one SQLite file. The correct one passes over two replicas; the two that
// guard their keys in the process's memory (a per-key lock around
// check-then-insert, a dict of keys) fail rule 1 with the cause
// in-process-lock; and the memory-lock one passes over one replica, which
// is what tells its failure apart from check-then-insert's.
func TestGradeReplicasPython(t *testing.T) {
	cases := []struct {
		name, bug string
		replicas  int
		ok        bool
		allowed   []string // the rules it may break besides rule 1
	}{
		{"correct", "", 2, true, nil},
		// Both replicas pay, and each answers its own transfer.
		{"memory-lock", "memory-lock", 2, false, []string{"replay-is-byte-identical", "completion-has-its-transfer", "different-request-never-succeeds"}},
		{"memory-lock on one replica", "memory-lock", 1, true, nil},
		// A cache miss on the other replica pays again and answers anew, a
		// corrected amount included.
		{"memory-cache", "memory-cache", 2, false, []string{"different-request-never-succeeds", "replay-is-byte-identical", "completion-has-its-transfer"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bases := pythonReplicas(t, c.bug)[:c.replicas]
			rep := gradeReplicas(t, bases, 30)
			if c.ok {
				assert.True(t, rep.OK, "%v", rep.Broken())
				return
			}
			assert.False(t, rep.OK)
			assertInProcessLock(t, rep)
			assert.Subset(t, append([]string{lab.RuleOneTransfer.Name}, c.allowed...), rep.Broken())
		})
	}
}

// TestGradeReplicasIdemlabEngines grades idemlab's own engine as two app
// servers (two engines, each with its own memory, on two sockets) over one
// SQLite file: the scoped level passes; lesson 8's key cache in each
// server's memory, and its per-key lock in memory around check-then-insert,
// fail rule 1 with the cause in-process-lock.
func TestGradeReplicasIdemlabEngines(t *testing.T) {
	with := func(f func(*engine.Policy)) engine.Policy {
		p := engine.MustPreset(engine.LevelScoped)
		f(&p)
		return p
	}
	// gap holds each claim between its look and its INSERT, as a busy
	// server does (bank.py's check-then-insert sleeps there too): without
	// it, attempts on two replicas meet in that gap only when the
	// scheduler happens to switch there.
	gap := func(ctx context.Context, s engine.Step) engine.Fault {
		if s.Phase == engine.PhaseClaim && s.Part == "insert" {
			time.Sleep(20 * time.Millisecond)
		}
		return engine.FaultNone
	}
	cases := []struct {
		name    string
		policy  engine.Policy
		ok      bool
		allowed []string
	}{
		{"scoped", engine.MustPreset(engine.LevelScoped), true, nil},
		{"server-cache", with(func(p *engine.Policy) { p.Claim = engine.ClaimServerCache }), false,
			[]string{"different-request-never-succeeds", "replay-is-byte-identical", "completion-has-its-transfer"}},
		// Each replica's lock in memory lets a corrected amount sent with
		// the first request through on the other replica too (rule 2).
		{"memory-lock", with(func(p *engine.Policy) { p.Claim, p.Lock = engine.ClaimCheckThenInsert, engine.LockMemory }), false,
			[]string{"replay-is-byte-identical", "completion-has-its-transfer", "different-request-never-succeeds"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db, err := sqlite.OpenFile(filepath.Join(t.TempDir(), "bank.db"))
			require.NoError(t, err)
			t.Cleanup(func() { db.Close() })
			var bases []string
			for i := range 2 {
				e := engine.New(db, c.policy, engine.Options{Server: fmt.Sprint(i + 1), PaymentLatency: 20 * time.Millisecond, Hook: gap})
				srv := httptest.NewServer(httpapiFor(e))
				t.Cleanup(srv.Close)
				bases = append(bases, srv.URL)
			}
			rep := gradeReplicas(t, bases, 40)
			if c.ok {
				assert.True(t, rep.OK, "%v", rep.Broken())
				return
			}
			assertInProcessLock(t, rep)
			assert.Subset(t, append([]string{lab.RuleOneTransfer.Name}, c.allowed...), rep.Broken())
		})
	}
}
