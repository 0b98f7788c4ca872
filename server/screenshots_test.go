package server_test

// TestScreenshots writes the pictures that a person compares when the
// player's or the classroom's look changes: each view reached as a user
// reaches it, on a laptop, a projector and a phone, in English and, for the
// lesson benches, in Korean. It waits on the data attributes the pages set
// for their tests (interactive, step, done, duplicates), not on their
// layout, so that the same test shoots a redrawn UI.

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"idemlab/internal/stores"
	"idemlab/server"
)

// screen is a window the pictures are taken in.
type screen struct {
	w, h  int64
	phone bool // emulated as a phone: mobile viewport, touch
}

var (
	laptop    = screen{w: 1440, h: 900}
	projector = screen{w: 1920, h: 1080}
	phone     = screen{w: 390, h: 844, phone: true}
)

func (s screen) String() string { return fmt.Sprintf("%dx%d", s.w, s.h) }

// emulate sizes the tab as the screen, at one device pixel per CSS pixel so
// that a picture's size is the size in its name.
func (s screen) emulate() chromedp.Action[chromedp.Void] {
	if s.phone {
		return chromedp.EmulateViewport(s.w, s.h, chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	return chromedp.EmulateViewport(s.w, s.h)
}

// screenTab opens a fresh tab sized as the screen before anything loads in
// it, so that the page lays itself out for that screen from the start.
func screenTab(t *testing.T, s screen) context.Context {
	t.Helper()
	ctx := tab(t)
	run(t, ctx, s.emulate())
	return ctx
}

// schemeTab is screenTab on a machine that prefers the colour scheme
// scheme ("light", "dark"; "" leaves Chromium's own), set before anything
// loads: the player picks its theme from it when it starts. No theme is
// stored in the origin of a test's server, whose port is its own.
func schemeTab(t *testing.T, s screen, scheme string) context.Context {
	t.Helper()
	ctx := screenTab(t, s)
	if scheme != "" {
		run(t, ctx, preferScheme(scheme))
	}
	return ctx
}

// bigPNG is the size above which a screenshot is compressed again: Chromium
// writes its PNGs fast, not small.
const bigPNG = 256 << 10

func TestScreenshots(t *testing.T) {
	if *screenshots == "" {
		t.Skip("pass -screenshots DIR to write screenshots of the player and the classroom")
	}
	dir := *screenshots
	require.NoError(t, os.MkdirAll(dir, 0o755))
	if out, err := exec.Command("fc-list", ":lang=ko").Output(); err == nil && len(bytes.TrimSpace(out)) == 0 {
		t.Log("no Hangul font: the Korean pictures will show boxes (apt-get install fonts-nanum)")
	}

	banks, err := stores.OpenBanks("", server.Config{})
	require.NoError(t, err)
	s, err := server.New(banks, stores.Options(server.Options{WebDir: playgroundDir(t), InstructorToken: browserToken}))
	require.NoError(t, err)
	ts := httptest.NewServer(s)
	t.Cleanup(func() {
		s.Close() // closes the websockets first, so the test server has nothing to wait for
		ts.Close()
		server.CloseBanks(banks)
	})

	benches := []struct {
		lang    string // "" for English
		screens []screen
	}{
		{"", []screen{laptop, projector, phone}},
		{"ko", []screen{laptop, phone}},
	}
	for _, b := range benches {
		for _, scr := range b.screens {
			name := scr.String()
			if b.lang != "" {
				name += "-" + b.lang
			}
			t.Run("bench-"+name, func(t *testing.T) {
				shootBenches(t, ts.URL, dir, scr, b.lang, "")
			})
		}
	}
	for _, lang := range []string{"", "ko"} {
		for _, scr := range []screen{laptop, projector, phone} {
			t.Run("lesson8-"+scr.String()+"-"+lang, func(t *testing.T) {
				shootTwoServers(t, ts.URL, dir, scr, lang)
			})
		}
		for _, scr := range []screen{laptop, phone} {
			t.Run("daystop-"+scr.String()+"-"+lang, func(t *testing.T) {
				shootDayStopped(t, ts.URL, dir, scr, lang)
			})
		}
	}
	for _, scr := range []screen{laptop, projector, phone} {
		t.Run("storm-"+scr.String(), func(t *testing.T) {
			shootStorm(t, ts.URL, dir, scr, scr == projector, "")
		})
	}
	// The dark theme, as on a machine set to it: the benches after a run on a
	// laptop and a phone, and a storm on the projector (the classroom's pages
	// have one theme: the picture shows the setting leaves them as they are).
	for _, scr := range []screen{laptop, phone} {
		t.Run("dark-bench-"+scr.String(), func(t *testing.T) {
			shootBenches(t, ts.URL, dir, scr, "", "dark")
		})
	}
	t.Run("dark-storm-"+projector.String(), func(t *testing.T) {
		shootStorm(t, ts.URL, dir, projector, true, "dark")
	})
	for _, lang := range []string{"", "ko"} {
		t.Run("class-"+lang, func(t *testing.T) {
			shootClass(t, ts.URL, dir, lang)
		})
	}
	// The lab page ("Your endpoint") as a student first opens it.
	for _, lang := range []string{"", "ko"} {
		for _, scheme := range []string{"light", "dark"} {
			for _, scr := range []screen{laptop, projector, phone} {
				t.Run("lab-"+scr.String()+"-"+lang+"-"+scheme, func(t *testing.T) {
					shootLab(t, ts.URL, dir, scr, lang, scheme)
				})
			}
		}
	}
	// The player's and the projector's working pictures, each in a folder
	// of its own beside the set above.
	t.Run("player", func(t *testing.T) { shootPlayer(t, filepath.Join(dir, "player")) })
	t.Run("projector", func(t *testing.T) { shootProjector(t, filepath.Join(dir, "projector")) })
}

// shootClass runs a lesson as an instructor does with eight phones: the
// room's screen on the projector shows the join screen while they join;
// the presenter asks the class, fires a storm at naive, then at scoped;
// one phone loses an answer at naive and retries (charged twice).
func shootClass(t *testing.T, base, dir, lang string) {
	suffix, q := "", ""
	names := []string{"ana", "bo", "chen", "dara", "eli", "femi", "gus", "hana"}
	if lang != "" {
		suffix, q = "-"+lang, "&lang="+lang
		names = []string{"민지", "서준", "하은", "도윤", "지아", "시우", "유나", "준호"}
	}
	presenter := screenTab(t, laptop)
	signedIn(t, presenter, base)
	run(t, presenter, click("#create"),
		waitJS(`document.getElementById('conn').dataset.status === 'online' && document.getElementById('code').textContent.length === 6`))
	code := text(t, presenter, "#code")
	run(t, presenter, chromedp.Navigate(base+"/classroom/teach?room="+code+q),
		waitJS(`document.getElementById('conn').dataset.status === 'online' && !document.getElementById('fire').disabled`))
	scr := screenTab(t, projector)
	run(t, scr, chromedp.Navigate(base+"/classroom/teach?view=screen&room="+code+q),
		waitJS(`document.getElementById('conn').dataset.status === 'online' && document.getElementById('qr').complete`))
	var phones []context.Context
	for _, n := range names {
		// The tabs share one browser's storage, where a phone keeps its
		// identity: each phone starts without one, so each is a student.
		p := screenTab(t, phone)
		run(t, p, chromedp.Navigate(base+"/healthz"),
			chromedp.Evaluate[chromedp.Void](`localStorage.removeItem('idemlab.classroom.student')`),
			chromedp.Navigate(base+"/classroom/?room="+code+q),
			waitJS(`document.getElementById('room-code').value === `+quoteJS(code)),
			chromedp.SendKeys(chromedp.CSS(`#nickname`), n),
			click(`#join-form button[type=submit]`), waitJS(`!document.getElementById('client').hidden`))
		phones = append(phones, p)
	}
	run(t, scr, waitJS(`document.getElementById('online').dataset.online === '8'`))
	shoot(t, scr, dir, "class-join-screen-"+projector.String()+suffix, projector, "")

	// The class size is 8: a ninth phone is told the room is full and
	// when it asks again; the presenter sees it waiting.
	run(t, presenter, chromedp.Evaluate[chromedp.Void](`document.getElementById('class-size').value = '8'`), click("#set-size"),
		waitJS(`document.getElementById('class-size').dataset.size === '8'`))
	late := screenTab(t, phone)
	run(t, late, chromedp.Navigate(base+"/healthz"),
		chromedp.Evaluate[chromedp.Void](`localStorage.removeItem('idemlab.classroom.student')`),
		chromedp.Navigate(base+"/classroom/?room="+code+q),
		waitJS(`document.getElementById('room-code').value === `+quoteJS(code)),
		chromedp.SendKeys(chromedp.CSS(`#nickname`), map[string]string{"": "ivy", "ko": "서연"}[lang]),
		click(`#join-form button[type=submit]`), waitJS(`!document.getElementById('refused').hidden`))
	shoot(t, late, dir, "class-phone-refused-full-"+phone.String()+suffix, phone, "")
	run(t, presenter, waitJS(`!document.getElementById('refused-note').hidden`))
	shoot(t, presenter, dir, "class-presenter-refused-"+laptop.String()+suffix, laptop, "")
	run(t, late, chromedp.Navigate("about:blank"))
	run(t, presenter, chromedp.Evaluate[chromedp.Void](`document.getElementById('class-size').value = '60'`), click("#set-size"),
		waitJS(`document.getElementById('class-size').dataset.size === '60'`), scrollToTop())

	run(t, presenter, click("#ask"))
	for i, p := range phones {
		choice := []string{"double", "201", "none"}[i%3]
		run(t, p, waitJS(`document.querySelector('#choices button[data-choice="`+choice+`"]') !== null`),
			click(`#choices button[data-choice="`+choice+`"]`), waitJS(`document.getElementById('voted').textContent !== ''`))
	}
	fire := func(level string) {
		for _, f := range []struct{ sel, value string }{
			{"#level", level}, {"#clients", "20"}, {"#keys", "1"}, {"#attempts", "2"}, {"#fault", "none"}, {"#latency", "200"}, {"#slow", "0"},
		} {
			run(t, presenter, chromedp.Evaluate[chromedp.Void](`document.getElementById('storm-panel').open = true`), choose(f.sel, f.value))
		}
		run(t, presenter, click("#fire"), waitJS(`document.getElementById('run-label').textContent.includes('`+level+`') && !document.getElementById('fire').disabled && document.querySelector('#race svg.race') !== null`))
		run(t, scr, waitJS(`document.querySelector('#race svg.race') !== null && document.querySelector('#rules li:not(.running)') !== null`))
	}
	fire("naive")
	shoot(t, scr, dir, "class-screen-storm-naive-"+projector.String()+suffix, projector, "")
	shoot(t, presenter, dir, "class-presenter-storm-naive-"+laptop.String()+suffix, laptop, "")
	run(t, phones[1], waitJS(`document.getElementById('voted').classList.contains('wrong') || document.getElementById('voted').classList.contains('right')`))
	shoot(t, phones[1], dir, "class-phone-vote-"+phone.String()+suffix, phone, "")

	// One phone in the basement at naive: no answer, a retry, charged twice.
	p := phones[0]
	run(t, p, click("#basement"), click("#send"), waitJS(`document.getElementById('result').textContent !== '' && !document.getElementById('send').disabled`),
		chromedp.Sleep(1100*time.Millisecond), click("#basement"), click("#send"),
		waitJS(`document.getElementById('result').dataset.outcome === 'paid-twice'`))
	shoot(t, p, dir, "class-phone-paid-twice-"+phone.String()+suffix, phone, "")

	fire("scoped")
	shoot(t, scr, dir, "class-screen-storm-scoped-"+projector.String()+suffix, projector, "")
}

// shootBenches plays lesson 1's first scenario to its end, then steps
// lesson 4's first scenario into its race and plays it to its end, and
// shoots each. With a scheme ("dark") the machine prefers that theme and
// the pictures' names start with it.
func shootBenches(t *testing.T, base, dir string, scr screen, lang, scheme string) {
	ctx := schemeTab(t, scr, scheme)
	query, prefix := "", ""
	if lang != "" {
		query = "?lang=" + lang
	}
	if scheme != "" {
		prefix = scheme + "-"
	}
	shots := func(view string) {
		name := prefix + view + "-" + scr.String()
		if lang != "" {
			name += "-" + lang
		}
		shoot(t, ctx, dir, name, scr, "")
		if scr.phone || benchBelowTheFold(t, ctx) {
			shoot(t, ctx, dir, name+"-bench", scr, "#bench")
		}
	}

	openLessonIn(t, ctx, base+"/"+query, "01-naive")
	runToEnd(t, ctx)
	shots("lesson1-bench")

	openLessonIn(t, ctx, base+"/"+query, "04-in-progress")
	for i := 1; i <= 8 && attr(t, ctx, "#step-count", "data-done") != "true"; i++ {
		run(t, ctx, click(`#btn-step`),
			waitJS(`document.querySelector('#step-count').dataset.step === '`+strconv.Itoa(i)+`'`))
	}
	shots("lesson4-bench")
	runToEnd(t, ctx)
	shots("lesson4-bench-done")

	// A day of retries at naive, as a picture; its first moment with a
	// second payment opened in the race view.
	run(t, ctx, chromedp.Navigate(base+"/"+query+"#lesson=01-naive&s=s2"),
		waitJS(`document.body.dataset.lesson === '01-naive' && !document.querySelector('#day-body').hidden`),
		click(`#btn-day`),
		waitJS(`document.querySelector('#day-picture svg g[data-bucket]') !== null`))
	eval[bool](t, ctx, `(() => { const r = document.querySelector('#day-picture rect[data-outcome="paid-again"]'); if (r) r.closest('g[data-bucket]').dispatchEvent(new MouseEvent('click', { bubbles: true })); return true; })()`)
	run(t, ctx, waitJS(`!document.querySelector('#day-moment').hidden`))
	name := prefix + "lesson1-day-" + scr.String()
	if lang != "" {
		name += "-" + lang
	}
	shoot(t, ctx, dir, name, scr, "#day-picture-panel")
}

// shootTwoServers shoots lesson 8's two-server bench run to its end: each
// attempt's row labelled with its server, the second payment and the
// rule check that says why.
func shootTwoServers(t *testing.T, base, dir string, scr screen, lang string) {
	ctx := screenTab(t, scr)
	query, name := "", "lesson8-two-servers-"+scr.String()
	if lang != "" {
		query, name = "?lang="+lang, name+"-"+lang
	}
	run(t, ctx, chromedp.Navigate(base+"/"+query+"#lesson=08-two-servers&s=s2"),
		waitJS(`document.body.dataset.engine === 'ready' && document.body.dataset.interactive === 'true'`),
		waitJS(`document.body.dataset.lesson === '08-two-servers' && location.hash.includes('s=s2')`),
		waitJS(`document.querySelector('#step-count')?.dataset.step === '0'`))
	runToEnd(t, ctx)
	shoot(t, ctx, dir, name+"-bench", scr, "#bench")
}

// shootDayStopped runs lesson 7's day at its biggest size and stops it:
// the size menu, the Stop button gone again and the sentence saying how
// far the day got.
func shootDayStopped(t *testing.T, base, dir string, scr screen, lang string) {
	ctx := screenTab(t, scr)
	query, name := "", "day-stopped-"+scr.String()
	if lang != "" {
		query, name = "?lang="+lang, name+"-"+lang
	}
	run(t, ctx, chromedp.Navigate(base+"/"+query+"#lesson=07-full-day&s=s2"),
		waitJS(`document.body.dataset.engine === 'ready' && document.body.dataset.interactive === 'true'`),
		waitJS(`document.body.dataset.lesson === '07-full-day' && !document.querySelector('#day-body').hidden`))
	require.True(t, eval[bool](t, ctx, `(document.querySelector('#day-size').value = '20000') === '20000'`))
	run(t, ctx, click(`#btn-day`),
		waitJS(`!document.querySelector('#btn-day-stop').hidden && document.querySelector('#day-progress').value > 0`),
		click(`#btn-day-stop`),
		waitJS(`document.querySelector('#btn-day-stop').hidden && !document.querySelector('#btn-day').disabled`))
	shoot(t, ctx, dir, name, scr, "#day-body")
}

// openLessonIn is openLesson at an address with a query (?lang=ko): the
// player loads there and shows the lesson's first scenario on the bench.
func openLessonIn(t *testing.T, ctx context.Context, page, id string) {
	t.Helper()
	run(t, ctx,
		chromedp.Navigate(page+"#lesson="+id),
		waitJS(`document.body.dataset.engine === 'ready' && document.body.dataset.interactive === 'true'`),
		waitJS(`location.hash.includes('lesson=`+id+`') && document.body.dataset.lesson === '`+id+`'`),
		waitJS(`document.querySelector('#step-count')?.dataset.step === '0'`),
	)
}

// benchBelowTheFold reports whether, at the top of the page, the bench
// starts in the bottom half of the window or below it.
func benchBelowTheFold(t *testing.T, ctx context.Context) bool {
	t.Helper()
	run(t, ctx, scrollToTop())
	return eval[bool](t, ctx, `document.querySelector('#bench').getBoundingClientRect().top > innerHeight / 2`)
}

// shootStorm opens a room on the projector, fires a naive storm from the
// projector's form and shoots the report; on the projector a phone joins
// the room first and is shot after the storm too. With a scheme ("dark")
// the machine prefers that theme and the pictures' names start with it.
func shootStorm(t *testing.T, base, dir string, scr screen, withPhone bool, scheme string) {
	proj := schemeTab(t, scr, scheme)
	prefix := ""
	if scheme != "" {
		prefix = scheme + "-"
	}
	// The start-up link signs the instructor in; the lobby opens a room.
	signedIn(t, proj, base)
	run(t, proj,
		click("#create"),
		waitJS(`document.getElementById('conn').textContent === 'online'`),
		waitJS(`document.getElementById('code').textContent.trim().length > 0`),
		waitJS(`document.querySelector('#level option[value="naive"]') !== null && !document.getElementById('fire').disabled`),
		waitJS(`document.getElementById('qr')?.complete !== false`), // the QR code is drawn
	)
	code := text(t, proj, "#code")

	var phoneTab context.Context
	if withPhone {
		phoneTab = schemeTab(t, phone, scheme)
		run(t, phoneTab,
			chromedp.Navigate(base+"/classroom/?room="+code),
			waitJS(`document.getElementById('room-code').value === `+quoteJS(code)),
			chromedp.SendKeys(chromedp.CSS(`#nickname`), "ana"),
			click(`#join-form button[type=submit]`),
			waitJS(`!document.getElementById('client').hidden`))
		run(t, proj, waitJS(`document.querySelectorAll('#roster li').length === 1`))
	}

	// The storm: 20 clients, 2 attempts each, one key, no fault, a 200 ms
	// payment call, at naive. The form's defaults may
	// change; each field is set only where it differs, as a person would.
	for _, f := range []struct{ sel, value string }{
		{"#level", "naive"}, {"#clients", "20"}, {"#keys", "1"}, {"#attempts", "2"},
		{"#fault", "none"}, {"#latency", "200"}, {"#slow", "0"},
	} {
		if eval[bool](t, proj, `(document.querySelector(`+quoteJS(f.sel)+`)?.value ?? `+quoteJS(f.value)+`) !== `+quoteJS(f.value)) {
			run(t, proj, choose(f.sel, f.value))
		}
	}
	// The report sets the tally's data-duplicates; an observer set up
	// before the click tells this storm's report from anything shown before.
	run(t, proj,
		chromedp.Evaluate[chromedp.Void](`(() => {
			window.idemlabShotReport = false;
			new MutationObserver((_, o) => { window.idemlabShotReport = true; o.disconnect(); })
				.observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-duplicates'] });
		})()`),
		click("#fire"),
		waitJS(`window.idemlabShotReport === true && document.getElementById('tally').dataset.duplicates !== undefined && !document.getElementById('fire').disabled`),
	)
	dup := attr(t, proj, "[data-duplicates]", "data-duplicates")
	require.NotEqual(t, "0", dup, "a naive storm of 40 requests for one wish pays more than once")
	shoot(t, proj, dir, prefix+"storm-naive-"+scr.String(), scr, "")
	// The requests of the storm, drawn, are what the projector is for; on
	// arrival they are below the report.
	// Under the race, the storm as a picture.
	run(t, proj, waitJS(`!document.getElementById('picture-box').hidden`))
	shoot(t, proj, dir, prefix+"storm-naive-"+scr.String()+"-picture", scr, "#picture-box")

	if withPhone {
		// The phone has had the storm's last messages by the time the
		// projector has the report; a moment lets it draw them.
		run(t, phoneTab, chromedp.Sleep(500*time.Millisecond))
		shoot(t, phoneTab, dir, prefix+"phone-"+phone.String(), phone, "")
	}
}

// shoot writes what a person sees in the window once the page has settled:
// the top of the page, as on arrival, or with sel scrolled to the top. On
// the projector it also writes the picture at half its size, as the back
// of the room sees it.
func shoot(t *testing.T, ctx context.Context, dir, name string, scr screen, sel string) {
	t.Helper()
	if sel == "" {
		run(t, ctx, scrollToTop())
	} else {
		run(t, ctx, scrollTo(sel))
	}
	img := capture(t, ctx)
	writeShot(t, dir, name, img)
	if scr == projector {
		writeShot(t, dir, name+"-50pct", halve(t, img))
	}
}

// capture takes the window as it is, after the page has drawn its last
// change and the pointer has left whatever it last clicked.
func capture(t *testing.T, ctx context.Context) []byte {
	t.Helper()
	run(t, ctx,
		chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
			_, err := cdp.Call(ctx, tgt, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: 0, Y: 0})
			return err
		}),
		chromedp.Evaluate[chromedp.Void](`document.fonts.ready.then(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))))`, chromedp.EvalAwaitPromise),
	)
	img, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	return img
}

