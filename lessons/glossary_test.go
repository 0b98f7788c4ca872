package lessons_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// glossaryRow is one row of ko/GLOSSARY.md: the English term, the Korean words
// to use for it, and the variants to refuse.
type glossaryRow struct {
	english string
	use     []string
	refuse  []string
}

// readGlossary parses the table of ko/GLOSSARY.md. A refused variant is a
// code span in the third column; a leading N stands for a number ("N강").
func readGlossary(t testing.TB) map[string]glossaryRow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("ko", "GLOSSARY.md"))
	require.NoError(t, err)
	rows := map[string]glossaryRow{}
	span := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		require.Len(t, cells, 4, "glossary row %q", line)
		english := strings.TrimSpace(cells[0])
		if english == "English" {
			continue
		}
		row := glossaryRow{english: english}
		for _, w := range strings.Split(cells[1], ",") {
			if w = strings.TrimSpace(w); w != "" {
				row.use = append(row.use, w)
			}
		}
		require.NotEmpty(t, row.use, "glossary row %q has no Korean term", english)
		for _, m := range span.FindAllStringSubmatch(cells[2], -1) {
			row.refuse = append(row.refuse, m[1])
		}
		_, dup := rows[english]
		require.False(t, dup, "glossary lists %q twice", english)
		rows[english] = row
	}
	require.NotEmpty(t, rows)
	return rows
}

// refusedPattern matches a refused variant as listed. A variant that starts
// with a Hangul syllable must start a word: 문장 is refused, 주문장 is not.
func refusedPattern(v string) *regexp.Regexp {
	q := regexp.QuoteMeta(v)
	if strings.HasPrefix(v, "N") {
		q = `[0-9]+` + regexp.QuoteMeta(v[1:])
	}
	if r := []rune(v)[0]; unicode.Is(unicode.Hangul, r) {
		q = `(?:^|[^\p{Hangul}])` + q
	}
	return regexp.MustCompile(q)
}

var (
	codeSpan       = regexp.MustCompile("`[^`]*`")
	frontMatterKey = regexp.MustCompile(`(?m)^[a-z_]+:`)
)

// koreanText is one place that speaks Korean: a file and its lines, as
// "file:line" → text.
type koreanText struct {
	name  string
	lines map[string]string
}

func readLines(t testing.TB, path string, keep func(n int, line string) (string, bool)) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		if text, ok := keep(n, sc.Text()); ok {
			out[path+":"+itoa(n)] = text
		}
	}
	require.NoError(t, sc.Err())
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

var hangul = regexp.MustCompile(`\p{Hangul}`)

// koreanTexts gathers every Korean text a student reads: the Korean lessons
// and the lab's API (docs/lab-handler.ko.md; code spans dropped: they stay
// English), the ko tables of web/strings.js
// and web/lab-words.js, the Korean of web/classroom/words.js, and the Korean
// messages of the Go code under lab/ and server/.
func koreanTexts(t testing.TB) []koreanText {
	t.Helper()
	var texts []koreanText
	lessonFiles, err := filepath.Glob(filepath.Join("ko", "[0-9][0-9]-*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, lessonFiles)
	for _, p := range lessonFiles {
		texts = append(texts, koreanText{p, readLines(t, p, func(_ int, l string) (string, bool) {
			return codeSpan.ReplaceAllString(l, "`…`"), true
		})})
	}
	// The lab's API in Korean, which the lab page shows beside the editor.
	koAPI := filepath.Join("..", "docs", "lab-handler.ko.md")
	texts = append(texts, koreanText{koAPI, readLines(t, koAPI, func(_ int, l string) (string, bool) {
		return codeSpan.ReplaceAllString(l, "`…`"), true
	})})
	inKo := false
	texts = append(texts, koreanText{"web/strings.js ko", readLines(t, filepath.Join("..", "web", "strings.js"), func(_ int, l string) (string, bool) {
		switch {
		case strings.HasPrefix(l, "const ko = {"):
			inKo = true
		case inKo && strings.HasPrefix(l, "};"):
			inKo = false
		}
		return l, inKo && hangul.MatchString(l)
	})})
	texts = append(texts, koreanText{"web/classroom/words.js", readLines(t, filepath.Join("..", "web", "classroom", "words.js"), func(_ int, l string) (string, bool) {
		return l, hangul.MatchString(l)
	})})
	// The lab page's words ("Your endpoint"), its ko table.
	inLabKo := false
	texts = append(texts, koreanText{"web/lab-words.js ko", readLines(t, filepath.Join("..", "web", "lab-words.js"), func(_ int, l string) (string, bool) {
		switch {
		case strings.HasPrefix(l, "const ko = {"):
			inLabKo = true
		case inLabKo && strings.HasPrefix(l, "};"):
			inLabKo = false
		}
		return l, inLabKo && hangul.MatchString(l)
	})})
	for _, dir := range []string{"lab", "server"} {
		err := filepath.WalkDir(filepath.Join("..", dir), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			lines := readLines(t, p, func(_ int, l string) (string, bool) { return l, hangul.MatchString(l) })
			if len(lines) > 0 {
				texts = append(texts, koreanText{p, lines})
			}
			return nil
		})
		require.NoError(t, err)
	}
	return texts
}

// TestKoreanUsesNoRefusedVariant holds every Korean text to the glossary: no
// variant it refuses, anywhere a student reads Korean.
func TestKoreanUsesNoRefusedVariant(t *testing.T) {
	rows := readGlossary(t)
	texts := koreanTexts(t)
	for _, row := range rows {
		for _, v := range row.refuse {
			re := refusedPattern(v)
			t.Run(row.english+"/"+v, func(t *testing.T) {
				for _, text := range texts {
					for where, line := range text.lines {
						assert.False(t, re.MatchString(line), "%s uses %q, which the glossary refuses for %q (use %s): %s",
							where, v, row.english, strings.Join(row.use, ", "), strings.TrimSpace(line))
					}
				}
			})
		}
	}
}

// TestGlossaryRefusesWhatItMeans keeps the matcher honest: a refused variant
// is found as listed, at a word's start, and not inside another word.
func TestGlossaryRefusesWhatItMeans(t *testing.T) {
	for name, tc := range map[string]struct {
		variant, text string
		found         bool
	}{
		"as listed":         {"문장", "두 문장이 있습니다", true},
		"inside a word":     {"문장", "주문장을 봅니다", false},
		"a lesson number":   {"N강", "2강의 코드", true},
		"lesson in a word":  {"N강", "보강", false},
		"latin with a case": {"claim을", "claim을 바꾸세요", true},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.found, refusedPattern(tc.variant).MatchString(tc.text))
		})
	}
}

