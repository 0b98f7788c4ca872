// Package store implements engine.Store on SQLite through
// github.com/ncruces/go-sqlite3: the ledger (accounts and transfers) and the
// two key tables. On the server it is a file in WAL mode; in the browser and
// in tests it is an in-memory database on the memdb VFS.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ncruces/go-sqlite3"
	_ "github.com/ncruces/go-sqlite3/vfs/memdb" // registers the memdb VFS

	"idemlab/engine"
)

var _ engine.Store = (*DB)(nil)

// BusyTimeout is how long a statement waits for another process's lock
// before the store reports engine.ErrBusy.
const BusyTimeout = 5 * time.Second

// DB is one SQLite database holding one level's ledger and key tables. It
// is safe for concurrent use by multiple goroutines: one connection does all
// the work, one short unit at a time, which is how SQLite writes anyway (one
// writer) and why no goroutine of this process ever sees "database is
// locked". On a file, units that queue up share a transaction (see
// commitGroup).
type DB struct {
	mu    sync.Mutex
	conn  *sqlite3.Conn
	stmts map[string]*sqlite3.Stmt
	path  string
	sweep sweepCursor // the reaper's place; guarded by mu

	// group: callers share transactions (file databases; see commitGroup).
	group   bool
	waiting atomic.Int32
	batch   *commitGroup // the open group, if any; guarded by mu
	groups  atomic.Int64 // commits of groups so far
	grouped atomic.Int64 // callers in those groups
}

// GroupCommits says how many group commits a file database made and how
// many callers they served (0, 0 for an in-memory database).
func (db *DB) GroupCommits() (commits, callers int64) {
	return db.groups.Load(), db.grouped.Load()
}

var memSeq atomic.Int64

// OpenFile opens (creating if needed) the database file at path, in WAL mode
// with synchronous=NORMAL: a transaction committed before the process is
// killed survives it. The WAL is checkpointed every 16,384 pages (64 MiB)
// rather than SQLite's 1,000: a checkpoint is the only fsync in this mode,
// and measured on the bank API it was a large share of a claim's cost.
//
// Callers share transactions (group commit, see commitGroup) unless
// FileOptions.Serial says otherwise.
func OpenFile(path string) (*DB, error) {
	return OpenFileWith(path, FileOptions{})
}

// FileOptions change how a file database runs its callers' transactions.
type FileOptions struct {
	// Serial gives every caller its own SQLite transaction (BEGIN IMMEDIATE
	// … COMMIT, and a claim committed by itself) instead of a place in a
	// group commit. The classroom uses it: the SQL it projects is then
	// exactly what a student's own endpoint would run, one request at a
	// time.
	Serial bool
}

// OpenFileWith is OpenFile with options.
func OpenFileWith(path string, o FileOptions) (*DB, error) {
	db, err := open(path, true)
	if err != nil {
		return nil, err
	}
	db.group = !o.Serial
	return db, nil
}

func open(name string, file bool) (*DB, error) {
	conn, err := sqlite3.Open(name)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", name, err)
	}
	db := &DB{conn: conn, stmts: map[string]*sqlite3.Stmt{}, path: name}
	if err := db.init(file); err != nil {
		conn.Close()
		return nil, err
	}
	return db, nil
}

func (db *DB) init(file bool) error {
	if err := db.conn.BusyTimeout(BusyTimeout); err != nil {
		return fmt.Errorf("store: busy timeout: %w", err)
	}
	if file {
		if err := db.conn.Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=16384;"); err != nil {
			return fmt.Errorf("store: pragmas: %w", err)
		}
	}
	if !file {
		return nil // a copy of emptyImage, at the current schema version
	}
	if err := db.migrate(); err != nil {
		return err
	}
	return nil
}

// Close closes the database.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	for _, s := range db.stmts {
		s.Close()
	}
	return db.conn.Close()
}

