package server_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/lab"
	"idemlab/lab/handlers"
)

// act clicks a button of the lab's race panel and waits until the action
// it started has ended.
func act(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	acts := attr(t, ctx, "body", "data-lab-acts")
	run(t, ctx, click(sel))
	if err := chromedp.Do(ctx, waitJS(`document.body.dataset.labActs !== `+quoteJS(acts))); err != nil {
		// Say what the page shows, so that a failure names its cause: a
		// click that went elsewhere leaves the panel idle, a runner that
		// hangs leaves it busy.
		t.Fatalf("%s: %v; the panel: start button disabled %v, run status %q, runner %s, focus on %s",
			sel, err, eval[bool](t, ctx, `document.getElementById('btn-lab-start').disabled`),
			text(t, ctx, "#lab-run-status"), attr(t, ctx, "body", "data-runner"),
			eval[string](t, ctx, `document.activeElement ? document.activeElement.outerHTML.slice(0, 120) : 'nothing'`))
	}
}

// stepAll presses the first "Run …'s step" button until every attempt
// has ended.
func stepAll(t *testing.T, ctx context.Context) {
	t.Helper()
	for i := 0; attr(t, ctx, "body", "data-lab-done") != "true"; i++ {
		require.Less(t, i, 200, "the scenario must end")
		act(t, ctx, `#lab-lanes .lab-lane button.primary`)
	}
}

