package server_test

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRaceViewDrawsTheRace plays the lessons' races to the end and reads
// the race view by its data attributes: the winner pinned at the top of its
// key's group, the red paid-again commit with its words, the arrows from a
// duplicate's claim to the claim it hit, from a 409 to the in_progress row
// and from a replay to the stored answer, and the broken rules joining the
// attempts they name.
func TestRaceViewDrawsTheRace(t *testing.T) {
	t.Parallel()
	ts := playground(t, playgroundDir(t))
	ctx := tab(t)

	// Lesson 2, check-then-insert: both pay, the second payment is red
	// and says so in words.
	openLesson(t, ctx, ts.URL, "02-unique")
	openScenario(t, ctx, "s1", false)
	runToEnd(t, ctx)
	assert.Equal(t, 1, countIn(t, ctx, `#race [data-row="ledger"] [data-mark="paid"]`), "one first payment")
	assert.Equal(t, 1, countIn(t, ctx, `#race [data-row="ledger"] [data-mark="paid-again"]`), "one payment again")
	assert.Equal(t, "A2", attr(t, ctx, `#race [data-row="attempt"] [data-mark="paid-again"]`, "data-lane"))
	assert.Contains(t, svgText(t, ctx, `#race [data-row="attempt"][data-lane="A2"] [data-mark="paid-again-text"]`), "paid again: 45,000 won")
	// The ledger's words of the payment again stand under its block, not
	// at the row's left edge, and say what it left: the balances after.
	// One sign a meaning: the money moved again is the ledger's ■, red, as
	// on A2's row, and the legend tells it once; ✘ is what failed.
	assert.Equal(t, "■", svgText(t, ctx, `#race [data-row="ledger"] [data-mark="paid-again"] .money-icon`))
	assert.Equal(t, "■", svgText(t, ctx, `#race [data-legend] .lg-money.again .money-icon`), "the legend draws the block as the ledger does")
	legendItems := eval[[]string](t, ctx, `[...document.querySelectorAll('#race [data-legend] .legend-item')].map((g) => g.textContent)`)
	againItems := 0
	for _, it := range legendItems {
		if strings.Contains(it, "again") && !strings.Contains(it, "processor") {
			againItems++
		}
	}
	assert.Equal(t, 2, againItems, "the legend tells the money moved again once (and the row that paid again): %q", legendItems)
	ledgerAgain := `#race [data-row="ledger"] [data-mark="paid-again-text"]`
	assert.Contains(t, svgText(t, ctx, ledgerAgain), "· after: ")
	gap := eval[float64](t, ctx, `(() => { const b = document.querySelector('#race [data-row="ledger"] [data-mark="paid-again"] rect').getBoundingClientRect();
		const x = document.querySelector('`+ledgerAgain+`').getBoundingClientRect(); return x.left <= b.right && x.right >= b.left ? 0 : Math.min(Math.abs(x.left - b.right), Math.abs(b.left - x.right)); })()`)
	assert.Zero(t, gap, "the words span their block's x")
	assert.Equal(t, "A1", eval[string](t, ctx, `document.querySelector('#race [data-row="attempt"]').dataset.lane`), "the winner's row comes first")
	assert.Equal(t, "true", attr(t, ctx, `#race [data-row="attempt"][data-lane="A1"]`, "data-winner"))
	assert.Equal(t, "A1,A2", attr(t, ctx, `#race [data-violation="one-transfer-per-intent"]`, "data-lanes"))
	// A sentence wrapped over lines reads, as one text, with its words
	// apart: every line but the last ends in a space.
	wrapped := eval[[]string](t, ctx, `[...document.querySelectorAll('#race text')].filter((x) => x.querySelectorAll(':scope > tspan').length > 1)
		.flatMap((x) => [...x.querySelectorAll(':scope > tspan')].slice(0, -1).map((s) => s.textContent)).filter((s) => !s.endsWith(' '))`)
	assert.Empty(t, wrapped, "wrapped lines that run into the next")
	assert.Positive(t, eval[int](t, ctx, `[...document.querySelectorAll('#race text')].filter((x) => x.querySelectorAll(':scope > tspan').length > 1).length`), "some text wraps")

	// Lesson 2, INSERT OR IGNORE: A2's claim wrote nothing and said
	// nothing; the picture shows it hollow, and the key keeps one row.
	openScenario(t, ctx, "s2", false)
	runToEnd(t, ctx)
	assert.Equal(t, 1, countIn(t, ctx, `#race [data-row="attempt"][data-lane="A2"] [data-mark="claim-ignored"]`))
	assert.Zero(t, countIn(t, ctx, `#race [data-row="db"] [data-owner="A2"]`), "the key's row is A1's alone")
	assert.Equal(t, 1, countIn(t, ctx, `#race [data-row="ledger"] [data-mark="paid-again"]`))

	// Lesson 2, the constraint: A2's claim hits A1's row; nothing is paid twice.
	openScenario(t, ctx, "s3", false)
	runToEnd(t, ctx)
	assert.Equal(t, 0, countIn(t, ctx, `#race [data-mark="paid-again"]`))
	assert.Equal(t, 1, countIn(t, ctx, `#race [data-arrow="duplicate"][data-from-lane="A2"][data-to-lane="A1"]`), "the duplicate points at the claim it hit")

	// Lesson 4: a retry during the payment gets 409, pointing at the
	// in_progress row of the attempt that holds the key.
	openLesson(t, ctx, ts.URL, "04-in-progress")
	openScenario(t, ctx, "s3", false)
	runToEnd(t, ctx)
	assert.Equal(t, 1, countIn(t, ctx, `#race [data-arrow="conflict"][data-from-lane="A2"][data-to-lane="A1"]`), "the 409 points at A1's in_progress row")
	// A 409 refuses nothing: A2 was told to come back, and its row and the
	// legend say so.
	assert.Equal(t, "wait", attr(t, ctx, `#race [data-row="attempt"][data-lane="A2"]`, "data-verdict"))
	assert.Contains(t, svgText(t, ctx, `#race [data-legend]`), "told to come back: 409, the key is still in progress")
	assert.NotZero(t, countIn(t, ctx, `#race [data-row="db"] [data-db-state="in_progress"][data-owner="A1"]`))
	assert.NotZero(t, countIn(t, ctx, `#race [data-row="db"] [data-db-state="completed"]`))
	// This rung stores no answer yet: the late retry gets a generic
	// "already processed", drawn as such, with no arrow to an answer
	// that was never stored.
	assert.Equal(t, 1, countIn(t, ctx, `#race [data-row="attempt"][data-lane="A3"] [data-mark="replay-generic"]`), "the late retry is answered generically")
	assert.Zero(t, countIn(t, ctx, `#race [data-arrow="replay"]`), "no arrow points at a stored answer")
	assert.Contains(t, svgText(t, ctx, `#race [data-legend]`), "no answer was stored to replay")
	// Its completed key row holds no answer, and the legend says so.
	assert.Contains(t, svgText(t, ctx, `#race [data-legend]`), "key row completed, no answer stored in it")
	assert.NotContains(t, svgText(t, ctx, `#race [data-legend]`), "its answer stored")
	// The bench lights the step it shows, and the legend says what that is.
	assert.Equal(t, 1, countIn(t, ctx, `#race [data-current="true"]`), "the step shown is lit")
	assert.Contains(t, svgText(t, ctx, `#race [data-legend-item="current"]`), "the step shown")
	// Each key row state's swatch in the legend is drawn as the row draws
	// that state.
	fill := `((sel) => getComputedStyle(document.querySelector(sel)).fill)`
	for _, st := range []string{"in_progress", "completed"} {
		assert.Equal(t, eval[string](t, ctx, fill+`('#race [data-row="db"] [data-db-state="`+st+`"] rect')`),
			eval[string](t, ctx, fill+`('#race [data-legend-item="state`+st+`"] rect')`), "the legend's %s swatch", st)
	}
	// From the replay rung on, it holds the answer.
	openLesson(t, ctx, ts.URL, "05-replay")
	openScenario(t, ctx, "s2", false)
	runToEnd(t, ctx)
	assert.Contains(t, svgText(t, ctx, `#race [data-legend]`), "key row completed, its answer stored")
	openLesson(t, ctx, ts.URL, "04-in-progress")
	openScenario(t, ctx, "s3", false)
	runToEnd(t, ctx)

	// The SQL of the step shown is large beside the view, and the key row
	// it touched is lit: step back to A1's claim.
	run(t, ctx, click(`#race [data-row="attempt"][data-lane="A1"] [data-mark="claim"]`),
		waitJS(`document.querySelector('#race [data-mark="claim"][data-lane="A1"]').dataset.current === 'true'`))
	assert.Contains(t, strings.ToUpper(text(t, ctx, "#last-sql")), "INSERT")
	assert.Equal(t, "true", attr(t, ctx, `#race [data-row="db"]`, "data-touched"))
}

