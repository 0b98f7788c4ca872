package server_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/lab/handlers"
)

// withoutTakeover is a shipped handler whose claim of a dead attempt is
// never taken over: the UPDATE that would take it over (in replace) is
// made to match no row.
func withoutTakeover(t *testing.T, name, replace string) string {
	t.Helper()
	src, err := handlers.Source(name)
	require.NoError(t, err)
	require.Contains(t, string(src), replace)
	return strings.Replace(string(src), replace, replace+" AND 0", 1)
}

// TestLabPageSaysAClaimIsNeverSettled: a handler that never takes over a
// claim whose attempt crashed breaks no rule (nothing moves, nothing is
// said wrong), but the retry ten minutes after the crash is still told
// 409, for ever. The grade notes it with its cause and fix: at the
// in-progress rung it is left for scoped, whose lease settles it; at the
// scoped rung it keeps the rung from being done. The noted order plays on
// the bench, and the bench's verdict notes it too.
func TestLabPageSaysAClaimIsNeverSettled(t *testing.T) {
	ts := playground(t, playgroundDir(t))
	ctx := labTab(t, ts.URL, "")
	labRunnerReady(t, ctx)
	row := `#lab-grade tr[data-scenario=crash-then-late-retry]`

	goToRung(t, ctx, "in-progress")
	setLabFile(t, ctx, withoutTakeover(t, "in-progress", "WHERE idem_key = ? AND created_at < ?"))
	act(t, ctx, `#btn-lab-grade`)
	assert.Equal(t, "true", attr(t, ctx, "#lab-grade", "data-rung-done"), "nothing the in-progress rung asks for broke: %s", text(t, ctx, "#lab-grade .lab-rung-sum"))
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "Left for rung 6 (scoped) too: a claim a crash left is never settled")
	assert.Equal(t, "true", attr(t, ctx, row, "data-expected"), "what broke there (rule 7: a retention of 300 s) is a later rung's")
	assert.Equal(t, "0", attr(t, ctx, row, "data-notes-asked"), "a later rung's")
	assert.Contains(t, text(t, ctx, row), "Never settled: a1 crashed and never answered; the retry a2, sent 10 minutes later, was answered 409")
	assert.Contains(t, text(t, ctx, row), "expected at this rung: rung 6 (scoped) fixes it")
	assert.Contains(t, text(t, ctx, row), "What to change: give each claim a lease")
	assert.Equal(t, "claim-never-settled", attr(t, ctx, row+" .lab-cause[data-note]", "data-cause"))

	// The scoped reference without its lease: every rule holds, and the
	// rung is not done.
	goToRung(t, ctx, "scoped")
	setLabFile(t, ctx, withoutTakeover(t, "scoped", "AND fingerprint = ? AND claimed_at < ?"))
	act(t, ctx, `#btn-lab-grade`)
	assert.Empty(t, attr(t, ctx, "#lab-grade", "data-broken"), "no rule broke")
	assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"))
	assert.Equal(t, "1", attr(t, ctx, "#lab-grade", "data-notes-asked"))
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "This rung, rung 6 (scoped), is not done yet: a claim a crash left is never settled, in: “a crash at any step, then a retry ten minutes later”")
	assert.Equal(t, "1", attr(t, ctx, row, "data-notes-asked"))
	assert.Contains(t, text(t, ctx, row), "no rule broke in")
	assert.Contains(t, text(t, ctx, row), "but an intent is never settled")
	assert.Contains(t, text(t, ctx, row), "rung 6 (scoped) asks for it: this rung is not done")
	// Played, the noted order ends with a2 told 409, and the verdict says why.
	act(t, ctx, row+` button`)
	assert.Contains(t, text(t, ctx, `#lab-lanes .lab-lane[data-attempt=a2] .lab-end`), "409")
	assert.Equal(t, "claim-never-settled", attr(t, ctx, `#lab-verdict .lab-note`, "data-cause"))

	// The explorer, asked about that scenario, says so too.
	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "crash-then-late-retry"))
	act(t, ctx, `#btn-lab-explore`)
	assert.Equal(t, "note", attr(t, ctx, "#lab-found", "data-asked"))
	assert.Contains(t, text(t, ctx, "#lab-found"), "This rung (rung 6 (scoped)) is not done: it asks that a claim a crash left be settled")
	assert.Equal(t, "claim-never-settled", attr(t, ctx, `#lab-found .lab-note`, "data-cause"))
}

// TestLabPageGradeSaysEveryRuleAScenarioBroke: the grade's row names every
// rule an order of the scenario broke, not only the shortest order's. On
// rung 2 a crash after the claim and before the transfer breaks rule 4 (a
// completion with no transfer: the retry is told "already processed"),
// and a crash after the answer was stored breaks rule 3 (a generic answer
// where the first was owed). The row names both, each with its order to
// play, and the bench then shows that rule broken.
func TestLabPageGradeSaysEveryRuleAScenarioBroke(t *testing.T) {
	ts := playground(t, playgroundDir(t))
	ctx := labTab(t, ts.URL, "")
	labRunnerReady(t, ctx)
	goToRung(t, ctx, "unique")
	useHandler(t, ctx, "unique")
	act(t, ctx, `#btn-lab-grade`)
	row := `#lab-grade tr[data-scenario=crash-at-every-step]`
	assert.Contains(t, text(t, ctx, row), "broke 4. a key that reports completion has its transfer")
	also := row + ` .lab-also[data-rule=replay-is-byte-identical]`
	require.Equal(t, 1, countIn(t, ctx, also), "rule 3, which the shortest order kept, is named: %s", text(t, ctx, row))
	assert.Equal(t, "true", attr(t, ctx, also, "data-expected"), "the replay rung fixes it")
	assert.Contains(t, text(t, ctx, also), "Another order broke 3.")
	assert.Subset(t, strings.Split(attr(t, ctx, "#lab-grade", "data-broken"), ","), []string{"3", "4"})
	act(t, ctx, also+` button`)
	assert.Equal(t, "false", attr(t, ctx, `#lab-verdict li[data-rule=replay-is-byte-identical]`, "data-ok"), "played, the order breaks rule 3")
}
