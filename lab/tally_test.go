package lab_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/lab"
)

// TestFirstRefusalsTellTheirCause builds, from the answers a replay of the
// seed-7 day got, the refusals of a customer's first request under a key
// string that another customer had used before, and checks that only those
// the other customer's use explains are laid at it.
func TestFirstRefusalsTellTheirCause(t *testing.T) {
	const (
		inProgress = `{"type":"/problems/idempotency-key-in-progress","title":"A request with this key is still being processed","status":409}`
		reused     = `{"type":"/problems/idempotency-key-reused","title":"This key was used for another request","status":422}`
		receipt    = `{"transfer_id":"tr_1","from":"c0028-acct","to":"inv-000157","amount":7300}`
		body       = `{"from":"c0045-acct","to":"inv-000433","amount":4100}`
		corrected  = `{"from":"c0045-acct","to":"inv-000433","amount":4150}`
	)
	// Customer c0028 uses order-8 first; then c0045's first request under
	// its own order-8 is answered as the case says, and its later attempts
	// as the case lists.
	first := lab.DayAttempt{Lane: "i000157.1", Intent: "i000157", Customer: "c0028", Key: "order-8", Body: `{"from":"c0028-acct","to":"inv-000157","amount":7300}`}
	cases := []struct {
		name   string
		status int
		answer string
		more   []lab.DayAttempt // the customer's own attempts under the key, after the refused one
		cause  string
	}{
		{"409 while the customer's own impatient press got there first", 409, inProgress,
			[]lab.DayAttempt{{Lane: "i000433.2", Overlaps: "i000433.1", Body: body}}, lab.RefusedOwnRetryInProgress},
		{"409 with no attempt of the customer's own in flight: the key is global", 409, inProgress, nil, lab.RefusedOtherCustomersKey},
		{"422 under a key only the other customer used: the key is global", 422, reused, nil, lab.RefusedOtherCustomersKey},
		{"417 under a key only the other customer used: the key is global", 417, reused, nil, lab.RefusedOtherCustomersKey},
		{"422 while the customer's own correction was in flight", 422, reused,
			[]lab.DayAttempt{{Lane: "i000433.2", Overlaps: "i000433.1", Body: corrected}}, lab.RefusedOwnCorrection},
		{"429: the rate, whatever the key", 429, `{"status":429}`, nil, "status-429"},
		{"500: the endpoint's own failure", 500, `{"status":500}`, nil, "status-500"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			refused := lab.DayAttempt{Lane: "i000433.1", Intent: "i000433", Customer: "c0045", Key: "order-8", Body: body}
			d := lab.Day{Attempts: []lab.DayAttempt{first, refused}}
			h := lab.History{Attempts: []lab.Attempt{
				{Lane: first.Lane, Intent: first.Intent, Customer: first.Customer, Key: first.Key, Body: []byte(first.Body), Status: 201, Response: []byte(receipt), Delivered: true},
				{Lane: refused.Lane, Intent: refused.Intent, Customer: refused.Customer, Key: refused.Key, Body: []byte(body), Status: c.status, Response: []byte(c.answer), Delivered: true},
			}}
			for _, m := range c.more {
				m.Intent, m.Customer, m.Key = refused.Intent, refused.Customer, refused.Key
				d.Attempts = append(d.Attempts, m)
				h.Attempts = append(h.Attempts, lab.Attempt{Lane: m.Lane, Intent: m.Intent, Customer: m.Customer, Key: m.Key, Body: []byte(m.Body),
					Status: 201, Response: []byte(`{"transfer_id":"tr_2"}`), Delivered: true})
			}
			rs := lab.FirstRefusals(d, h)
			require.Len(t, rs, 1)
			assert.Equal(t, 1, rs[0].Attempt)
			assert.Equal(t, c.cause, rs[0].Cause)
			tally := lab.NewTally(d, h, map[string]int{"i000157": 1, "i000433": 1})
			var b strings.Builder
			require.NoError(t, tally.WriteText(&b))
			if c.cause == lab.RefusedOtherCustomersKey {
				assert.Equal(t, 0, rs[0].Other, "the other customer's use is named")
				assert.Equal(t, 1, tally.ForeignKeyRefusals)
				assert.Contains(t, b.String(), "refused: another customer's key")
			} else {
				assert.Equal(t, -1, rs[0].Other)
				assert.Zero(t, tally.ForeignKeyRefusals)
				assert.NotContains(t, b.String(), "another customer", "the tally sends nobody to fix scoping that works")
				assert.Contains(t, b.String(), "first requests refused, other causes")
			}
		})
	}
}

// TestFirstRefusalsStoredAnswerOfAnotherCustomer: a 400 that another
// customer was answered under the key, given byte for byte to this
// customer's well-formed request, is that customer's stored answer.
func TestFirstRefusalsStoredAnswerOfAnotherCustomer(t *testing.T) {
	bad := `{"type":"/problems/invalid-body","status":400,"detail":"amount must be a positive whole number"}`
	d := lab.Day{Attempts: []lab.DayAttempt{{Lane: "a.1"}, {Lane: "b.1"}, {Lane: "c.1"}}}
	h := lab.History{Attempts: []lab.Attempt{
		{Lane: "a.1", Intent: "a", Customer: "c1", Key: "order-1", Body: []byte(`{"amount":-1}`), Status: 400, Response: []byte(bad), Delivered: true},
		{Lane: "b.1", Intent: "b", Customer: "c2", Key: "order-1", Body: []byte(`{"from":"x","to":"y","amount":5}`), Status: 400, Response: []byte(bad), Delivered: true},
		// A 400 of another text under a fresh key is the request's own.
		{Lane: "c.1", Intent: "c", Customer: "c3", Key: "order-1", Body: []byte(`{"from":"x","to":"x","amount":5}`), Status: 400, Response: []byte(`{"status":400,"detail":"from equals to"}`), Delivered: true},
	}}
	rs := lab.FirstRefusals(d, h)
	require.Len(t, rs, 3)
	assert.Equal(t, "status-400", rs[0].Cause)
	assert.Equal(t, lab.RefusedOtherCustomersKey, rs[1].Cause)
	assert.Equal(t, 0, rs[1].Other)
	assert.Equal(t, "status-400", rs[2].Cause)
}
