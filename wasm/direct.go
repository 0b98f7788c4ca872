package main

import (
	"fmt"
	"strings"
)

// directLab is the bridge the direct calls reach; main sets it.
var directLab *labBridge

// directIn and directOut hold the argument of the last direct call and
// its answer. The buffers are kept by these variables, so the collector
// (which never moves memory) leaves them where the runner reads them.
var directIn, directOut []byte

// directCalls are the calls labDirect takes, by number; each takes its
// arguments joined by NUL characters (none of them holds one: ids and
// JSON, whose strings escape it).
var directCalls = []struct {
	name  string
	nargs int
	call  func(lb *labBridge, a []string) string
}{
	{"labStep", 1, func(lb *labBridge, a []string) string { return lb.step(a[0]) }},
	{"labPay", 2, func(lb *labBridge, a []string) string { return lb.pay(a[0], a[1]) }},
	{"labReset", 2, func(lb *labBridge, a []string) string { return lb.reset(a[0], a[1]) }},
	{"labRelease", 2, func(lb *labBridge, a []string) string { return lb.release(a[0], a[1]) }},
	{"labVerdict", 2, func(lb *labBridge, a []string) string { return lb.verdict(a[0], a[1]) }},
	{"labSetBalance", 3, func(lb *labBridge, a []string) string { return lb.setBalance(a[0], a[1], a[2]) }},
}

// directCall runs call number fn of directCalls on lb with arg, its
// arguments joined by NUL characters.
func directCall(lb *labBridge, fn int32, arg string) (out string) {
	defer func() {
		if r := recover(); r != nil {
			out = labFail(fmt.Errorf("internal error: %v", r))
		}
	}()
	if lb == nil || fn < 0 || int(fn) >= len(directCalls) {
		return labFail(fmt.Errorf("no direct call %d", fn))
	}
	c := directCalls[fn]
	a := strings.SplitN(arg, "\x00", c.nargs)
	for len(a) < c.nargs {
		a = append(a, "")
	}
	return c.call(lb, a)
}
