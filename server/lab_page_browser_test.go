package server_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/docs"
	"idemlab/lab"
	"idemlab/lab/handlers"
	"idemlab/web"
)

// labTab opens the lab page ("Your endpoint") in a browser context of its
// own (its own storage) and waits until its code is shown. The code editor
// is bundled by make editor, which make test runs first; without it the
// page falls back on plain text boxes, which is not what these tests judge.
func labTab(t *testing.T, base, query string) context.Context {
	t.Helper()
	if _, err := fs.Stat(web.Files, web.EditorName); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the lab's code editor (web/%s) is not built: make test runs make editor first", web.EditorName)
		}
		t.Skipf("the lab's code editor (web/%s) is not built: run make editor", web.EditorName)
	}
	ctx, done := ownTab(t, chromedp.WithNewBrowserContext())
	t.Cleanup(done)
	run(t, ctx, chromedp.EmulateViewport(1440, 900), chromedp.Navigate(base+"/lab.html"+query),
		waitJS(`document.body.dataset.ready === 'true'`))
	return ctx
}

// labRunnerReady waits until the lab page's runner has started and loaded
// the code in the editor (its scenarios are listed), or has said why not.
func labRunnerReady(t *testing.T, ctx context.Context) {
	t.Helper()
	run(t, ctx, waitJS(`(document.body.dataset.runner === 'ready' && document.getElementById('lab-scenario').options.length > 0) || document.body.dataset.runner === 'failed' || document.body.dataset.labActs !== undefined`))
	require.Positive(t, eval[int](t, ctx, `document.getElementById('lab-scenario').options.length`),
		"the runner did not start or load the code: %s (runner %s)", text(t, ctx, "#lab-run-status"), attr(t, ctx, "body", "data-runner"))
}

// handlerText is the text of the handler's editor.
const handlerText = `document.getElementById('handler-box').editor.text()`

// TestLabPageKeepsTheStudentsCode types into the handler's editor from the
// keyboard and follows the code: kept in the browser across a reload,
// carried to the next rung, sent in a link that another browser opens, and
// set aside (not lost) when a link opens over the student's own code.
func TestLabPageKeepsTheStudentsCode(t *testing.T) {
	ts := playground(t, playgroundDir(t))
	ctx := labTab(t, ts.URL, "")
	assert.Equal(t, "codemirror", attr(t, ctx, "body", "data-editor"))
	assert.Contains(t, eval[string](t, ctx, handlerText), "async function transfer(req, db, pay)", "the page starts from the naive handler")
	assert.Equal(t, "naive", attr(t, ctx, "body", "data-rung"))

	// Typed at the end of the handler, as a student types.
	run(t, ctx, chromedp.Click(`#handler-box .cm-content`, chromedp.NodeVisible), chromedp.KeyEvent(kb.End),
		chromedp.KeyEvent("\n// mine: claim the key first"))
	require.Contains(t, eval[string](t, ctx, handlerText), "// mine: claim the key first")

	// Tab leaves the editor: the box never traps the keyboard.
	run(t, ctx, chromedp.KeyEvent(kb.Tab))
	assert.False(t, eval[bool](t, ctx, `document.querySelector('#handler-box').contains(document.activeElement)`),
		"Tab moves the focus out of the editor")
	assert.NotContains(t, eval[string](t, ctx, handlerText), "\t// mine", "Tab typed nothing into the code")

	// Kept across a reload (the save follows the last key within a moment).
	run(t, ctx, waitJS(`(localStorage.getItem('idemlab.lab.naive') || '').includes('// mine')`), chromedp.Reload(),
		waitJS(`document.body.dataset.ready === 'true'`))
	assert.Contains(t, eval[string](t, ctx, handlerText), "// mine: claim the key first")

	// The next rung starts from the code of the rung before it, and says
	// what it adds.
	run(t, ctx, click(`#rung-list button[data-rung=unique]`), waitJS(`document.body.dataset.rung === 'unique'`))
	assert.Contains(t, eval[string](t, ctx, handlerText), "// mine: claim the key first")
	assert.Contains(t, text(t, ctx, "#rung-goal"), "INSERT")
	assert.Equal(t, "step", attr(t, ctx, `#rung-list button[data-rung=unique]`, "aria-current"))

	// A link carries the code to another browser (its own storage).
	run(t, ctx, click(`#btn-share`))
	if err := chromedp.Do(ctx, waitJS(`document.getElementById('share-link').value.includes('#code=')`)); err != nil {
		// Say what the page shows: a click that went elsewhere (what stands
		// at the button's middle), or a share that never finished.
		t.Fatalf("no link after the click: %v; status %q, share box hidden %v, at the button's middle: %s", err,
			text(t, ctx, "#lab-status"), eval[bool](t, ctx, `document.getElementById('share-box').hidden`),
			eval[string](t, ctx, `(() => { const r = document.getElementById('btn-share').getBoundingClientRect();
				const e = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2); return e ? e.outerHTML.slice(0, 120) : 'nothing'; })()`))
	}
	link := eval[string](t, ctx, `document.getElementById('share-link').value`)
	other, done := ownTab(t, chromedp.WithNewBrowserContext())
	defer done()
	run(t, other, chromedp.Navigate(link), waitJS(`document.body.dataset.ready === 'true'`))
	assert.Contains(t, eval[string](t, other, handlerText), "// mine: claim the key first")
	assert.Equal(t, "unique", attr(t, other, "body", "data-rung"))
	assert.True(t, eval[bool](t, other, `document.getElementById('btn-restore').hidden`), "nothing of this browser's was set aside")

	// The same link opened over other code of that rung (pasted into the
	// same tab: only the hash changes) sets that code aside; "Bring back my
	// code" restores it.
	run(t, ctx, chromedp.Click(`#handler-box .cm-content`, chromedp.NodeVisible), chromedp.KeyEvent(kb.End),
		chromedp.KeyEvent("\n// second thoughts"),
		waitJS(`(localStorage.getItem('idemlab.lab.unique') || '').includes('second thoughts')`),
		chromedp.Navigate(link), waitJS(`document.getElementById('lab-status').textContent.includes('set aside')`))
	assert.NotContains(t, eval[string](t, ctx, handlerText), "second thoughts")
	run(t, ctx, click(`#btn-restore`), waitJS(`document.getElementById('btn-restore').hidden`))
	assert.Contains(t, eval[string](t, ctx, handlerText), "second thoughts")
}

