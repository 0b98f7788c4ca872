package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"idemlab/engine"
)

// Usage counts what the schema holds; Bytes is the size of its tables
// with their indexes and TOAST.
func (db *DB) Usage(ctx context.Context) (engine.Usage, error) {
	var u engine.Usage
	var bytes *int64
	if err := db.pool.QueryRow(ctx, string(usage)).Scan(&u.Keys, &u.Accounts, &u.Transfers, &bytes); err != nil {
		return u, mapErr("count usage", err)
	}
	if bytes != nil {
		u.Bytes = *bytes
	}
	return u, nil
}

// Snapshot reads the whole schema, in one REPEATABLE READ transaction so
// that the balances, the ledger and the keys are of one moment. It is meant
// for tests and the checker, on small databases.
func (db *DB) Snapshot(ctx context.Context) (engine.Snapshot, error) {
	var snap engine.Snapshot
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return snap, mapErr("snapshot", err)
	}
	defer tx.Rollback(ctx)
	rows, err := tx.Query(ctx, string(snapshotAccounts))
	if err != nil {
		return snap, mapErr("snapshot accounts", err)
	}
	snap.Accounts, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.Account, error) {
		var a engine.Account
		return a, r.Scan(&a.ID, &a.Balance)
	})
	if err != nil {
		return snap, mapErr("snapshot accounts", err)
	}
	rows, err = tx.Query(ctx, string(snapshotTransfers))
	if err != nil {
		return snap, mapErr("snapshot transfers", err)
	}
	snap.Transfers, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.Transfer, error) {
		var t engine.Transfer
		var id int64
		err := r.Scan(&id, &t.From, &t.To, &t.Amount, &t.CreatedAt, &t.Customer, &t.Key)
		t.ID = engine.TransferID(id)
		return t, err
	})
	if err != nil {
		return snap, mapErr("snapshot transfers", err)
	}
	rows, err = tx.Query(ctx, string(snapshotCharges))
	if err != nil {
		return snap, mapErr("snapshot charges", err)
	}
	snap.Charges, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.Charge, error) { return scanCharge(r) })
	if err != nil {
		return snap, mapErr("snapshot charges", err)
	}
	for _, k := range []struct {
		s    stmt
		into *[]engine.KeyRecord
	}{{db.stmts.keys.all, &snap.Keys}, {db.stmts.looseKeys.all, &snap.LooseKeys}} {
		rows, err := tx.Query(ctx, string(k.s))
		if err != nil {
			return snap, mapErr("snapshot keys", err)
		}
		*k.into, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.KeyRecord, error) { return scanKey(r) })
		if err != nil {
			return snap, mapErr("snapshot keys", err)
		}
	}
	return snap, nil
}