// TestRaceViewExportsSVG saves the bench's view as SVG, as the export
// button does, and parses the file: it is well-formed, carries its own
// style and names the same attempts as the page.
func TestRaceViewExportsSVG(t *testing.T) {
	t.Parallel()
	ts := playground(t, playgroundDir(t))
	ctx := tab(t)
	openLesson(t, ctx, ts.URL, "02-unique")
	openScenario(t, ctx, "s1", false)
	runToEnd(t, ctx)
	doc := eval[string](t, ctx, `(async () => {
		const m = await import('/race.js');
		return m.raceSVGText(document.querySelector('#race svg'), await m.raceCSS());
	})()`)
	require.True(t, strings.HasPrefix(doc, "<?xml"), "an SVG document")
	dec := xml.NewDecoder(strings.NewReader(doc))
	lanes := map[string]bool{}
	marks := map[string]bool{}
	styled := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "the exported SVG parses as XML")
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Local == "style" {
				styled = true
			}
			for _, a := range se.Attr {
				switch a.Name.Local {
				case "data-lane":
					lanes[a.Value] = true
				case "data-mark":
					marks[a.Value] = true
				}
			}
		}
	}
	assert.True(t, styled, "the file carries its style")
	assert.Equal(t, map[string]bool{"A1": true, "A2": true}, lanes, "the file names the page's attempts")
	assert.True(t, marks["paid-again"], "and its second payment")
	// The button itself produces a download without an error.
	run(t, ctx, click(`#btn-export-svg`))
}