// TestLabPageOpensAHandlerFile opens a handler file with its schema (as
// idemlab lab handler writes one) into the two boxes, refuses a file that
// holds no handler, and writes the two boxes back into the same file.
func TestLabPageOpensAHandlerFile(t *testing.T) {
	ts := playground(t, playgroundDir(t))
	ctx := labTab(t, ts.URL, "")
	// The runner loads the code once it has started, and marks what it
	// cannot parse: the marks below are the editor's own, as the student
	// types, so the runner has loaded the naive handler first.
	labRunnerReady(t, ctx)
	dir := t.TempDir()
	good := filepath.Join(dir, "mine.js")
	src := "// a student's handler\nconst schema = `\nCREATE TABLE idem_keys (k TEXT PRIMARY KEY, note TEXT DEFAULT 'a \\` tick');\n`;\n\nasync function transfer(req, db, pay) {\n  return lab.json(201, {});\n}\n"
	require.NoError(t, os.WriteFile(good, []byte(src), 0o644))
	run(t, ctx, chromedp.SetUploadFiles(`#file-input`, []string{good}), waitJS(`document.getElementById('lab-status').textContent.includes('mine.js')`))
	assert.Contains(t, eval[string](t, ctx, handlerText), "return lab.json(201, {});")
	assert.NotContains(t, eval[string](t, ctx, handlerText), "CREATE TABLE", "the schema went to its own box")
	schema := eval[string](t, ctx, `document.getElementById('schema-box').editor.text()`)
	assert.Equal(t, "CREATE TABLE idem_keys (k TEXT PRIMARY KEY, note TEXT DEFAULT 'a ` tick');", schema)
	// Written back, the file is the one opened (its first comment moves
	// below the schema).
	back := eval[string](t, ctx, `import('./lab-file.js').then((m) => m.compose(`+handlerText+`, document.getElementById('schema-box').editor.text()))`)
	assert.Contains(t, back, "const schema = `\nCREATE TABLE idem_keys (k TEXT PRIMARY KEY, note TEXT DEFAULT 'a \\` tick');\n`;")
	assert.Contains(t, back, "async function transfer(req, db, pay) {")

	// A syntax error is marked at its line as the student types, before
	// anything runs; the file opened again clears it.
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('handler-box').editor.setText(
		'async function transfer(req, db, pay) {\n  const x = ;\n  return lab.json(201, {});\n}\n')`),
		waitJS(`document.getElementById('handler-box').editor.errors().length > 0`))
	assert.Equal(t, 2, eval[int](t, ctx, `document.getElementById('handler-box').editor.errors()[0].line`), "the error is marked on its line")
	assert.Contains(t, eval[string](t, ctx, `document.getElementById('handler-box').editor.errors()[0].message`), "Syntax error")
	run(t, ctx, chromedp.SetUploadFiles(`#file-input`, []string{good}), waitJS(`document.getElementById('handler-box').editor.errors().length === 0`))

	bad := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(bad, []byte("def transfer(req): pass\n"), 0o644))
	run(t, ctx, chromedp.SetUploadFiles(`#file-input`, []string{bad}), waitJS(`document.getElementById('lab-status').textContent.includes('could not be opened')`))
	assert.Contains(t, text(t, ctx, "#lab-status"), "async function transfer")
	assert.Contains(t, eval[string](t, ctx, handlerText), "return lab.json(201, {});", "a refused file changes nothing")
}

