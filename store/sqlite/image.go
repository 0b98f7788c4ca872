package sqlite

import (
	"crypto/rand"
	_ "embed"

	"github.com/ncruces/go-sqlite3/vfs/memdb"
)

// emptyImage is a database file holding the schema at the current schema
// version and no rows (store/sqlite/empty.db, rewritten by
// `go test ./store/sqlite -run TestSchemaIsWhatTheMigrationsLeave -update-image`;
// that test fails while it differs from what the migrations leave). Every
// new in-memory database starts as a copy of it instead of running the
// schema's DDL, and skips the schema version check.
//
// It exists for the browser, where every lesson's bench, every reset and
// every sandbox change opens a new database. Opening one took 0.9–1.3 ms
// natively and 6.5–11 ms in Node with the DDL, 0.21–0.23 ms and 1.8–2.5 ms
// from the image (one run side by side). And on the way to the first lesson,
// where SQLite's code is compiled function by function on first use, the
// DDL and PRAGMA paths (CREATE TABLE, the nested UPDATE of sqlite_schema,
// CREATE INDEX, the PRAGMA code) were 71 functions and 241 KB of wasm to
// compile before the learner saw anything (a Chromium trace of the first
// open: 946 functions, 2,916 KB with the DDL; 875, 2,675 KB from the image).
//
//go:embed empty.db
var emptyImage []byte

// OpenMemory opens a fresh, private in-memory database on the memdb VFS.
func OpenMemory() (*DB, error) {
	// The name is random: memdb's names are the whole process's.
	name := "idemlab-" + rand.Text() + ".db"
	// memdb takes the slice as the database's storage, so each database
	// gets a copy.
	memdb.Create(name, append([]byte(nil), emptyImage...))
	// Created databases live until deleted; deleting the name now leaves
	// the database to the connection, and it goes when that closes.
	defer memdb.Delete(name)
	db, err := open("file:/"+name+"?vfs=memdb", false)
	if db != nil {
		db.private = true // the name is gone: nothing else can open it
	}
	return db, err
}