// TestLabPageRacesTheStudentsHandler puts the naive handler on the bench
// from the lab page, steps two simultaneous retries by hand until both
// paid (the checker says rule 1 broke), lets the explorer find the
// shortest breaking order and plays it back, shows an exception at its
// line in the editor, and stops a handler that never yields.
func TestLabPageRacesTheStudentsHandler(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)

	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "simultaneous-retries"))
	act(t, ctx, `#btn-lab-start`)
	require.Equal(t, 2, eval[int](t, ctx, `document.querySelectorAll('#lab-lanes .lab-lane').length`))
	assert.Contains(t, text(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] .lab-sql`), "SELECT balance FROM accounts", "the statement about to run is shown")
	// The card names the line of the handler's box the statement is at;
	// the picture's mark for it, once run, names the same line.
	cardLine := regexp.MustCompile(`line \d+`).FindString(text(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1]`))
	require.NotEmpty(t, cardLine)
	stepAll(t, ctx)
	markTitle := eval[string](t, ctx, `[...document.querySelectorAll('#lab-race-view svg [data-row=attempt][data-lane=a1] .mark title')].map((e) => e.textContent).find((s) => s.includes('SELECT balance FROM accounts')) || ''`)
	assert.Contains(t, markTitle, cardLine+"\n", "the picture names the line the card named")
	assert.Equal(t, "false", attr(t, ctx, `#lab-verdict li[data-rule=one-transfer-per-intent]`, "data-ok"), "both retries paid")
	// The rule's sentence names intent i1, which the bench never showed:
	// it says what i1 is, after a dash where the sentence ends in a
	// bracket of its own.
	assert.Contains(t, text(t, ctx, `#lab-verdict li[data-rule=one-transfer-per-intent]`), "from alice to bob) — i1: one transfer the client wants, sent by a1, a2")
	// What the bench shows is said once, above its picture, and it says
	// the run has ended, not to choose a next attempt.
	assert.Equal(t, "On the bench: two identical requests at the same moment. Every attempt has ended.", text(t, ctx, "#lab-bench-caption"))
	assert.Empty(t, text(t, ctx, "#lab-run-status"), "the status line does not say it again")
	// One verdict, under its heading.
	assert.Equal(t, 1, strings.Count(strings.ToLower(text(t, ctx, "section.lab-race")), "checker’s verdict"), text(t, ctx, "#lab-run-status"))
	// The naive handler publishes no retention: rule 7 is unknown, as the
	// grade says it, not held.
	assert.Equal(t, "unknown", attr(t, ctx, `#lab-verdict li[data-rule=retention-outlasts-retries]`, "data-ok"))
	// Read as text, the answer's words and its body do not run together.
	for _, a := range []string{"a1", "a2"} {
		card := eval[string](t, ctx, `document.querySelector('#lab-lanes .lab-lane[data-attempt=`+a+`]').textContent`)
		assert.NotRegexp(t, `\S\{"`, card, "%s's card read as text", a)
		assert.Contains(t, card, "answered 201 ", "%s's card read as text", a)
	}
	verdict := eval[string](t, ctx, `document.getElementById('lab-verdict').textContent`)
	assert.NotRegexp(t, `(holds|broken)\S`, verdict, "a rule's words and the message under them, read as text")
	// The lessons' race view draws the run: a row per attempt, the second
	// payment on the row of the attempt that made it, the rule's bracket.
	assert.Equal(t, 2, eval[int](t, ctx, `document.querySelectorAll('#lab-race-view svg [data-row=attempt]').length`))
	assert.Equal(t, 1, eval[int](t, ctx, `document.querySelectorAll('#lab-race-view svg .mark[data-mark=paid-again]').length`))
	assert.NotEmpty(t, eval[string](t, ctx, `(document.querySelector('#lab-race-view svg [data-violation=one-transfer-per-intent]') || {}).outerHTML || ''`))
	// Each bracket is labelled with its rule's number, as the verdict's
	// list numbers it (rules 1, 3 and 8 here: not ✘1 ✘2 ✘3).
	bad, brackets := bracketProblems(t, ctx, "#lab-race-view")
	assert.Empty(t, bad)
	assert.Equal(t, countIn(t, ctx, `#lab-verdict li[data-ok=false]`), brackets, "a bracket a broken rule")
	// Both were charged, and both transfers are in the ledger: the
	// processor's row stays all the same.
	assert.Equal(t, 1, countIn(t, ctx, `#lab-race-view svg [data-row=processor]`), "the processor's row stays once it has charged")
	// One legend entry a sign: the ledger's ■ is the attempt's ■.
	assert.Equal(t, 1, countIn(t, ctx, `#lab-race-view svg [data-legend-item=money] .lg-money:not(.again)`))
	assert.Zero(t, countIn(t, ctx, `#lab-race-view svg [data-legend-item=markpaid]`), "the payment's mark is told once, with the ledger's")
	assert.Contains(t, eval[string](t, ctx, labLegend), "for the same intent", "the lab's race view says intent, as its verdict does")
	assert.NotContains(t, eval[string](t, ctx, labLegend), "wish")

	act(t, ctx, `#btn-lab-explore`)
	require.Equal(t, "broke", attr(t, ctx, "body", "data-lab-explored"), text(t, ctx, "#lab-run-status"))
	assert.Contains(t, text(t, ctx, "#lab-run-status"), "schedules")
	// The explorer's find replaces the bench's run: one result at a time.
	assert.Zero(t, countIn(t, ctx, "#lab-lanes .lab-lane"), "the older bench's cards are gone")
	assert.Zero(t, countIn(t, ctx, "#lab-verdict li"), "and its verdict")
	assert.True(t, eval[bool](t, ctx, `document.getElementById('lab-race-view').hidden`))
	rule := attr(t, ctx, "#lab-found", "data-rule")
	act(t, ctx, `#btn-lab-replay`)
	require.Equal(t, "true", attr(t, ctx, "body", "data-lab-done"))
	assert.Equal(t, "false", attr(t, ctx, `#lab-verdict li[data-rule=`+rule+`]`, "data-ok"),
		"the order played back breaks the rule the explorer named")
	assert.True(t, eval[bool](t, ctx, `document.getElementById('lab-found').hidden`), "the bench's verdict replaces the explorer's list")

	// Every scenario explored on its own: the naive handler pays twice, so
	// the rung to work on is the key's claim.
	act(t, ctx, `#btn-lab-grade`)
	assert.Contains(t, strings.Split(attr(t, ctx, "#lab-grade", "data-broken"), ","), "1")
	assert.Equal(t, "true", attr(t, ctx, `#lab-grade tr[data-scenario=simultaneous-retries]`, "data-broke"))
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-grade-sum"), "unique")
	// The first rung asks nothing: it is done, and every rule still broken
	// is the later rungs' (rule 7 among them, unknown).
	assert.Equal(t, "true", attr(t, ctx, "#lab-grade", "data-rung-done"))
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "Left for the later rungs (broken, or rule 7 unknown): rules 1, 2, 3, 7, 8.")
	// What to change, from the checker in Go: no attempt wrote a row of
	// the handler's tables, so nothing could stop the second payment.
	paidUnclaimed, _ := lab.CauseOf(lab.CausePaidUnclaimed)
	assert.Contains(t, text(t, ctx, `#lab-grade tr[data-scenario=simultaneous-retries] .lab-fix`), paidUnclaimed.Fix)
	// The malformed keys break no rule (each its own transfer) but are
	// not the contract's answers: the row says so, one line a key.
	assert.Equal(t, "false", attr(t, ctx, `#lab-grade tr[data-scenario=malformed-keys]`, "data-broke"))
	assert.Equal(t, "7", attr(t, ctx, `#lab-grade tr[data-scenario=malformed-keys]`, "data-notes"))
	assert.Equal(t, 7, countIn(t, ctx, `#lab-grade tr[data-scenario=malformed-keys] .lab-note`))
	assert.Contains(t, text(t, ctx, `#lab-grade tr[data-scenario=malformed-keys]`), "the contract says 400")
	assert.Zero(t, countIn(t, ctx, "#lab-lanes .lab-lane"), "the grade replaces the bench's run")
	// A row played back keeps the grade (the list it was played from).
	act(t, ctx, `#lab-grade tr[data-scenario=simultaneous-retries] button`)
	assert.Equal(t, "true", attr(t, ctx, "body", "data-lab-done"))
	assert.False(t, eval[bool](t, ctx, `document.getElementById('lab-grade').hidden`))
	// Start clears it.
	act(t, ctx, `#btn-lab-start`)
	assert.True(t, eval[bool](t, ctx, `document.getElementById('lab-grade').hidden`), "a new run on the bench clears the grade")

	// The shipped scoped handler holds in every scenario.
	setLabFile(t, ctx, scopedHandler(t))
	act(t, ctx, `#btn-lab-grade`)
	assert.Equal(t, "", attr(t, ctx, "#lab-grade", "data-broken"), text(t, ctx, "#lab-grade"))
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-grade-sum"), "top rung")
	assert.NotContains(t, eval[string](t, ctx, `document.getElementById('lab-grade').textContent`), "null")
	assert.Zero(t, countIn(t, ctx, `#lab-grade .lab-note`), "scoped answers as the contract says")
	assert.Equal(t, "", attr(t, ctx, "#lab-grade", "data-unknown"), "scoped publishes its retention")
	assert.NotContains(t, text(t, ctx, "#lab-grade"), "null", "nothing missing is written out")
	// A held scenario says what its attempts were answered: the progress
	// a rule cannot show (the corrected amount refused 422, the late
	// retry after a crash paid once and answered 201).
	assert.Equal(t, "Answered, in one order: a1 201 · a2 422", text(t, ctx, `#lab-grade tr[data-scenario=corrected-amount] .lab-answers`))
	assert.Contains(t, text(t, ctx, `#lab-grade tr[data-scenario=day] .lab-answers`), "201 ×")

	// Without a published retention, rule 7 is unknown, as idemlab grade
	// says it: the top rung's words are not given.
	unpublished := strings.Replace(strings.Replace(scopedHandler(t), "const retentionSeconds = 86400;", "const keepFor = 86400;", 1),
		"retentionSeconds * 1000", "keepFor * 1000", 1)
	require.NotContains(t, unpublished, "retentionSeconds =")
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`import('./lab-file.js').then((m) => {
		document.getElementById('handler-box').editor.setText(m.split(`+quoteJS(unpublished)+`).handler);
	})`, chromedp.EvalAwaitPromise))
	act(t, ctx, `#btn-lab-grade`)
	assert.Equal(t, "", attr(t, ctx, "#lab-grade", "data-broken"), text(t, ctx, "#lab-grade"))
	assert.Equal(t, "7", attr(t, ctx, "#lab-grade", "data-unknown"))
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-grade-unknown"), "publishes no retentionSeconds")
	assert.NotContains(t, text(t, ctx, "#lab-grade .lab-grade-sum"), "top rung")

	// An exception ends its attempt and is marked at its line.
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('handler-box').editor.setText(
		'async function transfer(req, db, pay) {\n  await db.get("SELECT 1");\n  throw new Error("boom");\n}\n')`))
	act(t, ctx, `#btn-lab-start`)
	act(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] button.primary`)
	assert.Contains(t, text(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] .lab-end`), "line 3")
	run(t, ctx, waitJS(`!!document.querySelector('#handler-box .cm-lint-marker-error')`))
	// One that throws before its first await has ended every attempt as
	// soon as it is on the bench: the caption says so, not to choose.
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('handler-box').editor.setText(
		'async function transfer(req, db, pay) {\n  throw new Error("boom");\n}\n')`))
	act(t, ctx, `#btn-lab-start`)
	assert.Equal(t, "true", attr(t, ctx, "body", "data-lab-done"))
	assert.Contains(t, text(t, ctx, "#lab-bench-caption"), "Every attempt has ended.")
	// A call left without its await never runs: the attempt answers
	// first, and its card says which call, at which line.
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('handler-box').editor.setText(
		'async function transfer(req, db, pay) {\n  await db.get("SELECT 1");\n  db.run("UPDATE accounts SET balance = balance WHERE id = ?", "alice");\n  return { status: 201, headers: {}, body: "{}" };\n}\n')`))
	act(t, ctx, `#btn-lab-start`)
	act(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] button.primary`)
	assert.Contains(t, text(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] .lab-unawaited`), "its db.run at line 3 never ran")
	assert.Zero(t, countIn(t, ctx, `#lab-lanes .lab-lane[data-attempt=a2] .lab-unawaited`), "a2 has not run")

	// A handler that never reaches its next step: the page says so while
	// it runs, and the Stop button ends it; the page answers on.
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('handler-box').editor.setText(
		'async function transfer(req, db, pay) {\n  await db.get("SELECT 1");\n  while (true) {}\n}\n')`))
	act(t, ctx, `#btn-lab-start`)
	acts := attr(t, ctx, "body", "data-lab-acts")
	run(t, ctx, click(`#lab-lanes .lab-lane[data-attempt=a1] button.primary`), waitJS(`document.body.dataset.labSlow === 'true'`))
	assert.Contains(t, text(t, ctx, "#lab-run-status"), "without reaching its next step or its answer")
	assert.Contains(t, text(t, ctx, "#lab-run-status"), "■ Stop ends it")
	run(t, ctx, click(`#btn-lab-stop`), waitJS(`document.body.dataset.labActs !== `+quoteJS(acts)))
	assert.True(t, strings.HasPrefix(text(t, ctx, "#lab-run-status"), "Stopped by the Stop button: your handler had not reached its next step"), text(t, ctx, "#lab-run-status"))
	assert.Equal(t, "<missing>", attr(t, ctx, "body", "data-lab-slow"), "no longer said to run")
	assert.Zero(t, countIn(t, ctx, "#lab-lanes .lab-lane"), "the stopped bench is not left as if it could run")
	assert.False(t, eval[bool](t, ctx, `document.getElementById('btn-lab-start').disabled`), "the page answers after the stop")
	// Left to run, the page stops it by itself after its budget.
	act(t, ctx, `#btn-lab-start`)
	act(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] button.primary`)
	assert.True(t, strings.HasPrefix(text(t, ctx, "#lab-run-status"), "Stopped: your handler ran 8 s without reaching"), text(t, ctx, "#lab-run-status"))
}

// scopedHandler is the shipped scoped handler file.
func scopedHandler(t *testing.T) string {
	t.Helper()
	src, err := handlers.Source("scoped")
	require.NoError(t, err)
	return string(src)
}

// TestLabPageByKeyboard plays a scenario from the keyboard: Enter on Start
// (which takes the focus to the first step under the picture), then Enter
// on an attempt's step again and again. The focus stays
// on a step button after every step (the cards are drawn anew), ← and →
// go from one attempt's step to the other's, and once every attempt has
// ended the focus is on the verdict, where another Enter starts nothing
// over. An attempt that waits for the write lock has a step that says so
// and runs nothing.
func TestLabPageByKeyboard(t *testing.T) {
	ctx := readyLab(t)
	press := func() {
		acts := attr(t, ctx, "body", "data-lab-acts")
		run(t, ctx, chromedp.KeyEvent(kb.Enter), waitJS(`document.body.dataset.labActs !== `+quoteJS(acts)))
	}
	focused := func() string {
		return eval[string](t, ctx, `document.activeElement.dataset.focus || document.activeElement.id || document.activeElement.tagName`)
	}
	run(t, ctx, focus(`#btn-lab-start`))
	press()
	require.Equal(t, 2, eval[int](t, ctx, `document.querySelectorAll('#lab-lanes .lab-lane').length`), text(t, ctx, "#lab-run-status"))
	// The focus goes to the first step under the picture, where the arrows
	// work (left on Start, they did nothing: the fourteenth simulated
	// student).
	assert.Equal(t, "lab-stepbar-a1", focused(), "the focus goes to the first attempt's step")
	run(t, ctx, chromedp.KeyEvent(kb.ArrowRight))
	assert.Equal(t, "lab-stepbar-a2", focused(), "→ goes to the next attempt's step")

	// One key from one attempt's step to the other's, both ways round.
	run(t, ctx, focus(`#lab-lanes .lab-lane[data-attempt=a1] button.primary`), chromedp.KeyEvent(kb.ArrowRight))
	assert.Equal(t, "a2:step", focused(), "→ goes to the next attempt's step")
	run(t, ctx, chromedp.KeyEvent(kb.ArrowRight))
	assert.Equal(t, "a1:step", focused(), "→ from the last attempt goes round to the first")
	run(t, ctx, chromedp.KeyEvent(kb.ArrowLeft))
	assert.Equal(t, "a2:step", focused(), "← goes back")

	run(t, ctx, focus(`#lab-lanes .lab-lane[data-attempt=a1] button.primary`))
	for i := 0; attr(t, ctx, "body", "data-lab-done") != "true"; i++ {
		require.Less(t, i, 200, "the scenario must end")
		require.True(t, strings.HasSuffix(focused(), ":step"), "focus after %d steps: %s", i, focused())
		press()
	}
	assert.Equal(t, "lab-verdict-title", focused(), "once every attempt has ended, the focus is on the verdict")
	assert.True(t, eval[bool](t, ctx, `(() => { const r = document.getElementById('lab-verdict-title').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight * 0.75; })()`),
		"the verdict's heading stands where its rules below it can be seen, not at the screen's bottom edge")
	assert.Equal(t, "-1", attr(t, ctx, "#lab-verdict-title", "tabindex"))
	assert.NotZero(t, countIn(t, ctx, `#lab-verdict li[data-rule]`))
	// Enter on the verdict starts nothing: the verdict stays.
	steps := attr(t, ctx, "body", "data-lab-steps")
	acts := attr(t, ctx, "body", "data-lab-acts")
	run(t, ctx, chromedp.KeyEvent(kb.Enter), chromedp.Sleep(300*time.Millisecond))
	assert.Equal(t, acts, attr(t, ctx, "body", "data-lab-acts"), "Enter on the verdict runs no action")
	assert.Equal(t, "true", attr(t, ctx, "body", "data-lab-done"))
	assert.Equal(t, steps, attr(t, ctx, "body", "data-lab-steps"))
	assert.NotZero(t, countIn(t, ctx, `#lab-verdict li[data-rule]`), "the verdict is still there")
	// The page after a run (the cards, the race view, the verdict) is
	// accessible in both themes.
	script := axeScript(t)
	for _, theme := range []string{"light", "dark"} {
		run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.documentElement.dataset.theme = '`+theme+`'`))
		if v := axeViolations(t, ctx, script); len(v) > 0 {
			t.Errorf("the lab page after a run, %s theme: %d accessibility violations:\n%s", theme, len(v), strings.Join(v, "\n"))
		}
	}
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.documentElement.dataset.theme = 'light'`))

	// a1 opens its transaction (the naive handler's BEGIN IMMEDIATE); a2
	// then asks for the lock and waits. Its step says so, names the
	// holder, and a press runs nothing.
	run(t, ctx, focus(`#btn-lab-start`))
	press()
	run(t, ctx, focus(`#lab-lanes .lab-lane[data-attempt=a1] button.primary`))
	for i := 0; attr(t, ctx, "#lab-lanes", "data-holder") != "a1"; i++ {
		require.Less(t, i, 40, "a1 must open a transaction")
		press()
	}
	run(t, ctx, focus(`#lab-lanes .lab-lane[data-attempt=a2] button.primary`))
	for i := 0; countIn(t, ctx, `#lab-lanes .lab-lane[data-attempt=a2] .lab-wait`) == 0; i++ {
		require.Less(t, i, 40, "a2 must come to wait for the lock")
		press()
	}
	step := `#lab-lanes .lab-lane[data-attempt=a2] button.primary`
	assert.Equal(t, "true", attr(t, ctx, step, "aria-disabled"), "a waiting attempt's step does not act")
	assert.Contains(t, text(t, ctx, step), "waits")
	assert.Equal(t, "lab-wait-a2", attr(t, ctx, step, "aria-describedby"))
	assert.Contains(t, text(t, ctx, "#lab-wait-a2"), "a1 holds it")
	assert.Equal(t, "a2:step", focused(), "the focus stays on the waiting step")
	steps = attr(t, ctx, "body", "data-lab-steps")
	trace := countIn(t, ctx, "#lab-trace li")
	press()
	assert.Equal(t, steps, attr(t, ctx, "body", "data-lab-steps"), "a press on a waiting step runs nothing")
	assert.Equal(t, trace, countIn(t, ctx, "#lab-trace li"), "and records no other wait")
	assert.Contains(t, text(t, ctx, "#lab-run-status"), "nothing ran")
}