// Table names, as they appear in the SQL the lessons show.
const (
	keysTable      = "idem_keys"
	looseKeysTable = "idem_keys_unconstrained"
)

func tableName(t engine.KeyTable) string {
	if t == engine.TableLoose {
		return looseKeysTable
	}
	return keysTable
}

const keyColumns = "scope, idem_key, customer, fingerprint, state, owner, lease_until, created_at, expires_at, status, headers, body, transfer_id"

// keyColumnsNoState is keyColumns without state: what code that keeps no
// in-progress state writes.
const keyColumnsNoState = "scope, idem_key, customer, fingerprint, owner, lease_until, created_at, expires_at, status, headers, body, transfer_id"

// statements are prepared once per connection. Names with {t} exist once
// per key table.
var statements = func() map[string]string {
	m := map[string]string{
		"putAccount":   "INSERT INTO accounts(id, balance) VALUES (?1, ?2) ON CONFLICT(id) DO UPDATE SET balance = excluded.balance",
		"getAccount":   "SELECT balance FROM accounts WHERE id = ?1",
		"debit":        "UPDATE accounts SET balance = balance - ?2 WHERE id = ?1",
		"credit":       "UPDATE accounts SET balance = balance + ?2 WHERE id = ?1",
		"addTransfer":  "INSERT INTO transfers(from_id, to_id, amount, created_at, customer, idem_key) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
		"transferByID": "SELECT t.from_id, t.to_id, t.amount, t.created_at, t.customer, t.idem_key, a.balance FROM transfers t JOIN accounts a ON a.id = t.from_id WHERE t.id = ?1",
		"begin":        "BEGIN IMMEDIATE",
		"commit":       "COMMIT",
		"rollback":     "ROLLBACK",
		// Inside a commit group the ledger is a savepoint of the group's
		// transaction.
		"savepoint":  "SAVEPOINT ledger",
		"release":    "RELEASE ledger",
		"rollbackTo": "ROLLBACK TO ledger",
	}
	const expired = " AND expires_at > 0 AND expires_at <= ?5"
	// The reaper's sweep walks the constrained table in primary-key order
	// and the unconstrained one in rowid order, a window at a time: the
	// window starts after ?1 (scope, key: ?1, ?2), holds ?3 + 1 rows and
	// ends at ?3 (?3, ?4); ?5 is now.
	m["sweepEnd:"+keysTable] = "SELECT scope, idem_key FROM " + keysTable + " WHERE (scope, idem_key) > (?1, ?2) ORDER BY scope, idem_key LIMIT 1 OFFSET ?3"
	m["sweep:"+keysTable] = "DELETE FROM " + keysTable + " WHERE (scope, idem_key) > (?1, ?2) AND (scope, idem_key) <= (?3, ?4)" + expired
	m["sweepRest:"+keysTable] = "DELETE FROM " + keysTable + " WHERE (scope, idem_key) > (?1, ?2)" + expired
	m["sweepEnd:"+looseKeysTable] = "SELECT rowid FROM " + looseKeysTable + " WHERE rowid > ?1 ORDER BY rowid LIMIT 1 OFFSET ?3"
	m["sweep:"+looseKeysTable] = "DELETE FROM " + looseKeysTable + " WHERE rowid > ?1 AND rowid <= ?3" + expired
	m["sweepRest:"+looseKeysTable] = "DELETE FROM " + looseKeysTable + " WHERE rowid > ?1" + expired
	for _, t := range []string{keysTable, looseKeysTable} {
		m["lookup:"+t] = "SELECT " + keyColumns + " FROM " + t + " WHERE scope = ?1 AND idem_key = ?2 ORDER BY created_at DESC LIMIT 1"
		m["insert:"+t] = "INSERT INTO " + t + "(" + keyColumns + ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
		m["insertIgnore:"+t] = "INSERT OR IGNORE INTO " + t + "(" + keyColumns + ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
		m["insertNoState:"+t] = "INSERT INTO " + t + "(" + keyColumnsNoState + ") VALUES (?1, ?2, ?3, ?4, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
		m["insertIgnoreNoState:"+t] = "INSERT OR IGNORE INTO " + t + "(" + keyColumnsNoState + ") VALUES (?1, ?2, ?3, ?4, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
		m["takeOver:"+t] = "UPDATE " + t + " SET customer = ?3, fingerprint = ?4, state = ?5, owner = ?6, lease_until = ?7, created_at = ?8, expires_at = ?9," +
			" status = NULL, headers = NULL, body = NULL, transfer_id = NULL" +
			" WHERE scope = ?1 AND idem_key = ?2 AND ((expires_at > 0 AND expires_at <= ?10) OR (state = 'in_progress' AND lease_until > 0 AND lease_until <= ?10))"
		m["complete:"+t] = "UPDATE " + t + " SET state = 'completed', lease_until = 0, status = ?4, headers = ?5, body = ?6, transfer_id = ?7" +
			" WHERE scope = ?1 AND idem_key = ?2 AND owner = ?3 AND state = 'in_progress'"
		m["storeResponse:"+t] = "UPDATE " + t + " SET status = ?4, headers = ?5, body = ?6, transfer_id = ?7 WHERE scope = ?1 AND idem_key = ?2 AND owner = ?3"
		m["release:"+t] = "DELETE FROM " + t + " WHERE scope = ?1 AND idem_key = ?2 AND owner = ?3 AND state = 'in_progress'"
	}
	return m
}()

