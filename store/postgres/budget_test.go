package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/internal/pgtest"
	"idemlab/store/postgres"
)

// openWithin opens a store in a new schema of url within budget.
func openWithin(t testing.TB, url string, budget *postgres.Budget) *postgres.DB {
	t.Helper()
	db, err := postgres.OpenWith(context.Background(), url, fmt.Sprintf("s%d", schemaSeq.Add(1)), postgres.Options{Budget: budget})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// hold takes n connections of db's pool and gives them back when t ends.
func hold(t testing.TB, db *postgres.DB, n int) []*pgxpool.Conn {
	t.Helper()
	var conns []*pgxpool.Conn
	for range n {
		c, err := db.Pool().Acquire(context.Background())
		require.NoError(t, err)
		conns = append(conns, c)
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Release()
		}
	})
	return conns
}

// TestTheLevelsShareOneBudget: two levels of one server within a budget of
// two connections. One level may use both while the other is idle; then
// the other, needing one, closes an idle one of the first's rather than
// open a third; and while both are busy it is refused as unavailable
// (answered 503), never given a third connection.
func TestTheLevelsShareOneBudget(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	budget := postgres.NewBudget(2)
	a, b := openWithin(t, url, budget), openWithin(t, url, budget)
	assert.Equal(t, int32(2), a.PoolSize(), "no level's pool is larger than the budget")

	for _, c := range hold(t, a, 2) {
		c.Release()
	}
	require.Equal(t, 2, budget.Open(), "level a holds both places, idle")
	require.NoError(t, b.Ping(ctx), "level b gets a place that level a was not using")
	assert.Equal(t, 2, budget.Open())
	assert.Equal(t, int32(1), a.Pool().Stat().TotalConns(), "one of a's idle connections was closed for b")

	b.Pool().Reset() // b's connection closes, its place is free again
	busy := hold(t, a, 2)
	err := b.Ping(ctx)
	require.ErrorIs(t, err, engine.ErrUnavailable, "no third connection while a's two are busy")
	assert.Equal(t, 2, budget.Open())
	busy[0].Release()
	require.NoError(t, b.Ping(ctx), "a place freed by a is b's")
}
