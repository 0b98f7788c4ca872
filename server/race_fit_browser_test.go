package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/lab"
)

// raceProblems is run in the page: it lists what a reader of the race view
// in #race would find wrong. Nothing may run past the race box's visible
// edge or make it scroll sideways; no text is cut with an ellipsis; no two
// texts and no bracket and text overlap; every row label stays inside the
// label column; the legend is there; every ledger block's attempt has a
// row drawn; the winner's mark is its own outcome (a winner that paid once
// and was answered is never marked failed).
const raceProblems = `((sel) => {
	const box = document.querySelector(sel);
	const svg = box && box.querySelector('svg.race');
	if (!svg) return ['no race view'];
	const bad = [];
	if (box.scrollWidth > box.clientWidth + 1) bad.push('the race box scrolls sideways: ' + box.scrollWidth + ' > ' + box.clientWidth);
	const edge = box.getBoundingClientRect();
	const right = edge.left + box.clientWidth;
	const shown = (e) => !e.closest('[visibility=hidden]') && e.getBoundingClientRect().width > 0;
	const texts = [...svg.querySelectorAll('text')].filter(shown);
	const boxes = texts.map((e) => e.getBoundingClientRect());
	const words = (e) => [...e.childNodes].filter((n) => n.nodeName !== 'title').map((n) => n.textContent).join('');
	texts.forEach((e, k) => {
		const s = words(e);
		const r = boxes[k];
		if (s.includes('\u2026')) bad.push('cut with an ellipsis: ' + s);
		if (r.left < edge.left - 1 || r.right > right + 1) bad.push('past the box edge (' + Math.round(r.right - right) + ' px): ' + s);
	});
	for (let i = 0; i < texts.length; i++) {
		for (let j = i + 1; j < texts.length; j++) {
			if (texts[i].contains(texts[j]) || texts[j].contains(texts[i])) continue;
			const a = boxes[i], b = boxes[j];
			const ox = Math.min(a.right, b.right) - Math.max(a.left, b.left);
			const oy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
			if (ox > 2 && oy > 3) bad.push('texts overlap: "' + words(texts[i]) + '" and "' + words(texts[j]) + '"');
		}
	}
	for (const br of [...svg.querySelectorAll('[data-violation] .bracket, [data-violation] .bracket-n')].filter(shown)) {
		const a = br.getBoundingClientRect();
		texts.forEach((e, k) => {
			if (br.closest('[data-violation]').contains(e)) return;
			const b = boxes[k];
			const ox = Math.min(a.right, b.right) - Math.max(a.left, b.left);
			const oy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
			if (ox > 2 && oy > 3) bad.push('a rule bracket covers "' + words(e) + '"');
		});
	}
	// The view may be drawn larger than its own units (the room's screen).
	const scale = svg.getBoundingClientRect().width / svg.width.baseVal.value;
	const plot = Number(svg.dataset.plotX) * scale;
	// Beside the plot, a row's name stays in its column; stacked above the
	// row (a phone), it covers none of the row's marks.
	const marks = [...svg.querySelectorAll('.mark > rect, .money > rect, .charge > rect')].filter(shown).map((m) => m.getBoundingClientRect());
	for (const l of svg.querySelectorAll('[data-row] text.row-label, [data-row] text.row-sub-label, [data-row] text.expand')) {
		const r = l.getBoundingClientRect();
		if (svg.dataset.stacked) {
			if (marks.some((m) => Math.min(m.right, r.right) - Math.max(m.left, r.left) > 1 && Math.min(m.bottom, r.bottom) - Math.max(m.top, r.top) > 2)) bad.push('a row name covers a mark: ' + words(l));
		} else if (l.classList.contains('row-label') && r.right - svg.getBoundingClientRect().left > plot + 1) bad.push('a row label runs into the plot: ' + words(l));
	}
	// The ledger's and the processor's names wrap between words, never
	// inside one: each word of the label is a whole word of the row's title.
	for (const l of svg.querySelectorAll('[data-row=ledger] text.row-label, [data-row=processor] text.row-label')) {
		const title = l.parentNode.querySelector(':scope > title').textContent;
		const lines = [...l.querySelectorAll('tspan')].map((e) => e.textContent);
		const words = (lines.length ? lines : [l.textContent]).join(' ').split(/\s+/).filter((w) => /\p{L}/u.test(w));
		if (words.some((w) => !title.split(/[\s:]+/).includes(w))) bad.push('a row name is broken inside a word: ' + lines.join(' / '));
	}
	if (!svg.querySelector('[data-legend]')) bad.push('no legend');
	// Every payment in the ledger is a mark on a drawn row: the attempt's
	// own, or the one that stands for it and its like.
	const seqsOf = (e) => (e.dataset.seqs || e.dataset.seq || '').split(' ');
	const rows = [...svg.querySelectorAll('[data-row=attempt], [data-row=collapsed]')];
	for (const m of svg.querySelectorAll('.money')) {
		const lanes = (m.dataset.lanes || m.dataset.lane).split(',');
		seqsOf(m).forEach((seq, k) => {
			const lane = lanes[k] || lanes[0];
			const row = rows.find((r) => r.dataset.lane === lane || (r.dataset.lanes || '').split(',').includes(lane));
			if (!row) { bad.push('the payment of ' + lane + ' has no row drawn'); return; }
			if (![...row.querySelectorAll('[data-mark=paid], [data-mark=paid-again]')].some((p) => seqsOf(p).includes(seq))) bad.push('the row of ' + lane + ' draws no mark for its payment (step ' + seq + ')');
		});
	}
	for (const w of svg.querySelectorAll('[data-winner=true]')) {
		const paidAgain = w.querySelector('[data-mark=paid-again]');
		if (w.dataset.verdict === 'fail' && !paidAgain) bad.push('the winner ' + w.dataset.lane + ' is marked failed');
	}
	return bad;
})`