// TestLabPageInKorean shows the page's own words in Korean, and is
// accessible in both languages and themes (axe-core).
func TestLabPageInKorean(t *testing.T) {
	ts := playground(t, playgroundDir(t))
	ctx := labTab(t, ts.URL, "?lang=ko")
	assert.Equal(t, "ko", attr(t, ctx, "html", "lang"))
	assert.Equal(t, "나의 엔드포인트", text(t, ctx, "#lab-title"))
	assert.Contains(t, text(t, ctx, "#rung-goal"), "출발점")
	// The rungs are named in Korean (their files' names beside, in the title).
	assert.Equal(t, "2. 키 선점", text(t, ctx, `#rung-list button[data-rung=unique]`))
	assert.Equal(t, "4. 처리 중", text(t, ctx, `#rung-list button[data-rung=in-progress]`))
	assert.Equal(t, "1단계: 키 없음 (naive)", text(t, ctx, "#rung-title"))
	assert.NotContains(t, text(t, ctx, "main"), "순진")
	assert.True(t, strings.HasSuffix(attr(t, ctx, "#to-lessons", "href"), "?lang=ko"), "the lessons open in Korean too")
	// With the API reference and the rules open: their tables and lists
	// are part of the page a student reads.
	run(t, ctx, click("#lab-api summary"), waitJS(`document.body.dataset.api === 'shown'`),
		click("#lab-rules-all summary"), waitJS(`document.body.dataset.rules === 'shown'`))
	script := axeScript(t)
	for _, theme := range []string{"light", "dark"} {
		run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.documentElement.dataset.theme = '`+theme+`'`))
		if v := axeViolations(t, ctx, script); len(v) > 0 {
			t.Errorf("the lab page in Korean, %s theme: %d accessibility violations:\n%s", theme, len(v), strings.Join(v, "\n"))
		}
	}
}

// BenchmarkLabPageInteractive opens the lab page and the playground's
// first lesson cold (a browser context of its own each time, no cache),
// one after the other, and reports the medians: the lab page until its
// code is in the editor (idemlab-lab-ready), the playground until its
// first bench steps (idemlab-interactive), and the difference (the issue's
// budget: the lab page ready at most 1 s after the playground).
func BenchmarkLabPageInteractive(b *testing.B) {
	ts := playground(b, playgroundDir(b))
	var labMS, playMS []float64
	open := func(path, ready, mark string) float64 {
		ctx, closeTab := ownTab(b, chromedp.WithNewBrowserContext())
		defer closeTab()
		run(b, ctx,
			chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
				_, err := cdp.Call(ctx, tgt, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true})
				return err
			}),
			chromedp.Navigate(ts.URL+path), waitJS(ready))
		return eval[float64](b, ctx, `performance.getEntriesByName('`+mark+`')[0].startTime`)
	}
	for i := 0; i < max(b.N, 6); i++ {
		labMS = append(labMS, open("/lab.html", `document.body.dataset.ready === 'true'`, "idemlab-lab-ready"))
		playMS = append(playMS, open("/#lesson=01-naive", `document.body.dataset.interactive === 'true'`, "idemlab-interactive"))
		b.StopTimer()
		time.Sleep(time.Second)
		b.StartTimer()
	}
	sort.Float64s(labMS)
	sort.Float64s(playMS)
	b.ReportMetric(labMS[len(labMS)/2], "ms-lab-ready")
	b.ReportMetric(playMS[len(playMS)/2], "ms-playground-interactive")
	b.ReportMetric(labMS[len(labMS)/2]-playMS[len(playMS)/2], "ms-lab-after-playground")
}

// BenchmarkLabEditorSize reports the lab's code editor as sent: brotli,
// gzip and raw (the budget: 300 KB brotli).
func BenchmarkLabEditorSize(b *testing.B) {
	var sizes [3]int64
	for i := 0; i < b.N; i++ {
		for k, name := range []string{web.EditorName + ".br", web.EditorName + ".gz", web.EditorName} {
			info, err := fs.Stat(web.Files, name)
			if err != nil {
				b.Skipf("the editor is not built (make editor): %v", err)
			}
			sizes[k] = info.Size()
		}
	}
	b.ReportMetric(float64(sizes[0])/1024, "KB-brotli")
	b.ReportMetric(float64(sizes[1])/1024, "KB-gzip")
	b.ReportMetric(float64(sizes[2])/1024, "KB-raw")
}

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
	ts := playground(t, playgroundDir(t))
	ctx := labTab(t, ts.URL, "")
	labRunnerReady(t, ctx)

	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "simultaneous-retries"))
	act(t, ctx, `#btn-lab-start`)
	require.Equal(t, 2, eval[int](t, ctx, `document.querySelectorAll('#lab-lanes .lab-lane').length`))
	assert.Contains(t, text(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] .lab-sql`), "SELECT balance FROM accounts", "the statement about to run is shown")
	stepAll(t, ctx)
	assert.Equal(t, "false", attr(t, ctx, `#lab-verdict li[data-rule=one-transfer-per-intent]`, "data-ok"), "both retries paid")
	// One verdict, under its heading; the status line only says the run
	// has ended.
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
	// What to change, as idemlab grade says it (the checker in Go): rule
	// 1's fix, since two identical payments tell no finer cause.
	assert.Contains(t, text(t, ctx, `#lab-grade tr[data-scenario=simultaneous-retries] .lab-fix`), lab.RuleFix(lab.RuleOneTransfer.Name))
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

	// A handler that never reaches its next step is stopped; the page
	// answers on.
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('handler-box').editor.setText(
		'async function transfer(req, db, pay) {\n  await db.get("SELECT 1");\n  while (true) {}\n}\n')`))
	act(t, ctx, `#btn-lab-start`)
	act(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] button.primary`)
	assert.True(t, strings.HasPrefix(text(t, ctx, "#lab-run-status"), "Stopped"), text(t, ctx, "#lab-run-status"))
	assert.False(t, eval[bool](t, ctx, `document.getElementById('btn-lab-start').disabled`), "the page answers after the stop")
}

// scopedHandler is the shipped scoped handler file.
func scopedHandler(t *testing.T) string {
	t.Helper()
	src, err := handlers.Source("scoped")
	require.NoError(t, err)
	return string(src)
}

// TestLabPageByKeyboard plays a scenario from the keyboard: Enter on Start,
// then Enter on an attempt's step again and again. The focus stays
// on a step button after every step (the cards are drawn anew), ← and →
// go from one attempt's step to the other's, and once every attempt has
// ended the focus is on the verdict, where another Enter starts nothing
// over. An attempt that waits for the write lock has a step that says so
// and runs nothing.
func TestLabPageByKeyboard(t *testing.T) {
	ts := playground(t, playgroundDir(t))
	ctx := labTab(t, ts.URL, "")
	labRunnerReady(t, ctx)
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
	assert.Equal(t, "btn-lab-start", focused(), "the focus stays on Start")

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

// TestLabPageGradesEveryHandler puts every reference and mistake handler
// in the page's editor and presses "Check every scenario", as a student
// would: the rules the page shows broken are what idemlab grade finds
// (the rung's table in docs/lab-contract.md, the mistake's own rules), as
// the browser can see them (graderView), and every cause the page names
// is one the grader names. Graded on its own rung, each rung's handler
// passes that rung (what it still breaks is a later rung's); each mistake,
// made on the top rung, does not pass it.
func TestLabPageGradesEveryHandler(t *testing.T) {
	ts := playground(t, playgroundDir(t))
	ctx := labTab(t, ts.URL, "")
	labRunnerReady(t, ctx)
	names := map[string]string{}
	for _, r := range lab.Rules() {
		names[strconv.Itoa(r.N)] = r.Name
	}
	grade := func(name, rung string) (map[string]bool, []string) {
		t.Helper()
		if attr(t, ctx, "body", "data-rung") != rung {
			goToRung(t, ctx, rung)
		}
		useHandler(t, ctx, name)
		act(t, ctx, `#btn-lab-grade`)
		require.Equal(t, rung, attr(t, ctx, "#lab-grade", "data-rung"))
		// The grader cannot crash an endpoint: a crash's retry ten
		// minutes later that finds the key past a short retention and pays
		// again (rules 1 and 8, caused by the retention) is the browser's
		// alone; the grader judges that retention as rule 7.
		rows := eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll('#lab-grade tr[data-scenario]')].map((r) => [r.dataset.scenario, r.dataset.ruleCauses || '']))`)
		broken := map[string]bool{}
		for sc, rules := range rows {
			for _, nc := range strings.Split(rules, ",") {
				n, cause, _ := strings.Cut(nc, ":")
				if n == "" || strings.HasPrefix(sc, "crash-") && cause == lab.CauseShortRetention && n != "7" {
					continue
				}
				broken[names[n]] = true
			}
		}
		causes := eval[[]string](t, ctx, `[...new Set([...document.querySelectorAll('#lab-grade .lab-cause:not([data-note])')].map((e) => e.dataset.cause))]`)
		return broken, causes
	}
	for _, name := range handlers.Rungs() {
		broken, causes := grade(name, name)
		assert.Equal(t, "true", attr(t, ctx, "#lab-grade", "data-rung-done"), "%s passes its own rung: %s", name, text(t, ctx, "#lab-grade .lab-rung-sum"))
		assert.Zero(t, countIn(t, ctx, `#lab-grade tr[data-expected=false]`), "%s: every break is a later rung's", name)
		if name == "unique" {
			// Said plainly, with what the next rung adds and a way there.
			assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "This rung, rung 2 (unique), is done")
			assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "Left for the later rungs (broken, or rule 7 unknown): rules 1, 2, 3")
			// Rule 1 breaks there only when the retry ten minutes after a
			// crash finds the key past its 300 s retention: the scoped
			// rung's business.
			assert.Contains(t, text(t, ctx, `#lab-grade tr[data-scenario=crash-then-late-retry]`), "keep keys for longer than the clients retry")
			assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-next"), "Next, rung 3 (fingerprint): Tell a retry from a different request")
			assert.Equal(t, "true", attr(t, ctx, `#lab-grade tr[data-scenario=corrected-amount]`, "data-expected"))
			assert.Contains(t, text(t, ctx, `#lab-grade tr[data-scenario=corrected-amount]`), "expected at this rung")
			run(t, ctx, click("#btn-lab-next-rung"), waitJS(`document.body.dataset.rung === 'fingerprint'`))
			assert.Equal(t, "rung-title", eval[string](t, ctx, `document.activeElement.id`))
		}
		assert.Equal(t, sorted(handlers.RungBreaks(name)), nonNil(graderView(t, name, broken)), "%s: the page's grade against the grader's", name)
		assert.Equal(t, name == "naive", broken[ruleOneCharge], "%s: rule 8", name)
		t.Logf("%s: %v, causes %v", name, sorted(mapKeys(broken)), causes)
	}
	for _, m := range handlers.Mistakes() {
		broken, causes := grade(m.Name, m.From)
		assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"), "%s does not pass %s: %s", m.Name, m.From, text(t, ctx, "#lab-grade .lab-rung-sum"))
		assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "This rung, rung 6 (scoped), is not done yet", m.Name)
		got := graderView(t, m.Name, broken)
		assert.Subset(t, got, m.Breaks, "%s: the grader's every-time break is shown", m.Name)
		assert.Subset(t, append(slices.Clone(m.Breaks), m.MayAlsoBreak...), got, "%s: nothing the grader does not blame", m.Name)
		assert.Subset(t, m.Causes, causes, "%s: the page names no cause the grader does not", m.Name)
		t.Logf("%s: %v, causes %v", m.Name, got, causes)
	}
}

func mapKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// apiSectionTitles are the "##" headings of the lab's API reference in
// lang (docs.HandlerAPI), as the page shows them: without backticks.
func apiSectionTitles(t *testing.T, lang string) []string {
	t.Helper()
	src, err := docs.HandlerAPI(lang)
	require.NoError(t, err)
	var titles []string
	for _, m := range regexp.MustCompile(`(?m)^## (.+)$`).FindAllStringSubmatch(string(src), -1) {
		titles = append(titles, strings.ReplaceAll(m[1], "`", ""))
	}
	require.NotEmpty(t, titles)
	return titles
}

// shownSectionTitles are the section headings of the API reference the
// page shows.
const shownSectionTitles = `[...document.querySelectorAll('#lab-api-body h2')].map((h) => h.textContent)`

// TestLabPageShowsTheAPI: the student's handler is written against req,
// db, pay and lab, and the page that holds the editor says what they are
// (docs/lab-handler.md's API sections), once opened, in the page's
// language: the Korean page shows docs/lab-handler.ko.md, with the same
// names and code.
func TestLabPageShowsTheAPI(t *testing.T) {
	ts := playground(t, playgroundDir(t))
	ctx := labTab(t, ts.URL, "")
	assert.Equal(t, "The API: req, db, pay and lab", text(t, ctx, "#lab-api summary"))
	assert.Empty(t, text(t, ctx, "#lab-api-body"), "fetched when opened, not before")
	run(t, ctx, click("#lab-api summary"), waitJS(`document.body.dataset.api === 'shown'`))
	body := text(t, ctx, "#lab-api-body")
	apiNames := []string{"req.customer", "db.run(sql, ...params)", "ConstraintError", "pay({ from, to, amount, key })", "lab.parseKey(raw)", "lab.canonical(body)"}
	for _, want := range apiNames {
		assert.Contains(t, body, want)
	}
	assert.Equal(t, apiSectionTitles(t, "en"), eval[[]string](t, ctx, shownSectionTitles))
	assert.NotRegexp(t, `\p{Hangul}`, body, "the English page shows the English")
	assert.Zero(t, countIn(t, ctx, "#lab-api-note"), "no note on the reference's language")
	assert.LessOrEqual(t, eval[int](t, ctx, `document.documentElement.scrollWidth`), 1440, "the reference wraps")

	// The rules the grade names by number, listed beside the race.
	run(t, ctx, click("#lab-rules-all summary"), waitJS(`document.body.dataset.rules === 'shown'`))
	assert.Equal(t, len(lab.Rules()), countIn(t, ctx, "#lab-rules-list li"))
	assert.Equal(t, lab.RuleOneTransfer.Title, text(t, ctx, `#lab-rules-list li[data-rule=one-transfer-per-intent]`))
	assert.Equal(t, "8", attr(t, ctx, `#lab-rules-list li[data-rule=one-charge-per-intent]`, "value"))

	ko := labTab(t, ts.URL, "?lang=ko")
	run(t, ko, click("#lab-rules-all summary"), waitJS(`document.body.dataset.rules === 'shown'`))
	assert.Equal(t, lab.RuleOneTransfer.TitleKo, text(t, ko, `#lab-rules-list li[data-rule=one-transfer-per-intent]`))
	run(t, ko, click("#lab-api summary"), waitJS(`document.body.dataset.api === 'shown'`))
	koTitles := apiSectionTitles(t, "ko")
	assert.Equal(t, koTitles, eval[[]string](t, ko, shownSectionTitles), "the Korean reference's sections")
	assert.Equal(t, "파일", koTitles[0])
	koBody := text(t, ko, "#lab-api-body")
	assert.Contains(t, koBody, "호출 하나하나가 스텝입니다")
	for _, want := range apiNames {
		assert.Contains(t, koBody, want, "the names and code are the English's")
	}
	assert.Zero(t, countIn(t, ko, "#lab-api-note"), "no note that the reference is in English")
	assert.LessOrEqual(t, eval[int](t, ko, `document.documentElement.scrollWidth`), 1440, "the Korean reference wraps")
}

