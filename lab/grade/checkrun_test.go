package grade

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/lab"
)

// testCheckRun is a check's run whose attempts are written by hand, with no
// endpoint behind it: enough to render its curl lines.
func testCheckRun(t *testing.T) *checkRun {
	t.Helper()
	c, err := NewClient("http://127.0.0.1:9", time.Second)
	require.NoError(t, err)
	cr := newCheckRun(&grader{c: c, run: "g1-"}, context.Background(), "together")
	for _, id := range []string{"g1-payer", "g1-shop"} {
		cr.start[id], cr.opening[id] = 1000, 1000
		cr.accounts = append(cr.accounts, id)
	}
	return cr
}

func (cr *checkRun) fake(key string, group int) int {
	r := keyed("g1-app", key, lab.RenderBody(lab.StyleCompact, "g1-payer", "g1-shop", 100))
	i := cr.record(lab.Intent{ID: "i1"}, r, Reply{Status: 201}, time.Now())
	if group != 0 {
		cr.together[i] = group
	}
	return i
}

// TestCurlLinesSayWhatArrivedTogether: a group is announced with the
// number of its lines that follow, ended with wait before the next request;
// one request shown from a group is said to be one of many, without &.
func TestCurlLinesSayWhatArrivedTogether(t *testing.T) {
	cr := testCheckRun(t)
	a := cr.fake("k", 1)
	b := cr.fake("k", 1)
	cr.fake("k", 1)
	after := cr.fake("k", 0)

	lines := cr.curl([]int{a, b, after})
	text := strings.Join(lines, "\n")
	assert.Contains(t, text, "# the next 2 requests arrived at the same moment")
	assert.Equal(t, 2, strings.Count(text, " &\n"))
	waitAt, lastPost := -1, -1
	for i, l := range lines {
		if l == "wait" {
			waitAt = i
		}
		if strings.Contains(l, "-X POST") {
			lastPost = i
		}
	}
	require.NotEqual(t, -1, waitAt)
	assert.Less(t, waitAt, lastPost, "the request after the group waits for it")

	// A crowd of other keys at the same moment: one of it is shown.
	cr.fake("x", 2)
	y := cr.fake("y", 2)
	cr.fake("z", 2)
	retry := cr.fake("y", 0)
	lines = cr.curl([]int{y, retry})
	text = strings.Join(lines, "\n")
	assert.NotContains(t, text, "the next 1 requests")
	assert.Contains(t, text, "# the next request was one of 3 sent at the same moment")
	assert.NotContains(t, text, "&")
	assert.NotContains(t, text, "wait")
}

// TestCurlLinesShowTheGradersOwnRequestsInPlace: an account topped up
// between two attempts opens with its first balance, and the top-up comes
// between the two requests, as it happened.
func TestCurlLinesShowTheGradersOwnRequestsInPlace(t *testing.T) {
	cr := testCheckRun(t)
	first := cr.fake("k", 0)
	cr.interludes = append(cr.interludes, interlude{before: len(cr.attempts), account: "g1-payer", comment: "the payer's account is topped up",
		req: putRequest("g1-payer", 5000)})
	cr.start["g1-payer"] = 5000
	retry := cr.fake("k", 0)
	lines := cr.curl([]int{first, retry})
	require.GreaterOrEqual(t, len(lines), 7)
	assert.Contains(t, lines[0], `{"balance":1000}`, "the account opens as it first was")
	var order []string
	for _, l := range lines {
		switch {
		case strings.Contains(l, "-X POST"):
			order = append(order, "post")
		case strings.Contains(l, `{"balance":5000}`):
			order = append(order, "top-up")
		}
	}
	assert.Equal(t, []string{"post", "top-up", "post"}, order)
	assert.Contains(t, strings.Join(lines, "\n"), "# the payer's account is topped up")
}
