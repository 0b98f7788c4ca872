package store

import "context"

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

func init() {
	statements["usage"] = "SELECT (SELECT count(*) FROM " + keysTable + ") + (SELECT count(*) FROM " + looseKeysTable + ")," +
		" (SELECT count(*) FROM accounts), (SELECT count(*) FROM transfers)," +
		" (SELECT (p.page_count - f.freelist_count) * s.page_size FROM pragma_page_count() p, pragma_freelist_count() f, pragma_page_size() s)"
}

// Usage counts what the database holds. It reads every key's row, so a
// caller asks for it now and then, not on every request.
func (db *DB) Usage(ctx context.Context) (_ Usage, err error) {
	unlock, err := db.lock(ctx)
	if err != nil {
		return Usage{}, err
	}
	defer unlock(&err)
	s, err := db.stmt("usage")
	if err != nil {
		return Usage{}, err
	}
	defer s.Reset()
	if !s.Step() {
		return Usage{}, mapErr("count usage", s.Err())
	}
	return Usage{Keys: s.ColumnInt64(0), Accounts: s.ColumnInt64(1), Transfers: s.ColumnInt64(2), Bytes: s.ColumnInt64(3)}, nil
}
