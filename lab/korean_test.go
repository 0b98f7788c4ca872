package lab

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// A Korean particle that follows a value changes with the value's last
// sound (200으로 but 201로; bob이 but alice가), so no Korean sentence of the
// checker puts one right after a formatted value: the sentence names a
// noun first ("%s 고객이", "응답(%d %s)을"), whose particle is fixed.
var valueThenParticle = regexp.MustCompile(`%[-+#0-9.]*[dsqv](이|가|은|는|을|를|로|으로|와|과|였|이었|이라|라)`)

func TestKoreanParticlesFollowNoValue(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	checked := 0
	for _, f := range files {
		if filepath.Ext(f) != ".go" || len(f) > 8 && f[len(f)-8:] == "_test.go" {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		checked++
		for _, m := range valueThenParticle.FindAllIndex(src, -1) {
			line := 1
			for _, c := range src[:m[0]] {
				if c == '\n' {
					line++
				}
			}
			t.Errorf("%s:%d: %q puts a particle right after a value", f, line, src[m[0]:m[1]])
		}
	}
	require.Greater(t, checked, 5)
}
