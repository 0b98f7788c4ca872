// Package handlers ships the lab's JavaScript reference handlers, one per
// rung of the ladder (naive … scoped), and the common mistakes, each a
// handler one idea away from the rung it breaks. `idemlab lab handler NAME`
// writes one out; `idemlab lab serve` runs any of them. They follow the API
// of docs/lab-handler.md, and their tests grade each one served by
// lab/jsrun.
package handlers

import (
	"embed"
	"fmt"
	"slices"
	"strings"
)

//go:embed *.js mistakes/*.js
var files embed.FS

// Rungs returns the reference handlers, in ladder order: each is the one
// before it plus one fix, and each is named after the level of idemlab's
// own server it matches. Like the other catalogues it returns a copy.
func Rungs() []string { return slices.Clone(rungs) }

var rungs = []string{"naive", "unique", "fingerprint", "in-progress", "replay", "scoped"}

// RungBreaks returns what `idemlab grade` finds broken in each rung served by
// `idemlab lab serve`: the rules of the table "What idemlab's own levels
// fail" in docs/lab-contract.md, as the grader names them. Rule 8 is never
// judged by the grader. The tests hold every rung to it; the browser's lab
// is held to the same.
func RungBreaks(rung string) []string { return slices.Clone(rungBreaks[rung]) }

var rungBreaks = map[string][]string{
	"naive":       {"one-transfer-per-intent", "different-request-never-succeeds", "replay-is-byte-identical"},
	"unique":      {"different-request-never-succeeds", "replay-is-byte-identical", "completion-has-its-transfer", "customers-see-own-responses", "retention-outlasts-retries"},
	"fingerprint": {"replay-is-byte-identical", "completion-has-its-transfer", "customers-see-own-responses", "retention-outlasts-retries"},
	"in-progress": {"replay-is-byte-identical", "completion-has-its-transfer", "customers-see-own-responses", "retention-outlasts-retries"},
	"replay":      {"completion-has-its-transfer", "customers-see-own-responses", "retention-outlasts-retries"},
	"scoped":      nil,
}

// Mistake is a handler with one common mistake in it.
type Mistake struct {
	Name string
	// From is the rung the mistake is made on: the file is that rung's with
	// one idea changed.
	From string
	// What says in a line what the mistake does and what it breaks.
	What string
	// Breaks are the rules `idemlab grade` finds broken, every time;
	// MayAlsoBreak one more that a race breaks in some runs and not others.
	Breaks, MayAlsoBreak []string
	// Causes are the causes the grader names for them (none: it names
	// none it can tell).
	Causes []string
}

// Mistakes returns the mistake handlers, under mistakes/ (a copy).
func Mistakes() []Mistake {
	out := slices.Clone(mistakes)
	for i := range out {
		out[i].Breaks = slices.Clone(out[i].Breaks)
		out[i].MayAlsoBreak = slices.Clone(out[i].MayAlsoBreak)
		out[i].Causes = slices.Clone(out[i].Causes)
	}
	return out
}

var mistakes = []Mistake{
	{Name: "look-then-insert", From: "scoped",
		What:   "looks for the key with a SELECT and inserts after, into a table without a primary key: simultaneous retries both see nothing and both pay (rule 1)",
		Breaks: []string{"one-transfer-per-intent"}, MayAlsoBreak: []string{"replay-is-byte-identical"}},
	// The owner check saves the ledger (the retry's completion finds no
	// claim of its own and rolls back), so rule 1 holds and the retry gets
	// 409 instead of the first answer. The grader, seeing the reordered
	// retry refused, names raw-bytes-fingerprint. The second call to the
	// network carries the first's network key and gets the first charge
	// back: no second charge (rule 8 holds, in the browser too).
	{Name: "insert-or-ignore", From: "scoped",
		What:   "INSERT OR IGNORE, and the changed-rows count never read: a retry carries on as new, calls the network again, and loses to the owner check (rule 3)",
		Breaks: []string{"replay-is-byte-identical"}, Causes: []string{"raw-bytes-fingerprint"}},
	{Name: "completed-first", From: "scoped",
		What:   "writes the key as completed, with a generic answer, before the work: a retry meanwhile is told \"done\" (rule 3)",
		Breaks: []string{"replay-is-byte-identical"}, Causes: []string{"completed-before-paid"}},
	{Name: "raw-bytes-fingerprint", From: "scoped",
		What:   "fingerprints the body's bytes as sent: a re-spaced or reordered retry is refused 422 (rule 3)",
		Breaks: []string{"replay-is-byte-identical"}, Causes: []string{"raw-bytes-fingerprint"}},
	{Name: "rerendered-replay", From: "scoped",
		What:   "renders a replay anew, with today's balance and time (rule 3)",
		Breaks: []string{"replay-is-byte-identical"}, Causes: []string{"recomputed-replay"}},
	{Name: "global-keys", From: "scoped",
		What:   "keys without their customer: another customer's key decides this one's request (rules 5 and 4)",
		Breaks: []string{"customers-see-own-responses", "completion-has-its-transfer"}, Causes: []string{"global-keys"}},
	{Name: "short-retention", From: "scoped",
		What:   "keeps keys one hour, no longer than the clients retry (rule 7)",
		Breaks: []string{"retention-outlasts-retries"}, Causes: []string{"short-retention"}},
	{Name: "replay-without-type", From: "scoped",
		What:   "stores the first answer's status and body but not its Content-Type: a replay goes out without it (rule 3)",
		Breaks: []string{"replay-is-byte-identical"}, Causes: []string{"replay-headers"}},
	{Name: "release-on-402", From: "scoped",
		What:   "deletes the claim on a 402 instead of storing it: the retry after a top-up pays (rule 3)",
		Breaks: []string{"replay-is-byte-identical"}, Causes: []string{"refusal-not-stored"}},
	{Name: "validate-after-claim", From: "scoped",
		What:   "checks the body only after claiming the key and stores its 400 there: the repaired request under the same key is refused 422 and never paid (rule 2)",
		Breaks: []string{"different-request-never-succeeds"}, Causes: []string{"stored-validation-refusal"}},
}

// Names lists every handler: the rungs, then the mistakes.
func Names() []string {
	names := slices.Clone(rungs)
	for _, m := range mistakes {
		names = append(names, m.Name)
	}
	return names
}

// Source returns the handler file named name (a rung or a mistake, with or
// without ".js" and "mistakes/").
func Source(name string) ([]byte, error) {
	name = strings.TrimSuffix(strings.TrimPrefix(name, "mistakes/"), ".js")
	path := name + ".js"
	if !slices.Contains(rungs, name) {
		path = "mistakes/" + path
	}
	b, err := files.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("handlers: no handler %q (idemlab lab handler -h lists them)", name)
	}
	return b, nil
}