// setCode puts a handler and its tables into the page's two editors.
func setCode(t *testing.T, ctx context.Context, handler, schema string) {
	t.Helper()
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('handler-box').editor.setText(`+quoteJS(handler)+`);
		document.getElementById('schema-box').editor.setText(`+quoteJS(schema)+`)`))
}

// TestLabPageShowsErrorsAtTheirLine: a handler that does not parse, and
// one whose statement SQLite refuses, are each said at their line, in the
// handler box's numbering (the tables come first in the file the runner
// runs), beside the editor and marked in it.
func TestLabPageShowsErrorsAtTheirLine(t *testing.T) {
	ts := playground(t, playgroundDir(t))
	ctx := labTab(t, ts.URL, "")
	labRunnerReady(t, ctx)
	const schema = "CREATE TABLE idem_keys (\n  k TEXT PRIMARY KEY\n);"
	marked := `document.getElementById('handler-box').editor.errors().map((e) => e.line)`

	// A missing ")" on line 4.
	setCode(t, ctx, "async function transfer(req, db, pay) {\n  const t = lab.parseTransfer(req.body);\n  await db.get('SELECT 1');\n  return lab.json(201, {ok: true}\n}\n", schema)
	act(t, ctx, `#btn-lab-start`)
	assert.Contains(t, text(t, ctx, "#lab-run-status"), "line 4: SyntaxError")
	assert.Equal(t, "4", attr(t, ctx, "#handler-errors p", "data-line"), "said beside the editor")
	assert.Contains(t, text(t, ctx, "#handler-errors"), "Line 4")
	assert.Contains(t, text(t, ctx, "#handler-errors"), "SyntaxError")
	assert.Contains(t, eval[[]int](t, ctx, marked), 4, "marked in the editor")
	// Its button takes the cursor to the line.
	run(t, ctx, click("#handler-errors button"))
	assert.True(t, eval[bool](t, ctx, `document.querySelector('#handler-box').contains(document.activeElement)`))
	assert.Equal(t, 4, eval[int](t, ctx, `(() => { const v = document.getElementById('handler-box').editor.view; return v.state.doc.lineAt(v.state.selection.main.head).number; })()`))

	// An unclosed brace is said at the last line.
	setCode(t, ctx, "async function transfer(req, db, pay) {\n  if (req.key) {\n  return lab.json(201, {});\n}\n", schema)
	act(t, ctx, `#btn-lab-start`)
	assert.Contains(t, text(t, ctx, "#lab-run-status"), "SyntaxError")
	assert.Equal(t, "4", attr(t, ctx, "#handler-errors p", "data-line"))

	// A table that does not exist: SQLite's error, at the line of the call.
	setCode(t, ctx, "async function transfer(req, db, pay) {\n  const t = lab.parseTransfer(req.body);\n  const row = await db.get('SELECT balance FROM acounts WHERE id = ?', t.from);\n  return lab.json(201, {ok: true});\n}\n", schema)
	assert.Empty(t, text(t, ctx, "#handler-errors"), "an edit clears what was said of older code")
	act(t, ctx, `#btn-lab-start`)
	act(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] button.primary`)
	assert.Contains(t, text(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] .lab-end`), "at line 3: no such table: acounts")
	assert.Equal(t, "3", attr(t, ctx, "#handler-errors p", "data-line"))
	assert.Contains(t, text(t, ctx, "#handler-errors"), "a1: SQLError: no such table")
	assert.Equal(t, []int{3}, eval[[]int](t, ctx, marked))
}

