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
