// Package storetest is the conformance suite for engine.Store: what every
// store idemlab runs on must prove, run by each store's own tests (SQLite
// in package store, PostgreSQL in store/postgres). It drives the store
// directly (the claim's verdict, takeovers, the owner guard on completion,
// the reaper) and through the engine (simultaneous retries of one key, a
// crash before every phase, a lease takeover, retention, hostile input).
package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
)

// Store is an engine.Store the suite can also read whole.
type Store interface {
	engine.Store
	Snapshot(ctx context.Context) (engine.Snapshot, error)
	Close() error
}

// Harness opens stores for the suite.
type Harness struct {
	// Open returns a new, empty store, closed when t ends.
	Open func(t testing.TB) Store
	// Share, when set, opens another handle on the database s is open on,
	// as a second server process would; closed when t ends.
	Share func(t testing.TB, s Store) Store
}

// Run runs the whole suite.
func Run(t *testing.T, h Harness) {
	for _, c := range []struct {
		name string
		test func(*testing.T, Harness)
	}{
		{"ClaimVerdictIsTheUniqueIndex", testClaimVerdict},
		{"TakeOverOnlyOnce", testTakeOverOnlyOnce},
		{"CompletionGuardedByOwner", testCompletionGuardedByOwner},
		{"DeclinesMoveNothingInEitherOrder", testDeclinesMoveNothing},
		{"ProcessorChargesOncePerKey", testProcessorChargesOncePerKey},
		{"ChargeOutlivesALedgerRollback", testChargeOutlivesRollback},
		{"RecoveryPointIsReplacedAndRead", testRecoveryPointStore},
		{"RecoveryPointsAroundThePaymentCall", testRecoveryPoints},
		{"EveryResultCarriesItsSQL", testResultsCarrySQL},
		{"ManyWritersOnOneDatabase", testManyWriters},
		{"ReapSweepDeletesExactlyTheExpiredKeys", testReapSweep},
		{"ReapRefusesAnEmptyWindow", testReapEmptyWindow},
		{"SimultaneousRetries", testSimultaneousRetries},
		{"CrashBeforeEveryPhase", testCrashAtEveryPhase},
		{"LeaseTakeOverIsExclusive", testLeaseTakeOver},
		{"Retention", testRetention},
		{"ReapInBatches", testReapInBatches},
		{"HostileInput", testHostileInput},
		{"RetriesAcrossTwoHandles", testRetriesAcrossTwoHandles},
	} {
		t.Run(c.name, func(t *testing.T) { c.test(t, h) })
	}
}

func key(scope, k string) engine.KeyRecord {
	return engine.KeyRecord{Scope: scope, Key: k, Customer: "c1", Fingerprint: "fp", State: engine.StateInProgress, Owner: "o-" + k, CreatedAt: 1}
}

func snapshot(t testing.TB, s Store) engine.Snapshot {
	t.Helper()
	snap, err := s.Snapshot(context.Background())
	require.NoError(t, err)
	return snap
}

func testClaimVerdict(t *testing.T, h Harness) {
	db := h.Open(t)
	ctx := context.Background()
	first, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, key("s", "k"))
	require.NoError(t, err)
	assert.True(t, first.Inserted)
	assert.Contains(t, first.SQL, "INSERT INTO idem_keys")

	second, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, key("s", "k"))
	require.NoError(t, err, "a duplicate is a verdict, not an error")
	assert.False(t, second.Inserted)
	assert.Contains(t, second.ConstraintError, "idem_keys", "the database's own constraint error is shown")
	require.NotNil(t, second.Existing)
	assert.Equal(t, "o-k", second.Existing.Owner, "the row that won is returned")

	other, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, key("other-scope", "k"))
	require.NoError(t, err)
	assert.True(t, other.Inserted, "the same key in another scope is another key")

	ignored, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertOrIgnore, key("s", "k"))
	require.NoError(t, err)
	assert.False(t, ignored.Inserted)
	assert.Empty(t, ignored.ConstraintError, "the ignoring INSERT swallows the conflict: no error at all")

	for range 2 {
		loose, err := db.InsertKey(ctx, engine.TableLoose, engine.InsertPlain, key("s", "k"))
		require.NoError(t, err)
		assert.True(t, loose.Inserted, "the unconstrained table takes duplicates")
	}
	noState := key("s", "no-state")
	noState.State = ""
	res, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, noState)
	require.NoError(t, err)
	assert.True(t, res.Inserted)
	look, err := db.LookupKey(ctx, engine.TableConstrained, "s", "no-state")
	require.NoError(t, err)
	require.NotNil(t, look.Record)
	assert.Equal(t, engine.StateCompleted, look.Record.State, "a row written without state is completed by the table's default")

	snap := snapshot(t, db)
	assert.Len(t, snap.Keys, 3)
	assert.Len(t, snap.LooseKeys, 2)
}

