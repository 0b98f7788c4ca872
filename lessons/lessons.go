// Package lessons holds the playground's lessons: markdown files with front
// matter and runnable ```scenario blocks, one folder per language
// (en/01-naive.md, ko/01-naive.md). Loading them (Embedded, LoadDir)
// renders them with goldmark, letting no raw HTML through, and checks every
// scenario block with the lab's scenario parser; the loaded Set serves them
// as JSON to the page or writes them to a folder for the static export.
//
// The browser's WebAssembly module never imports this package: lessons
// reach it as JSON.
package lessons

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"idemlab/lab"
	"idemlab/lab/scenario"
)

// Lessons are LANG/NN-name.md; other Markdown beside them (ko/GLOSSARY.md) is
// for the people who write them, not a lesson.
//
//go:embed */[0-9][0-9]-*.md
var embedded embed.FS

// DefaultLang is the language every lesson exists in.
const DefaultLang = "en"

// Lesson is one lesson in one language, rendered.
type Lesson struct {
	ID      string   `json:"id"`
	N       int      `json:"n"`
	Lang    string   `json:"lang"`
	Langs   []string `json:"langs"`
	Title   string   `json:"title"`
	Summary string   `json:"summary"`
	// Level is the ladder rung the lesson is about.
	Level string `json:"level"`
	// HTML is the rendered text; each scenario block is replaced by
	// <div class="scenario" data-scenario="ID"></div>, where the page mounts
	// a bench.
	HTML      string          `json:"html"`
	Scenarios []scenario.Spec `json:"scenarios"`
	Goals     []Goal          `json:"goals"`
	Hints     []string        `json:"hints"`
	// Retention and Scope are the published policy the lesson states.
	Retention string `json:"retention,omitempty"`
	Scope     string `json:"scope,omitempty"`
	// Rules are the invariant checker's rules, which the bench lists as
	// "not checked yet" until the engine has started and checked them.
	Rules []lab.Rule `json:"rules"`
}

// Goal is a scenario's goal, listed on the lesson with its scenario's id.
type Goal struct {
	scenario.Goal
	Scenario string `json:"scenario"`
}

// Entry is one line of the lesson index.
type Entry struct {
	ID      string   `json:"id"`
	N       int      `json:"n"`
	Title   string   `json:"title"`
	Summary string   `json:"summary"`
	Level   string   `json:"level"`
	Langs   []string `json:"langs"`
	// Titles is the title in each language, so that a menu lists every
	// lesson in the reader's language, not only the one open.
	Titles map[string]string `json:"titles"`
}

// Set is every lesson in every language, rendered and checked.
type Set struct {
	// byID maps id → lang → lesson.
	byID  map[string]map[string]*Lesson
	index []Entry
}

// Embedded parses, renders and checks the embedded lessons. It fails on
// any lesson that does not parse, whose scenario blocks do not parse, or
// whose goals are inconsistent: a broken lesson stops the tests and the
// server's start, never a student. Each call does the work again: load the
// Set once where the program starts and pass it to what serves it.
func Embedded() (*Set, error) { return LoadFS(embedded) }

// LoadDir loads the lessons from a folder on disk (a developer editing the
// text), laid out as the embedded ones: DIR/en/01-naive.md.
func LoadDir(dir string) (*Set, error) { return LoadFS(os.DirFS(dir)) }

// LoadFS loads the lessons from fsys: LANG/NN-name.md.
func LoadFS(fsys fs.FS) (*Set, error) {
	files, err := fs.Glob(fsys, "*/[0-9][0-9]-*.md")
	if err != nil {
		return nil, fmt.Errorf("lessons: list: %w", err)
	}
	set := &Set{byID: map[string]map[string]*Lesson{}}
	for _, name := range files {
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("lessons: read %s: %w", name, err)
		}
		lang := path.Dir(name)
		l, err := parseLesson(src, lang)
		if err != nil {
			return nil, fmt.Errorf("lessons: %s: %w", name, err)
		}
		if want := strings.TrimSuffix(path.Base(name), ".md"); l.ID != want {
			return nil, fmt.Errorf("lessons: %s: id %q must match the file name", name, l.ID)
		}
		if set.byID[l.ID] == nil {
			set.byID[l.ID] = map[string]*Lesson{}
		}
		set.byID[l.ID][lang] = l
	}
	if len(set.byID) == 0 {
		return nil, errors.New("lessons: none found")
	}
	seenN := map[int]string{}
	for id, langs := range set.byID {
		en, ok := langs[DefaultLang]
		if !ok {
			return nil, fmt.Errorf("lessons: %s has no %s version", id, DefaultLang)
		}
		if other, dup := seenN[en.N]; dup {
			return nil, fmt.Errorf("lessons: %s and %s are both number %d", id, other, en.N)
		}
		seenN[en.N] = id
		names := make([]string, 0, len(langs))
		for lang := range langs {
			names = append(names, lang)
		}
		sort.Strings(names)
		for _, l := range langs {
			l.Langs = names
			if l.N != en.N {
				return nil, fmt.Errorf("lessons: %s/%s is number %d, but %s says %d", l.Lang, id, l.N, DefaultLang, en.N)
			}
		}
		titles := map[string]string{}
		for lang, l := range langs {
			titles[lang] = l.Title
		}
		set.index = append(set.index, Entry{ID: id, N: en.N, Title: en.Title, Summary: en.Summary, Level: en.Level, Langs: names, Titles: titles})
	}
	sort.Slice(set.index, func(i, j int) bool { return set.index[i].N < set.index[j].N })
	return set, nil
}

