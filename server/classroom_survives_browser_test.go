package server_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/classroom/roomdb"
	"idemlab/internal/freeport"
)

// A classroom has to survive a real class: Wi-Fi that drops for a few
// seconds, a laptop whose server is killed and started again. These tests
// put a projector and a phone in real Chromium tabs in front of a real
// server, cut the network or kill the server, and check that every page
// says it is reconnecting and then comes back to the same room with
// nothing lost.

// cutProxy forwards TCP connections to a target. cut closes every
// connection it carries and refuses new ones for a while: the network, as
// the pages see it, is gone.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	down   bool
}

func newCutProxy(t testing.TB, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() { ln.Close(); p.closeAll() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *cutProxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *cutProxy) serve(c net.Conn) {
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		c.Close()
		return
	}
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		p.mu.Unlock()
		c.Close()
		return
	}
	p.conns[c], p.conns[up] = struct{}{}, struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, c); done <- struct{}{} }()
	go func() { io.Copy(c, up); done <- struct{}{} }()
	<-done
	c.Close()
	up.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

func (p *cutProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

// cut takes the network down for d, then brings it back.
func (p *cutProxy) cut(d time.Duration) {
	p.mu.Lock()
	p.down = true
	p.mu.Unlock()
	p.closeAll()
	time.AfterFunc(d, func() {
		p.mu.Lock()
		p.down = false
		p.mu.Unlock()
	})
}

// joinPhone opens a phone (390×844) on base and joins room code as nick.
func joinPhone(t *testing.T, base, code, nick string) context.Context {
	t.Helper()
	phone := tab(t)
	run(t, phone, chromedp.EmulateViewport(390, 844, chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch),
		chromedp.Navigate(base+"/classroom/?room="+code),
		waitJS(`document.getElementById('room-code').value === `+quoteJS(code)),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('nickname').value = `+quoteJS(nick)),
		click(`#join-form button[type=submit]`),
		waitJS(`!document.getElementById('client').hidden`))
	return phone
}

// roomPicture is what a projector shows of the room, to compare before
// and after.
func roomPicture(t *testing.T, proj context.Context) string {
	t.Helper()
	return eval[string](t, proj, `JSON.stringify({
		code: document.getElementById('code').textContent,
		attempts: document.querySelector('#race svg.race')?.dataset.attempts,
		paidAgain: document.querySelectorAll('#race [data-mark="paid-again"]').length,
		duplicates: document.getElementById('tally').dataset.duplicates,
		rules: document.getElementById('rules').textContent,
		roster: document.getElementById('roster').textContent.replace(/ \(away\)/g, ''),
		histogram: document.getElementById('histogram').textContent,
	})`)
}

func TestClassroomSurvivesANetworkCut(t *testing.T) {
	ts := classroomServer(t)
	proxy := newCutProxy(t, strings.TrimPrefix(ts.URL, "http://"))
	proj, code := projectorTab(t, proxy.URL())
	phone := joinPhone(t, proxy.URL(), code, "ana")
	run(t, proj, waitJS(`document.querySelectorAll('#roster li').length === 1`))
	projectorStorm(t, proj, "naive", 6, 2, 2, 20)
	before := roomPicture(t, proj)
	require.Contains(t, before, `"duplicates":"10"`)
	joins := eval[string](t, phone, `document.getElementById('client').dataset.joins`)

	// Each page counts the drops of its connection: the cut lasts 3 s, and
	// a page can be back online before the test looks at it.
	drops := map[context.Context]string{}
	for _, page := range []context.Context{proj, phone} {
		drops[page] = eval[string](t, page, `document.getElementById('conn').dataset.drops || '0'`)
	}
	proxy.cut(3 * time.Second)
	for _, page := range []context.Context{proj, phone} {
		run(t, page, waitJS(`document.getElementById('conn').dataset.drops === '`+fmt.Sprint(atoi(t, drops[page])+1)+`'`))
	}
	for _, page := range []context.Context{proj, phone} {
		run(t, page, waitJS(`document.getElementById('conn').dataset.status === 'online' && document.getElementById('reconnecting').hidden`))
	}
	// The projector forgot its verdict's count when the network went, so
	// '10' is the verdict the room sent again; the phone counts its joins.
	run(t, proj, waitJS(`document.getElementById('tally').dataset.duplicates === '10'`))
	run(t, phone, waitJS(`document.getElementById('client').dataset.joins !== `+quoteJS(joins)))
	assert.Equal(t, before, roomPicture(t, proj), "the projector shows the same room, storm and verdict")
	assert.Equal(t, "ana", text(t, phone, "#me"), "the phone is the same student")
	assert.True(t, eval[bool](t, phone, `document.getElementById('enter').hidden && document.getElementById('enter-error').textContent === ''`), "the phone never said the room was gone")
	run(t, phone, waitJS(`document.getElementById('room-verdict').textContent.includes('10 extra transfers')`))
}

// idemlabBinary builds cmd/idemlab once for the tests that run it as a
// process.
var idemlabBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "idemlab-bin")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "idemlab")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/idemlab").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// serveProcess starts `idemlab serve` and returns it with the instructor
// link it printed.
func serveProcess(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	bin, err := idemlabBinary()
	require.NoError(t, err)
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	var mu sync.Mutex
	cmd.Stderr = writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return stderr.Write(p) })
	said := func() string { mu.Lock(); defer mu.Unlock(); return stderr.String() }
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	link := make(chan string, 1)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if i := strings.Index(sc.Text(), "/classroom/teach#signin="); i >= 0 {
				link <- sc.Text()[i:]
			}
		}
	}()
	select {
	case l := <-link:
		return cmd, l
	case <-ended:
		t.Fatalf("idemlab serve %s ended before it printed its instructor link; it said:\n%s", strings.Join(args, " "), said())
	case <-time.After(60 * time.Second):
		t.Fatalf("idemlab serve printed no instructor link in a minute; it said:\n%s", said())
	}
	return nil, ""
}

