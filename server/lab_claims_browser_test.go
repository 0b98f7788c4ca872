package server_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLabPageSaysADifferentRequestMustNotWait: the in-progress reference
// with its two reads after a failed INSERT swapped, the state before the
// fingerprint. The teller's corrected amount, sent while the first
// request still runs, is told 409 (come back later) for a key it can
// never use. No rule breaks, but the grade notes it on that scenario's
// row, with its cause and fix, and the rung is not done; the explorer
// finds the order that shows it.
func TestLabPageSaysADifferentRequestMustNotWait(t *testing.T) {
	t.Parallel()
	ctx := onRungEdited(t, "in-progress", [2]string{
		"      if (row.fingerprint !== fingerprint) return lab.problem(422,",
		"      if (row.state === 'in_progress') return lab.problem(409, 'A request with this key is still being processed', 'retry in a second', { 'Retry-After': '1' });\n" +
			"      if (row.fingerprint !== fingerprint) return lab.problem(422,",
	})
	act(t, ctx, `#btn-lab-grade`)
	// The rules this rung asks for hold; later rungs' rules break, as
	// they do for the reference.
	assert.Equal(t, "1,3,4,5,7,8", attr(t, ctx, "#lab-grade", "data-broken"))
	assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"), text(t, ctx, "#lab-grade .lab-rung-sum"))
	assert.Contains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "the key's state was read before its fingerprint")
	row := `#lab-grade tr[data-scenario=correction-while-running]`
	require.NotZero(t, countIn(t, ctx, row+` .lab-cause[data-note][data-cause=state-before-fingerprint]`), text(t, ctx, "#lab-grade"))
	assert.Contains(t, text(t, ctx, row), "was answered 409 (come back later) while")
	assert.Contains(t, text(t, ctx, row), "compare the fingerprint first")

	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "correction-while-running"))
	act(t, ctx, `#btn-lab-explore`)
	assert.Equal(t, "note", attr(t, ctx, "#lab-found", "data-asked"), text(t, ctx, "#lab-found"))
	status := text(t, ctx, "#lab-run-status")
	assert.True(t, strings.HasPrefix(status, "This rung is not done: the key's state was read before its fingerprint"), status)
}

// TestLabPageSaysATakeoverMustBeTheSameRequest: the scoped reference whose
// lease takeover does not compare the fingerprint. An attempt crashes
// holding its claim, and shortly before the keys' retention ends the teller's corrected amount
// takes that claim over and is executed: rule 2 breaks, and the cause is
// the takeover's (the page's database saw the corrected amount update the
// crashed attempt's row). The explorer draws the crash point that shows
// it. The scoped reference itself breaks nothing there (the tests that
// explore it run every scenario).
func TestLabPageSaysATakeoverMustBeTheSameRequest(t *testing.T) {
	t.Parallel()
	ctx := onRungEdited(t, "scoped", [2]string{
		"AND fingerprint = ? AND claimed_at < ?`,\n        req.attempt, req.now, ...scope, fingerprint, req.now",
		"AND claimed_at < ?`,\n        req.attempt, req.now, ...scope, req.now",
	})
	act(t, ctx, `#btn-lab-grade`)
	// Rule 2, and rule 4: the first request's own retry is handed the
	// corrected amount's answer, a success without its transfer.
	assert.Equal(t, "2,4", attr(t, ctx, "#lab-grade", "data-broken"))
	assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"))
	row := `#lab-grade tr[data-scenario=crash-then-corrected-amount]`
	require.NotZero(t, countIn(t, ctx, row+` .lab-cause[data-cause=takeover-unfingerprinted]`), text(t, ctx, "#lab-grade"))
	assert.Contains(t, text(t, ctx, row), "AND fingerprint = ?")

	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "crash-then-corrected-amount"))
	act(t, ctx, `#btn-lab-explore`)
	assert.Equal(t, "crash-then-corrected-amount", attr(t, ctx, "#lab-found", "data-scenario"), text(t, ctx, "#lab-run-status"))
	assert.Contains(t, text(t, ctx, "#lab-found"), "a different request took over the claim a crashed attempt left")
}

