package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"idemlab/engine"
)

// Pool is the store's pool, for tests that set the database up by hand.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// PoolSize is the most connections the store's pool opens.
func (db *DB) PoolSize() int32 { return db.pool.Config().MaxConns }

// MigrateTo brings schema to version n only, as an older build would.
func MigrateTo(ctx context.Context, url, schema string, n int) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return migrate(ctx, conn, schema, migrations[:n])
}

// Gathered is how many ledger calls wait, grouped, behind the one that
// holds the pair of accounts from and to.
func (db *DB) Gathered(from, to string) int { return db.groups.gathered(pairOf(from, to)) }

// GatheredClaims is how many claims wait, grouped, behind the one at
// PostgreSQL on table t.
func (db *DB) GatheredClaims(t engine.KeyTable) int { return db.claims.gathered(t) }
