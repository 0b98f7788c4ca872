package server_test

// The player page's browser tests: a student plays each lesson, steps the
// race by hand, injects faults, flips the sandbox's knobs, and reads the
// page in English and Korean. The shared Chromium and the helpers are in
// browser_test.go.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryLessonPlaysInTheBrowser plays every scenario of every lesson as
// a student would: open it on the bench, run it (under each goal's policy
// where the goal names one, through the goal's own button), and read the
// goals, the rule checks and the duplicate count the page shows.
func TestEveryLessonPlaysInTheBrowser(t *testing.T) {
	t.Parallel()
	ts := playground(t, playgroundDir(t))
	for _, l := range fetchLessons(t, ts.URL) {
		t.Run(l.ID, func(t *testing.T) {
			ctx := tab(t)
			openLesson(t, ctx, ts.URL, l.ID)
			assert.Contains(t, text(t, ctx, "#lesson-text h1"), l.Title)
			for _, sc := range l.Scenarios {
				day := len(sc.Day) > 0 && string(sc.Day) != "null"
				openScenario(t, ctx, sc.ID, day)
				if day {
					playDay(t, ctx, sc.ID, sc.Level, sc.Goals)
					continue
				}
				assert.Contains(t, text(t, ctx, "#bench-title"), sc.Title)
				for _, g := range sc.Goals {
					goal := `#goals li[data-goal="` + g.ID + `"]`
					if len(g.Policy) > 0 {
						run(t, ctx,
							click(goal+` button.goal-policy`),
							waitJS(`document.querySelector('#step-count').dataset.step === '0'`),
							waitJS(`document.querySelector('#bench-meta .sandboxed')?.textContent.includes(`+quoteJS(policyText(g.Policy))+`)`))
						for knob, v := range g.Policy {
							assert.Equal(t, "true", attr(t, ctx, `#knobs .knob[data-knob="`+knob+`"]`, "data-changed"), "knob %s shows it was flipped to %s", knob, v)
						}
					} else if attr(t, ctx, "#step-count", "data-step") != "0" || hasSandbox(t, ctx) {
						run(t, ctx, click(`#btn-reset`),
							waitJS(`document.querySelector('#step-count').dataset.step === '0'`))
						if hasSandbox(t, ctx) {
							run(t, ctx, chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
								_, err := chromedp.Evaluate[bool](`document.querySelector('#sandbox').open = true`)(ctx, tgt)
								return err
							}),
								click(`#btn-sandbox-reset`), waitJS(`!document.querySelector('#bench-meta .sandboxed')`))
						}
					}
					runToEnd(t, ctx)
					assert.Equal(t, "true", attr(t, ctx, goal, "data-met"), "%s %s/%s: %q is shown met", l.ID, sc.ID, g.ID, g.Text)
					assert.Contains(t, text(t, ctx, goal), "met")
					assertRuleShown(t, ctx, "#rules", "#summary", g.Expect, g.Rule)
				}
			}
			// Every goal met: the lesson goals say so and the lesson list
			// marks the lesson done.
			unmet := eval[int](t, ctx, `document.querySelectorAll('#lesson-goals li[data-met="false"]').length`)
			assert.Zero(t, unmet, "every goal of %s is shown met in the lesson", l.ID)
			assert.Contains(t, text(t, ctx, `#lesson-select option[value="`+l.ID+`"]`), "✓")
		})
	}
}

func hasSandbox(t testing.TB, ctx context.Context) bool {
	return eval[bool](t, ctx, `!!document.querySelector('#bench-meta .sandboxed')`)
}

