package sqlite

import (
	"context"

	"github.com/ncruces/go-sqlite3"
)

// Usage is what a level's database holds: the figures the bank's size
// budget is counted in.
type Usage struct {
	Keys      int64 `json:"keys"`      // rows of both key tables
	Accounts  int64 `json:"accounts"`  // rows of accounts
	Transfers int64 `json:"transfers"` // rows of the ledger
	// Bytes is the database's pages in use (free pages left by deletes,
	// which SQLite reuses, are not counted).
	Bytes int64 `json:"bytes"`
}

// Usage counts what the database holds. It reads every key's row, so a
// caller asks for it now and then, not on every request.
func (db *DB) Usage(ctx context.Context) (Usage, error) {
	var u Usage
	err := db.holdStmt(ctx, &db.stmts.usage, func(s *sqlite3.Stmt) error {
		defer s.Reset()
		if !s.Step() {
			return mapErr("count usage", s.Err())
		}
		u = Usage{Keys: s.ColumnInt64(0), Accounts: s.ColumnInt64(1), Transfers: s.ColumnInt64(2), Bytes: s.ColumnInt64(3)}
		return nil
	})
	return u, err
}