// stmt returns the named statement, preparing it on first use: a
// database prepares only what its callers run. In the browser that matters:
// a lesson's fresh in-memory database is open before the learner can act,
// and preparing every statement up front ran SQLite's query planner over
// thirty statements the first scenario never uses. Callers hold db.mu.
func (db *DB) stmt(name string) (*sqlite3.Stmt, error) {
	if s, ok := db.stmts[name]; ok {
		return s, nil
	}
	sql, ok := statements[name]
	if !ok {
		panic("store: no statement " + name) // a typo in this package
	}
	s, _, err := db.conn.Prepare(sql)
	if err != nil {
		return nil, mapErr("prepare "+name, err)
	}
	db.stmts[name] = s
	return s, nil
}

// exec runs a statement that binds nothing. Callers hold db.mu.
func (db *DB) exec(name string) error {
	s, err := db.stmt(name)
	if err != nil {
		return err
	}
	return s.Exec()
}

// SQL returns the text of a prepared statement, for traces.
func SQL(name string) string { return statements[name] }

func (db *DB) lock(ctx context.Context) (func(*error), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !db.group {
		db.mu.Lock()
		return func(*error) { db.mu.Unlock() }, nil
	}
	db.waiting.Add(1)
	db.mu.Lock()
	db.waiting.Add(-1)
	if db.batch == nil {
		if err := db.exec("begin"); err != nil {
			db.mu.Unlock()
			return nil, mapErr("begin", err)
		}
		db.batch = &commitGroup{done: make(chan struct{})}
	}
	g := db.batch
	g.members++
	return func(errp *error) {
		switch {
		case db.conn.GetAutocommit():
			// An error rolled the whole transaction back: every member's
			// work is gone, and each of them must say so.
			g.err = errors.New("store: the group's transaction was rolled back by an error")
			db.batch = nil
			close(g.done)
		case db.waiting.Load() == 0 || g.members >= maxGroup:
			if err := db.exec("commit"); err != nil {
				g.err = mapErr("commit", err)
				db.exec("rollback")
			}
			db.groups.Add(1)
			db.grouped.Add(int64(g.members))
			db.batch = nil
			close(g.done)
		}
		db.mu.Unlock()
		<-g.done
		if g.err != nil && *errp == nil {
			*errp = g.err
		}
	}, nil
}