// assertRuleShown checks the rule checks and the summary after a run: a
// broken rule reads "broken" with its cross, a held one "holds", and the
// duplicates count is non-zero exactly when one-transfer-per-intent broke.
func assertRuleShown(t testing.TB, ctx context.Context, rules, summary, expect, rule string) {
	t.Helper()
	switch expect {
	case "break":
		li := rules + ` li[data-rule="` + rule + `"]`
		assert.Equal(t, "false", attr(t, ctx, li, "data-ok"), "%s is shown broken", rule)
		assert.Contains(t, text(t, ctx, li), "✘ broken")
		if rule == "one-transfer-per-intent" {
			assert.NotEqual(t, "0", duplicates(t, ctx, summary), "the duplicate transfer is counted")
			again := eval[int](t, ctx, `[...document.querySelectorAll('#race [data-row="attempt"][data-verdict="fail"] [data-mark="paid-again-text"]')].filter(e => e.textContent.includes('paid again')).length`)
			if rules == "#rules" {
				assert.Positive(t, again, "the lane that paid again says so in words")
			}
		}
	case "hold":
		if rule != "" {
			li := rules + ` li[data-rule="` + rule + `"]`
			assert.Equal(t, "true", attr(t, ctx, li, "data-ok"), "%s is shown holding", rule)
			assert.Contains(t, text(t, ctx, li), "✔ holds")
		} else {
			broken := eval[int](t, ctx, `document.querySelectorAll('`+rules+` li[data-ok="false"]').length`)
			assert.Zero(t, broken, "every rule is shown holding")
		}
		assert.Equal(t, "0", duplicates(t, ctx, summary), "no duplicate transfer at the fixed level")
	}
}

func playDay(t testing.TB, ctx context.Context, id, level string, goals []struct {
	ID     string            `json:"id"`
	Text   string            `json:"text"`
	Expect string            `json:"expect"`
	Rule   string            `json:"rule"`
	Policy map[string]string `json:"policy"`
}) {
	t.Helper()
	run(t, ctx,
		click(`#btn-day`),
		waitJS(`document.querySelector('#day-status').textContent.startsWith('The day is over')`),
	)
	for _, g := range goals {
		assert.Equal(t, "true", attr(t, ctx, `#day-goals li[data-goal="`+g.ID+`"]`, "data-met"), "day %s goal %s (%s) is shown met", id, g.ID, level)
		assertRuleShown(t, ctx, "#day-rules", "#day-summary", g.Expect, g.Rule)
	}
}

