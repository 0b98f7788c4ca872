package server_test

import (
	"context"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/internal/stores"
	"idemlab/server"
)

// The classroom in a real Chromium: the instructor projects a room, two
// phones join (one on 127.0.0.1, one on localhost, so that each has its own
// localStorage and so its own identity), vote, send transfers from the
// basement and retry, and the projector shows storms at naive (duplicates)
// and at scoped (none). The tabs share the package's one Chromium.

const browserToken = "browser-test-instructor-token-0123456789"

// startupLinks remembers each test server's sign-in link, the one
// `idemlab serve` prints.
var startupLinks sync.Map // base URL → path

func classroomServer(t testing.TB) *httptest.Server {
	t.Helper()
	return classroomServerWith(t, server.Options{})
}

// classroomServerWith is classroomServer with options of the test's own
// (the instructor's secret is always the tests').
func classroomServerWith(t testing.TB, opts server.Options) *httptest.Server {
	t.Helper()
	banks, err := stores.OpenBanks("", server.Config{})
	require.NoError(t, err)
	opts.InstructorToken = browserToken
	s, err := server.New(banks, stores.Options(opts))
	require.NoError(t, err)
	ts := browserServer(s)
	startupLinks.Store(ts.URL, s.InstructorPath())
	t.Cleanup(func() {
		s.Close() // closes the websockets first, so the test server has nothing to wait for
		ts.Close()
		server.CloseBanks(banks)
	})
	return ts
}

