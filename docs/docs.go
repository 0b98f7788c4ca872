// Package docs embeds the lab's documents that a student needs beside the
// binary: the contract an endpoint is graded against and the example
// endpoint written from it. idemlab's `lab contract` and `lab example`
// print and write them, so a student who downloaded only the binary has
// both. The files are read-only; everything here is safe for concurrent use.
package docs

import (
	"bytes"
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Contract is docs/lab-contract.md, the contract `idemlab grade` judges.
//
//go:embed lab-contract.md
var Contract []byte

// Handler is docs/lab-handler.md, the lab's JavaScript API.
//
//go:embed lab-handler.md
var Handler []byte

// HandlerKo is docs/lab-handler.ko.md, lab-handler.md in Korean: the same
// headings in the same order and the same code, which docs_test.go holds
// it to.
//
//go:embed lab-handler.ko.md
var HandlerKo []byte

// HandlerAPI is the part of lab-handler.md a student needs beside the
// editor: the file (its schema and retentionSeconds), the lab's tables,
// req, the answer, db, pay and the lab helpers (from its section "The
// file" up to "Running it for real"), in lang: "en", or "ko" for the same
// sections of lab-handler.ko.md, found by their place among its headings.
// The lab page shows it.
func HandlerAPI(lang string) ([]byte, error) {
	doc, ok := map[string][]byte{"en": Handler, "ko": HandlerKo}[lang]
	if !ok {
		return nil, fmt.Errorf("docs: lab-handler.md is not written in %q", lang)
	}
	en := headings(Handler)
	from, to := -1, -1
	for i, h := range en {
		switch {
		case h.level == 2 && h.text == "The file":
			from = i
		case h.level == 2 && strings.HasPrefix(h.text, "Running it for real"):
			to = i
		}
	}
	if from < 0 || to < from {
		return nil, fmt.Errorf("docs: lab-handler.md has no API sections from \"The file\" to \"Running it for real\"")
	}
	// The Korean's headings are the English's, translated: the same
	// levels in the same order, so the same places cut the same sections.
	heads := headings(doc)
	if !slices.EqualFunc(heads, en, func(a, b heading) bool { return a.level == b.level }) {
		return nil, fmt.Errorf("docs: lab-handler.%s.md's headings are not lab-handler.md's", lang)
	}
	return doc[heads[from].at:heads[to].at], nil
}

// heading is one ATX heading of a markdown document: its level (2 for
// "##"), its text and the offset of its line.
type heading struct {
	level int
	text  string
	at    int
}

// headings lists doc's headings outside fenced code, in order: a "#"
// line in a code block is a comment, not a heading.
func headings(doc []byte) []heading {
	var out []heading
	walk(doc, func(at int, line string, fenced bool) {
		if fenced {
			return
		}
		level := len(line) - len(strings.TrimLeft(line, "#"))
		if level < 1 || level > 6 || !strings.HasPrefix(line[level:], " ") {
			return
		}
		out = append(out, heading{level, strings.TrimSpace(line[level:]), at})
	})
	return out
}

// walk calls fn with each line of doc (without its newline), the line's
// offset, and whether it belongs to a fenced code block, its ``` fences
// included. The lab's documents fence code with ``` only.
func walk(doc []byte, fn func(at int, line string, fenced bool)) {
	inFence := false
	for at := 0; at < len(doc); {
		end := bytes.IndexByte(doc[at:], '\n')
		if end < 0 {
			end = len(doc) - at
		}
		line := string(doc[at : at+end])
		fence := strings.HasPrefix(strings.TrimLeft(line, " "), "```")
		fn(at, line, inFence || fence)
		if fence {
			inFence = !inFence
		}
		at += end + 1
	}
}

// Example is docs/examples/bank.py, the contract written with Python's
// standard library, correct unless it runs with --bug NAME.
//
//go:embed examples/bank.py
var Example []byte

// bugDefault is the line of bank.py that names the bug it plants when run
// without --bug; ExampleWithBug rewrites it.
const bugDefault = `p.add_argument("--bug", default=""`

// bugChoices finds the names bank.py accepts for --bug.
var bugChoices = regexp.MustCompile(`(?s)p\.add_argument\("--bug", default="", choices=\[(.*?)\]\)`)

// ExampleBugs lists the bugs the example endpoint can plant, as its --bug
// flag names them, in its order. They are read from the embedded file, so
// a bug added there is listed without a change here.
func ExampleBugs() []string {
	m := bugChoices.FindSubmatch(Example)
	if m == nil {
		return nil
	}
	var names []string
	for _, q := range regexp.MustCompile(`"([^"]*)"`).FindAllSubmatch(m[1], -1) {
		if len(q[1]) > 0 {
			names = append(names, string(q[1]))
		}
	}
	return names
}

// ExampleWithBug returns the example endpoint with the named bug planted
// by default: the same file, whose --bug flag defaults to name (an empty
// name is the correct endpoint). An unknown name is an error.
func ExampleWithBug(name string) ([]byte, error) {
	if name == "" {
		return Example, nil
	}
	known := ExampleBugs()
	found := false
	for _, b := range known {
		found = found || b == name
	}
	if !found {
		return nil, fmt.Errorf("docs: no bug %q in the example (one of: %s)", name, strings.Join(known, ", "))
	}
	if bytes.Count(Example, []byte(bugDefault)) != 1 {
		return nil, fmt.Errorf("docs: the example's --bug flag is not declared once as %s", bugDefault)
	}
	out := bytes.Replace(Example, []byte(bugDefault), []byte(`p.add_argument("--bug", default="`+name+`"`), 1)
	// Say so at the top, under the first line of the docstring, so the file
	// never passes for the correct endpoint.
	note := "\nTHIS COPY HAS A BUG PLANTED: written by `idemlab lab example --bug " + name + "`, it runs\n" +
		"with --bug " + name + " unless you pass --bug '' (the correct endpoint).\n"
	i := bytes.Index(out, []byte("\n\n"))
	if i < 0 {
		return nil, fmt.Errorf("docs: the example has no docstring to mark")
	}
	return append(append(append([]byte{}, out[:i+1]...), note...), out[i+1:]...), nil
}
