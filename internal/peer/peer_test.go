package peer

import (
	"crypto/tls"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKey(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"192.168.1.20:5123", "192.168.1.20"},
		{"[2001:db8:1:2:3:4:5:6]:80", "2001:db8:1:2::"},
		{"[2001:db8:1:2:ffff::1]:80", "2001:db8:1:2::"},
		{"[::ffff:10.0.0.7]:80", "10.0.0.7"},
		{"[fe80::1%eth0]:80", "fe80::"},
		{"127.0.0.2:9", "127.0.0.2"},
		{"10.0.0.9", "10.0.0.9"},
	} {
		assert.Equal(t, tc.want, Key(tc.in).String(), tc.in)
	}
	assert.False(t, Key("pipe").IsValid())
}

func TestExemptIsOnly127001Direct(t *testing.T) {
	assert.True(t, Peer{Addr: Key("127.0.0.1:1")}.Exempt())
	assert.False(t, Peer{Addr: Key("127.0.0.1:1"), Proxied: true}.Exempt(), "a proxied request is never this machine's own")
	for _, a := range []string{"127.0.0.2:1", "127.1.0.1:1", "[::1]:1", "10.0.0.1:1", "0.0.0.0:1"} {
		assert.False(t, Peer{Addr: Key(a)}.Exempt(), a)
	}
}

func TestParseTrusted(t *testing.T) {
	tr, err := ParseTrusted([]string{"127.0.0.1", "10.0.0.0/8", "2001:db8::/32", " 192.168.1.7/24 "})
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1/32, 10.0.0.0/8, 2001:db8::/32, 192.168.1.0/24", tr.String())
	assert.True(t, tr.Contains(Key("10.200.0.1:1")))
	assert.True(t, tr.Contains(Key("[::ffff:127.0.0.1]:1")))
	assert.False(t, tr.Contains(Key("127.0.0.2:1")))
	for _, bad := range []string{"", "nginx", "10.0.0.0/40", "300.1.1.1"} {
		_, err := ParseTrusted([]string{bad})
		assert.Error(t, err, bad)
	}
	assert.True(t, Trusted{}.Empty())
}

func TestResolve(t *testing.T) {
	tr, err := ParseTrusted([]string{"127.0.0.1/32", "10.0.0.0/8"})
	require.NoError(t, err)
	for _, tc := range []struct {
		name      string
		remote    string
		tls       bool
		headers   map[string]string
		want      Peer
		forwarded bool
	}{
		{name: "direct, no headers", remote: "192.168.1.20:5000",
			want: Peer{Addr: Key("192.168.1.20:0"), Host: "class.test"}},
		{name: "direct from an untrusted address: the headers are a client's own words", remote: "192.168.1.20:5000",
			headers: map[string]string{"X-Forwarded-For": "1.2.3.4", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.test"},
			want:    Peer{Addr: Key("192.168.1.20:0"), Host: "class.test"}},
		{name: "direct over TLS", remote: "192.168.1.20:5000", tls: true,
			want: Peer{Addr: Key("192.168.1.20:0"), Secure: true, Host: "class.test"}},
		{name: "a trusted proxy names the client", remote: "127.0.0.1:5000",
			headers:   map[string]string{"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "class.school.test:8443"},
			want:      Peer{Addr: Key("203.0.113.9"), Proxied: true, Secure: true, Host: "class.school.test:8443"},
			forwarded: true},
		{name: "the right-most untrusted hop, past a chain of trusted proxies", remote: "10.1.1.1:5000",
			headers:   map[string]string{"X-Forwarded-For": "6.6.6.6, 198.51.100.4, 10.2.2.2"},
			want:      Peer{Addr: Key("198.51.100.4"), Proxied: true, Host: "class.test"},
			forwarded: true},
		{name: "a client that writes its own X-Forwarded-For gets the proxy's append counted", remote: "127.0.0.1:5000",
			headers:   map[string]string{"X-Forwarded-For": "127.0.0.1, 198.51.100.4"},
			want:      Peer{Addr: Key("198.51.100.4"), Proxied: true, Host: "class.test"},
			forwarded: true},
		{name: "a trusted proxy that names nobody: its own address, not exempt", remote: "127.0.0.1:5000",
			want:      Peer{Addr: Local, Proxied: true, Host: "class.test"},
			forwarded: true},
		{name: "the client is this machine behind the proxy: still not exempt", remote: "127.0.0.1:5000",
			headers:   map[string]string{"X-Forwarded-For": "127.0.0.1"},
			want:      Peer{Addr: Local, Proxied: true, Host: "class.test"},
			forwarded: true},
		{name: "Forwarded (RFC 7239) with an IPv6 client, quoted, and a port", remote: "127.0.0.1:5000",
			headers:   map[string]string{"Forwarded": `for="[2001:db8:cafe::17]:4711";proto=https;host="class.school.test"`},
			want:      Peer{Addr: Key("[2001:db8:cafe::17]:1"), Proxied: true, Secure: true, Host: "class.school.test"},
			forwarded: true},
		{name: "Forwarded with two elements: the right-most untrusted", remote: "127.0.0.1:5000",
			headers:   map[string]string{"Forwarded": "for=192.0.2.60;proto=http, for=10.9.9.9;proto=https"},
			want:      Peer{Addr: Key("192.0.2.60"), Proxied: true, Secure: true, Host: "class.test"},
			forwarded: true},
		{name: "an obfuscated hop names no client", remote: "127.0.0.1:5000",
			headers:   map[string]string{"Forwarded": "for=_hidden"},
			want:      Peer{Addr: Local, Proxied: true, Host: "class.test"},
			forwarded: true},
		{name: "a forwarded host with odd characters is ignored", remote: "127.0.0.1:5000",
			headers:   map[string]string{"X-Forwarded-For": "192.0.2.1", "X-Forwarded-Host": "a b/c"},
			want:      Peer{Addr: Key("192.0.2.1"), Proxied: true, Host: "class.test"},
			forwarded: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "http://class.test/", nil)
			r.RemoteAddr = tc.remote
			if tc.tls {
				r.TLS = &tls.ConnectionState{}
			} else {
				r.TLS = nil
			}
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			got, fwd := tr.Resolve(r)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.forwarded, fwd)
			assert.Equal(t, got, Of(With(r, got)))
		})
	}
}

func TestResolveTrustsNobodyByDefault(t *testing.T) {
	r := httptest.NewRequest("GET", "http://class.test/", nil)
	r.RemoteAddr = "10.0.0.5:1"
	r.Header.Set("X-Forwarded-For", "1.1.1.1")
	got, _ := Trusted{}.Resolve(r)
	assert.Equal(t, Key("10.0.0.5:1"), got.Addr)
	assert.False(t, got.Proxied)

	// A proxy on this machine that nobody named trusted: the request is
	// not this machine's own, whoever it carries.
	r.RemoteAddr = "127.0.0.1:5000"
	got, fwd := Trusted{}.Resolve(r)
	assert.Equal(t, Peer{Addr: Local, Proxied: true, Host: "class.test"}, got)
	assert.True(t, fwd)
	assert.False(t, got.Exempt())
}
