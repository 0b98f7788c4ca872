package lessons_test

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
)

// strayEmphasis finds markdown emphasis that did not render: CommonMark
// does not close "*…)*" when a letter follows at once, which Korean
// particles always do ("*리스(lease)*가"). Write such text so that the
// closing marker follows a letter or digit.
var strayEmphasis = regexp.MustCompile(`\*{1,2}[^*<>\s][^*<>]*\*{1,2}`)

func TestEmphasisRenders(t *testing.T) {
	for _, l := range load(t).All() {
		for _, m := range strayEmphasis.FindAllString(l.HTML, -1) {
			assert.Fail(t, "emphasis markers left in the text", "%s (%s): %s", l.ID, l.Lang, m)
		}
	}
}
