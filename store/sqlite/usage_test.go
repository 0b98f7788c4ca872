package sqlite

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
)

func TestUsageCountsWhatGrows(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) (*DB, error)
	}{
		{"memory", func(*testing.T) (*DB, error) { return OpenMemory() }},
		{"file", func(t *testing.T) (*DB, error) { return OpenFile(filepath.Join(t.TempDir(), "u.db")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "file" && runtime.GOOS == "js" {
				t.Skip("no file locking under Node")
			}
			db, err := tc.open(t)
			require.NoError(t, err)
			defer db.Close()
			ctx := context.Background()
			u0, err := db.Usage(ctx)
			require.NoError(t, err)
			assert.Zero(t, u0.Keys+u0.Accounts+u0.Transfers)
			assert.Positive(t, u0.Bytes)
			_, err = db.PutAccount(ctx, "alice", 100)
			require.NoError(t, err)
			for i, table := range []engine.KeyTable{engine.TableConstrained, engine.TableLoose} {
				_, err = db.InsertKey(ctx, table, engine.InsertPlain, engine.KeyRecord{Scope: "*", Key: "k" + string(rune('a'+i)), Customer: "c", State: engine.StateCompleted, CreatedAt: 1})
				require.NoError(t, err)
			}
			u, err := db.Usage(ctx)
			require.NoError(t, err)
			assert.Equal(t, engine.Usage{Keys: 2, Accounts: 1, Transfers: 0, Bytes: u.Bytes}, u)
			assert.GreaterOrEqual(t, u.Bytes, u0.Bytes)
		})
	}
}
