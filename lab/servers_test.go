package lab_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"idemlab/engine"
	"idemlab/lab"
)

// A double payment whose attempts reached two servers is laid at the door
// of what each server kept in its own memory, and only then.
func TestDoublePaymentAcrossServersNamesTheMemoryGuard(t *testing.T) {
	h := lab.History{
		Intents: []lab.Intent{{ID: "ticket", Customer: "minji", From: "minji", To: "tickets", Amount: 150000}},
		Attempts: []lab.Attempt{
			{Lane: "A1", Intent: "ticket", Customer: "minji", Key: "k", Status: 201, Delivered: true, Server: 1},
			{Lane: "A2", Intent: "ticket", Customer: "minji", Key: "k", Status: 201, Delivered: true, Server: 2},
		},
		Ledger: []lab.LedgerTransfer{
			{ID: "t1", Customer: "minji", Key: "k", From: "minji", To: "tickets", Amount: 150000},
			{ID: "t2", Customer: "minji", Key: "k", From: "minji", To: "tickets", Amount: 150000},
		},
		StartBalances: map[string]int64{"minji": 500000, "tickets": 0},
		EndBalances:   map[string]int64{"minji": 200000, "tickets": 300000},
	}
	lock := engine.MustPreset(engine.LevelScoped).With(func(p *engine.Policy) {
		p.Claim, p.Lock = engine.ClaimCheckThenInsert, engine.LockMemory
	})
	cache := engine.MustPreset(engine.LevelScoped).With(func(p *engine.Policy) { p.Claim = engine.ClaimServerCache })
	ignore := lock.With(func(p *engine.Policy) { p.Claim = engine.ClaimInsertOrIgnore })
	cases := []struct {
		name      string
		guard     string
		oneServer bool
		cause     string
	}{
		{"lock across servers", lab.MemoryGuardOf(lock), false, lab.MemoryGuardLock},
		{"cache across servers", lab.MemoryGuardOf(cache), false, lab.MemoryGuardCache},
		{"lock on one server", lab.MemoryGuardOf(lock), true, ""},
		{"insert-or-ignore pays twice anyway", lab.MemoryGuardOf(ignore), false, ""},
		{"nothing in memory", "", false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := h
			h.Attempts = append([]lab.Attempt(nil), h.Attempts...)
			if c.oneServer {
				h.Attempts[1].Server = 1
			}
			h.MemoryGuard = c.guard
			vs := lab.Check(h).Rule(lab.RuleOneTransfer).Violations
			if assert.Len(t, vs, 1) {
				assert.Equal(t, c.cause, vs[0].Cause)
				assert.Equal(t, c.cause != "", strings.Contains(vs[0].Message, "reached servers 1 and 2"), vs[0].Message)
			}
		})
	}
}
