package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/classroom"
	"idemlab/internal/peer"
	"idemlab/server"
)

// pressJoin opens the phone page of a room in a fresh tab of its own
// browser context (its own localStorage: another phone, not a reload),
// in lang ("" for English), and presses Join, without waiting to be let
// in.
func pressJoin(t *testing.T, base, code, nick, lang string) context.Context {
	t.Helper()
	phone, closeTab := ownTab(t, chromedp.WithNewBrowserContext())
	t.Cleanup(closeTab)
	u := base + "/classroom/?room=" + code
	if lang != "" {
		u += "&lang=" + lang
	}
	run(t, phone, chromedp.EmulateViewport(390, 844, chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch),
		chromedp.Navigate(u),
		waitJS(`document.getElementById('room-code').value === `+quoteJS(code)),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('nickname').value = `+quoteJS(nick)),
		click(`#join-form button[type=submit]`))
	return phone
}

// refusedAs waits until the phone says it was refused for reason, and
// checks that it says so in words, counts down to its next try, and never
// claims to be reconnecting.
func refusedAs(t *testing.T, phone context.Context, reason, words string) {
	t.Helper()
	run(t, phone, waitJS(`!document.getElementById('refused').hidden && document.getElementById('refused').dataset.reason === `+quoteJS(reason)))
	assert.Contains(t, text(t, phone, "#refused"), words)
	assert.True(t, eval[bool](t, phone, `document.getElementById('reconnecting').hidden`), "a refused phone does not say it is reconnecting")
	assert.Equal(t, "refused", attr(t, phone, "#conn", "data-status"))
}

// TestRefusedPhonesSayWhyAndGetIn: a room of class size 1. The second and
// third phones (one in Korean) are told the room is full, in their
// language, with the time of their next try; the presenter sees them
// waiting and lets them in with one click, and they get in on their own.
// Then the room is locked: a new phone is told so, the presenter sees it,
// and "Let them in" unlocks the room.
func TestRefusedPhonesSayWhyAndGetIn(t *testing.T) {
	// The refused phones ask again every 2 s, not 10: the test waits for
	// two rounds of asking (a full room, then a locked one).
	ts := classroomServerWith(t, server.Options{Classroom: classroom.Config{Limits: classroom.Limits{ClassSize: 1, RefusedRetry: 2 * time.Second}}})
	proj, code := projectorTab(t, ts.URL)
	joinPhone(t, ts.URL, code, "ana")
	bo := pressJoin(t, ts.URL, code, "bo", "")
	refusedAs(t, bo, "full", "The room is full")
	assert.Contains(t, text(t, bo, "#refused .next-try"), "Trying again in")
	min := pressJoin(t, ts.URL, code, "민", "ko")
	refusedAs(t, min, "full", "방이 꽉 찼습니다")

	run(t, proj, waitJS(`document.getElementById('refused-note').dataset.refused === '2'`))
	assert.Contains(t, text(t, proj, "#refused-note"), "Turned away in the last minute: 2 room full")
	run(t, proj, click("#make-room"), waitJS(`document.getElementById('class-size').dataset.size === '3'`))
	assert.Equal(t, "class-size", eval[string](t, proj, `document.activeElement.id`), "the focus stays in the form when the button hides")
	assert.Equal(t, "3", eval[string](t, proj, `document.getElementById('class-size').value`))
	for _, phone := range []context.Context{bo, min} {
		run(t, phone, waitJS(`!document.getElementById('client').hidden && document.getElementById('refused').hidden`))
		assert.Equal(t, "online", attr(t, phone, "#conn", "data-status"))
	}
	run(t, proj, waitJS(`document.querySelectorAll('#roster li').length === 3 && document.getElementById('refused-note').hidden`))

	run(t, proj, click("#lock"), waitJS(`!document.getElementById('locked').hidden`))
	eve := pressJoin(t, ts.URL, code, "eve", "")
	refusedAs(t, eve, "locked", "locked the room")
	run(t, proj, waitJS(`document.getElementById('refused-note').textContent.includes('1 room locked') && !document.getElementById('make-room').hidden`),
		click("#make-room"), waitJS(`document.getElementById('locked').hidden`))
	run(t, eve, waitJS(`!document.getElementById('client').hidden`))
}

// TestPhoneRefusedAtTheDoorSaysWhy: a socket the server will not open (the
// network's connections are spent) reaches the page only as a failed
// socket; the page asks the server why, says it, waits as long as it is
// told, and gets in once a socket is free. The test server trusts
// 127.0.0.1 as a proxy, so the browser on this machine is counted, not
// exempt, as a phone behind a school's proxy would be.
func TestPhoneRefusedAtTheDoorSaysWhy(t *testing.T) {
	proxies, err := peer.ParseTrusted([]string{"127.0.0.1/32"})
	require.NoError(t, err)
	ts := classroomServerWith(t, server.Options{TrustedProxies: proxies,
		Classroom: classroom.Config{Limits: classroom.Limits{ConnsPerClient: 1}}})
	_, code := projectorTab(t, ts.URL) // the instructor's sockets are never counted
	ana := pressJoin(t, ts.URL, code, "ana", "")
	run(t, ana, waitJS(`!document.getElementById('client').hidden`))
	bo := pressJoin(t, ts.URL, code, "bo", "")
	refusedAs(t, bo, "network", "Too many connections from this network")
	require.NoError(t, chromedp.Cancel(ana)) // ana's phone is put away: its tab, and socket, close
	run(t, bo, waitJS(`!document.getElementById('client').hidden && document.getElementById('refused').hidden`))
}
