package lab_test

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/lab"
	"idemlab/store/sqlite"
)

// replay runs a day in-process at policy p on a fresh in-memory SQLite.
func replay(t testing.TB, d lab.Day, p engine.Policy) lab.Tally {
	t.Helper()
	db, err := sqlite.OpenMemory()
	require.NoError(t, err)
	defer db.Close()
	return replayOn(t, db, d, p)
}

func replayOn(t testing.TB, db *sqlite.DB, d lab.Day, p engine.Policy) lab.Tally {
	t.Helper()
	var calls atomic.Int64
	tally, err := lab.ReplayDay(context.Background(), d, db, p, lab.ReplayOptions{Progress: func(done, total int) {
		calls.Add(1)
		require.LessOrEqual(t, done, total)
	}})
	require.NoError(t, err)
	require.Positive(t, calls.Load(), "progress was reported")
	return tally
}

var _ lab.DayStore = (*sqlite.DB)(nil)

// dayForLadder is small enough for -race and still holds every kind of
// trouble: overlaps, corrections, late retries and colliding keys.
func dayForLadder() lab.Day {
	p := lab.DefaultDayParams()
	p.Seed, p.Customers, p.Intents = 42, 10, 400
	p.TellerRate, p.SequenceKeyRate = 0.03, 0.3
	return lab.GenerateDay(p)
}

func TestReplayDayOnTheLadder(t *testing.T) {
	d := dayForLadder()
	// Every double transfer was a double charge at the processor first:
	// below scoped, the payment call carries no key.
	want := map[string][]string{
		engine.LevelNaive:       {"one-transfer-per-intent", "different-request-never-succeeds", "replay-is-byte-identical", "one-charge-per-intent"},
		engine.LevelUnique:      {"one-transfer-per-intent", "different-request-never-succeeds", "replay-is-byte-identical", "completion-has-its-transfer", "customers-see-own-responses", "retention-outlasts-retries", "one-charge-per-intent"},
		engine.LevelFingerprint: {"one-transfer-per-intent", "replay-is-byte-identical", "retention-outlasts-retries", "one-charge-per-intent"},
		engine.LevelInProgress:  {"one-transfer-per-intent", "replay-is-byte-identical", "retention-outlasts-retries", "one-charge-per-intent"},
		engine.LevelReplay:      {"one-transfer-per-intent", "replay-is-byte-identical", "retention-outlasts-retries", "one-charge-per-intent"},
		engine.LevelScoped:      nil,
	}
	for _, level := range engine.Levels() {
		t.Run(level, func(t *testing.T) {
			tally := replay(t, d, engine.MustPreset(level))
			var b strings.Builder
			require.NoError(t, tally.WriteText(&b))
			t.Log("\n" + b.String())
			s := tally.Report.Summary
			assert.Equal(t, len(d.Attempts), tally.Attempts)
			assert.ElementsMatch(t, want[level], tally.Report.Broken())
			if level == engine.LevelFingerprint || level == engine.LevelReplay {
				assert.Positive(t, tally.ForeignKeyRefusals, "keys numbered alike collide when keys are global")
				assert.Positive(t, s.Unpaid, "a refused wish is never paid")
			}
			if level == engine.LevelScoped {
				assert.Zero(t, tally.ForeignKeyRefusals)
				assert.Zero(t, s.Unpaid, "every wish of the day is paid once")
				assert.Zero(t, s.Duplicates)
				assert.Zero(t, s.PaidTwice)
				assert.True(t, tally.OK())
				assert.Positive(t, s.Conflicts, "overlapping retries meet 409")
				assert.Positive(t, s.Mismatches, "corrections meet 422")
				assert.Positive(t, s.Replays)
				assert.Positive(t, tally.ClientDuplicates, "new-key presses still pay twice")
			}
			if level == engine.LevelNaive {
				assert.Positive(t, s.Duplicates)
				assert.Positive(t, s.PaidTwice)
				assert.Zero(t, s.Replays)
			}
		})
	}
}

func TestReplayDayOnAFile(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("SQLite files need an operating system; under js/wasm the store runs in memory only")
	}
	db, err := sqlite.OpenFile(filepath.Join(t.TempDir(), "day.db"))
	require.NoError(t, err)
	defer db.Close()
	p := lab.DefaultDayParams()
	p.Intents = 150
	tally := replayOn(t, db, lab.GenerateDay(p), engine.MustPreset(engine.LevelScoped))
	assert.True(t, tally.OK(), "%v", tally.Report.Broken())
}

func TestReplayDayStopsWithItsContext(t *testing.T) {
	db, err := sqlite.OpenMemory()
	require.NoError(t, err)
	defer db.Close()
	ctx, cancel := context.WithCancel(context.Background())
	_, err = lab.ReplayDay(ctx, lab.GenerateDay(lab.DayParams{Seed: 1, Customers: 3, Intents: 50}), db, engine.MustPreset(engine.LevelScoped),
		lab.ReplayOptions{Progress: func(done, total int) { cancel() }})
	assert.ErrorIs(t, err, context.Canceled)
}

// TestInferTransfersAgreesWithTheLedger replays a day in-process, then
// counts transfers from balances alone, as the grader must, and compares
// with the ledger: per payee always, per intent where the server behaved.
func TestInferTransfersAgreesWithTheLedger(t *testing.T) {
	d := dayForLadder()
	for _, level := range []string{engine.LevelNaive, engine.LevelUnique, engine.LevelScoped} {
		t.Run(level, func(t *testing.T) {
			db, err := sqlite.OpenMemory()
			require.NoError(t, err)
			defer db.Close()
			tally, err := lab.ReplayDay(context.Background(), d, db, engine.MustPreset(level), lab.ReplayOptions{})
			require.NoError(t, err)
			h := tally.History
			inferred := lab.InferTransfers(h.Intents, h.Attempts, h.StartBalances, h.EndBalances)
			to := map[string]string{}
			for _, in := range d.Intents {
				to[in.ID] = in.To
			}
			fromLedger, fromBalances := map[string]int{}, map[string]int{}
			for _, tr := range h.Ledger {
				fromLedger[tr.To]++
			}
			for id, n := range inferred {
				if n > 0 {
					fromBalances[to[id]] += n
				}
			}
			assert.Equal(t, fromLedger, fromBalances)
			if level == engine.LevelScoped {
				h.Ledger, h.TransfersPerIntent = nil, inferred
				assert.Equal(t, tally.Report, lab.Check(h), "the checker's verdict from balances alone")
			}
		})
	}
}