func scrollToTop() chromedp.Action[chromedp.Void] { return scrollTo("html") }

// scrollTo scrolls until the element sel starts at the top of what a person
// sees, below the page's header if it stays on the screen. scrollIntoView
// moves what a person sees, the visual viewport: on a phone whose page is
// wider than the screen, the window's own scroll (scrollTo) leaves the
// screen part way down the layout viewport, the top of the page unseen.
func scrollTo(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`(() => {
		const target = document.querySelector(` + quoteJS(sel) + `);
		target.scrollIntoView({ block: 'start', inline: 'start', behavior: 'instant' });
		if (target === document.documentElement) return;
		const header = [...document.querySelectorAll('body > header')]
			.find((h) => ['sticky', 'fixed'].includes(getComputedStyle(h).position));
		window.scrollBy({ top: -(header ? header.getBoundingClientRect().bottom : 0) - 8, left: 0, behavior: 'instant' });
	})()`)
}

// writeShot writes a PNG into dir, compressed again when it is big.
func writeShot(t *testing.T, dir, name string, img []byte) {
	t.Helper()
	if len(img) > bigPNG {
		decoded, err := png.Decode(bytes.NewReader(img))
		require.NoError(t, err, name)
		if smaller := encodePNG(t, decoded); len(smaller) < len(img) {
			img = smaller
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".png"), img, 0o644))
}

