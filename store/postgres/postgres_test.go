package postgres_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/internal/pgtest"
	"idemlab/store/postgres"
	"idemlab/store/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var schemaSeq atomic.Int64

// open opens a store in a new schema of the package's database.
func open(t testing.TB, url string) *postgres.DB {
	t.Helper()
	return openSchema(t, url, fmt.Sprintf("s%d", schemaSeq.Add(1)))
}

func openSchema(t testing.TB, url, schema string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), url, schema)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// TestConformance runs the engine.Store suite on PostgreSQL: every test in
// a schema of its own; a second pool on the same schema stands for a
// second server process.
func TestConformance(t *testing.T) {
	url := pgtest.URL(t)
	storetest.Run(t, storetest.Harness{
		Open: func(t testing.TB) storetest.Store { return open(t, url) },
		Share: func(t testing.TB, s storetest.Store) storetest.Store {
			return openSchema(t, url, s.(*postgres.DB).Schema())
		},
	})
}

func TestClaimVerdictIsSQLState23505(t *testing.T) {
	db := open(t, pgtest.URL(t))
	ctx := context.Background()
	rec := engine.KeyRecord{Scope: "s", Key: "k", Customer: "c", State: engine.StateInProgress, Owner: "o", CreatedAt: 1}
	_, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, rec)
	require.NoError(t, err)
	dup, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, rec)
	require.NoError(t, err)
	assert.Contains(t, dup.ConstraintError, `duplicate key value violates unique constraint "idem_keys_pkey"`)
	assert.Contains(t, dup.ConstraintError, "SQLSTATE 23505")
}

// Several servers starting at once against one new database each run the
// migrations; the advisory lock lets one create the schema and the others
// find it done.
func TestMigrationsFromManyProcessesAtOnce(t *testing.T) {
	url := pgtest.URL(t)
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := postgres.Open(context.Background(), url, "shared_level")
			if assert.NoError(t, err) {
				db.Close()
			}
		}()
	}
	wg.Wait()
	db := openSchema(t, url, "shared_level")
	_, err := db.PutAccount(context.Background(), "a", 7)
	require.NoError(t, err)
	db.Close()
	db = openSchema(t, url, "shared_level")
	a, err := db.GetAccount(context.Background(), "a")
	require.NoError(t, err)
	assert.Equal(t, int64(7), a.Balance, "reopening runs no migration twice and keeps the data")
}

func TestLevelsDoNotShareTables(t *testing.T) {
	url := pgtest.URL(t)
	one, two := openSchema(t, url, "level_one"), openSchema(t, url, "level_two")
	ctx := context.Background()
	_, err := one.PutAccount(ctx, "a", 1)
	require.NoError(t, err)
	_, err = two.GetAccount(ctx, "a")
	assert.ErrorIs(t, err, engine.ErrNotFound)
}

func TestOpenRefusesABadSchemaName(t *testing.T) {
	_, err := postgres.Open(context.Background(), "postgres://nowhere.invalid/x", `x"; DROP SCHEMA public; --`)
	assert.ErrorContains(t, err, "schema name")
}

// The browser's module carries SQLite only: nothing it imports may pull
// in the PostgreSQL driver.
func TestWasmModuleHasNoPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	cmd := exec.Command("go", "list", "-deps", "idemlab/wasm")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "idemlab/store/sqlite\n", "the list is the module's dependencies")
	assert.NotContains(t, string(out), "jackc/pgx")
	assert.NotContains(t, string(out), "idemlab/store/postgres")
}

// A schema that an older build made (version 1, before ledger_transfer)
// is brought up to date by the next Open, its money kept, and transfers
// then run through the function.
func TestOpenMigratesAnOlderSchema(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	require.NoError(t, postgres.MigrateTo(ctx, url, "older_level", 1))
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "INSERT INTO older_level.accounts (id, balance) VALUES ('a', 10), ('b', 0)")
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "SELECT 'older_level.ledger_transfer'::regproc")
	require.Error(t, err, "version 1 has no ledger_transfer")

	db := openSchema(t, url, "older_level")
	res, err := db.Transfer(ctx, engine.TransferArgs{From: "a", To: "b", Amount: 3, At: 1})
	require.NoError(t, err)
	assert.Equal(t, engine.TransferDone, res.Outcome)
	assert.Contains(t, res.SQL, "ledger_transfer")
	a, err := db.GetAccount(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, int64(7), a.Balance)
	var version int
	require.NoError(t, conn.QueryRow(ctx, "SELECT max(version) FROM older_level.schema_version").Scan(&version))
	assert.Equal(t, postgres.SchemaVersion, version)
}

