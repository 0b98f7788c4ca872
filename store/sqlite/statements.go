package sqlite

import (
	"github.com/ncruces/go-sqlite3"

	"idemlab/engine"
)

// Table names, as they appear in the SQL the lessons show.
const (
	keysTable      = "idem_keys"
	looseKeysTable = "idem_keys_unconstrained"
	// chargesTable is the simulated payment processor's record of charges:
	// in the same file, but written outside the ledger's transactions.
	chargesTable = "processor_charges"
	// recoveryTable holds the recovery points around payment calls.
	recoveryTable = "idem_recovery"
)

const chargeColumns = "id, from_id, to_id, amount, created_at, customer, idem_key, coalesce(idempotency_key, '')"

const keyColumns = "scope, idem_key, customer, fingerprint, state, owner, lease_until, created_at, expires_at, status, headers, body, transfer_id"

// keyColumnsNoState is keyColumns without state: what code that keeps no
// in-progress state writes.
const keyColumnsNoState = "scope, idem_key, customer, fingerprint, owner, lease_until, created_at, expires_at, status, headers, body, transfer_id"

// stmt is one statement the store runs: its text, which traces show, and
// its prepared form on the DB's connection once it has run.
type stmt struct {
	sql      string
	prepared *sqlite3.Stmt
}

// statements are every statement of one DB, a field each, so that a
// misspelt name does not compile. Each is prepared the first time it runs
// (DB.prepare).
type statements struct {
	putAccount, getAccount, debit, credit, addTransfer, transferByID stmt
	begin, commit, rollback                                          stmt
	// Inside a commit group the ledger is a savepoint of the group's
	// transaction.
	savepoint, release, rollbackTo stmt
	usage                          stmt
	// Snapshot's reads of the whole ledger. A lesson's bench reads them
	// after every step: parsing them anew each time was a third of a
	// step's time in the browser's module.
	allAccounts, allTransfers stmt
	// The payment processor's own table (DB.Charge), and Snapshot's read
	// of it.
	charge, chargeByKey, allCharges stmt
	// Recovery points (DB.SaveRecoveryPoint, DB.LookupRecoveryPoint).
	saveRecovery, lookupRecovery stmt
	constrained, loose           keyStatements
}

// keyStatements are the statements of one key table.
type keyStatements struct {
	lookup                                                   stmt
	insert, insertIgnore, insertNoState, insertIgnoreNoState stmt
	takeOver, complete, storeResponse, release               stmt
	// The reaper's sweep (DB.Reap).
	sweepEnd, sweep, sweepRest stmt
	// all reads the whole table (Snapshot).
	all stmt
}

// keys returns the statements of key table t.
func (s *statements) keys(t engine.KeyTable) *keyStatements {
	if t == engine.TableLoose {
		return &s.loose
	}
	return &s.constrained
}

// each calls f with every statement, its name and its key table's name
// ("" for the ledger's).
func (s *statements) each(f func(table, name string, st *stmt)) {
	for _, st := range [...]struct {
		name string
		st   *stmt
	}{
		{"putAccount", &s.putAccount}, {"getAccount", &s.getAccount}, {"debit", &s.debit}, {"credit", &s.credit},
		{"addTransfer", &s.addTransfer}, {"transferByID", &s.transferByID},
		{"begin", &s.begin}, {"commit", &s.commit}, {"rollback", &s.rollback},
		{"savepoint", &s.savepoint}, {"release", &s.release}, {"rollbackTo", &s.rollbackTo}, {"usage", &s.usage},
		{"allAccounts", &s.allAccounts}, {"allTransfers", &s.allTransfers},
		{"charge", &s.charge}, {"chargeByKey", &s.chargeByKey}, {"allCharges", &s.allCharges},
		{"saveRecovery", &s.saveRecovery}, {"lookupRecovery", &s.lookupRecovery},
	} {
		f("", st.name, st.st)
	}
	s.constrained.each(keysTable, f)
	s.loose.each(looseKeysTable, f)
}

func (k *keyStatements) each(table string, f func(table, name string, st *stmt)) {
	for _, st := range [...]struct {
		name string
		st   *stmt
	}{
		{"lookup", &k.lookup}, {"insert", &k.insert}, {"insertIgnore", &k.insertIgnore},
		{"insertNoState", &k.insertNoState}, {"insertIgnoreNoState", &k.insertIgnoreNoState},
		{"takeOver", &k.takeOver}, {"complete", &k.complete}, {"storeResponse", &k.storeResponse}, {"release", &k.release},
		{"sweepEnd", &k.sweepEnd}, {"sweep", &k.sweep}, {"sweepRest", &k.sweepRest}, {"all", &k.all},
	} {
		f(table, st.name, st.st)
	}
}

