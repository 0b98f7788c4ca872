package grade_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/internal/endpointtest"
	"idemlab/internal/stores"
	"idemlab/lab"
	"idemlab/lab/grade"
	"idemlab/server"
)

// TestGradeReportLinesAreTrue grades idemlab's unique level, whose answers
// once produced lines that misled: a generic "already processed" given to
// two retries called a right replay, the receipt of `together` named as
// the answer that departs, the 404 story's curl lines carrying the 402
// story's top-up, rule 3's fix giving fingerprint advice, and a diff
// whose body member "status" read as the HTTP status.
func TestGradeReportLinesAreTrue(t *testing.T) {
	rep, err := grade.Grade(context.Background(), bankServer(t)+"/bank/unique", gradeOpts())
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, rep.WriteText(&b))
	text := b.String()
	t.Log("\n" + text)

	assert.NotContains(t, text, "is right but lacks the header", "a generic answer equal to another generic answer is no right replay")
	assert.NotContains(t, text, "status 201 against the first answer's 200", "the receipt is never the answer that departs")
	assert.NotContains(t, text, `; "status" is`)
	assert.NotContains(t, text, `, "status" is`)
	for _, r := range rep.Rules {
		if r.N == lab.RuleByteReplay.N {
			assert.NotEmpty(t, r.Fix)
			assert.NotContains(t, r.Fix, "canonical", "fingerprints are rule 2's and their causes' fix, not rule 3's")
		}
	}
	var found404 bool
	for _, f := range rep.Failures {
		if f.Check != "refusals" || !strings.Contains(f.Message, "404") {
			continue
		}
		found404 = true
		curl := strings.Join(f.Curl, "\n")
		assert.NotContains(t, curl, "topped up", "the 404 story's lines keep to the 404 story")
		assert.NotContains(t, curl, "stored 402")
		assert.NotContains(t, curl, "refusals-payer'", "nor open the 402 story's payer")
		assert.Contains(t, curl, "# the payee's account is opened")
	}
	assert.True(t, found404, "unique answers the 404's retry generically: a failure to show")
	var sawTogether bool
	for _, f := range rep.Failures {
		if f.Check == "together" && f.Rule == lab.RuleByteReplay.Name && strings.Contains(f.Message, "names no transfer") {
			sawTogether = true
		}
	}
	t.Logf("together's generic-first failure seen: %v", sawTogether)
}

// TestGradeNoteLinesReproduce: scoped behind a proxy that drops
// Retry-After. A 409 owed to a request still running is answered only
// while that request runs, so a note of a 409 without Retry-After shows
// every request sent at the same moment, to be run together; and a day's
// note says "sent while X was still being processed" only with X's own
// line among its lines.
func TestGradeNoteLinesReproduce(t *testing.T) {
	// A payment call of 30 ms: the requests sent beside the first find
	// its key in progress, and are answered 409.
	banks, err := stores.OpenBanks("", server.Config{PaymentLatency: 30 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { server.CloseBanks(banks) })
	h, err := server.New(banks, stores.Options(server.Options{}))
	require.NoError(t, err)
	t.Cleanup(h.Close)
	bank := httptest.NewServer(h)
	t.Cleanup(bank.Close)
	srv := endpointtest.WithoutHeaders(t, bank.URL+"/bank/scoped", "Retry-After")
	rep, err := grade.Grade(context.Background(), srv, gradeOpts())
	require.NoError(t, err)
	var together, day int
	for _, n := range rep.Notes {
		if !strings.Contains(n.Message, "409 without a Retry-After") {
			continue
		}
		curl := strings.Join(n.Curl, "\n")
		switch n.Check {
		case "together":
			together++
			assert.Contains(t, curl, "requests arrived at the same moment: end each line with & and run them together", n.Message)
			assert.GreaterOrEqual(t, strings.Count(curl, "-X POST"), 2, "%s:\n%s", n.Message, curl)
		case "day":
			day++
			for _, l := range n.Curl {
				lane, ok := strings.CutPrefix(l, "# the next request was sent while ")
				if !ok {
					continue
				}
				lane = strings.TrimSuffix(lane, " was still being processed")
				assert.GreaterOrEqual(t, strings.Count(curl, "-X POST"), 2, "%s: the request sent beside %s is shown:\n%s", n.Message, lane, curl)
			}
		}
	}
	assert.Positive(t, together, "the together check notes its 409s")
	t.Logf("day notes of a 409 without Retry-After: %d", day)
}
