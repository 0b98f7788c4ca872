package sqlite

import (
	"context"
	"slices"

	"github.com/ncruces/go-sqlite3"

	"idemlab/engine"
)

// Snapshot reads the whole database. It is meant for lessons, tests and the
// checker, on small databases.
func (db *DB) Snapshot(ctx context.Context) (engine.Snapshot, error) {
	var snap engine.Snapshot
	err := db.hold(ctx, func() error { return db.snapshot(&snap) })
	return snap, err
}

// snapshotCache is the last snapshot of a private database and the
// connection's count of changed rows when it was read.
type snapshotCache struct {
	valid   bool
	changes int64
	snap    engine.Snapshot
}

// snapshot reads the whole database into snap. Callers hold the database.
//
// A private database (OpenMemory) is read again only when a row has
// changed since the last snapshot: a lesson's bench takes one after every
// step, most steps change nothing or one table, and in the browser each
// statement run costs tens of microseconds however small its table. The
// last snapshot is kept only when it was read outside a transaction: one
// read inside could be rolled back without changing the count.
func (db *DB) snapshot(snap *engine.Snapshot) error {
	if !db.private {
		return db.readSnapshot(snap)
	}
	changes := db.conn.TotalChanges()
	if c := &db.last; c.valid && c.changes == changes {
		*snap = cloneSnapshot(c.snap)
		return nil
	}
	db.last.valid = false
	if err := db.readSnapshot(snap); err != nil {
		return err
	}
	if db.conn.GetAutocommit() {
		db.last = snapshotCache{valid: true, changes: changes, snap: cloneSnapshot(*snap)}
	}
	return nil
}

// cloneSnapshot copies the snapshot's slices, so that a caller who changes
// its copy leaves the cache alone. A stored response is never changed.
func cloneSnapshot(s engine.Snapshot) engine.Snapshot {
	return engine.Snapshot{Accounts: slices.Clone(s.Accounts), Transfers: slices.Clone(s.Transfers),
		Keys: slices.Clone(s.Keys), LooseKeys: slices.Clone(s.LooseKeys), Charges: slices.Clone(s.Charges)}
}

// readSnapshot reads the whole database into snap. Callers hold the
// database.
func (db *DB) readSnapshot(snap *engine.Snapshot) error {
	err := db.readAll(&db.stmts.allAccounts, "snapshot accounts", func(s *sqlite3.Stmt) error {
		snap.Accounts = append(snap.Accounts, engine.Account{ID: s.ColumnText(0), Balance: s.ColumnInt64(1)})
		return nil
	})
	if err != nil {
		return err
	}
	err = db.readAll(&db.stmts.allTransfers, "snapshot transfers", func(s *sqlite3.Stmt) error {
		snap.Transfers = append(snap.Transfers, engine.Transfer{ID: engine.TransferID(s.ColumnInt64(0)), From: s.ColumnText(1),
			To: s.ColumnText(2), Amount: s.ColumnInt64(3), CreatedAt: s.ColumnInt64(4), Customer: s.ColumnText(5), Key: s.ColumnText(6)})
		return nil
	})
	if err != nil {
		return err
	}
	err = db.readAll(&db.stmts.allCharges, "snapshot charges", func(s *sqlite3.Stmt) error {
		snap.Charges = append(snap.Charges, scanCharge(s))
		return nil
	})
	if err != nil {
		return err
	}
	for _, t := range []engine.KeyTable{engine.TableConstrained, engine.TableLoose} {
		var rows []engine.KeyRecord
		err := db.readAll(&db.stmts.keys(t).all, "snapshot keys", func(s *sqlite3.Stmt) error {
			rec, err := scanKey(s)
			rows = append(rows, rec)
			return err
		})
		if err != nil {
			return err
		}
		if t == engine.TableLoose {
			snap.LooseKeys = rows
		} else {
			snap.Keys = rows
		}
	}
	return nil
}

// readAll runs st, which binds nothing, and calls row for each row it
// selects. Callers hold the database.
func (db *DB) readAll(st *stmt, op string, row func(*sqlite3.Stmt) error) error {
	s, err := db.prepare(st)
	if err != nil {
		return err
	}
	defer s.Reset()
	for s.Step() {
		if err := row(s); err != nil {
			return err
		}
	}
	return mapErr(op, s.Err())
}

// Charges reads the payment processor's charges, for the lab's checker
// after a replayed day (lab.DayStore).
func (db *DB) Charges(ctx context.Context) ([]engine.Charge, error) {
	var out []engine.Charge
	err := db.hold(ctx, func() error {
		return db.readAll(&db.stmts.allCharges, "read charges", func(s *sqlite3.Stmt) error {
			out = append(out, scanCharge(s))
			return nil
		})
	})
	return out, err
}

// Ledger reads the transfers and the balances, for the lab's checker after
// a replayed day (lab.DayStore).
func (db *DB) Ledger(ctx context.Context) ([]engine.Transfer, []engine.Account, error) {
	snap, err := db.Snapshot(ctx)
	return snap.Transfers, snap.Accounts, err
}
