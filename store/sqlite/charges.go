package sqlite

import (
	"context"
	"strings"

	"github.com/ncruces/go-sqlite3"

	"idemlab/engine"
)

// Charge is the simulated payment processor: it records the charge in its
// own table in an autocommit statement of its own (on a file with group
// commit, the group's transaction, committed before Charge returns), never
// inside the ledger's transaction, so a ledger rollback leaves it standing.
// A call whose idempotency key the processor has recorded charges nothing
// and answers with that key's first charge; a call for a payer short of
// funds, or between unknown accounts, is declined.
func (db *DB) Charge(ctx context.Context, a engine.ChargeArgs) (res engine.ChargeResult, err error) {
	st := &db.stmts.charge
	var ran []string
	defer func() { res.SQL = strings.Join(ran, ";\n") }()
	err = db.hold(ctx, func() error {
		s, err := db.prepare(st)
		if err != nil {
			return err
		}
		ran = append(ran, st.sql)
		defer s.Reset()
		if a.IdempotencyKey == "" {
			s.BindNull(1)
		} else {
			s.BindText(1, a.IdempotencyKey)
		}
		s.BindText(2, a.From)
		s.BindText(3, a.To)
		s.BindInt64(4, a.Amount)
		s.BindInt64(5, a.At)
		s.BindText(6, a.Customer)
		s.BindText(7, a.Key)
		if s.Step() {
			res.Charge = engine.Charge{ID: engine.ChargeID(s.ColumnInt64(0)), From: a.From, To: a.To, Amount: a.Amount, CreatedAt: a.At,
				Customer: a.Customer, Key: a.Key, IdempotencyKey: a.IdempotencyKey}
			return nil
		}
		if err := s.Err(); err != nil {
			return mapErr("charge", err)
		}
		// No row came back: the key is one the processor has seen, or it
		// declined the call.
		if a.IdempotencyKey == "" {
			res.Declined = true
			return nil
		}
		q, err := db.prepare(&db.stmts.chargeByKey)
		if err != nil {
			return err
		}
		ran = append(ran, db.stmts.chargeByKey.sql)
		defer q.Reset()
		q.BindText(1, a.IdempotencyKey)
		if !q.Step() {
			if err := q.Err(); err != nil {
				return mapErr("charge by key", err)
			}
			res.Declined = true
			return nil
		}
		res.Charge, res.Replayed = scanCharge(q), true
		return nil
	})
	return res, err
}

// scanCharge reads a row selected with chargeColumns.
func scanCharge(s *sqlite3.Stmt) engine.Charge {
	return engine.Charge{ID: engine.ChargeID(s.ColumnInt64(0)), From: s.ColumnText(1), To: s.ColumnText(2), Amount: s.ColumnInt64(3),
		CreatedAt: s.ColumnInt64(4), Customer: s.ColumnText(5), Key: s.ColumnText(6), IdempotencyKey: s.ColumnText(7)}
}
