package lessons_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/lab"
	"idemlab/lab/scenario"
	"idemlab/lessons"
	"idemlab/store/sqlite"
)

// memory opens the store the lessons play on in the browser: SQLite on the
// memdb VFS (the scenario runner imports none; its caller chooses).
func memory() (scenario.Store, error) { return sqlite.OpenMemory() }

func load(t testing.TB) *lessons.Set {
	t.Helper()
	s, err := lessons.Embedded()
	require.NoError(t, err)
	return s
}

// TestEveryLessonStillTeachesWhatItClaims plays every scenario of every
// lesson, goal by goal, under the policy each goal names: a broken level
// must still break the rule it is about, a fixed level must still hold.
func TestEveryLessonStillTeachesWhatItClaims(t *testing.T) {
	set := load(t)
	for _, l := range set.All() {
		if l.Lang != lessons.DefaultLang {
			// A translation plays exactly the same scenarios, apart from
			// its words (TestTranslationsPlayTheSameScenarios): playing
			// them again would only repeat these runs.
			continue
		}
		for _, spec := range l.Scenarios {
			for _, g := range spec.Goals {
				t.Run(fmt.Sprintf("%s.%s/%s/%s", l.ID, l.Lang, spec.ID, g.ID), func(t *testing.T) {
					p, err := spec.GoalPolicy(g)
					require.NoError(t, err)
					if spec.Day != nil {
						tally, err := scenario.RunDay(context.Background(), memory, *spec.Day, p, nil)
						require.NoError(t, err)
						assertGoalOnReport(t, g, tally.Report)
						return
					}
					s, err := scenario.New(spec, p, memory)
					require.NoError(t, err)
					defer s.Close()
					st, err := s.Run()
					require.NoError(t, err)
					require.True(t, st.Done)
					var met *scenario.GoalState
					for i := range st.Goals {
						if st.Goals[i].ID == g.ID {
							met = &st.Goals[i]
						}
					}
					require.NotNil(t, met)
					assert.True(t, met.Met, "goal %q (%s %s) is not reached by the default schedule under %s; broken: %v",
						g.Text, g.Expect, g.Rule, policyJSON(p), st.Report.Broken())
					if g.Expect == scenario.ExpectBreak {
						assert.NotEmpty(t, st.Report.Rule(rule(t, g.Rule)).Violations[0].Message)
					}
				})
			}
		}
	}
}

func assertGoalOnReport(t *testing.T, g scenario.Goal, rep lab.Report) {
	t.Helper()
	switch g.Expect {
	case scenario.ExpectBreak:
		assert.False(t, rep.Rule(rule(t, g.Rule)).OK, "the day should break %s", g.Rule)
		assert.Positive(t, rep.Summary.Duplicates+len(rep.Broken()))
	case scenario.ExpectHold:
		if g.Rule == "" {
			assert.True(t, rep.OK, "broken: %v", rep.Broken())
			assert.Zero(t, rep.Summary.Duplicates)
		} else {
			assert.True(t, rep.Rule(rule(t, g.Rule)).OK)
		}
	default:
		t.Fatalf("a day scenario's goal must be break or hold, got %q", g.Expect)
	}
}

