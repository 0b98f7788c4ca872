package server

import (
	"path/filepath"
	"strings"

	"idemlab/classroom"
	"idemlab/classroom/roomdb"
	"idemlab/store/sqlite"
)

// The tests inside package server wire their servers with the SQLite
// stores as internal/stores does for cmd/idemlab; they cannot import it,
// as it imports this package.

// testBanks opens each level's database in memory when db is "", else as
// a SQLite file beside db.
func testBanks(db string) func(level string) (BankDB, error) {
	return func(level string) (BankDB, error) {
		if db == "" {
			return sqlite.OpenMemory()
		}
		return sqlite.OpenFile(testLevelPath(db, level))
	}
}

// testLevelPath is internal/stores.LevelPath.
func testLevelPath(db, level string) string {
	ext := filepath.Ext(db)
	return strings.TrimSuffix(db, ext) + "-" + level + ext
}

// testOptions hands the classroom its storm ledgers and rooms file.
func testOptions(opts Options) Options {
	opts.Classroom.OpenLedger = func(path string) (classroom.Ledger, error) {
		if path == "" {
			return sqlite.OpenMemory()
		}
		return sqlite.OpenFileWith(path, sqlite.FileOptions{Serial: true})
	}
	opts.Classroom.OpenRooms = func(path string) (classroom.Rooms, error) { return roomdb.OpenRooms(path) }
	return opts
}