// raceProblemsIn is raceProblems for the race view drawn in the box sel.
func raceProblemsIn(sel string) string { return raceProblems + "(" + quoteJS(sel) + ")" }

// bracketProblems lists what is wrong with the broken rules' brackets of
// the race view in the box sel: a bracket is labelled with its rule's
// number as the checker numbers its rules (lab.Rules; a letter after it
// where one rule is broken twice), and the words under the rows name the
// rule by that number. It also says how many brackets it read.
func bracketProblems(t *testing.T, ctx context.Context, sel string) ([]string, int) {
	t.Helper()
	numbers := map[string]int{}
	for _, r := range lab.Rules() {
		numbers[r.Name] = r.N
	}
	b, err := json.Marshal(numbers)
	require.NoError(t, err)
	type report struct {
		Bad []string `json:"bad"`
		N   int      `json:"n"`
	}
	got := eval[report](t, ctx, `((sel, numbers) => {
		const svg = document.querySelector(sel + ' svg.race');
		const bad = [];
		const brackets = svg ? [...svg.querySelectorAll('g.violation')] : [];
		for (const g of brackets) {
			const name = g.dataset.violation;
			const n = numbers[name];
			const label = g.querySelector('.bracket-n').textContent;
			if (!new RegExp('^✘' + n + '[a-z]?$').test(label)) bad.push(name + ' (rule ' + n + ') is labelled ' + label);
			const words = [...svg.querySelectorAll('.violation-text')].filter((e) => e.dataset.violation === name);
			if (!words.some((e) => new RegExp('(rule|규칙) ' + n + '[a-z]? ').test(e.textContent))) bad.push(name + ': no words say rule ' + n);
		}
		return { bad, n: brackets.length };
	})(`+quoteJS(sel)+`, `+string(b)+`)`)
	return got.Bad, got.N
}

// TestRaceViewFitsItsBox plays every bench scenario of lessons 1, 4, 5 and
// 8 to its end at a laptop's, a projector's (and half of it) and a
// phone's size, in English and Korean, and asks of each race view what a
// reader would: is anything cut, covered or past the edge, is there a
// legend, does every payment point at a drawn row, is the winner marked
// by its own outcome. With -screenshots DIR it saves each race view there.
func TestRaceViewFitsItsBox(t *testing.T) {
	ts := playground(t, playgroundDir(t))
	screens := []screen{laptop, projector, {w: 960, h: 540}, phone}
	if testing.Short() {
		screens = []screen{laptop, phone}
	}
	for _, scr := range screens {
		for _, lang := range []string{"en", "ko"} {
			t.Run(scr.String()+"-"+lang, func(t *testing.T) {
				// Each size and language in a tab of its own, beside the
				// others: the test waits on frames and pages far more than
				// it computes (on two cores, 40 % of the CPU was busy).
				t.Parallel()
				ctx := screenTab(t, scr)
				brackets := 0
				defer func() { assert.Positive(t, brackets, "some scenario breaks a rule: its bracket is read") }()
				for _, lesson := range []string{"01-naive", "04-in-progress", "05-replay", "08-two-servers", "09-processor"} {
					openLessonIn(t, ctx, ts.URL+"/?lang="+lang, lesson)
					ids := eval[[]string](t, ctx, `[...document.querySelectorAll('#lesson-text button.open-scenario')].map((b) => b.dataset.scenario)`)
					for _, id := range ids {
						openRaceScenario(t, ctx, id)
						if eval[bool](t, ctx, `document.querySelector('#bench-body').hidden`) {
							continue
						}
						runToEnd(t, ctx)
						if *screenshots != "" {
							shoot(t, ctx, *screenshots, "race-"+lesson+"-"+id+"-"+scr.String()+"-"+lang, scr, "#race")
						}
						if bad := eval[[]string](t, ctx, raceProblemsIn("#race")); len(bad) > 0 {
							t.Errorf("%s %s: %d problems:\n  %s", lesson, id, len(bad), strings.Join(bad, "\n  "))
						}
						bad, n := bracketProblems(t, ctx, "#race")
						brackets += n
						if len(bad) > 0 {
							t.Errorf("%s %s: the rules' brackets: %s", lesson, id, strings.Join(bad, "; "))
						}
						// Nor does the page scroll sideways: a wide table scrolls
						// in its own panel, a long word in the lesson wraps.
						if w := eval[[]int](t, ctx, `[document.documentElement.scrollWidth, document.documentElement.clientWidth]`); w[0] > w[1] {
							t.Errorf("%s %s: the page is %d px wide in a %d px window", lesson, id, w[0], w[1])
						}
						// Korean headings break between words, never inside one
						// (시나리오: … 장/애 was cut after its first syllable).
						if lang == "ko" {
							if split := eval[[]string](t, ctx, wordsSplitJS(`#bench h2, #bench h3, #lesson-text h1, #lesson-text h2`)); len(split) > 0 {
								t.Errorf("%s %s: words broken across lines: %q", lesson, id, split)
							}
						}
						// The picture saved as a file carries the legend too.
						if !eval[bool](t, ctx, `import('/race.js').then(async (m) => {
							const doc = new DOMParser().parseFromString(m.raceSVGText(document.querySelector('#race svg.race'), await m.raceCSS()), 'image/svg+xml');
							return doc.querySelectorAll('[data-legend] .legend-item').length > 0;
						})`) {
							t.Errorf("%s %s: the exported SVG has no legend", lesson, id)
						}
					}
				}
			})
		}
	}
}

