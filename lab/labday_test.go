package lab_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/lab"
)

// The lab's day is small, its own from its seed, and keeps the day's
// order: a retry waits for the attempt before it unless the day sends it
// while that one is still being processed.
func TestNewLabDay(t *testing.T) {
	d := lab.NewLabDay(1, 1000)
	assert.Equal(t, d, lab.NewLabDay(1, 1000), "the same seed, the same day")
	require.NotEmpty(t, d.Accounts)
	require.GreaterOrEqual(t, len(d.Attempts), 8, "one attempt an intent at least")
	assert.LessOrEqual(t, len(d.Attempts), 40)
	seen := map[string]bool{}
	retries := 0
	for _, a := range d.Attempts {
		assert.GreaterOrEqual(t, a.Now, int64(1000))
		if a.After != "" {
			assert.True(t, seen[a.After], "%s waits for %s, sent before it", a.ID, a.After)
			retries++
		}
		seen[a.ID] = true
	}
	assert.Positive(t, retries, "the day retries")
	// A teller's correction is its own wish, sent after the first.
	corrected := 0
	for _, a := range d.Attempts {
		if strings.HasSuffix(a.Intent, "-corrected") {
			corrected++
			assert.NotEmpty(t, a.After, "%s follows the press it corrects", a.ID)
		}
	}
	assert.Positive(t, corrected, "seed 1's day has a teller's correction")
}
