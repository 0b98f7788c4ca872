package store

import (
	"context"

	"idemlab/engine"
)

// Snapshot is everything a view shows after a step: balances, the ledger
// and the key tables.
type Snapshot struct {
	Accounts  []engine.Account   `json:"accounts"`
	Transfers []engine.Transfer  `json:"transfers"`
	Keys      []engine.KeyRecord `json:"keys"`
	// LooseKeys are the rows of the unconstrained key table.
	LooseKeys []engine.KeyRecord `json:"loose_keys,omitempty"`
}

// Snapshot reads the whole database. It is meant for lessons, tests and the
// checker, on small databases.
func (db *DB) Snapshot(ctx context.Context) (Snapshot, error) {
	var snap Snapshot
	err := db.hold(ctx, func() error { return db.snapshot(&snap) })
	return snap, err
}

// snapshot reads the whole database into snap. Callers hold the database.
func (db *DB) snapshot(snap *Snapshot) error {
	s, _, err := db.conn.Prepare("SELECT id, balance FROM accounts ORDER BY id")
	if err != nil {
		return mapErr("snapshot accounts", err)
	}
	for s.Step() {
		snap.Accounts = append(snap.Accounts, engine.Account{ID: s.ColumnText(0), Balance: s.ColumnInt64(1)})
	}
	if err := closeStmt(s); err != nil {
		return err
	}
	s, _, err = db.conn.Prepare("SELECT id, from_id, to_id, amount, created_at, customer, idem_key FROM transfers ORDER BY id")
	if err != nil {
		return mapErr("snapshot transfers", err)
	}
	for s.Step() {
		snap.Transfers = append(snap.Transfers, engine.Transfer{ID: TransferID(s.ColumnInt64(0)), From: s.ColumnText(1),
			To: s.ColumnText(2), Amount: s.ColumnInt64(3), CreatedAt: s.ColumnInt64(4), Customer: s.ColumnText(5), Key: s.ColumnText(6)})
	}
	if err := closeStmt(s); err != nil {
		return err
	}
	for _, t := range []string{keysTable, looseKeysTable} {
		rows, err := db.keys(t)
		if err != nil {
			return err
		}
		if t == keysTable {
			snap.Keys = rows
		} else {
			snap.LooseKeys = rows
		}
	}
	return nil
}

func (db *DB) keys(table string) ([]engine.KeyRecord, error) {
	s, _, err := db.conn.Prepare("SELECT " + keyColumns + " FROM " + table + " ORDER BY created_at, scope, idem_key")
	if err != nil {
		return nil, mapErr("snapshot keys", err)
	}
	var out []engine.KeyRecord
	for s.Step() {
		rec, err := scanKey(s)
		if err != nil {
			s.Close()
			return nil, err
		}
		out = append(out, rec)
	}
	return out, closeStmt(s)
}

func closeStmt(s interface {
	Err() error
	Close() error
}) error {
	err := s.Err()
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return mapErr("snapshot", err)
}

// Ledger reads the transfers and the balances, for the lab's checker after
// a replayed day (lab.DayStore).
func (db *DB) Ledger(ctx context.Context) ([]engine.Transfer, []engine.Account, error) {
	snap, err := db.Snapshot(ctx)
	return snap.Transfers, snap.Accounts, err
}
