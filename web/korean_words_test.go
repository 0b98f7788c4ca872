package web_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// placeholderThenParticle is a Korean particle right after a {placeholder}.
var placeholderThenParticle = regexp.MustCompile(`\{\w+\}(이|가|은|는|을|를|로|으로|와|과|였|이었|이라|라)`)

// TestKoreanWordsGuessNoParticle: a Korean particle after a value changes
// with the value's last sound (200으로 but 201로, ch_3으로 but ch_1로), so
// no Korean sentence of the pages puts one right after a placeholder: it
// names a noun first ("{status} 응답으로"), whose particle is fixed, or
// writes both forms ("{from}은(는)").
func TestKoreanWordsGuessNoParticle(t *testing.T) {
	for _, f := range []string{"strings.js", "lab-words.js", "classroom/words.js"} {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		korean := 0
		for n, line := range strings.Split(string(src), "\n") {
			if !strings.ContainsFunc(line, func(r rune) bool { return unicode.Is(unicode.Hangul, r) }) {
				continue
			}
			korean++
			for _, m := range placeholderThenParticle.FindAllStringIndex(line, -1) {
				if m[1] < len(line) && line[m[1]] == '(' {
					continue // both forms written: 은(는)
				}
				if strings.HasPrefix(line[m[1]-len("가"):], "가지") {
					continue // a counter, not a particle: {n}가지 순서
				}
				t.Errorf("%s:%d: %q guesses the particle after a value: %s", f, n+1, line[m[0]:m[1]], strings.TrimSpace(line))
			}
		}
		require.Greater(t, korean, 20, "%s holds Korean words", f)
	}
}
