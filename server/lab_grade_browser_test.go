package server_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/lab"
	"idemlab/lab/handlers"
)

// withoutTakeover is a shipped handler whose claim of a dead attempt is
// never taken over: the UPDATE that would take it over (in replace) is
// made to match no row.
func withoutTakeover(t *testing.T, name, replace string) string {
	t.Helper()
	return changedHandler(t, name, [2]string{replace, replace + " AND 0"})
}

// uniqueClaim is the unique reference's claim: its INSERT, and the start
// of what it does when the key was there.
const uniqueClaim = "  try {\n    await db.run('INSERT INTO idem_keys (idem_key, created_at) VALUES (?, ?)', key, req.now);\n  } catch (e) {\n    if (e.name !== 'ConstraintError') throw e;"

// changedHandler is a reference handler with pieces of its code replaced
// ({old, new}, each found once), as a student's mistake changes it.
func changedHandler(t *testing.T, name string, edits ...[2]string) string {
	t.Helper()
	src, err := handlers.Source(name)
	require.NoError(t, err)
	code := string(src)
	for _, e := range edits {
		require.Contains(t, code, e[0])
		code = strings.Replace(code, e[0], e[1], 1)
	}
	return code
}

// rowSays is what a grade's row says, with the words it points to on an
// earlier row ("What went wrong: as for … above") read there.
func rowSays(t *testing.T, ctx context.Context, row string) string {
	t.Helper()
	return eval[string](t, ctx, `(() => { const r = document.querySelector(`+quoteJS(row)+`); if (!r) return '';
		let s = r.textContent;
		for (const e of r.querySelectorAll('[data-same-as]')) {
			for (const first of document.querySelectorAll('#lab-grade tr[data-scenario="' + e.dataset.sameAs + '"] .' + e.classList[0] + ':not([data-same-as])')) s += ' ' + first.textContent;
		}
		return s; })()`)
}

// onRungEdited opens a fresh lab page on the rung named for its reference
// handler, and puts that handler, changed by edits (changedHandler), in
// the editor.
func onRungEdited(t *testing.T, rung string, edits ...[2]string) context.Context {
	t.Helper()
	ctx := readyLab(t)
	goToRung(t, ctx, rung)
	setLabFile(t, ctx, changedHandler(t, rung, edits...))
	return ctx
}

// rowWithCause is the scenario of the first grade row one of whose
// broken rules the checker put down to cause; the test stops when there
// is none.
func rowWithCause(t *testing.T, ctx context.Context, cause string) string {
	t.Helper()
	row := eval[string](t, ctx, `(() => { const r = [...document.querySelectorAll('#lab-grade tr[data-scenario]')].find((r) => (r.dataset.ruleCauses || '').split(',').some((c) => c.endsWith(':`+cause+`'))); return r ? r.dataset.scenario : ''; })()`)
	require.NotEmpty(t, row, "no row names %s: %s", cause, text(t, ctx, "#lab-grade"))
	return row
}

// whereOnBench plays the grade's row on the bench and answers the
// selector of the verdict's "Where:" line under cause; the test stops
// when there is none.
func whereOnBench(t *testing.T, ctx context.Context, row, cause string) string {
	t.Helper()
	act(t, ctx, `#lab-grade tr[data-scenario=`+row+`] button`)
	where := `#lab-verdict [data-cause=` + cause + `] ~ .lab-where`
	require.NotZero(t, countIn(t, ctx, where), text(t, ctx, "#lab-verdict"))
	return where
}

// gradedNotDone opens the rung named for its reference handler with that
// handler changed by edits, grades it, and holds that the rung is not
// done: the shape of the tests of one mistake each.
func gradedNotDone(t *testing.T, rung string, edits ...[2]string) context.Context {
	t.Helper()
	ctx := onRungEdited(t, rung, edits...)
	act(t, ctx, `#btn-lab-grade`)
	require.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"), text(t, ctx, "#lab-grade .lab-rung-sum"))
	return ctx
}

// TestLabPageSaysAClaimIsNeverSettled: a handler that never takes over a
// claim whose attempt crashed breaks no rule (nothing moves, nothing is
// said wrong), but the retry ten minutes after the crash is still told
// 409, for ever. The grade notes it with its cause and fix: at the
// in-progress rung it is left for scoped, whose lease settles it; at the
// scoped rung it keeps the rung from being done. The noted order plays on
// the bench, and the bench's verdict notes it too.
func TestLabPageSaysAClaimIsNeverSettled(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	row := `#lab-grade tr[data-scenario=crash-then-late-retry]`

	goToRung(t, ctx, "in-progress")
	setLabFile(t, ctx, withoutTakeover(t, "in-progress", "WHERE idem_key = ? AND created_at < ?"))
	act(t, ctx, `#btn-lab-grade`)
	assert.Equal(t, "true", attr(t, ctx, "#lab-grade", "data-rung-done"), "nothing the in-progress rung asks for broke: %s", text(t, ctx, "#lab-grade .lab-rung-sum"))
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "Left for rung 6 (scope, retention, lease) too: a claim a crash left is never settled")
	assert.Equal(t, "true", attr(t, ctx, row, "data-expected"), "what broke there (rule 7: a retention of 300 s) is a later rung's")
	assert.Equal(t, "0", attr(t, ctx, row, "data-notes-asked"), "a later rung's")
	assert.Contains(t, text(t, ctx, row), "Never settled: a1 crashed and never answered; the retry a2, sent 10 minutes later, was answered 409")
	assert.Contains(t, text(t, ctx, row), "expected at this rung: rung 6 (scope, retention, lease) fixes it")
	assert.Contains(t, text(t, ctx, row), "What to change: give each claim a lease")
	assert.Equal(t, "claim-never-settled", attr(t, ctx, row+" .lab-cause[data-note]", "data-cause"))

	// The scoped reference without its lease: every rule holds, and the
	// rung is not done.
	goToRung(t, ctx, "scoped")
	setLabFile(t, ctx, withoutTakeover(t, "scoped", "AND fingerprint = ? AND claimed_at < ?"))
	act(t, ctx, `#btn-lab-grade`)
	assert.Empty(t, attr(t, ctx, "#lab-grade", "data-broken"), "no rule broke")
	assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"))
	// Both scenarios of a crash and late retries say it: one retry, and
	// two together.
	assert.Equal(t, "2", attr(t, ctx, "#lab-grade", "data-notes-asked"))
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "This rung, rung 6 (scope, retention, lease), is not done yet: a claim a crash left is never settled, in: “a crash at any step, then a retry ten minutes later”")
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "“a crash right after paying, then two retries together ten minutes later”")
	assert.Equal(t, "1", attr(t, ctx, `#lab-grade tr[data-scenario=crash-then-two-late-retries]`, "data-notes-asked"))
	assert.Equal(t, "1", attr(t, ctx, row, "data-notes-asked"))
	assert.Contains(t, text(t, ctx, row), "no rule broke in")
	assert.Contains(t, text(t, ctx, row), "but an intent is never settled")
	assert.Contains(t, text(t, ctx, row), "rung 6 (scope, retention, lease), this rung, asks for it: it is not done yet")
	// Played, the noted order ends with a2 told 409, and the verdict says why.
	act(t, ctx, row+` button`)
	assert.Contains(t, text(t, ctx, `#lab-lanes .lab-lane[data-attempt=a2] .lab-end`), "409")
	assert.Equal(t, "claim-never-settled", attr(t, ctx, `#lab-verdict .lab-note`, "data-cause"))

	// The explorer, asked about that scenario, says so too.
	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "crash-then-late-retry"))
	act(t, ctx, `#btn-lab-explore`)
	assert.Equal(t, "held", attr(t, ctx, "body", "data-lab-explored"), "no rule broke")
	assert.Equal(t, "note", attr(t, ctx, "#lab-found", "data-asked"))
	// The status line leads with what holds the rung back: "no break
	// found" alone read as done.
	assert.True(t, strings.HasPrefix(text(t, ctx, "#lab-run-status"), "This rung is not done: a claim a crash left is never settled; see below. Besides that: no break found"), text(t, ctx, "#lab-run-status"))
	assert.Contains(t, text(t, ctx, "#lab-found"), "This rung, rung 6 (scope, retention, lease), is not done: a claim a crash left is never settled (the note below)")
	assert.Equal(t, "claim-never-settled", attr(t, ctx, `#lab-found .lab-note`, "data-cause"))
}

// TestLabPageSaysTheNetworkKeyIsShared: the scoped reference, but the key
// it passes to the payment network is the client's as sent. Its key table
// is scoped, so cust-2's request with cust-1's key string is cust-2's own
// transfer and reaches pay, where the network knows the key: it answers
// with cust-1's charge, and cust-2's transfer moves without ever being
// charged. No answer shows it and no rule breaks; the grade notes it with
// its cause, and the top rung is not done.
func TestLabPageSaysTheNetworkKeyIsShared(t *testing.T) {
	t.Parallel()
	ctx := onRungEdited(t, "scoped", [2]string{"key: JSON.stringify([req.customer, key])", "key: key"})
	act(t, ctx, `#btn-lab-grade`)
	assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"), text(t, ctx, "#lab-grade .lab-rung-sum"))
	row := `#lab-grade tr[data-scenario=other-customer-same-body]`
	assert.Equal(t, "network-key-shared", attr(t, ctx, row+" .lab-cause[data-note]", "data-cause"), text(t, ctx, row))
	assert.Contains(t, text(t, ctx, row), "cust-2 was never charged")
	// The change is said in full on the first row that needs it (another
	// customer's key, the row above), and this row points there.
	assert.Equal(t, "another-customers-key", attr(t, ctx, row+" .lab-fix", "data-same-as"))
	assert.Contains(t, text(t, ctx, `#lab-grade tr[data-scenario=another-customers-key]`), "JSON.stringify([req.customer, 'POST /transfers', key])")
}