func testTakeOverOnlyOnce(t *testing.T, h Harness) {
	db := h.Open(t)
	ctx := context.Background()
	rec := key("s", "k")
	rec.LeaseUntil = 100
	_, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, rec)
	require.NoError(t, err)

	early := key("s", "k")
	early.Owner = "early"
	took, err := db.TakeOverKey(ctx, engine.TableConstrained, early, 99)
	require.NoError(t, err)
	assert.False(t, took.Changed, "the lease still holds")

	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := key("s", "k")
			r.Owner, r.LeaseUntil = fmt.Sprintf("late-%d", i), 1000
			took, err := db.TakeOverKey(ctx, engine.TableConstrained, r, 100)
			assert.NoError(t, err)
			if took.Changed {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(1), wins.Load(), "one conditional UPDATE wins; the rest see the new lease")
}

// Every call that runs SQL a lesson shows says which in its result, also
// when it changed nothing or failed, and says whether it changed the row.
func testResultsCarrySQL(t *testing.T, h Harness) {
	db := h.Open(t)
	ctx := context.Background()
	for _, table := range []engine.KeyTable{engine.TableConstrained, engine.TableLoose} {
		look, err := db.LookupKey(ctx, table, "s", "k")
		require.NoError(t, err)
		assert.Nil(t, look.Record)
		assert.Contains(t, look.SQL, "SELECT")
		ins, err := db.InsertKey(ctx, table, engine.InsertPlain, key("s", "k"))
		require.NoError(t, err)
		assert.Contains(t, ins.SQL, "INSERT")

		took, err := db.TakeOverKey(ctx, table, key("s", "k"), 1)
		require.NoError(t, err)
		assert.False(t, took.Changed, "the claim has no lease to run out")
		assert.Contains(t, took.SQL, "UPDATE")

		for _, c := range []struct {
			owner   string
			changed bool
		}{{"someone-else", false}, {"o-k", true}} {
			stored, err := db.StoreResponse(ctx, table, "s", "k", c.owner, render(engine.TransferResult{}), "")
			require.NoError(t, err)
			assert.Equal(t, c.changed, stored.Changed, "store the response as %s", c.owner)
			assert.Contains(t, stored.SQL, "UPDATE")
			released, err := db.ReleaseKey(ctx, table, "s", "k", c.owner)
			require.NoError(t, err)
			assert.Equal(t, c.changed, released.Changed, "release as %s", c.owner)
			assert.Contains(t, released.SQL, "DELETE")
		}
		look, err = db.LookupKey(ctx, table, "s", "k")
		require.NoError(t, err)
		assert.Nil(t, look.Record, "the owner released its claim")
	}
	got, err := db.TransferByID(ctx, "nonsense")
	assert.ErrorIs(t, err, engine.ErrNotFound)
	assert.Contains(t, got.SQL, "SELECT")
	tr, err := db.Transfer(ctx, engine.TransferArgs{From: "nobody", To: "nobody-either", Amount: 1, At: 1})
	require.NoError(t, err)
	assert.Equal(t, engine.TransferUnknownAccount, tr.Outcome)
	assert.NotEmpty(t, tr.SQL)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	look, err := db.LookupKey(cancelled, engine.TableConstrained, "s", "k")
	assert.Error(t, err)
	assert.Contains(t, look.SQL, "SELECT", "a failed call names the statement it was to run")
}