// useHandler puts one of the shipped handlers (lab/handlers) into the
// page's editors.
func useHandler(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	src, err := handlers.Source(name)
	require.NoError(t, err)
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`import('./lab-file.js').then((m) => {
		const c = m.split(`+quoteJS(string(src))+`);
		document.getElementById('handler-box').editor.setText(c.handler);
		document.getElementById('schema-box').editor.setText(c.schema);
	})`, chromedp.EvalAwaitPromise))
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
	assert.Equal(t, "true", attr(t, ctx, `#lab-race-view svg [data-row=attempt][data-lane=a2]`, "data-winner"),
		"a2's transfer is the one in the ledger, though a1 was charged first")
	legend := eval[string](t, ctx, labLegend)
	assert.Contains(t, legend, "winner: its transfer is first in the ledger")
	assert.Contains(t, legend, "the key row’s state is completed, and it stores the answer’s status")
	// The axis counts the runner's steps, as the explorer does.
	ticks := eval[[]string](t, ctx, `[...document.querySelectorAll('#lab-race-view svg .axis .tick-label')].map((e) => e.textContent)`)
	require.NotEmpty(t, ticks)
	assert.Equal(t, attr(t, ctx, "body", "data-lab-steps"), ticks[len(ticks)-1], "the last step on the axis is the bench's")

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

// goToRung climbs (or steps down) to a rung of the ladder.
func goToRung(t *testing.T, ctx context.Context, rung string) {
	t.Helper()
	run(t, ctx, click(`#rung-list button[data-rung=`+rung+`]`), waitJS(`document.body.dataset.rung === `+quoteJS(rung)))
}

