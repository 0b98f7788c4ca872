package server

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"

	"idemlab/engine"
	"idemlab/engine/httpapi"
)

// causeHostRefused answers a request whose Host is not one of the server's
// own names: what a page on another site reaches through DNS rebinding
// (its own name, made to resolve to this machine).
var causeHostRefused = engine.Cause{Slug: "host-not-allowed", Title: "This server does not answer to that host name", Status: http.StatusMisdirectedRequest}

// hostAllowList is the set of Host names the server answers to. Loopback
// names and addresses are always in it. The zero value allows loopback
// only. It is read-only once built, so safe for concurrent use.
type hostAllowList struct {
	names map[string]bool
	addrs map[netip.Addr]bool
}

func newHostAllowList(hosts []string) hostAllowList {
	l := hostAllowList{names: map[string]bool{}, addrs: map[netip.Addr]bool{}}
	for _, h := range hosts {
		h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
		if a, err := netip.ParseAddr(h); err == nil {
			l.addrs[a.Unmap().WithZone("")] = true
		} else if h != "" {
			l.names[h] = true
		}
	}
	return l
}

// allows reports whether host (a request's Host, with or without a port)
// names this server.
func (l hostAllowList) allows(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap().WithZone("")
		return a.IsLoopback() || l.addrs[a]
	}
	return host == "localhost" || strings.HasSuffix(host, ".localhost") || l.names[host]
}

// refuseHost writes the refusal of a Host not in the allow-list.
func refuseHost(w http.ResponseWriter) {
	httpapi.Write(w, causeHostRefused.Problem("idemlab answers to the addresses it listens on, localhost, and the host of --public-url; "+
		"start it with --public-url to add a name").Response())
}

// AllowedHosts lists the Host names a server listening on listen answers
// to, besides loopback names and addresses: the address it listens on;
// when that is every interface (0.0.0.0 or ::), each interface's address
// and the machine's own name (and name.local, as phones resolve it over
// mDNS); and the host of publicURL, if given. A page on another site that
// rebinds its own name to this machine sends its own name as Host, which
// is not in the list, and is refused.
func AllowedHosts(listen net.Addr, publicURL string) ([]string, error) {
	var hosts []string
	if publicURL != "" {
		u, err := url.Parse(publicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			return nil, fmt.Errorf("--public-url %q is not an http(s) URL with a host", publicURL)
		}
		hosts = append(hosts, u.Hostname())
	}
	tcp, ok := listen.(*net.TCPAddr)
	if !ok {
		return hosts, nil
	}
	if !tcp.IP.IsUnspecified() {
		return append(hosts, tcp.IP.String()), nil
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("list interface addresses: %w", err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			hosts = append(hosts, n.IP.String())
		}
	}
	if name, err := os.Hostname(); err == nil && name != "" {
		hosts = append(hosts, name, name+".local")
	}
	return hosts, nil
}