// commitGroup is one SQLite transaction shared by the callers that held the
// database one after another while others were waiting for it: the group
// commit of a file database. Each caller's work runs inside it (the ledger
// in a SAVEPOINT of its own); the last caller of the group commits, and no
// caller returns before that commit, so nothing is answered that a crash
// could still undo. A page that several callers changed, the ledger's or
// the key table's last page, is written to the WAL once per group instead
// of once per caller.
type commitGroup struct {
	done    chan struct{} // closed when the group committed or failed
	err     error         // why it failed
	members int
}

// maxGroup bounds a group: its first caller waits for the work of the
// others before its commit, and a scoped transfer waits twice (the claim,
// then the ledger). Measured over loopback HTTP with 16 clients, groups of
// at most 4 gave scoped 8,090-8,980 req/s against 6,850-7,910 with 32, and
// naive the same either way.
const maxGroup = 4

// mapErr turns SQLite's lock errors into engine.ErrBusy and wraps the rest
// with the operation.
func mapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sqlite3.BUSY) || errors.Is(err, sqlite3.LOCKED) {
		return fmt.Errorf("store: %s: %w (%v)", op, engine.ErrBusy, err)
	}
	return fmt.Errorf("store: %s: %w", op, err)
}

func isConstraint(err error) bool {
	return errors.Is(err, sqlite3.CONSTRAINT_PRIMARYKEY) || errors.Is(err, sqlite3.CONSTRAINT_UNIQUE)
}

// PutAccount creates or sets an account.
func (db *DB) PutAccount(ctx context.Context, id string, balance int64) (_ engine.Account, err error) {
	unlock, err := db.lock(ctx)
	if err != nil {
		return engine.Account{}, err
	}
	defer unlock(&err)
	s, err := db.stmt("putAccount")
	if err != nil {
		return engine.Account{}, err
	}
	s.BindText(1, id)
	s.BindInt64(2, balance)
	if err := s.Exec(); err != nil {
		return engine.Account{}, mapErr("put account", err)
	}
	return engine.Account{ID: id, Balance: balance}, nil
}

// GetAccount returns an account or engine.ErrNotFound.
func (db *DB) GetAccount(ctx context.Context, id string) (_ engine.Account, err error) {
	unlock, err := db.lock(ctx)
	if err != nil {
		return engine.Account{}, err
	}
	defer unlock(&err)
	bal, ok, err := db.balance(id)
	if err != nil {
		return engine.Account{}, err
	}
	if !ok {
		return engine.Account{}, engine.ErrNotFound
	}
	return engine.Account{ID: id, Balance: bal}, nil
}

func (db *DB) balance(id string) (int64, bool, error) {
	s, err := db.stmt("getAccount")
	if err != nil {
		return 0, false, err
	}
	defer s.Reset()
	s.BindText(1, id)
	if s.Step() {
		return s.ColumnInt64(0), true, nil
	}
	return 0, false, mapErr("get account", s.Err())
}

// LookupKey returns the newest row for (scope, key), or nil.
func (db *DB) LookupKey(ctx context.Context, t engine.KeyTable, scope, key string) (_ *engine.KeyRecord, _ string, err error) {
	name := "lookup:" + tableName(t)
	unlock, err := db.lock(ctx)
	if err != nil {
		return nil, SQL(name), err
	}
	defer unlock(&err)
	rec, err := db.lookup(name, scope, key)
	return rec, SQL(name), err
}

func (db *DB) lookup(name, scope, key string) (*engine.KeyRecord, error) {
	s, err := db.stmt(name)
	if err != nil {
		return nil, err
	}
	defer s.Reset()
	s.BindText(1, scope)
	s.BindText(2, key)
	if !s.Step() {
		return nil, mapErr("look up key", s.Err())
	}
	rec, err := scanKey(s)
	return &rec, err
}