// TestLabPageSaysWhereTheHandlerThrew: a handler that releases its own
// claim and throws for cust-2. The grade quotes the throw at its line in
// the handler's box (the tables come first in the file the runner runs),
// and the claim an attempt deleted itself is no purge, though cust-1's
// row holds the same key string.
func TestLabPageSaysWhereTheHandlerThrew(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	setCode(t, ctx, "async function transfer(req, db, pay) {\n"+
		"  await db.run('INSERT INTO claims (customer, k) VALUES (?, ?)', req.customer, req.key);\n"+
		"  if (req.customer === 'cust-2') {\n"+
		"    await db.run('DELETE FROM claims WHERE customer = ? AND k = ?', req.customer, req.key);\n"+
		"    throw new Error('not for cust-2');\n"+
		"  }\n"+
		"  return lab.json(201, { ok: true });\n"+
		"}\n",
		"-- two lines of comment above the table\n-- so that the file's lines and the box's differ\nCREATE TABLE claims (customer TEXT, k TEXT, PRIMARY KEY (customer, k));")
	act(t, ctx, `#btn-lab-grade`)
	row := `#lab-grade tr[data-scenario=another-customers-key]`
	assert.Contains(t, text(t, ctx, row), "threw Error at line 5: not for cust-2", text(t, ctx, row))
	assert.NotContains(t, text(t, ctx, "#lab-grade"), "purge")
	assert.Zero(t, countIn(t, ctx, `#lab-grade [data-cause=key-purged-early]`))

	// An answer the lab cannot send has no line of its own (a returned
	// value carries none): the words name what was returned instead.
	setCode(t, ctx, "async function transfer(req, db, pay) {\n"+
		"  return { status: '201', headers: {}, body: '{}' };\n"+
		"}\n", "")
	act(t, ctx, `#btn-lab-grade`)
	row = `#lab-grade tr[data-scenario=simultaneous-retries]`
	assert.Contains(t, text(t, ctx, row), `the answer's status must be a whole number from 100 to 599, not "201" (a string)`, text(t, ctx, row))
	assert.Contains(t, text(t, ctx, row), "an error with no line, such as an answer the lab cannot send, names what your transfer returned")

	// A helper of the student's that makes every statement: the error is
	// said at the line that wrote the statement, not the helper's (line 9).
	setCode(t, ctx, "async function transfer(req, db, pay) {\n"+
		"  const t = lab.parseTransfer(req.body);\n"+
		"  await db.get('SELECT balance FROM accounts WHERE id = ?', t.from);\n"+
		"  await q(db,\n"+
		"    'UPDATE accounts SET balanc = balance - ? WHERE id = ?', t.amount, t.from);\n"+
		"  return lab.json(201, {});\n"+
		"}\n"+
		"async function q(db, sql, ...args) {\n"+
		"  return db.run(sql, ...args);\n"+
		"}\n", "")
	act(t, ctx, `#btn-lab-grade`)
	assert.Contains(t, text(t, ctx, row), "threw SQLError at line 4: ", text(t, ctx, row))
}

// TestLabPageNamesAnEarlyPurge: the scoped reference, publishing a day's
// retention, with a purge of its own that deletes every key older than
// five minutes. The retry an hour later (less a second) finds its key
// gone and moves the money again. The grade names the purge, read from
// the handler's key table, not a missing claim (rung 2's cause), and in
// the day a 500 that the purge caused is the purge's too.
func TestLabPageNamesAnEarlyPurge(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	goToRung(t, ctx, "scoped")
	// The editor's text changed with the rung: the page says whose it is
	// (nothing was written on rung 1, so no code of it is carried).
	assert.Contains(t, text(t, ctx, "#lab-status"), "Now on rung 6 (scope, retention, lease): the editor holds the starting handler.")
	setLabFile(t, ctx, changedHandler(t, "scoped", [2]string{"  const scope = [req.customer, ENDPOINT, key];\n",
		"  const scope = [req.customer, ENDPOINT, key];\n  await db.run('DELETE FROM idem_keys WHERE created_at < ?', req.now - 10 * 60 * 1000);\n"}))
	act(t, ctx, `#btn-lab-grade`)
	assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"), text(t, ctx, "#lab-grade .lab-rung-sum"))
	row := `#lab-grade tr[data-scenario=retry-after-retention]`
	assert.Contains(t, attr(t, ctx, row, "data-rule-causes"), "1:key-purged-early", text(t, ctx, row))
	// The fix is said in full on the first row that needs it, and pointed
	// to from the others.
	assert.Contains(t, text(t, ctx, "#lab-grade"), "older than the retention you publish")
	if !strings.Contains(text(t, ctx, row), "older than the retention you publish") {
		assert.NotEmpty(t, attr(t, ctx, row+" .lab-fix", "data-same-as"), text(t, ctx, row))
	}
	// In the day, a claim whose key row a later request's purge deleted
	// under it threw (a 500): the purge is named, not the 500 alone.
	day := `#lab-grade tr[data-scenario=day]`
	assert.Equal(t, "key-purged-early", attr(t, ctx, day+" .lab-cause[data-note]", "data-cause"), text(t, ctx, day))
	assert.Contains(t, text(t, ctx, day), "a purge had deleted its key's row")
	// Nothing points back to the claim (rung 2): the purge is the scoped
	// rung's business.
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-grade-sum"), "fixes one of them: rung 6 (scope, retention, lease)")
}

// TestLabPageExplorerShowsTheRungsOwnBreak: on the unique rung, a handler
// that looks for its key with a SELECT before it INSERTs it, into a table
// without a primary key. Two simultaneous retries break rule 3 (a
// generic answer) in one switch, a later rung's rule, and rule 1 (both
// pay) in two: the explorer looks past the first for the rung's own and
// shows that order, and the grade's row names rule 1 as this rung's.
func TestLabPageExplorerShowsTheRungsOwnBreak(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	goToRung(t, ctx, "unique")
	setLabFile(t, ctx, changedHandler(t, "unique",
		[2]string{"idem_key    TEXT PRIMARY KEY,", "idem_key    TEXT,"},
		[2]string{uniqueClaim, "  const seen = await db.get('SELECT idem_key FROM idem_keys WHERE idem_key = ?', key);\n  await db.run('INSERT INTO idem_keys (idem_key, created_at) VALUES (?, ?)', key, req.now);\n  if (seen) {"}))
	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "simultaneous-retries"))
	act(t, ctx, `#btn-lab-explore`)
	require.Equal(t, "simultaneous-retries", attr(t, ctx, "#lab-found", "data-scenario"), text(t, ctx, "#lab-run-status"))
	assert.Equal(t, "false", attr(t, ctx, "#lab-found .lab-rung-sum", "data-done"), text(t, ctx, "#lab-found"))
	assert.Equal(t, "false", attr(t, ctx, `#lab-found li[data-rule=one-transfer-per-intent]`, "data-ok"), "the order shown pays twice: %s", text(t, ctx, "#lab-found"))
	act(t, ctx, `#btn-lab-grade`)
	row := `#lab-grade tr[data-scenario=simultaneous-retries]`
	assert.Contains(t, strings.Split(attr(t, ctx, row, "data-rules"), ","), "1", text(t, ctx, row))
	assert.Equal(t, "false", attr(t, ctx, row, "data-expected"), "rule 1 is this rung's: %s", text(t, ctx, row))
}

// TestLabPageSaysAReorderedRequestWasRefused: the raw-bytes fingerprint
// mistake. The same request with its members reordered, sent while the
// first still runs, is refused 422 as a different request where 409 is
// owed: no rule judges a request sent before the first answer, and the
// grade's row said "no break". It is noted now, with the fingerprint's
// cause; after the first answer (another scenario) rule 3 breaks, with
// that cause, not the stored answer's.
func TestLabPageSaysAReorderedRequestWasRefused(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	goToRung(t, ctx, "scoped")
	useHandler(t, ctx, "raw-bytes-fingerprint")
	act(t, ctx, `#btn-lab-grade`)
	row := `#lab-grade tr[data-scenario=reordered-json]`
	assert.Equal(t, "reordered-refused", attr(t, ctx, row+" .lab-cause[data-note]", "data-cause"), text(t, ctx, row))
	assert.Contains(t, text(t, ctx, row), "a2 was refused 422 as a different request, though it is a1's request")
	after := `#lab-grade tr[data-scenario=reordered-after-answer]`
	assert.Contains(t, attr(t, ctx, after, "data-rule-causes"), "3:reordered-refused", text(t, ctx, after))
}

// TestLabPageGradePlaysTheNotesOwnOrder: on the unique rung, a handler
// that looks for its key with a SELECT, then INSERTs it without catching
// the constraint error. In a race one INSERT throws (a 500, noted), while
// the row's break is another order's. The note has its own button,
// and that order ends with the exception behind the 500 it speaks of.
func TestLabPageGradePlaysTheNotesOwnOrder(t *testing.T) {
	t.Parallel()
	ctx := onRungEdited(t, "unique", [2]string{uniqueClaim,
		"  const seen = await db.get('SELECT idem_key FROM idem_keys WHERE idem_key = ?', key);\n  if (!seen) await db.run('INSERT INTO idem_keys (idem_key, created_at) VALUES (?, ?)', key, req.now);\n  else {"})
	act(t, ctx, `#btn-lab-grade`)
	play := `#lab-grade tr[data-broke=true] .lab-note-play`
	require.NotZero(t, countIn(t, ctx, play), "a broken row with a note of another order: %s", text(t, ctx, "#lab-grade"))
	note := eval[string](t, ctx, `document.querySelector(`+quoteJS(play)+`).previousElementSibling.closest('td').querySelector('.lab-note').textContent`)
	act(t, ctx, play)
	require.Equal(t, "true", attr(t, ctx, "body", "data-lab-done"))
	ends := eval[string](t, ctx, `[...document.querySelectorAll('#lab-lanes .lab-end')].map((e) => e.textContent).join(' | ')`)
	assert.Contains(t, ends, "threw ConstraintError", "the note said: %s", note)
}

