package endpointtest

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// WithoutHeaders serves base (an endpoint's URL, with its path) through a
// reverse proxy that drops the named headers from every answer: an
// endpoint that departs from the contract in those headers alone, for
// the tests that grade one. The proxy sends no X-Forwarded-For (the bank
// counts every request as the proxy's address either way, and would say
// so once per request). It is closed when t ends.
func WithoutHeaders(t testing.TB, base string, names ...string) string {
	t.Helper()
	target, err := url.Parse(base)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	director := proxy.Director
	proxy.Director = func(r *http.Request) {
		director(r)
		r.Header["X-Forwarded-For"] = nil
	}
	proxy.ModifyResponse = func(r *http.Response) error {
		for _, n := range names {
			r.Header.Del(n)
		}
		return nil
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return srv.URL
}
