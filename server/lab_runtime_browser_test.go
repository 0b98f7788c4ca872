package server_test

// The lab's runtime in the browser: a student's own handler
// (docs/lab-handler.md) runs in the runner worker (web/lab/runner.js) on
// the engine's real SQLite, stepped by hand, broken by faults, searched by
// the explorer and judged by the checker in Go. These tests drive the
// bare test page web/lab/test.html through window.labRunner, with
// handlers from web/lab/testdata/.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openLabRunner opens the runner's test page with a step budget (ms) and
// waits for the runner to start.
func openLabRunner(t testing.TB, budgetMs int) (context.Context, string) {
	t.Helper()
	startBrowser(t)
	ts := playground(t, playgroundDir(t))
	ctx := tab(t)
	run(t, ctx,
		chromedp.Navigate(ts.URL+"/lab/test.html?budget="+itoa(budgetMs)),
		waitJS(`document.body.dataset.runner === 'ready' || document.body.dataset.runner === 'failed'`),
	)
	require.Equal(t, "ready", eval[string](t, ctx, `document.body.dataset.runner + (document.body.dataset.runnerError || '')`))
	return ctx, ts.URL
}

// lineOf is the line (from 1) of the first line of src that holds text.
func lineOf(t testing.TB, src, text string) int {
	t.Helper()
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, text) {
			return i + 1
		}
	}
	t.Fatalf("no line holds %q", text)
	return 0
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// handlerFile reads a handler from web/lab/testdata.
func handlerFile(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "web", "lab", "testdata", name))
	require.NoError(t, err)
	return string(b)
}

// labLoad loads a handler's source into the runner.
func labLoad(t testing.TB, ctx context.Context, source string) {
	t.Helper()
	got := eval[map[string]any](t, ctx, `labRunner.load(`+quoteJS(source)+`)`)
	require.Nil(t, got["error"], "load: %v", got)
}

// labJS evaluates an expression over the runner and decodes its value
// into T through JSON.
func labJS[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	raw := eval[string](t, ctx, `(async () => JSON.stringify(await (`+expr+`)))()`)
	var v T
	require.NoError(t, json.Unmarshal([]byte(raw), &v), raw)
	return v
}

// explored is what the explorer answers.
type explored struct {
	Broke     bool     `json:"broke"`
	Scenario  string   `json:"scenario"`
	Schedule  []string `json:"schedule"`
	Steps     int      `json:"steps"`
	Tried     int      `json:"tried"`
	Message   string   `json:"message"`
	Scenarios []struct {
		Name  string `json:"name"`
		Tried int    `json:"tried"`
	} `json:"scenarios"`
	Trace   []traceEvent `json:"trace"`
	Verdict struct {
		OK     bool     `json:"ok"`
		Broken []string `json:"broken"`
	} `json:"verdict"`
}

// traceEvent is one step of a handler's run, the fields a view draws.
type traceEvent struct {
	Seq       int    `json:"seq"`
	Step      int    `json:"step"`
	Lane      string `json:"lane"`
	Phase     string `json:"phase"`
	Op        string `json:"op"`
	SQL       string `json:"sql"`
	Line      int    `json:"line"`
	Outcome   string `json:"outcome"`
	Rows      int    `json:"rows"`
	Status    int    `json:"status"`
	ErrorName string `json:"error_name"`
	ErrorCode string `json:"error_code"`
	Message   string `json:"message"`
	ChargeID  string `json:"charge_id"`
	Rolled    bool   `json:"rolled_back"`
	Holder    string `json:"holder"`
}

func TestLabRuntimeExplorerBreaksNaive(t *testing.T) {
	ctx, _ := openLabRunner(t, 5000)
	src := handlerFile(t, "naive.js")
	labLoad(t, ctx, src)
	got := labJS[explored](t, ctx, `labRunner.explore()`)
	require.True(t, got.Broke, "%+v", got)
	assert.Equal(t, "simultaneous-retries", got.Scenario)
	assert.Contains(t, got.Verdict.Broken, "one-transfer-per-intent")
	assert.Contains(t, got.Verdict.Broken, "one-charge-per-intent")
	// Two attempts of seven steps each, one after the other: no shorter
	// schedule pays twice.
	assert.Equal(t, 14, got.Steps)
	assert.Len(t, got.Schedule, 14)
	assert.Positive(t, got.Tried)
	var pays int
	for _, e := range got.Trace {
		if e.Phase == "pay" {
			pays++
			assert.Equal(t, "charged", e.Outcome)
			assert.Equal(t, lineOf(t, src, "await pay("), e.Line, "the pay call's line in naive.js")
		}
	}
	assert.Equal(t, 2, pays, "the trace shows both payments")
}