// TestLabPageGradeSaysEveryRuleAScenarioBroke: the grade's row names every
// rule an order of the scenario broke, not only the shortest order's. On
// rung 2 a crash after the claim and before the transfer breaks rule 4 (a
// completion with no transfer: the retry is told "already processed"),
// and a crash after the answer was stored breaks rule 3 (a generic answer
// where the first was owed). The row names both, each with its order to
// play, and the bench then shows that rule broken.
func TestLabPageGradeSaysEveryRuleAScenarioBroke(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
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

// TestLabPageGradesEveryHandler puts every reference and mistake handler
// in the page's editor and presses "Check every scenario", as a student
// would: the rules the page shows broken are what idemlab grade finds
// (the rung's table in docs/lab-contract.md, the mistake's own rules), as
// the browser can see them (graderView), and every cause the page names
// is one the grader names. Graded on its own rung, each rung's handler
// passes that rung (what it still breaks is a later rung's); each mistake,
// made on the top rung, does not pass it.
func TestLabPageGradesEveryHandler(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
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
		// The grader cannot crash an endpoint nor wait out a retention: a
		// retry that finds the key past a short retention and pays again
		// (rules 1 and 8, caused by the retention) is the browser's alone;
		// the grader judges that retention as rule 7.
		rows := eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll('#lab-grade tr[data-scenario]')].map((r) => [r.dataset.scenario, r.dataset.ruleCauses || '']))`)
		broken := map[string]bool{}
		// Rule 7 breaks in every order alike and is said once, under the
		// table.
		if attr(t, ctx, "#lab-grade", "data-retention-broken") == "true" {
			broken[names["7"]] = true
		}
		for _, rules := range rows {
			for _, nc := range strings.Split(rules, ",") {
				n, cause, _ := strings.Cut(nc, ":")
				if n == "" || cause == lab.CauseShortRetention && n != "7" {
					continue
				}
				broken[names[n]] = true
			}
		}
		causes := eval[[]string](t, ctx, `[...new Set([...document.querySelectorAll('#lab-grade .lab-cause:not([data-note])')].map((e) => e.dataset.cause))]`)
		// The grade is brought into view: its heading near the top of the
		// screen, not below the fold.
		assert.True(t, eval[bool](t, ctx, `(() => { const r = document.querySelector('#lab-grade h4').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight / 2; })()`),
			"%s: the grade's heading is in view", name)
		// Each change is said in full once: a later row with the same
		// change points to the row above that says it.
		twice := eval[[]string](t, ctx, `(() => { const seen = {}; const twice = [];
			for (const f of document.querySelectorAll('#lab-grade tr[data-scenario] .lab-fix:not([data-same-as])')) {
				const k = f.closest('tr').dataset.scenario;
				if (seen[f.textContent] && seen[f.textContent] !== k) twice.push(f.textContent);
				seen[f.textContent] ||= k;
			}
			return twice; })()`)
		assert.Empty(t, twice, "%s: a change said in full on two rows", name)
		for _, first := range eval[[]string](t, ctx, `[...document.querySelectorAll('#lab-grade .lab-fix[data-same-as]')].map((f) => f.dataset.sameAs)`) {
			assert.Equal(t, 1, countIn(t, ctx, `#lab-grade tr[data-scenario="`+first+`"]`), "%s: the row pointed to", name)
		}
		// Whether the rung is done is said once: several reasons are a
		// list under one sentence, not the sentence again.
		assert.Equal(t, 1, countIn(t, ctx, "#lab-grade .lab-rung-sum"), "%s: %s", name, text(t, ctx, "#lab-grade"))
		if n := countIn(t, ctx, "#lab-grade .lab-rung-sum li"); n > 0 {
			t.Logf("%s: the rung is not done for %d reasons", name, n)
		}
		return broken, causes
	}
	for _, name := range handlers.Rungs() {
		broken, causes := grade(name, name)
		assert.Equal(t, "true", attr(t, ctx, "#lab-grade", "data-rung-done"), "%s passes its own rung: %s", name, text(t, ctx, "#lab-grade .lab-rung-sum"))
		assert.Zero(t, countIn(t, ctx, `#lab-grade tr[data-expected=false]`), "%s: every break is a later rung's", name)
		// The ladder marks every rung whose grade said done, this one and
		// those graded before it.
		for _, r := range handlers.Rungs() {
			assert.Equal(t, "true", attr(t, ctx, `#rung-list button[data-rung=`+r+`]`, "data-done"), "%s graded: rung %s's ✔", name, r)
			if r == name {
				break
			}
		}
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
			// The ladder marks the rung its grade said done.
			assert.Equal(t, "true", attr(t, ctx, `#rung-list button[data-rung=unique]`, "data-done"))
			assert.True(t, strings.HasPrefix(text(t, ctx, `#rung-list button[data-rung=unique]`), "✔ 2. "))
			run(t, ctx, click("#btn-lab-next-rung"), waitJS(`document.body.dataset.rung === 'fingerprint'`))
			assert.Equal(t, "rung-title", eval[string](t, ctx, `document.activeElement.id`))
		}
		if name == "fingerprint" {
			// A break the checker finds no cause for still says what
			// happened, above its fix: the key said done, no transfer.
			row := `#lab-grade tr[data-scenario=crash-at-every-step]`
			assert.Contains(t, attr(t, ctx, row, "data-rule-causes"), "4:", text(t, ctx, row))
			assert.Contains(t, text(t, ctx, row+" .lab-why"), "What happened: ", text(t, ctx, row))
		}
		assert.Equal(t, sorted(handlers.RungBreaks(name)), nonNil(graderView(t, name, broken)), "%s: the page's grade against the grader's", name)
		// Rule 8: naive claims no key; below scoped, which gives the
		// network a key, a retry that runs again after the network's answer
		// to the first attempt was lost pays again (the rungs that release
		// a claim on an error, in-progress and replay), named as such.
		if name == "naive" {
			assert.True(t, broken[ruleOneCharge], "%s: rule 8", name)
		} else if broken[ruleOneCharge] {
			assert.Contains(t, []string{"in-progress", "replay"}, name, "%s: rule 8", name)
			assert.Contains(t, attr(t, ctx, `#lab-grade tr[data-scenario=network-answer-lost]`, "data-rule-causes"), "8:"+lab.CauseNetworkKeyMissing, "%s: rule 8", name)
		}
		t.Logf("%s: %v, causes %v", name, sorted(mapKeys(broken)), causes)
	}
	for _, m := range handlers.Mistakes() {
		broken, causes := grade(m.Name, m.From)
		assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"), "%s does not pass %s: %s", m.Name, m.From, text(t, ctx, "#lab-grade .lab-rung-sum"))
		assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "This rung, rung 6 (scope, retention, lease), is not done yet", m.Name)
		got := graderView(t, m.Name, broken)
		assert.Subset(t, got, m.Breaks, "%s: the grader's every-time break is shown", m.Name)
		assert.Subset(t, append(slices.Clone(m.Breaks), m.MayAlsoBreak...), got, "%s: nothing the grader does not blame", m.Name)
		// A fix taught below this rung is not sent back down the ladder as
		// "the earliest rung that fixes it".
		assert.NotRegexp(t, `The earliest rung that fixes [^:]*: rung [1-5] `, text(t, ctx, "#lab-grade .lab-grade-sum"), m.Name)
		causes = asTheGraderTells(m, causes)
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

// TestLabPageCatchesAReplayBuiltAgain: on the replay rung, a handler that
// replays the stored answer with its balance read again from the
// accounts. A retry right after a lost answer cannot tell (the balance
// has not moved); another transfer between them can, in a short order,
// where before only the day's 96 steps did.
func TestLabPageCatchesAReplayBuiltAgain(t *testing.T) {
	t.Parallel()
	ctx := onRungEdited(t, "replay", [2]string{
		"      return { status: row.status, headers: { 'Content-Type': row.type, 'Idempotent-Replayed': 'true' }, body: row.body };",
		`      const first = JSON.parse(row.body);
      if (first.balance_after !== undefined) first.balance_after = (await db.get('SELECT balance FROM accounts WHERE id = ?', first.from)).balance;
      return { status: row.status, headers: { 'Content-Type': row.type, 'Idempotent-Replayed': 'true' }, body: JSON.stringify(first) };`})
	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "retry-after-lost-answer"))
	act(t, ctx, `#btn-lab-explore`)
	require.Equal(t, "broke", attr(t, ctx, "body", "data-lab-explored"), text(t, ctx, "#lab-run-status"))
	assert.Equal(t, "retry-after-another-transfer", attr(t, ctx, "#lab-found", "data-scenario"), text(t, ctx, "#lab-run-status"))
	assert.Equal(t, "replay-is-byte-identical", attr(t, ctx, "#lab-found", "data-rule"))
	assert.Contains(t, text(t, ctx, "#lab-found"), "rendered from the ledger as it is now (another balance or time)")
}

// TestLabPageCatchesTwoTakeovers: the scoped reference made to take a
// dead attempt's claim over whatever its lease says, and to commit its
// transfer though its completion found the claim no longer its own. One
// late retry alone breaks nothing; two, sent together after a1 crashed
// once the network had charged it, both take the claim over and both move
// the money. The explorer finds it in the scenario that sends them, the
// reference handler keeps every rule there, and the grade names the
// takeover as the cause (the scoped rung's), not a missing claim.
func TestLabPageCatchesTwoTakeovers(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	goToRung(t, ctx, "scoped")
	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "crash-then-two-late-retries"))
	setLabFile(t, ctx, scopedHandler(t))
	act(t, ctx, `#btn-lab-explore`)
	require.Equal(t, "held", attr(t, ctx, "body", "data-lab-explored"), text(t, ctx, "#lab-run-status"))
	setLabFile(t, ctx, changedHandler(t, "scoped",
		[2]string{"AND fingerprint = ? AND claimed_at < ?`", "AND fingerprint = ? AND ? > 0`"},
		[2]string{"  if (done.changes === 0) {", "  if (done.changes < 0) {"}))
	act(t, ctx, `#btn-lab-explore`)
	require.Equal(t, "broke", attr(t, ctx, "body", "data-lab-explored"), text(t, ctx, "#lab-run-status"))
	assert.Equal(t, "crash-then-two-late-retries", attr(t, ctx, "#lab-found", "data-scenario"), text(t, ctx, "#lab-run-status"))
	assert.Equal(t, "one-transfer-per-intent", attr(t, ctx, "#lab-found", "data-rule"), text(t, ctx, "#lab-found"))
	// Played on the bench: a1 dies once charged, by itself, as in the
	// explorer's runs, and the order breaks the rule there too.
	act(t, ctx, `#btn-lab-replay`)
	require.Equal(t, "true", attr(t, ctx, "body", "data-lab-done"))
	assert.Contains(t, text(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1]`), "crashed")
	assert.Equal(t, "false", attr(t, ctx, `#lab-verdict li[data-rule=one-transfer-per-intent]`, "data-ok"))
	// The cause is the takeover, the scoped rung's: not the unique rung's
	// claim, which both retries made (their INSERTs failed on the key).
	act(t, ctx, `#btn-lab-grade`)
	row := `#lab-grade tr[data-scenario=crash-then-two-late-retries]`
	assert.Contains(t, attr(t, ctx, row, "data-rule-causes"), "1:takeover-unchecked", text(t, ctx, row))
	assert.Contains(t, rowSays(t, ctx, row), "UPDATE that takes the claim over decide", text(t, ctx, row))
}

// TestLabPageSaysAChargeIsNotSettled: the scoped reference on the bench,
// a1 crashed once the network had charged it, a2 told 409 meanwhile.
// Every rule holds, and the verdict says why the picture shows a charge
// without its transfer: the request is not settled until a retry.
func TestLabPageSaysAChargeIsNotSettled(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	goToRung(t, ctx, "scoped")
	setLabFile(t, ctx, scopedHandler(t))
	onBench(t, ctx, "simultaneous-retries")
	stepUntilNext(t, ctx, "a1", "db.begin")
	act(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] button[data-focus="a1:crash"]`)
	stepAll(t, ctx)
	assert.Zero(t, countIn(t, ctx, `#lab-verdict li[data-ok=false]`), text(t, ctx, "#lab-verdict"))
	assert.Contains(t, text(t, ctx, `#lab-verdict .lab-unsettled[data-attempt=a1]`), "a1 crashed after the network charged it, and no transfer was made for its request")
	// Crashed before it paid: nothing to say.
	onBench(t, ctx, "simultaneous-retries")
	act(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] button[data-focus="a1:crash"]`)
	stepAll(t, ctx)
	assert.Zero(t, countIn(t, ctx, `#lab-verdict .lab-unsettled`))
}

