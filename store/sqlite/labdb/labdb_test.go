package labdb_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/store/sqlite/labdb"
)

const keysSchema = `CREATE TABLE idem_keys (
  customer TEXT NOT NULL, idem_key TEXT NOT NULL, state TEXT NOT NULL,
  PRIMARY KEY (customer, idem_key)
);`

var seed = []labdb.Account{{ID: "alice", Balance: 1000000}, {ID: "bob", Balance: 0}}

func open(t testing.TB) *labdb.DB {
	t.Helper()
	db, err := labdb.Open(keysSchema, seed)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	return db
}

func conn(t testing.TB, db *labdb.DB, attempt string) string {
	t.Helper()
	id, err := db.Conn(attempt)
	require.NoError(t, err)
	return id
}

func exec(t testing.TB, db *labdb.DB, c, op, sql string, params ...any) labdb.Result {
	t.Helper()
	r, err := db.Exec(c, op, sql, params)
	require.NoError(t, err, "%s %s", op, sql)
	return r
}

func TestConstraintErrorNamesTheConstraint(t *testing.T) {
	db := open(t)
	c := conn(t, db, "a1")
	exec(t, db, c, "run", `INSERT INTO idem_keys VALUES (?, ?, 'in_progress')`, "cust-1", "k1")
	_, err := db.Exec(c, "run", `INSERT INTO idem_keys VALUES (?, ?, 'in_progress')`, []any{"cust-1", "k1"})
	var e *labdb.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "ConstraintError", e.Name)
	assert.Equal(t, "SQLITE_CONSTRAINT_PRIMARYKEY", e.Code)
	assert.Equal(t, "UNIQUE constraint failed: idem_keys.customer, idem_keys.idem_key", e.Message)

	_, err = db.Exec(c, "run", `UPDATE accounts SET balance = balance - 2000000 WHERE id = 'alice'`, nil)
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "SQLITE_CONSTRAINT_CHECK", e.Code)

	_, err = db.Exec(c, "get", `SELECT * FROM nowhere`, nil)
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "SQLError", e.Name)
	assert.Contains(t, e.Message, "no such table: nowhere")
}

func TestGetAllRun(t *testing.T) {
	db := open(t)
	c := conn(t, db, "a1")
	r := exec(t, db, c, "run", `INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES (?, ?, ?, ?)`, "alice", "bob", 5.0, 1700000000000.0)
	assert.Equal(t, int64(1), r.Changes)
	assert.Equal(t, int64(1), r.LastInsertRowid)
	got := exec(t, db, c, "get", `SELECT id, amount, from_id FROM transfers WHERE id = ?`, 1.0)
	assert.Equal(t, map[string]any{"id": int64(1), "amount": int64(5), "from_id": "alice"}, got.Row)
	none := exec(t, db, c, "get", `SELECT * FROM transfers WHERE id = 99`)
	assert.Nil(t, none.Row)
	all := exec(t, db, c, "all", `SELECT id FROM accounts ORDER BY id`)
	assert.Len(t, all.Rows, 2)
	_, err := db.Exec(c, "run", `SELECT 1; SELECT 2`, nil)
	assert.Error(t, err, "two statements in one call")
}

// run given a statement that only reads says that it dropped what it
// read (a get or an all was meant), with or without a row found; a
// write, even one with RETURNING, does not.
func TestRunSaysWhenItDropsRowsItRead(t *testing.T) {
	db := open(t)
	c := conn(t, db, "a1")
	assert.True(t, exec(t, db, c, "run", `SELECT * FROM idem_keys WHERE customer = ?`, "nobody").Dropped, "no row found")
	assert.True(t, exec(t, db, c, "run", `select id from accounts`).Dropped, "rows found")
	assert.False(t, exec(t, db, c, "run", `INSERT INTO idem_keys VALUES (?, ?, 'in_progress') RETURNING state`, "cust-1", "k1").Dropped)
	assert.False(t, exec(t, db, c, "run", `UPDATE idem_keys SET state = 'done'`).Dropped)
	assert.False(t, exec(t, db, c, "get", `SELECT * FROM idem_keys`).Dropped)
}

// A second connection's BEGIN IMMEDIATE while the first holds the write
// lock answers Busy at once; after the holder commits it succeeds.
func TestBeginWaitsForTheWriteLock(t *testing.T) {
	db := open(t)
	a, b := conn(t, db, "a1"), conn(t, db, "a2")
	exec(t, db, a, "begin", "")
	_, err := db.Exec(b, "begin", "", nil)
	var e *labdb.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, labdb.ErrBusy, e.Name)
	// A reader is not stopped by the writer's lock and sees the committed state.
	exec(t, db, a, "run", `INSERT INTO idem_keys VALUES ('c', 'k', 'in_progress')`)
	assert.Nil(t, exec(t, db, b, "get", `SELECT * FROM idem_keys`).Row)
	exec(t, db, a, "commit", "")
	exec(t, db, b, "begin", "")
	assert.NotNil(t, exec(t, db, b, "get", `SELECT * FROM idem_keys`).Row)
	exec(t, db, b, "rollback", "")
}