func encodePNG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	require.NoError(t, enc.Encode(&buf, img))
	return buf.Bytes()
}

// halve scales a PNG to half its width and height, each pixel the mean of
// the 2×2 block it replaces: what a projected page looks like from the back
// of the room, where a screen pixel covers four.
func halve(t *testing.T, img []byte) []byte {
	t.Helper()
	decoded, err := png.Decode(bytes.NewReader(img))
	require.NoError(t, err)
	b := decoded.Bounds()
	src := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(src, src.Bounds(), decoded, b.Min, draw.Src)
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx()/2, b.Dy()/2))
	for y := 0; y < dst.Rect.Dy(); y++ {
		for x := 0; x < dst.Rect.Dx(); x++ {
			o := dst.PixOffset(x, y)
			for c := 0; c < 4; c++ {
				sum := int(src.Pix[src.PixOffset(2*x, 2*y)+c]) + int(src.Pix[src.PixOffset(2*x+1, 2*y)+c]) +
					int(src.Pix[src.PixOffset(2*x, 2*y+1)+c]) + int(src.Pix[src.PixOffset(2*x+1, 2*y+1)+c])
				dst.Pix[o+c] = uint8((sum + 2) / 4)
			}
		}
	}
	return encodePNG(t, dst)
}

// signedIn opens the instructor's page signed in: the tabs share one
// browser, which is signed in after the first picture that needed it.
func signedIn(t *testing.T, ctx context.Context, base string) {
	t.Helper()
	run(t, ctx, chromedp.Navigate(base+"/classroom/teach"),
		waitJS(`!document.getElementById('signin').hidden || !document.getElementById('lobby').hidden`))
	if eval[bool](t, ctx, `!document.getElementById('signin').hidden`) {
		run(t, ctx, signInSteps(base))
	}
}