func render(engine.TransferResult) engine.Response {
	return engine.Response{Status: 201, Header: []engine.Header{{Name: "Content-Type", Value: "application/json"}}, Body: []byte("{}")}
}

// testDeclinesMoveNothing declines each kind of impossible transfer, with
// the payer's id below the payee's and above it (a store that moves the
// lower id first meets the problem before or after it has moved money),
// with and without a key to complete: the answer names the first thing
// wrong (the payer, then its funds, then the payee), and no balance or
// ledger row changes.
func testDeclinesMoveNothing(t *testing.T, h Harness) {
	db := h.Open(t)
	ctx := context.Background()
	// "c" < "m"; "a0" sorts below both, "z9" above both; neither exists.
	_, err := db.PutAccount(ctx, "m", 50)
	require.NoError(t, err)
	_, err = db.PutAccount(ctx, "c", 0)
	require.NoError(t, err)
	for i, c := range []struct {
		from, to string
		amount   int64
		outcome  engine.TransferOutcome
		missing  string
		balance  int64
	}{
		{"m", "c", 51, engine.TransferInsufficientFunds, "", 50},
		{"c", "m", 1, engine.TransferInsufficientFunds, "", 0},
		{"m", "a0", 1, engine.TransferUnknownAccount, "a0", 0},
		{"m", "z9", 1, engine.TransferUnknownAccount, "z9", 0},
		{"a0", "m", 1, engine.TransferUnknownAccount, "a0", 0},
		{"z9", "m", 1, engine.TransferUnknownAccount, "z9", 0},
		{"a0", "z9", 1, engine.TransferUnknownAccount, "a0", 0},
		{"z9", "a0", 1, engine.TransferUnknownAccount, "z9", 0},
		{"m", "a0", 51, engine.TransferInsufficientFunds, "", 50},
		{"m", "z9", 51, engine.TransferInsufficientFunds, "", 50},
		{"m", "m", 51, engine.TransferInsufficientFunds, "", 50},
	} {
		for _, keyed := range []bool{false, true} {
			name := fmt.Sprintf("%s→%s %d keyed=%v", c.from, c.to, c.amount, keyed)
			args := engine.TransferArgs{From: c.from, To: c.to, Amount: c.amount, At: 1}
			if keyed {
				k := fmt.Sprintf("decline-%d", i)
				rec := key("s", k)
				_, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, rec)
				require.NoError(t, err)
				args.Complete = &engine.Completion{Scope: "s", Key: k, Owner: rec.Owner, Render: render}
			}
			res, err := db.Transfer(ctx, args)
			require.NoError(t, err, name)
			assert.Equal(t, c.outcome, res.Outcome, name)
			assert.Equal(t, c.missing, res.Missing, name)
			if c.outcome == engine.TransferInsufficientFunds {
				assert.Equal(t, c.balance, res.Balance, name)
			}
			m, err := db.GetAccount(ctx, "m")
			require.NoError(t, err)
			cc, err := db.GetAccount(ctx, "c")
			require.NoError(t, err)
			assert.Equal(t, [2]int64{50, 0}, [2]int64{m.Balance, cc.Balance}, name)
		}
	}
	snap := snapshot(t, db)
	assert.Empty(t, snap.Transfers, "no declined transfer is in the ledger")
	assert.Len(t, snap.Accounts, 2, "no account was made")
}

