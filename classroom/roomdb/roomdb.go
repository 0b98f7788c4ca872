// Package roomdb keeps the classroom's rooms (classroom.Rooms) in a
// SQLite file of their own, beside the bank's: cmd/idemlab opens it and
// hands it to the classroom.
package roomdb

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ncruces/go-sqlite3"

	"idemlab/classroom"
	"idemlab/internal/sqlitemigrate"
)

// Rooms is the live classroom's own SQLite file: its settings (the
// instructor's secret, signed-in sessions) and each open room as a
// document the classroom writes and reads back at start-up, so that a
// restarted server has the same rooms, students, votes and last storm. It
// is separate from the bank's files and the storms' ledgers: a room is
// not money. Rooms is safe for concurrent use.
type Rooms struct {
	mu   sync.Mutex
	conn *sqlite3.Conn
}

var _ classroom.Rooms = (*Rooms)(nil)

// busyTimeout is how long a statement waits for another process's lock,
// as long as the bank's store waits.
const busyTimeout = 5 * time.Second

// roomMigrations are applied in order, PRAGMA user_version counting them,
// as the bank's migrations are. Append, never edit.
var roomMigrations = []string{
	// 1: settings and rooms.
	`CREATE TABLE settings (
		name  TEXT PRIMARY KEY,
		value TEXT NOT NULL
	) WITHOUT ROWID;
	CREATE TABLE rooms (
		code       TEXT PRIMARY KEY,
		doc        BLOB NOT NULL,
		record     BLOB,
		updated_ms INTEGER NOT NULL
	) WITHOUT ROWID;`,
}

// OpenRooms opens (creating if needed) the classroom's file at path.
func OpenRooms(path string) (*Rooms, error) {
	conn, err := sqlite3.Open(path)
	if err != nil {
		return nil, fmt.Errorf("roomdb: open %s: %w", path, err)
	}
	db := &Rooms{conn: conn}
	if err := db.init(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("roomdb: %s: %w", path, err)
	}
	return db, nil
}

func (db *Rooms) init() error {
	if err := db.conn.BusyTimeout(busyTimeout); err != nil {
		return err
	}
	if err := db.conn.Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"); err != nil {
		return err
	}
	return sqlitemigrate.Migrate(db.conn, roomMigrations)
}

// Setting returns a setting's value, and whether it is set.
func (db *Rooms) Setting(name string) (string, bool, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	stmt, _, err := db.conn.Prepare("SELECT value FROM settings WHERE name = ?")
	if err != nil {
		return "", false, err
	}
	defer stmt.Close()
	stmt.BindText(1, name)
	if stmt.Step() {
		return stmt.ColumnText(0), true, nil
	}
	return "", false, stmt.Err()
}

// SetSetting writes a setting.
func (db *Rooms) SetSetting(name, value string) error {
	return db.exec("INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
		func(s *sqlite3.Stmt) { s.BindText(1, name); s.BindText(2, value) })
}

// SaveRoom writes a room's document, and its record unless record is nil
// (the record, a storm's events, is large and changes less often).
func (db *Rooms) SaveRoom(code string, doc, record []byte, now time.Time) error {
	if record == nil {
		return db.exec(`INSERT INTO rooms (code, doc, updated_ms) VALUES (?, ?, ?)
			ON CONFLICT (code) DO UPDATE SET doc = excluded.doc, updated_ms = excluded.updated_ms`,
			func(s *sqlite3.Stmt) { s.BindText(1, code); s.BindBlob(2, doc); s.BindInt64(3, now.UnixMilli()) })
	}
	return db.exec(`INSERT INTO rooms (code, doc, record, updated_ms) VALUES (?, ?, ?, ?)
		ON CONFLICT (code) DO UPDATE SET doc = excluded.doc, record = excluded.record, updated_ms = excluded.updated_ms`,
		func(s *sqlite3.Stmt) {
			s.BindText(1, code)
			s.BindBlob(2, doc)
			s.BindBlob(3, record)
			s.BindInt64(4, now.UnixMilli())
		})
}

// DeleteRoom forgets a room.
func (db *Rooms) DeleteRoom(code string) error {
	return db.exec("DELETE FROM rooms WHERE code = ?", func(s *sqlite3.Stmt) { s.BindText(1, code) })
}

// LoadRooms returns every saved room, oldest change first.
func (db *Rooms) LoadRooms() ([]classroom.SavedRoom, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	stmt, _, err := db.conn.Prepare("SELECT code, doc, record, updated_ms FROM rooms ORDER BY updated_ms")
	if err != nil {
		return nil, err
	}
	defer stmt.Close()
	var out []classroom.SavedRoom
	for stmt.Step() {
		out = append(out, classroom.SavedRoom{Code: stmt.ColumnText(0), Doc: stmt.ColumnBlob(1, nil), Record: stmt.ColumnBlob(2, nil),
			Updated: time.UnixMilli(stmt.ColumnInt64(3))})
	}
	return out, stmt.Err()
}

func (db *Rooms) exec(sql string, bind func(*sqlite3.Stmt)) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	stmt, _, err := db.conn.Prepare(sql)
	if err != nil {
		return err
	}
	bind(stmt)
	return errors.Join(stmt.Exec(), stmt.Close())
}

// Close closes the file.
func (db *Rooms) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.conn.Close()
}
