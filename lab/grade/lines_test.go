package grade_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/lab"
	"idemlab/lab/grade"
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