func testCompletionGuardedByOwner(t *testing.T, h Harness) {
	db := h.Open(t)
	ctx := context.Background()
	_, err := db.PutAccount(ctx, "a", 100)
	require.NoError(t, err)
	_, err = db.PutAccount(ctx, "b", 0)
	require.NoError(t, err)
	_, err = db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, key("s", "k"))
	require.NoError(t, err)

	res, err := db.Transfer(ctx, engine.TransferArgs{From: "a", To: "b", Amount: 40, At: 5,
		Complete: &engine.Completion{Table: engine.TableConstrained, Scope: "s", Key: "k", Owner: "someone-else", Render: render}})
	require.NoError(t, err)
	assert.False(t, res.Completed)
	a, _ := db.GetAccount(ctx, "a")
	assert.Equal(t, int64(100), a.Balance, "the whole transaction rolled back")
	assert.Empty(t, snapshot(t, db).Transfers)

	res, err = db.Transfer(ctx, engine.TransferArgs{From: "a", To: "b", Amount: 40, At: 5,
		Complete: &engine.Completion{Table: engine.TableConstrained, Scope: "s", Key: "k", Owner: "o-k", Render: render}})
	require.NoError(t, err)
	assert.True(t, res.Completed)
	a, _ = db.GetAccount(ctx, "a")
	assert.Equal(t, int64(60), a.Balance)
	look, err := db.LookupKey(ctx, engine.TableConstrained, "s", "k")
	require.NoError(t, err)
	rec := look.Record
	require.NotNil(t, rec.Response)
	assert.Equal(t, engine.StateCompleted, rec.State)
	assert.Equal(t, res.Transfer.ID, rec.TransferID)
	assert.Equal(t, render(res), *rec.Response, "the stored response comes back as it was stored")

	got, err := db.TransferByID(ctx, res.Transfer.ID)
	require.NoError(t, err)
	assert.Equal(t, int64(40), got.Transfer.Amount)
	assert.Equal(t, int64(60), got.Balance)
	_, err = db.TransferByID(ctx, "tr_999999")
	assert.ErrorIs(t, err, engine.ErrNotFound)
	_, err = db.TransferByID(ctx, "nonsense")
	assert.ErrorIs(t, err, engine.ErrNotFound)

	res, err = db.Transfer(ctx, engine.TransferArgs{From: "a", To: "b", Amount: 1000, At: 6})
	require.NoError(t, err)
	assert.Equal(t, engine.TransferInsufficientFunds, res.Outcome)
	assert.Equal(t, int64(60), res.Balance)
	res, err = db.Transfer(ctx, engine.TransferArgs{From: "a", To: "zed", Amount: 1, At: 6})
	require.NoError(t, err)
	assert.Equal(t, engine.TransferUnknownAccount, res.Outcome)
	assert.Equal(t, "zed", res.Missing)
	res, err = db.Transfer(ctx, engine.TransferArgs{From: "nobody", To: "a", Amount: 1, At: 6})
	require.NoError(t, err)
	assert.Equal(t, engine.TransferUnknownAccount, res.Outcome)
	assert.Equal(t, "nobody", res.Missing)
	a, _ = db.GetAccount(ctx, "a")
	assert.Equal(t, int64(60), a.Balance, "refused transfers move nothing")
	_, err = db.GetAccount(ctx, "zed")
	assert.ErrorIs(t, err, engine.ErrNotFound)
}

