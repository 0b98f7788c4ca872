package server_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/internal/stores"
	"idemlab/server"
)

// TestHostAllowList is DNS rebinding: a page on evil.example makes its own
// name resolve to this machine, so its requests arrive with
// Host: evil.example (and an Origin that matches it). They are refused
// with a problem before any route runs; the server's own names answer.
func TestHostAllowList(t *testing.T) {
	banks, err := stores.OpenBanks("", server.Config{})
	require.NoError(t, err)
	h, err := server.New(banks, stores.Options(server.Options{AllowedHosts: []string{"192.168.1.20", "laptop.local"}, PublicURL: "https://idemlab.school.example/"}))
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(func() { ts.Close(); h.Close(); server.CloseBanks(banks) })
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(ts.URL, "http://"))
	for _, tc := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:" + port, 200},
		{"localhost:" + port, 200},
		{"LOCALHOST.:" + port, 200},
		{"[::1]:" + port, 200},
		{"192.168.1.20:" + port, 200},
		{"laptop.local", 200},
		{"idemlab.school.example", 200},
		{"evil.example:" + port, 421},
		{"192.168.1.21:" + port, 421},
		{"127.0.0.1.evil.example", 421},
	} {
		for _, path := range []string{"/healthz", "/bank/scoped/accounts/alice", "/classroom/api/session"} {
			req, _ := http.NewRequest("GET", ts.URL+path, nil)
			req.Host = tc.host
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			got := res.StatusCode
			if got == 404 && path == "/bank/scoped/accounts/alice" {
				got = 200 // the route answered: no such account yet
			}
			assert.Equal(t, tc.want, got, "Host %q %s", tc.host, path)
			if tc.want == 421 {
				assert.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
			}
		}
	}
}

// TestNosniffOnEveryResponse: no response may be sniffed as another type
// than it says.
func TestNosniffOnEveryResponse(t *testing.T) {
	ts := newServer(t, 0)
	for _, path := range []string{"/healthz", "/api/lessons.json", "/bank", "/bank/scoped", "/no/such/thing", "/classroom/api/rooms/ABCDEF/qr.png", "/classroom/"} {
		res, err := http.Get(ts.URL + path)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"), path)
	}
}

func TestAllowedHostsOfAListener(t *testing.T) {
	hosts, err := server.AllowedHosts(&net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 8080}, "http://class.example:9000/x")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"class.example", "10.1.2.3"}, hosts)
	hosts, err = server.AllowedHosts(&net.TCPAddr{IP: net.IPv4zero, Port: 8080}, "")
	require.NoError(t, err)
	assert.Contains(t, hosts, "127.0.0.1", "on every interface, each interface's address")
	_, err = server.AllowedHosts(&net.TCPAddr{IP: net.IPv4zero}, "ftp://x")
	assert.Error(t, err)
}
