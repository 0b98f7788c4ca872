package grade_test

import (
	"context"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/internal/pgtest"
	"idemlab/internal/stores"
	"idemlab/lab/grade"
	"idemlab/server"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestGradeLadderThroughThreeServersOnPostgres grades every level of
// idemlab's bank API served by three servers (each its own banks and
// connection pools) on one PostgreSQL database, behind a round-robin
// proxy, so that a key's retries land on different servers: each rung
// breaks exactly what it breaks on one server, and scoped passes every
// rule.
func TestGradeLadderThroughThreeServersOnPostgres(t *testing.T) {
	db := pgtest.URL(t)
	var backends []*url.URL
	for range 3 {
		banks, err := stores.OpenBanks(db, server.Config{})
		require.NoError(t, err)
		t.Cleanup(func() { server.CloseBanks(banks) })
		h, err := server.New(banks, stores.Options(server.Options{}))
		require.NoError(t, err)
		t.Cleanup(h.Close)
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		u, _ := url.Parse(srv.URL)
		backends = append(backends, u)
	}
	var next atomic.Uint64
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		u := backends[next.Add(1)%uint64(len(backends))]
		r.SetURL(u)
		r.Out.Host = u.Host
	}})
	t.Cleanup(proxy.Close)
	for _, level := range engine.Levels() {
		t.Run(level, func(t *testing.T) {
			rep, err := grade.Grade(context.Background(), proxy.URL+"/bank/"+level, gradeOpts())
			require.NoError(t, err)
			assert.ElementsMatch(t, ladderExpectations[level], rep.Broken())
			assert.Equal(t, level == engine.LevelScoped, rep.OK)
			for _, c := range rep.Checks {
				assert.Empty(t, c.Error, c.Name)
			}
		})
	}
	assert.Greater(t, next.Load(), uint64(3*len(engine.Levels())), "the requests went round the three servers")
}
