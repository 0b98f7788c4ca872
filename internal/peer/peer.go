// Package peer says who sent a request, as idemlab's limits and its
// classroom need to know it: the client's address, whether the request
// reached idemlab over HTTPS, and the host the client typed. Directly
// these are the TCP peer, the connection's TLS and the Host header. Behind
// a reverse proxy that the server was told to trust (--trusted-proxy), they
// come from the proxy's X-Forwarded-For, X-Forwarded-Proto and
// X-Forwarded-Host, or the standard Forwarded header (RFC 7239); from
// anyone else those headers are ignored, since any client can write them.
//
// The server resolves each request once (Trusted.Resolve) and the rest of
// the program reads the result with Of.
package peer

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Peer is who sent a request.
type Peer struct {
	// Addr is the client's address, an IPv6 one cut to its /64 (the block
	// one machine usually holds): what per-client limits count under.
	Addr netip.Addr
	// Proxied is set when the request came through a proxy: a trusted one
	// (Addr is then the client it names), or an untrusted one on this
	// machine (a forwarding header from 127.0.0.1; Addr is then the
	// proxy's). A proxied request is never exempt as this machine's own.
	Proxied bool
	// Secure is set when the client reached idemlab over HTTPS: this
	// server's own TLS, or a trusted proxy's.
	Secure bool
	// Host is the host (and port) the client sent its request to: the
	// Host header, or what a trusted proxy says the client asked for.
	Host string
}

// Origin is the scheme and host the client's browser sees this server at
// ("https://class.school.test:8443").
func (p Peer) Origin() string {
	if p.Secure {
		return "https://" + p.Host
	}
	return "http://" + p.Host
}

// Local is the address of the machine idemlab runs on.
var Local = netip.AddrFrom4([4]byte{127, 0, 0, 1})

// Exempt reports whether per-client rate limits leave the request alone:
// it came from 127.0.0.1 itself (the instructor's own browser, the
// benchmarks), not through any proxy. Other loopback addresses are not
// exempt: tests use them to stand for other machines.
func (p Peer) Exempt() bool { return !p.Proxied && p.Addr == Local }

type ctxKey struct{}

// With returns r carrying p, for Of to find.
func With(r *http.Request, p Peer) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), ctxKey{}, p))
}

// Of returns who sent r: what the server resolved, or, for a request no
// server resolved (a handler's own test), the TCP peer, TLS and Host.
func Of(r *http.Request) Peer {
	if p, ok := r.Context().Value(ctxKey{}).(Peer); ok {
		return p
	}
	return direct(r)
}

func direct(r *http.Request) Peer {
	return Peer{Addr: Key(r.RemoteAddr), Secure: r.TLS != nil, Host: r.Host}
}

// Key is the address a "host:port" (or a bare address) is counted under:
// the address, an IPv6 one cut to its /64. What does not parse is the
// zero Addr, one bucket for all such clients.
func Key(hostport string) netip.Addr {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil {
		return netip.Addr{}
	}
	return block(a)
}

func block(a netip.Addr) netip.Addr {
	a = a.Unmap().WithZone("")
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a
}

// Trusted is the set of proxies whose forwarding headers are believed.
// The zero value trusts none. It is read-only once built, so safe for
// concurrent use.
type Trusted struct {
	nets []netip.Prefix
}

