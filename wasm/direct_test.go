package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDirectCallsAreTheRunnersList: the runner calls labDirect by a
// number, its call's place in its DIRECT list; that list and
// directCalls must name the same calls in the same order, or a step
// would run as a payment.
func TestDirectCallsAreTheRunnersList(t *testing.T) {
	src, err := os.ReadFile("../web/lab/runner.js")
	require.NoError(t, err)
	m := regexp.MustCompile(`const DIRECT = \[([^\]]*)\]`).FindSubmatch(src)
	require.NotNil(t, m, "web/lab/runner.js has no DIRECT list")
	var runner []string
	for _, s := range strings.Split(string(m[1]), ",") {
		runner = append(runner, strings.Trim(strings.TrimSpace(s), `'"`))
	}
	var here []string
	for _, c := range directCalls {
		here = append(here, c.name)
	}
	assert.Equal(t, here, runner)
}

// TestDirectCallAnswersAsTheJSFunction: each direct call answers what
// the bridge's method answers, its arguments split at NUL characters
// (the last one kept whole).
func TestDirectCallAnswersAsTheJSFunction(t *testing.T) {
	number := func(name string) int32 {
		for i, c := range directCalls {
			if c.name == name {
				return int32(i)
			}
		}
		t.Fatalf("no direct call %s", name)
		return -1
	}
	lb := newLabBridge()
	defer lb.closeAll()
	d := labDecode(t, lb.open(labSchema, `[{"id":"alice","balance":1000},{"id":"bob","balance":0}]`)).DB
	reset := directCall(lb, number("labReset"), d+"\x00"+`["a1"]`)
	assert.Equal(t, lb.reset(d, `["a1"]`), strings.Replace(reset, `"c1"`, `"c2"`, 1), "the direct reset answers as the bridge's")
	assert.Equal(t, lb.setBalance(d, "alice", "500"), directCall(lb, number("labSetBalance"), d+"\x00alice\x00500"))
	c := labDecode(t, lb.conn(d, "a1")).Conn
	got := directCall(lb, number("labStep"), d+"\n"+c+"\nget\n[\"alice\"]\nSELECT balance FROM accounts WHERE id = ?")
	assert.JSONEq(t, `{"ok":{"row":{"balance":500}},"tx":false}`, got)
	// The SQL, the last argument, may hold a NUL of its own.
	got = directCall(lb, number("labStep"), d+"\n"+c+"\nget\n[]\nSELECT 'a\x00b' AS s")
	assert.Equal(t, lb.step(d+"\n"+c+"\nget\n[]\nSELECT 'a\x00b' AS s"), got)
	assert.Contains(t, directCall(lb, 99, ""), "no direct call 99")
	assert.Contains(t, directCall(nil, 0, ""), "no direct call 0")
}
