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
// its work.
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
	paid, refused := 0, 0
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
				assert.Equal(t, 1, committed("SELECT count(*) FROM idem_keys WHERE scope = 's' AND idem_key = ?1", k),
					"the claim of %s is committed when InsertKey returns", k)
				// 10 won each: alice's 1,000 won pay 100 of the 640; the
				// others fail for want of funds inside a group that commits.
				res, err := db.Transfer(ctx, engine.TransferArgs{From: "alice", To: "bob", Amount: 10, At: 1, Customer: "c", Key: k,
					Complete: &engine.Completion{Table: engine.TableConstrained, Scope: "s", Key: k, Owner: k,
						Render: func(r engine.TransferResult) engine.Response { return engine.Response{Status: 201} }}})
				if !assert.NoError(t, err) {
					return
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
	t.Logf("%d group commits served %d callers", commits, callers)
	assert.Less(t, commits, callers, "callers shared commits")
}

func parseID(id string) (int64, error) {
	var n int64
	_, err := fmt.Sscanf(id, "tr_%d", &n)
	return n, err
}
