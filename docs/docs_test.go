package docs

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// section is one heading of a document and what follows it up to the next
// heading: its fenced code blocks, in order, and, from its prose, the
// inline code spans (whitespace collapsed, as markdown reads them) and the
// numbers.
type section struct {
	heading heading
	code    []string
	spans   map[string]bool
	numbers map[string]bool
}

var (
	inlineCode = regexp.MustCompile("`[^`]+`")
	number     = regexp.MustCompile(`[0-9]+`)
)

// sections cuts doc at its headings (a heading's text is its section's
// prose). Text before the first heading, if
// any, is a section with no heading.
func sections(doc []byte) []section {
	var out []section
	var prose, block strings.Builder
	closeSection := func() {
		if len(out) == 0 {
			return
		}
		s := &out[len(out)-1]
		text := prose.String()
		for _, span := range inlineCode.FindAllString(text, -1) {
			s.spans[strings.Join(strings.Fields(span), " ")] = true
		}
		for _, n := range number.FindAllString(inlineCode.ReplaceAllString(text, ""), -1) {
			s.numbers[n] = true
		}
		prose.Reset()
	}
	open := func(h heading) {
		closeSection()
		out = append(out, section{heading: h, spans: map[string]bool{}, numbers: map[string]bool{}})
		// The heading's own code spans and numbers count as its section's.
		prose.WriteString(h.text + "\n")
	}
	open(heading{})
	heads := headings(doc)
	inBlock := false
	walk(doc, func(at int, line string, fenced bool) {
		if len(heads) > 0 && heads[0].at == at {
			open(heads[0])
			heads = heads[1:]
			return
		}
		s := &out[len(out)-1]
		if !fenced {
			prose.WriteString(line + "\n")
			return
		}
		block.WriteString(line + "\n")
		if !strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			return
		}
		if inBlock {
			s.code = append(s.code, block.String())
			block.Reset()
		}
		inBlock = !inBlock
	})
	closeSection()
	if out[0].heading.level == 0 && len(out[0].code) == 0 && len(out[0].spans) == 0 && len(out[0].numbers) == 0 {
		out = out[1:]
	}
	return out
}

// lineComment is a JavaScript line comment: // after the line's start or
// a space (not the // of a URL), to the line's end.
var lineComment = regexp.MustCompile(`(?m)(^|\s)//.*$`)

// uncommented is code blocks without their line comments, each line's
// trailing spaces trimmed.
func uncommented(blocks []string) []string {
	out := make([]string, len(blocks))
	for i, b := range blocks {
		lines := strings.Split(lineComment.ReplaceAllString(b, "$1"), "\n")
		for j, l := range lines {
			lines[j] = strings.TrimRight(l, " ")
		}
		out[i] = strings.Join(lines, "\n")
	}
	return out
}

func sorted(set map[string]bool) []string {
	var out []string
	for k := range set {
		out = append(out, k)
	}
	return out
}

// TestKoreanFollowsTheEnglish holds lab-handler.ko.md to lab-handler.md, as
// a whole and in the API sections the lab page shows, so that neither can
// change alone: the same headings in the same order, each section with the
// same code blocks in the same order, and, in its prose, every code span
// (a name, a header, a value) and every number the English section has.
// Only the prose around them is Korean.
func TestKoreanFollowsTheEnglish(t *testing.T) {
	api := func(lang string) func(t *testing.T) []byte {
		return func(t *testing.T) []byte {
			b, err := HandlerAPI(lang)
			require.NoError(t, err)
			return b
		}
	}
	whole := func(doc []byte) func(*testing.T) []byte { return func(*testing.T) []byte { return doc } }
	for name, tc := range map[string]struct{ en, ko func(*testing.T) []byte }{
		"the whole document": {whole(Handler), whole(HandlerKo)},
		"the API sections":   {api("en"), api("ko")},
	} {
		t.Run(name, func(t *testing.T) {
			en, ko := sections(tc.en(t)), sections(tc.ko(t))
			require.NotEmpty(t, en)
			levels := func(ss []section) []int {
				var out []int
				for _, s := range ss {
					out = append(out, s.heading.level)
				}
				return out
			}
			var titles []string
			for _, s := range en {
				titles = append(titles, s.heading.text)
			}
			require.Equal(t, levels(en), levels(ko), "the Korean has other headings than the English's, which are:\n%s", strings.Join(titles, "\n"))
			for i, e := range en {
				k := ko[i]
				// The code is the same; its comments are in the page's
				// language (a Korean student read English comments as
				// left untranslated).
				assert.Equal(t, uncommented(e.code), uncommented(k.code), "section %q (%q in Korean): the code blocks differ", e.heading.text, k.heading.text)
				for _, span := range sorted(e.spans) {
					assert.True(t, k.spans[span], "section %q (%q in Korean): the Korean does not have %s", e.heading.text, k.heading.text, span)
				}
				for _, n := range sorted(e.numbers) {
					assert.True(t, k.numbers[n], "section %q (%q in Korean): the Korean does not have the number %s", e.heading.text, k.heading.text, n)
				}
			}
		})
	}
}

// TestHandlerAPIIsTheAPISections: the lab page's reference starts at "The
// file" and stops before "Running it for real", in either language.
func TestHandlerAPIIsTheAPISections(t *testing.T) {
	en, err := HandlerAPI("en")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(en), "## The file\n"))
	assert.NotContains(t, string(en), "Running it for real")
	enHeads := headings(en)
	for name, tc := range map[string]struct {
		lang  string
		first string
	}{
		"English": {"en", "The file"},
		"Korean":  {"ko", "파일"},
	} {
		t.Run(name, func(t *testing.T) {
			api, err := HandlerAPI(tc.lang)
			require.NoError(t, err)
			heads := headings(api)
			require.Len(t, heads, len(enHeads))
			assert.Equal(t, tc.first, heads[0].text)
			assert.Zero(t, heads[0].at, "the API starts at its first heading")
			assert.Contains(t, string(api), "| `db.run(sql, ...params)` |")
			assert.NotContains(t, string(api), "idemlab lab serve naive.js", "the next section's code")
		})
	}
	_, err = HandlerAPI("fr")
	assert.ErrorContains(t, err, `"fr"`)
}

// TestHeadingsSkipCode: a "#" line in a fenced code block is a comment,
// not a heading, and "#word" is no heading.
func TestHeadingsSkipCode(t *testing.T) {
	doc := []byte("# Title\n\n```sh\n# a comment\nidemlab grade\n```\n#word\n## `db`: the connection\n")
	assert.Equal(t, []heading{{1, "Title", 0}, {2, "`db`: the connection", strings.Index(string(doc), "## `db`")}}, headings(doc))
	s := sections(doc)
	require.Len(t, s, 2)
	assert.Equal(t, []string{"```sh\n# a comment\nidemlab grade\n```\n"}, s[0].code)
	assert.Empty(t, s[1].code)
	assert.True(t, s[1].spans["`db`"])
}