// TestStudentStepsTheRaceByHand plays lesson 2's race phase by phase with
// the buttons and the keyboard: step, choose the lane, step back, and see
// the SQL of each step, the key table and the balances change; then the
// URL and localStorage bring the same place back after a reload.
func TestStudentStepsTheRaceByHand(t *testing.T) {
	t.Parallel()
	ts := playground(t, playgroundDir(t))
	ctx := tab(t)
	openLesson(t, ctx, ts.URL, "02-unique")
	openScenario(t, ctx, "s1", false)
	step := func(sel string, want string) {
		t.Helper()
		run(t, ctx, click(sel),
			waitJS(`document.querySelector('#step-count').dataset.step === '`+want+`'`))
	}
	key := func(k, want string) {
		t.Helper()
		run(t, ctx, chromedp.KeyEvent(k),
			waitJS(`document.querySelector('#step-count').dataset.step === '`+want+`'`))
	}
	assert.Contains(t, text(t, ctx, "#last-step"), "Nothing has run yet")
	// A1 goes first by the schedule; choose it explicitly, as a student
	// does, with the key "1".
	run(t, ctx, focus(`#bench`), chromedp.KeyEvent("1"),
		waitJS(`document.querySelector('#race [role="radio"][data-lane="A1"]').getAttribute('aria-checked') === 'true'`))
	step("#btn-step", "1")
	assert.Contains(t, text(t, ctx, "#last-step"), "A1")
	key("n", "2")
	key(kb.ArrowRight, "3")
	key(kb.ArrowLeft, "2")
	step("#btn-back", "1")
	// Run A1 up to its claim's check, then A2 likewise: the learner picks
	// lanes with the radio buttons beside them.
	for i := 0; i < 40; i++ {
		next := eval[string](t, ctx, `(document.querySelector('#race [data-mark="next"][data-lane="A1"]')||{}).dataset?.phase || ''`)
		if next == "claim" {
			break
		}
		cur := attr(t, ctx, "#step-count", "data-step")
		step("#btn-step", fmt.Sprint(atoi(t, cur)+1))
	}
	run(t, ctx, click(`#race [role="radio"][data-lane="A2"]`),
		waitJS(`document.querySelector('#race [role="radio"][data-lane="A2"]').getAttribute('aria-checked') === 'true'`))
	assert.Contains(t, text(t, ctx, "#btn-step"), "A2")

	// Play the rest by the schedule: both SELECTs see nothing, both pay.
	runToEnd(t, ctx)
	assert.Contains(t, text(t, ctx, `#rules li[data-rule="one-transfer-per-intent"]`), "broken")
	assert.NotEqual(t, "0", duplicates(t, ctx, "#summary"))
	transfers := eval[int](t, ctx, `document.querySelectorAll('#transfers tbody tr').length`)
	assert.Equal(t, 2, transfers, "the ledger shows both transfers")
	assert.NotEqual(t, "300000", attr(t, ctx, `#accounts tr[data-account="seoyeon"]`, "data-balance"))
	assert.Contains(t, text(t, ctx, "#loose-keys-table"), "gym-7f3a", "check-then-insert writes the key table without a constraint")

	// The SQL of any phase is one click away.
	run(t, ctx, click(`#race [data-row="attempt"][data-lane="A2"] [data-mark][data-phase="claim"]`))
	assert.Contains(t, strings.ToUpper(text(t, ctx, "#last-sql")), "SELECT")

	// The URL holds the lesson, the scenario and every move: a reload
	// brings the same step back, and progress survives in localStorage.
	run(t, ctx, waitJS(`document.body.dataset.urlPending === 'false'`))
	hash := eval[string](t, ctx, `location.hash`)
	assert.Contains(t, hash, "lesson=02-unique")
	assert.Contains(t, hash, "m=")
	stepBefore := attr(t, ctx, "#step-count", "data-step")
	run(t, ctx, chromedp.Reload(),
		waitJS(`document.body.dataset.interactive === 'true' && document.querySelector('#step-count').dataset.step === '`+stepBefore+`'`))
	assert.Equal(t, "true", attr(t, ctx, `#lesson-goals li[data-goal="g1"]`, "data-met"))
	assert.Contains(t, text(t, ctx, `#rules li[data-rule="one-transfer-per-intent"]`), "broken")

	// A URL pasted into the address bar moves the player there: the
	// first two moves of the race.
	run(t, ctx, chromedp.Navigate(ts.URL+"/#lesson=02-unique&s=s1&m=A1,A1"),
		waitJS(`document.querySelector('#step-count').dataset.step === '2'`))
	assert.Equal(t, "0", attr(t, ctx, "#summary", "data-duplicates"))

	// r resets; the scenario starts over at step 0.
	run(t, ctx, focus(`#bench`))
	key("r", "0")
}

