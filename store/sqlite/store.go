// Package sqlite implements engine.Store on SQLite through
// github.com/ncruces/go-sqlite3: the ledger (accounts and transfers) and the
// two key tables. On the server it is a file in WAL mode; in the browser and
// in tests it is an in-memory database on the memdb VFS.
//
// Its files, one concern each: open.go opens a database (image.go an
// in-memory one from an embedded image, schema.go the schema and its
// migrations); statements.go is every statement the store runs, a field
// each; commit.go holds the database for one unit of work and shares the
// transactions of a file's callers (group commit); keys.go is the key
// tables, ledger.go the accounts and transfers, reaper.go the sweep of
// expired keys, usage.go and snapshot.go read the whole database. The
// classroom's rooms file is classroom/roomdb, not here: a room is not money.
package sqlite

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ncruces/go-sqlite3"

	"idemlab/engine"
)

var _ engine.Store = (*DB)(nil)

// BusyTimeout is how long a statement waits for another process's lock
// before the store reports engine.ErrBusy.
const BusyTimeout = 5 * time.Second

// DB is one SQLite database holding one level's ledger and key tables. It
// is safe for concurrent use by multiple goroutines: one connection does all
// the work, one short unit at a time (DB.hold), which is how SQLite writes
// anyway (one writer) and why no goroutine of this process ever sees
// "database is locked". On a file, units that queue up share a transaction
// (see commitGroup).
type DB struct {
	mu    sync.Mutex
	conn  *sqlite3.Conn
	stmts statements  // guarded by mu
	sweep sweepCursor // the reaper's place; guarded by mu

	// group: callers share transactions (file databases; see commitGroup).
	group   bool
	waiting atomic.Int32
	batch   *commitGroup // the open group, if any; guarded by mu
	groups  atomic.Int64 // commits of groups so far
	grouped atomic.Int64 // callers in those groups

	// private: no other connection can reach the database (OpenMemory), so
	// it changes only through conn, and Snapshot may answer from last.
	private bool
	last    snapshotCache // guarded by mu
}

// GroupCommits says how many group commits a file database made and how
// many callers they served (0, 0 for an in-memory database).
func (db *DB) GroupCommits() (commits, callers int64) {
	return db.groups.Load(), db.grouped.Load()
}

// mapErr turns SQLite's lock errors into engine.ErrBusy and wraps the rest
// with the operation.
func mapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sqlite3.BUSY) || errors.Is(err, sqlite3.LOCKED) {
		return fmt.Errorf("sqlite: %s: %w (%v)", op, engine.ErrBusy, err)
	}
	return fmt.Errorf("sqlite: %s: %w", op, err)
}

func isConstraint(err error) bool {
	return errors.Is(err, sqlite3.CONSTRAINT_PRIMARYKEY) || errors.Is(err, sqlite3.CONSTRAINT_UNIQUE)
}
