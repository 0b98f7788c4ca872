package web_test

import (
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// labWordsScript prints lab-words.js's tables: every key with its words
// (a list's items joined by a line break).
const labWordsScript = `
import { labMessages } from './lab-words.js';
const out = {};
for (const [lang, table] of Object.entries(labMessages)) {
  out[lang] = Object.fromEntries(Object.entries(table).map(([k, v]) => [k, Array.isArray(v) ? v.join('\n') : v]));
}
process.stdout.write(JSON.stringify(out));
`

var (
	placeholder = regexp.MustCompile(`\{(\w+)\}`)
	// A Korean particle whose form depends on the word before it (이/가,
	// 을/를, 은/는, 으로/로, 과/와), right after a placeholder: the value
	// (a status, a name) decides which form is right, and the words cannot
	// know it. 의, 에, 에서, 부터 never change.
	variableParticle = regexp.MustCompile(`\{\w+\}[”"’)]?(이|가|을|를|은|는|으로|로|과|와)(\s|[.,:)]|$)`)
)

// TestLabWordsSayTheSameInKorean holds the lab page's two tables to each
// other: the same keys, each Korean sentence with the English one's
// placeholders, none followed by a particle that the value would have to
// choose, and none of the literal calques the page once had.
func TestLabWordsSayTheSameInKorean(t *testing.T) {
	var got map[string]map[string]string
	runInNode(t, "the lab page's words are", labWordsScript, []string{"lab-words.js"}, []string{}, &got)
	en, ko := got["en"], got["ko"]
	require.NotEmpty(t, en)
	var enKeys, koKeys []string
	for k := range en {
		enKeys = append(enKeys, k)
	}
	for k := range ko {
		koKeys = append(koKeys, k)
	}
	slices.Sort(enKeys)
	slices.Sort(koKeys)
	assert.Equal(t, enKeys, koKeys, "the same keys in both tables")
	names := func(s string) []string {
		var out []string
		for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
			out = append(out, m[1])
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	for k, e := range en {
		kw, ok := ko[k]
		if !ok {
			continue
		}
		// {s} is English's plural ending; Korean has none.
		want := slices.DeleteFunc(names(e), func(n string) bool { return n == "s" })
		// The Korean title names the rung in Korean and its file's name
		// beside it; the English name is the file's.
		if k == "rungTitle" {
			want = append(want, "id")
			slices.Sort(want)
		}
		assert.Equal(t, want, names(kw), "%s: the Korean fills the English's placeholders", k)
		assert.NotRegexp(t, variableParticle, kw, "%s: a particle after a placeholder", k)
		assert.NotContains(t, kw, "순진", "%s: the naive handler is named as the lab's API reference names it", k)
	}
}
