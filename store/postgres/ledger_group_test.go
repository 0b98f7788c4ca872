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

// groupedTransfers holds the pair (a, b) with a first transfer whose key
// the test keeps locked, gathers the others behind it, then lets them all
// go; it returns each transfer's result and error, the first one's at 0.
func groupedTransfers(t *testing.T, url string, db *postgres.DB, amounts []int64) ([]engine.TransferResult, []error) {
	t.Helper()
	ctx := context.Background()
	for i := range amounts {
		_, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, engine.KeyRecord{
			Scope: "s", Key: fmt.Sprintf("k-%d", i), Customer: "c1", State: engine.StateInProgress, Owner: fmt.Sprintf("o-%d", i), CreatedAt: 1})
		require.NoError(t, err)
	}
	lock, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer lock.Close(ctx)
	tx, err := lock.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "SELECT 1 FROM "+db.Schema()+".idem_keys WHERE idem_key = 'k-0' FOR UPDATE")
	require.NoError(t, err)

	results, errs := make([]engine.TransferResult, len(amounts)), make([]error, len(amounts))
	var wg sync.WaitGroup
	var returned atomic.Int64
	transfer := func(i int) {
		defer wg.Done()
		defer returned.Add(1)
		results[i], errs[i] = db.Transfer(ctx, engine.TransferArgs{From: "a", To: "b", Amount: amounts[i], At: 5,
			Complete: &engine.Completion{Table: engine.TableConstrained, Scope: "s", Key: fmt.Sprintf("k-%d", i), Owner: fmt.Sprintf("o-%d", i), Render: render}})
	}
	wg.Add(1)
	go transfer(0)
	var holds bool
	for !holds { // the first call is at PostgreSQL, waiting for k-0
		require.NoError(t, lock.QueryRow(ctx, "SELECT count(*) > 0 FROM pg_locks WHERE NOT granted AND locktype = 'transactionid'").Scan(&holds))
		runtime.Gosched()
	}
	for i := 1; i < len(amounts); i++ {
		wg.Add(1)
		go transfer(i)
	}
	// Until all the others wait behind the first (or, were they not
	// grouped, until they are done).
	for db.Gathered("a", "b") < len(amounts)-1 && returned.Load() < int64(len(amounts)-1) {
		runtime.Gosched()
	}
	require.NoError(t, tx.Commit(ctx))
	wg.Wait()
	return results, errs
}

func render(r engine.TransferResult) engine.Response {
	return engine.Response{Status: 201, Body: []byte(fmt.Sprintf(`{"id":%q,"balance_after":%d}`, r.Transfer.ID, r.Transfer.BalanceAfter))}
}

// Transfers between the same two accounts that arrive while one is at
// PostgreSQL go together, in one transaction, and each gets its own
// answer, stored on its own key.
func TestTransfersBetweenTwoAccountsShareACommit(t *testing.T) {
	url := pgtest.URL(t)
	db := open(t, url)
	ctx := context.Background()
	for id, bal := range map[string]int64{"a": 1000, "b": 0} {
		_, err := db.PutAccount(ctx, id, bal)
		require.NoError(t, err)
	}
	amounts := []int64{1, 2, 3, 4, 5, 6}
	results, errs := groupedTransfers(t, url, db, amounts)
	for i, r := range results {
		require.NoError(t, errs[i])
		assert.True(t, r.Completed, "k-%d", i)
		look, err := db.LookupKey(ctx, engine.TableConstrained, "s", fmt.Sprintf("k-%d", i))
		rec := look.Record
		require.NoError(t, err)
		require.NotNil(t, rec.Response)
		assert.Equal(t, string(render(r).Body), string(rec.Response.Body))
		assert.Equal(t, r.Transfer.ID, rec.TransferID)
	}
	a, err := db.GetAccount(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, int64(1000-21), a.Balance)
	var transactions int
	require.NoError(t, db.Pool().QueryRow(ctx, "SELECT count(DISTINCT xmin::text) FROM transfers").Scan(&transactions))
	assert.Equal(t, 2, transactions, "the first transfer alone, then the five gathered behind it together")
}

// A group whose transaction fails as a whole runs each of its transfers
// again on its own: only the one that failed fails.
func TestAGroupThatFailsRunsEachTransferAlone(t *testing.T) {
	url := pgtest.URL(t)
	db := open(t, url)
	ctx := context.Background()
	for id, bal := range map[string]int64{"a": 1000, "b": 0} {
		_, err := db.PutAccount(ctx, id, bal)
		require.NoError(t, err)
	}
	// A negative amount breaks the ledger's CHECKs inside the group's
	// transaction (the engine never sends one; the store must survive it).
	amounts := []int64{1, 2, 3, -4, 5, 6}
	results, errs := groupedTransfers(t, url, db, amounts)
	for i, r := range results {
		if amounts[i] < 0 {
			assert.Error(t, errs[i])
			continue
		}
		require.NoError(t, errs[i], "k-%d", i)
		assert.True(t, r.Completed, "k-%d", i)
	}
	a, err := db.GetAccount(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, int64(1000-17), a.Balance)
	snap, err := db.Snapshot(ctx)
	require.NoError(t, err)
	assert.Len(t, snap.Transfers, 5)
	look, err := db.LookupKey(ctx, engine.TableConstrained, "s", "k-3")
	rec := look.Record
	require.NoError(t, err)
	assert.Equal(t, engine.StateInProgress, rec.State, "the failed transfer completed nothing")
}