// TestLabPageTellsATakeoverFromAPurge: the scoped reference made to take
// a dead attempt's claim over by deleting it and claiming the key again,
// and to complete the key in a transaction of its own, after the
// transfer's. A crash between the two leaves the claim in progress; the
// retry ten minutes later deletes it, claims, and pays again. The cause
// is the completion apart from the transfer: deleting a claim still in
// progress to take it over is not a purge of kept keys.
func TestLabPageTellsATakeoverFromAPurge(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	goToRung(t, ctx, "scoped")
	setLabFile(t, ctx, changedHandler(t, "scoped",
		[2]string{"      took = await db.run(`UPDATE idem_keys SET owner = ?, claimed_at = ?\n",
			"      took = await db.run(`DELETE FROM idem_keys\n"},
		[2]string{"        req.attempt, req.now, ...scope, fingerprint, req.now - LEASE_SECONDS * 1000);\n",
			"        ...scope, fingerprint, req.now - LEASE_SECONDS * 1000);\n" +
				"      if (took.changes > 0) await db.run(`INSERT INTO idem_keys (customer, endpoint, idem_key, fingerprint, state, owner, claimed_at, created_at)\n" +
				"                  VALUES (?, ?, ?, ?, 'in_progress', ?, ?, ?)`, ...scope, fingerprint, req.attempt, req.now, req.now);\n"},
		[2]string{"  const done = await db.run(`UPDATE idem_keys SET state = 'completed'", "  await db.commit();\n  await db.begin();\n  const done = await db.run(`UPDATE idem_keys SET state = 'completed'"}))
	act(t, ctx, `#btn-lab-grade`)
	row := `#lab-grade tr[data-scenario=crash-then-late-retry]`
	causes := attr(t, ctx, row, "data-rule-causes")
	assert.Contains(t, causes, "1:completed-apart", text(t, ctx, row))
	assert.NotContains(t, causes, "key-purged-early", text(t, ctx, row))
}

// TestLabPageExplorerFindsASecondPaymentAtTheUniqueRung: a student's
// handler on the unique rung looks for its key, pays, then INSERTs the
// key inside the transfer's transaction. Two simultaneous retries: one
// switch breaks only rule 3 (a later rung's); two switches let both
// attempts pay before either INSERTs (rule 8, whose cause, two live
// attempts paying, is this rung's). The explorer said the scenario broke
// only later rungs' rules; it now shows the second payment there.
func TestLabPageExplorerFindsASecondPaymentAtTheUniqueRung(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	goToRung(t, ctx, "unique")
	setLabFile(t, ctx, `const schema = `+"`"+`CREATE TABLE idem_keys (idem_key TEXT PRIMARY KEY, created_at INTEGER NOT NULL);`+"`"+`;
const retentionSeconds = 300;
async function transfer(req, db, pay) {
  if (req.customer === null) return lab.problem(401, 'X-Customer-ID header is required');
  const key = lab.parseKey(req.key);
  if (key === null) return lab.problem(400, 'Idempotency-Key is not a valid key');
  const t = lab.parseTransfer(req.body);
  if (t === null) return lab.problem(400, 'The body is not a transfer');
  const seen = await db.get('SELECT idem_key FROM idem_keys WHERE idem_key = ?', key);
  if (seen) return lab.json(200, { status: 'already_processed' });
  await pay({ from: t.from, to: t.to, amount: t.amount });
  await db.begin();
  await db.run('INSERT INTO idem_keys (idem_key, created_at) VALUES (?, ?)', key, req.now);
  await db.run('UPDATE accounts SET balance = balance - ? WHERE id = ?', t.amount, t.from);
  await db.run('UPDATE accounts SET balance = balance + ? WHERE id = ?', t.amount, t.to);
  const tr = await db.run('INSERT INTO transfers (from_id, to_id, amount, created_at) VALUES (?, ?, ?, ?)', t.from, t.to, t.amount, req.now);
  await db.commit();
  return lab.json(201, { transfer_id: 'tr_' + tr.lastInsertRowid });
}
`)
	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "simultaneous-retries"))
	act(t, ctx, `#btn-lab-explore`)
	require.Equal(t, "broke", attr(t, ctx, "body", "data-lab-explored"), text(t, ctx, "#lab-run-status"))
	assert.Equal(t, "simultaneous-retries", attr(t, ctx, "#lab-found", "data-scenario"), text(t, ctx, "#lab-run-status"))
	assert.Contains(t, strings.Split(attr(t, ctx, "#lab-found", "data-asked"), ","), "8", text(t, ctx, "#lab-found"))
}

// TestLabPageExplorerSaysAThrowTheGradeFails: on the unique rung, a
// handler that reads its key table first and INSERTs its key after,
// without catching the ConstraintError. Two simultaneous retries both
// read no row; the second INSERT throws and that attempt is answered 500.
// The rules the explorer's orders break are later rungs' (a generic
// answer), but the 500 is this rung's business, as the grade says: the
// explorer says the rung is not done, with the note and its order first
// (said once for all the scenarios that threw alike), and the later
// rungs' break after it. An edit marks the results as the old code's.
func TestLabPageExplorerSaysAThrowTheGradeFails(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	goToRung(t, ctx, "unique")
	// The unique reference, its claim made a read, then an INSERT whose
	// ConstraintError nothing catches.
	src, err := handlers.Source("unique")
	require.NoError(t, err)
	claim := regexp.MustCompile(`(?s)  try \{\n    await db\.run\('INSERT INTO idem_keys.*?\n  \}\n`)
	require.Regexp(t, claim, string(src))
	setLabFile(t, ctx, claim.ReplaceAllLiteralString(string(src), `  const seen = await db.get('SELECT idem_key FROM idem_keys WHERE idem_key = ?', key);
  if (seen) return lab.json(200, { status: 'already_processed' });
  await db.run('INSERT INTO idem_keys (idem_key, created_at) VALUES (?, ?)', key, req.now);
`))
	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "simultaneous-retries"))
	act(t, ctx, `#btn-lab-explore`)
	require.Equal(t, "broke", attr(t, ctx, "body", "data-lab-explored"), text(t, ctx, "#lab-run-status"))
	assert.Equal(t, "note", attr(t, ctx, "#lab-found", "data-asked"), text(t, ctx, "#lab-found"))
	// The status line leads with what holds the rung back, then the later
	// rungs' break.
	assert.True(t, strings.HasPrefix(text(t, ctx, "#lab-run-status"), "This rung is not done: your handler answered 5xx (it threw, or said so); see below. Besides that: "), text(t, ctx, "#lab-run-status"))
	assert.Equal(t, "false", attr(t, ctx, "#lab-found .lab-rung-sum", "data-done"))
	assert.Contains(t, text(t, ctx, "#lab-found .lab-rung-sum"), "This rung, rung 2 (unique), is not done: your handler answered 5xx (it threw, or said so)")
	assert.Contains(t, text(t, ctx, "#lab-found"), "expected at this rung", "the later rungs' break is still shown, after the note")
	// The same throw in several scenarios is said once, with their count.
	notes := eval[[]string](t, ctx, `[...document.querySelectorAll('#lab-found .lab-note')].map((e) => e.textContent.replace(/ \(the same in \d+ more scenarios?\)$/, ''))`)
	require.NotEmpty(t, notes)
	assert.Len(t, notes, len(slices.Compact(slices.Sorted(slices.Values(notes)))), "no note said twice: %q", notes)
	assert.Contains(t, text(t, ctx, "#lab-found"), "more scenario", "the scenarios that said the same are counted")
	assert.Equal(t, 1, countIn(t, ctx, "#lab-found #btn-lab-replay"))
	assert.Equal(t, 1, countIn(t, ctx, "#lab-found #btn-lab-replay-later"))
	assert.NotEqual(t, text(t, ctx, "#btn-lab-replay"), text(t, ctx, "#btn-lab-replay-later"), "two buttons, two names")
	// The note's order, played on the bench, ends in the throw.
	act(t, ctx, "#btn-lab-replay")
	assert.Contains(t, text(t, ctx, "#lab-lanes"), "threw ConstraintError")
	// The grade says the same of the rung.
	act(t, ctx, `#btn-lab-grade`)
	assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"), text(t, ctx, "#lab-grade .lab-rung-sum"))
	// An edit after the grade: the results say they judged the code as it
	// was, until the grade runs again.
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => { const e = document.getElementById('handler-box').editor; e.setText(e.text() + '\n// later\n'); })()`))
	run(t, ctx, waitJS(`document.getElementById('lab-grade').hasAttribute('data-stale')`))
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-stale"), "before your last change")
	act(t, ctx, `#btn-lab-grade`)
	assert.Zero(t, countIn(t, ctx, "#lab-grade[data-stale], #lab-grade .lab-stale"), "graded again, the results are the code's")
}

// TestLabPageExplorerLooksPastALaterRungsBreak: on the unique rung, a
// handler that lets a request without a key through (the key made
// optional). Two simultaneous retries, the scenario chosen, break only a
// later rung's rule (a generic answer, the replay rung's); the explorer
// goes on to the other scenarios and shows the one that breaks what this
// rung asks (two requests without a key both pay), saying so.
func TestLabPageExplorerLooksPastALaterRungsBreak(t *testing.T) {
	t.Parallel()
	ctx := onRungEdited(t, "unique", [2]string{"  if (key === null) return", "  if (key === null && req.key !== null) return"})
	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "simultaneous-retries"))
	act(t, ctx, `#btn-lab-explore`)
	require.Equal(t, "broke", attr(t, ctx, "body", "data-lab-explored"), text(t, ctx, "#lab-run-status"))
	assert.Equal(t, "missing-key", attr(t, ctx, "#lab-found", "data-scenario"), text(t, ctx, "#lab-run-status"))
	assert.Contains(t, strings.Split(attr(t, ctx, "#lab-found", "data-asked"), ","), "1", text(t, ctx, "#lab-found"))
	assert.Equal(t, "false", attr(t, ctx, "#lab-found .lab-rung-sum", "data-done"), text(t, ctx, "#lab-found"))
	assert.Contains(t, text(t, ctx, "#lab-run-status"), "only rules that later rungs fix broke")
}

