package sqlite

import (
	"fmt"
	"strings"

	"idemlab/internal/sqlitemigrate"
)

// migrations are applied in order; PRAGMA user_version counts how many a
// database has. Append, never edit: a database in the field has run them.
var migrations = []string{
	// 1: the ledger and the two key tables.
	ledgerAndKeysDDL + `
	CREATE INDEX idem_keys_expiry ON idem_keys (expires_at) WHERE expires_at > 0;
	` + looseKeysDDL,
	// 2: no expiry index. Every claim wrote an entry into it, a second
	// b-tree and a second WAL frame in the claim's transaction: measured in
	// the store, a claim took 37 µs with it and 22 µs without. Expired
	// keys are already treated as absent when a request meets them, so the
	// reaper only collects garbage, and it walks the table in key order
	// instead (DB.Reap).
	`DROP INDEX IF EXISTS idem_keys_expiry`,
	// 3: the payment processor's record of charges.
	chargesDDL,
	// 4: recovery points around the payment call.
	recoveryDDL,
}

// schema is what all the migrations leave, written out: a new database is
// created with it in one step instead of replaying history (in the
// browser, every lesson opens a new one). A test holds it to the
// migrations: both give the same sqlite_schema.
var schema = ledgerAndKeysDDL + "\n\t" + looseKeysDDL + "\n\t" + chargesDDL + "\n\t" + recoveryDDL

// The tables that migration 1 created and no migration has changed since,
// shared by migration 1 and schema so that the two cannot drift apart.
var (
	ledgerAndKeysDDL = `CREATE TABLE accounts (
		id      TEXT PRIMARY KEY,
		balance INTEGER NOT NULL CHECK (balance >= 0)
	);
	CREATE TABLE transfers (
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		from_id    TEXT NOT NULL,
		to_id      TEXT NOT NULL,
		amount     INTEGER NOT NULL CHECK (amount > 0),
		created_at INTEGER NOT NULL,
		customer   TEXT NOT NULL DEFAULT '',
		idem_key   TEXT NOT NULL DEFAULT ''
	);
	` + keyTableDDL(keysTable, "PRIMARY KEY (scope, idem_key)") + ` WITHOUT ROWID;`
	looseKeysDDL = keyTableDDL(looseKeysTable, "") + `;
	CREATE INDEX idem_keys_unconstrained_key ON idem_keys_unconstrained (scope, idem_key);`
)

// chargesDDL is the simulated payment processor's table. It stands for a
// foreign party's records: the store writes it on its own, never inside
// the ledger's transaction, so that no rollback of the ledger undoes a
// charge. The idempotency key is NULL for a call that carried none (NULLs
// never collide), and unique for those that did: the processor's own
// idempotency.
const chargesDDL = `CREATE TABLE ` + chargesTable + ` (
		id              INTEGER PRIMARY KEY AUTOINCREMENT,
		idempotency_key TEXT UNIQUE,
		from_id         TEXT NOT NULL,
		to_id           TEXT NOT NULL,
		amount          INTEGER NOT NULL CHECK (amount > 0),
		created_at      INTEGER NOT NULL,
		customer        TEXT NOT NULL DEFAULT '',
		idem_key        TEXT NOT NULL DEFAULT ''
	);`

// recoveryDDL is where a claimed request records how far it got with its
// payment call (engine.RecoveryPoint): one row per key, beside the key
// tables, written in transactions of its own.
const recoveryDDL = `CREATE TABLE ` + recoveryTable + ` (
		scope     TEXT NOT NULL,
		idem_key  TEXT NOT NULL,
		owner     TEXT NOT NULL,
		point     TEXT NOT NULL CHECK (point IN ('charge_started', 'charge_made')),
		charge_id TEXT NOT NULL DEFAULT '',
		at        INTEGER NOT NULL,
		PRIMARY KEY (scope, idem_key)
	) WITHOUT ROWID;`

// keyTableDDL is the key table's definition. The constrained table's primary
// key over (scope, key) is what makes the second INSERT fail; it is a
// WITHOUT ROWID table, so the claim writes one b-tree, not a table and an
// index.
func keyTableDDL(name, constraint string) string {
	cols := []string{
		"scope       TEXT NOT NULL",
		"idem_key    TEXT NOT NULL",
		"customer    TEXT NOT NULL",
		"fingerprint TEXT NOT NULL DEFAULT ''",
		"state       TEXT NOT NULL DEFAULT 'completed' CHECK (state IN ('in_progress', 'completed'))",
		"owner       TEXT NOT NULL DEFAULT ''",
		"lease_until INTEGER NOT NULL DEFAULT 0",
		"created_at  INTEGER NOT NULL",
		"expires_at  INTEGER NOT NULL DEFAULT 0",
		"status      INTEGER",
		"headers     TEXT",
		"body        BLOB",
		"transfer_id TEXT",
	}
	if constraint != "" {
		cols = append(cols, constraint)
	}
	return "CREATE TABLE " + name + " (\n\t\t" + strings.Join(cols, ",\n\t\t") + "\n\t)"
}

// SchemaVersion is the number of migrations this build knows.
var SchemaVersion = len(migrations)

func (db *DB) migrate() error {
	s, _, err := db.conn.Prepare("PRAGMA user_version")
	if err != nil {
		return fmt.Errorf("sqlite: read schema version: %w", err)
	}
	version := 0
	if s.Step() {
		version = s.ColumnInt(0)
	}
	s.Close()
	if version > len(migrations) {
		return fmt.Errorf("sqlite: database schema version %d is newer than this build (%d)", version, len(migrations))
	}
	if version == 0 {
		sql := "BEGIN IMMEDIATE;\n" + schema + fmt.Sprintf(";\nPRAGMA user_version = %d;\nCOMMIT;", len(migrations))
		if err := db.conn.Exec(sql); err != nil {
			db.conn.Exec("ROLLBACK")
			return fmt.Errorf("sqlite: create schema: %w", err)
		}
		return nil
	}
	if err := sqlitemigrate.Migrate(db.conn, migrations); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}