// TestLabPageExplorerSearchesTheChosenScenarioFirst: the explorer searches
// the scenario chosen in the menu, then the others, and says which it
// searched; what it finds is said against the rung the student is on (a
// rule a later rung fixes is expected to break here), and rule 7 is
// unknown while the file publishes no retention.
func TestLabPageExplorerSearchesTheChosenScenarioFirst(t *testing.T) {
	ts := playground(t, playgroundDir(t))
	ctx := labTab(t, ts.URL, "")
	labRunnerReady(t, ctx)
	scenarios := eval[int](t, ctx, `document.getElementById('lab-scenario').options.length`)

	// The naive handler pays the corrected amount: found where the student
	// looked, not in the first scenario of the list.
	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "corrected-amount"))
	act(t, ctx, `#btn-lab-explore`)
	require.Equal(t, "broke", attr(t, ctx, "body", "data-lab-explored"), text(t, ctx, "#lab-run-status"))
	assert.Equal(t, "corrected-amount", attr(t, ctx, "#lab-found", "data-scenario"))
	assert.Equal(t, "corrected-amount", attr(t, ctx, "#lab-found", "data-searched"), "no other scenario was needed")
	assert.Contains(t, text(t, ctx, "#lab-run-status"), "“a corrected amount under the same key”, the scenario you chose")
	// On the first rung every break is the later rungs' business.
	assert.Equal(t, "true", attr(t, ctx, "#lab-found .lab-rung-sum", "data-done"))
	assert.Equal(t, "true", attr(t, ctx, `#lab-found li[data-rule=different-request-never-succeeds]`, "data-expected"))
	// The naive handler never looks at the key (the checker's key-ignored):
	// the key's claim, rung 2, is the first fix.
	assert.Contains(t, text(t, ctx, `#lab-found li[data-rule=different-request-never-succeeds]`), "expected at this rung: rung 2 (unique) fixes it")
	// The naive handler publishes no retention: rule 7 is unknown, not held.
	assert.Equal(t, "unknown", attr(t, ctx, `#lab-found li[data-rule=retention-outlasts-retries]`, "data-ok"))
	assert.Contains(t, text(t, ctx, `#lab-found li[data-rule=retention-outlasts-retries]`), "⚠ 7.")
	assert.Contains(t, text(t, ctx, `#lab-found li[data-rule=retention-outlasts-retries]`), "publishes no retentionSeconds")

	// A scenario the naive handler holds: the explorer says so, then
	// searches the others.
	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "malformed-keys"))
	act(t, ctx, `#btn-lab-explore`)
	require.Equal(t, "broke", attr(t, ctx, "body", "data-lab-explored"))
	assert.Contains(t, text(t, ctx, "#lab-run-status"), "No break in “keys the contract refuses")
	assert.Contains(t, text(t, ctx, "#lab-run-status"), "Searching the other scenarios")
	assert.NotEqual(t, "malformed-keys", attr(t, ctx, "#lab-found", "data-scenario"))
	assert.True(t, strings.HasPrefix(attr(t, ctx, "#lab-found", "data-searched"), "malformed-keys,"), attr(t, ctx, "#lab-found", "data-searched"))

	// On the second rung, the naive handler's double payment is what the
	// rung asks for: not done.
	goToRung(t, ctx, "unique")
	useHandler(t, ctx, "naive")
	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "simultaneous-retries"))
	act(t, ctx, `#btn-lab-explore`)
	require.Equal(t, "simultaneous-retries", attr(t, ctx, "#lab-found", "data-scenario"))
	assert.Equal(t, "false", attr(t, ctx, "#lab-found .lab-rung-sum", "data-done"))
	assert.Equal(t, "false", attr(t, ctx, `#lab-found li[data-rule=one-transfer-per-intent]`, "data-expected"))
	assert.Contains(t, text(t, ctx, `#lab-found li[data-rule=one-transfer-per-intent]`), "rung 2 (unique) asks for it")
	assert.Contains(t, text(t, ctx, "#lab-found .lab-rung-sum"), "not done")

	// The unique rung's own handler there: what still breaks is a later
	// rung's, said as expected, not as this rung's failure.
	useHandler(t, ctx, "unique")
	act(t, ctx, `#btn-lab-explore`)
	require.Equal(t, "broke", attr(t, ctx, "body", "data-lab-explored"), text(t, ctx, "#lab-run-status"))
	assert.Equal(t, "simultaneous-retries", attr(t, ctx, "#lab-found", "data-scenario"))
	assert.Equal(t, "true", attr(t, ctx, "#lab-found .lab-rung-sum", "data-done"), text(t, ctx, "#lab-found"))
	assert.Zero(t, countIn(t, ctx, `#lab-found li.fail`), text(t, ctx, "#lab-found"))
	assert.NotZero(t, countIn(t, ctx, `#lab-found li.expected`))

	// The top rung's handler breaks nothing anywhere: every scenario was
	// searched, and the words say so.
	useHandler(t, ctx, "scoped")
	act(t, ctx, `#btn-lab-explore`)
	require.Equal(t, "held", attr(t, ctx, "body", "data-lab-explored"), text(t, ctx, "#lab-run-status"))
	assert.Contains(t, text(t, ctx, "#lab-run-status"), "in any of the "+strconv.Itoa(scenarios)+" scenarios (“two identical requests at the same moment” first)")
	assert.Len(t, strings.Split(attr(t, ctx, "#lab-found", "data-searched"), ","), scenarios)
}

// TestLabPageCardsSayWhatIsSent: each attempt's card says what it sends,
// what it waits for before it is sent, the payment call as the handler
// wrote it, and the answer's headers beside its body.
func TestLabPageCardsSayWhatIsSent(t *testing.T) {
	ts := playground(t, playgroundDir(t))
	ctx := labTab(t, ts.URL, "")
	labRunnerReady(t, ctx)
	a1, a2 := `#lab-lanes .lab-lane[data-attempt=a1]`, `#lab-lanes .lab-lane[data-attempt=a2]`

	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "corrected-amount"))
	act(t, ctx, `#btn-lab-start`)
	assert.Equal(t, "new", attr(t, ctx, a2+" .lab-end", "data-end"))
	assert.Equal(t, "not sent yet: it is sent once a1 has ended", text(t, ctx, a2+" .lab-end"), "a2 has not been sent, so it has not gone unanswered")
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