// TestLabPageExplorerSearchesTheChosenScenarioFirst: the explorer searches
// the scenario chosen in the menu, then the others, and says which it
// searched; what it finds is said against the rung the student is on (a
// rule a later rung fixes is expected to break here), and rule 7 is
// unknown while the file publishes no retention.
func TestLabPageExplorerSearchesTheChosenScenarioFirst(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
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
	assert.Contains(t, text(t, ctx, `#lab-found li[data-rule=one-transfer-per-intent]`), "rung 2 (unique), this rung, asks for it")
	// The cause that makes a rule this rung's is said with its number.
	assert.Contains(t, text(t, ctx, "#lab-found .lab-rung-sum"), "is not done: it asks for rules 1, 8, which broke here, because two attempts both paid, and nothing stopped the second.")

	// The unique rung's own handler there: what still breaks is a later
	// rung's, said as expected, not as this rung's failure.
	useHandler(t, ctx, "unique")
	act(t, ctx, `#btn-lab-explore`)
	require.Equal(t, "broke", attr(t, ctx, "body", "data-lab-explored"), text(t, ctx, "#lab-run-status"))
	assert.Equal(t, "simultaneous-retries", attr(t, ctx, "#lab-found", "data-scenario"))
	assert.Equal(t, "true", attr(t, ctx, "#lab-found .lab-rung-sum", "data-done"), text(t, ctx, "#lab-found"))
	assert.Zero(t, countIn(t, ctx, `#lab-found li.fail`), text(t, ctx, "#lab-found"))
	assert.NotZero(t, countIn(t, ctx, `#lab-found li.expected`))

	// One rule the rung asks for, said in the singular.
	goToRung(t, ctx, "fingerprint")
	useHandler(t, ctx, "unique")
	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "corrected-amount"))
	act(t, ctx, `#btn-lab-explore`)
	require.Equal(t, "corrected-amount", attr(t, ctx, "#lab-found", "data-scenario"))
	assert.Contains(t, text(t, ctx, "#lab-found .lab-rung-sum"), "is not done: it asks for rule 2, which broke here, because a different request under a used key was taken for a retry.")
	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "simultaneous-retries"))

	// The top rung's handler breaks nothing anywhere: every scenario was
	// searched, and the words say so.
	useHandler(t, ctx, "scoped")
	act(t, ctx, `#btn-lab-explore`)
	require.Equal(t, "held", attr(t, ctx, "body", "data-lab-explored"), text(t, ctx, "#lab-run-status"))
	assert.Contains(t, text(t, ctx, "#lab-run-status"), "in any of the "+strconv.Itoa(scenarios)+" scenarios (“two identical requests at the same moment” first)")
	assert.Len(t, strings.Split(attr(t, ctx, "#lab-found", "data-searched"), ","), scenarios)
}

// TestLabGradeFitsAPhone: on a phone (390×844) the grade of every
// scenario stays inside the screen, its play buttons included: the
// rows stack rather than run off to the right.
func TestLabGradeFitsAPhone(t *testing.T) {
	t.Parallel()
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

// TestLabPageSaysRuleSevenOnce: a retention no longer than the clients'
// hour breaks rule 7 in every order alike. It is said once, under the
// grade's table, with what to change in the file; it is no row's break,
// and it hides no other: look-then-insert with such a retention still
// breaks rule 1 in two simultaneous retries.
func TestLabPageSaysRuleSevenOnce(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	goToRung(t, ctx, "scoped")
	src, err := handlers.Source("look-then-insert")
	require.NoError(t, err)
	require.Contains(t, string(src), "const retentionSeconds = 86400;")
	setLabFile(t, ctx, strings.Replace(string(src), "const retentionSeconds = 86400;", "const retentionSeconds = 3600;", 1))
	act(t, ctx, `#btn-lab-grade`)
	assert.Equal(t, "true", attr(t, ctx, "#lab-grade", "data-retention-broken"))
	assert.Subset(t, strings.Split(attr(t, ctx, "#lab-grade", "data-broken"), ","), []string{"1", "7"}, "rule 7 hides no other break")
	assert.Equal(t, 1, countIn(t, ctx, `#lab-grade [data-rule="7"]`), "said once")
	assert.Contains(t, text(t, ctx, `#lab-grade [data-rule="7"]`), "Rule 7 is broken: the retention your file publishes (3600 s) is not longer than the clients’ hour")
	assert.Contains(t, text(t, ctx, `#lab-grade [data-rule="7"]`), "const retentionSeconds = 86400")
	rowRules := eval[[]string](t, ctx, `[...document.querySelectorAll('#lab-grade tr[data-scenario]')].map((r) => r.dataset.rules)`)
	for _, rs := range rowRules {
		assert.NotContains(t, strings.Split(rs, ","), "7", "no row lists rule 7")
	}
	assert.Equal(t, "true", attr(t, ctx, `#lab-grade tr[data-scenario=simultaneous-retries]`, "data-broke"))
	assert.Contains(t, text(t, ctx, "#lab-grade"), "is not longer than the clients’ hour of retries (rule 7)")
	assert.NotContains(t, text(t, ctx, "#lab-grade"), "{base}", "the browser's words say where the file publishes it")
}

// TestLabPageCountsTheContractsHeaders: what a rung asks of its answers'
// headers counts for the rung. The in-progress reference without
// Retry-After on its 409 does not pass rung 4; the replay reference
// without Idempotent-Replayed: true on its replay does not pass rung 5.
// Each is said as a note with its cause and fix, as the grader notes it.
func TestLabPageCountsTheContractsHeaders(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	for _, c := range []struct{ rung, drop, cause string }{
		{"in-progress", ", { 'Retry-After': '1' }", "conflict-without-retry-after"},
		{"replay", ", 'Idempotent-Replayed': 'true'", "replay-unmarked"},
	} {
		goToRung(t, ctx, c.rung)
		src, err := handlers.Source(c.rung)
		require.NoError(t, err)
		require.Contains(t, string(src), c.drop)
		setLabFile(t, ctx, strings.ReplaceAll(string(src), c.drop, ""))
		act(t, ctx, `#btn-lab-grade`)
		assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"), "%s without it: %s", c.rung, text(t, ctx, "#lab-grade .lab-rung-sum"))
		assert.Equal(t, "<missing>", attr(t, ctx, `#rung-list button[data-rung=`+c.rung+`]`, "data-done"), "the ladder does not mark it")
		assert.Positive(t, countIn(t, ctx, `#lab-grade .lab-note[data-cause="`+c.cause+`"][data-expected="false"]`), "%s: noted, and asked for here", c.rung)
		assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "is not done yet: "+map[string]string{
			"conflict-without-retry-after": "a 409 came without Retry-After, in: ",
			"replay-unmarked":              "a replay came without Idempotent-Replayed: true, in: ",
		}[c.cause], "the rung's line says what its notes are")
	}
}

// TestLabPageFailsAHandlerThatThrows: a handler whose every keyed request
// throws (its key table is missing: the tables box left empty) breaks no
// rule, since nothing happens; it must not pass its rung, nor be told it
// holds what the top rung holds.
func TestLabPageFailsAHandlerThatThrows(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	goToRung(t, ctx, "scoped")
	useHandler(t, ctx, "scoped")
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('schema-box').editor.setText('')`))
	act(t, ctx, `#btn-lab-grade`)
	assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"), "%s", text(t, ctx, "#lab-grade .lab-rung-sum"))
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "your handler answered 5xx (it threw, or said so)")
	assert.Positive(t, countIn(t, ctx, `#lab-grade .lab-note[data-cause="handler-failed"]`))
	assert.NotContains(t, text(t, ctx, "#lab-grade .lab-grade-sum"), "holds what the top rung", "no contradiction under the table")
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-grade-sum"), "the notes above say what is still short")
}

// TestLabPageGradeNamesTheSlipsNoRuleSees: beginner's slips in the naive
// handler that no rule sees on every order, each said on the attempt's
// card and keeping the first rung from being done: db.commit() left
// without its await (the attempt answers first: the call never runs, and
// its transaction is rolled back), pay(…) left without its await (it
// runs, but its answer is never looked at), and a SELECT given to db.run
// (its row is thrown away: the balance check reads undefined).
func TestLabPageGradeNamesTheSlipsNoRuleSees(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	for _, c := range []struct {
		name   string
		edit   [2]string
		slips  []string // the cards' data-slip, in order
		says   []string // the rung's sum
		unsaid []string // not among the scenarios whose rules the slip broke
	}{
		{"commit not awaited", [2]string{"  await db.commit();", "  db.commit();"}, []string{"left-open"},
			[]string{"a call into db or pay was made without await", "your handler answered before COMMIT"}, nil},
		// The call runs (the next call waits behind it), but nothing asks
		// for its answer: a network that failed would go unseen.
		// Nor is it what broke the naive rung's rules where pay succeeded
		// (no key is): they are a later rung's, as without the slip. Where
		// the network failed, its NetworkError went unseen and the money
		// moved unpaid: there the slip is the cause.
		{"pay not awaited", [2]string{"  await pay({", "  pay({"}, []string{"not-awaited"},
			[]string{"a call into db or pay was made without await"}, []string{"two identical requests at the same moment"}},
		{"select given to run", [2]string{"const from = await db.get(", "const from = await db.run("}, []string{"dropped"},
			[]string{"a SELECT given to db.run threw its rows away"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			setLabFile(t, ctx, changedHandler(t, "naive", c.edit))
			act(t, ctx, `#btn-lab-grade`)
			assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"), text(t, ctx, "#lab-grade .lab-rung-sum"))
			for _, s := range c.says {
				assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), s)
			}
			for _, s := range c.unsaid {
				assert.NotContains(t, eval[string](t, ctx, `[...document.querySelectorAll('#lab-grade .lab-rung-sum li')].filter((l) => l.textContent.includes('which broke in')).map((l) => l.textContent).join(' ')`), s)
			}
			if c.name == "pay not awaited" {
				assert.Equal(t, "true", attr(t, ctx, `#lab-grade tr[data-scenario=simultaneous-retries]`, "data-expected"))
				assert.Contains(t, attr(t, ctx, `#lab-grade tr[data-scenario=network-down]`, "data-rule-causes"), ":"+lab.CauseNotAwaited)
			}
			// A slip is every rung's business: its note names no rung (the
			// first rung's name read as a step back on rung 4).
			slipRungs := eval[[]string](t, ctx, `[...document.querySelectorAll('#lab-grade .lab-note[data-cause]')].filter((n) => ['call-not-awaited', 'transaction-left-open', 'rows-dropped'].includes(n.dataset.cause)).map((n) => n.nextElementSibling ? n.nextElementSibling.textContent : '')`)
			require.NotEmpty(t, slipRungs, text(t, ctx, "#lab-grade"))
			for _, r := range slipRungs {
				assert.Equal(t, "every rung asks for it: this rung is not done", r)
			}
			run(t, ctx, chromedp.SetValue(`#lab-scenario`, "simultaneous-retries"))
			act(t, ctx, `#btn-lab-start`)
			stepAll(t, ctx)
			got := eval[[]string](t, ctx, `[...document.querySelectorAll('#lab-lanes .lab-lane[data-attempt=a1] [data-slip]')].map((e) => e.dataset.slip)`)
			assert.Equal(t, c.slips, got, text(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1]`))
			// A rule the slip broke says on the bench, as in the grade, that
			// every rung asks for it (not the first rung and each after it).
			notes := eval[[]string](t, ctx, `[...document.querySelectorAll('#lab-verdict li')].filter((l) => l.querySelector('.lab-cause[data-cause=transaction-left-open], .lab-cause[data-cause=call-not-awaited], .lab-cause[data-cause=rows-dropped]')).map((l) => l.querySelector('.lab-rung-note').textContent)`)
			if c.name == "commit not awaited" {
				require.NotEmpty(t, notes, "a1's transfer rolled back under its 201: %s", text(t, ctx, "#lab-verdict"))
			}
			for _, note := range notes {
				assert.Equal(t, "every rung asks for it: this rung is not done", note)
			}
		})
	}
	// The select's card names its line, as the editor numbers it.
	assert.Contains(t, text(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] [data-slip=dropped]`), "its db.run at line 18 was given a SELECT")
	// A transfer without X-Customer-ID answered 201: the rung is not done
	// on any rung, and the note says what the contract asks.
	setLabFile(t, ctx, changedHandler(t, "naive", [2]string{"  if (req.customer === null) return lab.problem(401, 'X-Customer-ID header is required');\n", ""}))
	act(t, ctx, `#btn-lab-grade`)
	assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"), text(t, ctx, "#lab-grade .lab-rung-sum"))
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "a transfer without X-Customer-ID was answered with success")
	assert.Contains(t, text(t, ctx, "#lab-grade"), "carried no X-Customer-ID and was answered 201; the contract says 401")
	// The reference handler makes none.
	setLabFile(t, ctx, changedHandler(t, "naive"))
	act(t, ctx, `#btn-lab-start`)
	stepAll(t, ctx)
	assert.Zero(t, countIn(t, ctx, `#lab-lanes [data-slip], #lab-lanes .lab-unawaited`))
}

