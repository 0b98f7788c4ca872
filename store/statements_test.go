package store

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// Statements are prepared on first use, so a statement that no longer
// matches the schema would otherwise fail only when its path first runs.
// This prepares each of them on a fresh database, the way a caller would.
func TestEveryStatementPrepares(t *testing.T) {
	db, err := OpenMemory()
	require.NoError(t, err)
	defer db.Close()
	names := make([]string, 0, len(statements))
	for name := range statements {
		names = append(names, name)
	}
	sort.Strings(names)
	require.Empty(t, db.stmts, "nothing is prepared before it is used")
	for _, name := range names {
		s, err := db.stmt(name)
		require.NoError(t, err, name)
		again, err := db.stmt(name)
		require.NoError(t, err, name)
		require.Same(t, s, again, "%s is prepared once", name)
	}
	require.Len(t, db.stmts, len(statements))
}

// The sweep walks the key tables by their keys: each window is a range
// search, never a scan of the whole table; and no expiry index is left to
// slow the claims down (migration 2).
func TestSweepSearchesByKey(t *testing.T) {
	db, err := OpenMemory()
	require.NoError(t, err)
	defer db.Close()
	for _, name := range []string{"sweepEnd:", "sweep:", "sweepRest:"} {
		for _, table := range []string{keysTable, looseKeysTable} {
			s, _, err := db.conn.Prepare("EXPLAIN QUERY PLAN " + statements[name+table])
			require.NoError(t, err)
			var plan []string
			for s.Step() {
				plan = append(plan, s.ColumnText(3))
			}
			require.NoError(t, s.Close())
			t.Logf("%s%s: %v", name, table, plan)
			require.NotEmpty(t, plan)
			for _, line := range plan {
				require.NotContains(t, line, "SCAN", "%s%s: %v", name, table, plan)
			}
		}
	}
	s, _, err := db.conn.Prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'idem_keys_expiry'")
	require.NoError(t, err)
	require.True(t, s.Step())
	require.Zero(t, s.ColumnInt(0))
	require.NoError(t, s.Close())
}