// openRaceScenario opens a scenario by its button and waits until the
// page shows it, on the bench or as a day.
func openRaceScenario(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	opens := eval[string](t, ctx, `document.body.dataset.opens || ''`)
	run(t, ctx,
		click(`#lesson-text button.open-scenario[data-scenario="`+id+`"]`),
		waitJS(`(document.body.dataset.opens || '') !== '`+opens+`' && location.hash.includes('s=`+id+`')`),
		waitJS(`(document.querySelector('#step-count').dataset.step === '0' && !document.querySelector('#bench-body').hidden) || !document.querySelector('#day-body').hidden`),
	)
}

// TestStormRaceFitsItsBox asks the same of a storm's race view: forty
// clients sending one wish twice at naive, on the room's screen at
// 1920x1080 and half of it, and on a phone that took part. Its collapsed
// rows must still draw the moment each of their attempts paid.
func TestStormRaceFitsItsBox(t *testing.T) {
	ts := classroomServer(t)
	presenter, code := projectorTab(t, ts.URL)
	ana := joinPhone(t, ts.URL, code, "ana")
	projectorStorm(t, presenter, "naive", 40, 1, 2, 20)
	for _, scr := range []screen{projector, {w: 960, h: 540}} {
		screenView := tab(t)
		run(t, screenView, scr.emulate(), chromedp.Navigate(ts.URL+"/classroom/teach?view=screen&room="+code),
			waitJS(`document.querySelector('#race svg.race [data-row=collapsed]') !== null && document.querySelector('#race svg.race .money-again') !== null`))
		if *screenshots != "" {
			shoot(t, screenView, *screenshots, "race-storm-"+scr.String(), scr, "#race")
		}
		if bad := eval[[]string](t, screenView, raceProblemsIn("#race")); len(bad) > 0 {
			t.Errorf("the room's screen at %s: %d problems:\n  %s", scr, len(bad), strings.Join(bad, "\n  "))
		}
	}
	if bad := eval[[]string](t, presenter, raceProblemsIn("#race")); len(bad) > 0 {
		t.Errorf("the presenter's page: %d problems:\n  %s", len(bad), strings.Join(bad, "\n  "))
	}
	run(t, ana, chromedp.Evaluate[chromedp.Void](`document.getElementById('room-storm').open = true`),
		waitJS(`document.querySelector('#room-race svg.race') !== null`))
	if *screenshots != "" {
		shoot(t, ana, *screenshots, "race-storm-phone", phone, "#room-race")
	}
	if bad := eval[[]string](t, ana, raceProblemsIn("#room-race")); len(bad) > 0 {
		t.Errorf("the phone: %d problems:\n  %s", len(bad), strings.Join(bad, "\n  "))
	}
}

// wordsSplitJS lists the words of the elements matched by sel that the
// page broke across two lines (a word's range has rects on two lines).
func wordsSplitJS(sel string) string {
	return `(() => {
		const split = [];
		for (const el of document.querySelectorAll(` + quoteJS(sel) + `)) {
			if (!el.getClientRects().length) continue;
			const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
			for (let n = walk.nextNode(); n; n = walk.nextNode()) {
				const re = /\S+/g;
				for (let m = re.exec(n.data); m; m = re.exec(n.data)) {
					const r = document.createRange();
					r.setStart(n, m.index);
					r.setEnd(n, m.index + m[0].length);
					const tops = new Set([...r.getClientRects()].filter((b) => b.width > 0).map((b) => Math.round(b.top)));
					if (tops.size > 1) split.push(m[0]);
				}
			}
		}
		return split;
	})()`
}