// TestLabPageKeepsTheFocusWhileItWorks: the panel's buttons do nothing
// while an action runs, but the one pressed keeps the focus all the while
// (a disabled button drops it to the page's top, where a keyboard user's
// next Tab starts again): watched every frame from the press to the end.
func TestLabPageKeepsTheFocusWhileItWorks(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	for _, sel := range []string{"#btn-lab-grade", "#btn-lab-explore", "#btn-lab-start"} {
		run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => {
			window.labFocusSeen = [];
			const watch = () => {
				const now = document.activeElement ? (document.activeElement.id || document.activeElement.tagName) : 'none';
				if (window.labFocusSeen.at(-1) !== now) window.labFocusSeen.push(now);
				window.labFocusWatch = requestAnimationFrame(watch);
			};
			watch();
		})()`))
		act(t, ctx, sel)
		// Where the focus stood, in order, from the press on.
		seen := eval[[]string](t, ctx, `(() => { cancelAnimationFrame(window.labFocusWatch); return window.labFocusSeen; })()`)
		pressed := slices.Index(seen, strings.TrimPrefix(sel, "#"))
		require.GreaterOrEqual(t, pressed, 0, "%s: pressing it focuses it (seen on %v)", sel, seen)
		assert.NotContains(t, seen[pressed:], "BODY", "%s: the focus fell to the page while it ran (seen on %v)", sel, seen)
		assert.Equal(t, "<missing>", attr(t, ctx, sel, "aria-disabled"), "%s: marked usable again at the end", sel)
		assert.False(t, eval[bool](t, ctx, `document.querySelector(`+quoteJS(sel)+`).disabled`), sel)
	}
}

// TestLabPageSaysALeaseIsTooShort: the scoped reference with a lease of a
// millisecond. Its owner check and keyed payment keep every rule, but a
// retry sent a second after the first takes the first's claim while the
// first still runs: the grade says so, with its cause, and the rung is
// not done. The explorer says it too.
func TestLabPageSaysALeaseIsTooShort(t *testing.T) {
	t.Parallel()
	ctx := onRungEdited(t, "scoped", [2]string{"const LEASE_SECONDS = 30;", "const LEASE_SECONDS = 0.001;"})
	act(t, ctx, `#btn-lab-grade`)
	assert.Empty(t, attr(t, ctx, "#lab-grade", "data-broken"), "no rule broke")
	assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"), text(t, ctx, "#lab-grade .lab-rung-sum"))
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "a retry took over a claim whose attempt was still running")
	cause := `#lab-grade .lab-cause[data-note][data-cause=lease-too-short]`
	require.NotZero(t, countIn(t, ctx, cause), text(t, ctx, "#lab-grade"))
	row := eval[string](t, ctx, `document.querySelector('`+cause+`').closest('tr').dataset.scenario`)
	assert.Contains(t, text(t, ctx, `#lab-grade tr[data-scenario=`+row+`]`), "while a1 was still running")
	assert.Contains(t, text(t, ctx, `#lab-grade tr[data-scenario=`+row+`]`), "make the lease longer than any transfer can take")

	// Played on the bench, the verdict says where: the retry's UPDATE
	// that took the row (the tenth simulated student found no line).
	where := whereOnBench(t, ctx, row, "lease-too-short")
	takeover := lineOf(t, eval[string](t, ctx, handlerText), "took = await db.run(`UPDATE idem_keys SET owner = ?, claimed_at = ?")
	assert.Equal(t, strconv.Itoa(takeover), attr(t, ctx, where, "data-line"))
	assert.Regexp(t, fmt.Sprintf(`^Where: a\d’s db.run at line %d: UPDATE idem_keys SET owner = \?, claimed_at`, takeover), text(t, ctx, where))

	run(t, ctx, chromedp.SetValue(`#lab-scenario`, row))
	act(t, ctx, `#btn-lab-explore`)
	assert.Equal(t, "note", attr(t, ctx, "#lab-found", "data-asked"), text(t, ctx, "#lab-found"))
	assert.True(t, strings.HasPrefix(text(t, ctx, "#lab-run-status"), "This rung is not done: a retry took over a claim whose attempt was still running"), text(t, ctx, "#lab-run-status"))
}

// TestLabPageAsksForTheKeysSyntax: the scoped reference, but a key that
// lab.parseKey refuses is taken as sent. No rule breaks, and the grade
// said the rung was done while its rows listed the malformed keys answered
// 201: the contract's 400 is now a cause the unique rung (and every rung
// above it) asks for.
func TestLabPageAsksForTheKeysSyntax(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	goToRung(t, ctx, "scoped")
	// Typed over, the code is the student's: the sentence that said whose
	// code the editor held says so.
	require.NotContains(t, text(t, ctx, "#lab-status"), "code you wrote on this rung")
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => { const e = document.getElementById('handler-box').editor; e.setText(e.text() + '\n// mine\n'); })()`))
	assert.Contains(t, text(t, ctx, "#lab-status"), "the editor holds the code you wrote on this rung")
	// Graded done, the rung has its ✔; code that cannot be loaded takes
	// it away.
	useHandler(t, ctx, "scoped")
	act(t, ctx, `#btn-lab-grade`)
	require.Equal(t, "true", attr(t, ctx, `#rung-list button[data-rung=scoped]`, "data-done"))
	setLabFile(t, ctx, "const schema = ``;\nasync function transfer(req, db, pay) { return ( }\n")
	run(t, ctx, chromedp.Click(`#btn-lab-grade`))
	run(t, ctx, waitJS(`!document.querySelector('#rung-list button[data-rung=scoped]').dataset.done`))

	setLabFile(t, ctx, changedHandler(t, "scoped", [2]string{"const key = lab.parseKey(req.key);", "const key = lab.parseKey(req.key) ?? req.key;"}))
	act(t, ctx, `#btn-lab-grade`)
	assert.Empty(t, attr(t, ctx, "#lab-grade", "data-broken"), "no rule broke")
	assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"), text(t, ctx, "#lab-grade .lab-rung-sum"))
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "a key the contract refuses was not answered 400")
	row := `#lab-grade tr[data-scenario=malformed-keys]`
	assert.NotEqual(t, "0", attr(t, ctx, row, "data-notes-asked"))
	assert.Equal(t, "key-unchecked", attr(t, ctx, row+" .lab-cause[data-note]", "data-cause"))
	assert.Contains(t, text(t, ctx, row), "lab.parseKey")
	assert.Contains(t, text(t, ctx, row), "rung 2 (unique) asks for it, and so does every rung after it: this rung, rung 6 (scope, retention, lease), is not done yet")
	assert.NotContains(t, text(t, ctx, "#lab-grade"), "holds what the top rung", "not said to hold what the top rung holds")
	// Each malformed key that went through is said; what went wrong and
	// what to change are said once (three copies of the advice read as
	// noise on a phone, for the fifteenth simulated student).
	assert.Greater(t, countIn(t, ctx, row+" .lab-note[data-cause=key-unchecked]"), 1)
	assert.Equal(t, 1, countIn(t, ctx, row+" .lab-cause[data-cause=key-unchecked]"))
	assert.Equal(t, 1, countIn(t, ctx, row+" .lab-fix"))
}

// TestLabPageSaysThePaymentIsInsideTheTransaction: the scoped reference
// with its BEGIN moved before the payment. Every rule holds; the grade
// notes the slip at its line, and every rung asks for it.
func TestLabPageSaysThePaymentIsInsideTheTransaction(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	goToRung(t, ctx, "scoped")
	setLabFile(t, ctx, changedHandler(t, "scoped",
		[2]string{"  await db.begin();\n  if (!answer) {", "  if (!answer) {"},
		[2]string{"  let answer;\n", "  let answer;\n  await db.begin();\n"}))
	act(t, ctx, `#btn-lab-grade`)
	assert.Empty(t, attr(t, ctx, "#lab-grade", "data-broken"), "no rule broke")
	assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"), text(t, ctx, "#lab-grade .lab-rung-sum"))
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "the network was called inside a transaction")
	cause := `#lab-grade .lab-cause[data-note][data-cause=pay-in-transaction]`
	require.NotZero(t, countIn(t, ctx, cause), text(t, ctx, "#lab-grade"))
	row := `#lab-grade tr[data-scenario=` + eval[string](t, ctx, `document.querySelector('`+cause+`').closest('tr').dataset.scenario`) + `]`
	assert.Regexp(t, `called pay at line \d+ with its transaction open`, text(t, ctx, row))
	assert.Contains(t, text(t, ctx, row), "every rung asks for it")
	// Played, the attempt's card says it at its line.
	act(t, ctx, row+` button`)
	assert.Regexp(t, `its pay at line \d+ ran with its transaction open`, text(t, ctx, `#lab-lanes [data-slip=pay-in-transaction]`))
}

