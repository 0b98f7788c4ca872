package sqlite

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
)

// groupFile opens a file database with group commit for one test (none
// opens under GOOS=js: the test skips there).
func groupFile(t *testing.T) *DB {
	t.Helper()
	if runtime.GOOS == "js" {
		t.Skip("needs a file database")
	}
	db, err := OpenFile(filepath.Join(t.TempDir(), "group.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// inProgress is an in_progress claim of key, owned by key.
func inProgress(key string) engine.KeyRecord {
	return engine.KeyRecord{Scope: "s", Key: key, Customer: "c", State: engine.StateInProgress, Owner: key, CreatedAt: 1}
}

// A claim that leaves its group early does not keep the group open when
// someone else's answer waits on that group's commit: with a payment call
// of seconds (--payment-latency) between the claim and the attempt's next
// write, that answer would otherwise wait for the call too.
func TestEarlyClaimDoesNotHoldBackAnotherMembersAnswer(t *testing.T) {
	db := groupFile(t)
	ctx := context.Background()

	// The first member leaves while someone is about to join: the group
	// stays open and its answer waits for the group's commit.
	db.waiting.Add(1)
	answered := make(chan error, 1)
	go func() {
		_, err := db.PutAccount(ctx, "alice", 100)
		answered <- err
	}()
	require.Eventually(t, func() bool {
		db.mu.Lock()
		defer db.mu.Unlock()
		return db.batch != nil && db.batch.members == 1
	}, 10*time.Second, time.Millisecond, "the first member joined")
	db.waiting.Add(-1)

	// A claim joins that group and leaves early. Its next write is not
	// coming (its payment call is slow): the group must commit now.
	claim, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, inProgress("k"))
	require.NoError(t, err)
	require.NotNil(t, claim.Pending)
	select {
	case err := <-answered:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the first member's answer still waits for the claim's next write")
	}
	require.NoError(t, claim.Pending.Wait(), "the claim was committed with that group")
}

// A claim left in an open group, whose attempt answers without writing
// again, is committed by its own Wait: it never waits for a stranger's
// write to end the group.
func TestWaitCommitsAClaimLeftInAnOpenGroup(t *testing.T) {
	db := groupFile(t)
	claim, err := db.InsertKey(context.Background(), engine.TableConstrained, engine.InsertPlain, inProgress("k"))
	require.NoError(t, err)
	require.NotNil(t, claim.Pending)
	db.mu.Lock()
	open := db.batch != nil
	db.mu.Unlock()
	require.True(t, open, "the claim, alone in its group, left it open for its next write")
	waited := make(chan error, 1)
	go func() { waited <- claim.Pending.Wait() }()
	select {
	case err := <-waited:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Wait still waits for a write that is not coming")
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	assert.Nil(t, db.batch, "the group was committed")
}
