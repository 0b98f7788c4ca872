package sqlite_test

import (
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"idemlab/store/sqlite"
	"idemlab/store/storetest"
)

// TestConformance runs the engine.Store suite on SQLite: a file database,
// on which a second handle stands for a second server process, or, under
// Node, which has no file locking, an in-memory one.
func TestConformance(t *testing.T) {
	var mu sync.Mutex
	paths := map[storetest.Store]string{}
	h := storetest.Harness{Open: func(t testing.TB) storetest.Store {
		if runtime.GOOS == "js" {
			return openFileOrMemory(t)
		}
		path := filepath.Join(t.TempDir(), "ledger.db")
		db, err := sqlite.OpenFile(path)
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		mu.Lock()
		paths[db] = path
		mu.Unlock()
		return db
	}}
	if runtime.GOOS != "js" {
		h.Share = func(t testing.TB, s storetest.Store) storetest.Store {
			mu.Lock()
			path := paths[s]
			mu.Unlock()
			db, err := sqlite.OpenFile(path)
			require.NoError(t, err)
			t.Cleanup(func() { db.Close() })
			return db
		}
	}
	storetest.Run(t, h)
}