// testManyWriters hammers one database from many goroutines through two
// handles, as two server processes would, with transfers in both
// directions: no caller sees a lock error, no money is made or lost.
func testManyWriters(t *testing.T, h Harness) {
	first := h.Open(t)
	dbs := []Store{first, first}
	if h.Share != nil {
		dbs[1] = h.Share(t, first)
	}
	ctx := context.Background()
	_, err := dbs[0].PutAccount(ctx, "a", 1_000_000)
	require.NoError(t, err)
	_, err = dbs[0].PutAccount(ctx, "b", 1_000_000)
	require.NoError(t, err)

	const goroutines, each = 16, 25
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db := dbs[g%2]
			from, to := "a", "b"
			if g%4 >= 2 {
				from, to = to, from // opposite directions lock the same two rows
			}
			for i := range each {
				k := fmt.Sprintf("k-%d-%d", g, i)
				rec := key("s", k)
				ins, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, rec)
				if !assert.NoError(t, err) || !assert.True(t, ins.Inserted) {
					return
				}
				res, err := db.Transfer(ctx, engine.TransferArgs{From: from, To: to, Amount: int64(g + 1), At: 1,
					Complete: &engine.Completion{Scope: "s", Key: k, Owner: rec.Owner, Render: render}})
				assert.NoError(t, err)
				assert.True(t, res.Completed)
			}
		}()
	}
	wg.Wait()
	var want int64 = 1_000_000
	for g := range goroutines {
		if g%4 >= 2 {
			want += int64(g+1) * each
		} else {
			want -= int64(g+1) * each
		}
	}
	a, err := dbs[1].GetAccount(ctx, "a")
	require.NoError(t, err)
	b, err := dbs[1].GetAccount(ctx, "b")
	require.NoError(t, err)
	assert.Equal(t, want, a.Balance)
	assert.Equal(t, int64(2_000_000), a.Balance+b.Balance, "money is conserved")
	snap := snapshot(t, dbs[0])
	assert.Len(t, snap.Transfers, goroutines*each)
	for _, k := range snap.Keys {
		assert.Equal(t, engine.StateCompleted, k.State)
	}
}

