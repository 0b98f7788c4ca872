// Package labdb is the database a student's own handler runs on in the
// browser's lab (docs/lab-handler.md): one SQLite database on the memdb VFS
// holding the lab's tables (accounts, transfers) and the student's schema,
// a connection per attempt, and the payment network's records, which no
// rollback of the student's touches.
//
// A DB is not safe for concurrent use: the browser's lab calls it from one
// thread, one step at a time, and its connections share one process-wide
// memdb database, so SQLite's own locks decide who may write. A second
// connection's BEGIN IMMEDIATE while another holds the write lock answers
// Busy at once (busy timeout 0): the caller, the lab's scheduler, parks
// that attempt until the holder commits or rolls back, which is a real
// server's busy wait made visible.
package labdb

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/vfs/memdb"
)

// LabSchema is the lab's own tables, created before the student's schema
// (docs/lab-handler.md). lab_transfer_attempts is the lab's bookkeeping:
// which attempt inserted each transfer, written by a per-connection
// trigger in the same transaction, so that it commits and rolls back with
// the transfer itself.
const LabSchema = `
CREATE TABLE accounts (
  id      TEXT PRIMARY KEY,
  balance INTEGER NOT NULL CHECK (balance >= 0)
);
CREATE TABLE transfers (
  id         INTEGER PRIMARY KEY,
  from_id    TEXT NOT NULL,
  to_id      TEXT NOT NULL,
  amount     INTEGER NOT NULL CHECK (amount > 0),
  created_at INTEGER NOT NULL
);
CREATE TABLE lab_transfer_attempts (
  transfer_id INTEGER PRIMARY KEY,
  attempt     TEXT NOT NULL
);`

// Account is one seeded account.
type Account struct {
	ID      string `json:"id"`
	Balance int64  `json:"balance"`
}

// Transfer is one row of the lab's transfers table with the attempt whose
// connection inserted it.
type Transfer struct {
	ID        int64  `json:"id"`
	From      string `json:"from"`
	To        string `json:"to"`
	Amount    int64  `json:"amount"`
	CreatedAt int64  `json:"created_at"`
	Attempt   string `json:"attempt"`
}

// Charge is one charge the payment network made.
type Charge struct {
	ID       string `json:"charge_id"`
	Attempt  string `json:"attempt"`
	Customer string `json:"customer"`
	// Key is the request's Idempotency-Key (parsed) of the attempt that
	// paid: what ties the charge to an intent for the checker.
	Key    string `json:"key"`
	From   string `json:"from"`
	To     string `json:"to"`
	Amount int64  `json:"amount"`
	// NetworkKey is the key the call carried to the network, if any.
	NetworkKey string `json:"network_key,omitempty"`
}

// PayCall is one call to the network, whatever it answered: the key it
// carried, and "charged" (a new charge), "replayed" (the charge the key
// was first used for) or "refused" (a PaymentError).
type PayCall struct {
	Attempt    string `json:"attempt"`
	NetworkKey string `json:"network_key"`
	Outcome    string `json:"outcome"`
	Charge     string `json:"charge_id,omitempty"`
}

// DB is the lab's database: the live memdb database, an untouched copy of
// it taken after setup (Reset restores it), and the open connections.
type DB struct {
	name    string
	admin   *sqlite3.Conn
	tables  []string        // every table of main, in creation order, restored by Reset
	reset   []*sqlite3.Stmt // the statements that restore them, prepared once
	conns   map[string]*conn
	free    []*conn
	seq     int
	charges []Charge
	calls   []PayCall // every call to the network, in order
	// ignored are the inserts that a conflict clause turned into nothing
	// (Ignored); ignoring caches, by SQL, the table such an insert writes
	// ("" for any other statement).
	ignored  []Ignored
	ignoring map[string]string
	byKey    map[string]int // network key → index in charges
	chargeNo int
	accounts []Account
	// deposits is what SetBalance put into (or took out of) each account
	// since the last Reset: the money the lab moved, not a transfer.
	deposits map[string]int64
	// The ledger's two reads, prepared once on the admin connection.
	accountsStmt, transfersStmt *sqlite3.Stmt
	// own is the student's tables (every table but the lab's), and
	// watch the temporary triggers that report each row an attempt
	// writes there (lab_wrote), made on every attempt's connection.
	own []string
	// unique says that one of the student's tables at least has a
	// PRIMARY KEY or a UNIQUE constraint.
	unique bool
	watch  string
	// writer is the attempt that last wrote each row of the student's
	// tables, by table and primary key; taken are the rows an attempt
	// changed while the attempt that wrote them was still running
	// (Takeovers), and ended the rows an attempt changed after the
	// attempt that wrote them had ended (EndedTakeovers).
	writer map[string]string
	taken  []Takeover
	ended  []Takeover
}

// Takeover is a row of the student's tables that an attempt updated
// while the attempt that had written it still held its connection (was
// still running): a claim handed to a retry while its owner worked, as a
// lease shorter than a transfer does.
type Takeover struct {
	Attempt string `json:"attempt"`
	From    string `json:"from"`
	Table   string `json:"table"`
}