// TestLabPageSaysAFingerprintMustHoldTheWholeRequest: the scoped reference
// whose fingerprint holds the amount alone. The same amount sent to
// another payee under the same key is taken for a retry and handed the
// first answer: rule 2 breaks in "the same amount to another payee under
// the same key", and the fix says what a fingerprint holds.
func TestLabPageSaysAFingerprintMustHoldTheWholeRequest(t *testing.T) {
	t.Parallel()
	ctx := onRungEdited(t, "scoped", [2]string{
		"const fingerprint = lab.sha256(ENDPOINT + '\\n' + lab.canonical(req.body));",
		"const fingerprint = lab.sha256(ENDPOINT + '\\n' + t.amount);",
	})
	act(t, ctx, `#btn-lab-grade`)
	assert.Contains(t, attr(t, ctx, "#lab-grade", "data-broken"), "2")
	assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"))
	row := `#lab-grade tr[data-scenario=corrected-payee]`
	assert.Contains(t, text(t, ctx, row), "broke 2.", text(t, ctx, "#lab-grade"))
	assert.Contains(t, text(t, ctx, row), "canonical JSON body", "the fix names what the fingerprint holds")
}

// TestLabPageSaysAFingerprintMustHoldThePayer: a fingerprint of the amount
// and the payee, as the ninth simulated student wrote it, passed every
// scenario: none changed the account the money comes from. "The same
// amount from another account under the same key" breaks rule 2 there.
func TestLabPageSaysAFingerprintMustHoldThePayer(t *testing.T) {
	t.Parallel()
	ctx := onRungEdited(t, "scoped", [2]string{
		"const fingerprint = lab.sha256(ENDPOINT + '\\n' + lab.canonical(req.body));",
		"const fingerprint = lab.sha256(ENDPOINT + '\\n' + t.amount + '\\n' + t.to);",
	})
	act(t, ctx, `#btn-lab-grade`)
	assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"))
	row := `#lab-grade tr[data-scenario=corrected-payer]`
	assert.Contains(t, text(t, ctx, row), "broke 2.", text(t, ctx, "#lab-grade"))
	assert.Contains(t, text(t, ctx, row), "canonical JSON body", "the fix names what the fingerprint holds")
	assert.Equal(t, "false", attr(t, ctx, `#lab-grade tr[data-scenario=corrected-payee]`, "data-broke"), "the payee is in this fingerprint")
}

// TestLabPageSaysAClaimWasReplaced: the scoped reference whose claim is
// INSERT OR REPLACE. The retry's claim raises no error and replaces the
// first attempt's: the grade names the replaced claim, where it used to
// blame two takeovers of a crashed attempt's claim in scenarios with no
// crash.
func TestLabPageSaysAClaimWasReplaced(t *testing.T) {
	t.Parallel()
	ctx := onRungEdited(t, "scoped", [2]string{
		"await db.run(`INSERT INTO idem_keys (customer, endpoint, idem_key,",
		"await db.run(`INSERT OR REPLACE INTO idem_keys (customer, endpoint, idem_key,",
	})
	act(t, ctx, `#btn-lab-grade`)
	assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"))
	require.NotZero(t, countIn(t, ctx, `#lab-grade .lab-cause[data-cause=claim-replaced]`), text(t, ctx, "#lab-grade"))
	assert.NotContains(t, text(t, ctx, "#lab-grade .lab-rung-sum"), "two attempts each made the same claim their own")
	assert.Contains(t, text(t, ctx, "#lab-grade"), "never OR REPLACE for the claim")
}