// scanKey reads a row selected with keyColumns.
func scanKey(s *sqlite3.Stmt) (engine.KeyRecord, error) {
	rec := engine.KeyRecord{
		Scope: s.ColumnText(0), Key: s.ColumnText(1), Customer: s.ColumnText(2), Fingerprint: s.ColumnText(3),
		State: s.ColumnText(4), Owner: s.ColumnText(5), LeaseUntil: s.ColumnInt64(6), CreatedAt: s.ColumnInt64(7),
		ExpiresAt: s.ColumnInt64(8), TransferID: s.ColumnText(12),
	}
	if s.ColumnType(9) != sqlite3.NULL {
		resp := &engine.Response{Status: s.ColumnInt(9), Body: s.ColumnBlob(11, []byte{})}
		if err := json.Unmarshal(s.ColumnRawText(10), &resp.Header); err != nil {
			return rec, fmt.Errorf("store: stored headers of %q: %w", rec.Key, err)
		}
		rec.Response = resp
	}
	return rec, nil
}

func bindKey(s *sqlite3.Stmt, rec engine.KeyRecord) error {
	s.BindText(1, rec.Scope)
	s.BindText(2, rec.Key)
	s.BindText(3, rec.Customer)
	s.BindText(4, rec.Fingerprint)
	s.BindText(5, rec.State)
	s.BindText(6, rec.Owner)
	s.BindInt64(7, rec.LeaseUntil)
	s.BindInt64(8, rec.CreatedAt)
	s.BindInt64(9, rec.ExpiresAt)
	return bindResponse(s, 10, rec.Response, rec.TransferID)
}

// bindResponse binds status, headers, body and transfer id from param n on.
// jsonHeader is the stored form of the header almost every response has.
var jsonHeader = func() []byte {
	b, _ := json.Marshal([]engine.Header{{Name: "Content-Type", Value: "application/json"}})
	return b
}()

// encodeHeader is json.Marshal of a response's header, without the
// reflection for the one header almost every response has: this runs
// inside the ledger's transaction.
func encodeHeader(h []engine.Header) ([]byte, error) {
	if len(h) == 1 && h[0].Name == "Content-Type" && h[0].Value == "application/json" {
		return jsonHeader, nil
	}
	return json.Marshal(h)
}

func bindResponse(s *sqlite3.Stmt, n int, resp *engine.Response, transferID string) error {
	if resp == nil {
		s.BindNull(n)
		s.BindNull(n + 1)
		s.BindNull(n + 2)
	} else {
		h, err := encodeHeader(resp.Header)
		if err != nil {
			return err
		}
		s.BindInt(n, resp.Status)
		s.BindRawText(n+1, h)
		s.BindBlob(n+2, resp.Body)
	}
	if transferID == "" {
		s.BindNull(n + 3)
	} else {
		s.BindText(n+3, transferID)
	}
	return nil
}

// InsertKey runs the claim INSERT. The verdict on a duplicate is SQLite's
// constraint error; only after it does the store read the blocking row.
func (db *DB) InsertKey(ctx context.Context, t engine.KeyTable, mode engine.InsertMode, rec engine.KeyRecord) (_ engine.InsertResult, err error) {
	name := "insert"
	if mode == engine.InsertOrIgnore {
		name = "insertIgnore"
	}
	if rec.State == "" {
		name += "NoState"
	}
	name += ":" + tableName(t)
	res := engine.InsertResult{SQL: SQL(name)}
	unlock, err := db.lock(ctx)
	if err != nil {
		return res, err
	}
	defer unlock(&err)
	s, err := db.stmt(name)
	if err != nil {
		return res, err
	}
	if err := bindKey(s, rec); err != nil {
		return res, fmt.Errorf("store: bind key: %w", err)
	}
	err = s.Exec()
	switch {
	case err == nil:
		res.Inserted = db.conn.Changes() == 1
		return res, nil
	case isConstraint(err):
		res.ConstraintError = err.Error()
		res.Existing, err = db.lookup("lookup:"+tableName(t), rec.Scope, rec.Key)
		return res, err
	}
	return res, mapErr(fmt.Sprintf("claim %q", rec.Key), err)
}