// Takeovers returns the rows taken from a running attempt since the last
// Reset, in order.
func (db *DB) Takeovers() []Takeover { return append([]Takeover{}, db.taken...) }

// EndedTakeovers returns, in order since the last Reset, the rows an
// attempt updated after the attempt that had written them ended (it
// answered, or crashed): a claim taken over once its lease ran out, or a
// key's row used again after its retention, each a takeover the handler
// meant to make, which the lab judges by whose request took it.
func (db *DB) EndedTakeovers() []Takeover { return append([]Takeover{}, db.ended...) }

// wrote records that the connection's attempt wrote a row (update: by an
// UPDATE) of the student's table number t, whose primary key is pk.
func (db *DB) wrote(attempt string, t int64, pk string, update bool) {
	if attempt == "" || t < 0 || int(t) >= len(db.own) {
		return
	}
	k := strconv.FormatInt(t, 10) + "\x00" + pk
	prev := db.writer[k]
	if db.writer == nil {
		db.writer = map[string]string{}
	}
	db.writer[k] = attempt
	if !update || prev == "" || prev == attempt {
		return
	}
	for _, c := range db.conns {
		if c.attempt == prev {
			db.taken = append(db.taken, Takeover{Attempt: attempt, From: prev, Table: db.own[t]})
			return
		}
	}
	db.ended = append(db.ended, Takeover{Attempt: attempt, From: prev, Table: db.own[t]})
}

// conn is one attempt's connection. attempt is read by the lab_attempt()
// SQL function that the connection's trigger calls.
type conn struct {
	id      string
	c       *sqlite3.Conn
	attempt string
	// stmts keeps the statements the handler ran, by their SQL: the
	// explorer runs the same few thousands of times, and parsing one
	// costs more than running it.
	stmts map[string]*sqlite3.Stmt
}

// maxCachedStmts bounds a connection's kept statements: a handler that
// builds its SQL with values in it gets no unbounded cache.
const maxCachedStmts = 64

func (c *conn) prepare(sql string) (*sqlite3.Stmt, string, bool, error) {
	if st, ok := c.stmts[sql]; ok {
		return st, "", true, nil
	}
	st, tail, err := c.c.Prepare(sql)
	if err != nil || st == nil {
		return st, tail, false, err
	}
	if strings.TrimSpace(strings.Trim(strings.TrimSpace(tail), ";")) != "" || len(c.stmts) >= maxCachedStmts {
		return st, tail, false, nil
	}
	if c.stmts == nil {
		c.stmts = map[string]*sqlite3.Stmt{}
	}
	c.stmts[sql] = st
	return st, tail, true, nil
}

func (c *conn) close() {
	for _, st := range c.stmts {
		st.Close()
	}
	c.stmts = nil
	c.c.Close()
}

