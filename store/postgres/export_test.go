package postgres

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// OpenConfigured is Open with a last word on the pool's configuration.
func OpenConfigured(ctx context.Context, url, schema string, configure func(*pgxpool.Config)) (*DB, error) {
	return open(ctx, url, schema, configure)
}

// Pool is the store's pool, for tests that set the database up by hand.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }
