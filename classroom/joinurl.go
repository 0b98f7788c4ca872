package classroom

import (
	"net"
	"net/http"
	"strings"

	"idemlab/internal/peer"
)

// Where phones reach the server: the link and QR code a projector shows.

// joinURL is the address phones open to join room code.
func (c *Classroom) joinURL(r *http.Request, code string) string {
	return c.joinBase(r) + "/classroom/?room=" + code
}

// joinBase is where phones reach this server: --public-url when given;
// else the host the instructor's browser reached, unless that is this
// machine's own name (localhost, 127.0.0.1) while the server listens on
// every interface: a phone cannot open "localhost", so the join link
// names the machine's address on the LAN instead.
func (c *Classroom) joinBase(r *http.Request) string {
	if c.cfg.PublicURL != "" {
		return strings.TrimSuffix(c.cfg.PublicURL, "/")
	}
	p := peer.Of(r)
	scheme := "http"
	if p.Secure {
		scheme = "https"
	}
	host := p.Host
	if name, port, err := net.SplitHostPort(host); err == nil && isLoopbackName(name) && listensOnAll(c.cfg.ListenAddr) {
		if ip := lanAddress(); ip != nil {
			host = net.JoinHostPort(ip.String(), port)
		}
	}
	return scheme + "://" + host
}

func isLoopbackName(name string) bool {
	if strings.EqualFold(name, "localhost") || strings.HasSuffix(strings.ToLower(name), ".localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

// listensOnAll reports whether addr is a wildcard address (0.0.0.0, ::, or
// a port alone).
func listensOnAll(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "" || (ip != nil && ip.IsUnspecified())
}

// lanAddress is this machine's first private IPv4 address on an interface
// that is up (a phone on the same Wi-Fi can reach it), else its first
// global one; nil when it has none.
func lanAddress() net.IP {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil
	}
	var global net.IP
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok || n.IP.To4() == nil || n.IP.IsLoopback() || n.IP.IsLinkLocalUnicast() {
				continue
			}
			if n.IP.IsPrivate() {
				return n.IP.To4()
			}
			if global == nil {
				global = n.IP.To4()
			}
		}
	}
	return global
}