// Error is what a statement or a payment rejects with, shaped as the
// handler sees it: Name is ConstraintError, SQLError, PaymentError or
// Busy (the write lock is held by another connection: wait, not an error
// the handler ever sees).
type Error struct {
	Name    string `json:"name"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
	// SchemaLine is, for an error in the student's schema, the line of
	// the schema (1-based, as Open was given it) where SQLite stopped: the
	// token a syntax error names, or else the start of the statement that
	// failed. 0 for every other error.
	SchemaLine int `json:"schema_line,omitempty"`
}

func (e *Error) Error() string { return e.Name + ": " + e.Message }

// ErrBusy is the Error's Name when the write lock is another's.
const ErrBusy = "Busy"

// Open creates a fresh lab database: the lab's tables, the student's
// schema, the seeded accounts. A schema that does not run is an error
// whose message is SQLite's.
func Open(schema string, accounts []Account) (*DB, error) {
	db := &DB{name: "/labdb-" + rand.Text(), conns: map[string]*conn{}, byKey: map[string]int{}, accounts: accounts, ignoring: map[string]string{}}
	admin, err := sqlite3.Open("file:" + db.name + "?vfs=memdb")
	if err != nil {
		return nil, fmt.Errorf("labdb: open: %w", err)
	}
	db.admin = admin
	if err := db.setup(schema, accounts); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func (db *DB) setup(schema string, accounts []Account) error {
	if err := db.admin.Exec(LabSchema); err != nil {
		return fmt.Errorf("labdb: the lab's tables: %w", err)
	}
	if err := db.runSchema(schema); err != nil {
		return err
	}
	if !db.admin.GetAutocommit() {
		return &Error{Name: "SQLError", Message: "your schema leaves a transaction open"}
	}
	st, _, err := db.admin.Prepare(`INSERT INTO accounts (id, balance) VALUES (?, ?)`)
	if err != nil {
		return fmt.Errorf("labdb: seed: %w", err)
	}
	for _, a := range accounts {
		st.BindText(1, a.ID)
		st.BindInt64(2, a.Balance)
		if err := st.Exec(); err != nil {
			st.Close()
			return fmt.Errorf("labdb: seed %s: %w", a.ID, err)
		}
	}
	st.Close()
	// The copy Reset restores lives in its own memdb database, attached to
	// the admin connection: restoring is then a few statements on a
	// connection already open, not a new database and new connections
	// per schedule (the explorer resets once per schedule).
	rows, err := db.query(db.admin, `SELECT name FROM main.sqlite_master WHERE type = 'table' ORDER BY rowid`)
	if err != nil {
		return err
	}
	for _, r := range rows {
		db.tables = append(db.tables, r["name"].(string))
	}
	if err := db.admin.Exec(`ATTACH DATABASE 'file:` + db.name + `-snap?vfs=memdb' AS snap`); err != nil {
		return fmt.Errorf("labdb: attach the snapshot: %w", err)
	}
	var copyScript strings.Builder
	resetScript := []string{"BEGIN IMMEDIATE"}
	for _, t := range db.tables {
		q := quoteIdent(t)
		if t != "sqlite_sequence" {
			fmt.Fprintf(&copyScript, "CREATE TABLE snap.%s AS SELECT * FROM main.%s;", q, q)
		} else {
			copyScript.WriteString("CREATE TABLE snap.lab_sequence_copy AS SELECT * FROM main.sqlite_sequence;")
			q = "sqlite_sequence"
		}
		src := "snap." + q
		if t == "sqlite_sequence" {
			src = "snap.lab_sequence_copy"
		}
		resetScript = append(resetScript, "DELETE FROM main."+q)
		// A table empty after setup (most are) is restored by the
		// DELETE alone: a statement fewer per reset.
		rows, err := db.query(db.admin, "SELECT 1 FROM main."+q+" LIMIT 1")
		if err != nil {
			return err
		}
		if len(rows) > 0 {
			resetScript = append(resetScript, fmt.Sprintf("INSERT INTO main.%s SELECT * FROM %s", q, src))
		}
	}
	resetScript = append(resetScript, "COMMIT")
	if err := db.watchOwn(); err != nil {
		return err
	}
	if err := db.admin.Exec(copyScript.String()); err != nil {
		return fmt.Errorf("labdb: snapshot: %w", err)
	}
	for _, sql := range resetScript {
		st, _, err := db.admin.Prepare(sql)
		if err != nil {
			return fmt.Errorf("labdb: prepare the reset: %w", err)
		}
		db.reset = append(db.reset, st)
	}
	return nil
}

// labTables are the lab's own tables (LabSchema) and SQLite's.
var labTables = map[string]bool{"accounts": true, "transfers": true, "lab_transfer_attempts": true, "sqlite_sequence": true}

// watchOwn writes the triggers that report the rows written in the
// student's tables: each row by its rowid, or by its primary key's
// columns in a table WITHOUT ROWID.
func (db *DB) watchOwn() error {
	var b strings.Builder
	for _, t := range db.tables {
		if labTables[t] || strings.HasPrefix(t, "sqlite_") {
			continue
		}
		rows, err := db.query(db.admin, `SELECT type, wr FROM pragma_table_list WHERE schema = 'main' AND name = `+sqlString(t))
		if err != nil {
			return fmt.Errorf("labdb: the table %s: %w", t, err)
		}
		// A virtual table (and its shadow tables) takes no trigger. This
		// build of SQLite has no module a schema could create one with;
		// the check keeps a later build from failing every connection.
		if len(rows) != 1 || rows[0]["type"] != "table" {
			continue
		}
		pk := func(row string) string { return row + ".rowid" }
		if len(rows) == 1 && rows[0]["wr"] == int64(1) {
			cols, err := db.query(db.admin, `SELECT name FROM pragma_table_info(`+sqlString(t)+`) WHERE pk > 0 ORDER BY pk`)
			if err != nil {
				return fmt.Errorf("labdb: the table %s: %w", t, err)
			}
			pk = func(row string) string {
				var names []string
				for _, c := range cols {
					names = append(names, row+"."+quoteIdent(c["name"].(string)))
				}
				return "json_array(" + strings.Join(names, ", ") + ")"
			}
		}
		// Whether the table holds anything unique (a PRIMARY KEY, a
		// UNIQUE) beyond a rowid (an INTEGER PRIMARY KEY numbers rows,
		// whatever their key): without it no INSERT of a key ever fails.
		uniq, err := db.query(db.admin, `SELECT (SELECT count(*) FROM pragma_index_list(`+sqlString(t)+`) WHERE "unique" = 1)
			+ (SELECT CASE WHEN count(*) = 1 AND upper(max(type)) = 'INTEGER' THEN 0 ELSE count(*) END
			   FROM pragma_table_info(`+sqlString(t)+`) WHERE pk > 0) AS n`)
		if err != nil {
			return fmt.Errorf("labdb: the table %s: %w", t, err)
		}
		if len(uniq) == 1 && uniq[0]["n"] != int64(0) {
			db.unique = true
		}
		n := len(db.own)
		db.own = append(db.own, t)
		fmt.Fprintf(&b, "CREATE TEMP TRIGGER lab_wrote_%d_i AFTER INSERT ON main.%s BEGIN SELECT lab_wrote(%d, %s, 0); END;\n", n, quoteIdent(t), n, pk("NEW"))
		fmt.Fprintf(&b, "CREATE TEMP TRIGGER lab_wrote_%d_u AFTER UPDATE ON main.%s BEGIN SELECT lab_wrote(%d, %s, 1); END;\n", n, quoteIdent(t), n, pk("OLD"))
	}
	db.watch = b.String()
	return nil
}

// NothingUnique reports whether the student's schema made tables of its
// own and none of them has a PRIMARY KEY or a UNIQUE constraint: a key
// INSERTed there never fails, so no claim can be refused.
func (db *DB) NothingUnique() bool { return len(db.own) > 0 && !db.unique }

// sqlString quotes s as an SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// runSchema runs the student's schema one statement at a time, so that
// an error is said at its line (Error.SchemaLine).
func (db *DB) runSchema(schema string) error {
	rest := schema
	for strings.TrimSpace(rest) != "" {
		at := len(schema) - len(rest)
		st, tail, err := db.admin.Prepare(rest)
		if err == nil && st != nil {
			err = st.Exec()
			st.Close()
		}
		if err != nil {
			return &Error{Name: "SQLError", Code: codeName(err), Message: "your schema: " + sqliteMessage(err),
				SchemaLine: schemaLine(schema, at, rest, err)}
		}
		if st == nil {
			return nil // only comments or semicolons were left
		}
		rest = tail
	}
	return nil
}

// schemaLine is the line of schema where err stopped the statement that
// starts at byte at (rest is the schema from there): the token SQLite
// names for a syntax error, or the statement's first line that is not
// blank.
func schemaLine(schema string, at int, rest string, err error) int {
	var e *sqlite3.Error
	if errors.As(err, &e) && e.SQL() != "" && strings.HasSuffix(rest, e.SQL()) {
		at = len(schema) - len(e.SQL())
	} else {
		at += len(rest) - len(strings.TrimLeft(rest, " \t\r\n;"))
	}
	return 1 + strings.Count(schema[:at], "\n")
}

// Close closes every connection and forgets both memdb databases.
func (db *DB) Close() {
	for _, c := range db.conns {
		c.close()
	}
	for _, c := range db.free {
		c.close()
	}
	for _, st := range []*sqlite3.Stmt{db.accountsStmt, db.transfersStmt} {
		if st != nil {
			st.Close()
		}
	}
	db.conns, db.free = map[string]*conn{}, nil
	for _, st := range db.reset {
		st.Close()
	}
	db.reset = nil
	if db.admin != nil {
		db.admin.Close()
	}
	memdb.Delete(db.name)
	memdb.Delete(db.name + "-snap")
}

// Tables lists the database's tables (the lab's and the student's).
func (db *DB) Tables() []string { return append([]string(nil), db.tables...) }

// Reset rolls back every connection's open transaction, hands every
// connection back and restores the database as it was after Open; the
// network forgets its charges.
func (db *DB) Reset() error {
	for id, c := range db.conns {
		c.rollback()
		c.attempt = ""
		db.free = append(db.free, c)
		delete(db.conns, id)
	}
	for _, st := range db.reset {
		if err := st.Exec(); err != nil {
			if !db.admin.GetAutocommit() {
				db.admin.Exec("ROLLBACK")
			}
			return fmt.Errorf("labdb: reset: %w", err)
		}
	}
	db.charges, db.calls, db.byKey, db.chargeNo = nil, nil, map[string]int{}, 0
	db.ignored = nil
	db.deposits = nil
	clear(db.writer)
	db.taken, db.ended = nil, nil
	return nil
}

// SetBalance sets an account's balance, opening the account if there is
// none: the lab's own write between a scenario's attempts (a top-up, an
// account opened), not a handler's. What it adds or takes counts as the
// account's starting money (StartBalances), so that the ledger still
// balances. It fails Busy while an attempt's connection holds the write
// lock. Reset undoes it.
func (db *DB) SetBalance(account string, balance int64) error {
	old, found := int64(0), false
	st, _, err := db.admin.Prepare(`SELECT balance FROM main.accounts WHERE id = ?`)
	if err != nil {
		return fmt.Errorf("labdb: set balance: %w", err)
	}
	st.BindText(1, account)
	if st.Step() {
		old, found = st.ColumnInt64(0), true
	}
	st.Close()
	sql := `INSERT INTO main.accounts (id, balance) VALUES (?, ?)`
	if found {
		sql = `UPDATE main.accounts SET balance = ? WHERE id = ?`
	}
	st, _, err = db.admin.Prepare(sql)
	if err != nil {
		return fmt.Errorf("labdb: set balance: %w", err)
	}
	defer st.Close()
	if found {
		st.BindInt64(1, balance)
		st.BindText(2, account)
	} else {
		st.BindText(1, account)
		st.BindInt64(2, balance)
	}
	if err := st.Exec(); err != nil {
		return wrap(err)
	}
	if db.deposits == nil {
		db.deposits = map[string]int64{}
	}
	db.deposits[account] += balance - old
	return nil
}

// Conn opens (or takes from the pool) a connection for attempt and returns
// its id.
func (db *DB) Conn(attempt string) (string, error) {
	var c *conn
	if n := len(db.free); n > 0 {
		c, db.free = db.free[n-1], db.free[:n-1]
	} else {
		sc, err := sqlite3.Open("file:" + db.name + "?vfs=memdb")
		if err != nil {
			return "", fmt.Errorf("labdb: connect: %w", err)
		}
		c = &conn{c: sc}
		cc := c
		err = sc.CreateFunction("lab_attempt", 0, sqlite3.DIRECTONLY, func(ctx sqlite3.Context, _ ...sqlite3.Value) {
			ctx.ResultText(cc.attempt)
		})
		if err == nil {
			err = sc.CreateFunction("lab_wrote", 3, sqlite3.DIRECTONLY, func(ctx sqlite3.Context, arg ...sqlite3.Value) {
				db.wrote(cc.attempt, arg[0].Int64(), arg[1].Text(), arg[2].Int64() == 1)
			})
		}
		if err == nil {
			err = sc.Exec(`CREATE TEMP TRIGGER lab_owner AFTER INSERT ON main.transfers BEGIN
  INSERT OR REPLACE INTO main.lab_transfer_attempts (transfer_id, attempt) VALUES (new.id, lab_attempt());
END`)
		}
		if err == nil && db.watch != "" {
			// The watch is evidence for a note, not a part the handler
			// needs: a table that refuses a trigger leaves it unwatched.
			sc.Exec(db.watch)
		}
		if err != nil {
			sc.Close()
			return "", fmt.Errorf("labdb: connect: %w", err)
		}
	}
	db.seq++
	c.id = "c" + strconv.Itoa(db.seq)
	c.attempt = attempt
	db.conns[c.id] = c
	return c.id, nil
}

// Release ends a connection's use: its open transaction rolls back (an
// attempt that ended, or crashed, holding one) and it returns to the pool.
// It reports whether a transaction was open.
func (db *DB) Release(id string) (rolledBack bool, err error) {
	c, ok := db.conns[id]
	if !ok {
		return false, fmt.Errorf("labdb: no connection %q", id)
	}
	delete(db.conns, id)
	rolledBack = c.rollback()
	c.attempt = ""
	db.free = append(db.free, c)
	return rolledBack, nil
}

func (c *conn) rollback() bool {
	if c.c.GetAutocommit() {
		return false
	}
	c.c.Exec("ROLLBACK")
	return true
}

// InTx reports whether a connection has a transaction open.
func (db *DB) InTx(id string) bool {
	c, ok := db.conns[id]
	return ok && !c.c.GetAutocommit()
}

// Result is what one db call resolves to: Changes and LastInsertRowid for
// run (and for get and all given a statement that writes, INSERT …
// RETURNING), Row for get (nil: undefined), Rows for all. Dropped says that run
// was given a statement that only reads rows (a SELECT): run answers
// with counts alone, so what it read was thrown away, a beginner's
// slip that a get or an all was meant.
type Result struct {
	Changes         int64            `json:"changes"`
	LastInsertRowid int64            `json:"lastInsertRowid"`
	Row             map[string]any   `json:"row,omitempty"`
	Rows            []map[string]any `json:"rows,omitempty"`
	Dropped         bool             `json:"dropped,omitempty"`
}

// Exec runs one of the handler's calls (op: run, get, all, begin, commit,
// rollback) on a connection. A failure is an *Error.
func (db *DB) Exec(id, op, sql string, params []any) (Result, error) {
	c, ok := db.conns[id]
	if !ok {
		return Result{}, &Error{Name: "SQLError", Message: "this attempt's connection is closed"}
	}
	switch op {
	case "begin":
		return Result{}, wrap(c.c.Exec("BEGIN IMMEDIATE"))
	case "commit":
		if c.c.GetAutocommit() {
			return Result{}, &Error{Name: "SQLError", Message: "cannot commit - no transaction is active"}
		}
		return Result{}, wrap(c.c.Exec("COMMIT"))
	case "rollback":
		if c.c.GetAutocommit() {
			return Result{}, &Error{Name: "SQLError", Message: "cannot rollback - no transaction is active"}
		}
		return Result{}, wrap(c.c.Exec("ROLLBACK"))
	case "run", "get", "all":
	default:
		return Result{}, &Error{Name: "SQLError", Message: "no such call: db." + op}
	}
	st, tail, cached, err := c.prepare(sql)
	if err != nil {
		return Result{}, wrap(err)
	}
	if !cached && st != nil {
		defer st.Close()
	} else if st != nil {
		// A kept statement is reset on every way out; its bindings are
		// all set again by the next call (BindCount must match).
		defer st.Reset()
	}
	if st == nil {
		return Result{}, &Error{Name: "SQLError", Message: "no statement in " + strconv.Quote(sql)}
	}
	if strings.TrimSpace(strings.Trim(strings.TrimSpace(tail), ";")) != "" {
		return Result{}, &Error{Name: "SQLError", Message: "one statement per call: " + strconv.Quote(strings.TrimSpace(tail)) + " follows the first"}
	}
	if n := st.BindCount(); n != len(params) {
		return Result{}, &Error{Name: "SQLError", Message: fmt.Sprintf("the statement has %d placeholders but %d values were given", n, len(params))}
	}
	for i, p := range params {
		if err := bind(st, i+1, p); err != nil {
			return Result{}, err
		}
	}
	// A statement that writes (an INSERT … RETURNING given to get or all)
	// runs to its end whatever call it came through, and says what it
	// changed, as run does: the page draws the row it wrote.
	writes := !st.ReadOnly()
	var res Result
	for st.Step() {
		if op == "run" {
			continue
		}
		if op == "get" {
			if res.Row == nil {
				res.Row = readRow(st)
			}
			if !writes {
				break
			}
			continue
		}
		res.Rows = append(res.Rows, readRow(st))
	}
	if err := st.Err(); err != nil {
		return Result{}, wrap(err)
	}
	if op == "all" && res.Rows == nil {
		res.Rows = []map[string]any{}
	}
	if op == "run" || writes {
		res.Changes, res.LastInsertRowid = c.c.Changes(), c.c.LastInsertRowID()
	}
	if op == "run" {
		res.Dropped = st.ColumnCount() > 0 && st.ReadOnly()
	}
	if table := db.ignoringInsert(sql); table != "" && c.c.Changes() == 0 {
		db.ignored = append(db.ignored, Ignored{Attempt: c.attempt, Table: table, SQL: sql})
	}
	return res, nil
}

// Ignored is an insert into one of the handler's own tables that its
// conflict clause (OR IGNORE, ON CONFLICT … DO NOTHING) turned into
// nothing: a row with its key was there, and the statement changed no
// row and raised no error. It is the verdict of a claim, thrown away
// unless the handler reads the changed-rows count.
type Ignored struct {
	Attempt string `json:"attempt"`
	Table   string `json:"table"`
	SQL     string `json:"sql"`
}

// IgnoredInserts lists the inserts that changed nothing for a conflict
// since the last Reset, in order.
func (db *DB) IgnoredInserts() []Ignored { return append([]Ignored{}, db.ignored...) }

// An insert whose conflict clause ignores the conflict, and its table.
var (
	orIgnore  = regexp.MustCompile(`(?is)^\s*INSERT\s+OR\s+IGNORE\s+INTO\s+` + tableName)
	doNothing = regexp.MustCompile(`(?is)^\s*INSERT\s+INTO\s+` + tableName + `.*\bON\s+CONFLICT\b.*\bDO\s+NOTHING\b`)
)

const tableName = `(?:(?:main|"main")\s*\.\s*)?("(?:[^"]|"")+"|\[[^\]]+\]|` + "`[^`]+`" + `|[A-Za-z_][A-Za-z0-9_$]*)`

// ignoringInsert returns the table an insert that ignores its conflicts
// writes, "" for any other statement or for one of the lab's own tables
// (a handler's key table is what a claim writes).
func (db *DB) ignoringInsert(sql string) string {
	if t, ok := db.ignoring[sql]; ok {
		return t
	}
	m := orIgnore.FindStringSubmatch(sql)
	if m == nil {
		m = doNothing.FindStringSubmatch(sql)
	}
	t := ""
	if m != nil {
		t = strings.ToLower(unquoteIdent(m[1]))
		if t == "accounts" || t == "transfers" {
			t = ""
		}
	}
	if len(db.ignoring) < maxCachedStmts*4 {
		db.ignoring[sql] = t
	}
	return t
}

// unquoteIdent is an SQL identifier as named, without its quotes.
func unquoteIdent(s string) string {
	switch {
	case len(s) >= 2 && s[0] == '"':
		return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
	case len(s) >= 2 && (s[0] == '[' || s[0] == '`'):
		return s[1 : len(s)-1]
	}
	return s
}