func TestClassroomInTheBrowser(t *testing.T) {
	proj := tab(t)
	ts := classroomServer(t)
	base := ts.URL
	port := base[strings.LastIndex(base, ":"):]
	otherBase := "http://localhost" + port

	// The instructor opens the start-up link: its one-time code is traded
	// for a cookie and leaves the address bar; opened again (from the
	// history, in another browser), the link signs nobody in.
	link, _ := startupLinks.Load(base)
	run(t, proj, chromedp.Navigate(base+link.(string)),
		waitJS(`!document.getElementById('lobby').hidden`))
	assert.NotContains(t, eval[string](t, proj, `location.href`), "signin=")
	other := tab(t)
	run(t, other, chromedp.Navigate(otherBase+link.(string)),
		waitJS(`!document.getElementById('signin').hidden`),
		waitJS(`document.getElementById('signin-error').textContent.includes('used already')`))
	run(t, other, signInSteps(otherBase))
	run(t, other, click("#signout"), waitJS(`!document.getElementById('signin').hidden`))
	run(t, proj, click("#create"), waitJS(`document.getElementById('code').textContent.length === 6`),
		waitJS(`document.getElementById('conn').textContent === 'online'`))
	code := text(t, proj, "#code")
	run(t, proj, waitJS(`document.getElementById('qr').complete && document.getElementById('qr').naturalWidth > 100`)) // the QR code is drawn

	// Two phones join; a nickname with markup stays text.
	phoneA, phoneB := tab(t), tab(t)
	join := func(ctx context.Context, url, nick string) {
		run(t, ctx, chromedp.Navigate(url+"/classroom/?room="+code),
			waitJS(`document.getElementById('room-code').value === `+quoteJS(code)),
			chromedp.Evaluate[chromedp.Void](`document.getElementById('nickname').value = `+quoteJS(nick)),
			click(`#join-form button[type=submit]`),
			waitJS(`!document.getElementById('client').hidden`))
		assert.Equal(t, nick, text(t, ctx, "#me"))
	}
	join(phoneA, base, "<b>ana</b>")
	join(phoneB, otherBase, "bo")
	run(t, proj, waitJS(`document.querySelectorAll('#roster li').length === 2`))
	assert.Contains(t, text(t, proj, "#roster"), "<b>ana</b>")
	assert.Zero(t, eval[int](t, proj, `document.querySelectorAll('#roster b').length`), "no markup was made from a nickname")

	// Predict, then reveal.
	run(t, proj, click("#ask"))
	run(t, phoneA, waitJS(`!document.getElementById('vote').hidden && document.querySelector('#choices button[data-choice=double]') !== null`),
		click(`#choices button[data-choice=double]`), waitJS(`document.getElementById('voted').textContent.includes('charged twice')`))
	// At naive no server answers 409 or 422: the vote offers what naive can do.
	run(t, phoneB, waitJS(`document.querySelector('#choices button[data-choice="none"]') !== null`),
		click(`#choices button[data-choice="none"]`), waitJS(`document.getElementById('voted').textContent.includes('no answer')`))
	assert.Zero(t, eval[int](t, phoneB, `document.querySelectorAll('#choices button[data-choice="409"]').length`))
	run(t, proj, waitJS(`document.getElementById('vote-status').textContent.includes('2 votes')`))

	// A storm at naive: the projector draws the race and counts duplicates.
	storm := func(level string, clients int) {
		run(t, proj,
			chromedp.Evaluate[chromedp.Void](`(() => {
				document.getElementById('storm-panel').open = true; // it folds away once a storm is shown
				const set = (id, v) => { document.getElementById(id).value = v; };
				set('level', `+quoteJS(level)+`); set('clients', '`+strconv.Itoa(clients)+`'); set('keys', '2');
				set('attempts', '2'); set('fault', 'none'); set('latency', '50');
			})()`),
			waitJS(`!document.getElementById('fire').disabled`),
			click("#fire"),
			waitJS(`document.getElementById('run-label').textContent.includes('storm of `+strconv.Itoa(clients*2)+` requests at `+level+`')`))
	}
	storm("naive", 6)
	assert.Equal(t, "10", attr(t, proj, "#tally", "data-duplicates"), "12 requests for 2 wishes at naive pay 10 times too many")
	assert.Equal(t, "12", attr(t, proj, "#race svg.race", "data-attempts"))
	assert.Equal(t, "12 requests", text(t, proj, "#lane-count"))
	assert.Positive(t, eval[int](t, proj, `document.querySelectorAll('#race [data-mark="paid-again"]').length`), "a second payment is drawn as one")
	assert.Contains(t, text(t, proj, "#rules"), "✗")
	run(t, proj, waitJS(`document.querySelectorAll('#histogram .hrow').length === 3`))
	assert.Contains(t, text(t, proj, "#histogram"), "← what happened")
	assert.Contains(t, text(t, proj, "#histogram .actual"), "got: charged twice")
	run(t, phoneA, waitJS(`document.getElementById('choices').textContent.includes('what happened')`))
	run(t, phoneA, waitJS(`document.getElementById('voted').classList.contains('right')`))
	assert.Contains(t, text(t, phoneA, "#voted"), "You predicted it")
	run(t, phoneB, waitJS(`document.getElementById('voted').classList.contains('wrong')`))
	assert.Contains(t, text(t, phoneA, "#room-verdict"), "10 extra transfers: 100,000 won moved more than once")

	// At scoped, the same storm moves each wish's money once.
	storm("scoped", 6)
	assert.Equal(t, "0", attr(t, proj, "#tally", "data-duplicates"))
	assert.Contains(t, text(t, proj, "#keytable"), "completed")

	// A phone in the basement loses its answer, then retries with the same
	// key and gets the stored 201; its attempts appear on the projector
	// under its nickname (as text: SVG text has no markup either).
	run(t, phoneA, click("#basement"), click("#send"),
		waitJS(`document.getElementById('result').textContent.includes('No answer')`))
	assert.Equal(t, "Send again (retry)", text(t, phoneA, "#send"))
	run(t, phoneA, click("#basement"), click("#send"),
		waitJS(`document.getElementById('result').textContent.startsWith('✔ Replayed')`))
	assert.Contains(t, text(t, phoneA, "#result"), "charged once")
	run(t, proj, waitJS(`[...document.querySelectorAll('#race [data-row="attempt"] .row-label')].some(e => e.textContent.includes('<b>ana</b> #2'))`))
	assert.Zero(t, eval[int](t, proj, `document.querySelectorAll('#race b').length`), "no markup was made from a nickname")
	// The phone's own lanes are drawn from the room's trace events, which
	// come over the websocket after the HTTP answer.
	run(t, phoneA, waitJS(`document.querySelectorAll('#mylanes [data-row="attempt"]').length >= 2`))

	// A reload is the same student, straight back in.
	run(t, phoneA, chromedp.Reload(), waitJS(`!document.getElementById('client').hidden && document.getElementById('client').dataset.joins === '1'`))
	assert.Equal(t, "<b>ana</b>", text(t, phoneA, "#me"))
	run(t, proj, waitJS(`document.getElementById('online').dataset.online === '2' && !document.getElementById('roster').textContent.includes('(away)')`))
	assert.Equal(t, 2, countIn(t, proj, "#roster li"), "the reloaded phone is the same student, not a third")

	// A phone has no controls and cannot project.
	assert.False(t, eval[bool](t, phoneB, `document.getElementById('storm-form') !== null`))
	run(t, phoneB, chromedp.Navigate(otherBase+"/classroom/teach"), waitJS(`!document.getElementById('signin').hidden`))
}

// signInSteps signs the instructor in as a person does on a machine that
// has no start-up link: the secret typed into the sign-in page's password
// field.
func signInSteps(base string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		return chromedp.Do(ctx,
			chromedp.Navigate(base+"/classroom/teach"),
			waitJS(`!document.getElementById('signin').hidden`),
			chromedp.SendKeys(chromedp.CSS(`#secret`), browserToken),
			click("#signin-go"),
			waitJS(`!document.getElementById('lobby').hidden`))
	})
}