// keySeg is one segment of a key's row in the lab's race view.
type keySeg struct {
	State  string `json:"state"`
	Owner  string `json:"owner"`
	Value  string `json:"value"`
	Stored string `json:"stored"`
	Text   string `json:"text"`
}

// keySegs are the segments of the key rows the lab's race view draws, in
// order.
func keySegs(t *testing.T, ctx context.Context) []keySeg {
	t.Helper()
	return eval[[]keySeg](t, ctx, `[...document.querySelectorAll('#lab-race-view svg [data-row=db] [data-db-state]')].map((g) => ({
		state: g.dataset.dbState, owner: g.dataset.owner, value: g.dataset.value ?? '', stored: g.dataset.stored ?? '',
		text: g.querySelector('title').textContent }))`)
}

// labLegend is the words of the lab's race view's legend.
const labLegend = `[...document.querySelectorAll('#lab-race-view svg [data-legend] .legend-item')].map((g) => g.textContent).join(' | ')`

// onBench puts a scenario of the lab's on the bench.
func onBench(t *testing.T, ctx context.Context, scenario string) {
	t.Helper()
	run(t, ctx, chromedp.SetValue(`#lab-scenario`, scenario))
	act(t, ctx, `#btn-lab-start`)
}

// stepUntilNext steps attempt id until its next call is op (db.begin,
// pay), as the race view's mark of what comes next says it.
func stepUntilNext(t *testing.T, ctx context.Context, id, op string) {
	t.Helper()
	card := `#lab-lanes .lab-lane[data-attempt=` + id + `]`
	next := `#lab-race-view svg .mark[data-mark=next][data-lane=` + id + `]`
	for i := 0; attr(t, ctx, next, "data-phase") != op; i++ {
		require.Less(t, i, 40, "%s never comes to %s: %s", id, op, text(t, ctx, card))
		act(t, ctx, card+` button[data-focus="`+id+`:step"]`)
	}
}

