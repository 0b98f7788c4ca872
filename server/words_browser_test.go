package server_test

// One sentence for money moved more than once, wherever a page shows it, and
// the classroom's pages in the machine's theme. The words are read as a
// person reads them: the tiles, the race view's ledger, the checker's rules,
// the phone's verdict, the bench's summary.

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/lab"
)

// TestWordsAgreeAfterAStorm: a naive storm of twenty clients sending twice
// for one wish pays it forty times, 39 extra transfers of 10,000 won. The
// presenter's tiles read as that sentence, and the race view's ledger total,
// the checker's rule 1 and the phone's verdict say it whole, in the words
// lab.ExtraPayments says; the room's screen says it in Korean. None of them
// says "twice".
func TestWordsAgreeAfterAStorm(t *testing.T) {
	ts := classroomServer(t)
	proj, code := projectorTab(t, ts.URL)
	phone := joinPhone(t, ts.URL, code, "ana")
	screen := tab(t)
	run(t, screen, chromedp.EmulateViewport(1920, 1080), chromedp.Navigate(ts.URL+"/classroom/teach?view=screen&lang=ko&room="+code),
		waitJS(`document.getElementById('conn').dataset.status === 'online'`))

	projectorStorm(t, proj, "naive", 20, 1, 2, 20)
	require.Equal(t, "39", attr(t, proj, "#tally", "data-duplicates"), "forty payments of one wish: 39 extra")

	for _, p := range []struct {
		name, lang string
		ctx        context.Context
	}{{"the presenter", "en", proj}, {"the room's screen", "ko", screen}} {
		want := lab.ExtraPayments(39, 390_000, p.lang)
		run(t, p.ctx, waitJS(`document.querySelector('#race [data-mark="paid-again-total"]') !== null && document.querySelectorAll('#tally .tile[data-extra]').length === 2`))
		tiles := eval[[]string](t, p.ctx, `[...document.querySelectorAll('#tally .tile[data-extra]')].flatMap((e) => [e.querySelector('.tval').textContent, e.querySelector('.tlabel').textContent, e.dataset.extra])`)
		require.Len(t, tiles, 6)
		assert.Equal(t, want, tiles[2], "%s: the tiles carry the sentence", p.name)
		assert.Equal(t, want, tiles[5], "%s: the tiles carry the sentence", p.name)
		assert.Equal(t, "39", tiles[0], "%s: the count tile", p.name)
		assert.Contains(t, tiles[3], "390,000", "%s: the money tile", p.name)
		if p.lang == "en" {
			assert.Equal(t, want, tiles[0]+" "+tiles[1]+": "+tiles[3]+" "+tiles[4], "%s: the two tiles read as the sentence", p.name)
		}
		total := eval[string](t, p.ctx, `document.querySelector('#race [data-mark="paid-again-total"]').textContent`)
		assert.Equal(t, "✘ "+want, total, "%s: the race view's ledger total", p.name)
		rule := eval[string](t, p.ctx, `document.querySelector('#rules li.fail .violation').textContent`)
		assert.True(t, strings.HasPrefix(rule, want+" ("), "%s: rule 1 opens with the sentence: %q", p.name, rule)
		for _, words := range []string{total, rule, strings.Join(tiles, " ")} {
			assert.NotContains(t, words, "twice", p.name)
			assert.NotContains(t, words, "두 번", p.name)
		}
	}
	run(t, phone, waitJS(`!document.getElementById('room-verdict').hidden`))
	assert.Contains(t, text(t, phone, "#room-verdict"), lab.ExtraPayments(39, 390_000, "en"), "the phone's verdict")
}

// TestBenchSaysTheCheckersWords: lesson 1's bench at naive (no key table)
// sums up in the checker's own sentence for the second payment, and its
// byte-identical rule speaks of the same request sent again, not of the key
// rent-2611 that nothing on that level reads.
func TestBenchSaysTheCheckersWords(t *testing.T) {
	t.Parallel()
	ts := playground(t, playgroundDir(t))
	ctx := tab(t)
	openLesson(t, ctx, ts.URL, "01-naive")
	runToEnd(t, ctx)
	want := lab.ExtraPayments(1, 500_000, "en")
	assert.Contains(t, text(t, ctx, "#summary"), want, "the summary")
	one := text(t, ctx, `#rules li[data-rule="one-transfer-per-intent"]`)
	assert.Contains(t, one, want, "rule 1")
	three := text(t, ctx, `#rules li[data-rule="replay-is-byte-identical"]`)
	assert.Contains(t, three, "the same request sent again got 201")
	assert.NotContains(t, three, "rent-2611")
	vio := eval[string](t, ctx, `[...document.querySelectorAll('#race .violation-text[data-violation="replay-is-byte-identical"]')].map((e) => e.textContent).join(' ')`)
	assert.NotContains(t, vio, "under key", "the race view's sentence for the rule")
}

// contrastJS runs axe-core's colour-contrast rule alone (WCAG 2.1 AA for
// the page's HTML text); the other rules are TestClassroomPagesAreAccessible's.
const contrastJS = `(async () => {
	const r = await axe.run(document, { runOnly: { type: 'rule', values: ['color-contrast'] }, resultTypes: ['violations'] });
	return r.violations.flatMap((v) => v.nodes.map((n) => n.target.join(' ') + ': ' + n.failureSummary.replace(/\s+/g, ' ')));
})()`

