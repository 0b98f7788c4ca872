package lab_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"idemlab/lab"
)

// TestDiagnoseTellsWhoseAnswerItWas: an answer that names another
// request's transfer (rule 5) is another customer's key where another
// customer used the key first (global-keys), and the same customer's
// other request taken for a retry where none did (no-fingerprint).
func TestDiagnoseTellsWhoseAnswerItWas(t *testing.T) {
	mine := []lab.Attempt{
		{Lane: "a1", Customer: "cust-1", Key: "k-1", Body: []byte(`{"from":"alice","to":"bob","amount":500}`), Status: 201},
		{Lane: "a2", Customer: "cust-1", Key: "k-1", Body: []byte(`{"from":"alice","to":"carol","amount":500}`), Status: 201},
	}
	assert.Equal(t, lab.CauseNoFingerprint, lab.Diagnose("correction", lab.RuleOwnResponses, mine, []int{1}, func(int) bool { return false }))
	theirs := []lab.Attempt{mine[0], mine[1]}
	theirs[0].Customer = "cust-2"
	assert.Equal(t, lab.CauseGlobalKeys, lab.Diagnose("day", lab.RuleOwnResponses, theirs, []int{1}, func(int) bool { return false }))
	assert.Equal(t, lab.CauseGlobalKeys, lab.Diagnose("other-customer", lab.RuleOwnResponses, mine, []int{1}, func(int) bool { return false }))
}
