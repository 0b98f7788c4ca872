package handlers_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/lab/handlers"
)

// TestMistakesAreOneChangeAway holds each mistake to its promise: the rung
// it is made on, with one idea changed. Below the header comment, the
// lines it adds to the rung stay few (a mistake may drop a whole block:
// insert-or-ignore drops the handling of the constraint error).
func TestMistakesAreOneChangeAway(t *testing.T) {
	for _, m := range handlers.Mistakes() {
		t.Run(m.Name, func(t *testing.T) {
			rung, err := handlers.Source(m.From)
			require.NoError(t, err)
			src, err := handlers.Source(m.Name)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(string(src), "// mistakes/"+m.Name+": "+m.From+", with one mistake"), "the header says what it is")
			added := addedLines(body(string(rung)), body(string(src)))
			t.Logf("%d lines added to %s", added, m.From)
			assert.Positive(t, added)
			assert.LessOrEqual(t, added, 12, "one idea changed, not a rewrite")
		})
	}
}

// body is a handler's lines from its first declaration on: the code,
// without the header comment that says what the file is.
func body(src string) []string {
	_, code, _ := strings.Cut(src, "\nconst ")
	return strings.Split(code, "\n")
}

// addedLines counts the lines of b that a line diff from a adds: those
// outside their longest common subsequence.
func addedLines(a, b []string) int {
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	return len(b) - lcs[0][0]
}

func TestSourceNames(t *testing.T) {
	for _, name := range []string{"scoped", "scoped.js", "global-keys", "mistakes/global-keys.js"} {
		_, err := handlers.Source(name)
		assert.NoError(t, err, name)
	}
	_, err := handlers.Source("perfect")
	assert.ErrorContains(t, err, "no handler")
	assert.Len(t, handlers.Names(), len(handlers.Rungs())+len(handlers.Mistakes()))
}

// TestStartIsNaiveInEveryLanguage: the page starts a Korean student from
// the naive rung with its comments in Korean (handlers.Start). Its lines of
// comment stand where the English file's do, and every other line is the
// same: a line number means the same statement in both (the page plays a
// bench again across a change of language, lab-race.js sameCode).
func TestStartIsNaiveInEveryLanguage(t *testing.T) {
	code := func(src []byte) []string {
		lines := strings.Split(string(src), "\n")
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), "//") {
				lines[i] = "//"
			}
		}
		return lines
	}
	naive, err := handlers.Source("naive")
	require.NoError(t, err)
	en, err := handlers.Start("en")
	require.NoError(t, err)
	assert.Equal(t, string(naive), string(en))
	ko, err := handlers.Start("ko")
	require.NoError(t, err)
	assert.Equal(t, code(naive), code(ko), "the same code")
	assert.NotEqual(t, string(naive), string(ko))
	assert.Contains(t, string(ko), "돈은 트랜잭션 하나 안에서 옮깁니다", "its comments are Korean")
	// Every line of comment is translated: an English one edited (or
	// added) without its Korean stays English, and is caught here.
	enLines := strings.Split(string(naive), "\n")
	for i, l := range strings.Split(string(ko), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "//") {
			assert.NotEqual(t, enLines[i], l, "line %d has no Korean", i+1)
		}
	}
}