// TestKoreanLessonsUseTheGlossaryTerms checks, lesson by lesson, that where the
// English lesson speaks of a concept (outside code), the Korean one uses the
// glossary's word for it. Only concepts whose English is unambiguous are
// checked; the rest rely on the refused variants above.
func TestKoreanLessonsUseTheGlossaryTerms(t *testing.T) {
	rows := readGlossary(t)
	concepts := []struct {
		row     string
		english *regexp.Regexp
	}{
		{"worker", regexp.MustCompile(`(?i)\bworkers?\b`)},
		{"ledger", regexp.MustCompile(`(?i)\bledger\b`)},
		{"transfer", regexp.MustCompile(`(?i)\btransfers?\b`)},
		{"fingerprint", regexp.MustCompile(`(?i)\bfingerprints?\b`)},
		{"retention", regexp.MustCompile(`(?i)\bretention\b`)},
		{"lease", regexp.MustCompile(`(?i)\bleases?\b`)},
		{"retry", regexp.MustCompile(`(?i)\bretr(y|ies)\b`)},
		{"race view", regexp.MustCompile(`(?i)\brace view\b`)},
		{"claim (a key)", regexp.MustCompile(`(?i)\bclaim(s|ed|ing)?\b`)},
		{"on-call alarm, page", regexp.MustCompile(`(?i)\bpager\b|\bon-call\b`)},
		{"payment processor", regexp.MustCompile(`(?i)\b(payment )?processors?\b`)},
		{"recovery point", regexp.MustCompile(`(?i)\brecovery points?\b`)},
		// "their statement" in lesson 1 is a bank statement, not SQL.
		{"SQL statement, query", regexp.MustCompile(`(?i)\b(one|two|the|each|sql) statements?\b`)},
	}
	english, err := filepath.Glob(filepath.Join("en", "[0-9][0-9]-*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, english)
	for _, en := range english {
		ko := filepath.Join("ko", filepath.Base(en))
		enText, err := os.ReadFile(en)
		require.NoError(t, err)
		koText, err := os.ReadFile(ko)
		require.NoError(t, err, "%s has no Korean", en)
		// Front-matter keys (retention:, scope:) are names, not prose.
		enProse := frontMatterKey.ReplaceAllString(codeSpan.ReplaceAllString(string(enText), ""), "")
		koProse := codeSpan.ReplaceAllString(string(koText), "")
		for _, c := range concepts {
			row, ok := rows[c.row]
			require.True(t, ok, "glossary has no row %q", c.row)
			if !c.english.MatchString(enProse) {
				continue
			}
			t.Run(filepath.Base(en)+"/"+c.row, func(t *testing.T) {
				used := false
				for _, w := range row.use {
					w = strings.TrimPrefix(w, "N번 ")
					if strings.Contains(koProse, w) {
						used = true
					}
				}
				assert.True(t, used, "%s speaks of %q; %s should say %s", en, c.row, ko, strings.Join(row.use, " or "))
			})
		}
	}
}