// TestPastedLinkWinsOverAPendingURLWrite pastes a link while the page's
// own URL write is still pending (it writes 250 ms after the last step) and
// lets that write fire before the hashchange is handled, as a slow frame
// can: the pasted place must open, not the one the page was about to write.
func TestPastedLinkWinsOverAPendingURLWrite(t *testing.T) {
	ts := playground(t, playgroundDir(t))
	ctx := tab(t)
	openLesson(t, ctx, ts.URL, "02-unique")
	openScenario(t, ctx, "s1", false)
	for want := 1; want <= 2; want++ {
		run(t, ctx, click("#btn-step"),
			waitJS(`document.querySelector('#step-count').dataset.step === '`+fmt.Sprint(want)+`'`))
	}
	// The third step, and in the same turn of the page's event loop as its
	// drawing (so that the write cannot have fired, however slow the test's
	// round trip): the paste, then the pending write at once (pagehide
	// writes it immediately), before the browser dispatches hashchange.
	// (A link unlike every place the page has written so far: pasting the
	// hash the address bar already shows changes nothing.)
	pending := eval[string](t, ctx, `new Promise((resolve) => {
		const count = document.querySelector('#step-count');
		const seen = new MutationObserver(() => {
			if (count.dataset.step !== '3') return;
			seen.disconnect();
			const pending = document.body.dataset.urlPending;
			location.hash = '#lesson=02-unique&s=s1&m=A2';
			window.dispatchEvent(new Event('pagehide'));
			resolve(pending);
		});
		seen.observe(count, { attributes: true, attributeFilter: ['data-step'] });
		document.querySelector('#btn-step').click();
	})`)
	require.Equal(t, "true", pending, "the URL write was still pending when the link was pasted")
	run(t, ctx, waitJS(`document.querySelector('#step-count').dataset.step === '1' && document.body.dataset.urlPending === 'false'`))
	assert.Equal(t, "#lesson=02-unique&s=s1&m=A2", eval[string](t, ctx, `location.hash`))
}

// slowLink is a place twelve moves into lesson 2's race: with a slow
// engine, its replay takes most of a second.
const slowLink = "#lesson=02-unique&s=s1&m=A1,A1,A1,A1,A2,A2,A2,A2,A1,A1,A1,A2"

// TestSlowReplayKeepsTheWholePlaceInTheURL pastes a link of twelve moves
// into a page with a slow engine, so that the page's URL write, 250 ms
// after it opens the place, fires while the moves are still being
// replayed. Every URL the page writes must be the whole place: a write of
// the moves replayed so far left a shorter link in the address bar, and a
// link pasted then that happened to equal it changed nothing on the bench.
func TestSlowReplayKeepsTheWholePlaceInTheURL(t *testing.T) {
	ts := playground(t, playgroundDir(t))
	ctx := tab(t)
	slowEngine(t, ctx)
	// The engine is started on another lesson first, so that the link's
	// lesson opens at once, not when the engine is ready.
	openLesson(t, ctx, ts.URL, "01-naive")
	run(t, ctx, waitJS(`document.body.dataset.urlPending === 'false'`))
	eval[bool](t, ctx, `window.idemlabWrites = []; true`)
	run(t, ctx, chromedp.Navigate(ts.URL+"/"+slowLink),
		waitJS(`document.body.dataset.interactive === 'true' && document.querySelector('#step-count').dataset.step === '12' && document.body.dataset.urlPending === 'false'`))
	assert.Equal(t, slowLink, eval[string](t, ctx, `location.hash`))
	for _, w := range eval[[]string](t, ctx, `window.idemlabWrites`) {
		assert.Equal(t, slowLink, w, "a URL written while the moves were replayed")
	}
}

