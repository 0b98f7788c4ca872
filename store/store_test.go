package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/store"
)

func openFileOrMemory(t testing.TB) *store.DB {
	t.Helper()
	var (
		db  *store.DB
		err error
	)
	if runtime.GOOS == "js" {
		db, err = store.OpenMemory() // no file locking under Node
	} else {
		db, err = store.OpenFile(filepath.Join(t.TempDir(), "ledger.db"))
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

func TestTakeOverOnlyOnce(t *testing.T) {
	db := openFileOrMemory(t)
	ctx := context.Background()
	rec := key("s", "k")
	rec.LeaseUntil = 100
	_, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, rec)
	require.NoError(t, err)

	early := key("s", "k")
	early.Owner = "early"
	ok, _, err := db.TakeOverKey(ctx, engine.TableConstrained, early, 99)
	require.NoError(t, err)
	assert.False(t, ok, "the lease still holds")

	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := key("s", "k")
			r.Owner, r.LeaseUntil = fmt.Sprintf("late-%d", i), 1000
			ok, _, err := db.TakeOverKey(ctx, engine.TableConstrained, r, 100)
			assert.NoError(t, err)
			if ok {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(1), wins.Load(), "one conditional UPDATE wins; the rest see the new lease")
}

func TestTransferCompletionGuardedByOwner(t *testing.T) {
	db := openFileOrMemory(t)
	ctx := context.Background()
	_, err := db.PutAccount(ctx, "a", 100)
	require.NoError(t, err)
	_, err = db.PutAccount(ctx, "b", 0)
	require.NoError(t, err)
	_, err = db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, key("s", "k"))
	require.NoError(t, err)
	render := func(engine.TransferResult) engine.Response { return engine.Response{Status: 201, Body: []byte("{}")} }

	res, err := db.Transfer(ctx, engine.TransferArgs{From: "a", To: "b", Amount: 40, At: 5,
		Complete: &engine.Completion{Table: engine.TableConstrained, Scope: "s", Key: "k", Owner: "someone-else", Render: render}})
	require.NoError(t, err)
	assert.False(t, res.Completed)
	a, _ := db.GetAccount(ctx, "a")
	assert.Equal(t, int64(100), a.Balance, "the whole transaction rolled back")

	res, err = db.Transfer(ctx, engine.TransferArgs{From: "a", To: "b", Amount: 40, At: 5,
		Complete: &engine.Completion{Table: engine.TableConstrained, Scope: "s", Key: "k", Owner: "o-k", Render: render}})
	require.NoError(t, err)
	assert.True(t, res.Completed)
	a, _ = db.GetAccount(ctx, "a")
	assert.Equal(t, int64(60), a.Balance)

	res, err = db.Transfer(ctx, engine.TransferArgs{From: "a", To: "b", Amount: 1000, At: 6})
	require.NoError(t, err)
	assert.Equal(t, engine.TransferInsufficientFunds, res.Outcome)
	res, err = db.Transfer(ctx, engine.TransferArgs{From: "a", To: "zed", Amount: 1, At: 6})
	require.NoError(t, err)
	assert.Equal(t, engine.TransferUnknownAccount, res.Outcome)
	assert.Equal(t, "zed", res.Missing)
}

// TestManyWritersOnOneFile hammers one database file from many goroutines
// through two separate connections, as two server processes would. SQLite's
// lock is contended for real; the busy timeout must absorb it, so no
// "database is locked" ever reaches a caller.
func TestManyWritersOnOneFile(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("file databases need file locking, which Node's wasm host lacks; the memdb store is tested instead")
	}
	path := filepath.Join(t.TempDir(), "shared.db")
	dbs := make([]*store.DB, 2)
	for i := range dbs {
		db, err := store.OpenFile(path)
		require.NoError(t, err)
		defer db.Close()
		dbs[i] = db
	}
	ctx := context.Background()
	_, err := dbs[0].PutAccount(ctx, "a", 1_000_000)
	require.NoError(t, err)
	_, err = dbs[0].PutAccount(ctx, "b", 0)
	require.NoError(t, err)

	const goroutines, each = 16, 25
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db := dbs[g%2]
			for i := range each {
				k := fmt.Sprintf("k-%d-%d", g, i)
				rec := key("s", k)
				ins, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, rec)
				if !assert.NoError(t, err) || !assert.True(t, ins.Inserted) {
					return
				}
				_, err = db.Transfer(ctx, engine.TransferArgs{From: "a", To: "b", Amount: 1, At: 1,
					Complete: &engine.Completion{Scope: "s", Key: k, Owner: rec.Owner,
						Render: func(engine.TransferResult) engine.Response { return engine.Response{Status: 201} }}})
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	b, err := dbs[1].GetAccount(ctx, "b")
	require.NoError(t, err)
	assert.Equal(t, int64(goroutines*each), b.Balance)
}

func TestMigrationsAreIdempotent(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("needs a file database")
	}
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := store.OpenFile(path)
	require.NoError(t, err)
	_, err = db.PutAccount(context.Background(), "a", 7)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	db, err = store.OpenFile(path)
	require.NoError(t, err)
	defer db.Close()
	a, err := db.GetAccount(context.Background(), "a")
	require.NoError(t, err)
	assert.Equal(t, int64(7), a.Balance, "reopening runs no migration twice and keeps the data")
}

// The reaper's sweep deletes exactly the keys that expired, in both key
// tables, whatever the window size, and a key that expires after the sweep
// passed it is collected by the next sweep.
func TestReapSweepDeletesExactlyTheExpiredKeys(t *testing.T) {
	for _, batch := range []int{1, 3, 7, 100} {
		t.Run(fmt.Sprintf("batch %d", batch), func(t *testing.T) {
			db := openFileOrMemory(t)
			ctx := context.Background()
			live := map[string]bool{}
			for i := range 40 {
				rec := key(fmt.Sprintf("scope-%d", i%4), fmt.Sprintf("k%02d", i))
				rec.ExpiresAt = int64(100 + i*10) // expired at 300 when i <= 20
				if i%9 == 0 {
					rec.ExpiresAt = 0 // never expires
				}
				table := engine.TableConstrained
				if i%3 == 0 {
					table = engine.TableLoose
				}
				res, err := db.InsertKey(ctx, table, engine.InsertPlain, rec)
				require.NoError(t, err)
				require.True(t, res.Inserted)
				if rec.ExpiresAt == 0 || rec.ExpiresAt > 300 {
					live[rec.Scope+"/"+rec.Key] = true
				}
			}
			sweep := func(now int64) int {
				total := 0
				for range 1000 {
					n, swept, err := db.Reap(ctx, now, batch)
					require.NoError(t, err)
					total += n
					if swept {
						return total
					}
				}
				t.Fatal("the sweep never ended")
				return 0
			}
			left := func() map[string]bool {
				snap, err := db.Snapshot(ctx)
				require.NoError(t, err)
				m := map[string]bool{}
				for _, k := range append(snap.Keys, snap.LooseKeys...) {
					m[k.Scope+"/"+k.Key] = true
				}
				return m
			}
			assert.Equal(t, 40-len(live), sweep(300))
			assert.Equal(t, live, left(), "exactly the unexpired keys are left")
			assert.Equal(t, 0, sweep(300), "a second sweep finds nothing more")
			assert.Equal(t, len(live)-5, sweep(1_000_000), "later, all but the keys that never expire")
			assert.Len(t, left(), 5)
		})
	}
}

func TestReapRefusesAnEmptyWindow(t *testing.T) {
	db := openFileOrMemory(t)
	_, _, err := db.Reap(context.Background(), 1, 0)
	assert.Error(t, err)
}