// writerFunc is an io.Writer made of a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := freeport.Addr()
	require.NoError(t, err)
	return addr
}

func TestClassroomSurvivesAKilledServer(t *testing.T) {
	startBrowser(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "idemlab.db")
	addr := freeAddr(t)
	base := "http://" + addr
	first, _ := serveProcess(t, "--addr", addr, "--db", db, "--instructor-token", browserToken)

	proj, code := projectorTab(t, base)
	phone := joinPhone(t, base, code, "ana")
	run(t, proj, waitJS(`document.querySelectorAll('#roster li').length === 1`), click("#ask"))
	run(t, phone, waitJS(`document.querySelector('#choices button[data-choice=double]') !== null`),
		click(`#choices button[data-choice=double]`), waitJS(`document.getElementById('voted').textContent !== ''`))
	projectorStorm(t, proj, "naive", 6, 2, 2, 20)
	run(t, proj, waitJS(`document.querySelectorAll('#histogram .hrow').length === 3`))
	before := roomPicture(t, proj)
	joins := eval[string](t, phone, `document.getElementById('client').dataset.joins`)

	// The room's record reaches its file right after the verdict; wait for
	// it there, then kill the server without warning.
	require.Eventually(t, func() bool {
		rooms, err := roomdb.OpenRooms(filepath.Join(dir, "idemlab-classroom.db"))
		if err != nil {
			return false
		}
		defer rooms.Close()
		saved, _ := rooms.LoadRooms()
		return len(saved) == 1 && bytes.Contains(saved[0].Record, []byte(`"report_projector"`))
	}, 20*time.Second, 50*time.Millisecond)
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	first.Wait()
	for _, page := range []context.Context{proj, phone} {
		run(t, page, waitJS(`document.getElementById('conn').dataset.status === 'reconnecting' && !document.getElementById('reconnecting').hidden`))
	}

	// Started again on the same files, without --instructor-token: the
	// secret comes from its files, so the way to sign in has not changed
	// (checked at the end, in a browser that was not signed in).
	serveProcess(t, "--addr", addr, "--db", db)
	for _, page := range []context.Context{proj, phone} {
		run(t, page, waitJS(`document.getElementById('conn').dataset.status === 'online'`))
	}
	run(t, proj, waitJS(`document.getElementById('tally').dataset.duplicates === '10' && document.querySelectorAll('#histogram .hrow').length === 3`))
	run(t, phone, waitJS(`document.getElementById('client').dataset.joins !== `+quoteJS(joins)))
	assert.Equal(t, before, roomPicture(t, proj), "the same room, students, vote and storm, drawn again")
	assert.Equal(t, "ana", text(t, phone, "#me"))
	run(t, phone, waitJS(`document.getElementById('voted').classList.contains('right')`))

	// A reload of the projector is still signed in (the session survived).
	run(t, proj, chromedp.Reload(), waitJS(`!document.getElementById('room').hidden && document.getElementById('tally').dataset.duplicates === '10'`))
	assert.True(t, eval[bool](t, proj, `document.getElementById('signin').hidden`))
	assert.Equal(t, "6", eval[string](t, proj, `document.getElementById('clients').value`), "the storm form as it was last fired")
	assert.Equal(t, "naive", eval[string](t, proj, `document.getElementById('level').value`))
	leftovers, _ := filepath.Glob(filepath.Join(dir, "idemlab-classroom-*"))
	assert.Empty(t, leftovers, "the killed server's storm ledger was removed at start-up")

	// The same secret still signs in (a browser without the cookie).
	req, _ := http.NewRequest("POST", base+"/classroom/api/session", strings.NewReader(`{"token":"`+browserToken+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", base)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, 200, res.StatusCode, "the secret kept in the files signs in")
}

// TestRoomScreenIsMadeForARoom opens the room's screen (the audience view)
// at 1920×1080: the join screen's QR code takes at least 40% of the
// screen's height and still decodes from a screenshot scaled to 30% (the
// back row), to the address a phone opens; after a storm, the view's words
// are at least 20 px and its tables 24 px.
func TestRoomScreenIsMadeForARoom(t *testing.T) {
	ts := classroomServer(t)
	presenter, code := projectorTab(t, ts.URL)
	screen := tab(t)
	run(t, screen, chromedp.EmulateViewport(1920, 1080),
		chromedp.Navigate(ts.URL+"/classroom/teach?view=screen&room="+code),
		waitJS(`document.getElementById('conn').dataset.status === 'online'`),
		waitJS(`document.getElementById('qr').complete && document.getElementById('qr').naturalWidth > 0`))
	assert.False(t, eval[bool](t, screen, `document.getElementById('storm-panel').checkVisibility()`), "the screen has no controls")
	qrH := eval[float64](t, screen, `document.getElementById('qr').getBoundingClientRect().height`)
	assert.GreaterOrEqual(t, qrH, 0.40*1080, "the QR code takes at least 40%% of the screen's height")
	codePX := eval[float64](t, screen, `parseFloat(getComputedStyle(document.getElementById('code')).fontSize)`)
	assert.GreaterOrEqual(t, codePX, 100.0, "the room code is read from the back")

	shot, err := chromedp.Run(screen, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(shot))
	require.NoError(t, err)
	small := shrink(img, 0.30)
	bmp, err := gozxing.NewBinaryBitmapFromImage(small)
	require.NoError(t, err)
	res, err := qrcode.NewQRCodeReader().Decode(bmp, nil)
	require.NoError(t, err, "the QR code decodes at 30%% scale (%dx%d)", small.Bounds().Dx(), small.Bounds().Dy())
	u, err := url.Parse(res.GetText())
	require.NoError(t, err)
	assert.Equal(t, code, u.Query().Get("room"))
	resp, err := http.Get(res.GetText())
	require.NoError(t, err, "the QR code's address opens")
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)

	// A phone joins: the join screen names it.
	joinPhone(t, ts.URL, code, "민지")
	run(t, screen, waitJS(`document.getElementById('joined-names').textContent.includes('민지')`))

	projectorStorm(t, presenter, "naive", 6, 2, 2, 20)
	run(t, screen, waitJS(`document.getElementById('tally').dataset.duplicates === '10' && document.querySelector('#race svg.race') !== null`))
	sizes := eval[map[string]float64](t, screen, `(() => {
		const px = (e) => parseFloat(getComputedStyle(e).fontSize);
		const svg = document.querySelector('#race svg.race');
		const scale = svg.getBoundingClientRect().width / Number(svg.getAttribute('width'));
		const texts = [...svg.querySelectorAll('text')].filter((e) => e.getBBox().width > 0);
		return {
			svgText: Math.min(...texts.map((e) => px(e) * scale)),
			tileLabel: Math.min(...[...document.querySelectorAll('#tally .tlabel')].map(px)),
			table: Math.min(...[...document.querySelectorAll('#balances td, #keytable td')].map(px)),
			rules: Math.min(...[...document.querySelectorAll('#rules li')].map(px)),
		};
	})()`)
	assert.GreaterOrEqual(t, sizes["svgText"], 20.0, "the race's smallest words")
	assert.GreaterOrEqual(t, sizes["tileLabel"], 20.0, "the tiles' labels")
	assert.GreaterOrEqual(t, sizes["table"], 24.0, "the tables")
	assert.GreaterOrEqual(t, sizes["rules"], 20.0, "the rules")
}

// shrink scales img by f, each pixel the average of the ones it covers.
func shrink(img image.Image, f float64) *image.NRGBA {
	b := img.Bounds()
	w, h := int(float64(b.Dx())*f), int(float64(b.Dy())*f)
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		y0, y1 := b.Min.Y+int(float64(y)/f), b.Min.Y+int(float64(y+1)/f)
		for x := 0; x < w; x++ {
			x0, x1 := b.Min.X+int(float64(x)/f), b.Min.X+int(float64(x+1)/f)
			var r, g, bl, n uint32
			for yy := y0; yy < y1; yy++ {
				for xx := x0; xx < x1; xx++ {
					cr, cg, cb, _ := img.At(xx, yy).RGBA()
					r, g, bl, n = r+cr>>8, g+cg>>8, bl+cb>>8, n+1
				}
			}
			if n > 0 {
				i := out.PixOffset(x, y)
				out.Pix[i], out.Pix[i+1], out.Pix[i+2], out.Pix[i+3] = uint8(r/n), uint8(g/n), uint8(bl/n), 255
			}
		}
	}
	return out
}

