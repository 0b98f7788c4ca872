package sqlite_test

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/store/sqlite"
)

func openFileOrMemory(t testing.TB) *sqlite.DB {
	t.Helper()
	var (
		db  *sqlite.DB
		err error
	)
	if runtime.GOOS == "js" {
		db, err = sqlite.OpenMemory() // no file locking under Node
	} else {
		db, err = sqlite.OpenFile(filepath.Join(t.TempDir(), "ledger.db"))
	}
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func key(scope, k string) engine.KeyRecord {
	return engine.KeyRecord{Scope: scope, Key: k, Customer: "c1", Fingerprint: "fp", State: engine.StateInProgress, Owner: "o-" + k, CreatedAt: 1}
}

func TestClaimVerdictIsTheConstraintError(t *testing.T) {
	db := openFileOrMemory(t)
	ctx := context.Background()
	first, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, key("s", "k"))
	require.NoError(t, err)
	assert.True(t, first.Inserted)
	assert.Contains(t, first.SQL, "INSERT INTO idem_keys")

	second, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, key("s", "k"))
	require.NoError(t, err)
	assert.False(t, second.Inserted)
	assert.Contains(t, second.ConstraintError, "UNIQUE constraint failed: idem_keys.scope, idem_keys.idem_key")
	require.NotNil(t, second.Existing)
	assert.Equal(t, "o-k", second.Existing.Owner, "the row that won is returned")

	other, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, key("other-scope", "k"))
	require.NoError(t, err)
	assert.True(t, other.Inserted, "the same key in another scope is another key")

	ignored, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertOrIgnore, key("s", "k"))
	require.NoError(t, err)
	assert.False(t, ignored.Inserted)
	assert.Empty(t, ignored.ConstraintError, "INSERT OR IGNORE swallows the conflict: no error at all")

	for range 2 {
		loose, err := db.InsertKey(ctx, engine.TableLoose, engine.InsertPlain, key("s", "k"))
		require.NoError(t, err)
		assert.True(t, loose.Inserted, "the unconstrained table takes duplicates")
	}
	snap, err := db.Snapshot(ctx)
	require.NoError(t, err)
	assert.Len(t, snap.Keys, 2)
	assert.Len(t, snap.LooseKeys, 2)
}

func TestMigrationsAreIdempotent(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("needs a file database")
	}
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := sqlite.OpenFile(path)
	require.NoError(t, err)
	_, err = db.PutAccount(context.Background(), "a", 7)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	db, err = sqlite.OpenFile(path)
	require.NoError(t, err)
	defer db.Close()
	a, err := db.GetAccount(context.Background(), "a")
	require.NoError(t, err)
	assert.Equal(t, int64(7), a.Balance, "reopening runs no migration twice and keeps the data")
}

// TestErrorsNameTheAdapter: the SQLite store's errors begin "sqlite:", as
// PostgreSQL's begin "postgres:", so a log line says which store failed.
func TestErrorsNameTheAdapter(t *testing.T) {
	db := openFileOrMemory(t)
	_, _, err := db.Reap(context.Background(), 0, 0)
	assert.ErrorContains(t, err, "sqlite: reap: batch 0 < 1")
	if runtime.GOOS != "js" {
		_, err = sqlite.OpenFile(filepath.Join(t.TempDir(), "missing", "dir", "x.db"))
		require.Error(t, err)
		assert.True(t, strings.HasPrefix(err.Error(), "sqlite: "), err.Error())
	}
}
