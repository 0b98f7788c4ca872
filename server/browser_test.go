package server_test

// This file is the harness alone: the one Chromium every browser test in
// the package shares, the servers they load pages from, and the helpers
// they all use. The tests live by page: player_browser_test.go,
// loading_browser_test.go, classroom_browser_test.go,
// projector_browser_test.go, and the rest named for what they open.

// Browser tests: a real Chromium loads the playground from a real server,
// waits for the engine (Go and SQLite in WebAssembly, in a Web Worker),
// clicks what a student clicks and reads what a student reads. One
// Chromium serves the whole package; each test opens a fresh tab and has
// its own timeout. Without Chromium the tests skip and say how to get it.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"idemlab/internal/stores"
	"idemlab/server"
	"idemlab/web"
)

var screenshots = flag.String("screenshots", "", "write PNG screenshots of the player and the classroom into this folder (TestScreenshots)")

// slowEngineFlag runs every browser test with the page's engine answering
// this much late, as on a slow machine: a wait that passes only because
// the engine is quick shows itself. (go test ./server/ -args -slow-engine 60ms)
var slowEngineFlag = flag.Duration("slow-engine", 0, "make the page's engine answer each call this much late in every browser test")

// slowNetworkFlag delays everything the test servers of the browser tests
// (the playground's and the classroom's) write, by this much per write:
// pages and websockets then arrive as over a slow network.
// (go test ./server/ -args -slow-network 50ms)
var slowNetworkFlag = flag.Duration("slow-network", 0, "delay each write of the browser tests' servers by this much")

// optimizingTierFlag runs the tests' Chromium with V8's optimizing
// WebAssembly tier, as a student's browser runs the page. Without it the
// tests run the baseline tier alone (--liftoff-only): the same module and
// the same semantics, but each tab no longer compiles the 13.8 MB engine a
// second time in the background, which was about a third of the package's
// CPU on a 2-core machine (the package 542 s → 396 s, docs/PERFORMANCE.md).
// Benchmarks always run with it: they measure what a student's browser does.
// (go test ./server/ -args -optimizing-tier)
var optimizingTierFlag = flag.Bool("optimizing-tier", false, "run the browser tests' Chromium with V8's optimizing WebAssembly tier, as students' browsers do (benchmarks always do)")

// baselineTierOnly says whether the shared Chromium runs WebAssembly with
// the baseline tier alone: in tests, unless -optimizing-tier; never when
// benchmarks run.
func baselineTierOnly() bool {
	if *optimizingTierFlag {
		return false
	}
	if b := flag.Lookup("test.bench"); b != nil && b.Value.String() != "" {
		return false
	}
	return true
}

// browserServer starts a test server for the browser tests, slowed by
// -slow-network when it is set.
func browserServer(h http.Handler) *httptest.Server {
	ts := httptest.NewUnstartedServer(h)
	if *slowNetworkFlag > 0 {
		ts.Listener = slowListener{ts.Listener, *slowNetworkFlag}
	}
	ts.Start()
	return ts
}

// slowListener's connections wait before each write.
type slowListener struct {
	net.Listener
	delay time.Duration
}

func (l slowListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return slowConn{c, l.delay}, nil
}

type slowConn struct {
	net.Conn
	delay time.Duration
}

func (c slowConn) Write(b []byte) (int, error) {
	time.Sleep(c.delay)
	return c.Conn.Write(b)
}

// browserTestTimeout bounds one browser test, engine start included.
const browserTestTimeout = 5 * time.Minute

var chromium struct {
	once    sync.Once
	ctx     context.Context // the browser; tabs are made from it
	cancel  func()
	skip    string
	webOnce sync.Once
	webDir  string // "" when the embedded copy has the module
	webErr  error
	tmp     string
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if chromium.cancel != nil {
		chromium.cancel()
	}
	if chromium.tmp != "" {
		os.RemoveAll(chromium.tmp)
	}
	os.Exit(code)
}

func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// tab opens a fresh tab in the package's one Chromium, with the test's
// timeout, and closes it when the test ends.
func tab(t testing.TB) context.Context {
	t.Helper()
	ctx, closeTab := ownTab(t)
	t.Cleanup(closeTab)
	return ctx
}

