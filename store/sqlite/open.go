package sqlite

import (
	"fmt"

	"github.com/ncruces/go-sqlite3"
	_ "github.com/ncruces/go-sqlite3/vfs/memdb" // registers the memdb VFS
)

// OpenFile opens (creating if needed) the database file at path, in WAL mode
// with synchronous=NORMAL: a transaction committed before the process is
// killed survives it. The WAL is checkpointed every 16,384 pages (64 MiB)
// rather than SQLite's 1,000: a checkpoint is the only fsync in this mode,
// and measured on the bank API it was a large share of a claim's cost.
//
// Callers share transactions (group commit, see commitGroup) unless
// FileOptions.Serial says otherwise.
func OpenFile(path string) (*DB, error) {
	return OpenFileWith(path, FileOptions{})
}

// FileOptions change how a file database runs its callers' transactions.
type FileOptions struct {
	// Serial gives every caller its own SQLite transaction (BEGIN IMMEDIATE
	// … COMMIT, and a claim committed by itself) instead of a place in a
	// group commit. The classroom uses it: the SQL it projects is then
	// exactly what a student's own endpoint would run, one request at a
	// time.
	Serial bool
}

// OpenFileWith is OpenFile with options.
func OpenFileWith(path string, o FileOptions) (*DB, error) {
	db, err := open(path, true)
	if err != nil {
		return nil, err
	}
	db.group = !o.Serial
	return db, nil
}

func open(name string, file bool) (*DB, error) {
	conn, err := sqlite3.Open(name)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", name, err)
	}
	db := &DB{conn: conn, stmts: unprepared}
	if err := db.init(file); err != nil {
		conn.Close()
		return nil, err
	}
	return db, nil
}

func (db *DB) init(file bool) error {
	if err := db.conn.BusyTimeout(BusyTimeout); err != nil {
		return fmt.Errorf("sqlite: busy timeout: %w", err)
	}
	if !file {
		return nil // a copy of emptyImage, at the current schema version
	}
	if err := db.conn.Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=16384;"); err != nil {
		return fmt.Errorf("sqlite: pragmas: %w", err)
	}
	return db.migrate()
}

// Close closes the database.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.closeStatements()
	return db.conn.Close()
}
