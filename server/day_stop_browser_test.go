package server_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStudentStopsABigDay runs lesson 7's day at its biggest size and
// presses Stop while the bar moves: the engine, busy in its worker, stops
// between two groups of retries, the page says how far it got and judges
// nothing, and the lesson's own day then runs to its verdict. Moving to
// the next lesson stops a day as well. In Korean the same words are
// Korean.
func TestStudentStopsABigDay(t *testing.T) {
	t.Parallel()
	ts := playground(t, playgroundDir(t))
	ctx := tab(t)
	openLesson(t, ctx, ts.URL, "07-full-day")
	openScenario(t, ctx, "s2", true)
	status := func() string { return text(t, ctx, `#day-status`) }
	size := func(n string) {
		t.Helper()
		require.True(t, eval[bool](t, ctx, `(document.querySelector('#day-size').value = '`+n+`') === '`+n+`'`))
	}

	size("20000")
	run(t, ctx,
		click(`#btn-day`),
		waitJS(`document.querySelector('#day-status').textContent.startsWith('Replaying the day')`),
	)
	assert.False(t, eval[bool](t, ctx, `document.querySelector('#btn-day-stop').hidden`), "Stop shows while the day runs")
	run(t, ctx, click(`#btn-day-stop`),
		waitJS(`document.querySelector('#day-status').textContent.startsWith('Stopped after')`))
	m := regexp.MustCompile(`Stopped after ([\d,]+) of ([\d,]+) requests`).FindStringSubmatch(status())
	require.Len(t, m, 3, status())
	done, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
	total, _ := strconv.Atoi(strings.ReplaceAll(m[2], ",", ""))
	assert.Contains(t, m[2], ",", "a big number is written with its thousands separated")
	assert.Positive(t, done)
	assert.Less(t, done, total, "stopped before the end")
	assert.Greater(t, total, 20000, "the big day ran: 20,000 payments and their retries")
	assert.True(t, eval[bool](t, ctx, `document.querySelector('#btn-day-stop').hidden`), "Stop goes away")
	assert.False(t, eval[bool](t, ctx, `document.querySelector('#btn-day').disabled`))
	assert.True(t, eval[bool](t, ctx, `document.querySelector('#day-picture-panel').hidden`), "no picture of half a day")
	assert.Zero(t, eval[int](t, ctx, `document.querySelectorAll('#day-rules li').length`), "no verdict on half a day")

	// The engine is free again: the lesson's day runs to its verdict.
	size("")
	run(t, ctx,
		click(`#btn-day`),
		waitJS(`document.querySelector('#day-status').textContent.startsWith('The day is over')`))
	assert.False(t, eval[bool](t, ctx, `document.querySelector('#day-picture-panel').hidden`))
	assert.Positive(t, eval[int](t, ctx, `document.querySelectorAll('#day-rules li').length`))

	// Moving on to the next lesson stops a big day too: the lesson opens
	// without waiting for the day to end.
	size("20000")
	run(t, ctx,
		click(`#btn-day`),
		waitJS(`document.querySelector('#day-status').textContent.startsWith('Replaying the day')`),
		focus(`#bench`), chromedp.KeyEvent("]"),
		waitJS(`document.body.dataset.lesson === '08-two-servers' && document.querySelector('#step-count').dataset.step === '0'`))
	assert.True(t, strings.HasPrefix(status(), "Stopped after"), "the day was stopped, not run to its end: %q", status())

	run(t, ctx,
		chromedp.Navigate(ts.URL+"/?lang=ko#lesson=07-full-day"),
		waitJS(`document.body.dataset.lesson === '07-full-day' && document.body.dataset.engine === 'ready'`))
	openScenario(t, ctx, "s2", true)
	size("20000")
	run(t, ctx,
		click(`#btn-day`),
		waitJS(`!document.querySelector('#btn-day-stop').hidden`),
		click(`#btn-day-stop`),
		waitJS(`document.querySelector('#day-status').textContent.includes('멈췄습니다')`))
	assert.Equal(t, "중지", text(t, ctx, `#btn-day-stop span`))
}
