package web_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"idemlab/lab"
)

// TestLabRungsNameTheCheckersRules holds the page's map of rules to rungs
// (lab-rungs.js) to the checker's rules: the explorer looks past a later
// rung's break for the rules a rung asks for by their names, so a name
// the checker does not use would never be found.
func TestLabRungsNameTheCheckersRules(t *testing.T) {
	var got map[string][]string
	runInNode(t, "the rules each rung asks for are", `
import { askedRules } from './lab-rungs.js';
import { RUNGS } from './lab-words.js';
process.stdout.write(JSON.stringify(Object.fromEntries(RUNGS.map((r) => [r, askedRules(r)]))));
`, []string{"lab-rungs.js", "lab-words.js"}, []string{}, &got)
	var names []string
	for _, r := range lab.Rules() {
		names = append(names, r.Name)
	}
	all := slices.Clone(got["scoped"])
	slices.Sort(all)
	slices.Sort(names)
	assert.Equal(t, names, all, "the top rung asks for every rule, by the checker's names")
	assert.Empty(t, got["naive"], "the naive rung asks for none")
	assert.Equal(t, []string{"one-transfer-per-intent", "money-conserved"}, got["unique"])
	rungs := []string{"naive", "unique", "fingerprint", "in-progress", "replay", "scoped"}
	for i := 1; i < len(rungs); i++ {
		assert.Subset(t, got[rungs[i]], got[rungs[i-1]], "%s asks for what %s asked", rungs[i], rungs[i-1])
	}
}
