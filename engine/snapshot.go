package engine

import (
	"fmt"
	"strconv"
)

// These are the types every store shares beyond engine.Store: what the
// bank's budget, the lessons, the tests and the checker read of a whole
// database. Each store (store/sqlite, store/postgres) fills them; neither
// imports the other.

// Usage is what a level's database holds: the figures the bank's size
// budget is counted in.
type Usage struct {
	Keys      int64 `json:"keys"`      // rows of both key tables
	Accounts  int64 `json:"accounts"`  // rows of accounts
	Transfers int64 `json:"transfers"` // rows of the ledger
	// Bytes is the database's storage in use (for SQLite its pages in use:
	// free pages left by deletes, which SQLite reuses, are not counted).
	Bytes int64 `json:"bytes"`
}

// Snapshot is everything a view shows after a step: balances, the ledger
// and the key tables.
type Snapshot struct {
	Accounts  []Account   `json:"accounts"`
	Transfers []Transfer  `json:"transfers"`
	Keys      []KeyRecord `json:"keys"`
	// LooseKeys are the rows of the unconstrained key table.
	LooseKeys []KeyRecord `json:"loose_keys,omitempty"`
	// Charges are the payment processor's records, which no rollback of
	// the ledger undoes.
	Charges []Charge `json:"charges,omitempty"`
}

// TransferID formats a ledger row id as a transfer id, as every store
// writes it: tr_000042.
func TransferID(rowid int64) string {
	if rowid < 0 {
		return fmt.Sprintf("tr_%06d", rowid)
	}
	n := strconv.FormatInt(rowid, 10)
	if len(n) < 6 {
		n = "000000"[len(n):] + n
	}
	return "tr_" + n
}

// ChargeID formats a processor row id as a charge id, as every store
// writes it: ch_000042.
func ChargeID(rowid int64) string {
	n := strconv.FormatInt(rowid, 10)
	if len(n) < 6 {
		n = "000000"[len(n):] + n
	}
	return "ch_" + n
}