// TestClassroomPagesSpeakKorean: ?lang=ko turns the phone, the presenter
// and the screen Korean, and the choice is kept for the next visit.
func TestClassroomPagesSpeakKorean(t *testing.T) {
	ts := classroomServer(t)
	presenter, code := projectorTab(t, ts.URL)
	phone := tab(t)
	run(t, phone, chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(ts.URL+"/classroom/?lang=ko&room="+code),
		waitJS(`document.documentElement.lang === 'ko'`))
	assert.Equal(t, "참여", text(t, phone, "#join-form button[type=submit]"))
	run(t, phone, chromedp.Evaluate[chromedp.Void](`document.getElementById('nickname').value = 'ana'`),
		click(`#join-form button[type=submit]`), waitJS(`!document.getElementById('client').hidden`))
	assert.Equal(t, "송금하기", text(t, phone, "#send"))
	run(t, phone, waitJS(`document.getElementById('conn').textContent === '연결됨'`))
	// The next visit, without ?lang, stays Korean.
	run(t, phone, chromedp.Navigate(ts.URL+"/classroom/?room="+code), waitJS(`document.documentElement.lang === 'ko'`))

	screen := tab(t)
	run(t, screen, chromedp.Navigate(ts.URL+"/classroom/teach?view=screen&lang=ko&room="+code),
		waitJS(`document.getElementById('conn').dataset.status === 'online'`),
		// The count comes with the room's welcome, after the socket opened.
		waitJS(`document.getElementById('online').textContent !== ''`))
	assert.Equal(t, "ko", eval[string](t, screen, `document.documentElement.lang`))
	assert.Contains(t, text(t, screen, "#online"), "명 중")
	hangul := regexp.MustCompile(`[\x{AC00}-\x{D7A3}]`)
	assert.True(t, hangul.MatchString(text(t, screen, "#join-card")), "the join screen is in Korean")

	// After a storm, the screen's race view, rules and picture speak Korean
	// (the presenter, opened before, stays English).
	projectorStorm(t, presenter, "naive", 4, 1, 2, 10)
	run(t, screen, waitJS(`document.querySelector('#race svg.race') !== null && !document.getElementById('picture-box').hidden && document.querySelector('#picture svg') !== null`))
	assert.True(t, hangul.MatchString(text(t, screen, "#rules")), "the rules' titles in Korean")
	assert.Regexp(t, `^[\d,]+원$`, text(t, screen, "#tally .tile.fail:nth-child(2) .tval"), "money in Korean: the tile of the won moved more than once")
	assert.Contains(t, text(t, screen, "#rules li.fail"), "원이 중복 송금됨", "the broken rule's sentence in Korean")
	assert.Equal(t, "계좌", text(t, screen, "#balances th"))
	assert.True(t, hangul.MatchString(eval[string](t, screen, `document.querySelector('#race svg.race').textContent`)), "the race view's words in Korean")
	assert.True(t, hangul.MatchString(eval[string](t, screen, `document.querySelector('#picture svg').textContent`)), "the storm's picture in Korean")
}