// TestLabPageRaceKeyRowIsTheTables: the lab's race view draws each key's
// row as the student's own tables hold it, committed, after each step,
// never as the SQL's words suggest. A key table without a status column
// never shows in_progress or a stored answer; one with a state column
// shows its values in order, with the attempt whose step wrote each: a
// claim, a crash that leaves it in_progress, another attempt's takeover
// and completion, a claim deleted again. The winner is the attempt whose
// transfer is first in the ledger, and the legend says so. The answers
// are the handler's: a status as a number, never idemlab's words for it,
// and the body as sent, in English and in Korean.
func TestLabPageRaceKeyRowIsTheTables(t *testing.T) {
	t.Parallel()
	ts := playground(t, playgroundDir(t))
	unique, err := handlers.Source("unique")
	require.NoError(t, err)
	require.NotContains(t, string(unique), "state ", "the unique rung's key table has no state column")
	for _, lang := range []string{"en", "ko"} {
		ctx := labTab(t, ts.URL, "?lang="+lang)
		labRunnerReady(t, ctx)
		setLabFile(t, ctx, string(unique))
		onBench(t, ctx, "simultaneous-retries")
		stepAll(t, ctx)
		assert.Equal(t, []keySeg{{State: "recorded", Owner: "a1", Text: map[string]string{"en": "row written · a1", "ko": "행 기록됨 · a1"}[lang]}},
			keySegs(t, ctx), "%s: one row written, by a1's INSERT; a2's INSERT was refused", lang)
		db := svgText(t, ctx, `#lab-race-view svg [data-row=db]`)
		assert.NotContains(t, db, "in_progress", lang)
		assert.NotContains(t, db, "completed", lang)
		legend := eval[string](t, ctx, labLegend)
		assert.NotContains(t, legend, "in_progress", lang)
		assert.NotContains(t, legend, map[string]string{"en": "answer stored", "ko": "응답 저장됨"}[lang], lang)
		// The lab's unnumbered columns (an arrival, an answer) are said in its
		// legend; the lessons' step names (validate, fingerprint) are not its.
		assert.Contains(t, legend, map[string]string{"en": "a column without a number", "ko": "번호 없는 칸"}[lang], lang)
		assert.NotContains(t, legend, map[string]string{"en": "fingerprint", "ko": "지문"}[lang], lang)
		// a2 was answered 200 with the unique rung's own body: said as a
		// number, the body in the answer's title byte for byte.
		answer := `#lab-race-view svg [data-row=attempt][data-lane=a2] .answer`
		assert.Equal(t, map[string]string{"en": "✉ answered 200", "ko": "✉ 응답 200"}[lang],
			eval[string](t, ctx, `[...document.querySelector(`+quoteJS(answer)+`).childNodes].filter((n) => n.nodeName !== 'title').map((n) => n.textContent).join(' ')`))
		body := eval[string](t, ctx, `document.querySelector('#lab-lanes .lab-lane[data-attempt=a2] .lab-answer').textContent`)
		require.Contains(t, body, "already_processed")
		assert.Equal(t, body, svgText(t, ctx, answer+" title"), lang)
	}

	ctx := labTab(t, ts.URL, "")
	labRunnerReady(t, ctx)
	// The scoped rung's key table says its state in "state", and stores
	// the answer's status in "status". a1 claims and is charged, then
	// crashes; a2, ten minutes later, takes the stale claim over, is
	// answered the processor's first charge, and completes.
	setLabFile(t, ctx, scopedHandler(t))
	onBench(t, ctx, "crash-then-late-retry")
	stepUntilNext(t, ctx, "a1", "db.begin")
	act(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] button[data-focus="a1:crash"]`)
	// Crashed before its BEGIN: nothing was open to roll back, and the card
	// does not say otherwise.
	assert.Regexp(t, "no transaction open|트랜잭션은 없었음", text(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] .lab-end`))
	stepAll(t, ctx)
	segs := keySegs(t, ctx)
	assert.Equal(t, []keySeg{
		{State: "in_progress", Owner: "a1", Value: "in_progress", Text: "in_progress · a1"},
		{State: "in_progress", Owner: "a2", Value: "in_progress", Text: "in_progress · a2"},
		{State: "completed", Owner: "a2", Value: "completed", Stored: "201", Text: "completed 201 · a2"},
	}, segs, "a1's claim, left by its crash; a2's takeover; a2's completion with the answer's status")
	assert.Equal(t, 1, countIn(t, ctx, `#lab-race-view svg [data-row=attempt][data-lane=a2] .mark[data-mark=takeover]`), "a2 took the key over")
	assert.Contains(t, svgText(t, ctx, `#lab-race-view svg [data-row=attempt][data-lane=a1]`), "crashed: no answer — but the processor charged",
		"a1 was charged before it crashed, though the ledger never moved for it")
	// a2's payment stands at the band's right edge: its balances are drawn
	// before it, not left to its tooltip.
	assert.Contains(t, svgText(t, ctx, `#lab-race-view svg [data-row=ledger] .balance-after`), "alice 800,000 · bob 200,000")
	assert.Equal(t, "true", attr(t, ctx, `#lab-race-view svg [data-row=attempt][data-lane=a2]`, "data-winner"),
		"a2's transfer is the one in the ledger, though a1 was charged first")
	assert.Equal(t, []string{"a1", "a2"}, eval[[]string](t, ctx, `[...document.querySelectorAll('#lab-race-view svg [data-row=attempt]')].map((r) => r.dataset.lane)`),
		"the rows keep the cards' order: the winner is starred, not moved")
	legend := eval[string](t, ctx, labLegend)
	assert.Contains(t, legend, "winner: its transfer is first in the ledger")
	assert.Contains(t, legend, "the key row’s state is completed, and it stores the answer’s status")
	// The axis counts the runner's steps, as the explorer does.
	ticks := eval[[]string](t, ctx, `[...document.querySelectorAll('#lab-race-view svg .axis .tick-label')].map((e) => e.textContent)`)
	require.NotEmpty(t, ticks)
	assert.Equal(t, attr(t, ctx, "body", "data-lab-steps"), ticks[len(ticks)-1], "the last step on the axis is the bench's")
	// The ten minutes between the crash and the retry stand on the axis as
	// a break, before a2's first mark, marked with the wait.
	assert.Equal(t, "600000", attr(t, ctx, `#lab-race-view svg .axis .break`, "data-break-ms"))
	assert.Equal(t, "≈ 10 min", svgText(t, ctx, `#lab-race-view svg .axis .break .break-label`))
	assert.True(t, eval[bool](t, ctx, `document.querySelector('#lab-race-view svg .axis .break rect').getBoundingClientRect().right <=
		document.querySelector('#lab-race-view svg [data-row=attempt][data-lane=a2] .mark').getBoundingClientRect().left`), "the break comes before a2 starts")

	// A claim the handler deletes again (its statement failed) leaves no
	// row: each attempt's claim, then none. One ⚠ in the legend for the
	// failed steps and the 500s.
	setLabFile(t, ctx, "const schema = `CREATE TABLE claims (k TEXT PRIMARY KEY, status TEXT NOT NULL);`;\n\n"+
		"async function transfer(req, db, pay) {\n"+
		"  const key = lab.parseKey(req.key);\n"+
		"  await db.run(\"INSERT INTO claims (k, status) VALUES (?, 'in_progress')\", key);\n"+
		"  try {\n    await db.get('SELECT * FROM no_such_table');\n  } catch (e) {\n"+
		"    await db.run('DELETE FROM claims WHERE k = ?', key);\n    throw e;\n  }\n}\n")
	onBench(t, ctx, "simultaneous-retries")
	stepAll(t, ctx)
	segs = keySegs(t, ctx)
	assert.Equal(t, []keySeg{
		{State: "in_progress", Owner: "a1", Value: "in_progress", Text: "in_progress · a1"},
		{State: "absent", Owner: "a1", Text: "no row · a1"},
		{State: "in_progress", Owner: "a2", Value: "in_progress", Text: "in_progress · a2"},
		{State: "absent", Owner: "a2", Text: "no row · a2"},
	}, segs)
	legend = eval[string](t, ctx, labLegend)
	assert.Equal(t, 1, strings.Count(legend, "⚠"), legend)
}

