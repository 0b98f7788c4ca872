package sqlite

import (
	"context"

	"github.com/ncruces/go-sqlite3"

	"idemlab/engine"
)

// SaveRecoveryPoint records rp for its key, replacing the one there, in
// one statement that is its own transaction.
func (db *DB) SaveRecoveryPoint(ctx context.Context, rp engine.RecoveryPoint) (engine.WriteResult, error) {
	st := &db.stmts.saveRecovery
	res := engine.WriteResult{SQL: st.sql}
	err := db.holdStmt(ctx, st, func(s *sqlite3.Stmt) error {
		defer s.Reset()
		s.BindText(1, rp.Scope)
		s.BindText(2, rp.Key)
		s.BindText(3, rp.Owner)
		s.BindText(4, rp.Point)
		s.BindText(5, rp.ChargeID)
		s.BindInt64(6, rp.At)
		if err := s.Exec(); err != nil {
			return mapErr("save recovery point", err)
		}
		res.Changed = db.conn.Changes() == 1
		return nil
	})
	return res, err
}

// LookupRecoveryPoint reads the recovery point of (scope, key), if any.
func (db *DB) LookupRecoveryPoint(ctx context.Context, scope, key string) (engine.RecoveryLookup, error) {
	st := &db.stmts.lookupRecovery
	res := engine.RecoveryLookup{SQL: st.sql}
	err := db.holdStmt(ctx, st, func(s *sqlite3.Stmt) error {
		defer s.Reset()
		s.BindText(1, scope)
		s.BindText(2, key)
		if !s.Step() {
			return mapErr("look up recovery point", s.Err())
		}
		res.Point = &engine.RecoveryPoint{Scope: scope, Key: key, Owner: s.ColumnText(0), Point: s.ColumnText(1),
			ChargeID: s.ColumnText(2), At: s.ColumnInt64(3)}
		return nil
	})
	return res, err
}
