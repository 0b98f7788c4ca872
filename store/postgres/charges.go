package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"idemlab/engine"
)

// Charge is the simulated payment processor: it records the charge in its
// own table, in a statement that is its own transaction and never part of
// the ledger's, so a ledger rollback leaves it standing. A call whose
// idempotency key the processor has recorded charges nothing and answers
// with that key's first charge; a call for a payer short of funds, or
// between unknown accounts, is declined.
func (db *DB) Charge(ctx context.Context, a engine.ChargeArgs) (engine.ChargeResult, error) {
	res := engine.ChargeResult{SQL: string(charge)}
	var key *string
	if a.IdempotencyKey != "" {
		key = &a.IdempotencyKey
	}
	var id int64
	err := db.pool.QueryRow(ctx, string(charge), key, a.From, a.To, a.Amount, a.At, a.Customer, a.Key).Scan(&id)
	switch {
	case err == nil:
		res.Charge = engine.Charge{ID: engine.ChargeID(id), From: a.From, To: a.To, Amount: a.Amount, CreatedAt: a.At,
			Customer: a.Customer, Key: a.Key, IdempotencyKey: a.IdempotencyKey}
		return res, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return res, mapErr("charge", err)
	}
	// No row came back: the key is one the processor has seen, or it
	// declined the call.
	if a.IdempotencyKey == "" {
		res.Declined = true
		return res, nil
	}
	res.SQL += ";\n" + string(chargeByKey)
	ch, err := scanCharge(db.pool.QueryRow(ctx, string(chargeByKey), a.IdempotencyKey))
	if errors.Is(err, pgx.ErrNoRows) {
		res.Declined = true
		return res, nil
	}
	if err != nil {
		return res, mapErr("charge by key", err)
	}
	res.Charge, res.Replayed = ch, true
	return res, nil
}

// scanCharge reads a row selected with chargeColumns.
func scanCharge(r pgx.Row) (engine.Charge, error) {
	var c engine.Charge
	var id int64
	err := r.Scan(&id, &c.From, &c.To, &c.Amount, &c.CreatedAt, &c.Customer, &c.Key, &c.IdempotencyKey)
	c.ID = engine.ChargeID(id)
	return c, err
}