// TestLateRetryShowsTheHour: a late-retry storm moves its ledger's clock
// an hour on between the lost answers and the retries; the race view draws
// that hour on its time axis, so the room sees why the key was gone.
func TestLateRetryShowsTheHour(t *testing.T) {
	ts := classroomServer(t)
	proj, _ := projectorTab(t, ts.URL)
	run(t, proj,
		chromedp.Evaluate[chromedp.Void](`(() => {
			document.getElementById('storm-panel').open = true;
			const set = (id, v) => { document.getElementById(id).value = v; };
			set('level', 'replay'); set('clients', '2'); set('keys', '2'); set('attempts', '2');
			set('fault', 'late-retry'); set('latency', '10'); set('slow', '0');
		})()`),
		waitJS(`!document.getElementById('fire').disabled`), click("#fire"),
		waitJS(`document.getElementById('run-label').textContent.includes('storm of 4 requests at replay')`),
		waitJS(`document.querySelector('#race svg.race') !== null && !document.getElementById('fire').disabled`))
	longest := eval[float64](t, proj, `Math.max(0, ...[...document.querySelectorAll('#race [data-break-ms]')].map((b) => Number(b.dataset.breakMs)))`)
	assert.GreaterOrEqual(t, longest, float64(time.Hour/time.Millisecond), "the hour between the lost answers and the late retries is on the axis")
	assert.Contains(t, text(t, proj, "#race"), "1 h 0 min")
}