// TestNextLessonDuringAReplayStartsClean moves to the next lesson while a
// pasted link's moves are still being replayed. The lesson change waits
// for the replay: before, it closed the session under it, and the old
// lesson's moves were replayed into the new lesson and written into its
// URL.
func TestNextLessonDuringAReplayStartsClean(t *testing.T) {
	ts := playground(t, playgroundDir(t))
	ctx := tab(t)
	slowEngine(t, ctx)
	openLesson(t, ctx, ts.URL, "01-naive")
	answers := eval[int](t, ctx, `window.idemlabAnswers`)
	// Every step count the bench draws, beside the lesson heading it is
	// drawn under.
	eval[bool](t, ctx, `window.idemlabDrawn = [];
		new MutationObserver(() => {
			const step = document.querySelector('#step-count').dataset.step;
			if (step !== undefined) window.idemlabDrawn.push(document.querySelector('#lesson-text h1').textContent.slice(0, 2) + ' step ' + step);
		}).observe(document.querySelector('#step-count'), { attributes: true, attributeFilter: ['data-step'] });
		true`)
	// The key is pressed once the engine has answered the link's opening
	// (a close, an open) and two of its twelve moves.
	run(t, ctx, chromedp.Navigate(ts.URL+"/"+slowLink),
		waitJS(`window.idemlabAnswers >= `+fmt.Sprint(answers+4)+` && document.querySelector('#lesson-text h1').textContent.startsWith('2.')`),
		focus(`#bench`), chromedp.KeyEvent("]"),
		waitJS(`document.body.dataset.lesson === '03-fingerprint' && document.querySelector('#step-count').dataset.step !== undefined && document.body.dataset.urlPending === 'false'`))
	assert.Equal(t, "0", attr(t, ctx, "#step-count", "data-step"), "the next lesson opens at its start")
	hash := eval[string](t, ctx, `location.hash`)
	assert.Contains(t, hash, "lesson=03-fingerprint")
	assert.NotContains(t, hash, "m=", "no moves of the lesson before")
	assert.Contains(t, text(t, ctx, "#lesson-text h1"), "3.")
	assert.Greater(t, eval[int](t, ctx, `window.idemlabAnswers`), answers+4, "the key was pressed before the replay was over")
	// Under the new lesson's heading the bench never drew the old one's race.
	for _, drawn := range eval[[]string](t, ctx, `window.idemlabDrawn`) {
		if strings.HasPrefix(drawn, "3.") {
			assert.Equal(t, "3. step 0", drawn, "drawn under lesson 3's heading")
		}
	}
}

func atoi(t testing.TB, s string) int {
	var n int
	_, err := fmt.Sscan(s, &n)
	require.NoError(t, err)
	return n
}

// TestStudentInjectsAFault makes a client give up by hand on the full
// engine: lesson 6's first lane times out while its payment runs, and the
// page marks the lane info, in words: the client timed out but the server
// committed.
func TestStudentInjectsAFault(t *testing.T) {
	t.Parallel()
	ts := playground(t, playgroundDir(t))
	ctx := tab(t)
	openLesson(t, ctx, ts.URL, "06-scoped")
	openScenario(t, ctx, "s3", false)
	lane := `#race [data-row="attempt"][data-lane="G1"]`
	for i := 1; i < 40; i++ {
		if eval[string](t, ctx, `document.querySelector('#race [data-mark="next"][data-lane="G1"]')?.dataset.phase || ''`) == "execute" {
			break
		}
		run(t, ctx, click(`#btn-step`),
			waitJS(`document.querySelector('#step-count').dataset.step === '`+fmt.Sprint(i)+`'`))
	}
	assert.Contains(t, text(t, ctx, "#btn-step"), "G1", "the lane at its payment moves next")
	run(t, ctx,
		chromedp.SetValue(chromedp.CSS(`#fault-kind`), "client-timeout"),
		focus(`#bench`),
		chromedp.KeyEvent("f"),
		waitJS(`location.hash.includes('G1!client-timeout')`))
	runToEnd(t, ctx)
	assert.Equal(t, "info", attr(t, ctx, lane, "data-verdict"))
	assert.Contains(t, eval[string](t, ctx, `document.querySelector('`+lane+` [data-answer]').textContent`), "but paid",
		"the row says in words that the money moved although the client heard nothing")
	// The lane's last mark shows its verdict in words beside the SQL.
	run(t, ctx, click(lane+` [data-mark][data-phase="respond"]`),
		waitJS(`document.querySelector('#last-step .verdict') !== null`))
	assert.Contains(t, text(t, ctx, "#last-step .verdict"), "timed out, but the server committed")
	assert.Equal(t, "info", strings.ToLower(text(t, ctx, "#last-step .verdict-word")), "the verdict is a word, not a colour alone")
	assert.Equal(t, "0", duplicates(t, ctx, "#summary"))
}

