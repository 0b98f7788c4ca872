package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"idemlab/engine"
)

// SaveRecoveryPoint records rp for its key, replacing the one there, in
// one statement that is its own transaction.
func (db *DB) SaveRecoveryPoint(ctx context.Context, rp engine.RecoveryPoint) (engine.WriteResult, error) {
	res := engine.WriteResult{SQL: string(saveRecovery)}
	tag, err := db.pool.Exec(ctx, res.SQL, rp.Scope, rp.Key, rp.Owner, rp.Point, rp.ChargeID, rp.At)
	if err != nil {
		return res, mapErr("save recovery point", err)
	}
	res.Changed = tag.RowsAffected() == 1
	return res, nil
}

// LookupRecoveryPoint reads the recovery point of (scope, key), if any.
func (db *DB) LookupRecoveryPoint(ctx context.Context, scope, key string) (engine.RecoveryLookup, error) {
	res := engine.RecoveryLookup{SQL: string(lookupRecovery)}
	rp := engine.RecoveryPoint{Scope: scope, Key: key}
	err := db.pool.QueryRow(ctx, res.SQL, scope, key).Scan(&rp.Owner, &rp.Point, &rp.ChargeID, &rp.At)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return res, nil
	case err != nil:
		return res, mapErr("look up recovery point", err)
	}
	res.Point = &rp
	return res, nil
}
