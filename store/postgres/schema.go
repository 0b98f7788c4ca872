package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// migrations are applied in order, each in the transaction that records
// it in schema_version. Append, never edit: a database in the field has
// run them.
var migrations = []string{
	// 1: the ledger and the two key tables.
	`CREATE TABLE accounts (
		id      TEXT PRIMARY KEY,
		balance BIGINT NOT NULL CHECK (balance >= 0)
	);
	CREATE TABLE transfers (
		id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		from_id    TEXT NOT NULL,
		to_id      TEXT NOT NULL,
		amount     BIGINT NOT NULL CHECK (amount > 0),
		created_at BIGINT NOT NULL,
		customer   TEXT NOT NULL DEFAULT '',
		idem_key   TEXT NOT NULL DEFAULT ''
	);
	` + keyTableDDL(keysTable, "", "PRIMARY KEY (scope, idem_key)") + `;
	` + keyTableDDL(looseKeysTable, "id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY", "") + `;
	CREATE INDEX idem_keys_unconstrained_key ON idem_keys_unconstrained (scope, idem_key);`,
}

// SchemaVersion is the number of migrations this build knows.
var SchemaVersion = len(migrations)

// keyTableDDL is a key table's definition: the same columns as the SQLite
// store's. The constrained table's primary key over (scope, key) is the
// unique index whose violation (SQLSTATE 23505) is the claim's verdict;
// the unconstrained table has a surrogate key, which is also the order its
// reaper walks.
func keyTableDDL(name, first, constraint string) string {
	var cols []string
	if first != "" {
		cols = append(cols, first)
	}
	cols = append(cols,
		"scope       TEXT NOT NULL",
		"idem_key    TEXT NOT NULL",
		"customer    TEXT NOT NULL",
		"fingerprint TEXT NOT NULL DEFAULT ''",
		"state       TEXT NOT NULL DEFAULT 'completed' CHECK (state IN ('in_progress', 'completed'))",
		"owner       TEXT NOT NULL DEFAULT ''",
		"lease_until BIGINT NOT NULL DEFAULT 0",
		"created_at  BIGINT NOT NULL",
		"expires_at  BIGINT NOT NULL DEFAULT 0",
		"status      INTEGER",
		"headers     TEXT",
		"body        BYTEA",
		"transfer_id TEXT",
	)
	if constraint != "" {
		cols = append(cols, constraint)
	}
	return "CREATE TABLE " + name + " (\n\t\t" + strings.Join(cols, ",\n\t\t") + "\n\t)"
}

// migrateLock is the advisory lock every idemlab process takes while it
// creates or migrates a schema: several servers started at once against
// one database would otherwise race to CREATE the same tables.
const migrateLock = 0x1de41ab

// migrate creates the schema if needed and applies the migrations it has
// not run, all in one transaction under migrateLock.
func migrate(ctx context.Context, conn *pgx.Conn, schema string) error {
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		return fmt.Errorf("postgres: begin migration: %w", err)
	}
	defer tx.Rollback(ctx)
	q := pgx.Identifier{schema}.Sanitize()
	for _, sql := range []string{
		fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", migrateLock),
		"CREATE SCHEMA IF NOT EXISTS " + q,
		"SET LOCAL search_path TO " + q,
		"CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
	} {
		if _, err := tx.Exec(ctx, sql); err != nil {
			return fmt.Errorf("postgres: prepare schema %s: %w", schema, err)
		}
	}
	version := 0
	if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_version").Scan(&version); err != nil {
		return fmt.Errorf("postgres: read schema version: %w", err)
	}
	if version > len(migrations) {
		return fmt.Errorf("postgres: schema %s is at version %d, newer than this build (%d)", schema, version, len(migrations))
	}
	for i := version; i < len(migrations); i++ {
		if _, err := tx.Exec(ctx, migrations[i]); err != nil {
			return fmt.Errorf("postgres: migration %d: %w", i+1, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO schema_version (version) VALUES ($1)", i+1); err != nil {
			return fmt.Errorf("postgres: record migration %d: %w", i+1, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: commit migrations: %w", err)
	}
	return nil
}
