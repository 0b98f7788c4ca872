package sqlite

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
)

// TestSnapshotFollowsEveryChange holds the snapshot a private database
// answers from its last one to what a fresh read of the database gives,
// after each kind of change, after a transaction rolled back under a
// snapshot read inside it, and after a caller changed its copy.
func TestSnapshotFollowsEveryChange(t *testing.T) {
	ctx := context.Background()
	db, err := OpenMemory()
	require.NoError(t, err)
	defer db.Close()
	require.True(t, db.private)

	fresh := func() engine.Snapshot {
		var s engine.Snapshot
		db.mu.Lock()
		defer db.mu.Unlock()
		require.NoError(t, db.readSnapshot(&s))
		return s
	}
	sql := func(q string) {
		db.mu.Lock()
		defer db.mu.Unlock()
		require.NoError(t, db.conn.Exec(q), q)
	}
	rec := engine.KeyRecord{Scope: "c", Key: "k", Customer: "c", Fingerprint: "f", State: "in_progress", Owner: "o", CreatedAt: 1}
	for _, c := range []struct {
		name   string
		change func()
	}{
		{"nothing", func() {}},
		{"an account", func() { _, err := db.PutAccount(ctx, "alice", 100); require.NoError(t, err) }},
		{"another account", func() { _, err := db.PutAccount(ctx, "bob", 0); require.NoError(t, err) }},
		{"a transfer", func() {
			_, err := db.Transfer(ctx, engine.TransferArgs{From: "alice", To: "bob", Amount: 10, At: 1, Customer: "c", Key: "k"})
			require.NoError(t, err)
		}},
		{"a key", func() {
			_, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, rec)
			require.NoError(t, err)
		}},
		{"a loose key", func() {
			_, err := db.InsertKey(ctx, engine.TableLoose, engine.InsertPlain, rec)
			require.NoError(t, err)
		}},
		{"a key released", func() {
			_, err := db.ReleaseKey(ctx, engine.TableConstrained, "c", "k", "o")
			require.NoError(t, err)
		}},
		{"a change rolled back after a snapshot inside it", func() {
			sql("BEGIN")
			sql("UPDATE accounts SET balance = 7 WHERE id = 'alice'")
			inside, err := db.Snapshot(ctx)
			require.NoError(t, err)
			assert.Equal(t, int64(7), inside.Accounts[0].Balance, "a snapshot inside a transaction sees it")
			sql("ROLLBACK")
		}},
		{"an empty transaction", func() { sql("BEGIN"); sql("ROLLBACK") }},
	} {
		c.change()
		got, err := db.Snapshot(ctx)
		require.NoError(t, err, c.name)
		assert.Equal(t, fresh(), got, "after %s", c.name)
		// A caller's copy is its own.
		if len(got.Accounts) > 0 {
			got.Accounts[0].Balance = -1
		}
		again, err := db.Snapshot(ctx)
		require.NoError(t, err, c.name)
		assert.Equal(t, fresh(), again, "after %s, read twice", c.name)
	}
}
