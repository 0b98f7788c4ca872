package handlers_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/lab/grade"
	"idemlab/lab/handlers"
	"idemlab/lab/jsrun"
)

// TestScopedOverTwoReplicas serves scoped twice over one database and one
// payment network, as two lab serve processes behind a load balancer, and
// grades them as replicas: every retry reaches the other one. The key
// table in the shared database decides, so every rule holds.
func TestScopedOverTwoReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: grading over HTTP takes seconds under -race (make test runs it)")
	}
	src, err := handlers.Source("scoped")
	require.NoError(t, err)
	dir := t.TempDir()
	var bases []string
	for range 2 {
		h, err := jsrun.Load("scoped.js", src, jsrun.Options{DB: filepath.Join(dir, "bank.db"), Log: testLog{t}})
		require.NoError(t, err)
		srv := httptest.NewServer(h)
		t.Cleanup(func() { srv.Close(); h.Close() })
		bases = append(bases, srv.URL)
	}
	o := gradeOpts()
	o.Replicas = bases[1:]
	rep, err := grade.Grade(context.Background(), bases[0], o)
	require.NoError(t, err)
	assert.Empty(t, rep.Broken())
	assert.True(t, rep.OK)
	for _, c := range rep.Checks {
		assert.Empty(t, c.Error, c.Name)
	}
}