// startBrowser starts the shared headless Chromium once, or skips the test
// when there is none, or under -short (make test-short).
func startBrowser(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no browser (make test runs the browser tests)")
	}
	chromium.once.Do(func() {
		path := chromiumPath()
		if path == "" {
			chromium.skip = "no Chromium installed: apt-get install -y chromium (CI's .ci/run does) to run the browser tests"
			return
		}
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(path),
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.NoFirstRun,
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("disable-quic", true),
			chromedp.WindowSize(1600, 1000),
		)
		if baselineTierOnly() {
			opts = append(opts, chromedp.Flag("js-flags", "--liftoff-only"))
		}
		allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
		if err := chromedp.Do(browserCtx); err != nil {
			cancelBrowser()
			cancelAlloc()
			chromium.skip = "Chromium at " + path + " did not start: " + err.Error()
			return
		}
		chromium.ctx = browserCtx
		chromium.cancel = func() { cancelBrowser(); cancelAlloc() }
	})
	if chromium.skip != "" {
		t.Skip(chromium.skip)
	}
}

// ownTab opens a tab that the caller closes: a benchmark closes each
// iteration's tab before the next opens, so that no earlier page (its
// engine, its background compilation) shares the machine with the one
// being measured, as no other page of idemlab shares a student's.
func ownTab(t testing.TB, opts ...chromedp.ContextOption) (context.Context, func()) {
	t.Helper()
	startBrowser(t)
	tabCtx, cancelTab := chromedp.NewContext(chromium.ctx, opts...)
	// The tab opens on a context without a deadline; the test's timeout
	// then bounds every action on it.
	if err := chromedp.Do(tabCtx); err != nil {
		cancelTab()
		t.Fatalf("open a tab: %v", err)
	}
	ctx, cancel := context.WithTimeout(tabCtx, browserTestTimeout)
	if *slowEngineFlag > 0 {
		if err := chromedp.Do(ctx, delayEngine(*slowEngineFlag)); err != nil {
			cancel()
			cancelTab()
			t.Fatalf("slow the engine: %v", err)
		}
	}
	return ctx, func() { cancel(); cancelTab() }
}

// playgroundDir returns the Options.WebDir that serves a built engine:
// "" when the embedded copy has it (make test builds it first), else a
// folder with the page and a module this test binary builds itself, so
// that `go test ./...` works on a clean checkout.
func playgroundDir(t testing.TB) string {
	t.Helper()
	chromium.webOnce.Do(func() {
		if _, err := fs.Stat(web.Files, web.ModuleGzip); err == nil {
			if _, err := fs.Stat(web.Files, web.WasmExec); err == nil {
				return
			}
		}
		chromium.webDir, chromium.webErr = buildPlayground()
	})
	require.NoError(t, chromium.webErr)
	return chromium.webDir
}

func buildPlayground() (string, error) {
	tmp, err := os.MkdirTemp("", "idemlab-web-")
	if err != nil {
		return "", err
	}
	chromium.tmp = tmp
	dir := filepath.Join(tmp, "web")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	entries, err := os.ReadDir("../web")
	if err != nil {
		return "", fmt.Errorf("read the page's source: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() || !web.Servable(e.Name()) || strings.HasPrefix(e.Name(), web.ModuleName) {
			continue
		}
		if err := copyFile(filepath.Join("../web", e.Name()), filepath.Join(dir, e.Name())); err != nil {
			return "", err
		}
	}
	// The lab's runner and its page live in their own folder (web.LabDir).
	labEntries, err := os.ReadDir(filepath.Join("../web", web.LabDir))
	if err != nil {
		return "", fmt.Errorf("read the lab's source: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, web.LabDir), 0o755); err != nil {
		return "", err
	}
	for _, e := range labEntries {
		if e.IsDir() || !web.Servable(e.Name()) {
			continue
		}
		if err := copyFile(filepath.Join("../web", web.LabDir, e.Name()), filepath.Join(dir, web.LabDir, e.Name())); err != nil {
			return "", err
		}
	}
	goBin := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = "go"
	}
	out, err := exec.Command(goBin, "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOROOT: %w", err)
	}
	goroot := strings.TrimSpace(string(out))
	build := exec.Command(goBin, "build", moduleGCFlags, "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(dir, web.ModuleName), "../wasm")
	build.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the engine module: %w\n%s", err, out)
	}
	if err := copyFile(filepath.Join(goroot, "lib", "wasm", web.WasmExec), filepath.Join(dir, web.WasmExec)); err != nil {
		return "", err
	}
	return dir, nil
}

