package grade_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ncruces/go-sqlite3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/docs"
)

// contractSQL returns the contract's SQL blocks, in order.
func contractSQL(t *testing.T) []string {
	t.Helper()
	blocks := regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(string(docs.Contract), -1)
	var out []string
	for _, b := range blocks {
		out = append(out, b[1])
	}
	require.GreaterOrEqual(t, len(out), 2, "the table and the take-over")
	return out
}

// TestContractExpiredKeyTakeOver runs the contract's own SQL: its key table
// and its take-over of an expired key. The expired row still makes the
// claim's INSERT fail; the UPDATE takes it over only once it has expired,
// and only once however many retries run it.
func TestContractExpiredKeyTakeOver(t *testing.T) {
	blocks := contractSQL(t)
	var takeOver string
	for _, b := range blocks {
		if strings.HasPrefix(b, "UPDATE idem_keys") && strings.Contains(b, "created_at < ?") {
			takeOver = b
		}
	}
	require.NotEmpty(t, takeOver, "the contract shows the take-over of an expired key")
	db, err := sqlite3.Open(":memory:")
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.Exec(blocks[0]), "the contract's table is valid SQL")

	const (
		claimedMS   = int64(1_700_000_000_000) // Unix ms, as the contract says
		retentionMS = int64(86_400_000)
	)
	insert := func(owner string, at int64) error {
		return db.Exec("INSERT INTO idem_keys (customer, endpoint, idem_key, fingerprint, state, owner, claimed_at, status, body, created_at) " +
			"VALUES ('c1', 'POST /transfers', 'k', 'fp1', 'completed', '" + owner + "', " + itoa(at) + ", 201, '{}', " + itoa(at) + ")")
	}
	require.NoError(t, insert("first", claimedMS))
	assert.Error(t, insert("late", claimedMS+retentionMS+1), "the expired row still makes the INSERT fail")

	run := func(owner string, now int64) int64 {
		st, _, err := db.Prepare(takeOver)
		require.NoError(t, err)
		defer st.Close()
		for i, v := range []any{"fp2", owner, now, now, "c1", "POST /transfers", "k", now - retentionMS} {
			switch v := v.(type) {
			case string:
				require.NoError(t, st.BindText(i+1, v))
			case int64:
				require.NoError(t, st.BindInt64(i+1, v))
			}
		}
		require.Equal(t, 8, st.BindCount(), "the take-over binds what the test gives it")
		require.NoError(t, st.Exec())
		return db.Changes()
	}
	assert.Zero(t, run("early", claimedMS+retentionMS-1), "a key still alive is not taken over")
	now := claimedMS + retentionMS + 1
	assert.Equal(t, int64(1), run("retry-a", now), "the first retry after the expiry takes the key over")
	assert.Zero(t, run("retry-b", now), "a second retry at the same moment finds the key alive again")

	st, _, err := db.Prepare("SELECT owner, state, status IS NULL, fingerprint FROM idem_keys WHERE idem_key = 'k'")
	require.NoError(t, err)
	defer st.Close()
	require.True(t, st.Step())
	assert.Equal(t, "retry-a", st.ColumnText(0))
	assert.Equal(t, "in_progress", st.ColumnText(1))
	assert.True(t, st.ColumnBool(2), "the old answer is gone with the old request")
	assert.Equal(t, "fp2", st.ColumnText(3))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