// Index lists the lessons in order, with their default-language titles.
func (s *Set) Index() []Entry { return s.index }

// Lesson returns one lesson in one language.
func (s *Set) Lesson(id, lang string) (*Lesson, bool) {
	l, ok := s.byID[id][lang]
	return l, ok
}

// All returns every lesson in every language, in order.
func (s *Set) All() []*Lesson {
	var out []*Lesson
	for _, e := range s.index {
		for _, lang := range e.Langs {
			out = append(out, s.byID[e.ID][lang])
		}
	}
	return out
}

// WriteFiles writes the index and every lesson as the static files the page
// fetches: DIR/lessons.json and DIR/lessons/ID.LANG.json (DIR is the
// export's api folder).
func (s *Set) WriteFiles(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "lessons"), 0o755); err != nil {
		return fmt.Errorf("lessons: write: %w", err)
	}
	b, err := json.Marshal(s.index)
	if err != nil {
		return fmt.Errorf("lessons: encode index: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lessons.json"), b, 0o644); err != nil {
		return fmt.Errorf("lessons: write index: %w", err)
	}
	for _, l := range s.All() {
		b, err := json.Marshal(l)
		if err != nil {
			return fmt.Errorf("lessons: encode %s: %w", l.ID, err)
		}
		name := filepath.Join(dir, "lessons", l.ID+"."+l.Lang+".json")
		if err := os.WriteFile(name, b, 0o644); err != nil {
			return fmt.Errorf("lessons: write %s: %w", name, err)
		}
	}
	return nil
}

// parseLesson reads a lesson file: front matter between "---" lines
// ("key: value", with "hint:" repeatable), then the markdown body, rendered.
func parseLesson(src []byte, lang string) (*Lesson, error) {
	text := strings.ReplaceAll(string(src), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return nil, errors.New("line 1: a lesson starts with front matter between --- lines")
	}
	head, body, ok := strings.Cut(text[4:], "\n---\n")
	if !ok {
		return nil, errors.New("the front matter has no closing --- line")
	}
	l := &Lesson{Lang: lang, Hints: []string{}, Rules: lab.Rules()}
	for i, line := range strings.Split(head, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: want key: value", i+2)
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "id":
			l.ID = v
		case "n":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("line %d: n must be a lesson number", i+2)
			}
			l.N = n
		case "title":
			l.Title = v
		case "summary":
			l.Summary = v
		case "level":
			l.Level = v
		case "retention":
			l.Retention = v
		case "scope":
			l.Scope = v
		case "hint":
			l.Hints = append(l.Hints, v)
		default:
			return nil, fmt.Errorf("line %d: unknown key %q", i+2, k)
		}
	}
	if l.ID == "" || l.N == 0 || l.Title == "" || l.Summary == "" || l.Level == "" {
		return nil, errors.New("front matter needs id, n, title, summary and level")
	}
	bodyLine := strings.Count(head, "\n") + 4 // the opening ---, the head, the closing ---
	html, specs, err := render([]byte(body), bodyLine)
	if err != nil {
		return nil, err
	}
	l.HTML, l.Scenarios, l.Goals = html, specs, []Goal{}
	if len(specs) == 0 {
		return nil, errors.New("a lesson needs at least one scenario block")
	}
	ids, goals := map[string]bool{}, map[string]bool{}
	for _, s := range specs {
		if ids[s.ID] {
			return nil, fmt.Errorf("scenario id %q appears twice", s.ID)
		}
		ids[s.ID] = true
		for _, g := range s.Goals {
			if goals[g.ID] {
				return nil, fmt.Errorf("goal id %q appears twice in the lesson", g.ID)
			}
			goals[g.ID] = true
			l.Goals = append(l.Goals, Goal{Goal: g, Scenario: s.ID})
		}
	}
	return l, nil
}
