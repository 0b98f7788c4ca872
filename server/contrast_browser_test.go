package server_test

// The race view's own contrast, measured on the SVG: axe-core does not
// measure SVG text, so a label that turns near-white on a row that kept its
// light background passes axe and vanishes for a reader. Each text is
// measured against what is painted behind it, in both themes, on every
// screen that draws the view.

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// preferScheme makes the tab's pages see prefers-color-scheme as scheme
// ("light" or "dark"), as on a machine set to that theme.
func preferScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		_, err := cdp.Call(ctx, tgt, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		return err
	})
}

// raceContrastJS is a function of a CSS selector: it measures every text
// of the race view inside the element the selector matches, and the marks
// whose colour is their meaning (arrows, ledger blocks, payment marks,
// brackets, server stripes). The colour behind a point is the HTML
// background under the SVG (each ancestor's background-color, composited
// up to the first opaque one, over white), then every visible SVG rect
// painted before the element whose box covers the point, in paint order,
// each with its fill-opacity and opacity; a text's halo (paint-order:
// stroke) is what lies directly behind its glyphs. Texts are sampled at
// three points across their box, marks at their middle; the worst ratio
// counts. Text needs 4.5:1, large text (24px, or 18.66px bold, as drawn)
// 3:1, a mark 3:1 by its fill or its outline.
const raceContrastJS = `(sel) => {
	const box = document.querySelector(sel);
	const root = box && box.querySelector('svg.race');
	if (!root) return JSON.stringify({ measured: 0, failures: ['no race view in ' + sel] });
	const parse = (s) => {
		const m = /^rgba?\(([^)]*)\)$/.exec((s || '').trim());
		if (!m) return null;
		const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
		return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
	};
	const over = (top, bottom) => ({
		r: top.r * top.a + bottom.r * (1 - top.a), g: top.g * top.a + bottom.g * (1 - top.a),
		b: top.b * top.a + bottom.b * (1 - top.a), a: 1,
	});
	const lum = (c) => {
		const f = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
		return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
	};
	const ratio = (x, y) => { const a = lum(x); const b = lum(y); return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); };
	// fmt writes a ratio cut, not rounded, to two decimals: 4.498 is not 4.50.
	const fmt = (r) => (Math.floor(r * 100) / 100).toFixed(2);
	const hex = (c) => '#' + [c.r, c.g, c.b].map((v) => Math.round(v).toString(16).padStart(2, '0')).join('');
	const opacity = (el) => { let o = 1; for (let e = el; e; e = e.parentElement) o *= Number(getComputedStyle(e).opacity); return o; };
	const shown = (el) => el.checkVisibility({ visibilityProperty: true, checkVisibilityCSS: true }) && !el.closest('defs, clipPath, marker, mask, pattern, title');
	// paint is an element's fill or stroke as drawn: its colour, its
	// alpha times the fill- or stroke-opacity and every ancestor's opacity.
	const paint = (el, prop) => {
		const cs = getComputedStyle(el);
		const c = parse(cs[prop]);
		if (!c) return null;
		c.a *= Number(cs[prop + 'Opacity']) * opacity(el);
		return c;
	};
	let page = { r: 255, g: 255, b: 255, a: 1 };
	const layers = [];
	for (let e = root; e; e = e.parentElement) {
		const c = parse(getComputedStyle(e).backgroundColor);
		if (c && c.a > 0) layers.push(c);
		if (c && c.a >= 1) break;
	}
	for (const c of layers.reverse()) page = over(c, page);
	const rects = [...root.querySelectorAll('rect')].filter(shown)
		.map((el) => ({ el, at: el.getBoundingClientRect(), fill: paint(el, 'fill') }))
		.filter((r) => r.fill && r.fill.a > 0);
	// behind is the colour under a point of el; a mark is seen against
	// the rows under it, not against the marks of the same kind it overlaps
	// (forty payments a few pixels apart make one red bar).
	const behind = (el, x, y, skip) => {
		let c = page;
		for (const r of rects) {
			if (r.el === el || (skip && r.el.matches(skip))) continue;
			if (el.compareDocumentPosition(r.el) & Node.DOCUMENT_POSITION_FOLLOWING) break;
			if (x >= r.at.left && x <= r.at.right && y >= r.at.top && y <= r.at.bottom) c = over(r.fill, c);
		}
		return c;
	};
	const name = (el) => {
		const row = el.closest('[data-row]');
		const where = row ? row.getAttribute('data-row') + (row.getAttribute('data-lane') ? ' ' + row.getAttribute('data-lane') : '') : 'view';
		return (el.getAttribute('class') || el.tagName) + ' in ' + where;
	};
	const failures = [];
	let measured = 0;
	for (const el of root.querySelectorAll('text, tspan')) {
		if (!shown(el)) continue;
		// A text whose words are all in its tspans paints nothing itself.
		const own = [...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim() !== '');
		if (!own) continue;
		const at = el.getBoundingClientRect();
		if (at.width === 0 || at.height === 0) continue;
		const cs = getComputedStyle(el);
		const fill = paint(el, 'fill');
		if (!fill) continue;
		const halo = cs.paintOrder.startsWith('stroke') && parseFloat(cs.strokeWidth) >= 2 ? paint(el, 'stroke') : null;
		const scale = el.getScreenCTM() ? Math.hypot(el.getScreenCTM().a, el.getScreenCTM().b) : 1;
		const px = parseFloat(cs.fontSize) * scale;
		const large = px >= 24 || (px >= 18.66 && Number(cs.fontWeight) >= 700);
		const need = large ? 3 : 4.5;
		let worst = null;
		const y = at.top + at.height / 2;
		for (const x of [at.left + at.width * 0.1, at.left + at.width / 2, at.right - at.width * 0.1]) {
			let bg = behind(el, x, y);
			if (halo) bg = over(halo, bg);
			const fg = over(fill, bg);
			const r = ratio(fg, bg);
			if (!worst || r < worst.r) worst = { r, fg, bg };
		}
		measured++;
		if (worst.r < need) {
			const words = [...el.childNodes].filter((n) => n.nodeName !== 'title').map((n) => n.textContent).join('').trim();
			failures.push('text ' + JSON.stringify(words.slice(0, 48)) + ' (' + name(el) + '): ' + hex(worst.fg) + ' on ' + hex(worst.bg) +
				' is ' + fmt(worst.r) + ':1, needs ' + need + ':1');
		}
	}
	const markSel = '.money rect, .mark.k-paid rect, .mark.k-paid-again rect, .server-stripe';
	const marks = [
		['path.arrow', ['stroke']], ['.bracket', ['stroke']], ['.bracket-dot', ['fill']],
		['.money rect', ['fill', 'stroke']], ['.mark.k-paid rect, .mark.k-paid-again rect', ['fill', 'stroke']], ['.server-stripe', ['fill']],
	];
	for (const [query, props] of marks) {
		for (const el of root.querySelectorAll(query)) {
			if (!shown(el)) continue;
			let x;
			let y;
			if (el.tagName === 'path') {
				const p = el.getPointAtLength(el.getTotalLength() / 2).matrixTransform(el.getScreenCTM());
				x = p.x; y = p.y;
			} else {
				const at = el.getBoundingClientRect();
				x = at.left + at.width / 2; y = at.top + at.height / 2;
			}
			const bg = behind(el, x, y, markSel);
			let best = null;
			for (const prop of props) {
				const c = paint(el, prop);
				if (!c || c.a === 0) continue;
				const fg = over(c, bg);
				const r = ratio(fg, bg);
				if (!best || r > best.r) best = { r, fg };
			}
			if (!best) continue;
			measured++;
			if (best.r < 3) {
				failures.push('mark ' + name(el) + ': ' + hex(best.fg) + ' on ' + hex(bg) + ' is ' + fmt(best.r) + ':1, needs 3:1');
			}
		}
	}
	return JSON.stringify({ measured, failures });
}`