// TestThemeAndKeysHelp checks the page's own controls: the theme toggles
// and is remembered, and the key list opens with "?".
func TestThemeAndKeysHelp(t *testing.T) {
	ts := playground(t, playgroundDir(t))
	ctx := tab(t)
	openLesson(t, ctx, ts.URL, "01-naive")
	before := attr(t, ctx, "html", "data-theme")
	run(t, ctx, click(`#theme-toggle`))
	after := attr(t, ctx, "html", "data-theme")
	assert.NotEqual(t, before, after)
	run(t, ctx, chromedp.Reload(), waitJS(`document.body.dataset.interactive === 'true'`))
	assert.Equal(t, after, attr(t, ctx, "html", "data-theme"), "the theme is remembered")
	run(t, ctx, focus(`#bench`), chromedp.KeyEvent("?"),
		waitJS(`!document.querySelector('#keys-help').hidden`))
	assert.Contains(t, text(t, ctx, "#keys-help"), "step the lane that moves next")
	assert.True(t, eval[bool](t, ctx, `(() => { const r = document.querySelector('#keys-help').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()`), "the key list shows in the window wherever the page is scrolled")
}

// TestLessonInKorean asks for the Korean lesson with ?lang=ko: the lesson
// and the player's words are Korean, and the bench plays the same.
func TestLessonInKorean(t *testing.T) {
	t.Parallel()
	ts := playground(t, playgroundDir(t))
	var index []struct {
		ID    string   `json:"id"`
		Langs []string `json:"langs"`
	}
	getJSON(t, ts.URL+"/api/lessons.json", &index)
	if len(index) == 0 || !slices.Contains(index[0].Langs, "ko") {
		t.Skip("the first lesson has no Korean translation")
	}
	ctx := tab(t)
	run(t, ctx,
		chromedp.Navigate(ts.URL+"/?lang=ko#lesson="+index[0].ID),
		waitJS(`document.body.dataset.interactive === 'true'`))
	assert.Equal(t, "ko", attr(t, ctx, "html", "lang"))
	assert.Regexp(t, `\p{Hangul}`, text(t, ctx, "#lesson-text"))
	assert.Equal(t, "ko", eval[string](t, ctx, `document.querySelector('#lang-select').value`))
	assert.Contains(t, text(t, ctx, "#btn-reset"), "처음부터", "the player's own words are Korean too")
	runToEnd(t, ctx)
	// The bench played the lesson's first scenario as the page opens it:
	// the Korean page shows what that scenario's first goal expects, the
	// same verdict the English page shows.
	first := fetchLessons(t, ts.URL)[0].Scenarios[0]
	require.NotEmpty(t, first.Goals)
	g := first.Goals[0]
	require.Empty(t, g.Policy, "the first goal plays the scenario as it opens")
	assert.Equal(t, first.ID, attr(t, ctx, "#lesson-text .scenario.active", "data-scenario"))
	require.NotEmpty(t, g.Rule)
	// The words are Korean; the attributes are the same on both pages.
	want := map[string]string{"hold": "true", "break": "false"}[g.Expect]
	assert.Equal(t, want, attr(t, ctx, `#rules li[data-rule="`+g.Rule+`"]`, "data-ok"), "%s is shown %s", g.Rule, g.Expect)
	if g.Expect == "hold" {
		assert.Equal(t, "0", duplicates(t, ctx, "#summary"))
	} else {
		assert.NotEqual(t, "0", duplicates(t, ctx, "#summary"))
	}
}

// policyText is how the bench names a sandbox policy: knob=value, in the
// order the page received them (one knob per goal in every lesson).
func policyText(p map[string]string) string {
	var parts []string
	for k, v := range p {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ", ")
}

// choose picks an option in a <select> as a student does, firing change.
func choose(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](`(() => { const s = document.querySelector(`+quoteJS(sel)+`); s.value = `+quoteJS(value)+
			`; s.dispatchEvent(new Event('change', { bubbles: true })); return s.value === `+quoteJS(value)+`; })()`)(ctx, tgt)
		return err
	})
}