// A connection released with its transaction open (an attempt that
// crashed) rolls it back: nothing it wrote stays, and the lock is free.
func TestReleaseRollsBack(t *testing.T) {
	db := open(t)
	a, b := conn(t, db, "a1"), conn(t, db, "a2")
	exec(t, db, a, "begin", "")
	exec(t, db, a, "run", `INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES ('alice', 'bob', 7, 0)`)
	rolled, err := db.Release(a)
	require.NoError(t, err)
	assert.True(t, rolled)
	exec(t, db, b, "begin", "")
	exec(t, db, b, "commit", "")
	_, ts, err := db.Ledger()
	require.NoError(t, err)
	assert.Empty(t, ts)
}

func TestLedgerNamesTheAttemptAndResetRestores(t *testing.T) {
	db := open(t)
	a, b := conn(t, db, "a1"), conn(t, db, "a2")
	exec(t, db, a, "run", `INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES ('alice', 'bob', 7, 0)`)
	exec(t, db, b, "begin", "")
	exec(t, db, b, "run", `UPDATE accounts SET balance = balance - 7 WHERE id = 'alice'`)
	exec(t, db, b, "run", `INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES ('alice', 'bob', 7, 0)`)
	exec(t, db, b, "run", `INSERT INTO idem_keys VALUES ('c', 'k', 'completed')`)
	exec(t, db, b, "commit", "")
	_, _, err := db.Pay("a2", "c", "k", "alice", "bob", 7, "")
	require.NoError(t, err)
	accts, ts, err := db.Ledger()
	require.NoError(t, err)
	require.Len(t, ts, 2)
	assert.Equal(t, "a1", ts[0].Attempt)
	assert.Equal(t, "a2", ts[1].Attempt)
	assert.Equal(t, []labdb.Account{{ID: "alice", Balance: 999993}, {ID: "bob", Balance: 0}}, accts)

	exec(t, db, a, "begin", "") // left open: Reset rolls it back
	require.NoError(t, db.Reset())
	assert.Empty(t, db.Charges())
	accts, ts, err = db.Ledger()
	require.NoError(t, err)
	assert.Empty(t, ts)
	assert.Equal(t, seed, accts)
	c := conn(t, db, "a3")
	assert.Nil(t, exec(t, db, c, "get", `SELECT * FROM idem_keys`).Row)
	// The rowids start over too: the explorer's schedules are alike.
	assert.Equal(t, int64(1), exec(t, db, c, "run", `INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES ('alice', 'bob', 1, 0)`).LastInsertRowid)
}

func TestSchemaWithAutoincrementAndSeedRows(t *testing.T) {
	db, err := labdb.Open(`CREATE TABLE log (id INTEGER PRIMARY KEY AUTOINCREMENT, what TEXT);
INSERT INTO log (what) VALUES ('seeded');`, seed)
	require.NoError(t, err)
	defer db.Close()
	c := conn(t, db, "a1")
	exec(t, db, c, "run", `INSERT INTO log (what) VALUES ('x')`)
	require.NoError(t, db.Reset())
	c = conn(t, db, "a1")
	rows := exec(t, db, c, "all", `SELECT id, what FROM log`).Rows
	assert.Equal(t, []map[string]any{{"id": int64(1), "what": "seeded"}}, rows)
	assert.Equal(t, int64(2), exec(t, db, c, "run", `INSERT INTO log (what) VALUES ('y')`).LastInsertRowid)
}

func TestBadSchemaSaysSQLitesWords(t *testing.T) {
	_, err := labdb.Open(`CREATE TABLE x (`, seed)
	var e *labdb.Error
	require.ErrorAs(t, err, &e)
	assert.Contains(t, e.Message, "your schema")
	assert.Contains(t, e.Message, "incomplete input")
	assert.Equal(t, 1, e.SchemaLine)
}

