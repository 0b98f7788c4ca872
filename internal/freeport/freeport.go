// Package freeport picks loopback ports for tests that must name a port
// before the process that listens on it starts (a server behind a proxy
// whose configuration names it, a server restarted on the same address).
//
// A port taken from the kernel with Listen(":0") comes from the ephemeral
// range, the same range the kernel hands to every outgoing connection: on a
// busy machine one of the suite's own clients can take it between the pick
// and the bind, and the server then fails to start. Ports here are picked
// below that range, where the kernel never assigns one on its own.
package freeport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// lowest is the lowest port picked: above the well-known and most
// registered services' ports.
const lowest = 20000

// Port returns a port on 127.0.0.1 that no listener holds now and that
// lies below the kernel's ephemeral range.
func Port() (int, error) {
	highest := ephemeralStart() - 1
	if highest < lowest+1000 {
		highest = lowest + 1000
	}
	for range 200 {
		p := lowest + rand.IntN(highest-lowest+1)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		l.Close()
		return p, nil
	}
	return 0, errors.New("freeport: no free port found below the ephemeral range")
}

// Addr is Port as "127.0.0.1:PORT".
func Addr() (string, error) {
	p, err := Port()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("127.0.0.1:%d", p), nil
}

// ephemeralStart reads the first port of Linux's ephemeral range, 32768
// where it cannot be read.
func ephemeralStart() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return n
}