func bind(st *sqlite3.Stmt, i int, p any) error {
	switch v := p.(type) {
	case nil:
		return st.BindNull(i)
	case bool:
		return st.BindBool(i, v)
	case string:
		return st.BindText(i, v)
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return st.BindInt64(i, int64(v))
		}
		return st.BindFloat(i, v)
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return st.BindInt64(i, n)
		}
		f, _ := v.Float64()
		return st.BindFloat(i, f)
	case int64:
		return st.BindInt64(i, v)
	case int:
		return st.BindInt64(i, int64(v))
	}
	return &Error{Name: "SQLError", Message: fmt.Sprintf("parameter %d: only numbers, strings and null can be bound", i)}
}

func readRow(st *sqlite3.Stmt) map[string]any {
	row := make(map[string]any, st.ColumnCount())
	for i := range st.ColumnCount() {
		name := st.ColumnName(i)
		switch st.ColumnType(i) {
		case sqlite3.INTEGER:
			row[name] = st.ColumnInt64(i)
		case sqlite3.FLOAT:
			row[name] = st.ColumnFloat(i)
		case sqlite3.NULL:
			row[name] = nil
		default:
			row[name] = st.ColumnText(i)
		}
	}
	return row
}

func (db *DB) query(c *sqlite3.Conn, sql string) ([]map[string]any, error) {
	st, _, err := c.Prepare(sql)
	if err != nil {
		return nil, fmt.Errorf("labdb: %s: %w", sql, err)
	}
	defer st.Close()
	var out []map[string]any
	for st.Step() {
		out = append(out, readRow(st))
	}
	return out, st.Err()
}