// TestLabPageCardsSayWhatIsSent: each attempt's card says what it sends,
// what it waits for before it is sent, the payment call as the handler
// wrote it, and the answer's headers beside its body.
func TestLabPageCardsSayWhatIsSent(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	a1, a2 := `#lab-lanes .lab-lane[data-attempt=a1]`, `#lab-lanes .lab-lane[data-attempt=a2]`

	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "corrected-amount"))
	act(t, ctx, `#btn-lab-start`)
	assert.Equal(t, "new", attr(t, ctx, a2+" .lab-end", "data-end"))
	assert.Equal(t, "not sent yet: it is sent once a1 has ended, or once the client gives up waiting for a1", text(t, ctx, a2+" .lab-end"), "a2 has not been sent, so it has not gone unanswered")
	assert.Contains(t, text(t, ctx, a1+" .lab-req"), `"amount":200000`)
	assert.Contains(t, text(t, ctx, a2+" .lab-req"), `"amount":300000`, "the corrected amount")
	// A narrow card wraps the body between its members, never inside a
	// number: a break after each comma, and none elsewhere.
	assert.Equal(t, strings.Count(text(t, ctx, a1+" .lab-req code"), ","), countIn(t, ctx, a1+" .lab-req code wbr"))
	assert.Positive(t, countIn(t, ctx, a1+" .lab-req code wbr"))
	for i := 0; !strings.HasPrefix(text(t, ctx, a1+" .lab-sql"), "pay("); i++ {
		require.Less(t, i, 40, "the naive handler calls pay")
		act(t, ctx, a1+" button.primary")
	}
	assert.Equal(t, `pay({ from: "alice", to: "bob", amount: 200000 })`, text(t, ctx, a1+" .lab-sql"), "the call as the handler wrote it")

	// The scoped handler replays the first answer to the retry, marked.
	useHandler(t, ctx, "scoped")
	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "retry-after-lost-answer"))
	act(t, ctx, `#btn-lab-start`)
	for i := 0; !strings.HasPrefix(text(t, ctx, a1+" .lab-sql"), "pay("); i++ {
		require.Less(t, i, 40, "the scoped handler calls pay")
		act(t, ctx, a1+" button.primary")
	}
	assert.Regexp(t, `^pay\(\{ from: "alice", to: "bob", amount: 200000, key: ".+" \}\)$`, text(t, ctx, a1+" .lab-sql"), "the network's key, when given")
	stepAll(t, ctx)
	assert.Contains(t, text(t, ctx, a1+" .lab-headers"), "Content-Type: application/json")
	assert.Contains(t, text(t, ctx, a2+" .lab-headers"), "Idempotent-Replayed: true")
	assert.Equal(t, text(t, ctx, a1+" .lab-answer"), text(t, ctx, a2+" .lab-answer"), "byte for byte")
}

