package server_test

// The player page while its engine loads, or cannot: the module as make
// wasm builds it, the page without a module or without WebAssembly, and the
// bench that waits for its first state.

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/web"
)

// TestModuleBuiltAsTheTestsBuildIt reads the build settings that Go records
// in every binary from the module students get (the embedded one, which
// make wasm builds): it was compiled with the flags the tests build their
// own module with when none is embedded, so both play the same engine.
func TestModuleBuiltAsTheTestsBuildIt(t *testing.T) {
	// The Makefile's recipe uses the flags the tests build with. This part
	// needs no module, so it runs on a fresh checkout too.
	makefile, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	assert.Contains(t, string(makefile), "\nWASM_GCFLAGS := "+moduleGCFlags+"\n", "make wasm compiles with the tests' flags")
	assert.Regexp(t, `(?m)^\tGOOS=js GOARCH=wasm \$\(GO\) build \$\(WASM_GCFLAGS\) -trimpath .* \./wasm$`, string(makefile), "make wasm's recipe")

	zipped, err := fs.ReadFile(web.Files, web.ModuleGzip)
	if err != nil {
		t.Logf("no embedded module to read (%v): make wasm builds it; its recipe was checked above", err)
		return
	}
	zr, err := gzip.NewReader(strings.NewReader(string(zipped)))
	require.NoError(t, err)
	module, err := io.ReadAll(zr)
	require.NoError(t, err)
	settings := buildSettings(module)
	require.NotEmpty(t, settings, "the module carries Go's build settings")
	assert.Equal(t, strings.TrimPrefix(moduleGCFlags, "-gcflags="), settings["-gcflags"])
	assert.Equal(t, "true", settings["-trimpath"])
	assert.Equal(t, "wasm", settings["GOARCH"])
}

