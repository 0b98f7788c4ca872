// Package stores chooses idemlab's stores from the --db setting and hands
// them in: each bank level's database (store/sqlite or store/postgres),
// the classroom's storm ledgers (store/sqlite) and its rooms file
// (classroom/roomdb). cmd/idemlab wires its server with it, and the tests
// wire theirs the same way. It is the one place that imports the stores
// side by side; no store imports another.
package stores

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"idemlab/classroom"
	"idemlab/classroom/roomdb"
	"idemlab/server"
	"idemlab/store/postgres"
	"idemlab/store/sqlite"
)

var (
	_ server.BankDB    = (*sqlite.DB)(nil)
	_ server.BankDB    = (*postgres.DB)(nil)
	_ classroom.Ledger = (*sqlite.DB)(nil)
)

// Bank returns what opens each level's database for db: in-memory SQLite
// when db is "", one PostgreSQL database shared by any number of servers
// when it is a postgres:// URL (each level's tables in a schema of its
// own, LevelSchema, and all of them within one budget of maxConns
// connections, postgres.DefaultMaxConns when maxConns < 1), and otherwise
// a SQLite file per level beside db (LevelPath: ./idemlab.db gives
// ./idemlab-naive.db … ./idemlab-scoped.db).
func Bank(db string, maxConns int) func(level string) (server.BankDB, error) {
	var budget *postgres.Budget
	if postgres.IsURL(db) {
		budget = postgres.NewBudget(maxConns)
	}
	return func(level string) (server.BankDB, error) {
		switch {
		case db == "":
			return sqlite.OpenMemory()
		case budget != nil:
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			return postgres.OpenWith(ctx, db, LevelSchema(level), postgres.Options{Budget: budget})
		}
		return sqlite.OpenFile(LevelPath(db, level))
	}
}

// IsPostgres reports whether db names a PostgreSQL database rather than a
// SQLite file.
func IsPostgres(db string) bool { return postgres.IsURL(db) }

// OpenBanks opens each level's database as db says (Bank), with cfg's
// other settings and, on PostgreSQL, the default connection budget.
func OpenBanks(db string, cfg server.Config) ([]*server.Bank, error) {
	return OpenBanksWithin(db, 0, cfg)
}

// OpenBanksWithin is OpenBanks with a budget of maxConns connections to
// PostgreSQL shared by every level (--db-max-conns); it means nothing to
// SQLite.
func OpenBanksWithin(db string, maxConns int, cfg server.Config) ([]*server.Bank, error) {
	cfg.Open = Bank(db, maxConns)
	return server.OpenBanks(cfg)
}

// LevelPath returns the SQLite file of a level for the configured path.
func LevelPath(db, level string) string {
	ext := filepath.Ext(db)
	return strings.TrimSuffix(db, ext) + "-" + level + ext
}

// LevelSchema is the PostgreSQL schema a level's tables live in:
// idemlab_naive … idemlab_scoped.
func LevelSchema(level string) string {
	return "idemlab_" + strings.ReplaceAll(level, "-", "_")
}

// Ledger opens one classroom storm's ledger on SQLite: in memory when path
// is "", else a file whose callers each get their own transaction
// (sqlite.FileOptions.Serial), so that the SQL the projector shows is
// what one request runs.
func Ledger(path string) (classroom.Ledger, error) {
	if path == "" {
		return sqlite.OpenMemory()
	}
	return sqlite.OpenFileWith(path, sqlite.FileOptions{Serial: true})
}

// Rooms opens the classroom's rooms file at path (classroom/roomdb).
func Rooms(path string) (classroom.Rooms, error) { return roomdb.OpenRooms(path) }

// Classroom returns cfg with the classroom's stores (Ledger, Rooms) where
// it names none.
func Classroom(cfg classroom.Config) classroom.Config {
	if cfg.OpenLedger == nil {
		cfg.OpenLedger = Ledger
	}
	if cfg.OpenRooms == nil {
		cfg.OpenRooms = Rooms
	}
	return cfg
}

// Options returns opts with the classroom's stores filled in (Classroom).
func Options(opts server.Options) server.Options {
	opts.Classroom = Classroom(opts.Classroom)
	return opts
}