func TestPoolSize(t *testing.T) {
	url := pgtest.URL(t)
	assert.Equal(t, int32(min(postgres.DefaultMaxConns, max(8, 2*runtime.GOMAXPROCS(0)))), openSchema(t, url, "pool_default").PoolSize())
	assert.Equal(t, int32(3), openSchema(t, url+"&pool_max_conns=3", "pool_set").PoolSize(), "the URL's pool_max_conns wins")
}

// TestTheSchemaRefusesWhatTheLedgerForbids: the rules migration 1 wrote as
// CHECKs, and migration 3 as domains, still refuse a write that breaks
// them, whoever sends it (SQLSTATE 23514), and change nothing.
func TestTheSchemaRefusesWhatTheLedgerForbids(t *testing.T) {
	db := open(t, pgtest.URL(t))
	ctx := context.Background()
	_, err := db.PutAccount(ctx, "a", 5)
	require.NoError(t, err)
	rec := engine.KeyRecord{Scope: "s", Key: "k", Customer: "c", State: engine.StateInProgress, Owner: "o", CreatedAt: 1}
	_, err = db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, rec)
	require.NoError(t, err)
	for _, sql := range []string{
		"UPDATE accounts SET balance = balance - 6 WHERE id = 'a'",
		"INSERT INTO accounts (id, balance) VALUES ('b', -1)",
		"INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES ('a', 'a', 0, 1)",
		"UPDATE idem_keys SET state = 'done'",
		"INSERT INTO idem_keys_unconstrained (scope, idem_key, customer, state, created_at) VALUES ('s', 'k', 'c', 'paid', 1)",
	} {
		_, err := db.Pool().Exec(ctx, sql)
		var pg *pgconn.PgError
		if assert.ErrorAs(t, err, &pg, sql) {
			assert.Equal(t, "23514", pg.Code, sql)
		}
	}
	a, err := db.GetAccount(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, int64(5), a.Balance)
	look, err := db.LookupKey(ctx, engine.TableConstrained, "s", "k")
	require.NoError(t, err)
	assert.Equal(t, engine.StateInProgress, look.Record.State)
}

// TestAServerOfThePreviousBuildKeepsPaying: migration 3 adds a
// ledger_transfer with one argument fewer and keeps migration 2's, so a
// server started before the upgrade, still calling the old one with its
// body in parts, pays once and completes its key as before.
func TestAServerOfThePreviousBuildKeepsPaying(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	require.NoError(t, postgres.MigrateTo(ctx, url, "previous_build", 2))
	db := openSchema(t, url, "previous_build")
	for id, bal := range map[string]int64{"a": 10, "b": 0} {
		_, err := db.PutAccount(ctx, id, bal)
		require.NoError(t, err)
	}
	rec := engine.KeyRecord{Scope: "s", Key: "k", Customer: "c", State: engine.StateInProgress, Owner: "o", CreatedAt: 1}
	_, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, rec)
	require.NoError(t, err)
	var outcome int
	var balance, id int64
	err = db.Pool().QueryRow(ctx, "SELECT outcome, payer_balance, new_id FROM ledger_transfer($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
		"a", "b", int64(3), int64(1), "c", "k", false, "s", "k", "o", int32(201), "[]",
		[]string{`{"id":"`, `","balance":`, `}`}, []int32{1, 2}).Scan(&outcome, &balance, &id)
	require.NoError(t, err)
	assert.Equal(t, 0, outcome)
	assert.Equal(t, int64(7), balance)
	look, err := db.LookupKey(ctx, engine.TableConstrained, "s", "k")
	require.NoError(t, err)
	assert.Equal(t, engine.StateCompleted, look.Record.State)
	assert.Equal(t, fmt.Sprintf(`{"id":"tr_%06d","balance":7}`, id), string(look.Record.Response.Body))
}