// TestLabRaceShowsTheWaitOnAPhone: on a phone the ten minutes' break on
// the step axis is narrower than its words, which stand under it all the
// same, inside the picture.
func TestLabRaceShowsTheWaitOnAPhone(t *testing.T) {
	t.Parallel()
	ts := playground(t, playgroundDir(t))
	ctx := labTab(t, ts.URL, "")
	run(t, ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch))
	labRunnerReady(t, ctx)
	setLabFile(t, ctx, scopedHandler(t))
	onBench(t, ctx, "crash-then-late-retry")
	act(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] button[data-focus="a1:crash"]`)
	stepAll(t, ctx)
	assert.Equal(t, "≈ 10 min", svgText(t, ctx, `#lab-race-view svg .axis .break .break-label`))
	assert.True(t, eval[bool](t, ctx, `(() => { const l = document.querySelector('#lab-race-view svg .axis .break .break-label').getBoundingClientRect();
		const v = document.querySelector('#lab-race-view svg').getBoundingClientRect(); return l.left >= v.left && l.right <= v.right; })()`), "inside the picture: %v", eval[[]float64](t, ctx, `(() => { const l = document.querySelector('#lab-race-view svg .axis .break .break-label').getBoundingClientRect(); const v = document.querySelector('#lab-race-view svg').getBoundingClientRect(); return [l.left, l.right, v.left, v.right]; })()`))
	// The band has no room beside a2's block on a phone: the balances its
	// payment left take a line of their own under the band, inside the
	// picture, rather than only the block's tooltip.
	assert.Equal(t, "after a2 paid: alice 800,000 · bob 200,000 · carol 1,000,000", svgText(t, ctx, `#lab-race-view svg [data-row=ledger] .balance-after`))
	assert.True(t, eval[bool](t, ctx, `(() => { const v = document.querySelector('#lab-race-view svg').getBoundingClientRect();
		return [...document.querySelectorAll('#lab-race-view svg [data-row=ledger] .balance-after')].every((e) => { const b = e.getBoundingClientRect(); return b.width > 0 && b.left >= v.left && b.right <= v.right; }); })()`),
		"the balances are drawn inside the picture")
	// The key row's segments are narrow here: each says its state in the
	// table's own words, whole (on a line under the band where they do not
	// fit inside), inside the picture; a phone showed "▭ a1" for
	// "in_progress · a1".
	segs := eval[[][2]string](t, ctx, `[...document.querySelectorAll('#lab-race-view svg [data-row=db] [data-db-state]')].map((g) => [g.querySelector('text').textContent, g.querySelector('title').textContent])`)
	require.NotEmpty(t, segs)
	for _, s := range segs {
		assert.Equal(t, s[1], s[0], "the segment shows its whole words")
	}
	assert.True(t, eval[bool](t, ctx, `(() => { const v = document.querySelector('#lab-race-view svg').getBoundingClientRect();
		return [...document.querySelectorAll('#lab-race-view svg [data-row=db] .seg-text')].every((e) => { const b = e.getBoundingClientRect(); return b.left >= v.left && b.right <= v.right; }); })()`),
		"the key row's words are inside the picture")
}

// TestLabPhoneStepsUnderThePicture: on a phone the attempts' cards stand
// a screen or more below the race picture. The bar of steps under the
// picture stays at the bottom of the screen while the picture's top is in
// view, and its buttons step the attempts as the cards' do; a step that
// would only wait for a lock says so and runs nothing.
func TestLabPhoneStepsUnderThePicture(t *testing.T) {
	t.Parallel()
	ts := playground(t, playgroundDir(t))
	ctx := labTab(t, ts.URL, "")
	run(t, ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch))
	labRunnerReady(t, ctx)
	onBench(t, ctx, "simultaneous-retries")
	assert.Equal(t, []string{"▶ a1", "▶ a2"}, eval[[]string](t, ctx, `[...document.querySelectorAll('#lab-stepbar button')].map((b) => b.textContent)`))
	// The picture's top 300 px above the screen's bottom, the rest of it
	// and the bar's own place below the fold: the bar is held at the
	// bottom of the screen.
	onScreen := `(() => { const v = document.getElementById('lab-race-view');
		scrollBy(0, v.getBoundingClientRect().top - (innerHeight - 300));
		const b = document.getElementById('lab-stepbar').getBoundingClientRect();
		return v.getBoundingClientRect().bottom > innerHeight && b.top >= 0 && b.bottom <= innerHeight + 1 && b.bottom >= innerHeight - 2; })()`
	assert.True(t, eval[bool](t, ctx, onScreen), "the bar is held at the bottom of the screen")
	// ← and → move along the bar.
	run(t, ctx, focus(`#lab-stepbar-a1`), chromedp.KeyEvent(kb.ArrowRight))
	assert.Equal(t, "lab-stepbar-a2", eval[string](t, ctx, `document.activeElement.id`), "→ on the bar")
	run(t, ctx, chromedp.KeyEvent(kb.ArrowLeft))
	assert.Equal(t, "lab-stepbar-a1", eval[string](t, ctx, `document.activeElement.id`), "← on the bar")
	steps := func() string { return attr(t, ctx, "body", "data-lab-steps") }
	for i := 0; attr(t, ctx, "#lab-lanes", "data-holder") != "a1"; i++ {
		require.Less(t, i, 40, "a1 must open a transaction")
		before := steps()
		act(t, ctx, `#lab-stepbar-a1`)
		require.NotEqual(t, before, steps(), "the bar's a1 stepped a1")
		assert.Equal(t, "lab-stepbar-a1", eval[string](t, ctx, `document.activeElement.id`), "the focus stays on the bar")
	}
	for i := 0; countIn(t, ctx, `#lab-lanes .lab-lane[data-attempt=a2] .lab-wait`) == 0; i++ {
		require.Less(t, i, 40, "a2 must come to wait for the lock")
		act(t, ctx, `#lab-stepbar-a2`)
	}
	assert.True(t, eval[bool](t, ctx, onScreen), "the bar is held at the bottom of the screen, mid-race")
	assert.Equal(t, "⋯ a2", text(t, ctx, "#lab-stepbar-a2"))
	assert.Equal(t, "true", attr(t, ctx, "#lab-stepbar-a2", "aria-disabled"))
	before := steps()
	act(t, ctx, `#lab-stepbar-a2`)
	assert.Equal(t, before, steps(), "a step that would only wait runs nothing")
	// a1 stepped to its answer from the bar: its button goes with its
	// last step, and the focus moves to a2's, not to the page's top.
	for i := 0; countIn(t, ctx, `#lab-stepbar-a1`) > 0; i++ {
		require.Less(t, i, 40, "a1 must end")
		act(t, ctx, `#lab-stepbar-a1`)
	}
	assert.Equal(t, "lab-stepbar-a2", eval[string](t, ctx, `document.activeElement.id`), "the focus moves to the bar's next attempt")
	stepAll(t, ctx)
	assert.True(t, eval[bool](t, ctx, `document.getElementById('lab-stepbar').hidden`), "every attempt has ended: no step is left")
}