// TestCrashStormSaysTheKeyIsStuck: at in-progress, a crash before the
// payment leaves the key claimed and nothing paid. No rule breaks, and the
// page says in words that the key is stuck and why (no lease), which is
// the lesson.
func TestCrashStormSaysTheKeyIsStuck(t *testing.T) {
	ts := classroomServer(t)
	proj, _ := projectorTab(t, ts.URL)
	run(t, proj,
		chromedp.Evaluate[chromedp.Void](`(() => {
			document.getElementById('storm-panel').open = true;
			const set = (id, v) => { const e = document.getElementById(id); e.value = v; e.dispatchEvent(new Event('change')); };
			set('level', 'in-progress'); set('clients', '2'); set('keys', '1'); set('attempts', '1');
			set('fault', 'crash'); set('phase', 'execute'); set('latency', '10'); set('slow', '0');
		})()`),
		waitJS(`!document.getElementById('fire').disabled`), click("#fire"),
		waitJS(`document.getElementById('run-label').textContent.includes('storm of 2 requests at in-progress')`),
		waitJS(`!document.getElementById('fire').disabled`))
	run(t, proj, waitJS(`!document.getElementById('stuck').hidden`))
	assert.Contains(t, text(t, proj, "#stuck"), "stuck in_progress")
	assert.Contains(t, text(t, proj, "#keytable"), "in_progress")
}
