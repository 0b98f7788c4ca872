package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/internal/pgtest"
	"idemlab/store/postgres"
)

// stopBeforeCommit is a hook that runs stop once, before the ledger's
// transaction of the attempt with key.
func stopBeforeCommit(key string, stop func()) engine.Hook {
	done := false
	return func(_ context.Context, s engine.Step) engine.Fault {
		if s.Phase == engine.PhaseCommit && s.Key == key && !done {
			done = true
			stop()
		}
		return engine.FaultNone
	}
}

// assertUnavailable checks an answer of 503 problem+json with Retry-After.
func assertUnavailable(t *testing.T, res engine.Result) {
	t.Helper()
	assert.Equal(t, 503, res.Response.Status, "%s", res.Response.Body)
	assert.Equal(t, "application/problem+json", res.Response.Get("Content-Type"))
	assert.Equal(t, "2", res.Response.Get("Retry-After"))
	assert.ErrorIs(t, res.Err, engine.ErrUnavailable)
}

// assertPaidOnce checks that key moved money once, in the ledger and at
// the processor, and that its key row is completed.
func assertPaidOnce(t *testing.T, db *postgres.DB, key string) {
	t.Helper()
	snap, err := db.Snapshot(context.Background())
	require.NoError(t, err)
	n := 0
	for _, tr := range snap.Transfers {
		if tr.Key == key {
			n++
		}
	}
	assert.Equal(t, 1, n, "one transfer")
	assert.Len(t, snap.Charges, 1, "one charge at the processor")
	require.Len(t, snap.Keys, 1)
	assert.Equal(t, engine.StateCompleted, snap.Keys[0].State)
}

// The claim is committed before the money moves, so a claim can outlive
// the connection its attempt needed next. These two tests take the
// connection away at that moment, at /bank/scoped.

// TestAClaimWhoseLedgerLostItsConnectionIsReleased: PostgreSQL ends the
// connection the ledger's transaction is about to use (its backend
// terminated, as a restart or an administrator does). The attempt is
// answered 503 with Retry-After and its claim is released on a live
// connection, however many dead ones the pool hands out first, so that
// the retry pays at once, once.
func TestAClaimWhoseLedgerLostItsConnectionIsReleased(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	db := open(t, url)
	for id, bal := range map[string]int64{"alice": 1000, "bob": 0} {
		_, err := db.PutAccount(ctx, id, bal)
		require.NoError(t, err)
	}
	admin, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer admin.Close(ctx)
	terminate := func() {
		var n int
		require.NoError(t, admin.QueryRow(ctx, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()").Scan(&n))
		require.Positive(t, n, "the store's connections were ended")
	}
	// Two connections in the pool, both ended at once: the ledger meets
	// one, and the release the other before it gets a live one.
	for _, c := range hold(t, db, 2) {
		c.Release()
	}
	eng := engine.New(db, engine.MustPreset(engine.LevelScoped), engine.Options{Hook: stopBeforeCommit("cut", terminate)})
	const body = `{"from":"alice","to":"bob","amount":10}`

	assertUnavailable(t, eng.Handle(ctx, scopedTransfer("cut", body)))
	snap, err := db.Snapshot(ctx)
	require.NoError(t, err)
	assert.Empty(t, snap.Keys, "the claim was released")
	assert.Empty(t, snap.Transfers)

	retry := eng.Handle(ctx, scopedTransfer("cut", body))
	assert.Equal(t, 201, retry.Response.Status, "%s", retry.Response.Body)
	assert.False(t, retry.Replayed)
	assertPaidOnce(t, db, "cut")
}

// TestAClaimLeftWhenPostgreSQLStoppedIsTakenOver: PostgreSQL stops between
// the claim and the ledger, so the claim cannot be released either. The
// attempt is answered 503 with Retry-After; once PostgreSQL is back, a
// retry hears 409 while the claim's lease runs, and after it takes the
// claim over and pays, once.
func TestAClaimLeftWhenPostgreSQLStoppedIsTakenOver(t *testing.T) {
	cluster := pgtest.NewCluster(t)
	ctx := context.Background()
	db := open(t, cluster.Database(t))
	for id, bal := range map[string]int64{"alice": 1000, "bob": 0} {
		_, err := db.PutAccount(ctx, id, bal)
		require.NoError(t, err)
	}
	clock := engine.NewManualClock(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	eng := engine.New(db, engine.MustPreset(engine.LevelScoped),
		engine.Options{Clock: clock, Hook: stopBeforeCommit("down", func() { cluster.Stop(t) })})
	const body = `{"from":"alice","to":"bob","amount":10}`

	assertUnavailable(t, eng.Handle(ctx, scopedTransfer("down", body)))
	cluster.Start(t)
	snap, err := db.Snapshot(ctx)
	require.NoError(t, err)
	require.Len(t, snap.Keys, 1, "the claim could not be released while PostgreSQL was down")
	assert.Equal(t, engine.StateInProgress, snap.Keys[0].State)

	early := eng.Handle(ctx, scopedTransfer("down", body))
	assert.Equal(t, 409, early.Response.Status, "%s", early.Response.Body)
	clock.Advance(engine.ScopedLease + time.Second)
	late := eng.Handle(ctx, scopedTransfer("down", body))
	assert.Equal(t, 201, late.Response.Status, "%s", late.Response.Body)
	assertPaidOnce(t, db, "down")
}
