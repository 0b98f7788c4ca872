package sqlite

import (
	"context"

	"github.com/ncruces/go-sqlite3"

	"idemlab/engine"
)

// Usage counts what the database holds. It reads every key's row, so a
// caller asks for it now and then, not on every request.
func (db *DB) Usage(ctx context.Context) (engine.Usage, error) {
	var u engine.Usage
	err := db.holdStmt(ctx, &db.stmts.usage, func(s *sqlite3.Stmt) error {
		defer s.Reset()
		if !s.Step() {
			return mapErr("count usage", s.Err())
		}
		u = engine.Usage{Keys: s.ColumnInt64(0), Accounts: s.ColumnInt64(1), Transfers: s.ColumnInt64(2), Bytes: s.ColumnInt64(3)}
		return nil
	})
	return u, err
}