// TakeOverKey replaces an expired row, or an in_progress row whose lease ran
// out, with rec. One conditional UPDATE: at most one attempt wins.
func (db *DB) TakeOverKey(ctx context.Context, t engine.KeyTable, rec engine.KeyRecord, nowMS int64) (_ bool, _ string, err error) {
	name := "takeOver:" + tableName(t)
	unlock, err := db.lock(ctx)
	if err != nil {
		return false, SQL(name), err
	}
	defer unlock(&err)
	s, err := db.stmt(name)
	if err != nil {
		return false, SQL(name), err
	}
	s.BindText(1, rec.Scope)
	s.BindText(2, rec.Key)
	s.BindText(3, rec.Customer)
	s.BindText(4, rec.Fingerprint)
	state := rec.State
	if state == "" {
		state = engine.StateCompleted
	}
	s.BindText(5, state)
	s.BindText(6, rec.Owner)
	s.BindInt64(7, rec.LeaseUntil)
	s.BindInt64(8, rec.CreatedAt)
	s.BindInt64(9, rec.ExpiresAt)
	s.BindInt64(10, nowMS)
	if err := s.Exec(); err != nil {
		return false, SQL(name), mapErr(fmt.Sprintf("take over %q", rec.Key), err)
	}
	return db.conn.Changes() == 1, SQL(name), nil
}

// Transfer runs the ledger transaction: check both accounts and the funds,
// debit, credit, record the transfer and, when asked, complete the key, all
// in one BEGIN IMMEDIATE … COMMIT.
func (db *DB) Transfer(ctx context.Context, a engine.TransferArgs) (res engine.TransferResult, err error) {
	unlock, err := db.lock(ctx)
	if err != nil {
		return res, err
	}
	defer unlock(&err)
	var sql []string
	run := func(name string) { sql = append(sql, SQL(name)) }
	defer func() { res.SQL = strings.Join(sql, ";\n") }()

	begin, commit := "begin", "commit"
	if db.group {
		begin, commit = "savepoint", "release"
	}
	run(begin)
	if err := db.exec(begin); err != nil {
		return res, mapErr("begin transfer", err)
	}
	committed := false
	defer func() {
		if committed {
			return
		}
		if db.group {
			db.exec("rollbackTo")
			db.exec("release")
			run("rollbackTo")
			run("release")
			return
		}
		db.exec("rollback")
		run("rollback")
	}()

	run("getAccount")
	fromBal, ok, err := db.balance(a.From)
	if err != nil {
		return res, err
	}
	switch {
	case !ok:
		res.Outcome, res.Missing = engine.TransferUnknownAccount, a.From
	case fromBal < a.Amount:
		res.Outcome, res.Balance = engine.TransferInsufficientFunds, fromBal
	default:
		if err := db.move(a, fromBal, &res, run); err != nil {
			return res, err
		}
	}
	if c := a.Complete; c != nil {
		resp := c.Render(res)
		name := "complete:" + tableName(c.Table)
		run(name)
		s, err := db.stmt(name)
		if err != nil {
			return res, err
		}
		s.BindText(1, c.Scope)
		s.BindText(2, c.Key)
		s.BindText(3, c.Owner)
		if err := bindResponse(s, 4, &resp, res.Transfer.ID); err != nil {
			return res, fmt.Errorf("store: bind response: %w", err)
		}
		if err := s.Exec(); err != nil {
			return res, mapErr(fmt.Sprintf("complete %q", c.Key), err)
		}
		if db.conn.Changes() != 1 {
			// Another attempt took the claim over: this one must not pay.
			res.Completed = false
			return res, nil
		}
		res.Completed, res.Response = true, &resp
	}
	run(commit)
	if err := db.exec(commit); err != nil {
		return res, mapErr("commit transfer", err)
	}
	committed = true
	return res, nil
}

