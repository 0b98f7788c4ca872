package grade

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"idemlab/engine"
	"idemlab/lab"
)

// TestDayCurlShowsTheRequestItSaysWasRunning: a day's lines that say "the
// next request was sent while X was still being processed" show X's own
// request before it, though the violation named only the later attempt
// (a 409 owed to X, a second payment beside it).
func TestDayCurlShowsTheRequestItSaysWasRunning(t *testing.T) {
	d := lab.Day{
		Accounts: []engine.Account{{ID: "c1-acct", Balance: 1000}, {ID: "shop", Balance: 0}},
		Attempts: []lab.DayAttempt{
			{Lane: "i1.1", Intent: "i1", Key: "k-1", From: "c1-acct", To: "shop", Amount: 10},
			{Lane: "i2.1", Intent: "i2", Key: "k-2", From: "c1-acct", To: "shop", Amount: 20},
			{Lane: "i1.2", Intent: "i1", Key: "k-1", From: "c1-acct", To: "shop", Amount: 10, Overlaps: "i2.1"},
		},
	}
	run := DayRun{Requests: []Request{
		{Method: "POST", Path: "/transfers", Body: `{"n":1}`},
		{Method: "POST", Path: "/transfers", Body: `{"n":2}`},
		{Method: "POST", Path: "/transfers", Body: `{"n":3}`},
	}}
	lines := strings.Join(dayCurl("http://127.0.0.1:1", d, run, []int{2}), "\n")
	// i1.1 is shown as the key's first use, i2.1 as the request i1.2 was
	// sent beside, in the day's order.
	i1, i2, said, i3 := strings.Index(lines, `{"n":1}`), strings.Index(lines, `{"n":2}`),
		strings.Index(lines, "# the next request was sent while i2.1 was still being processed"), strings.Index(lines, `{"n":3}`)
	assert.True(t, i1 >= 0 && i2 > i1 && said > i2 && i3 > said, lines)
}