// buildSettings finds the "build\tKEY=VALUE" lines of the build information
// Go writes into a binary (runtime/debug.BuildInfo's text form), as text:
// debug/buildinfo does not open WebAssembly modules.
func buildSettings(module []byte) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(string(module), "\n") {
		kv, ok := strings.CutPrefix(line, "build\t")
		if !ok {
			continue
		}
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

// pageWithoutEngine returns an Options.WebDir with the page and none of the
// engine: no module, no wasm_exec.js.
func pageWithoutEngine(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir("../web")
	require.NoError(t, err)
	for _, e := range entries {
		if !e.IsDir() && web.Servable(e.Name()) && !strings.HasPrefix(e.Name(), web.ModuleName) && e.Name() != web.WasmExec {
			require.NoError(t, copyFile(filepath.Join("../web", e.Name()), filepath.Join(dir, e.Name())))
		}
	}
	return dir
}

// TestPageSaysWhenTheModuleIsMissing serves the page without a built
// engine: the lesson text still shows, the page says how to fix it, and the
// bench shows the first scenario waiting for the engine.
func TestPageSaysWhenTheModuleIsMissing(t *testing.T) {
	ts := playground(t, pageWithoutEngine(t))
	ctx := tab(t)
	run(t, ctx,
		chromedp.Navigate(ts.URL+"/"),
		waitJS(`document.body.dataset.engine === 'missing'`),
		waitJS(`document.querySelector('#lesson-text h1') !== null`))
	assert.Contains(t, text(t, ctx, "#engine-problem"), "engine module is missing: run make run")

	// The bench already shows the lesson's first scenario as the engine
	// would open it, inert, and says why nothing moves.
	type waiting struct {
		Lanes, WantLanes       []string
		Balances, WantBalances map[string]float64
		Rules, Pending         int
		Inert                  bool
		Disabled               []bool
		Step                   string
	}
	var w waiting
	require.NoError(t, json.Unmarshal([]byte(eval[string](t, ctx, `(async () => {
		const lesson = await (await fetch('/api/lessons/01-naive.en.json')).json();
		const spec = lesson.scenarios[0];
		const q = (s) => [...document.querySelectorAll(s)];
		return JSON.stringify({
			lanes: q('#race [data-row="attempt"][data-lane]').map((e) => e.dataset.lane),
			wantLanes: spec.lanes.map((l) => l.id),
			balances: Object.fromEntries(q('#accounts [data-account]').map((e) => [e.dataset.account, Number(e.dataset.balance)])),
			wantBalances: spec.accounts,
			rules: q('#rules [data-rule]').length,
			pending: q('#rules .rule.pending').length,
			inert: document.getElementById('bench-body').inert,
			disabled: ['btn-step', 'btn-back', 'btn-run', 'btn-reset', 'btn-inject'].map((id) => document.getElementById(id).disabled),
			step: document.getElementById('step-count').textContent,
		});
	})()`)), &w))
	assert.Equal(t, w.WantLanes, w.Lanes, "every lane of the scenario, waiting")
	assert.Equal(t, w.WantBalances, w.Balances, "the opening balances")
	assert.Equal(t, 8, w.Rules, "the checker's eight rules")
	assert.Equal(t, 8, w.Pending, "none of them checked")
	assert.True(t, w.Inert, "nothing on the bench can be used")
	assert.Equal(t, []bool{true, true, true, true, true}, w.Disabled)
	assert.Contains(t, w.Step, "engine module is missing")
}

// benchFonts lists the fonts the page's text is drawn in:
// family|size|weight|style → an example of the text. Text that is not
// shown counts too: traced in Chromium, the labels of the sandbox's knobs
// inside a closed <details> made the first state's layout wait 0.5-2 s
// for their font (docs/PERFORMANCE.md).
const benchFonts = `(() => {
  const out = {};
  const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = w.nextNode(); n; n = w.nextNode()) {
    const e = n.parentElement;
    if (!n.textContent.trim() || !e || e.closest('title, script, style, template, noscript')) continue;
    const cs = getComputedStyle(e);
    const k = [cs.fontFamily, cs.fontSize, cs.fontWeight, cs.fontStyle].join('|');
    if (!out[k]) out[k] = n.textContent.trim().slice(0, 40);
  }
  return JSON.stringify(out);
})()`

// TestWaitingBenchUsesTheFontsOfTheFirstState holds the bench drawn before
// the engine starts to the fonts of the engine's first state: a font that
// only the engine's state uses is looked up in the first layout after it,
// on a machine busy compiling the engine, and that held the bench off the
// screen for up to a second (docs/PERFORMANCE.md).
func TestWaitingBenchUsesTheFontsOfTheFirstState(t *testing.T) {
	noEngine := playground(t, pageWithoutEngine(t))
	withEngine := playground(t, playgroundDir(t))
	ctx := tab(t)
	for _, lesson := range []string{"01-naive", "02-unique"} {
		var waiting, first map[string]string
		run(t, ctx, chromedp.Navigate(noEngine.URL+"/#lesson="+lesson),
			waitJS(`document.body.dataset.engine === 'missing' && document.querySelectorAll('#race [data-row="attempt"][data-lane]').length > 0`))
		require.NoError(t, json.Unmarshal([]byte(eval[string](t, ctx, benchFonts)), &waiting))
		run(t, ctx, chromedp.Navigate(withEngine.URL+"/#lesson="+lesson),
			waitJS(`document.body.dataset.interactive === 'true' && document.body.dataset.lesson === '`+lesson+`'`))
		require.NoError(t, json.Unmarshal([]byte(eval[string](t, ctx, benchFonts)), &first))
		for font, example := range first {
			_, ok := waiting[font]
			assert.True(t, ok, "%s: the engine's first state draws %q in %s, the waiting bench draws nothing in it", lesson, example, font)
		}
	}
}

// TestPageSaysWhenTheBrowserLacksWebAssembly hides WebAssembly from the
// page before its scripts run.
func TestPageSaysWhenTheBrowserLacksWebAssembly(t *testing.T) {
	ts := playground(t, playgroundDir(t))
	ctx := tab(t)
	run(t, ctx,
		chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
			_, err := cdp.Call(ctx, tgt, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `delete globalThis.WebAssembly;`})
			return err
		}),
		chromedp.Navigate(ts.URL+"/"),
		waitJS(`document.body.dataset.engine === 'nowasm'`))
	assert.Contains(t, text(t, ctx, "#engine-problem"), "cannot run WebAssembly")
}