// assertRaceContrast measures the race view inside the element sel
// matches and fails naming each text and mark below its ratio.
func assertRaceContrast(t *testing.T, ctx context.Context, where, sel string) {
	t.Helper()
	var got struct {
		Measured int      `json:"measured"`
		Failures []string `json:"failures"`
	}
	js := "(" + raceContrastJS + ")(" + quoteJS(sel) + ")"
	require.NoError(t, json.Unmarshal([]byte(eval[string](t, ctx, js)), &got))
	require.Positive(t, got.Measured, "%s: the race view has texts to measure", where)
	if len(got.Failures) > 0 {
		t.Errorf("%s: %d of %d texts and marks of the race view are below WCAG AA contrast:\n%s", where, len(got.Failures), got.Measured, strings.Join(got.Failures, "\n"))
	}
}

// TestContrastOfTheRaceView measures the race view's texts and meaningful
// marks against what is behind them (WCAG 2.1 AA: 4.5:1, 3:1 for large
// text and marks), with the machine set to each theme: the benches of
// lessons 1 and 4 run to their end (lesson 4's also in mid-race, a lane
// chosen), lesson 8's two servers, a naive storm on the projector, and a
// phone that paid twice, with the room's storm opened. The classroom's
// pages follow the machine's theme (web/classroom/theme.js), the race view
// inside them with it; TestClassroomPagesInTheDarkTheme checks that they
// do and measures their HTML text too.
func TestContrastOfTheRaceView(t *testing.T) {
	t.Parallel()
	for _, scheme := range []string{"light", "dark"} {
		t.Run(scheme, func(t *testing.T) {
			t.Run("bench", func(t *testing.T) {
				ts := playground(t, playgroundDir(t))
				ctx := tab(t)
				// The page takes the machine's theme unless a choice is
				// stored: no choice is, in this test server's origin.
				run(t, ctx, preferScheme(scheme), chromedp.Navigate(ts.URL+"/healthz"),
					chromedp.Evaluate[chromedp.Void](`localStorage.removeItem('idemlab.theme')`))
				for _, b := range []struct {
					name, lesson, scenario string
					midRace                int // steps after which it is measured in mid-race too
				}{
					{"lesson 1's first bench", "01-naive", "", 0},
					{"lesson 4's first bench", "04-in-progress", "", 4},
					{"lesson 8's two servers (the servers' words and stripes)", "08-two-servers", "s2", 0},
				} {
					hash := "#lesson=" + b.lesson
					if b.scenario != "" {
						hash += "&s=" + b.scenario
					}
					run(t, ctx, chromedp.Navigate(ts.URL+"/"+hash),
						waitJS(`document.body.dataset.engine === 'ready' && document.body.dataset.interactive === 'true'`),
						waitJS(`document.body.dataset.lesson === '`+b.lesson+`' && document.querySelector('#step-count')?.dataset.step === '0'`))
					require.Equal(t, scheme, attr(t, ctx, "html", "data-theme"), "the page follows the machine's theme")
					for i := 1; i <= b.midRace; i++ {
						run(t, ctx, click(`#btn-step`),
							waitJS(`document.querySelector('#step-count').dataset.step === '`+strconv.Itoa(i)+`'`))
					}
					if b.midRace > 0 {
						assertRaceContrast(t, ctx, b.name+" in mid-race (a lane chosen, the next phases shown), "+scheme, "#race")
					}
					runToEnd(t, ctx)
					assertRaceContrast(t, ctx, b.name+" run to its end, "+scheme, "#race")
				}
			})
			t.Run("classroom", func(t *testing.T) {
				ts := classroomServer(t)
				proj, code := projectorTab(t, ts.URL)
				phone := joinPhone(t, ts.URL, code, "ana")
				run(t, proj, preferScheme(scheme))
				run(t, phone, preferScheme(scheme),
					waitJS(`document.getElementById('level-label').textContent === 'naive'`),
					click("#basement"), click("#send"),
					waitJS(`document.getElementById('result').textContent.includes('No answer')`),
					click("#basement"), click("#send"),
					waitJS(`document.getElementById('result').dataset.outcome === 'paid-twice'`),
					waitJS(`document.querySelector('#mylanes [data-mark="paid-again-text"]') !== null`))
				// A storm starts a new ledger: the phone's own attempts are
				// measured before it.
				assertRaceContrast(t, phone, "the phone that paid twice, "+scheme, "#mylanes")
				projectorStorm(t, proj, "naive", 20, 1, 2, 200)
				assertRaceContrast(t, proj, "the projector's naive storm, "+scheme, "#race")
				run(t, phone, waitJS(`!document.getElementById('room-storm').hidden`),
					click("#room-storm summary"),
					waitJS(`document.querySelector('#room-race svg.race') !== null`))
				assertRaceContrast(t, phone, "the room's storm on the phone, "+scheme, "#room-race")
			})
		})
	}
}