// TestLabPageOpensTheRungLeftOn: a reload opens the rung the student was
// last on, and "Start this rung over" gives that rung's starting code (the
// code kept on the rung before it), with the student's own set aside.
func TestLabPageOpensTheRungLeftOn(t *testing.T) {
	ts := playground(t, playgroundDir(t))
	ctx := labTab(t, ts.URL, "")
	schemaText := `document.getElementById('schema-box').editor.text()`
	goToRung(t, ctx, "replay")
	setCode(t, ctx, "async function transfer(req, db, pay) {\n  // rung five's own\n  return lab.json(201, {});\n}\n", "CREATE TABLE five (k TEXT PRIMARY KEY);")
	run(t, ctx, waitJS(`(localStorage.getItem('idemlab.lab.replay') || '').includes('rung five')`))
	goToRung(t, ctx, "scoped")
	assert.Contains(t, eval[string](t, ctx, handlerText), "rung five's own", "the next rung starts from the code of the one before")
	setCode(t, ctx, "async function transfer(req, db, pay) {\n  // rung six, half done\n  return lab.json(201, {});\n}\n", "CREATE TABLE six (k TEXT PRIMARY KEY);")
	run(t, ctx, waitJS(`(localStorage.getItem('idemlab.lab.scoped') || '').includes('half done')`))

	// A reload without ?rung= opens the rung left on, with its code.
	run(t, ctx, chromedp.Navigate(ts.URL+"/lab.html"), waitJS(`document.body.dataset.ready === 'true'`))
	assert.Equal(t, "scoped", attr(t, ctx, "body", "data-rung"))
	assert.Contains(t, eval[string](t, ctx, handlerText), "rung six, half done")

	// Starting over gives the rung's start (rung five's code and tables),
	// not the naive handler, and offers the student's code back.
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`))
	run(t, ctx, click("#btn-start-over"), waitJS(`!document.getElementById('btn-restore').hidden`))
	assert.Contains(t, eval[string](t, ctx, handlerText), "rung five's own")
	assert.Equal(t, "CREATE TABLE five (k TEXT PRIMARY KEY);", eval[string](t, ctx, schemaText))
	assert.Contains(t, text(t, ctx, "#lab-status"), "rung 5 (replay)")
	run(t, ctx, click("#btn-restore"), waitJS(`document.getElementById('btn-restore').hidden`))
	assert.Contains(t, eval[string](t, ctx, handlerText), "rung six, half done")
	assert.Equal(t, "CREATE TABLE six (k TEXT PRIMARY KEY);", eval[string](t, ctx, schemaText))

	// On the first rung the start is the naive handler.
	goToRung(t, ctx, "naive")
	setCode(t, ctx, "async function transfer(req, db, pay) {\n  // mine\n  return lab.json(201, {});\n}\n", "")
	run(t, ctx, click("#btn-start-over"), waitJS(`!document.getElementById('btn-restore').hidden`))
	assert.Contains(t, eval[string](t, ctx, handlerText), "naive")
	assert.NotContains(t, eval[string](t, ctx, handlerText), "// mine")
	// The offer belongs to its rung.
	goToRung(t, ctx, "unique")
	assert.True(t, eval[bool](t, ctx, `document.getElementById('btn-restore').hidden`), "nothing of this rung's was set aside")
}

// setLabFile puts a handler file in the lab page's two boxes, its schema
// in its own, as opening the file does.
func setLabFile(t *testing.T, ctx context.Context, src string) {
	t.Helper()
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`import('./lab-file.js').then((m) => {
		const c = m.split(`+quoteJS(src)+`);
		document.getElementById('handler-box').editor.setText(c.handler);
		document.getElementById('schema-box').editor.setText(c.schema);
	})`, chromedp.EvalAwaitPromise))
}

// TestLabGradeFitsAPhone: on a phone (390×844) the grade of every
// scenario stays inside the screen, its "Play it" buttons included: the
// rows stack rather than run off to the right.
func TestLabGradeFitsAPhone(t *testing.T) {
	ts := playground(t, playgroundDir(t))
	for _, lang := range []string{"en", "ko"} {
		t.Run(lang, func(t *testing.T) {
			ctx := labTab(t, ts.URL, "?lang="+lang)
			run(t, ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch))
			labRunnerReady(t, ctx)
			act(t, ctx, `#btn-lab-grade`)
			require.Positive(t, countIn(t, ctx, `#lab-grade tr[data-broke="true"] button`), "naive breaks rules: each broken row has its button")
			assert.LessOrEqual(t, eval[int](t, ctx, `document.documentElement.scrollWidth`), 390, "the page does not scroll sideways: %v",
				eval[[]string](t, ctx, `[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > 391 && !e.closest('svg'))
					.slice(0, 8).map((e) => e.tagName + '#' + e.id + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))`))
			out := eval[[]string](t, ctx, `[...document.querySelectorAll('#lab-grade th, #lab-grade td, #lab-grade button')]
				.filter((e) => e.getClientRects().length && e.getBoundingClientRect().right > 390.5).map((e) => e.tagName + ': ' + e.textContent.slice(0, 40))`)
			assert.Empty(t, out, "grade cells and buttons past the screen's right edge")
		})
	}
}