// unprepared is the text of every statement, none prepared. Each DB starts
// with a copy of it (a struct of strings: copying it builds no SQL); it is
// never changed.
var unprepared = statements{
	putAccount:   stmt{sql: "INSERT INTO accounts(id, balance) VALUES (?1, ?2) ON CONFLICT(id) DO UPDATE SET balance = excluded.balance"},
	getAccount:   stmt{sql: "SELECT balance FROM accounts WHERE id = ?1"},
	debit:        stmt{sql: "UPDATE accounts SET balance = balance - ?2 WHERE id = ?1"},
	credit:       stmt{sql: "UPDATE accounts SET balance = balance + ?2 WHERE id = ?1"},
	addTransfer:  stmt{sql: "INSERT INTO transfers(from_id, to_id, amount, created_at, customer, idem_key) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"},
	transferByID: stmt{sql: "SELECT t.from_id, t.to_id, t.amount, t.created_at, t.customer, t.idem_key, a.balance FROM transfers t JOIN accounts a ON a.id = t.from_id WHERE t.id = ?1"},
	begin:        stmt{sql: "BEGIN IMMEDIATE"},
	commit:       stmt{sql: "COMMIT"},
	rollback:     stmt{sql: "ROLLBACK"},
	savepoint:    stmt{sql: "SAVEPOINT ledger"},
	release:      stmt{sql: "RELEASE ledger"},
	rollbackTo:   stmt{sql: "ROLLBACK TO ledger"},
	usage: stmt{sql: "SELECT (SELECT count(*) FROM " + keysTable + ") + (SELECT count(*) FROM " + looseKeysTable + ")," +
		" (SELECT count(*) FROM accounts), (SELECT count(*) FROM transfers)," +
		" (SELECT (p.page_count - f.freelist_count) * s.page_size FROM pragma_page_count() p, pragma_freelist_count() f, pragma_page_size() s)"},
	allAccounts:  stmt{sql: "SELECT id, balance FROM accounts ORDER BY id"},
	allTransfers: stmt{sql: "SELECT id, from_id, to_id, amount, created_at, customer, idem_key FROM transfers ORDER BY id"},
	// A repeated idempotency key inserts nothing and returns no row; the
	// processor then answers with the charge that key made first.
	// The processor declines a payer short of funds and unknown accounts:
	// then too it inserts nothing.
	charge: stmt{sql: "INSERT INTO " + chargesTable + "(idempotency_key, from_id, to_id, amount, created_at, customer, idem_key) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7" +
		" WHERE (SELECT balance FROM accounts WHERE id = ?2) >= ?4 AND EXISTS (SELECT 1 FROM accounts WHERE id = ?3)" +
		" ON CONFLICT (idempotency_key) DO NOTHING RETURNING id"},
	chargeByKey: stmt{sql: "SELECT " + chargeColumns + " FROM " + chargesTable + " WHERE idempotency_key = ?1"},
	allCharges:  stmt{sql: "SELECT " + chargeColumns + " FROM " + chargesTable + " ORDER BY id"},
	saveRecovery: stmt{sql: "INSERT INTO " + recoveryTable + "(scope, idem_key, owner, point, charge_id, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)" +
		" ON CONFLICT (scope, idem_key) DO UPDATE SET owner = excluded.owner, point = excluded.point, charge_id = excluded.charge_id, at = excluded.at"},
	lookupRecovery: stmt{sql: "SELECT owner, point, charge_id, at FROM " + recoveryTable + " WHERE scope = ?1 AND idem_key = ?2"},
	constrained: keyTableStatements(keysTable, keySweep{
		// The constrained table is walked in primary-key order: the window
		// starts after (?1, ?2) and ends at (?3, ?4).
		end:   "SELECT scope, idem_key FROM " + keysTable + " WHERE (scope, idem_key) > (?1, ?2) ORDER BY scope, idem_key LIMIT 1 OFFSET ?3",
		sweep: "DELETE FROM " + keysTable + " WHERE (scope, idem_key) > (?1, ?2) AND (scope, idem_key) <= (?3, ?4)" + sweepExpired,
		rest:  "DELETE FROM " + keysTable + " WHERE (scope, idem_key) > (?1, ?2)" + sweepExpired,
	}),
	loose: keyTableStatements(looseKeysTable, keySweep{
		// The unconstrained table is walked in rowid order: the window starts
		// after ?1 and ends at ?3.
		end:   "SELECT rowid FROM " + looseKeysTable + " WHERE rowid > ?1 ORDER BY rowid LIMIT 1 OFFSET ?3",
		sweep: "DELETE FROM " + looseKeysTable + " WHERE rowid > ?1 AND rowid <= ?3" + sweepExpired,
		rest:  "DELETE FROM " + looseKeysTable + " WHERE rowid > ?1" + sweepExpired,
	}),
}