// moduleGCFlags is how make wasm compiles the module (WASM_GCFLAGS in the
// Makefile, where the reason is written): the tests play the module that
// students get.
const moduleGCFlags = "-gcflags=github.com/ncruces/go-sqlite3-wasm/v6=-B"

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// playground starts idemlab's server with in-memory banks over webDir.
func playground(t testing.TB, webDir string) *httptest.Server {
	t.Helper()
	banks, err := stores.OpenBanks("", server.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { server.CloseBanks(banks) })
	s, err := server.New(banks, stores.Options(server.Options{WebDir: webDir}))
	require.NoError(t, err)
	t.Cleanup(s.Close)
	ts := browserServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// lessonJSON is what the tests need of a lesson to know what to click.
type lessonJSON struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Scenarios []struct {
		ID    string          `json:"id"`
		Title string          `json:"title"`
		Level string          `json:"level"`
		Day   json.RawMessage `json:"day"`
		Goals []struct {
			ID     string            `json:"id"`
			Text   string            `json:"text"`
			Expect string            `json:"expect"`
			Rule   string            `json:"rule"`
			Policy map[string]string `json:"policy"`
		} `json:"goals"`
	} `json:"scenarios"`
}

func fetchLessons(t testing.TB, base string) []lessonJSON {
	t.Helper()
	var index []struct {
		ID string `json:"id"`
	}
	getJSON(t, base+"/api/lessons.json", &index)
	require.NotEmpty(t, index)
	var out []lessonJSON
	for _, e := range index {
		var l lessonJSON
		getJSON(t, base+"/api/lessons/"+e.ID+".en.json", &l)
		out = append(out, l)
	}
	return out
}

func getJSON(t testing.TB, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode, url)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(v))
}

// run runs steps in the tab and fails the test at the first error.
func run(t testing.TB, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, steps...))
}

// eval evaluates a JavaScript expression in the page, awaiting it if it is
// a Promise, and returns its value.
func eval[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	require.NoError(t, err, expr)
	return v
}

// stepTimeout bounds one wait inside a test, so that a page that never
// shows what is expected fails with the condition named, not at the end of
// the whole test's time.
const stepTimeout = 60 * time.Second

// waitJS polls a JavaScript condition until it is true.
func waitJS(cond string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		_, err := chromedp.Poll[bool](cond, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(stepTimeout))(ctx, tgt)
		if err != nil {
			return fmt.Errorf("wait for %s: %w", cond, err)
		}
		return nil
	})
}

// waitAcrossLoad is waitJS for a condition that a page load in progress
// will make true (a language changed by location.assign): a poll started
// in the old page ends with its execution context, so it is started
// again in the new one until stepTimeout.
func waitAcrossLoad(cond string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		deadline := time.Now().Add(stepTimeout)
		for {
			_, err := waitJS(cond)(ctx, tgt)
			if err == nil || time.Now().After(deadline) || !(strings.Contains(err.Error(), "context") || strings.Contains(err.Error(), "navigated")) {
				return err
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// click clicks the first element that matches a CSS selector, once it is
// scrolled into view and stands still. A click is sent to a point on the
// screen: an element still moving (the page scrolling smoothly to a
// scenario's card, or after a space bar pressed on the bench) would be
// missed, and the click land on whatever is there next. On a busy machine
// such a scroll lasted long enough to lose the click. The element is
// scrolled into view before it is watched, not by the click: scrolling
// can move it again (an editor below the fold lays out the lines it
// had only estimated once they come into view).
func click(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		ctx, cancel := context.WithTimeout(ctx, stepTimeout)
		defer cancel()
		if _, err := chromedp.Evaluate[bool](`new Promise((resolve) => {
			const box = () => { const e = document.querySelector(`+quoteJS(sel)+`); if (!e) return ''; const r = e.getBoundingClientRect(); return r.x + ',' + r.y + ',' + r.width + ',' + r.height; };
			const e = document.querySelector(`+quoteJS(sel)+`);
			// In the middle of the window: at its top edge it would stand
			// under the page's sticky header, which then takes the click.
			if (e) e.scrollIntoView({ block: 'center', inline: 'nearest' });
			let last = box(), still = 0;
			const tick = () => {
				const now = box();
				still = now === last ? still + 1 : 0;
				last = now;
				if (still >= 3) resolve(true); else requestAnimationFrame(tick);
			};
			requestAnimationFrame(tick);
		})`, chromedp.EvalAwaitPromise)(ctx, tgt); err != nil {
			return fmt.Errorf("click %s: wait for it to stand still: %w", sel, err)
		}
		if _, err := chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)(ctx, tgt); err != nil {
			return fmt.Errorf("click %s: %w", sel, err)
		}
		return nil
	})
}

func focus(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Focus(chromedp.CSS(sel))
}