// wrap turns SQLite's error into the handler's: ConstraintError with the
// extended code's name, Busy for a lock another connection holds, else
// SQLError. The message is SQLite's own.
func wrap(err error) error {
	if err == nil {
		return nil
	}
	_, code, ok := codes(err)
	if !ok {
		return &Error{Name: "SQLError", Message: err.Error()}
	}
	switch code {
	case sqlite3.CONSTRAINT:
		return &Error{Name: "ConstraintError", Code: codeName(err), Message: sqliteMessage(err)}
	case sqlite3.BUSY, sqlite3.LOCKED:
		return &Error{Name: ErrBusy, Code: codeName(err), Message: sqliteMessage(err)}
	}
	return &Error{Name: "SQLError", Code: codeName(err), Message: sqliteMessage(err)}
}

// codes reads SQLite's result codes from an error of the driver, which
// is an *sqlite3.Error when SQLite said more than the code, else the code.
func codes(err error) (sqlite3.ExtendedErrorCode, sqlite3.ErrorCode, bool) {
	var se *sqlite3.Error
	var xc sqlite3.ExtendedErrorCode
	var c sqlite3.ErrorCode
	switch {
	case errors.As(err, &se):
		return se.ExtendedCode(), se.Code(), true
	case errors.As(err, &xc):
		return xc, xc.Code(), true
	case errors.As(err, &c):
		return sqlite3.ExtendedErrorCode(c), c, true
	}
	return 0, 0, false
}