// TestSandboxFlipsOneKnobAtATime opens lesson 2's fixed rung, sees the race
// hold, then flips the claim knob in the sandbox and sees it break; flipping
// another knob puts the claim back, and the level's policy returns on
// request.
func TestSandboxFlipsOneKnobAtATime(t *testing.T) {
	t.Parallel()
	ts := playground(t, playgroundDir(t))
	ctx := tab(t)
	openLesson(t, ctx, ts.URL, "02-unique")
	openScenario(t, ctx, "s3", false)
	runToEnd(t, ctx)
	assertRuleShown(t, ctx, "#rules", "#summary", "hold", "one-transfer-per-intent")

	run(t, ctx, click(`#sandbox > summary`),
		choose(`#knobs select[data-knob="claim"]`, "check-then-insert"),
		waitJS(`document.querySelector('#step-count').dataset.step === '0' && !!document.querySelector('#bench-meta .sandboxed')`))
	assert.Equal(t, "true", attr(t, ctx, `#knobs .knob[data-knob="claim"]`, "data-changed"))
	assert.Contains(t, text(t, ctx, "#bench-meta"), "claim=check-then-insert")
	run(t, ctx, waitJS(`decodeURIComponent(location.hash).includes('"claim":"check-then-insert"')`)) // the sandbox policy is in the URL
	runToEnd(t, ctx)
	assertRuleShown(t, ctx, "#rules", "#summary", "break", "one-transfer-per-intent")

	run(t, ctx, choose(`#knobs select[data-knob="replay"]`, "recompute"),
		waitJS(`document.querySelector('#bench-meta .sandboxed')?.textContent.includes('replay=recompute')`))
	assert.Equal(t, "false", attr(t, ctx, `#knobs .knob[data-knob="claim"]`, "data-changed"), "one knob at a time: the claim is back")
	assert.NotContains(t, text(t, ctx, "#bench-meta"), "claim=")

	run(t, ctx, click(`#btn-sandbox-reset`),
		waitJS(`!document.querySelector('#bench-meta .sandboxed')`))
	runToEnd(t, ctx)
	assertRuleShown(t, ctx, "#rules", "#summary", "hold", "one-transfer-per-intent")
}

// TestThemeFollowsTheSystemUntilChosen: the player and the lab follow the
// system's light or dark as it changes while the page is open (a student
// switched it and saw nothing until a reload), until the person chooses a
// theme with the button: then the choice stays.
func TestThemeFollowsTheSystemUntilChosen(t *testing.T) {
	t.Parallel()
	ts := playground(t, playgroundDir(t))
	for _, page := range []struct {
		name string
		open func(ctx context.Context)
	}{
		{"player", func(ctx context.Context) { openLesson(t, ctx, ts.URL, "01-naive") }},
		{"lab", func(ctx context.Context) {
			run(t, ctx, chromedp.Navigate(ts.URL+"/lab.html"), waitJS(`document.body.dataset.ready === 'true'`))
		}},
	} {
		t.Run(page.name, func(t *testing.T) {
			ctx, done := ownTab(t, chromedp.WithNewBrowserContext())
			t.Cleanup(done)
			run(t, ctx, preferScheme("light"))
			page.open(ctx)
			require.Equal(t, "light", attr(t, ctx, "html", "data-theme"))
			run(t, ctx, preferScheme("dark"), waitJS(`document.documentElement.dataset.theme === 'dark'`))
			run(t, ctx, preferScheme("light"), waitJS(`document.documentElement.dataset.theme === 'light'`))
			// Chosen with the button (dark), the theme stays whatever the
			// system does next.
			run(t, ctx, click(`#theme-toggle`))
			require.Equal(t, "dark", attr(t, ctx, "html", "data-theme"))
			run(t, ctx, preferScheme("dark"), preferScheme("light"))
			assert.Equal(t, "dark", eval[string](t, ctx, `new Promise((r) => setTimeout(() => r(document.documentElement.dataset.theme), 200))`), "the person's choice stays")
		})
	}
}