func rule(t testing.TB, name string) lab.Rule {
	t.Helper()
	for _, r := range lab.Rules() {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no rule %q", name)
	return lab.Rule{}
}

func policyJSON(p engine.Policy) string {
	b, _ := json.Marshal(p)
	return string(b)
}

// TestTheLadderIsComplete checks the shape the page relies on: at least
// seven lessons in order, each with a goal to break something or to hold,
// hints, and a sandbox.
func TestTheLadderIsComplete(t *testing.T) {
	set := load(t)
	idx := set.Index()
	require.GreaterOrEqual(t, len(idx), 7)
	for i, e := range idx {
		assert.Equal(t, i+1, e.N, "lessons are numbered 1, 2, 3 …")
		l, ok := set.Lesson(e.ID, lessons.DefaultLang)
		require.True(t, ok)
		assert.NotEmpty(t, l.Hints, "%s has hints", e.ID)
		sandbox, holds := false, false
		for _, s := range l.Scenarios {
			sandbox = sandbox || s.Sandbox
			assert.Contains(t, l.HTML, `<div class="scenario" data-scenario="`+s.ID+`"></div>`)
		}
		for _, g := range l.Goals {
			holds = holds || g.Expect == scenario.ExpectHold
		}
		assert.True(t, sandbox, "%s has a sandbox", e.ID)
		assert.True(t, holds, "%s asks the learner to try to break the fixed level", e.ID)
		assert.NotContains(t, l.HTML, "```")
		assert.NotContains(t, l.HTML, `"lanes"`, "scenario JSON does not leak into the text")
	}
}

func TestRawHTMLDoesNotPassThrough(t *testing.T) {
	md := "---\nid: 01-x\nn: 1\ntitle: T\nsummary: S\nlevel: naive\n---\n\n" +
		"Hello <script>alert(1)</script> and <b onclick=\"steal()\">bold</b>.\n\n" +
		"<div style=\"position:fixed\">block html</div>\n\n" +
		"[click](javascript:alert(2)) and ![img](javascript:alert(3))\n\n" +
		"```js\n</code><script>alert(4)</script>\n```\n\n" +
		"```scenario\n{\"id\":\"s1\",\"level\":\"naive\",\"accounts\":{\"a\":1},\"lanes\":[{\"id\":\"A\",\"customer\":\"c\",\"body\":{\"from\":\"a\",\"to\":\"b\",\"amount\":1}}]}\n```\n"
	set, err := lessons.LoadFS(fstest.MapFS{"en/01-x.md": {Data: []byte(md)}})
	require.NoError(t, err)
	l, _ := set.Lesson("01-x", "en")
	html := l.HTML
	for _, bad := range []string{"<script", "onclick", "<b ", "<div style", "javascript:", "</code><script"} {
		assert.NotContains(t, html, bad)
	}
	assert.Contains(t, html, "&lt;script&gt;alert(4)&lt;/script&gt;", "code is shown, escaped")
	assert.Contains(t, html, `<div class="scenario" data-scenario="s1"></div>`)
	assert.Contains(t, html, "bold")
}

func TestBadLessonsAreRefused(t *testing.T) {
	good := "---\nid: 01-x\nn: 1\ntitle: T\nsummary: S\nlevel: naive\n---\n\n```scenario\n{\"id\":\"s1\",\"level\":\"naive\",\"accounts\":{},\"lanes\":[{\"id\":\"A\",\"customer\":\"c\",\"body\":{}}]}\n```\n"
	cases := map[string]struct{ file, src, want string }{
		"no front matter":   {"en/01-x.md", "# hi\n", "front matter"},
		"unknown key":       {"en/01-x.md", strings.Replace(good, "level: naive", "levle: naive", 1), `unknown key "levle"`},
		"id is not file":    {"en/02-y.md", good, "match the file name"},
		"no scenario":       {"en/01-x.md", strings.SplitAfter(good, "---\n\n")[0] + "text\n", "at least one scenario"},
		"bad scenario json": {"en/01-x.md", strings.Replace(good, `"lanes"`, `"lanes" `+"\n"+`"oops"`, 1), "scenario block starting at line 10"},
		"bad scenario":      {"en/01-x.md", strings.Replace(good, `"level":"naive"`, `"level":"nope"`, 1), "unknown level"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := lessons.LoadFS(fstest.MapFS{c.file: {Data: []byte(c.src)}})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	_, err := lessons.LoadFS(fstest.MapFS{"en/01-x.md": {Data: []byte(good)}, "ko/01-x.md": {Data: []byte(strings.Replace(good, "n: 1", "n: 2", 1))}})
	assert.ErrorContains(t, err, "number")
	set, err := lessons.LoadFS(fstest.MapFS{"en/01-x.md": {Data: []byte(good)}, "ko/01-x.md": {Data: []byte(strings.Replace(good, "title: T", "title: 제목", 1))}})
	require.NoError(t, err)
	ko, ok := set.Lesson("01-x", "ko")
	require.True(t, ok, "a translation sits beside the English text")
	assert.Equal(t, "제목", ko.Title)
	assert.Equal(t, []string{"en", "ko"}, ko.Langs)
}

// TestHandlerServesTheLessons fetches the index and each lesson over a real
// socket, and compares them with the files written for the static export.
func TestHandlerServesTheLessons(t *testing.T) {
	set, err := lessons.Embedded()
	require.NoError(t, err)
	h, err := set.Handler()
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	get := func(path string, hdr ...string) *http.Response {
		req, err := http.NewRequest("GET", srv.URL+path, nil)
		require.NoError(t, err)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		return resp
	}
	body := func(r *http.Response) []byte {
		defer r.Body.Close()
		b, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		return b
	}
	dir := t.TempDir()
	require.NoError(t, set.WriteFiles(dir))

	resp := get("/api/lessons.json")
	require.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	idxBytes := body(resp)
	var idx []lessons.Entry
	require.NoError(t, json.Unmarshal(idxBytes, &idx))
	require.GreaterOrEqual(t, len(idx), 7)
	assert.Equal(t, "01-naive", idx[0].ID)
	file, err := os.ReadFile(filepath.Join(dir, "lessons.json"))
	require.NoError(t, err)
	assert.Equal(t, string(file), string(idxBytes))

	for _, e := range idx {
		resp := get("/api/lessons/" + e.ID + ".en.json")
		require.Equal(t, 200, resp.StatusCode, e.ID)
		etag := resp.Header.Get("ETag")
		b := body(resp)
		var l struct {
			ID, Lang, HTML string
			Scenarios      []json.RawMessage
			Goals          []struct{ ID, Scenario, Expect string }
		}
		require.NoError(t, json.Unmarshal(b, &l))
		assert.Equal(t, e.ID, l.ID)
		assert.Equal(t, "en", l.Lang)
		assert.NotEmpty(t, l.Scenarios)
		for _, raw := range l.Scenarios {
			_, err := scenario.Parse(raw)
			assert.NoError(t, err, "the page can open every scenario it is sent")
		}
		file, err := os.ReadFile(filepath.Join(dir, "lessons", e.ID+".en.json"))
		require.NoError(t, err)
		assert.Equal(t, string(file), string(b))
		cached := get("/api/lessons/"+e.ID+".en.json", "If-None-Match", etag)
		assert.Equal(t, http.StatusNotModified, cached.StatusCode)
		cached.Body.Close()
	}
	ko := get("/api/lessons/01-naive.ko.json")
	assert.Equal(t, 200, ko.StatusCode, "the Korean lesson 1")
	assert.Contains(t, string(body(ko)), `"lang":"ko"`)
	for _, path := range []string{"/api/lessons/99-none.en.json", "/api/lessons/01-naive.xx.json", "/api/lessons/../lessons.json", "/api/lessons/"} {
		resp := get(path)
		assert.Equal(t, 404, resp.StatusCode, path)
		assert.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
		body(resp)
	}
	req, _ := http.NewRequest("POST", srv.URL+"/api/lessons.json", strings.NewReader("{}"))
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	assert.Equal(t, 405, resp.StatusCode)
	body(resp)
}

// TestAllListsEveryLessonInIndexOrder: All gives every lesson in every
// language, in the index's order; Lesson finds one, and no other.
func TestAllListsEveryLessonInIndexOrder(t *testing.T) {
	set := load(t)
	all, idx := set.All(), set.Index()
	require.GreaterOrEqual(t, len(all), len(idx))
	assert.Equal(t, idx[0].ID, all[0].ID)
	assert.Equal(t, idx[len(idx)-1].ID, all[len(all)-1].ID)
	l, ok := set.Lesson("01-naive", "en")
	require.True(t, ok)
	assert.Equal(t, "en", l.Lang)
	_, ok = set.Lesson("01-naive", "xx")
	assert.False(t, ok)
}

// TestTranslationsPlayTheSameScenarios keeps a translation in step with its
// English lesson: the same benches, lanes and goals, so that progress and
// links carry over from one language to the other.
func TestTranslationsPlayTheSameScenarios(t *testing.T) {
	set := load(t)
	translated := 0
	for _, e := range set.Index() {
		en, _ := set.Lesson(e.ID, lessons.DefaultLang)
		for _, lang := range e.Langs {
			if lang == lessons.DefaultLang {
				continue
			}
			translated++
			l, _ := set.Lesson(e.ID, lang)
			require.Len(t, l.Scenarios, len(en.Scenarios), "%s/%s", lang, e.ID)
			for i, s := range l.Scenarios {
				assert.JSONEq(t, asJSON(withoutWords(en.Scenarios[i])), asJSON(withoutWords(s)),
					"%s/%s %s: the same scenario, only the words translated", lang, e.ID, s.ID)
			}
			assert.Len(t, l.Hints, len(en.Hints), "%s/%s", lang, e.ID)
		}
	}
	assert.Positive(t, translated, "at least one lesson shows the translation layout works")
}

// withoutWords blanks what a translation changes: the title and the
// goals' texts.
func withoutWords(s scenario.Spec) scenario.Spec {
	s.Title = ""
	s.Goals = append([]scenario.Goal(nil), s.Goals...)
	for i := range s.Goals {
		s.Goals[i].Text = ""
	}
	return s
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestTheIndexNamesEveryLessonInEachLanguage: the playground's menu lists
// every lesson in the reader's language, not only the lesson open.
func TestTheIndexNamesEveryLessonInEachLanguage(t *testing.T) {
	for _, e := range load(t).Index() {
		for _, lang := range e.Langs {
			assert.NotEmpty(t, e.Titles[lang], "%s has no %s title in the index", e.ID, lang)
		}
		if ko, ok := e.Titles["ko"]; ok {
			assert.NotEqual(t, e.Titles["en"], ko, "%s: the Korean menu shows the English title", e.ID)
		}
	}
}