var extendedNames = map[sqlite3.ExtendedErrorCode]string{
	sqlite3.CONSTRAINT_CHECK:      "SQLITE_CONSTRAINT_CHECK",
	sqlite3.CONSTRAINT_COMMITHOOK: "SQLITE_CONSTRAINT_COMMITHOOK",
	sqlite3.CONSTRAINT_FOREIGNKEY: "SQLITE_CONSTRAINT_FOREIGNKEY",
	sqlite3.CONSTRAINT_FUNCTION:   "SQLITE_CONSTRAINT_FUNCTION",
	sqlite3.CONSTRAINT_NOTNULL:    "SQLITE_CONSTRAINT_NOTNULL",
	sqlite3.CONSTRAINT_PRIMARYKEY: "SQLITE_CONSTRAINT_PRIMARYKEY",
	sqlite3.CONSTRAINT_TRIGGER:    "SQLITE_CONSTRAINT_TRIGGER",
	sqlite3.CONSTRAINT_UNIQUE:     "SQLITE_CONSTRAINT_UNIQUE",
	sqlite3.CONSTRAINT_VTAB:       "SQLITE_CONSTRAINT_VTAB",
	sqlite3.CONSTRAINT_ROWID:      "SQLITE_CONSTRAINT_ROWID",
	sqlite3.CONSTRAINT_PINNED:     "SQLITE_CONSTRAINT_PINNED",
	sqlite3.CONSTRAINT_DATATYPE:   "SQLITE_CONSTRAINT_DATATYPE",
	sqlite3.BUSY_SNAPSHOT:         "SQLITE_BUSY_SNAPSHOT",
	sqlite3.BUSY_RECOVERY:         "SQLITE_BUSY_RECOVERY",
	sqlite3.BUSY_TIMEOUT:          "SQLITE_BUSY_TIMEOUT",
}

