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

// HandlerAPI is the part of lab-handler.md a student needs beside the
// editor: the file (its schema and retentionSeconds), the lab's tables,
// req, the answer, db, pay and the lab helpers (from its section "The
// file" up to "Running it for real"). The lab page shows it.
func HandlerAPI() ([]byte, error) {
	start := bytes.Index(Handler, []byte("\n## The file"))
	end := bytes.Index(Handler, []byte("\n## Running it for real"))
	if start < 0 || end < start {
		return nil, fmt.Errorf("docs: lab-handler.md has no API sections from \"The file\" to \"Running it for real\"")
	}
	return Handler[start+1 : end+1], nil
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
