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

// Rungs are the reference handlers, in ladder order: each is the one
// before it plus one fix, and each is named after the level of idemlab's
// own server it matches.
var Rungs = []string{"naive", "unique", "fingerprint", "in-progress", "replay", "scoped"}

// Mistake is a handler with one common mistake in it.
type Mistake struct {
	Name string
	// From is the rung the mistake is made on: the file is that rung's with
	// one idea changed.
	From string
	// What says in a line what the mistake does and what it breaks.
	What string
}

// Mistakes are the mistake handlers, under mistakes/.
var Mistakes = []Mistake{
	{"look-then-insert", "scoped", "looks for the key with a SELECT and inserts after, into a table without a primary key: simultaneous retries both see nothing and both pay (rule 1)"},
	{"insert-or-ignore", "scoped", "INSERT OR IGNORE, and the changed-rows count never read: a retry carries on as new, pays the network again, and loses to the owner check (rule 3)"},
	{"completed-first", "scoped", "writes the key as completed, with a generic answer, before the work: a retry meanwhile is told \"done\" (rule 3)"},
	{"raw-bytes-fingerprint", "scoped", "fingerprints the body's bytes as sent: a re-spaced or reordered retry is refused 422 (rule 3)"},
	{"rerendered-replay", "scoped", "renders a replay anew, with today's balance and time (rule 3)"},
	{"global-keys", "scoped", "keys without their customer: another customer's key decides this one's request (rule 5)"},
	{"short-retention", "scoped", "keeps keys one hour, no longer than the clients retry (rule 7)"},
	{"release-on-402", "scoped", "deletes the claim on a 402 instead of storing it: the retry after a top-up pays (rule 3)"},
}

// Names lists every handler: the rungs, then the mistakes.
func Names() []string {
	names := slices.Clone(Rungs)
	for _, m := range Mistakes {
		names = append(names, m.Name)
	}
	return names
}

// Source returns the handler file named name (a rung or a mistake, with or
// without ".js" and "mistakes/").
func Source(name string) ([]byte, error) {
	name = strings.TrimSuffix(strings.TrimPrefix(name, "mistakes/"), ".js")
	path := name + ".js"
	if !slices.Contains(Rungs, name) {
		path = "mistakes/" + path
	}
	b, err := files.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("handlers: no handler %q (idemlab lab handler -h lists them)", name)
	}
	return b, nil
}