// shootPlayer writes the player's working pictures into dir: lesson 2's
// race from start to end, its key table and sandbox, the dark theme,
// lesson 1's day, a phone and the Korean page (TestScreenshots/player).
func shootPlayer(t *testing.T, dir string) {
	require.NoError(t, os.MkdirAll(dir, 0o755))
	ts := playground(t, playgroundDir(t))
	ctx := tab(t)
	shot := func(name string) {
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
	}
	openLesson(t, ctx, ts.URL, "02-unique")
	shot("01-lesson2-start")
	openScenario(t, ctx, "s1", false)
	for i := 1; i <= 6; i++ {
		run(t, ctx, click(`#btn-step`),
			waitJS(`document.querySelector('#step-count').dataset.step === '`+fmt.Sprint(i)+`'`))
	}
	shot("02-lesson2-mid-race")
	runToEnd(t, ctx)
	shot("03-lesson2-race-done")
	run(t, ctx, chromedp.EmulateViewport(1600, 2600))
	shot("03b-lesson2-race-done-tall")
	run(t, ctx, chromedp.EmulateViewport(1600, 1000), focus(`#bench`), chromedp.KeyEvent("?"))
	shot("03c-keys")
	run(t, ctx, chromedp.KeyEvent("?"))
	openScenario(t, ctx, "s4", false)
	run(t, ctx, click(`#goals li[data-goal="g5"] button.goal-policy`),
		waitJS(`!!document.querySelector('#bench-meta .sandboxed')`),
		chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](`document.querySelector('#sandbox').open = true`)(ctx, tgt)
			return err
		}))
	runToEnd(t, ctx)
	run(t, ctx, chromedp.EmulateViewport(1600, 2600))
	shot("03d-lesson2-sandbox-tall")
	run(t, ctx, chromedp.EmulateViewport(1600, 1000))
	run(t, ctx, click(`#theme-toggle`))
	shot("04-lesson2-dark")
	openLesson(t, ctx, ts.URL, "07-full-day")
	runToEnd(t, ctx)
	shot("05-lesson7-dark")
	run(t, ctx, click(`#theme-toggle`), chromedp.EmulateViewport(1024, 768))
	openLesson(t, ctx, ts.URL, "01-naive")
	openScenario(t, ctx, "s2", true)
	run(t, ctx, click(`#btn-day`),
		waitJS(`document.querySelector('#day-status').textContent.startsWith('The day is over')`))
	shot("06-lesson1-day-1024")
	run(t, ctx, chromedp.EmulateViewport(420, 900))
	openScenario(t, ctx, "s1", false)
	runToEnd(t, ctx)
	shot("07-lesson1-phone")
	run(t, ctx, chromedp.EmulateViewport(1600, 1000),
		chromedp.Navigate(ts.URL+"/?lang=ko#lesson=02-unique"),
		waitJS(`document.body.dataset.lesson === '02-unique'`))
	runToEnd(t, ctx)
	shot("08-lesson2-korean")
}

