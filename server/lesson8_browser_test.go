package server_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTwoServersInTheBrowser plays lesson 8 as a student does: on one
// server the retry waits for the in-memory lock; on two it does not, the
// race view labels each attempt with the server it reached, the ledger
// pays twice and the rule check says why; in the sandbox, flipping the
// claim to the constraint holds across both servers. Then the same in
// Korean.
func TestTwoServersInTheBrowser(t *testing.T) {
	t.Parallel()
	ts := playground(t, playgroundDir(t))
	ctx := tab(t)

	openLesson(t, ctx, ts.URL, "08-two-servers")

	// One server: A2 waits for the lock A1 holds, and pays nothing.
	openScenario(t, ctx, "s1", false)
	runToEnd(t, ctx)
	assert.Equal(t, 1, countIn(t, ctx, `#race [data-row="attempt"][data-lane="A2"] [data-mark="lock-wait"]`), "A2 waited for server 1's lock")
	assert.Equal(t, 1, countIn(t, ctx, `#race [data-row="attempt"][data-lane="A1"] [data-mark="lock"]`))
	assert.Zero(t, countIn(t, ctx, `#race [data-mark="paid-again"]`))
	assert.Zero(t, countIn(t, ctx, `#race [data-server]`), "one server: no server labels")
	assertRuleShown(t, ctx, "#rules", "#summary", "hold", "one-transfer-per-intent")

	// Two servers: nobody waits, both pay, each row says its server.
	openScenario(t, ctx, "s2", false)
	runToEnd(t, ctx)
	assert.Zero(t, countIn(t, ctx, `#race [data-mark="lock-wait"]`), "a lock in server 1's memory never stops server 2")
	assert.Equal(t, "1", attr(t, ctx, `#race [data-row="attempt"][data-lane="A1"]`, "data-server"))
	assert.Equal(t, "2", attr(t, ctx, `#race [data-row="attempt"][data-lane="A2"]`, "data-server"))
	assert.Contains(t, svgText(t, ctx, `#race [data-row="attempt"][data-lane="A2"] [data-server-tag]`), "server 2")
	assert.Equal(t, 1, countIn(t, ctx, `#race [data-row="attempt"][data-lane="A2"] [data-mark="paid-again"]`))
	assertRuleShown(t, ctx, "#rules", "#summary", "break", "one-transfer-per-intent")
	// Both rows of the unconstrained table end completed, the second by the
	// second payment: the key row does not stay in_progress.
	states := eval[[]string](t, ctx, `[...document.querySelectorAll('#race [data-db-state]')].map((s) => s.dataset.dbState + ':' + s.dataset.owner)`)
	require.NotEmpty(t, states)
	assert.Equal(t, "completed:A2", states[len(states)-1], "the key row after A2's second payment: %v", states)
	assert.Contains(t, states, "completed:A1", "A1's row completed too: %v", states)
	why := text(t, ctx, `#rules li[data-rule="one-transfer-per-intent"] .cause[data-cause="memory-lock"]`)
	assert.Contains(t, why, "different servers")

	// The key cache: each server's memory is shown, and the cause names it.
	openScenario(t, ctx, "s3", false)
	runToEnd(t, ctx)
	assert.Equal(t, 2, countIn(t, ctx, `#caches-table .server-cache`))
	assert.False(t, eval[bool](t, ctx, `document.querySelector('#caches-wrap').hidden`))
	assert.Contains(t, text(t, ctx, `#rules .cause[data-cause="server-cache"]`), "cache")

	// The sandbox: the lock on both servers pays twice; flip the claim to
	// the constraint and the same race pays once.
	openScenario(t, ctx, "s5", false)
	runToEnd(t, ctx)
	assertRuleShown(t, ctx, "#rules", "#summary", "break", "one-transfer-per-intent")
	run(t, ctx, click(`#sandbox > summary`),
		waitJS(`!!document.querySelector('#knobs select[data-knob="lock"]')`))
	assert.Equal(t, "memory", eval[string](t, ctx, `document.querySelector('#knobs select[data-knob="lock"]').value`), "the lock is a knob of its own")
	run(t, ctx, choose(`#knobs select[data-knob="claim"]`, "constraint"),
		waitJS(`document.querySelector('#step-count').dataset.step === '0' && !!document.querySelector('#bench-meta .sandboxed')`))
	assert.Contains(t, text(t, ctx, "#bench-meta"), "claim=constraint")
	runToEnd(t, ctx)
	assertRuleShown(t, ctx, "#rules", "#summary", "hold", "one-transfer-per-intent")
	assert.Zero(t, countIn(t, ctx, `#race [data-mark="paid-again"]`))
	assert.Equal(t, "2", attr(t, ctx, `#race [data-row="attempt"][data-lane="A2"]`, "data-server"), "still two servers")
	assert.Equal(t, "true", attr(t, ctx, `#goals li[data-goal="g6"]`, "data-met"))

	// In Korean: the labels and the reason are Korean too.
	run(t, ctx,
		chromedp.Navigate(ts.URL+"/?lang=ko#lesson=08-two-servers"),
		waitJS(`document.body.dataset.engine === 'ready' && document.body.dataset.interactive === 'true'`),
		waitJS(`document.body.dataset.lesson === '08-two-servers'`))
	require.Equal(t, "ko", attr(t, ctx, "html", "lang"))
	assert.Contains(t, text(t, ctx, "#lesson-text h1"), "서버 둘")
	openScenario(t, ctx, "s2", false)
	runToEnd(t, ctx)
	assert.Contains(t, svgText(t, ctx, `#race [data-row="attempt"][data-lane="A2"] [data-server-tag]`), "서버 2")
	assert.Equal(t, 1, countIn(t, ctx, `#race [data-row="ledger"] [data-mark="paid-again"]`))
	assert.Contains(t, text(t, ctx, `#rules .cause[data-cause="memory-lock"]`), "서로 다른 서버")
	// The checker's rules are named in Korean on the list and in the race.
	assert.Contains(t, text(t, ctx, `#rules li[data-rule="one-transfer-per-intent"]`), "의도 하나에 송금은 최대 한 번")
	vio := svgText(t, ctx, `#race .violation-text[data-violation="one-transfer-per-intent"]`)
	assert.Contains(t, vio, "의도 하나에 송금은 최대 한 번")
	assert.Contains(t, vio, "추가 송금 1건", "the violation itself is said in Korean")
	assert.Contains(t, text(t, ctx, `#rules li[data-rule="one-transfer-per-intent"] .violations`), "서버 1, 2에 닿았고")
	assert.Contains(t, text(t, ctx, `.last-verdict`), "깨뜨린 규칙: 의도 하나에 송금은 최대 한 번")
}