// TestLabPageDrawsEachCustomersKey: another customer sends the same key
// string. Under the scoped reference, whose key table is scoped by
// customer, each customer's key is a key row of its own, named with its
// customer and holding only the row that customer's attempt wrote; under
// the unique reference (global keys) the two meet in one row, a1's.
func TestLabPageDrawsEachCustomersKey(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	rows := func() map[string]string {
		return eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll('#lab-race-view svg [data-row=db]')].map((g) =>
			[g.querySelector('title').textContent, g.dataset.lanesIn + ' | ' + [...g.querySelectorAll('[data-owner]')].map((s) => s.dataset.owner).join(' ')]))`)
	}
	for _, c := range []struct {
		handler string
		want    map[string]string
	}{
		{"scoped", map[string]string{`key "k-1" · cust-1`: "a1 | a1 a1", `key "k-1" · cust-2`: "a2 | a2 a2"}},
		{"unique", map[string]string{`key "k-1"`: "a1 a2 | a1"}},
	} {
		src, err := handlers.Source(c.handler)
		require.NoError(t, err)
		setLabFile(t, ctx, string(src))
		onBench(t, ctx, "another-customers-key")
		stepAll(t, ctx)
		assert.Equal(t, c.want, rows(), c.handler)
	}
}

// TestLabPageTimedOutClientRetriesAtOnce: a retry is sent once the first
// attempt has ended, or once its client gave up waiting for it. A time-out
// set on a1 while it runs (its answer is one the scenario loses) sends a2
// at once, beside a1 still running; a1's card then offers no second
// fault.
func TestLabPageTimedOutClientRetriesAtOnce(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	onBench(t, ctx, "retry-after-lost-answer")
	a2 := `#lab-lanes .lab-lane[data-attempt=a2]`
	require.Equal(t, 1, countIn(t, ctx, a2+` .lab-end[data-end=new]`), "a2 waits for a1: %s", text(t, ctx, a2))
	act(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] button.primary`)
	act(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] button[data-focus="a1:timeout"]`)
	assert.Zero(t, countIn(t, ctx, a2+` .lab-end[data-end=new]`), "a2 is sent: %s", text(t, ctx, a2))
	assert.Equal(t, 1, countIn(t, ctx, a2+` button.primary`), "a2 can be stepped while a1 still runs")
	assert.Equal(t, 1, countIn(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] button.primary`), "a1 still runs")
	assert.Zero(t, countIn(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] button[data-focus="a1:lose"], #lab-lanes .lab-lane[data-attempt=a1] button[data-focus="a1:timeout"]`),
		"no second fault on a1")
	stepAll(t, ctx)
}

// TestLabPageFitsAPhone: on a phone the lab page never scrolls sideways,
// in English and Korean, after the explorer's break (its rule sentences
// quote the handler's JSON answer, one long token) and after a race on
// the bench. An unbroken token used to widen the whole page to about
// 960 px, so the race and its rules sat behind a sideways scroll. The
// arrow keys' hint is shown on a desktop, not on a touch screen.
func TestLabPageFitsAPhone(t *testing.T) {
	t.Parallel()
	ts := playground(t, playgroundDir(t))
	for _, lang := range []string{"en", "ko"} {
		ctx := labTab(t, ts.URL, "?lang="+lang)
		labRunnerReady(t, ctx)
		// Put on the bench at a desktop's width, then seen on a phone's
		// (a window made narrow, a phone turned): the picture is drawn
		// again at the box's width.
		onBench(t, ctx, "simultaneous-retries")
		require.Greater(t, eval[int](t, ctx, `+document.querySelector('#lab-race-view svg').getAttribute('width')`), 1000)
		keysShown := `document.querySelector('.lab-keys').getClientRects().length > 0`
		assert.True(t, eval[bool](t, ctx, keysShown), "%s: a keyboard's hint on a desktop", lang)
		run(t, ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch))
		assert.False(t, eval[bool](t, ctx, keysShown), "%s: no arrow keys on a touch screen", lang)
		run(t, ctx, waitJS(`+document.querySelector('#lab-race-view svg').getAttribute('width') <= document.getElementById('lab-race-view').clientWidth`))
		fits := func(after string) {
			t.Helper()
			widths := eval[[]int](t, ctx, `[document.documentElement.scrollWidth, document.documentElement.clientWidth]`)
			assert.LessOrEqual(t, widths[0], widths[1], "%s, %s: the page is wider than the phone; wider than their box: %s", lang, after,
				eval[string](t, ctx, `[...document.querySelectorAll('body *')].filter((e) => !(e instanceof SVGElement) && e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX === 'visible').slice(-3).map((e) => e.tagName + '.' + e.className + ' ' + e.clientWidth + '/' + e.scrollWidth + ' px: ' + e.textContent.slice(0, 60)).join('; ')`))
		}
		act(t, ctx, `#btn-lab-explore`)
		require.Equal(t, "broke", attr(t, ctx, "body", "data-lab-explored"), text(t, ctx, "#lab-run-status"))
		require.Contains(t, text(t, ctx, "#lab-found"), `{"transfer_id"`, "the break quotes the handler's answer")
		fits("the explorer's break")
		onBench(t, ctx, "crash-at-every-step")
		stepAll(t, ctx)
		fits("a race on the bench")
	}
}