// shootLab opens the lab page at its first rung, as a student first sees
// it: the rung's words beside the naive handler in the editor.
func shootLab(t *testing.T, base, dir string, scr screen, lang, scheme string) {
	// In a browser context of its own: the handler files put in the editor
	// below are kept in the page's storage, where the next picture's tab
	// would open them instead of the first rung's.
	ctx, done := ownTab(t, chromedp.WithNewBrowserContext())
	t.Cleanup(done)
	run(t, ctx, scr.emulate())
	if scheme != "" {
		run(t, ctx, preferScheme(scheme))
	}
	q := ""
	if lang != "" {
		q = "?lang=" + lang
	}
	run(t, ctx, chromedp.Navigate(base+"/lab.html"+q), waitJS(`document.body.dataset.ready === 'true'`))
	name := "lab-" + scr.String()
	if lang != "" {
		name += "-" + lang
	}
	if scheme == "dark" {
		name = "dark-" + name
	}
	// As a student first sees it once the page has settled: the runner has
	// loaded the code (an error mark made while it loaded is gone) and the
	// editor has coloured it.
	labRunnerReady(t, ctx)
	run(t, ctx, waitJS(`!document.querySelector('#handler-box .cm-lint-marker-error') && !!document.querySelector('#handler-box .cm-content span[class]')`))
	shoot(t, ctx, dir, name, scr, "")
	if scr.phone {
		// On a laptop the code is in the first picture already.
		shoot(t, ctx, dir, name+"-code", scr, "#handler-box")
	}
	// The naive handler raced: two simultaneous retries stepped to their
	// end, then every scenario checked.
	act(t, ctx, `#btn-lab-start`)
	stepAll(t, ctx)
	shoot(t, ctx, dir, name+"-race", scr, "#lab-race-view")
	act(t, ctx, `#btn-lab-grade`)
	shoot(t, ctx, dir, name+"-grade", scr, "#lab-grade")
	// The contract's key stories and the day, at the end of the grade.
	shoot(t, ctx, dir, name+"-grade-keys", scr, `#lab-grade tr[data-scenario=malformed-keys]`)
	// The top rung's handler after a crash: a1 claims and is charged, then
	// crashes; a2, ten minutes later, takes the claim over and completes.
	// The key row shows what the key table holds at each step.
	setLabFile(t, ctx, scopedHandler(t))
	onBench(t, ctx, "crash-then-late-retry")
	stepUntilNext(t, ctx, "a1", "db.begin")
	act(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] button[data-focus="a1:crash"]`)
	stepAll(t, ctx)
	shoot(t, ctx, dir, name+"-takeover", scr, "#lab-race-view")
}