// A schema's error is said at its line: at the token SQLite names when it
// names one (a syntax error, a column that is not there), else at the
// first line of its statement; the
// statements before it ran, as they do in a file.
func TestBadSchemaSaysItsLine(t *testing.T) {
	for _, c := range []struct {
		schema string
		line   int
		says   string
	}{
		{"-- keys\nCREATE TABLE k (a TEXT PRIMARY KEY);\n\nCREATE TABLE t (\n  a TEXT,\n  b TEXT DEFAULT,\n  c\n);", 6, "syntax error"},
		{"CREATE TABLE k (a TEXT);\n\n  CREATE TABLE k (b TEXT);\n", 3, "already exists"},
		{"CREATE TABLE k (a TEXT);\nCREATE INDEX i ON k (\n  nope);", 3, "no such column"},
		{"CREATE TABLE k (a TEXT);\nCREATE TABLE t (", 2, "incomplete input"},
	} {
		_, err := labdb.Open(c.schema, seed)
		var e *labdb.Error
		if assert.ErrorAs(t, err, &e, c.schema) {
			assert.Equal(t, c.line, e.SchemaLine, c.schema)
			assert.Contains(t, e.Message, c.says)
		}
	}
	db, err := labdb.Open("CREATE TABLE k (a TEXT); -- done\n;;\n", seed)
	require.NoError(t, err, "a comment and empty statements at the end")
	db.Close()
}

func TestPayRemembersKeys(t *testing.T) {
	db := open(t)
	first, replayed, err := db.Pay("a1", "cust-1", "k", "alice", "bob", 100, "cust-1:k")
	require.NoError(t, err)
	assert.False(t, replayed)
	again, replayed, err := db.Pay("a2", "cust-1", "k", "alice", "bob", 100, "cust-1:k")
	require.NoError(t, err)
	assert.True(t, replayed)
	assert.Equal(t, first.ID, again.ID)
	_, _, err = db.Pay("a3", "cust-1", "k", "alice", "bob", 200, "cust-1:k")
	var e *labdb.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "PaymentError", e.Name)
	_, _, err = db.Pay("a4", "cust-1", "k", "alice", "bob", 100, "")
	require.NoError(t, err)
	assert.Len(t, db.Charges(), 2)
	// Every call is recorded with what the network answered, for the
	// checker (a key another customer's payment used first).
	assert.Equal(t, []labdb.PayCall{
		{Attempt: "a1", NetworkKey: "cust-1:k", Outcome: "charged", Charge: first.ID},
		{Attempt: "a2", NetworkKey: "cust-1:k", Outcome: "replayed", Charge: first.ID},
		{Attempt: "a3", NetworkKey: "cust-1:k", Outcome: "refused"},
		{Attempt: "a4", NetworkKey: "", Outcome: "charged", Charge: "ch_2"},
	}, db.PayCalls())
	require.NoError(t, db.Reset())
	assert.Empty(t, db.PayCalls(), "Reset forgets them")
}

func BenchmarkReset(b *testing.B) {
	db := open(b)
	for b.Loop() {
		c, _ := db.Conn("a1")
		db.Exec(c, "run", `INSERT INTO idem_keys VALUES ('c', 'k', 'x')`, nil)
		if err := db.Reset(); err != nil {
			b.Fatal(err)
		}
	}
}

// SetBalance tops an account up or opens one between attempts; what it
// moved counts as starting money, it waits its turn for the write lock,
// and Reset undoes it.
func TestSetBalanceCountsAsStartingMoney(t *testing.T) {
	db := open(t)
	require.NoError(t, db.SetBalance("alice", 1500000))
	require.NoError(t, db.SetBalance("dave", 0))
	accounts, _, err := db.Ledger()
	require.NoError(t, err)
	assert.Equal(t, []labdb.Account{{ID: "alice", Balance: 1500000}, {ID: "bob", Balance: 0}, {ID: "dave", Balance: 0}}, accounts)
	assert.Equal(t, map[string]int64{"alice": 1500000, "bob": 0, "dave": 0}, db.StartBalances())

	c := conn(t, db, "a1")
	exec(t, db, c, "begin", "BEGIN IMMEDIATE")
	err = db.SetBalance("bob", 5)
	var le *labdb.Error
	require.ErrorAs(t, err, &le)
	assert.Equal(t, labdb.ErrBusy, le.Name)
	exec(t, db, c, "commit", "COMMIT")

	require.NoError(t, db.Reset())
	accounts, _, err = db.Ledger()
	require.NoError(t, err)
	assert.Equal(t, seed, accounts)
	assert.Equal(t, map[string]int64{"alice": 1000000, "bob": 0}, db.StartBalances())
}