// TestLabPageKeepsTheBenchAcrossLanguages: a student changes the page's
// language in the middle of a race (the page loads again): the bench comes
// back as it was, the scenario, each step and the fault on it, now in the
// other language, and the caption right above the picture says what it
// shows.
func TestLabPageKeepsTheBenchAcrossLanguages(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	onBench(t, ctx, "simultaneous-retries")
	assert.Contains(t, text(t, ctx, "#lab-bench-caption"), "On the bench: two identical requests at the same moment")
	assert.Equal(t, "lab-race-view", eval[string](t, ctx, `document.getElementById('lab-bench-caption').nextElementSibling.id`), "the caption stands right above the picture")
	// a1 opens its transaction, a2 comes to wait for its lock (a step
	// that ran nothing), a1's answer is to be lost, a1 goes on.
	var did []string
	for i := 0; attr(t, ctx, "#lab-lanes", "data-holder") != "a1"; i++ {
		require.Less(t, i, 40, "a1 must open a transaction")
		act(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] button.primary`)
		did = append(did, "a1")
	}
	for i := 0; countIn(t, ctx, `#lab-lanes .lab-lane[data-attempt=a2] .lab-wait`) == 0; i++ {
		require.Less(t, i, 40, "a2 must come to wait for the lock")
		act(t, ctx, `#lab-lanes .lab-lane[data-attempt=a2] button.primary`)
		did = append(did, "a2")
	}
	act(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] button[data-focus="a1:lose"]`)
	assert.Contains(t, text(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] .lab-fault[data-fault=lose]`), "a1 goes on to its end",
		"the card says that the server goes on")
	row := `#lab-race-view svg [data-row=attempt][data-lane=a1]`
	assert.Equal(t, "pending", attr(t, ctx, row, "data-verdict"), "a1 has not answered: its answer's loss is to come, not an ending")
	act(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] button.primary`)
	did = append(did, "lose:a1", "a1")
	steps := attr(t, ctx, "body", "data-lab-steps")
	lanes := eval[string](t, ctx, `[...document.querySelectorAll('#lab-lanes .lab-lane')].map((l) => l.dataset.attempt + ':' + (l.querySelector('.lab-sql') || {}).textContent).join('|')`)
	trace := eval[int](t, ctx, `document.querySelectorAll('#lab-trace li, #lab-trace tr').length`)

	// Once, under a loaded machine, the select was gone between setting
	// its value and telling the page: the error now says where the page
	// was, so that the next such failure names its cause.
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => {
		const s = document.getElementById('lang-select');
		if (!s) throw new Error('no language select on ' + location.href + ' (' + document.readyState + '): ' + document.body.innerText.slice(0, 200));
		s.value = 'ko';
		s.dispatchEvent(new Event('change'));
	})()`),
		waitAcrossLoad(`document.documentElement.lang === 'ko' && document.body.dataset.ready === 'true'`))
	labRunnerReady(t, ctx)
	run(t, ctx, waitJS(`document.body.dataset.labSteps === `+quoteJS(steps)))
	assert.Equal(t, "simultaneous-retries", eval[string](t, ctx, `document.getElementById('lab-scenario').value`))
	assert.Equal(t, lanes, eval[string](t, ctx, `[...document.querySelectorAll('#lab-lanes .lab-lane')].map((l) => l.dataset.attempt + ':' + (l.querySelector('.lab-sql') || {}).textContent).join('|')`), "each attempt stands where it stood")
	assert.Equal(t, trace, eval[int](t, ctx, `document.querySelectorAll('#lab-trace li, #lab-trace tr').length`))
	assert.Contains(t, text(t, ctx, "#lab-bench-caption"), scheduleWords(did))
	assert.NotZero(t, countIn(t, ctx, `#lab-lanes .lab-lane[data-attempt=a2] .lab-wait`), "a2 waits for a1's lock again")
	assert.Contains(t, text(t, ctx, "#lab-bench-caption"), "벤치")
	assert.NotEmpty(t, attr(t, ctx, `#lab-race-view svg [data-mark]`, "data-mark"), "the picture is drawn")

	// An edit: the bench still runs the code it was put there with, and
	// says so; a link made before the edit is taken away.
	run(t, ctx, click(`#btn-share`), waitJS(`!document.getElementById('share-box').hidden`))
	run(t, ctx, chromedp.Click(`#handler-box .cm-content`, chromedp.NodeVisible), chromedp.KeyEvent(kb.End), chromedp.KeyEvent("\n// changed"))
	run(t, ctx, waitJS(`document.getElementById('lab-bench-caption').textContent.includes('다시 올리세요')`))
	assert.True(t, eval[bool](t, ctx, `document.getElementById('share-box').hidden`), "the old link is gone")
}

// scheduleWords writes picks as the page does: a run of one attempt's
// steps as "a1 ×3", the runs joined by arrows.
func scheduleWords(picks []string) string {
	var out []string
	for i := 0; i < len(picks); {
		j := i
		for j < len(picks) && picks[j] == picks[i] {
			j++
		}
		if j-i > 1 {
			out = append(out, picks[i]+" ×"+strconv.Itoa(j-i))
		} else {
			out = append(out, picks[i])
		}
		i = j
	}
	return strings.Join(out, " → ")
}

// TestLabRaceDrawsATransferInsertedWithReturning: the scoped reference
// with its transfer inserted by db.all(… RETURNING id), as the fourteenth
// simulated student wrote it. The picture drew no payment in the ledger,
// starred no winner, and worked the opening balances back from the
// transfers it saw, so that "before" showed the balances after.
func TestLabRaceDrawsATransferInsertedWithReturning(t *testing.T) {
	t.Parallel()
	ctx := onRungEdited(t, "scoped", [2]string{
		"const tr = await db.run('INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES (?, ?, ?, ?)', t.from, t.to, t.amount, req.now);",
		"const [tr] = await db.all('INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES (?, ?, ?, ?) RETURNING id AS lastInsertRowid', t.from, t.to, t.amount, req.now);",
	})
	onBench(t, ctx, "simultaneous-retries")
	stepAll(t, ctx)
	ledger := `#lab-race-view svg [data-row=ledger]`
	assert.Equal(t, "before: alice 1,000,000 · bob 0 · carol 1,000,000", svgText(t, ctx, ledger+" .opening"))
	assert.Contains(t, svgText(t, ctx, ledger+" .balance-after"), "alice 800,000 · bob 200,000")
	assert.Equal(t, 1, countIn(t, ctx, `#lab-race-view svg [data-row=attempt][data-winner=true]`), "the attempt whose transfer is in the ledger is the winner")
}