// TestLabPageSaysACompletionMustBeTheOwners: the scoped reference whose
// completion does not check that the claim is still the attempt's, nor
// still in progress (a student's completion by the key alone). A
// first attempt stalls for two minutes; its retry takes the claim over
// (the lease ran out) and pays; the first, resuming, completes the key
// all the same and keeps its transfer: rule 1 breaks in "a first attempt
// that stalls for two minutes, and its retry meanwhile". The reference
// itself breaks nothing there and is not told its lease is too short.
func TestLabPageSaysACompletionMustBeTheOwners(t *testing.T) {
	t.Parallel()
	ctx := onRungEdited(t, "scoped", [2]string{
		"WHERE customer = ? AND endpoint = ? AND idem_key = ? AND owner = ? AND state = 'in_progress'`,\n    answer.status, answer.headers['Content-Type'], answer.body, ...scope, req.attempt);",
		"WHERE customer = ? AND endpoint = ? AND idem_key = ?`,\n    answer.status, answer.headers['Content-Type'], answer.body, ...scope);",
	})
	act(t, ctx, `#btn-lab-grade`)
	assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"))
	row := `#lab-grade tr[data-scenario=stalled-first-attempt]`
	assert.Contains(t, text(t, ctx, row), "broke 1.", text(t, ctx, "#lab-grade"))
}

// TestLabPageSaysEveryStatementNamesTheCustomer: the scoped reference
// whose key table is scoped, but whose lookup after a failed INSERT reads
// the key alone. Another customer's transfer under the same key string,
// retried after a lost answer, is answered from the first customer's row:
// a scenario that sends that retry breaks a rule, and the fix names the
// customer in every statement about a key.
func TestLabPageSaysEveryStatementNamesTheCustomer(t *testing.T) {
	t.Parallel()
	ctx := onRungEdited(t, "scoped", [2]string{
		"FROM idem_keys\n                                 WHERE customer = ? AND endpoint = ? AND idem_key = ?`, ...scope);",
		"FROM idem_keys\n                                 WHERE idem_key = ?`, key);",
	})
	act(t, ctx, `#btn-lab-grade`)
	assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"), text(t, ctx, "#lab-grade .lab-rung-sum"))
	row := `#lab-grade tr[data-scenario=another-customers-key-then-retry]`
	t.Logf("%s: %s", attr(t, ctx, row, "data-rule-causes"), text(t, ctx, row))
	assert.Contains(t, text(t, ctx, row), "✘", text(t, ctx, "#lab-grade"))
	assert.Contains(t, text(t, ctx, row), "req.customer")
}

// TestLabPageSaysACompletionMustReadItsChanges: the scoped reference whose
// completion keeps its owner check but never reads its changes (the tenth
// simulated student's). The stalled first attempt, resuming after its
// retry took its claim over, moves the money too: the grade names the
// takeover's check, not a claim never made.
func TestLabPageSaysACompletionMustReadItsChanges(t *testing.T) {
	t.Parallel()
	ctx := onRungEdited(t, "scoped", [2]string{"  if (done.changes === 0) {", "  if (false) {"})
	act(t, ctx, `#btn-lab-grade`)
	assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"))
	row := `#lab-grade tr[data-scenario=stalled-first-attempt]`
	assert.Contains(t, attr(t, ctx, row, "data-rule-causes"), "1:takeover-unchecked", text(t, ctx, row))
	assert.Contains(t, rowSays(t, ctx, row), "go on only when that changes 1 row")

	// Played on the bench, the verdict says where: the stalled attempt's
	// completion, the last to run.
	where := whereOnBench(t, ctx, "stalled-first-attempt", "takeover-unchecked")
	done := lineOf(t, eval[string](t, ctx, handlerText), "const done = await db.run(`UPDATE idem_keys SET state = 'completed'")
	assert.Equal(t, strconv.Itoa(done), attr(t, ctx, where, "data-line"))
	assert.Contains(t, text(t, ctx, where), "a1’s db.run at line")
}