// move credits, debits and records the transfer. The credit goes first: if
// it changes no row, the payee does not exist and nothing has moved yet.
func (db *DB) move(a engine.TransferArgs, fromBal int64, res *engine.TransferResult, run func(string)) error {
	for _, name := range []string{"credit", "debit"} {
		id := a.To
		if name == "debit" {
			id = a.From
		}
		run(name)
		s, err := db.stmt(name)
		if err != nil {
			return err
		}
		s.BindText(1, id)
		s.BindInt64(2, a.Amount)
		if err := s.Exec(); err != nil {
			return mapErr(name, err)
		}
		if db.conn.Changes() == 0 {
			res.Outcome, res.Missing = engine.TransferUnknownAccount, id
			return nil
		}
	}
	run("addTransfer")
	s, err := db.stmt("addTransfer")
	if err != nil {
		return err
	}
	s.BindText(1, a.From)
	s.BindText(2, a.To)
	s.BindInt64(3, a.Amount)
	s.BindInt64(4, a.At)
	s.BindText(5, a.Customer)
	s.BindText(6, a.Key)
	if err := s.Exec(); err != nil {
		return mapErr("record transfer", err)
	}
	res.Transfer = engine.Transfer{ID: TransferID(db.conn.LastInsertRowID()), From: a.From, To: a.To, Amount: a.Amount,
		BalanceAfter: fromBal - a.Amount, CreatedAt: a.At, Customer: a.Customer, Key: a.Key}
	return nil
}

// TransferID formats a ledger row id as a transfer id.
func TransferID(rowid int64) string { return fmt.Sprintf("tr_%06d", rowid) }

func parseTransferID(id string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimPrefix(id, "tr_"), 10, 64)
	return n, err == nil && strings.HasPrefix(id, "tr_")
}

// StoreResponse saves a response on a key after the fact (the rungs that
// record completion separately from the ledger).
func (db *DB) StoreResponse(ctx context.Context, t engine.KeyTable, scope, key, owner string, resp engine.Response, transferID string) (_ bool, _ string, err error) {
	name := "storeResponse:" + tableName(t)
	unlock, err := db.lock(ctx)
	if err != nil {
		return false, SQL(name), err
	}
	defer unlock(&err)
	s, err := db.stmt(name)
	if err != nil {
		return false, SQL(name), err
	}
	s.BindText(1, scope)
	s.BindText(2, key)
	s.BindText(3, owner)
	if err := bindResponse(s, 4, &resp, transferID); err != nil {
		return false, SQL(name), err
	}
	if err := s.Exec(); err != nil {
		return false, SQL(name), mapErr(fmt.Sprintf("store response of %q", key), err)
	}
	return db.conn.Changes() > 0, SQL(name), nil
}

// ReleaseKey deletes this owner's in_progress claim.
func (db *DB) ReleaseKey(ctx context.Context, t engine.KeyTable, scope, key, owner string) (_ string, err error) {
	name := "release:" + tableName(t)
	unlock, err := db.lock(context.WithoutCancel(ctx))
	if err != nil {
		return SQL(name), err
	}
	defer unlock(&err)
	s, err := db.stmt(name)
	if err != nil {
		return SQL(name), err
	}
	s.BindText(1, scope)
	s.BindText(2, key)
	s.BindText(3, owner)
	return SQL(name), mapErr(fmt.Sprintf("release %q", key), s.Exec())
}

