package sqlite

import "context"

// FailNextGroup runs claim (which must write to db once) in a group that
// stays open after it, then rolls that group's transaction back, as an
// error inside a group does: the claim rode a commit that failed.
func FailNextGroup(db *DB, claim func()) {
	db.waiting.Add(1) // someone is about to join: the claim's group stays open
	claim()
	db.waiting.Add(-1)
	db.hold(context.Background(), func() error { return db.conn.Exec("ROLLBACK") })
}
