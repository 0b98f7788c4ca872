package sqlite

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/ncruces/go-sqlite3"
	"github.com/stretchr/testify/require"
)

// Statements are prepared on first use, so a statement that no longer
// matches the schema would otherwise fail only when its path first runs.
// This prepares each of them on a fresh database, the way a caller would,
// and holds statements.each, which Close relies on to finalize them, to
// every field of the statements.
func TestEveryStatementPrepares(t *testing.T) {
	db, err := OpenMemory()
	require.NoError(t, err)
	defer db.Close()
	fields := 0
	var count func(reflect.Type)
	count = func(typ reflect.Type) {
		for f := range typ.Fields() {
			switch f.Type {
			case reflect.TypeFor[stmt]():
				fields++
			case reflect.TypeFor[keyStatements]():
				count(f.Type)
			default:
				t.Fatalf("statements.%s is a %s", f.Name, f.Type)
			}
		}
	}
	count(reflect.TypeFor[statements]())
	names := map[string]bool{}
	db.stmts.each(func(table, name string, st *stmt) {
		name = table + "." + name
		require.False(t, names[name], "%s listed twice", name)
		names[name] = true
		require.Nil(t, st.prepared, "%s: nothing is prepared before it is used", name)
		require.NotEmpty(t, st.sql, name)
		s, err := db.prepare(st)
		require.NoError(t, err, name)
		again, err := db.prepare(st)
		require.NoError(t, err, name)
		require.Same(t, s, again, "%s is prepared once", name)
	})
	require.Len(t, names, fields, "statements.each lists every statement")
	// A DB prepares its own copy of the statements, never the template.
	unprepared.each(func(_, name string, st *stmt) { require.Nil(t, st.prepared, name) })
}

// The sweep walks the key tables by their keys: each window is a range
// search, never a scan of the whole table; and no expiry index is left to
// slow the claims down (migration 2).
func TestSweepSearchesByKey(t *testing.T) {
	db, err := OpenMemory()
	require.NoError(t, err)
	defer db.Close()
	for _, table := range []*keyStatements{&db.stmts.constrained, &db.stmts.loose} {
		for _, st := range []stmt{table.sweepEnd, table.sweep, table.sweepRest} {
			s, _, err := db.conn.Prepare("EXPLAIN QUERY PLAN " + st.sql)
			require.NoError(t, err)
			var plan []string
			for s.Step() {
				plan = append(plan, s.ColumnText(3))
			}
			require.NoError(t, s.Close())
			t.Logf("%s: %v", st.sql, plan)
			require.NotEmpty(t, plan)
			for _, line := range plan {
				require.NotContains(t, line, "SCAN", "%s: %v", st.sql, plan)
			}
		}
	}
	s, _, err := db.conn.Prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'idem_keys_expiry'")
	require.NoError(t, err)
	require.True(t, s.Step())
	require.Zero(t, s.ColumnInt(0))
	require.NoError(t, s.Close())
}

var updateImage = flag.Bool("update-image", false, "rewrite empty.db, the image new in-memory databases start from, from the schema")

// TestSchemaIsWhatTheMigrationsLeave holds the three ways a database gets
// its schema to one another: the migrations one after the other (an old
// file), the schema in one step (a new file), and empty.db (every new
// in-memory database, see emptyImage), whose schema version must be the
// current one too.
func TestSchemaIsWhatTheMigrationsLeave(t *testing.T) {
	read := func(c *sqlite3.Conn) []string {
		s, _, err := c.Prepare("SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_schema ORDER BY name")
		require.NoError(t, err)
		defer s.Close()
		var rows []string
		for s.Step() {
			rows = append(rows, s.ColumnText(0))
		}
		require.NoError(t, s.Err())
		return rows
	}
	version := func(c *sqlite3.Conn) int {
		s, _, err := c.Prepare("PRAGMA user_version")
		require.NoError(t, err)
		defer s.Close()
		require.True(t, s.Step())
		return s.ColumnInt(0)
	}
	history, err := sqlite3.Open("file:/schema-history.db?vfs=memdb")
	require.NoError(t, err)
	defer history.Close()
	for i, m := range migrations {
		require.NoError(t, history.Exec(m), "migration %d", i+1)
	}

	if *updateImage {
		if runtime.GOOS == "js" {
			t.Skip("-update-image writes a file: run it natively")
		}
		path := filepath.Join(t.TempDir(), "empty.db")
		db, err := OpenFile(path)
		require.NoError(t, err)
		// Closing the last connection checkpoints the WAL into the file
		// and removes it: the file alone is the whole database.
		require.NoError(t, db.Close())
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile("empty.db", b, 0o644))
		t.Log("wrote empty.db; rebuild to embed it")
		return
	}

	oneStep, err := sqlite3.Open("file:/schema-one-step.db?vfs=memdb")
	require.NoError(t, err)
	defer oneStep.Close()
	require.NoError(t, oneStep.Exec(schema))
	require.Equal(t, read(history), read(oneStep), "the schema in one step")

	image, err := OpenMemory()
	require.NoError(t, err)
	defer image.Close()
	require.Equal(t, read(history), read(image.conn), "empty.db: run go test ./store/sqlite -run TestSchemaIsWhatTheMigrationsLeave -update-image")
	require.Equal(t, SchemaVersion, version(image.conn), "empty.db's schema version")
}

// A database made by an older build (schema version 1, with the expiry
// index) is upgraded in place when opened: the index goes, the data stays.
func TestOpenUpgradesAnOlderDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	if runtime.GOOS == "js" {
		t.Skip("needs a file database")
	}
	old, err := sqlite3.Open(path)
	require.NoError(t, err)
	require.NoError(t, old.Exec(migrations[0]+";\nPRAGMA user_version = 1;\nINSERT INTO accounts VALUES ('a', 7);"))
	require.NoError(t, old.Close())

	db, err := OpenFile(path)
	require.NoError(t, err)
	defer db.Close()
	s, _, err := db.conn.Prepare("SELECT (SELECT count(*) FROM sqlite_schema WHERE name = 'idem_keys_expiry'), (SELECT balance FROM accounts WHERE id = 'a')")
	require.NoError(t, err)
	require.True(t, s.Step())
	require.Zero(t, s.ColumnInt(0), "the expiry index is dropped")
	require.Equal(t, 7, s.ColumnInt(1), "the data stays")
	require.NoError(t, s.Close())
	v, _, err := db.conn.Prepare("PRAGMA user_version")
	require.NoError(t, err)
	require.True(t, v.Step())
	require.Equal(t, len(migrations), v.ColumnInt(0))
	require.NoError(t, v.Close())
}
