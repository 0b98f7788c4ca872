package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
)

// axeScript is axe-core (an accessibility checker, from npm) as .ci/run
// and `make test` install it, under bin/axe; AXE_CORE_JS names another
// copy.
func axeScript(t *testing.T) string {
	t.Helper()
	path := os.Getenv("AXE_CORE_JS")
	if path == "" {
		path = filepath.Join("..", "bin", "axe", "node_modules", "axe-core", "axe.min.js")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no axe-core at %s: npm install --prefix bin/axe axe-core@4 (make test and .ci/run do) to run the accessibility checks", path)
	}
	return string(b)
}

// axeViolations runs axe-core on the page and returns its violations, one
// line each: the rule, its impact and the elements it names.
func axeViolations(t *testing.T, ctx context.Context, script string) []string {
	t.Helper()
	run(t, ctx, chromedp.Evaluate[chromedp.Void](script))
	return eval[[]string](t, ctx, `(async () => {
		const r = await axe.run(document, { resultTypes: ['violations'] });
		return r.violations.map((v) => v.id + ' (' + v.impact + '): ' + v.nodes.map((n) => n.target.join(' ')).slice(0, 5).join(', '));
	})()`)
}

// TestClassroomPagesAreAccessible runs axe-core on every classroom page as
// people see it: the phone before and after joining, the presenter with a
// storm drawn, and the room's screen, on its join screen and after a storm.
func TestClassroomPagesAreAccessible(t *testing.T) {
	script := axeScript(t)
	ts := classroomServer(t)
	presenter, code := projectorTab(t, ts.URL)

	phone := tab(t)
	run(t, phone, chromedp.EmulateViewport(390, 844), chromedp.Navigate(ts.URL+"/classroom/?room="+code),
		waitJS(`document.getElementById('room-code').value === `+quoteJS(code)))
	check := func(name string, ctx context.Context) {
		if v := axeViolations(t, ctx, script); len(v) > 0 {
			t.Errorf("%s: %d accessibility violations:\n%s", name, len(v), strings.Join(v, "\n"))
		}
	}
	check("the phone's join form", phone)
	run(t, phone, chromedp.Evaluate[chromedp.Void](`document.getElementById('nickname').value = 'ana'`),
		click(`#join-form button[type=submit]`), waitJS(`!document.getElementById('client').hidden`))

	screen := tab(t)
	run(t, screen, chromedp.EmulateViewport(1920, 1080), chromedp.Navigate(ts.URL+"/classroom/teach?view=screen&room="+code),
		waitJS(`document.getElementById('conn').dataset.status === 'online' && document.getElementById('joined-names').textContent.includes('ana')`))
	check("the room's join screen", screen)

	run(t, presenter, click("#ask"))
	run(t, phone, waitJS(`document.querySelector('#choices button') !== null`))
	check("the phone with a vote open", phone)
	projectorStorm(t, presenter, "naive", 6, 2, 2, 20)
	run(t, phone, waitJS(`!document.getElementById('room-verdict').hidden && document.getElementById('room-verdict').textContent.includes('extra transfers')`),
		click("#basement"), click("#send"), waitJS(`document.getElementById('result').textContent.includes('No answer')`))
	run(t, screen, waitJS(`document.querySelector('#race svg.race') !== null && document.getElementById('tally').dataset.duplicates === '10' && !document.getElementById('picture-box').hidden`))
	run(t, presenter, waitJS(`!document.getElementById('picture-box').hidden`))
	check("the presenter after a storm", presenter)
	check("the room's screen after a storm", screen)
	check("the phone after a storm and a lost answer", phone)
}

// TestPlaygroundIsAccessible runs axe-core on the playground as a learner
// leaves it: every bench of lanes in lessons 1, 4, 5 and 8 run to its end
// (the race view drawn with its rows, marks, arrows and brackets), and the
// keys help open with its shortcuts switch.
func TestPlaygroundIsAccessible(t *testing.T) {
	script := axeScript(t)
	ts := playground(t, playgroundDir(t))
	lessons := map[string]lessonJSON{}
	for _, l := range fetchLessons(t, ts.URL) {
		lessons[l.ID] = l
	}
	for _, id := range []string{"01-naive", "04-in-progress", "05-replay", "08-two-servers"} {
		l, ok := lessons[id]
		if !ok {
			t.Fatalf("no lesson %s", id)
		}
		t.Run(id, func(t *testing.T) {
			ctx := tab(t)
			openLesson(t, ctx, ts.URL, id)
			for _, sc := range l.Scenarios {
				if len(sc.Day) > 0 && string(sc.Day) != "null" {
					continue
				}
				openScenario(t, ctx, sc.ID, false)
				runToEnd(t, ctx)
				if v := axeViolations(t, ctx, script); len(v) > 0 {
					t.Errorf("%s %s run to its end: %d accessibility violations:\n%s", id, sc.ID, len(v), strings.Join(v, "\n"))
				}
			}
			if id == "01-naive" {
				run(t, ctx, click("#keys-toggle"), waitJS(`!document.getElementById('keys-help').hidden`))
				if v := axeViolations(t, ctx, script); len(v) > 0 {
					t.Errorf("the keys help: %d accessibility violations:\n%s", len(v), strings.Join(v, "\n"))
				}
			}
		})
	}
}

// TestInstructorSignInIsAccessible runs axe-core on the instructor's pages
// before a room is open: the sign-in page and the lobby, each with its
// main landmark (and the room's screen asking for a sign-in).
func TestInstructorSignInIsAccessible(t *testing.T) {
	script := axeScript(t)
	ts := classroomServer(t)
	ctx := tab(t)
	check := func(name string) {
		t.Helper()
		assert.Equal(t, 1, eval[int](t, ctx, `[...document.querySelectorAll('main')].filter((m) => !m.hidden).length`), "%s has one main landmark shown", name)
		assert.True(t, eval[bool](t, ctx, `[...document.querySelectorAll('main')].some((m) => !m.hidden && m.contains([...document.querySelectorAll('h2')].find((h) => h.checkVisibility())))`), "%s: its heading is in the main landmark", name)
		if v := axeViolations(t, ctx, script); len(v) > 0 {
			t.Errorf("%s: %d accessibility violations:\n%s", name, len(v), strings.Join(v, "\n"))
		}
	}
	run(t, ctx, chromedp.Navigate(ts.URL+"/classroom/teach?view=screen"), waitJS(`!document.getElementById('signin').hidden`))
	assert.True(t, eval[bool](t, ctx, `document.getElementById('signin').checkVisibility()`), "the room's screen shows the sign-in")
	check("the room's screen asking for a sign-in")
	run(t, ctx, chromedp.Navigate(ts.URL+"/classroom/teach"), waitJS(`!document.getElementById('signin').hidden`))
	assert.True(t, eval[bool](t, ctx, `document.getElementById('signin').checkVisibility()`), "the sign-in page shows its form")
	check("the instructor's sign-in page")
	run(t, ctx, signInSteps(ts.URL))
	assert.True(t, eval[bool](t, ctx, `document.getElementById('lobby').checkVisibility()`), "the lobby shows")
	check("the lobby")
	run(t, ctx, click("#create"), waitJS(`document.getElementById('code').textContent.length === 6`))
	assert.Equal(t, 1, eval[int](t, ctx, `[...document.querySelectorAll('main')].filter((m) => !m.hidden).length`), "the room has one main landmark shown")
}