var primaryNames = map[sqlite3.ErrorCode]string{
	sqlite3.CONSTRAINT: "SQLITE_CONSTRAINT", sqlite3.BUSY: "SQLITE_BUSY", sqlite3.LOCKED: "SQLITE_LOCKED",
	sqlite3.ERROR: "SQLITE_ERROR", sqlite3.MISMATCH: "SQLITE_MISMATCH", sqlite3.RANGE: "SQLITE_RANGE",
	sqlite3.TOOBIG: "SQLITE_TOOBIG", sqlite3.READONLY: "SQLITE_READONLY",
}

// codeName is the name of SQLite's extended result code ("SQLITE_CONSTRAINT_UNIQUE").
func codeName(err error) string {
	x, c, ok := codes(err)
	if !ok {
		return ""
	}
	if n, ok := extendedNames[x]; ok {
		return n
	}
	if n, ok := primaryNames[c]; ok {
		return n
	}
	return "SQLITE_" + strconv.Itoa(int(c))
}

// sqliteMessage is SQLite's own message, without the driver's prefix
// (the code's string).
func sqliteMessage(err error) string {
	msg := err.Error()
	if x, c, ok := codes(err); ok {
		msg = strings.TrimPrefix(msg, x.Error()+": ")
		msg = strings.TrimPrefix(msg, c.Error()+": ")
		msg = strings.TrimPrefix(msg, "sqlite3: ")
	}
	return msg
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// Pay is the payment network's call made by attempt (of customer, whose
// request carried requestKey): a charge, or the first charge again when
// networkKey was seen before with the same amount (replayed), or a
// PaymentError when it was seen with another.
func (db *DB) Pay(attempt, customer, requestKey, from, to string, amount int64, networkKey string) (Charge, bool, error) {
	ch, replayed, err := db.pay(attempt, customer, requestKey, from, to, amount, networkKey)
	call := PayCall{Attempt: attempt, NetworkKey: networkKey, Outcome: "charged", Charge: ch.ID}
	switch {
	case err != nil:
		call.Outcome = "refused"
	case replayed:
		call.Outcome = "replayed"
	}
	db.calls = append(db.calls, call)
	return ch, replayed, err
}

// PayCalls lists every call to the network since the last Reset, in order.
func (db *DB) PayCalls() []PayCall { return append([]PayCall{}, db.calls...) }

func (db *DB) pay(attempt, customer, requestKey, from, to string, amount int64, networkKey string) (Charge, bool, error) {
	if amount <= 0 {
		return Charge{}, false, &Error{Name: "PaymentError", Message: "the amount must be a positive whole number of won"}
	}
	if networkKey != "" {
		if i, ok := db.byKey[networkKey]; ok {
			first := db.charges[i]
			if first.Amount != amount || first.From != from || first.To != to {
				return Charge{}, false, &Error{Name: "PaymentError", Message: fmt.Sprintf("key %q was first used for another payment (%d won from %s to %s)", networkKey, first.Amount, first.From, first.To)}
			}
			return first, true, nil
		}
	}
	db.chargeNo++
	ch := Charge{ID: fmt.Sprintf("ch_%d", db.chargeNo), Attempt: attempt, Customer: customer, Key: requestKey,
		From: from, To: to, Amount: amount, NetworkKey: networkKey}
	db.charges = append(db.charges, ch)
	if networkKey != "" {
		db.byKey[networkKey] = len(db.charges) - 1
	}
	return ch, false, nil
}

// Charges lists the network's charges, in the order they were made.
func (db *DB) Charges() []Charge { return append([]Charge{}, db.charges...) }

// Ledger reads the accounts and the committed transfers, each with the
// attempt that inserted it.
func (db *DB) Ledger() ([]Account, []Transfer, error) {
	var err error
	if db.accountsStmt == nil {
		if db.accountsStmt, _, err = db.admin.Prepare(`SELECT id, balance FROM main.accounts ORDER BY id`); err != nil {
			return nil, nil, fmt.Errorf("labdb: ledger: %w", err)
		}
		if db.transfersStmt, _, err = db.admin.Prepare(`SELECT t.id, t.from_id, t.to_id, t.amount, t.created_at, coalesce(o.attempt, '')
FROM main.transfers t LEFT JOIN main.lab_transfer_attempts o ON o.transfer_id = t.id ORDER BY t.id`); err != nil {
			return nil, nil, fmt.Errorf("labdb: ledger: %w", err)
		}
	}
	accounts := make([]Account, 0, len(db.accounts))
	st := db.accountsStmt
	for st.Step() {
		accounts = append(accounts, Account{ID: st.ColumnText(0), Balance: st.ColumnInt64(1)})
	}
	if err := st.Reset(); err != nil {
		return nil, nil, fmt.Errorf("labdb: ledger: %w", err)
	}
	var transfers []Transfer
	st = db.transfersStmt
	for st.Step() {
		transfers = append(transfers, Transfer{ID: st.ColumnInt64(0), From: st.ColumnText(1), To: st.ColumnText(2),
			Amount: st.ColumnInt64(3), CreatedAt: st.ColumnInt64(4), Attempt: st.ColumnText(5)})
	}
	if err := st.Reset(); err != nil {
		return nil, nil, fmt.Errorf("labdb: ledger: %w", err)
	}
	return accounts, transfers, nil
}

// StartBalances is the seeded accounts, as a map, with what SetBalance
// added or took since the last Reset.
func (db *DB) StartBalances() map[string]int64 {
	out := make(map[string]int64, len(db.accounts))
	for _, a := range db.accounts {
		out[a.ID] = a.Balance
	}
	for id, d := range db.deposits {
		out[id] += d
	}
	return out
}

// Dump reads every row of every table (the lab's and the student's), for
// the bench's view of the database after a step: table → rows.
func (db *DB) Dump() (map[string][]map[string]any, error) {
	out := map[string][]map[string]any{}
	names := append([]string(nil), db.tables...)
	sort.Strings(names)
	for _, t := range names {
		if t == "sqlite_sequence" || t == "lab_transfer_attempts" {
			continue
		}
		rows, err := db.query(db.admin, "SELECT * FROM main."+quoteIdent(t))
		if err != nil {
			return nil, err
		}
		if rows == nil {
			rows = []map[string]any{}
		}
		out[t] = rows
	}
	return out, nil
}