// ParseTrusted reads --trusted-proxy values: CIDRs ("10.0.0.0/8") or
// single addresses ("127.0.0.1").
func ParseTrusted(cidrs []string) (Trusted, error) {
	var t Trusted
	for _, s := range cidrs {
		s = strings.TrimSpace(s)
		if p, err := netip.ParsePrefix(s); err == nil {
			t.nets = append(t.nets, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return Trusted{}, fmt.Errorf("--trusted-proxy %q is not an address or a CIDR (such as 127.0.0.1/32 or 10.0.0.0/8)", s)
		}
		a = a.Unmap()
		t.nets = append(t.nets, netip.PrefixFrom(a, a.BitLen()))
	}
	return t, nil
}

// Empty reports whether no proxy is trusted.
func (t Trusted) Empty() bool { return len(t.nets) == 0 }

// String lists the trusted networks, for the start-up message.
func (t Trusted) String() string {
	s := make([]string, len(t.nets))
	for i, n := range t.nets {
		s[i] = n.String()
	}
	return strings.Join(s, ", ")
}

// Contains reports whether a is a trusted proxy.
func (t Trusted) Contains(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	for _, n := range t.nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// Resolve says who sent r. From a trusted proxy, the client is the
// right-most address of X-Forwarded-For (else of Forwarded's for=) that
// is not itself a trusted proxy: every proxy appends the address it got
// the request from, so the entries to the left of the last untrusted one
// were written by the client and prove nothing. HTTPS and the host come
// from X-Forwarded-Proto and X-Forwarded-Host (else Forwarded's proto=
// and host=). A trusted proxy that names no client leaves its own
// address, still counted as proxied.
//
// From anyone else the headers are ignored; but a forwarding header from
// 127.0.0.1 itself means a proxy on this machine that the server was not
// told to trust: the request is marked proxied, so that the whole world
// behind it is not exempt as the machine's own (forwarded reports it).
func (t Trusted) Resolve(r *http.Request) (p Peer, forwarded bool) {
	p = direct(r)
	peerAddr := Key(r.RemoteAddr)
	hasHeaders := r.Header.Get("X-Forwarded-For") != "" || r.Header.Get("Forwarded") != ""
	raw, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		raw = r.RemoteAddr
	}
	full, err := netip.ParseAddr(raw)
	if err != nil || !t.Contains(full) {
		if hasHeaders && peerAddr == Local {
			p.Proxied = true
			return p, true
		}
		return p, false
	}
	p.Proxied = true
	fwd := parseForwarded(r.Header.Values("Forwarded"))
	hops := splitList(r.Header.Values("X-Forwarded-For"))
	if len(hops) == 0 {
		for _, e := range fwd {
			hops = append(hops, e["for"])
		}
	}
	if client, ok := t.rightmostUntrusted(hops); ok {
		p.Addr = client
	}
	last := func(name string) string {
		for i := len(fwd) - 1; i >= 0; i-- {
			if v := fwd[i][name]; v != "" {
				return v
			}
		}
		return ""
	}
	proto := lastOf(r.Header.Values("X-Forwarded-Proto"))
	if proto == "" {
		proto = last("proto")
	}
	switch strings.ToLower(proto) {
	case "https", "wss":
		p.Secure = true
	case "http", "ws":
		p.Secure = false
	}
	host := lastOf(r.Header.Values("X-Forwarded-Host"))
	if host == "" {
		host = last("host")
	}
	if validHost(host) {
		p.Host = host
	}
	return p, true
}

// rightmostUntrusted walks the hops from the right, past trusted proxies,
// to the first address that is not one. When every hop is trusted, the
// left-most is the client. A hop that is not an address (an obfuscated
// identifier, "unknown") ends the walk without a client.
func (t Trusted) rightmostUntrusted(hops []string) (netip.Addr, bool) {
	var leftmost netip.Addr
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := hopAddr(hops[i])
		if !ok {
			return netip.Addr{}, false
		}
		if !t.Contains(a) {
			return block(a), true
		}
		leftmost = a
	}
	if leftmost.IsValid() {
		return block(leftmost), true
	}
	return netip.Addr{}, false
}

// hopAddr reads one hop: "203.0.113.7", "203.0.113.7:4711",
// "2001:db8::1", "[2001:db8::1]:4711".
func hopAddr(s string) (netip.Addr, bool) {
	s = strings.Trim(strings.TrimSpace(s), `"`)
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return a.Unmap(), true
	}
	return netip.Addr{}, false
}

// splitList splits comma-separated header values into trimmed items.
func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
	}
	return out
}

func lastOf(values []string) string {
	items := splitList(values)
	if len(items) == 0 {
		return ""
	}
	return items[len(items)-1]
}

// parseForwarded reads RFC 7239 Forwarded values: elements separated by
// commas, each a list of name=value pairs separated by semicolons, values
// plain tokens or quoted strings. Names are lower-cased; a malformed pair
// is skipped.
func parseForwarded(values []string) []map[string]string {
	var out []map[string]string
	for _, v := range values {
		for _, elem := range splitOutsideQuotes(v, ',') {
			m := map[string]string{}
			for _, pair := range splitOutsideQuotes(elem, ';') {
				name, val, ok := strings.Cut(pair, "=")
				if !ok {
					continue
				}
				val = strings.TrimSpace(val)
				if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
					val = strings.ReplaceAll(val[1:len(val)-1], `\"`, `"`)
				}
				m[strings.ToLower(strings.TrimSpace(name))] = val
			}
			if len(m) > 0 {
				out = append(out, m)
			}
		}
	}
	return out
}

func splitOutsideQuotes(s string, sep byte) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && quoted:
			i++
		case s[i] == '"':
			quoted = !quoted
		case s[i] == sep && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// validHost accepts a host[:port] a proxy may name: letters, digits, dots,
// hyphens, a bracketed IPv6 address, an optional port. Anything else is
// ignored (the Host header stays).
func validHost(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	for _, c := range h {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.ContainsRune(".-:[]", c):
		default:
			return false
		}
	}
	return true
}