// TestDayAsAPicture replays lesson 1's day of retries against the naive
// bank: the day is drawn as a picture whose columns count the attempts by
// outcome, and choosing a moment where money moved twice opens its
// attempts in the race view, the second payments red.
func TestDayAsAPicture(t *testing.T) {
	t.Parallel()
	ts := playground(t, playgroundDir(t))
	ctx := tab(t)
	openLesson(t, ctx, ts.URL, "01-naive")
	openScenario(t, ctx, "s2", true)
	run(t, ctx, click(`#btn-day`),
		waitJS(`document.querySelector('#day-picture svg g[data-bucket]') !== null`))
	again := eval[int](t, ctx, `[...document.querySelectorAll('#day-picture rect[data-outcome="paid-again"]')].reduce((n, r) => n + Number(r.dataset.count), 0)`)
	assert.Positive(t, again, "the naive bank's day has second payments, drawn as such")
	assert.Equal(t, duplicates(t, ctx, "#day-summary"), fmt.Sprint(again), "the picture counts what the checker counts")
	// The first moment with a second payment opens in the race view.
	eval[bool](t, ctx, `(() => { const g = document.querySelector('#day-picture rect[data-outcome="paid-again"]').closest('g[data-bucket]'); g.dispatchEvent(new MouseEvent('click', {bubbles: true})); return true; })()`)
	run(t, ctx, waitJS(`!document.querySelector('#day-moment').hidden && document.querySelector('#day-moment svg.race') !== null`))
	assert.Positive(t, eval[int](t, ctx, `document.querySelectorAll('#day-moment [data-row="ledger"] [data-mark="paid-again"]').length`),
		"the moment's second payments are red in the race view")
	assert.Equal(t, eval[int](t, ctx, `document.querySelectorAll('#day-picture g[data-bucket]:not([data-attempts="0"])').length`),
		eval[int](t, ctx, `document.querySelectorAll('#day-picture g[data-bucket][role="button"][tabindex="0"]').length`),
		"every column with attempts is a button, for the keyboard too")
}