// themeJS says which theme the page is in and how light its background and
// its race view's rows are (relative luminance, 0 black to 1 white).
const themeJS = `(() => {
	const lum = (s) => {
		const p = (s.match(/[\d.]+/g) || []).map(Number);
		const f = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
		return 0.2126 * f(p[0]) + 0.7152 * f(p[1]) + 0.0722 * f(p[2]);
	};
	const race = document.querySelector('svg.race');
	const band = race && race.querySelector('.band-ledger, .band-db');
	return {
		theme: document.documentElement.dataset.theme || '',
		page: lum(getComputedStyle(document.body).backgroundColor),
		bar: lum(getComputedStyle(document.querySelector('.bar')).backgroundColor),
		race: race ? lum(getComputedStyle(race).backgroundColor) : -1,
		band: band ? lum(getComputedStyle(band).fill) : -1,
	};
})()`

type themeOf struct {
	Theme string  `json:"theme"`
	Page  float64 `json:"page"`
	Bar   float64 `json:"bar"`
	Race  float64 `json:"race"`
	Band  float64 `json:"band"`
}

// TestClassroomPagesInTheDarkTheme: on a machine set to dark, the
// classroom's pages (the instructor's sign-in, the phone, the presenter, the
// room's screen) are dark, and so is the race view inside them, rows and
// all; a page already open follows the machine when it switches. Every HTML
// text passes axe-core's contrast check and every text and mark of the race
// view is measured on the SVG (raceContrastJS): after a storm, on the phone
// that paid twice and the room's storm opened on it.
func TestClassroomPagesInTheDarkTheme(t *testing.T) {
	script := axeScript(t)
	ts := classroomServer(t)
	contrast := func(name string, ctx context.Context) {
		t.Helper()
		run(t, ctx, chromedp.Evaluate[chromedp.Void](script))
		if v := eval[[]string](t, ctx, contrastJS); len(v) > 0 {
			t.Errorf("%s: %d texts below WCAG AA contrast:\n%s", name, len(v), strings.Join(v, "\n"))
		}
	}
	dark := func(name string, ctx context.Context, withRace bool) {
		t.Helper()
		got := eval[themeOf](t, ctx, themeJS)
		assert.Equal(t, "dark", got.Theme, "%s: the page takes the machine's theme", name)
		assert.Less(t, got.Page, 0.05, "%s: the page is dark", name)
		assert.Less(t, got.Bar, 0.05, "%s: its header is dark", name)
		if withRace {
			assert.Less(t, got.Race, 0.05, "%s: the race view is dark", name)
			assert.Less(t, got.Band, 0.05, "%s: the race view's ledger and key rows are dark", name)
		}
	}

	signin := tab(t)
	run(t, signin, preferScheme("dark"), chromedp.Navigate(ts.URL+"/classroom/teach"), waitJS(`!document.getElementById('signin').hidden`))
	dark("the sign-in page", signin, false)
	contrast("the sign-in page", signin)

	// The presenter was opened light; the machine turns dark during class.
	proj, code := projectorTab(t, ts.URL)
	require.Equal(t, "light", eval[themeOf](t, proj, themeJS).Theme)
	run(t, proj, preferScheme("dark"), waitJS(`document.documentElement.dataset.theme === 'dark'`))
	dark("the presenter's lobby", proj, false)
	contrast("the presenter's lobby", proj)

	screen := tab(t)
	run(t, screen, preferScheme("dark"), chromedp.EmulateViewport(1920, 1080), chromedp.Navigate(ts.URL+"/classroom/teach?view=screen&room="+code),
		waitJS(`document.getElementById('conn').dataset.status === 'online'`))
	contrast("the room's join screen", screen)

	phone := joinPhone(t, ts.URL, code, "ana")
	run(t, phone, preferScheme("dark"), waitJS(`document.documentElement.dataset.theme === 'dark'`),
		waitJS(`document.getElementById('level-label').textContent === 'naive'`),
		click("#basement"), click("#send"),
		waitJS(`document.getElementById('result').textContent.includes('No answer')`),
		click("#basement"), click("#send"),
		waitJS(`document.getElementById('result').dataset.outcome === 'paid-twice'`),
		waitJS(`document.querySelector('#mylanes svg.race') !== null`))
	dark("the phone that paid twice", phone, true)
	contrast("the phone that paid twice", phone)
	assertRaceContrast(t, phone, "the phone that paid twice, dark", "#mylanes")

	// 200 ms payments: the second payments' marks sit on the payment's span.
	projectorStorm(t, proj, "naive", 20, 1, 2, 200)
	run(t, screen, waitJS(`document.querySelector('#race svg.race') !== null && document.getElementById('tally').dataset.duplicates === '39' && !document.getElementById('picture-box').hidden`))
	run(t, proj, waitJS(`!document.getElementById('picture-box').hidden`))
	for _, p := range []struct {
		name string
		ctx  context.Context
	}{{"the presenter after a storm", proj}, {"the room's screen after a storm", screen}} {
		dark(p.name, p.ctx, true)
		contrast(p.name, p.ctx)
		assertRaceContrast(t, p.ctx, p.name+", dark", "#race")
	}
	run(t, phone, waitJS(`!document.getElementById('room-storm').hidden`), click("#room-storm summary"),
		waitJS(`document.querySelector('#room-race svg.race') !== null`))
	contrast("the phone with the room's storm", phone)
	assertRaceContrast(t, phone, "the room's storm on the phone, dark", "#room-race")
}
