package server_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The scoped reference's lines that the payment network's failures test:
// its call to pay, and what it does when the work throws.
const (
	scopedPay     = "else await pay({ from: t.from, to: t.to, amount: t.amount, key: JSON.stringify([req.customer, key]) });"
	scopedRelease = "    await db.run(`DELETE FROM idem_keys WHERE customer = ? AND endpoint = ? AND idem_key = ? AND owner = ? AND state = 'in_progress'`, ...scope, req.attempt);\n    throw e;"
)

// TestLabPageSaysWhatANetworkFailureOwes: four mistakes a student makes
// where the payment network fails the first attempt's call (its answer
// lost after it charged, or the network not reached), each made in the
// scoped reference, which holds in both scenarios (the explorer's tests
// run every scenario on it). Each is caught by the grade on that
// scenario's row, with its cause, and the rung is not done; the first is
// also found by the explorer and drawn.
func TestLabPageSaysWhatANetworkFailureOwes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, scenario, cause, says string
		edit                        [2]string
	}{
		// A key for the network made from the attempt: the retry's call is
		// a new payment to the network, charged again (rule 8).
		{"the attempt's key to pay", "network-answer-lost", "network-key-missing", "charged the second again",
			[2]string{scopedPay, "else await pay({ from: t.from, to: t.to, amount: t.amount, key: req.attempt });"}},
		// The claim kept when pay throws: the retry is told 409.
		{"the claim kept", "network-answer-lost", "claim-not-released", "was told 409 (come back later) by a claim no one is working on",
			[2]string{scopedRelease, "    throw e;"}},
		// The failure completed as the key's answer: the retry is handed it.
		{"the failure stored", "network-down", "failure-stored", "was handed the same 502 again",
			[2]string{scopedRelease, "    const failed = lab.problem(502, 'The payment network did not answer');\n" +
				"    await db.run(`UPDATE idem_keys SET state = 'completed', status = ?, type = ?, body = ? WHERE customer = ? AND endpoint = ? AND idem_key = ? AND owner = ?`,\n" +
				"      failed.status, failed.headers['Content-Type'], failed.body, ...scope, req.attempt);\n    return failed;"}},
		// pay's error caught and the transfer made all the same.
		{"the error swallowed", "network-down", "transfer-unpaid", "the network never paid it",
			[2]string{scopedPay, "else { try { await pay({ from: t.from, to: t.to, amount: t.amount, key: JSON.stringify([req.customer, key]) }); } catch (e) { lab.log('pay failed: ' + e.message); } }"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := onRungEdited(t, "scoped", tc.edit)
			act(t, ctx, `#btn-lab-grade`)
			assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"), text(t, ctx, "#lab-grade .lab-rung-sum"))
			row := `#lab-grade tr[data-scenario=` + tc.scenario + `]`
			require.NotZero(t, countIn(t, ctx, row+` .lab-cause[data-cause=`+tc.cause+`]`), text(t, ctx, "#lab-grade"))
			assert.Contains(t, rowSays(t, ctx, row), tc.says)
			if tc.cause != "network-key-missing" {
				return
			}
			run(t, ctx, chromedp.SetValue(`#lab-scenario`, tc.scenario))
			act(t, ctx, `#btn-lab-explore`)
			assert.Equal(t, tc.scenario, attr(t, ctx, "#lab-found", "data-scenario"), text(t, ctx, "#lab-run-status"))
			assert.Equal(t, "one-charge-per-intent", attr(t, ctx, "#lab-found", "data-rule"))
			// Played on the bench: a1's pay fails by itself, as in the
			// explorer's runs, and the lane says so.
			act(t, ctx, `#btn-lab-replay`)
			require.Equal(t, "true", attr(t, ctx, "body", "data-lab-done"))
			run(t, ctx, waitJS(`document.querySelector('#lab-lanes .lab-lane[data-attempt=a1]').innerText.includes('NetworkError')`))
			assert.Equal(t, "false", attr(t, ctx, `#lab-verdict li[data-rule=one-charge-per-intent]`, "data-ok"))
		})
	}
}

// TestLabPageReachesTheBranchWhereTheBalanceIsGone: the scoped reference
// whose debit, finding the balance gone after the check (another transfer
// of the same account got there first), answers 402 at once, its
// transaction still open. Only two different transfers racing for one
// balance reach that branch; the grade notes the open transaction there.
func TestLabPageReachesTheBranchWhereTheBalanceIsGone(t *testing.T) {
	t.Parallel()
	ctx := onRungEdited(t, "scoped", [2]string{
		"answer = lab.problem(402, 'Insufficient funds', 'the balance changed meanwhile; nothing moved');",
		"return lab.problem(402, 'Insufficient funds', 'the balance changed meanwhile; nothing moved');",
	})
	act(t, ctx, `#btn-lab-grade`)
	assert.Equal(t, "false", attr(t, ctx, "#lab-grade", "data-rung-done"), text(t, ctx, "#lab-grade .lab-rung-sum"))
	row := `#lab-grade tr[data-scenario=two-transfers-one-balance]`
	require.NotZero(t, countIn(t, ctx, row+` .lab-cause[data-cause=transaction-left-open]`), text(t, ctx, "#lab-grade"))
	assert.Contains(t, text(t, ctx, row), "402")
}

// TestLabPageSaysTheNetworksFailureInKorean: the network's failure that
// pay throws was said in English on the Korean bench (the thirteenth
// simulated student read "NetworkError 발생: the payment network did not
// answer in time…"). The card says it in the page's language; what the
// handler's code sees (e.message) is unchanged.
func TestLabPageSaysTheNetworksFailureInKorean(t *testing.T) {
	t.Parallel()
	ts := playground(t, playgroundDir(t))
	ctx := labTab(t, ts.URL, "?lang=ko")
	labRunnerReady(t, ctx)
	goToRung(t, ctx, "scoped")
	setLabFile(t, ctx, changedHandler(t, "scoped", [2]string{scopedRelease, "    throw e;"}))
	run(t, ctx, chromedp.SetValue(`#lab-scenario`, "network-down"))
	act(t, ctx, `#btn-lab-start`)
	stepAll(t, ctx)
	lane := text(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1]`)
	assert.Contains(t, lane, "NetworkError")
	assert.Contains(t, lane, "결제망이 제때 답하지 않았습니다. 청구했을 수도, 하지 않았을 수도 있습니다")
	assert.NotContains(t, lane, "did not answer in time")
}