// TestPatchMovesNamedChildren holds dom.js's patch to its promise for
// children that name themselves (data-k, the race view's rows): a named
// child that changes place is moved and kept (its identity, and so its
// focus and the browser's work on it), unnamed children are matched by
// place as before, a name whose tag changed is drawn anew, and a name no
// longer wanted is removed.
func TestPatchMovesNamedChildren(t *testing.T) {
	ts := playground(t, playgroundDir(t))
	ctx := tab(t)
	run(t, ctx, chromedp.Navigate(ts.URL+"/"), waitJS(`document.body.dataset.interactive === 'true'`))
	got := eval[map[string]any](t, ctx, `import('/dom.js').then(({ el, patch }) => {
		const box = document.createElement('div');
		document.body.append(box);
		const kids = (spec) => spec.map(([tag, k, v]) => el(tag, k ? { 'data-k': k, 'data-v': v } : { 'data-v': v }));
		patch(box, kids([['p', 'a', '1'], ['p', 'b', '1'], ['span', '', '1'], ['p', 'c', '1'], ['p', 'd', '1']]));
		const before = [...box.children];
		before.forEach((e, i) => (e.__mark = i));
		patch(box, kids([['p', 'c', '2'], ['p', 'a', '2'], ['span', '', '2'], ['div', 'b', '2'], ['p', 'e', '2']]));
		const after = [...box.children];
		const out = {
			order: after.map((e) => (e.dataset.k || '-') + ':' + e.dataset.v + ':' + e.tagName.toLowerCase()).join(' '),
			kept: after.map((e) => (e.__mark === undefined ? 'new' : String(e.__mark))).join(' '),
			d: box.querySelector('[data-k="d"]') === null,
		};
		box.remove();
		return out;
	})`)
	assert.Equal(t, "c:2:p a:2:p -:2:span b:2:div e:2:p", got["order"], "the children as drawn")
	assert.Equal(t, "3 0 2 new new", got["kept"], "c and a moved and kept, the span kept in place, b (now a div) and e new")
	assert.Equal(t, true, got["d"], "d, no longer wanted, is gone")
}

// TestMountKeepsWhatIsTheSame holds vdom.js's mount to its promises: a
// named child (data-k) is moved and kept wherever it goes, an unnamed one
// is kept when a child of its tag and class is there (a layer put in
// before it does not shift it onto its neighbour), a change made to the
// page since the last drawing (a class, a tab stop, a visibility) is
// undone where the new drawing says otherwise, the listeners are the new
// drawing's, and a V answers the selectors a drawing asks while it is
// built.
func TestMountKeepsWhatIsTheSame(t *testing.T) {
	ts := playground(t, playgroundDir(t))
	ctx := tab(t)
	run(t, ctx, chromedp.Navigate(ts.URL+"/"), waitJS(`document.body.dataset.interactive === 'true'`))
	got := eval[map[string]any](t, ctx, `import('/vdom.js').then(({ vsvg, mount }) => {
		const box = document.createElement('div');
		document.body.append(box);
		const calls = [];
		const draw = (names, layer, word, fn) =>
			vsvg('svg', { width: 10 },
				layer ? vsvg('g', { class: 'mask' }) : null,
				vsvg('g', { class: 'rows' }, ...names.map((n) => vsvg('g', { 'data-k': n, class: 'row', onclick: () => calls.push(fn + n) }, vsvg('text', { class: 'mark', tabindex: -1 }, n + word)))),
				vsvg('g', { class: 'legend' }, 'key'));
		const v1 = draw(['a', 'b', 'c'], false, '1', 'first ');
		const svg = mount(box, v1, null);
		const rows = svg.querySelector('.rows');
		const legend = svg.querySelector('.legend');
		const [a, b, c] = [...rows.children];
		// What the page changes on its own between two drawings.
		a.firstChild.classList.add('current');
		a.firstChild.setAttribute('tabindex', '0');
		a.setAttribute('visibility', 'hidden');
		svg.setAttribute('class', 'lit');
		const v2 = draw(['c', 'a', 'd'], true, '2', 'second ');
		const again = mount(box, v2, v1);
		const after = [...rows.children];
		after[1].dispatchEvent(new MouseEvent('click'));
		const built = vsvg('g', {}, vsvg('g', { role: 'radio' }), vsvg('g', { role: 'radio', 'aria-disabled': 'true' }),
			vsvg('text', { class: 'answer x' }, vsvg('tspan', {}, 'one'), vsvg('g', {}, vsvg('tspan', {}, 'deep'))));
		const out = {
			same: again === svg && svg.querySelector('.rows') === rows && svg.querySelector('.legend') === legend,
			order: after.map((e) => e.dataset.k + ':' + e.textContent).join(' '),
			kept: [after[0] === c, after[1] === a, after[2] !== b].join(' '),
			b: b.isConnected,
			mask: svg.firstElementChild.getAttribute('class'),
			live: [a.firstChild.getAttribute('class'), a.firstChild.getAttribute('tabindex'), a.getAttribute('visibility'), svg.getAttribute('class')].join(' '),
			calls: calls.join(','),
			radios: built.querySelectorAll('[role=radio]:not([aria-disabled])').length,
			spans: built.querySelector('text.answer').querySelectorAll(':scope > tspan').length + ' of ' + built.querySelectorAll('tspan').length,
			text: built.textContent,
		};
		box.remove();
		return out;
	})`)
	assert.Equal(t, true, got["same"], "the root and its layers are kept")
	assert.Equal(t, "c:c2 a:a2 d:d2", got["order"], "the rows as drawn")
	assert.Equal(t, "true true true", got["kept"], "c and a moved and kept, d new")
	assert.Equal(t, false, got["b"], "b, no longer drawn, is gone")
	assert.Equal(t, "mask", got["mask"], "the new layer is put before the rows, which keep their element")
	assert.Equal(t, "mark -1  ", got["live"], "the page's own class, tab stop and visibility are undone, a class the drawing never had too")
	assert.Equal(t, "second a", got["calls"], "a kept element calls the new drawing's listener")
	assert.Equal(t, 1.0, got["radios"])
	assert.Equal(t, "1 of 2", got["spans"], ":scope > finds children only")
	assert.Equal(t, "onedeep", got["text"])
}