// The reaper's sweep walks a key table a window at a time: sweepEnd finds
// where a window of ?3 + 1 rows after the cursor ends, sweep deletes the
// expired rows of that window and sweepRest those after the cursor when
// fewer rows are left; ?5 is now.
type keySweep struct{ end, sweep, rest string }

const sweepExpired = " AND expires_at > 0 AND expires_at <= ?5"

func keyTableStatements(t string, sw keySweep) keyStatements {
	return keyStatements{
		lookup:              stmt{sql: "SELECT " + keyColumns + " FROM " + t + " WHERE scope = ?1 AND idem_key = ?2 ORDER BY created_at DESC LIMIT 1"},
		insert:              stmt{sql: "INSERT INTO " + t + "(" + keyColumns + ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"},
		insertIgnore:        stmt{sql: "INSERT OR IGNORE INTO " + t + "(" + keyColumns + ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"},
		insertNoState:       stmt{sql: "INSERT INTO " + t + "(" + keyColumnsNoState + ") VALUES (?1, ?2, ?3, ?4, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"},
		insertIgnoreNoState: stmt{sql: "INSERT OR IGNORE INTO " + t + "(" + keyColumnsNoState + ") VALUES (?1, ?2, ?3, ?4, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"},
		takeOver: stmt{sql: "UPDATE " + t + " SET customer = ?3, fingerprint = ?4, state = ?5, owner = ?6, lease_until = ?7, created_at = ?8, expires_at = ?9," +
			" status = NULL, headers = NULL, body = NULL, transfer_id = NULL" +
			" WHERE scope = ?1 AND idem_key = ?2 AND ((expires_at > 0 AND expires_at <= ?10) OR (state = 'in_progress' AND lease_until > 0 AND lease_until <= ?10))"},
		complete: stmt{sql: "UPDATE " + t + " SET state = 'completed', lease_until = 0, status = ?4, headers = ?5, body = ?6, transfer_id = ?7" +
			" WHERE scope = ?1 AND idem_key = ?2 AND owner = ?3 AND state = 'in_progress'"},
		storeResponse: stmt{sql: "UPDATE " + t + " SET status = ?4, headers = ?5, body = ?6, transfer_id = ?7 WHERE scope = ?1 AND idem_key = ?2 AND owner = ?3"},
		release:       stmt{sql: "DELETE FROM " + t + " WHERE scope = ?1 AND idem_key = ?2 AND owner = ?3 AND state = 'in_progress'"},
		sweepEnd:      stmt{sql: sw.end},
		sweep:         stmt{sql: sw.sweep},
		sweepRest:     stmt{sql: sw.rest},
		all:           stmt{sql: "SELECT " + keyColumns + " FROM " + t + " ORDER BY created_at, scope, idem_key"},
	}
}

// prepare returns st prepared on the DB's connection, preparing it the
// first time: a database prepares only what its callers run. In the
// browser that matters: a lesson's fresh in-memory database is open before
// the learner can act, and preparing every statement up front ran SQLite's
// query planner over thirty statements the first scenario never uses.
// Callers hold the database (DB.hold).
func (db *DB) prepare(st *stmt) (*sqlite3.Stmt, error) {
	if st.prepared != nil {
		return st.prepared, nil
	}
	s, _, err := db.conn.Prepare(st.sql)
	if err != nil {
		return nil, mapErr("prepare "+st.sql, err)
	}
	st.prepared = s
	return s, nil
}

// exec runs a statement that binds nothing. Callers hold the database.
func (db *DB) exec(st *stmt) error {
	s, err := db.prepare(st)
	if err != nil {
		return err
	}
	return s.Exec()
}

// closeStatements finalizes every prepared statement: SQLite closes no
// connection that still has one.
func (db *DB) closeStatements() {
	db.stmts.each(func(_, _ string, st *stmt) {
		if st.prepared != nil {
			st.prepared.Close()
			st.prepared = nil
		}
	})
}
