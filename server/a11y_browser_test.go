package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
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
	run(t, phone, waitJS(`!document.getElementById('room-verdict').hidden && document.getElementById('room-verdict').textContent.includes('extra payments')`),
		click("#basement"), click("#send"), waitJS(`document.getElementById('result').textContent.includes('No answer')`))
	run(t, screen, waitJS(`document.querySelector('#race svg.race') !== null && document.getElementById('tally').dataset.duplicates === '10' && !document.getElementById('picture-box').hidden`))
	run(t, presenter, waitJS(`!document.getElementById('picture-box').hidden`))
	check("the presenter after a storm", presenter)
	check("the room's screen after a storm", screen)
	check("the phone after a storm and a lost answer", phone)
}