// The reaper's sweep deletes exactly the keys that expired, in both key
// tables, whatever the window size, and a key that expires after the sweep
// passed it is collected by the next sweep.
func testReapSweep(t *testing.T, h Harness) {
	for _, batch := range []int{1, 3, 7, 100} {
		t.Run(fmt.Sprintf("batch %d", batch), func(t *testing.T) {
			db := h.Open(t)
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
				snap := snapshot(t, db)
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

func testReapEmptyWindow(t *testing.T, h Harness) {
	db := h.Open(t)
	_, _, err := db.Reap(context.Background(), 1, 0)
	assert.Error(t, err)
}

// testProcessorChargesOncePerKey: the processor charges every call that
// carries no key, answers a repeated key with its first charge, also when
// the calls come at once from two handles, and keeps two keys apart.
func testProcessorChargesOncePerKey(t *testing.T, h Harness) {
	db := h.Open(t)
	ctx := context.Background()
	for id, bal := range map[string]int64{"alice": 100_000, "bob": 0} {
		_, err := db.PutAccount(ctx, id, bal)
		require.NoError(t, err)
	}
	// The processor declines what the ledger would: nothing is charged.
	for name, a := range map[string]engine.ChargeArgs{
		"short of funds": {From: "alice", To: "bob", Amount: 100_001, At: 1, Customer: "c1", Key: "k0"},
		"unknown payer":  {From: "nobody", To: "bob", Amount: 1, At: 1, Customer: "c1", Key: "k0", IdempotencyKey: "c1:k0"},
		"unknown payee":  {From: "alice", To: "nobody", Amount: 1, At: 1, Customer: "c1", Key: "k0"},
	} {
		res, err := db.Charge(ctx, a)
		require.NoError(t, err, name)
		assert.True(t, res.Declined, name)
		assert.Empty(t, res.Charge.ID, name)
	}
	require.Empty(t, snapshot(t, db).Charges, "a declined call charges nothing")
	call := engine.ChargeArgs{From: "alice", To: "bob", Amount: 5000, At: 7, Customer: "c1", Key: "k1"}
	var ids []string
	for range 2 {
		res, err := db.Charge(ctx, call)
		require.NoError(t, err)
		assert.False(t, res.Replayed, "a call without a key is a new charge")
		assert.Contains(t, res.SQL, "INSERT INTO processor_charges")
		ids = append(ids, res.Charge.ID)
	}
	assert.NotEqual(t, ids[0], ids[1])

	other := db
	if h.Share != nil {
		other = h.Share(t, db)
	}
	keyed := call
	keyed.IdempotencyKey = "c1:k1"
	const n = 8
	results := make([]engine.ChargeResult, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := db
			if i%2 == 1 {
				s = other
			}
			var err error
			results[i], err = s.Charge(ctx, keyed)
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	fresh := 0
	for _, r := range results {
		if !r.Replayed {
			fresh++
		}
	}
	assert.Equal(t, 1, fresh, "one of the keyed calls charges")
	first := results[0].Charge.ID
	for _, r := range results {
		assert.Equal(t, first, r.Charge.ID, "every keyed call gets the one charge")
		assert.Equal(t, "c1:k1", r.Charge.IdempotencyKey)
	}
	again := keyed
	again.IdempotencyKey = "c2:k1"
	res, err := db.Charge(ctx, again)
	require.NoError(t, err)
	assert.False(t, res.Replayed, "another key is another charge")

	snap := snapshot(t, db)
	require.Len(t, snap.Charges, 4)
	assert.Equal(t, []string{ids[0], ids[1]}, []string{snap.Charges[0].ID, snap.Charges[1].ID})
	assert.Equal(t, engine.Charge{ID: ids[0], From: "alice", To: "bob", Amount: 5000, CreatedAt: 7, Customer: "c1", Key: "k1"}, snap.Charges[0])
}

// testChargeOutlivesRollback: a charge made before a ledger transaction
// that rolls back (its claim was taken over) stays in the processor's
// records, as a real processor's would.
func testChargeOutlivesRollback(t *testing.T, h Harness) {
	db := h.Open(t)
	ctx := context.Background()
	for id, bal := range map[string]int64{"alice": 100_000, "bob": 0} {
		_, err := db.PutAccount(ctx, id, bal)
		require.NoError(t, err)
	}
	_, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, key("s", "k"))
	require.NoError(t, err)
	_, err = db.Charge(ctx, engine.ChargeArgs{From: "alice", To: "bob", Amount: 30_000, At: 2, Customer: "c1", Key: "k"})
	require.NoError(t, err)
	tr, err := db.Transfer(ctx, engine.TransferArgs{From: "alice", To: "bob", Amount: 30_000, At: 3, Customer: "c1", Key: "k",
		Complete: &engine.Completion{Table: engine.TableConstrained, Scope: "s", Key: "k", Owner: "someone-else", Render: render}})
	require.NoError(t, err)
	require.False(t, tr.Completed, "the owner guard rolled the ledger back")
	snap := snapshot(t, db)
	assert.Empty(t, snap.Transfers)
	assert.Len(t, snap.Charges, 1, "the processor's charge stands")
}

// testRecoveryPointStore: a key has no recovery point until one is saved,
// then the last one saved, whoever saved it.
func testRecoveryPointStore(t *testing.T, h Harness) {
	db := h.Open(t)
	ctx := context.Background()
	none, err := db.LookupRecoveryPoint(ctx, "s", "k")
	require.NoError(t, err)
	assert.Nil(t, none.Point)
	assert.Contains(t, none.SQL, "idem_recovery")
	for _, rp := range []engine.RecoveryPoint{
		{Scope: "s", Key: "k", Owner: "o1", Point: engine.RecoveryChargeStarted, At: 1},
		{Scope: "s", Key: "k", Owner: "o1", Point: engine.RecoveryChargeMade, ChargeID: "ch_000001", At: 2},
		{Scope: "s", Key: "k", Owner: "o2", Point: engine.RecoveryChargeStarted, At: 3},
	} {
		saved, err := db.SaveRecoveryPoint(ctx, rp)
		require.NoError(t, err)
		assert.NotEmpty(t, saved.SQL)
		got, err := db.LookupRecoveryPoint(ctx, "s", "k")
		require.NoError(t, err)
		require.NotNil(t, got.Point)
		assert.Equal(t, rp, *got.Point)
	}
	other, err := db.LookupRecoveryPoint(ctx, "s2", "k")
	require.NoError(t, err)
	assert.Nil(t, other.Point, "another scope's key has none")
}
