package web_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	// Rule 8 is the scoped rung's (the network's key), but two live
	// attempts that both pay break it where the unique rung's claim is
	// missing: the explorer looks for it from there on.
	assert.Equal(t, []string{"one-transfer-per-intent", "money-conserved", "one-charge-per-intent"}, got["unique"])
	rungs := []string{"naive", "unique", "fingerprint", "in-progress", "replay", "scoped"}
	for i := 1; i < len(rungs); i++ {
		assert.Subset(t, got[rungs[i]], got[rungs[i-1]], "%s asks for what %s asked", rungs[i], rungs[i-1])
	}
}

// TestLabCausesHaveTheirRungAndWords: every cause the checker can name
// (lab.CauseIDs) has the rung that asks for it (CAUSE_RUNG) and its few
// words for the grade's summary (noteWhat_…) in both languages: a cause
// without them showed its words' key to a student.
func TestLabCausesHaveTheirRungAndWords(t *testing.T) {
	var got struct {
		Rungs map[string]string            `json:"rungs"`
		Words map[string]map[string]string `json:"words"`
	}
	runInNode(t, "the causes' rungs and words are", `
import { CAUSE_RUNG } from './lab-rungs.js';
import { labMessages } from './lab-words.js';
const words = {};
for (const [lang, table] of Object.entries(labMessages)) words[lang] = Object.fromEntries(Object.entries(table).filter(([k]) => k.startsWith('noteWhat_')));
process.stdout.write(JSON.stringify({ rungs: CAUSE_RUNG, words }));
`, []string{"lab-rungs.js", "lab-words.js"}, []string{}, &got)
	require.NotEmpty(t, lab.CauseIDs())
	for _, id := range lab.CauseIDs() {
		assert.NotEmpty(t, got.Rungs[id], "%s: the rung that asks for it", id)
		key := "noteWhat_" + strings.ReplaceAll(id, "-", "_")
		for _, lang := range []string{"en", "ko"} {
			assert.NotEmpty(t, got.Words[lang][key], "%s: %s", lang, key)
		}
	}
}