func quoteJS(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// text returns what the page shows in an element ("<missing>" if none).
func text(t testing.TB, ctx context.Context, sel string) string {
	t.Helper()
	return eval[string](t, ctx, `document.querySelector(`+quoteJS(sel)+`)?.innerText ?? '<missing>'`)
}

// countIn is how many elements of the page match sel.
func countIn(t testing.TB, ctx context.Context, sel string) int {
	t.Helper()
	return eval[int](t, ctx, `document.querySelectorAll(`+quoteJS(sel)+`).length`)
}

// svgText returns an element's text content, for the race view's SVG,
// which has no innerText ("<missing>" if none).
func svgText(t testing.TB, ctx context.Context, sel string) string {
	t.Helper()
	return eval[string](t, ctx, `document.querySelector(`+quoteJS(sel)+`)?.textContent ?? '<missing>'`)
}

// attr returns an element's attribute ("<missing>" if no such element or
// attribute).
func attr(t testing.TB, ctx context.Context, sel, name string) string {
	t.Helper()
	return eval[string](t, ctx, `document.querySelector(`+quoteJS(sel)+`)?.getAttribute(`+quoteJS(name)+`) ?? '<missing>'`)
}

// openLesson navigates to a lesson and waits until its first scenario is
// on the bench and the engine has drawn it.
func openLesson(t testing.TB, ctx context.Context, base, id string) {
	t.Helper()
	run(t, ctx,
		chromedp.Navigate(base+"/#lesson="+id),
		waitJS(`document.body.dataset.engine === 'ready' && document.body.dataset.interactive === 'true'`),
		waitJS(`location.hash.includes('lesson=`+id+`') && document.body.dataset.lesson === '`+id+`'`),
	)
}

// openScenario clicks a scenario's "Open on the bench" button in the
// lesson text and waits for the bench to show it at step 0.
func openScenario(t testing.TB, ctx context.Context, id string, day bool) {
	t.Helper()
	ready := `document.querySelector('#step-count').dataset.step === '0' && !document.querySelector('#bench-body').hidden`
	if day {
		ready = `!document.querySelector('#day-body').hidden`
	}
	// The scenario may be on the bench already (the lesson's first): the
	// waits below would then hold before the click took effect, so the
	// count of scenarios opened must change first.
	opens := eval[string](t, ctx, `document.body.dataset.opens || ''`)
	run(t, ctx,
		click(`#lesson-text button.open-scenario[data-scenario="`+id+`"]`),
		waitJS(`(document.body.dataset.opens || '') !== '`+opens+`'`),
		waitJS(`location.hash.includes('s=`+id+`')`),
		waitJS(`document.querySelector('#lesson-text .scenario.active')?.dataset.scenario === '`+id+`'`),
		waitJS(ready),
	)
}

func runToEnd(t testing.TB, ctx context.Context) {
	t.Helper()
	run(t, ctx,
		click(`#btn-run`),
		waitJS(`document.querySelector('#step-count').dataset.done === 'true'`),
	)
}

func duplicates(t testing.TB, ctx context.Context, sel string) string {
	return attr(t, ctx, sel, "data-duplicates")
}

// slowEngine makes the page's engine answer each call 60 ms late, as on
// a slow device (see delayEngine). It must run before the page loads.
func slowEngine(t testing.TB, ctx context.Context) {
	t.Helper()
	run(t, ctx, delayEngine(60*time.Millisecond))
}

// delayEngine puts a script into every page the tab loads that delays
// each answer of the engine's worker by d, counts the answers in
// window.idemlabAnswers and keeps every URL the page writes in
// window.idemlabWrites.
func delayEngine(d time.Duration) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		// Put in twice (the -slow-engine flag and a test's own), the
		// delays add up and the page is wrapped once.
		_, err := cdp.Call(ctx, tgt, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `
if (window.idemlabDelay === undefined) {
  window.idemlabDelay = 0;
  window.idemlabWrites = [];
  window.idemlabAnswers = 0;
  const replace = history.replaceState.bind(history);
  history.replaceState = (state, title, url) => { window.idemlabWrites.push(String(url)); return replace(state, title, url); };
  const RealWorker = Worker;
  window.Worker = class extends RealWorker {
    set onmessage(f) {
      super.onmessage = f && ((e) => e.data && e.data.type === 'result' ? setTimeout(() => { window.idemlabAnswers++; f(e); }, window.idemlabDelay) : f(e));
    }
    get onmessage() {
      return super.onmessage;
    }
  };
}
window.idemlabDelay += ` + fmt.Sprint(d.Milliseconds()) + `;`})
		return err
	})
}
