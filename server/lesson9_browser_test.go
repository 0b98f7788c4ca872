package server_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProcessorLessonInTheBrowser plays lesson 9 as a student does: the
// slow worker's takeover draws the processor's row under the ledger's with
// a second charge named as such while the ledger pays once, and rule 8
// breaks alone; with the key passed downstream the retry's call is drawn
// as answered with the first charge; in the sandbox, the downstream_key
// knob is there and flipping it on holds. Then the same in Korean.
func TestProcessorLessonInTheBrowser(t *testing.T) {
	t.Parallel()
	ts := playground(t, playgroundDir(t))
	ctx := tab(t)
	legend := func() string {
		t.Helper()
		return eval[string](t, ctx, `[...document.querySelectorAll('#race [data-legend-item^="charge"]')].map((g) => g.textContent).join(' | ')`)
	}

	openLesson(t, ctx, ts.URL, "09-processor")

	openScenario(t, ctx, "s1", false)
	runToEnd(t, ctx)
	require.Equal(t, 1, countIn(t, ctx, `#race [data-row="processor"]`), "the processor's row is drawn")
	assert.Equal(t, 2, countIn(t, ctx, `#race [data-row="processor"] [data-mark^="charged"][data-charge]`), "two charges")
	assert.Equal(t, 1, countIn(t, ctx, `#race [data-row="processor"] [data-mark="charged-again"][data-lane="A2"]`), "the second is A2's, charged again")
	assert.Zero(t, countIn(t, ctx, `#race [data-row="ledger"] [data-mark="paid-again"]`), "the ledger paid once")
	assert.Equal(t, 1, countIn(t, ctx, `#race [data-row="ledger"] [data-mark="paid"]`))
	assert.Contains(t, svgText(t, ctx, `#race [data-mark="charged-again-text"]`), "charged again: 180,000 won")
	assert.Contains(t, legend(), "the processor charged again for the same wish")
	assertRuleShown(t, ctx, "#rules", "#summary", "break", "one-charge-per-intent")
	assertRuleShown(t, ctx, "#rules", "#summary", "hold", "one-transfer-per-intent")
	assert.Contains(t, text(t, ctx, `#rules li[data-rule="one-charge-per-intent"]`), "the processor charges each intent at most once")

	openScenario(t, ctx, "s2", false)
	runToEnd(t, ctx)
	require.Equal(t, 1, countIn(t, ctx, `#race [data-row="processor"]`), "a call answered with the first charge is drawn")
	assert.Equal(t, 1, countIn(t, ctx, `#race [data-row="processor"] [data-mark="charged"]`))
	assert.Zero(t, countIn(t, ctx, `#race [data-mark="charged-again"]`))
	assert.Equal(t, 1, countIn(t, ctx, `#race [data-row="processor"] [data-mark="charge-replayed"][data-lane="A2"]`))
	assert.Equal(t, attr(t, ctx, `#race [data-mark="charged"]`, "data-charge"), attr(t, ctx, `#race [data-mark="charge-replayed"]`, "data-charge"),
		"A2 got A1's charge back")
	assert.Contains(t, legend(), "the processor knew the key")
	assertRuleShown(t, ctx, "#rules", "#summary", "hold", "one-charge-per-intent")

	// The sandbox: the knob is there, like the others; on holds.
	// Recovery points: A2 carries on from A1's charge_made, no call.
	openScenario(t, ctx, "s3", false)
	runToEnd(t, ctx)
	assert.Zero(t, countIn(t, ctx, `#race [data-row="processor"]`), "one charge and no call answered: the ledger's row tells it all")
	assertRuleShown(t, ctx, "#rules", "#summary", "hold", "one-charge-per-intent")

	openScenario(t, ctx, "s4", false)
	runToEnd(t, ctx)
	assertRuleShown(t, ctx, "#rules", "#summary", "break", "one-charge-per-intent")
	run(t, ctx, click(`#sandbox > summary`),
		waitJS(`!!document.querySelector('#knobs select[data-knob="downstream_key"]')`))
	assert.Equal(t, "off", eval[string](t, ctx, `document.querySelector('#knobs select[data-knob="downstream_key"]').value`))
	assert.Equal(t, "on", eval[string](t, ctx, `document.querySelector('#knobs select[data-knob="recovery_points"]').value`))
	assert.Contains(t, text(t, ctx, `#knobs [data-knob="downstream_key"] label`), "key to the processor")
	run(t, ctx, choose(`#knobs select[data-knob="downstream_key"]`, "on"),
		waitJS(`document.querySelector('#step-count').dataset.step === '0' && !!document.querySelector('#bench-meta .sandboxed')`))
	runToEnd(t, ctx)
	assertRuleShown(t, ctx, "#rules", "#summary", "hold", "one-charge-per-intent")
	assert.Equal(t, "true", attr(t, ctx, `#goals li[data-goal="g6"]`, "data-met"))

	// In Korean: the row, the legend and the rule are Korean too.
	run(t, ctx,
		chromedp.Navigate(ts.URL+"/?lang=ko#lesson=09-processor"),
		waitJS(`document.body.dataset.engine === 'ready' && document.body.dataset.interactive === 'true'`),
		waitJS(`document.body.dataset.lesson === '09-processor'`))
	require.Equal(t, "ko", attr(t, ctx, "html", "lang"))
	assert.Contains(t, text(t, ctx, "#lesson-text h1"), "결제 대행사")
	openScenario(t, ctx, "s1", false)
	runToEnd(t, ctx)
	assert.Contains(t, svgText(t, ctx, `#race [data-row="processor"] .row-label`), "결제 대행사")
	assert.Contains(t, svgText(t, ctx, `#race [data-mark="charged-again-text"]`), "중복 청구: 180,000원")
	assert.Contains(t, legend(), "같은 의도로 결제 대행사가 중복 청구함")
	assert.Contains(t, text(t, ctx, `#rules li[data-rule="one-charge-per-intent"]`), "결제 대행사는 의도 하나에 최대 한 번 청구한다")
	assert.Contains(t, text(t, ctx, `#rules li[data-rule="one-charge-per-intent"] .violations`), "2번 청구했습니다")
}