// An insert that its conflict clause turned into nothing is recorded with
// its attempt and table: the thrown-away verdict of a claim. One that
// inserted, a plain insert's error, and the lab's own tables are not.
func TestIgnoredInsertsAreRecorded(t *testing.T) {
	db := open(t)
	a1, a2 := conn(t, db, "a1"), conn(t, db, "a2")
	orIgnore := "INSERT OR IGNORE INTO idem_keys VALUES (?, ?, 'in_progress')"
	doNothing := `insert into "IDEM_KEYS" (customer, idem_key, state) values (?, ?, 'in_progress')
	              on conflict (customer, idem_key) do nothing`
	assert.Equal(t, int64(1), exec(t, db, a1, "run", orIgnore, "cust-1", "k1").Changes)
	assert.Equal(t, int64(0), exec(t, db, a2, "run", orIgnore, "cust-1", "k1").Changes)
	assert.Equal(t, int64(0), exec(t, db, a2, "run", doNothing, "cust-1", "k1").Changes)
	assert.Equal(t, int64(1), exec(t, db, a2, "run", doNothing, "cust-2", "k1").Changes)
	_, err := db.Exec(a2, "run", `INSERT INTO idem_keys VALUES (?, ?, 'in_progress')`, []any{"cust-1", "k1"})
	require.Error(t, err)
	exec(t, db, a1, "run", `INSERT OR IGNORE INTO accounts (id, balance) VALUES ('alice', 5)`)
	assert.Equal(t, []labdb.Ignored{
		{Attempt: "a2", Table: "idem_keys", SQL: orIgnore},
		{Attempt: "a2", Table: "idem_keys", SQL: doNothing},
	}, db.IgnoredInserts())
	require.NoError(t, db.Reset())
	assert.Empty(t, db.IgnoredInserts(), "Reset forgets them")
}

// BenchmarkSchedule is one schedule of the explorer on the naive
// reference handler's statements: a reset, then two attempts' calls one
// after the other, then the ledger the verdict reads: the database's
// share of a schedule, natively (docs/PERFORMANCE.md, the explorer).
func BenchmarkSchedule(b *testing.B) {
	db, err := labdb.Open("", seed)
	require.NoError(b, err)
	b.Cleanup(db.Close)
	type call struct {
		op, sql string
		params  []any
	}
	calls := []call{
		{"get", `SELECT balance FROM accounts WHERE id = ?`, []any{"alice"}},
		{"get", `SELECT id FROM accounts WHERE id = ?`, []any{"bob"}},
		{"begin", "", nil},
		{"run", `UPDATE accounts SET balance = balance - ? WHERE id = ? AND balance >= ?`, []any{int64(10), "alice", int64(10)}},
		{"run", `UPDATE accounts SET balance = balance + ? WHERE id = ?`, []any{int64(10), "bob"}},
		{"run", `INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES (?, ?, ?, ?)`, []any{"alice", "bob", int64(10), int64(1700000000000)}},
		{"get", `SELECT balance FROM accounts WHERE id = ?`, []any{"alice"}},
		{"commit", "", nil},
	}
	for b.Loop() {
		if err := db.Reset(); err != nil {
			b.Fatal(err)
		}
		c1, _ := db.Conn("a1")
		c2, _ := db.Conn("a2")
		// a1 runs to its commit, then a2: a schedule whose calls never
		// wait for the write lock.
		for _, c := range []string{c1, c2} {
			for _, k := range calls {
				if _, err := db.Exec(c, k.op, k.sql, k.params); err != nil {
					b.Fatal(k.op, k.sql, err)
				}
			}
		}
		if _, _, err := db.Ledger(); err != nil {
			b.Fatal(err)
		}
	}
}

