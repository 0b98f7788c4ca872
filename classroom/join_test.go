package classroom

import (
	"net"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJoinURLIsOnePhonesCanOpen: the projector opened on the instructor's
// own machine (localhost) must not put "localhost" in the QR code when the
// server listens on every interface: a phone cannot open it.
func TestJoinURLIsOnePhonesCanOpen(t *testing.T) {
	lan := lanAddress()
	for _, tc := range []struct {
		name, listen, public, host string
		want                       func(u *url.URL) bool
	}{
		{"all interfaces, opened as localhost: the LAN address", "0.0.0.0:8080", "", "localhost:8080", func(u *url.URL) bool {
			if lan == nil {
				return u.Host == "localhost:8080" // a machine with no LAN has nothing better
			}
			h, port, _ := net.SplitHostPort(u.Host)
			return h == lan.String() && port == "8080"
		}},
		{"all interfaces (IPv6 wildcard), opened as 127.0.0.1", "[::]:8080", "", "127.0.0.1:8080", func(u *url.URL) bool {
			return lan == nil || u.Hostname() == lan.String()
		}},
		{"all interfaces, opened at a LAN address: that address", "0.0.0.0:8080", "", "192.168.1.20:8080", func(u *url.URL) bool { return u.Host == "192.168.1.20:8080" }},
		{"loopback only: as opened (no phone can reach it anyway)", "127.0.0.1:8080", "", "localhost:8080", func(u *url.URL) bool { return u.Host == "localhost:8080" }},
		{"--public-url wins", "0.0.0.0:8080", "https://class.example.org/", "localhost:8080", func(u *url.URL) bool {
			return u.Scheme == "https" && u.Host == "class.example.org"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Classroom{cfg: Config{ListenAddr: tc.listen, PublicURL: tc.public}}
			r := httptest.NewRequest("GET", "/classroom/teach", nil)
			r.Host = tc.host
			u, err := url.Parse(c.joinURL(r, "ABCDEF"))
			require.NoError(t, err)
			assert.True(t, tc.want(u), "join URL %s", u)
			assert.Equal(t, "/classroom/", u.Path)
			assert.Equal(t, "ABCDEF", u.Query().Get("room"))
			if u.Hostname() != "localhost" && tc.public == "" {
				assert.False(t, isLoopbackName(u.Hostname()) && listensOnAll(tc.listen) && lan != nil, "a loopback host in a join link")
			}
		})
	}
}