// TestRaceViewDrawnOverItselfIsDrawnAfresh holds the bench's race view,
// drawn over its last drawing at every step (vdom.js mount writes only
// what changed), to the same view drawn afresh from the same model and
// options: lesson 7's twelve lanes stepped to the end, with the step
// shown moved to an earlier mark on the way, and lesson 4 with a row's
// mark chosen. A change that the mount missed (an attribute left from
// the step before, a mark in the wrong order) is a difference here.
func TestRaceViewDrawnOverItselfIsDrawnAfresh(t *testing.T) {
	t.Parallel()
	ts := playground(t, playgroundDir(t))
	ctx := tab(t)
	const sameJS = `import('/race.js').then(({ drawRace }) => {
		const svg = document.querySelector('#race svg.race');
		const s = svg.__race;
		const box = document.createElement('div');
		document.body.append(box);
		drawRace(box, s.model, s.opts);
		// Attributes in a fixed order (a kept element gains its new ones
		// last), the ids' numbers left out.
		const canon = (n) =>
			n.nodeType === 3
				? n.data
				: '<' + n.tagName + [...n.getAttributeNames()].sort().map((k) => ' ' + k + '="' + n.getAttribute(k) + '"').join('') + '>' +
				  [...n.childNodes].map(canon).join('') + '</' + n.tagName + '>';
		const norm = (h) => h.replace(/race-(now|knock|head-[a-z]+)-\d+/g, 'race-$1-N');
		const a = norm(canon(svg));
		const b = norm(canon(box.firstElementChild));
		box.remove();
		if (a === b) return '';
		let i = 0;
		while (i < a.length && a[i] === b[i]) i++;
		return 'mounted: …' + a.slice(Math.max(0, i - 160), i + 160) + '…\nafresh:  …' + b.slice(Math.max(0, i - 160), i + 160) + '…';
	})`
	for _, lesson := range []string{"07-full-day", "04-in-progress"} {
		openLesson(t, ctx, ts.URL, lesson)
		steps := 0
		for attr(t, ctx, "#step-count", "data-done") != "true" && steps < 80 {
			eval[map[string]float64](t, ctx, clickStepJS)
			steps++
			require.Empty(t, eval[string](t, ctx, sameJS), "%s after step %d", lesson, steps)
			if steps == 5 {
				// The step shown moves to the first mark drawn, then the
				// next step moves it back to the step that ran.
				eval[bool](t, ctx, `(() => { document.querySelector('#race .mark[role=button]').dispatchEvent(new MouseEvent('click', {bubbles: true})); return true; })()`)
				require.Empty(t, eval[string](t, ctx, sameJS), "%s with its first mark chosen", lesson)
			}
		}
		require.Greater(t, steps, 5, "%s ran to its end", lesson)
	}
}