// TestLabPageSaysARequestWaitsForNobody: the scoped handler with a catch
// around its key's INSERT that goes on past any error, a misspelt column
// in that INSERT, and a 409 when the key's row is not there: every
// request of every scenario is told to come back later, nothing moves,
// and no rule breaks. The grade does not pass it: every attempt of a
// request waited for no one. Nor does it blame the key's scope or
// length, which the handler never looked at.
func TestLabPageSaysARequestWaitsForNobody(t *testing.T) {
	t.Parallel()
	edits := [][2]string{
		{"    if (e.name !== 'ConstraintError') throw e;\n", ""},
		{"INSERT INTO idem_keys (customer, endpoint, idem_key, fingerprint,", "INSERT INTO idem_keys (customer, endpoint, idem_key, fingerprnt,"},
		{"      if (row.fingerprint !== fingerprint)", "      if (!row) return lab.problem(409, 'A request with this key is still being processed', 'retry in a second', { 'Retry-After': '1' });\n      if (row.fingerprint !== fingerprint)"},
	}
	ctx := onRungEdited(t, "scoped", edits...)
	insert := lineOf(t, eval[string](t, ctx, handlerText), "INSERT INTO idem_keys (customer, endpoint, idem_key, fingerprnt,") // as the editor numbers it
	act(t, ctx, `#btn-lab-grade`)
	assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"), text(t, ctx, "#lab-grade .lab-rung-sum"))
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "a request was told to wait though no attempt was working on it")
	row := `#lab-grade tr[data-scenario=simultaneous-retries]`
	require.NotZero(t, countIn(t, ctx, row+` .lab-note[data-cause=wait-for-nobody]`), text(t, ctx, row))
	assert.Contains(t, text(t, ctx, row), "every attempt of i1 was told to come back later (a1 409, a2 409)")
	// Every rung asks for it (the first rung never answers 409).
	assert.Contains(t, text(t, ctx, row), "every rung asks for it: this rung is not done")
	// And the error the catch went on past, at its line: what to mend.
	assert.Contains(t, text(t, ctx, row), fmt.Sprintf("db.run at line %d failed with SQLError (table idem_keys has no column named fingerprnt), and the handler went on past it", insert))
	// On the bench, the attempt's card says it too.
	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "simultaneous-retries"))
	act(t, ctx, `#btn-lab-start`)
	stepAll(t, ctx)
	card := `#lab-lanes .lab-lane[data-attempt=a1] [data-slip=failed-call]`
	require.NotZero(t, countIn(t, ctx, card), text(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1]`))
	assert.Contains(t, text(t, ctx, card), fmt.Sprintf("its db.run at line %d failed (SQLError: ", insert))
	assert.Contains(t, text(t, ctx, card), "no column named fingerprnt")
	// Whose key it was decided nothing, nor did the key's length: the
	// handler refuses every request alike.
	assert.NotContains(t, strings.Split(attr(t, ctx, "#lab-grade", "data-broken"), ","), "5")
	assert.Zero(t, countIn(t, ctx, `#lab-grade .lab-note[data-cause=longest-key-refused]`), text(t, ctx, `#lab-grade tr[data-scenario=longest-key]`))
}

// TestLabPageSaysARefusalWasNotReturned: the scoped reference with the
// return left out before its 422 (the tenth simulated student's slip):
// the refusal is built and dropped, the code goes on, and a different
// request under a used key is answered as the first. The grade names the
// dropped refusal at its line, as what broke rule 2, where it used to
// say the fingerprint was never compared.
func TestLabPageSaysARefusalWasNotReturned(t *testing.T) {
	t.Parallel()
	ctx := onRungEdited(t, "scoped", [2]string{
		"if (row.fingerprint !== fingerprint) return lab.problem(422,",
		"if (row.fingerprint !== fingerprint) lab.problem(422,",
	})
	line := lineOf(t, eval[string](t, ctx, handlerText), "if (row.fingerprint !== fingerprint) lab.problem(422,")
	act(t, ctx, `#btn-lab-grade`)
	assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"))
	row := `#lab-grade tr[data-scenario=corrected-amount]`
	assert.Contains(t, attr(t, ctx, row, "data-rule-causes"), "2:answer-not-returned", text(t, ctx, row))
	assert.Contains(t, rowSays(t, ctx, row), fmt.Sprintf("built the refusal lab.problem(422, …) at line %d and never returned it", line))
	assert.Contains(t, rowSays(t, ctx, row), "return lab.problem(…)")
}

// TestLabPageSaysAClaimLeftByAnAnswer: the scoped reference returning its
// 402 before the key is completed (the eleventh simulated student's
// mistake): the claim stays in progress, and the retry after the top-up is
// told 409 by a claim no one works on. No rule sees it (a 409 is no
// answer), and the grade passed it; it is now a note the in-progress rung
// asks for.
func TestLabPageSaysAClaimLeftByAnAnswer(t *testing.T) {
	t.Parallel()
	ctx := gradedNotDone(t, "scoped", [2]string{
		"  else if (from.balance < t.amount) answer = lab.problem(402,",
		"  else if (from.balance < t.amount) return lab.problem(402,",
	})
	row := `#lab-grade tr[data-scenario=refusal-then-top-up]`
	require.NotZero(t, countIn(t, ctx, row+` .lab-note[data-cause=claim-left-by-answer]`), text(t, ctx, row))
	assert.Contains(t, text(t, ctx, row), "a1 answered 402 and left its claim in progress: its retry a2, sent after that answer, was told 409 (come back later) by a claim no attempt was working on")
	assert.Contains(t, rowSays(t, ctx, row), "settle the claim on every path that answers")
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "an attempt answered and left its claim in progress, so its retry was told to wait")
	// (The reference as it is, which settles its claim on every path, is
	// graded done in TestLabPageGradesEveryHandler.)
}

// TestLabPageSaysAFingerprintChangesPerAttempt: the scoped reference with
// req.attempt in its fingerprint (the eleventh simulated student's
// mistake). A retry of the very same bytes is refused 422; the grade said
// another customer's key had decided it, and that the body's spacing or
// order was compared. The row of the simultaneous retries now says that
// the fingerprint differed between two attempts of one request, and what
// it must be made of.
func TestLabPageSaysAFingerprintChangesPerAttempt(t *testing.T) {
	t.Parallel()
	ctx := gradedNotDone(t, "scoped", [2]string{
		"const fingerprint = lab.sha256(ENDPOINT + '\\n' + lab.canonical(req.body));",
		"const fingerprint = lab.sha256(ENDPOINT + '\\n' + lab.canonical(req.body) + req.attempt);",
	})
	row := `#lab-grade tr[data-scenario=simultaneous-retries]`
	require.NotZero(t, countIn(t, ctx, row+` .lab-note[data-cause=fingerprint-unstable]`), text(t, ctx, row))
	assert.Regexp(t, `a\d sent the very bytes of a\d's request, under the same key and from the same customer, and was refused 422 as a different request`, text(t, ctx, row))
	assert.Contains(t, rowSays(t, ctx, row), "make the fingerprint from the request alone")
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "the same request, byte for byte, was refused as a different one")
	assert.NotContains(t, text(t, ctx, row), "another customer", "no other customer sent anything there")
}

// TestLabPageSaysAKeyInProgressIsAnswered409: the scoped reference
// answering 429 where its key is still in progress (the eleventh
// simulated student's change, which the grade passed): the rung is not
// done, and the note says the contract's 409.
func TestLabPageSaysAKeyInProgressIsAnswered409(t *testing.T) {
	t.Parallel()
	ctx := gradedNotDone(t, "scoped", [2]string{
		"if (row.state === 'in_progress') return lab.problem(409,",
		"if (row.state === 'in_progress') return lab.problem(429,",
	})
	require.NotZero(t, countIn(t, ctx, `#lab-grade .lab-note[data-cause=in-progress-not-409]`), text(t, ctx, "#lab-grade"))
	assert.Regexp(t, `a\d was answered 429 while a\d, the same request under its key, was still running: the contract answers 409 Conflict`, text(t, ctx, "#lab-grade"))
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "a retry of a request in progress got 429, not 409")
}

// TestLabPageSaysWhereAClaimWasIgnored: the insert-or-ignore mistake,
// graded, its broken order played on the bench, then explored: the grade's
// row, the bench's verdict and the explorer's panel each name the claim's INSERT OR IGNORE at its line
// (the tenth simulated student found the cause said with no line; the
// grade named none until it kept the trace of the order it replays).
func TestLabPageSaysWhereAClaimWasIgnored(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	goToRung(t, ctx, "scoped")
	useHandler(t, ctx, "insert-or-ignore")
	act(t, ctx, `#btn-lab-grade`)
	row := rowWithCause(t, ctx, "claim-ignored")
	insert := strconv.Itoa(lineOf(t, eval[string](t, ctx, handlerText), "await db.run(`INSERT OR IGNORE"))
	graded := `#lab-grade tr[data-scenario=` + row + `] [data-cause=claim-ignored] ~ .lab-where`
	require.NotZero(t, countIn(t, ctx, graded), text(t, ctx, `#lab-grade tr[data-scenario=`+row+`]`))
	assert.Equal(t, insert, attr(t, ctx, graded, "data-line"))
	where := whereOnBench(t, ctx, row, "claim-ignored")
	assert.Equal(t, insert, attr(t, ctx, where, "data-line"))
	assert.Contains(t, text(t, ctx, where), "INSERT OR IGNORE INTO idem_keys")
	// The explorer's panel names it too, from the order it found.
	run(t, ctx, chromedp.SetValue(`#lab-scenario`, row))
	act(t, ctx, `#btn-lab-explore`)
	found := `#lab-found [data-cause=claim-ignored] ~ .lab-where`
	require.NotZero(t, countIn(t, ctx, found), text(t, ctx, "#lab-found"))
	assert.Equal(t, insert, attr(t, ctx, found, "data-line"))
}

// TestLabPageSaysACheckThenInsertThrows: the look-then-insert mistake with
// the key table's primary key back (the twelfth simulated student's
// check-then-insert): two identical requests together both look, both
// find nothing, and the second INSERT throws ConstraintError. The bench
// showed the 500, but the grade's row said "no break" with no note: the
// explorer took as the scenario's noted order the first whose brief
// verdict counted a note, a 409 read as one without Retry-After (the
// brief answers carried no Retry-After), and its full replay had none.
func TestLabPageSaysACheckThenInsertThrows(t *testing.T) {
	t.Parallel()
	ctx := readyLab(t)
	goToRung(t, ctx, "scoped")
	setLabFile(t, ctx, changedHandler(t, "look-then-insert", [2]string{
		"  created_at  INTEGER NOT NULL   -- Unix ms, for the retention\n);",
		"  created_at  INTEGER NOT NULL,  -- Unix ms, for the retention\n  PRIMARY KEY (customer, endpoint, idem_key)\n);",
	}))
	act(t, ctx, `#btn-lab-grade`)
	row := `#lab-grade tr[data-scenario=simultaneous-retries]`
	require.NotZero(t, countIn(t, ctx, row+` .lab-note[data-cause=handler-failed]`), text(t, ctx, row))
	assert.Regexp(t, `a\d was answered 500: the handler threw ConstraintError at line \d+: UNIQUE constraint failed`, text(t, ctx, row))
	assert.Zero(t, countIn(t, ctx, `#lab-grade .lab-note[data-cause=conflict-without-retry-after]`), "every 409 of the handler carries Retry-After: 1")
}

// TestLabPageSaysAReleaseOfAnotherAttemptsClaim: the scoped reference
// deleting the key's row on its 422 path (the thirteenth simulated
// student's mistake). The corrected request, refused, takes the first
// request's row away, and the first request's retry runs again. The
// grade blamed a purge of old keys before the published retention; it
// now names the release of a claim that was not the attempt's own.
func TestLabPageSaysAReleaseOfAnotherAttemptsClaim(t *testing.T) {
	t.Parallel()
	ctx := gradedNotDone(t, "scoped", [2]string{
		"      if (row.fingerprint !== fingerprint) return lab.problem(422,",
		"      if (row.fingerprint !== fingerprint) await db.run('DELETE FROM idem_keys WHERE customer = ? AND endpoint = ? AND idem_key = ?', ...scope);\n      if (row.fingerprint !== fingerprint) return lab.problem(422,",
	})
	row := rowWithCause(t, ctx, "released-another-claim")
	assert.Contains(t, rowSays(t, ctx, `#lab-grade tr[data-scenario=`+row+`]`), "delete only your own claim, and only while it is in progress")
	assert.NotContains(t, eval[string](t, ctx, `[...document.querySelectorAll('#lab-grade tr[data-scenario]')].map((r) => r.dataset.ruleCauses || '').join(' ')`), ":key-purged-early", "no purge of old keys")
}

