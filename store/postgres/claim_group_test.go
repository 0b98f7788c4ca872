package postgres_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/internal/pgtest"
	"idemlab/store/postgres"
)

// groupedClaims holds a first claim at PostgreSQL (another transaction has
// inserted its key and not committed yet), gathers the claims of keys
// behind it, then rolls the other transaction back so that they all go.
func groupedClaims(t *testing.T, url string, db *postgres.DB, keys []string) []engine.InsertResult {
	t.Helper()
	ctx := context.Background()
	claim := func(key string) (engine.InsertResult, error) {
		return db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, engine.KeyRecord{
			Scope: "s", Key: key, Customer: "c1", State: engine.StateInProgress, Owner: "o-" + key, CreatedAt: 1})
	}
	probe, err := claim("probe") // for the INSERT's text
	require.NoError(t, err)
	lock, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer lock.Close(ctx)
	_, err = lock.Exec(ctx, "SET search_path = "+db.Schema())
	require.NoError(t, err)
	tx, err := lock.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, probe.SQL, "s", "hold", "c1", "", engine.StateInProgress, "other", 0, 1, 0, nil, nil, nil, nil)
	require.NoError(t, err)

	results := make([]engine.InsertResult, len(keys))
	var wg sync.WaitGroup
	var returned atomic.Int64
	wg.Add(1)
	go func() { // waits for the other transaction's "hold"
		defer wg.Done()
		_, err := claim("hold")
		assert.NoError(t, err)
	}()
	var holds bool
	for !holds {
		require.NoError(t, lock.QueryRow(ctx, "SELECT count(*) > 0 FROM pg_locks WHERE NOT granted AND locktype = 'transactionid'").Scan(&holds))
		runtime.Gosched()
	}
	for i, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer returned.Add(1)
			var err error
			results[i], err = claim(k)
			assert.NoError(t, err)
		}()
	}
	// Until all of them wait behind the first (or, were they not grouped,
	// until they are done).
	for db.GatheredClaims(engine.TableConstrained) < len(keys) && returned.Load() < int64(len(keys)) {
		runtime.Gosched()
	}
	require.NoError(t, tx.Rollback(ctx))
	wg.Wait()
	return results
}

// transactionsOf counts the transactions that wrote the keys' rows.
func transactionsOf(t *testing.T, db *postgres.DB, keys ...string) int {
	t.Helper()
	var n int
	require.NoError(t, db.Pool().QueryRow(context.Background(),
		"SELECT count(DISTINCT xmin::text) FROM idem_keys WHERE scope = 's' AND idem_key = ANY($1)", keys).Scan(&n))
	return n
}

// Claims of fresh keys that arrive while another claim is at PostgreSQL
// go together: one transaction writes them all, each still a plain INSERT.
func TestClaimsShareACommit(t *testing.T) {
	url := pgtest.URL(t)
	db := open(t, url)
	keys := []string{"k-5", "k-1", "k-4", "k-2", "k-3"}
	for i, r := range groupedClaims(t, url, db, keys) {
		assert.True(t, r.Inserted, keys[i])
		assert.Empty(t, r.ConstraintError, keys[i])
		assert.Contains(t, r.SQL, "INSERT INTO")
	}
	assert.Equal(t, 1, transactionsOf(t, db, keys...), "the gathered claims were written by one transaction")
	assert.Equal(t, 1, transactionsOf(t, db, "hold"))
}

// A duplicate key in a group rolls the group back; every claim then runs
// on its own, so that the duplicate meets its own unique violation (the
// verdict) and the fresh keys are written, each by its own transaction.
func TestAGroupWithADuplicateClaimsEachAlone(t *testing.T) {
	url := pgtest.URL(t)
	db := open(t, url)
	ctx := context.Background()
	first, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, engine.KeyRecord{
		Scope: "s", Key: "dup", Customer: "c1", State: engine.StateInProgress, Owner: "first", CreatedAt: 1})
	require.NoError(t, err)
	require.True(t, first.Inserted)
	keys := []string{"k-1", "dup", "k-2"}
	results := groupedClaims(t, url, db, keys)
	for i, k := range keys {
		if k == "dup" {
			assert.False(t, results[i].Inserted)
			assert.Contains(t, results[i].ConstraintError, "23505", "the duplicate's verdict is its own unique violation")
			require.NotNil(t, results[i].Existing)
			assert.Equal(t, "first", results[i].Existing.Owner)
			continue
		}
		assert.True(t, results[i].Inserted, k)
	}
	assert.Equal(t, 2, transactionsOf(t, db, "k-1", "k-2"), "after the group failed, each fresh key was claimed alone")
	look, err := db.LookupKey(ctx, engine.TableConstrained, "s", "dup")
	require.NoError(t, err)
	assert.Equal(t, "first", look.Record.Owner, "the duplicate changed nothing")
	for _, k := range []string{"k-1", "k-2"} {
		assert.Equal(t, fmt.Sprint("o-", k), mustOwner(t, db, k))
	}
}

func mustOwner(t *testing.T, db *postgres.DB, key string) string {
	t.Helper()
	look, err := db.LookupKey(context.Background(), engine.TableConstrained, "s", key)
	require.NoError(t, err)
	require.NotNil(t, look.Record, key)
	return look.Record.Owner
}