// TransferByID returns a transfer and its payer's balance now, in one
// SELECT joining the ledger and the account.
func (db *DB) TransferByID(ctx context.Context, id string) (_ engine.Transfer, _ int64, _ string, err error) {
	sql := SQL("transferByID")
	rowid, ok := parseTransferID(id)
	if !ok {
		return engine.Transfer{}, 0, sql, engine.ErrNotFound
	}
	unlock, err := db.lock(ctx)
	if err != nil {
		return engine.Transfer{}, 0, sql, err
	}
	defer unlock(&err)
	s, err := db.stmt("transferByID")
	if err != nil {
		return engine.Transfer{}, 0, sql, err
	}
	defer s.Reset()
	s.BindInt64(1, rowid)
	if !s.Step() {
		if err := s.Err(); err != nil {
			return engine.Transfer{}, 0, sql, mapErr("transfer by id", err)
		}
		return engine.Transfer{}, 0, sql, engine.ErrNotFound
	}
	t := engine.Transfer{ID: id, From: s.ColumnText(0), To: s.ColumnText(1), Amount: s.ColumnInt64(2),
		CreatedAt: s.ColumnInt64(3), Customer: s.ColumnText(4), Key: s.ColumnText(5)}
	return t, s.ColumnInt64(6), sql, nil
}

// Reap is one step of the reaper's sweep: it looks at up to batch keys,
// continuing where the last step stopped, and deletes those that expired
// at or before nowMS. It walks the constrained key table, then the
// unconstrained one; swept is true when this step reached the end of the
// last, and the next step starts again at the beginning.
//
// There is no index on the expiry time to find expired keys directly: it
// would cost every claim a second b-tree write (schema migration 2), and a
// key that expired is already treated as absent by the request that meets
// it, so the sweep only reclaims space.
func (db *DB) Reap(ctx context.Context, nowMS int64, batch int) (deleted int, swept bool, err error) {
	if batch < 1 {
		return 0, false, fmt.Errorf("store: reap: batch %d < 1", batch)
	}
	unlock, err := db.lock(ctx)
	if err != nil {
		return 0, false, err
	}
	defer unlock(&err)
	c := &db.sweep
	t := keysTable
	if c.loose {
		t = looseKeysTable
	}
	end, err := db.stmt("sweepEnd:" + t)
	if err != nil {
		return 0, false, err
	}
	c.bindAfter(end)
	end.BindInt64(3, int64(batch-1))
	var next sweepCursor
	found := end.Step()
	if found {
		next = sweepCursor{loose: c.loose, started: true}
		if c.loose {
			next.rowid = end.ColumnInt64(0)
		} else {
			next.scope, next.key = end.ColumnText(0), end.ColumnText(1)
		}
	}
	if err := end.Reset(); err != nil {
		return 0, false, mapErr("reap keys", err)
	}
	name := "sweepRest:" + t
	if found {
		name = "sweep:" + t
	}
	del, err := db.stmt(name)
	if err != nil {
		return 0, false, err
	}
	c.bindAfter(del)
	if found {
		if next.loose {
			del.BindInt64(3, next.rowid)
		} else {
			del.BindText(3, next.scope)
			del.BindText(4, next.key)
		}
	}
	del.BindInt64(5, nowMS)
	if err := del.Exec(); err != nil {
		return 0, false, mapErr("reap keys", err)
	}
	deleted = int(db.conn.Changes())
	switch {
	case found:
		*c = next
	case !c.loose:
		*c = sweepCursor{loose: true}
	default:
		*c = sweepCursor{}
		swept = true
	}
	return deleted, swept, nil
}

// sweepCursor is where the reaper's sweep stands: in which table, and the
// last row it looked at (none yet when !started).
type sweepCursor struct {
	loose      bool
	started    bool
	scope, key string
	rowid      int64
}

// bindAfter binds the window's lower bound: ?1 (and ?2) of the sweep
// statements. Before the first window every row is after it.
func (c *sweepCursor) bindAfter(s *sqlite3.Stmt) {
	switch {
	case c.loose:
		s.BindInt64(1, c.rowid) // rowids start at 1
	case c.started:
		s.BindText(1, c.scope)
		s.BindText(2, c.key)
	default:
		s.BindText(1, "") // keys are never empty: ("", "") is before all
		s.BindText(2, "")
	}
}