// TestLabPageSaysWhereAKeyIsReadWithoutItsCustomer: the scoped reference
// whose lookup after a used key reads the row by the key alone (the
// thirteenth simulated student's mistake): its table's primary key holds
// the customer, so only "every SQL statement" in the fix pointed at the
// lookup. Played on the bench, the verdict names the statement at its line.
func TestLabPageSaysWhereAKeyIsReadWithoutItsCustomer(t *testing.T) {
	t.Parallel()
	ctx := gradedNotDone(t, "scoped", [2]string{
		"      const row = await db.get(`SELECT fingerprint, state, status, type, body FROM idem_keys\n                                 WHERE customer = ? AND endpoint = ? AND idem_key = ?`, ...scope);",
		"      const row = await db.get(`SELECT fingerprint, state, status, type, body FROM idem_keys\n                                 WHERE idem_key = ?`, key);",
	}, [2]string{
		// A purge of old keys by age, before the claim, without the
		// customer too: the sixteenth simulated student was pointed at
		// such a DELETE, run first, not at the read that did the harm.
		"  // 2. Claim the key",
		"  await db.run(`DELETE FROM idem_keys WHERE endpoint = ? AND state = 'completed' AND created_at < ?`, ENDPOINT, req.now - retentionSeconds * 1000);\n  // 2. Claim the key",
	})
	where := whereOnBench(t, ctx, rowWithCause(t, ctx, "global-keys"), "global-keys")
	lookup := lineOf(t, eval[string](t, ctx, handlerText), "const row = await db.get(`SELECT fingerprint, state, status, type, body FROM idem_keys")
	assert.Equal(t, strconv.Itoa(lookup), attr(t, ctx, where, "data-line"))
	assert.Contains(t, text(t, ctx, where), "SELECT fingerprint, state, status, type, body FROM idem_keys WHERE idem_key = ?")
}

// TestLabPageSaysANetworkFailureAnsweredAsSettled: the in-progress
// reference answering pay's failure with a 402 and completing its key
// (the fourteenth simulated student's). Its retry was told the key was
// done, a success with no transfer behind it: rule 4. The rows said a
// generic replay, the replay rung's fix; the cause is the failure taken
// for the request's answer, which the in-progress rung asks about.
func TestLabPageSaysANetworkFailureAnsweredAsSettled(t *testing.T) {
	t.Parallel()
	ctx := gradedNotDone(t, "in-progress", [2]string{
		"else await pay({ from: t.from, to: t.to, amount: t.amount });",
		"else await pay({ from: t.from, to: t.to, amount: t.amount }).catch(() => { answer = lab.problem(402, 'Payment failed', 'the network failed'); });",
	})
	row := rowWithCause(t, ctx, "failure-completed")
	assert.Contains(t, []string{"network-answer-lost", "network-down"}, row)
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "the network’s failure was answered as settled and completed the key")
	assert.Contains(t, text(t, ctx, `#lab-grade tr[data-scenario=`+row+`]`), "answer 5xx (503)")
}

// TestLabPageSaysAThrowAfterCommitFreedTheKey: the in-progress reference
// throwing after its COMMIT, its error path deleting the key whatever its
// state (the fourteenth simulated student's). The retry found the key
// free and moved the money again; the rows told the student to claim the
// key with one plain INSERT, which the handler did.
func TestLabPageSaysAThrowAfterCommitFreedTheKey(t *testing.T) {
	t.Parallel()
	ctx := gradedNotDone(t, "in-progress",
		[2]string{"WHERE idem_key = ? AND owner = ? AND state = 'in_progress'`, key, req.attempt);\n    throw e;",
			"WHERE idem_key = ? AND owner = ?`, key, req.attempt);\n    throw e;"},
		[2]string{"  await db.commit();\n  return answer;", "  await db.commit();\n  if (answer.status === 201) throw new TypeError('no receipt');\n  return answer;"})
	row := rowWithCause(t, ctx, "completed-key-released")
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "a throw after COMMIT deleted a key whose transfer was done")
	// Where: the error path's DELETE (the fifteenth simulated student was
	// pointed at the throw).
	where := `#lab-grade tr[data-scenario=` + row + `] [data-cause=completed-key-released] ~ .lab-where`
	require.NotZero(t, countIn(t, ctx, where), text(t, ctx, `#lab-grade tr[data-scenario=`+row+`]`))
	assert.Contains(t, text(t, ctx, where), "DELETE FROM idem_keys")
}

// TestLabPageSaysAnUpdateWithNoWhere: the scoped reference completing its
// key with an UPDATE that lost its WHERE (the fifteenth simulated
// student's), which completes every key's row: the rows blamed a short
// lease and pointed at the debit. The slip is named, at its line.
func TestLabPageSaysAnUpdateWithNoWhere(t *testing.T) {
	t.Parallel()
	ctx := gradedNotDone(t, "scoped", [2]string{
		"body = ?\n                              WHERE customer = ? AND endpoint = ? AND idem_key = ? AND owner = ? AND state = 'in_progress'`,\n    answer.status, answer.headers['Content-Type'], answer.body, ...scope, req.attempt);",
		"body = ?`,\n    answer.status, answer.headers['Content-Type'], answer.body);",
	})
	row := rowWithCause(t, ctx, "where-missing")
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "an UPDATE or a DELETE with no WHERE changed every row")
	where := `#lab-grade tr[data-scenario=` + row + `] [data-cause=where-missing] ~ .lab-where`
	require.NotZero(t, countIn(t, ctx, where), text(t, ctx, `#lab-grade tr[data-scenario=`+row+`]`))
	assert.Equal(t, strconv.Itoa(lineOf(t, eval[string](t, ctx, handlerText), "const done = await db.run(`UPDATE idem_keys SET state = 'completed'")), attr(t, ctx, where, "data-line"))
}

// TestLabPageSaysAWriteGivenToGet: the scoped reference debiting with
// db.get (the fifteenth simulated student's): the debit ran, get answered
// undefined, and the next line threw; the rows blamed keys not scoped
// by customer. The slip is named.
func TestLabPageSaysAWriteGivenToGet(t *testing.T) {
	t.Parallel()
	ctx := gradedNotDone(t, "scoped", [2]string{
		"const debit = await db.run('UPDATE accounts",
		"const debit = await db.get('UPDATE accounts",
	})
	require.NotZero(t, countIn(t, ctx, `#lab-grade .lab-note[data-cause=write-given-to-get]`), text(t, ctx, "#lab-grade"))
	sum := text(t, ctx, "#lab-grade .lab-rung-sum")
	assert.Contains(t, sum, "a write given to db.get or db.all answered no row")
	assert.NotContains(t, sum, "another customer")
	assert.NotContains(t, sum, "the network’s failure was stored", "the retry's 500 was its own throw, not the first's stored")
}

// TestLabPageSaysTheKeyTableHasNothingUnique: the unique reference with
// its key table's PRIMARY KEY left out (the fifteenth simulated student's
// table): every claim's INSERT succeeded, and the rows said the key was
// not looked at, though the handler claimed it. The cause names the
// table, and the unique rung asks for it.
func TestLabPageSaysTheKeyTableHasNothingUnique(t *testing.T) {
	t.Parallel()
	ctx := gradedNotDone(t, "unique", [2]string{"idem_key    TEXT PRIMARY KEY,", "idem_key    TEXT NOT NULL,"})
	rowWithCause(t, ctx, "key-not-unique")
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "the key table has no PRIMARY KEY or UNIQUE on the key")
}

// TestLabPageSaysATakeoverKeptTheDeadOwner: the scoped reference whose
// lease takeover refreshes claimed_at but not the owner (the sixteenth
// simulated student's): the late retry took the row over and was told
// 409 all the same, for its completion WHERE owner = ? found nothing.
// The note said to give each claim a lease, which the handler had.
func TestLabPageSaysATakeoverKeptTheDeadOwner(t *testing.T) {
	t.Parallel()
	ctx := gradedNotDone(t, "scoped", [2]string{
		"took = await db.run(`UPDATE idem_keys SET owner = ?, claimed_at = ?",
		"took = await db.run(`UPDATE idem_keys SET claimed_at = ?",
	}, [2]string{
		"        req.attempt, req.now, ...scope, fingerprint, req.now - LEASE_SECONDS * 1000);",
		"        req.now, ...scope, fingerprint, req.now - LEASE_SECONDS * 1000);",
	})
	require.NotZero(t, countIn(t, ctx, `#lab-grade .lab-note[data-cause=takeover-kept-owner]`), text(t, ctx, "#lab-grade"))
	sum := text(t, ctx, "#lab-grade .lab-rung-sum")
	assert.Contains(t, sum, "a takeover left the claim the dead attempt’s")
	assert.NotContains(t, sum, "a claim a crash left is never settled")
}

// TestLabPageSaysABalanceReadBeforeTheDebit: the scoped reference
// answering with the balance it read before the debit (the sixteenth
// simulated student's): every 201's balance_after says a balance the
// account no longer had, and the grade passed it.
func TestLabPageSaysABalanceReadBeforeTheDebit(t *testing.T) {
	t.Parallel()
	ctx := gradedNotDone(t, "scoped", [2]string{"balance_after: after.balance", "balance_after: from.balance"})
	require.NotZero(t, countIn(t, ctx, `#lab-grade .lab-note[data-cause=balance-after-wrong]`), text(t, ctx, "#lab-grade"))
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "a success’s balance_after is not the balance after its transfer")
}

// TestLabPageSaysAFingerprintComparedWithTheRawBodyIsNotGlobalKeys: the
// scoped reference comparing the stored fingerprint with a hash of the
// raw body (the sixteenth simulated student's): another customer's retry
// of its own request is refused 422 by its own row. The row said "keys
// are global", though every statement on a key named the customer; the
// played order's trace shows they did, and the cause is the fingerprint.
func TestLabPageSaysAFingerprintComparedWithTheRawBodyIsNotGlobalKeys(t *testing.T) {
	t.Parallel()
	ctx := gradedNotDone(t, "scoped", [2]string{
		"if (row.fingerprint !== fingerprint)",
		"if (row.fingerprint !== lab.sha256(ENDPOINT + '\\n' + req.body))",
	})
	causes := eval[string](t, ctx, `[...document.querySelectorAll('#lab-grade tr[data-scenario]')].map((r) => r.dataset.scenario + '=' + (r.dataset.ruleCauses || '')).join(' ')`)
	assert.NotContains(t, causes, "global-keys", "every statement on a key named its customer")
	row := `#lab-grade tr[data-scenario=another-customers-key-then-retry]`
	assert.Contains(t, attr(t, ctx, row, "data-rule-causes"), "fingerprint-unstable", text(t, ctx, row))
}