// An attempt that updates a row of the student's tables while the attempt
// that wrote it still holds its connection takes a live claim
// (Takeovers); once the writer has ended it takes an ended one
// (EndedTakeovers); for the attempt's own row, or in the lab's own
// tables, neither. Rows are told apart by their
// rowid, or by their primary key in a table WITHOUT ROWID.
func TestTakeoversOfARunningAttempt(t *testing.T) {
	for _, schema := range []string{keysSchema, `CREATE TABLE idem_keys (
  customer TEXT NOT NULL, idem_key TEXT NOT NULL, state TEXT NOT NULL,
  PRIMARY KEY (customer, idem_key)) WITHOUT ROWID;`} {
		db, err := labdb.Open(schema, seed)
		require.NoError(t, err)
		a1, a2 := conn(t, db, "a1"), conn(t, db, "a2")
		exec(t, db, a1, "run", `INSERT INTO idem_keys VALUES ('cust-1', 'k1', 'in_progress')`)
		exec(t, db, a2, "run", `INSERT INTO idem_keys VALUES ('cust-2', 'k1', 'in_progress')`)
		exec(t, db, a2, "run", `UPDATE idem_keys SET state = 'done' WHERE customer = 'cust-2'`)
		exec(t, db, a2, "run", `UPDATE accounts SET balance = balance + 1 WHERE id = 'bob'`)
		exec(t, db, a1, "run", `UPDATE accounts SET balance = balance - 1 WHERE id = 'alice'`)
		exec(t, db, a2, "run", `UPDATE accounts SET balance = balance + 1 WHERE id = 'alice'`)
		assert.Empty(t, db.Takeovers(), "its own row, and the lab's tables")

		exec(t, db, a2, "run", `UPDATE idem_keys SET state = 'taken' WHERE customer = 'cust-1'`)
		assert.Equal(t, []labdb.Takeover{{Attempt: "a2", From: "a1", Table: "idem_keys"}}, db.Takeovers(), "a1 still runs")

		_, err = db.Release(a1)
		require.NoError(t, err)
		a3 := conn(t, db, "a3")
		exec(t, db, a3, "run", `UPDATE idem_keys SET state = 'later' WHERE customer = 'cust-2'`)
		assert.Len(t, db.Takeovers(), 2, "a2's row, a2 still running: taken")
		for _, c := range []string{a2, a3} {
			_, err = db.Release(c)
			require.NoError(t, err)
		}
		a4 := conn(t, db, "a4")
		exec(t, db, a4, "run", `UPDATE idem_keys SET state = 'later'`)
		assert.Len(t, db.Takeovers(), 2, "every writer has ended")
		assert.Equal(t, []labdb.Takeover{{Attempt: "a4", From: "a2", Table: "idem_keys"}, {Attempt: "a4", From: "a3", Table: "idem_keys"}},
			db.EndedTakeovers(), "rows whose writers had ended")

		require.NoError(t, db.Reset())
		assert.Empty(t, db.Takeovers())
		assert.Empty(t, db.EndedTakeovers())
		db.Close()
	}
}

// TestWritesThroughGetAndAllSayWhatChanged: an INSERT … RETURNING given
// to get or all says what it changed, as run does (the fourteenth
// simulated student's transfer, inserted with db.all, was missing from the
// page's picture), and get runs a statement that writes to its end.
func TestWritesThroughGetAndAllSayWhatChanged(t *testing.T) {
	db := open(t)
	c := conn(t, db, "a1")
	ins := exec(t, db, c, "all", `INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES ('alice', 'bob', 5, 0) RETURNING id`)
	assert.Equal(t, []map[string]any{{"id": int64(1)}}, ins.Rows)
	assert.Equal(t, int64(1), ins.Changes)
	assert.Equal(t, int64(1), ins.LastInsertRowid)

	two := exec(t, db, c, "get", `INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES ('alice', 'bob', 1, 0), ('alice', 'bob', 2, 0) RETURNING id`)
	assert.Equal(t, map[string]any{"id": int64(2)}, two.Row, "get answers the first row")
	assert.Equal(t, int64(2), two.Changes, "and runs the statement to its end")
	assert.Equal(t, int64(3), two.LastInsertRowid)
	_, ts, err := db.Ledger()
	require.NoError(t, err)
	assert.Len(t, ts, 3)

	read := exec(t, db, c, "get", `SELECT id FROM transfers ORDER BY id`)
	assert.Zero(t, read.Changes, "a read says no change")
}

// TestNothingUnique: a schema whose tables hold nothing unique beyond a
// rowid (the fifteenth simulated student's key table, with no PRIMARY KEY
// or UNIQUE) is told apart from one with a key that is.
func TestNothingUnique(t *testing.T) {
	for schema, want := range map[string]bool{
		`CREATE TABLE idem_keys (idem_key TEXT NOT NULL, status TEXT NOT NULL);`:                         true,
		`CREATE TABLE idem_keys (id INTEGER PRIMARY KEY AUTOINCREMENT, idem_key TEXT NOT NULL);`:         true,
		`CREATE TABLE idem_keys (idem_key TEXT PRIMARY KEY, status TEXT);`:                               false,
		`CREATE TABLE idem_keys (id INTEGER PRIMARY KEY, idem_key TEXT UNIQUE);`:                         false,
		`CREATE TABLE idem_keys (c TEXT, k TEXT, PRIMARY KEY (c, k));`:                                   false,
		`CREATE TABLE idem_keys (c TEXT, k TEXT); CREATE UNIQUE INDEX idem_keys_ck ON idem_keys (c, k);`: false,
		``: false,
	} {
		db, err := labdb.Open(schema, seed)
		require.NoError(t, err, schema)
		assert.Equal(t, want, db.NothingUnique(), schema)
		db.Close()
	}
}
