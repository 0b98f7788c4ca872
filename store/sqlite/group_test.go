package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/ncruces/go-sqlite3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/store/sqlite"
)

// Group commit on a file database: callers that arrive while others hold
// the database share one transaction. This drives 32 goroutines of claims
// and transfers, some of which fail inside the group, and checks with a
// second connection, as each call returns, that what it reported is
// already committed: no caller is answered before the commit that holds
// its work. An in_progress claim is the one write that may return before
// its commit (it rides the commit of the attempt's next write): it is
// committed once that next write, carrying it, has returned.
func TestGroupCommitAnswersOnlyAfterItsCommit(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("needs a file database")
	}
	path := filepath.Join(t.TempDir(), "group.db")
	db, err := sqlite.OpenFile(path)
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	_, err = db.PutAccount(ctx, "alice", 1_000)
	require.NoError(t, err)
	_, err = db.PutAccount(ctx, "bob", 0)
	require.NoError(t, err)

	reader, err := sqlite3.Open(path)
	require.NoError(t, err)
	defer reader.Close()
	var readMu sync.Mutex
	committed := func(query string, args ...any) int {
		readMu.Lock()
		defer readMu.Unlock()
		s, _, err := reader.Prepare(query)
		require.NoError(t, err)
		defer s.Close()
		for i, a := range args {
			switch v := a.(type) {
			case string:
				s.BindText(i+1, v)
			case int64:
				s.BindInt64(i+1, v)
			}
		}
		require.True(t, s.Step(), "%s: %v", query, s.Err())
		return s.ColumnInt(0)
	}

	const workers, each = 32, 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	paid, refused, rode := 0, 0, 0
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				k := fmt.Sprintf("w%d-%d", w, i)
				claim, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, engine.KeyRecord{
					Scope: "s", Key: k, Customer: "c", Fingerprint: "fp", State: engine.StateInProgress, Owner: k, CreatedAt: 1})
				if !assert.NoError(t, err) || !assert.True(t, claim.Inserted) {
					return
				}
				next := ctx
				if claim.Pending == nil {
					assert.Equal(t, 1, committed("SELECT count(*) FROM idem_keys WHERE scope = 's' AND idem_key = ?1", k),
						"the claim of %s is committed when InsertKey returns", k)
				} else {
					next = engine.WithPending(ctx, claim.Pending)
					mu.Lock()
					rode++
					mu.Unlock()
				}
				// 10 won each: alice's 1,000 won pay 100 of the 640; the
				// others fail for want of funds inside a group that commits.
				res, err := db.Transfer(next, engine.TransferArgs{From: "alice", To: "bob", Amount: 10, At: 1, Customer: "c", Key: k,
					Complete: &engine.Completion{Table: engine.TableConstrained, Scope: "s", Key: k, Owner: k,
						Render: func(r engine.TransferResult) engine.Response { return engine.Response{Status: 201} }}})
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, 1, committed("SELECT count(*) FROM idem_keys WHERE scope = 's' AND idem_key = ?1 AND state = 'completed'", k),
					"the claim of %s and its completion are committed when Transfer returns", k)
				if claim.Pending != nil {
					assert.NoError(t, claim.Pending.Failed())
					assert.NoError(t, claim.Pending.Wait())
				}
				switch res.Outcome {
				case engine.TransferDone:
					id, _ := parseID(res.Transfer.ID)
					assert.Equal(t, 1, committed("SELECT count(*) FROM transfers WHERE id = ?1", id), "transfer %s is committed when Transfer returns", res.Transfer.ID)
					mu.Lock()
					paid++
					mu.Unlock()
				case engine.TransferInsufficientFunds:
					mu.Lock()
					refused++
					mu.Unlock()
				default:
					t.Errorf("outcome %v", res.Outcome)
				}
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 100, paid)
	assert.Equal(t, workers*each-100, refused)
	assert.Equal(t, 0, committed("SELECT balance FROM accounts WHERE id = 'alice'"))
	assert.Equal(t, 1_000, committed("SELECT balance FROM accounts WHERE id = 'bob'"))
	assert.Equal(t, 100, committed("SELECT count(*) FROM transfers"))
	assert.Equal(t, workers*each, committed("SELECT count(*) FROM idem_keys WHERE state = 'completed'"),
		"every key is completed: a refusal for want of funds is an answer too")
	commits, callers := db.GroupCommits()
	t.Logf("%d group commits served %d callers; %d of %d claims rode the next commit", commits, callers, rode, workers*each)
	assert.Less(t, commits, callers, "callers shared commits")
	assert.Positive(t, rode, "claims rode the commit of the write after them")
}

// A claim's group that fails (an error rolled its transaction back) takes
// the claim with it: the store runs none of the attempt's later writes, so
// nothing is charged or moved after a claim that is gone, and the claim's
// Pending says why. A claim on a database without group commit is
// committed when InsertKey returns.
func TestClaimThatRodeAFailedGroupStopsTheAttempt(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("needs a file database")
	}
	ctx := context.Background()
	claimOf := func(k string) engine.KeyRecord {
		return engine.KeyRecord{Scope: "s", Key: k, Customer: "c", Fingerprint: "fp", State: engine.StateInProgress, Owner: k, CreatedAt: 1}
	}
	serial, err := sqlite.OpenFileWith(filepath.Join(t.TempDir(), "serial.db"), sqlite.FileOptions{Serial: true})
	require.NoError(t, err)
	defer serial.Close()
	ins, err := serial.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, claimOf("k0"))
	require.NoError(t, err)
	assert.Nil(t, ins.Pending, "without group commit a claim waits for its own commit")

	db, err := sqlite.OpenFile(filepath.Join(t.TempDir(), "group.db"))
	require.NoError(t, err)
	defer db.Close()
	_, err = db.PutAccount(ctx, "alice", 1_000)
	require.NoError(t, err)
	done := engine.KeyRecord{Scope: "s", Key: "k-done", Customer: "c", CreatedAt: 1, State: engine.StateCompleted}
	ins, err = db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, done)
	require.NoError(t, err)
	assert.Nil(t, ins.Pending, "a completed row is an answer: it waits for its commit")

	var claim engine.InsertResult
	sqlite.FailNextGroup(db, func() {
		claim, err = db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, claimOf("k1"))
		require.NoError(t, err)
		require.True(t, claim.Inserted)
		require.NotNil(t, claim.Pending, "the claim rides the next commit")
	})
	require.Error(t, claim.Pending.Failed(), "the claim's group was rolled back")
	require.Error(t, claim.Pending.Wait())
	next := engine.WithPending(ctx, claim.Pending)
	_, err = db.Charge(next, engine.ChargeArgs{From: "alice", To: "bob", Amount: 10, At: 1, Customer: "c", Key: "k1"})
	require.Error(t, err, "no charge after a claim that is gone")
	assert.Contains(t, err.Error(), "the claim before this write is gone")
	acct, err := db.GetAccount(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, int64(1_000), acct.Balance)
	look, err := db.LookupKey(ctx, engine.TableConstrained, "s", "k1")
	require.NoError(t, err)
	assert.Nil(t, look.Record, "the claim is not in the table")
	// The attempt's retry claims the key afresh.
	again, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, claimOf("k1"))
	require.NoError(t, err)
	assert.True(t, again.Inserted)
}

func parseID(id string) (int64, error) {
	var n int64
	_, err := fmt.Sscanf(id, "tr_%d", &n)
	return n, err
}
