package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
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
			assert.Equal(t, []int64{2, 1, 0}, []int64{u.Keys, u.Accounts, u.Transfers}, "keys, accounts, transfers")
			assert.GreaterOrEqual(t, u.Bytes, u0.Bytes)

			// Bytes counts pages in use: rows that fill pages grow it.
			for i := range 200 {
				_, err = db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, engine.KeyRecord{Scope: "*", Key: fmt.Sprintf("grow-%03d", i),
					Customer: "c", Fingerprint: strings.Repeat("f", 64), State: engine.StateCompleted, CreatedAt: 1})
				require.NoError(t, err)
			}
			grown, err := db.Usage(ctx)
			require.NoError(t, err)
			assert.Equal(t, int64(202), grown.Keys)
			assert.Greater(t, grown.Bytes, u.Bytes, "200 more keys take more pages")
		})
	}
}
