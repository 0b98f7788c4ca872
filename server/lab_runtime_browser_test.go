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
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
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
	t.Parallel()
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
	t.Logf("naive: broken in %s after %d schedules: %v", got.Scenario, got.Tried, got.Schedule)
}

// look-then-insert breaks only when the two attempts interleave: the
// explorer's counterexample has one switch, and each attempt's look ran
// before the other's insert.
func TestLabRuntimeExplorerBreaksLookThenInsert(t *testing.T) {
	t.Parallel()
	ctx, _ := openLabRunner(t, 5000)
	labLoad(t, ctx, handlerFile(t, "look-then-insert.js"))
	got := labJS[explored](t, ctx, `labRunner.explore()`)
	require.True(t, got.Broke, "%+v", got)
	assert.Equal(t, "simultaneous-retries", got.Scenario)
	assert.Contains(t, got.Verdict.Broken, "one-transfer-per-intent")
	looked := map[string]bool{}
	for _, e := range got.Trace {
		if e.Phase != "db" {
			continue
		}
		if strings.HasPrefix(e.SQL, "SELECT state") {
			assert.Equal(t, 0, e.Rows, "%s looked and found nothing", e.Lane)
			looked[e.Lane] = true
		}
		if strings.HasPrefix(e.SQL, "INSERT INTO idem_keys") {
			assert.True(t, looked["a1"] && looked["a2"], "both looked before %s inserted", e.Lane)
		}
	}
	// The sequential schedules keep the rules: the explorer had to go on
	// to schedules with a switch, and the shortest it found has one.
	switches := 0
	for i := 1; i < len(got.Schedule); i++ {
		if got.Schedule[i] != got.Schedule[i-1] {
			switches++
		}
	}
	assert.LessOrEqual(t, switches, 3, "%v", got.Schedule)
	assert.Greater(t, got.Tried, 2)
	t.Logf("look-then-insert: broken in %s after %d schedules, %d steps, %d switches: %v", got.Scenario, got.Tried, got.Steps, switches, got.Schedule)
}

// scoped keeps every rule in every scenario within the bound.
func TestLabRuntimeExplorerFindsNoBreakInScoped(t *testing.T) {
	t.Parallel()
	ctx, _ := openLabRunner(t, 5000)
	labLoad(t, ctx, handlerFile(t, "scoped.js"))
	got := labJS[explored](t, ctx, `labRunner.explore()`)
	require.False(t, got.Broke, "%+v", got)
	assert.Equal(t, "no break found within this bound", got.Message)
	names := []string{}
	for _, s := range got.Scenarios {
		names = append(names, s.Name)
		assert.Positive(t, s.Tried, s.Name)
	}
	assert.Equal(t, []string{"simultaneous-retries", "retry-after-lost-answer", "retry-after-another-transfer", "corrected-amount", "corrected-payee", "corrected-payer", "correction-while-running", "reordered-json",
		"another-customers-key", "crash-at-every-step", "stalled-first-attempt", "crash-then-late-retry", "crash-then-two-late-retries", "crash-then-corrected-amount", "network-answer-lost", "network-down", "retry-after-retention", "three-retries",
		"another-customers-key-then-retry", "other-customer-same-body", "two-transfers-one-balance", "refusal-then-top-up", "unknown-payee-then-opened", "missing-key", "repaired-body", "repaired-auth", "retry-three-ways", "malformed-keys", "longest-key",
		"reordered-after-answer", "day"}, names)
	t.Logf("scoped: %d schedules, no break", got.Tried)
}

// benchState is what start, step and inject answer.
type benchState struct {
	Steps    int  `json:"steps"`
	Done     bool `json:"done"`
	Attempts []struct {
		ID      string `json:"id"`
		State   string `json:"state"`
		Waiting bool   `json:"waiting"`
		Next    *struct {
			Op   string `json:"op"`
			SQL  string `json:"sql"`
			Line int    `json:"line"`
		} `json:"next"`
		Answer *struct {
			Status int    `json:"status"`
			Body   string `json:"body"`
		} `json:"answer"`
		Unawaited []struct {
			Op     string `json:"op"`
			Line   int    `json:"line"`
			Ran    bool   `json:"ran"`
			Failed string `json:"failed"`
		} `json:"unawaited"`
		Error *struct {
			Name    string `json:"name"`
			Message string `json:"message"`
			Line    int    `json:"line"`
		} `json:"error"`
	} `json:"attempts"`
	Trace []traceEvent `json:"trace"`
	DB    struct {
		Tables  map[string][]map[string]any `json:"tables"`
		Charges []map[string]any            `json:"charges"`
	} `json:"db"`
	Verdict *struct {
		OK     bool     `json:"ok"`
		Broken []string `json:"broken"`
	} `json:"verdict"`
}

func (s benchState) attempt(t testing.TB, id string) int {
	t.Helper()
	for i, a := range s.Attempts {
		if a.ID == id {
			return i
		}
	}
	t.Fatalf("no attempt %s in %+v", id, s)
	return -1
}

// twoRetries is the simultaneous retries of one transfer, for the bench.
const twoRetries = `{attempts: [
  {id: 'a1', intent: 'i1', customer: 'cust-1', key: '"k-1"', body: '{"from":"alice","to":"bob","amount":200000}', now: 1767258000000},
  {id: 'a2', intent: 'i1', customer: 'cust-1', key: '"k-1"', body: '{"from":"alice","to":"bob","amount":200000}', now: 1767258000000}]}`

// Stepping by hand: each attempt stops before each call and says which;
// a2's BEGIN waits while a1 holds the write lock; stepped to the end one
// after the other, the naive handler pays twice and the checker says so.
func TestLabRuntimeStepByHandPaysTwice(t *testing.T) {
	t.Parallel()
	ctx, _ := openLabRunner(t, 5000)
	src := handlerFile(t, "naive.js")
	labLoad(t, ctx, src)
	s := labJS[benchState](t, ctx, `labRunner.start(`+twoRetries+`)`)
	for _, a := range s.Attempts {
		require.NotNil(t, a.Next, a.ID)
		assert.Equal(t, "begin", a.Next.Op)
		assert.Equal(t, "BEGIN IMMEDIATE", a.Next.SQL)
		assert.Equal(t, lineOf(t, src, "await db.begin()"), a.Next.Line)
	}
	s = labJS[benchState](t, ctx, `labRunner.step('a1')`)
	a1 := s.attempt(t, "a1")
	assert.Equal(t, "get", s.Attempts[a1].Next.Op, "a1 stopped before its next call")
	s = labJS[benchState](t, ctx, `labRunner.step('a2')`)
	a2 := s.attempt(t, "a2")
	assert.True(t, s.Attempts[a2].Waiting, "a2's BEGIN waits for a1's write lock")
	last := s.Trace[len(s.Trace)-1]
	assert.Equal(t, "wait", last.Phase)
	assert.Equal(t, "a1", last.Holder)
	assert.Equal(t, 1, s.Steps, "a wait is not a step")

	for i := 0; i < 30 && s.Attempts[a1].Answer == nil; i++ {
		s = labJS[benchState](t, ctx, `labRunner.step('a1')`)
	}
	require.NotNil(t, s.Attempts[a1].Answer)
	assert.Equal(t, 201, s.Attempts[a1].Answer.Status)
	assert.False(t, s.Attempts[a2].Waiting, "the lock is free again")
	for i := 0; i < 30 && !s.Done; i++ {
		s = labJS[benchState](t, ctx, `labRunner.step('a2')`)
	}
	require.True(t, s.Done)
	assert.Equal(t, 201, s.Attempts[a2].Answer.Status)
	assert.Len(t, s.DB.Tables["transfers"], 2)
	assert.Len(t, s.DB.Charges, 2)
	require.NotNil(t, s.Verdict)
	assert.False(t, s.Verdict.OK)
	assert.Contains(t, s.Verdict.Broken, "one-transfer-per-intent")
}

// A call into pay that ran with no await on it is said, at its line, as
// one that ran; asking for its answer in any of JavaScript's ways (later,
// through Promise.all, .then or .catch) is not a slip.
func TestLabRuntimeSaysACallNobodyAwaited(t *testing.T) {
	t.Parallel()
	ctx, _ := openLabRunner(t, 5000)
	const paid = "  await pay({ from: t.from, to: t.to, amount: t.amount });"
	for _, c := range []struct {
		name, call string
		slip       bool
	}{
		{"no await", "  pay({ from: t.from, to: t.to, amount: t.amount });", true},
		{"awaited later", "  const charge = pay({ from: t.from, to: t.to, amount: t.amount }); await null; await charge;", false},
		{"Promise.all", "  await Promise.all([pay({ from: t.from, to: t.to, amount: t.amount })]);", false},
		{"then", "  await pay({ from: t.from, to: t.to, amount: t.amount }).then((c) => c);", false},
		{"catch", "  await pay({ from: t.from, to: t.to, amount: t.amount }).catch((e) => { throw e; });", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := changedHandler(t, "naive", [2]string{paid, c.call})
			labLoad(t, ctx, src)
			s := oneThenTheOther(t, ctx)
			a1 := s.Attempts[s.attempt(t, "a1")]
			require.NotNil(t, a1.Answer)
			assert.Equal(t, 201, a1.Answer.Status, "the call ran in its turn")
			if !c.slip {
				assert.Empty(t, a1.Unawaited)
				return
			}
			require.Len(t, a1.Unawaited, 1)
			assert.Equal(t, "pay", a1.Unawaited[0].Op)
			assert.True(t, a1.Unawaited[0].Ran)
			assert.Equal(t, lineOf(t, src, c.call), a1.Unawaited[0].Line)
		})
	}
}

// oneThenTheOther plays twoRetries on the bench, a1 to its answer and
// then a2 to its own, and answers the bench's state at the end.
func oneThenTheOther(t *testing.T, ctx context.Context) benchState {
	t.Helper()
	s := labJS[benchState](t, ctx, `labRunner.start(`+twoRetries+`)`)
	for i := 0; i < 30 && s.Attempts[s.attempt(t, "a1")].Answer == nil; i++ {
		s = labJS[benchState](t, ctx, `labRunner.step('a1')`)
	}
	for i := 0; i < 30 && !s.Done; i++ {
		s = labJS[benchState](t, ctx, `labRunner.step('a2')`)
	}
	require.True(t, s.Done)
	return s
}

// A claim's INSERT left without its await: the retry's INSERT fails with
// the ConstraintError that is the verdict, no one sees it, and the retry
// goes on and pays. The call is said as one that failed, with its error.
func TestLabRuntimeSaysAnErrorNobodySaw(t *testing.T) {
	t.Parallel()
	ctx, _ := openLabRunner(t, 5000)
	const claim = "    await db.run('INSERT INTO idem_keys"
	src := changedHandler(t, "unique", [2]string{claim, "    db.run('INSERT INTO idem_keys"})
	labLoad(t, ctx, src)
	s := oneThenTheOther(t, ctx)
	a2 := s.Attempts[s.attempt(t, "a2")]
	require.NotNil(t, a2.Answer)
	assert.Equal(t, 201, a2.Answer.Status, "the retry went on past its claim's error")
	require.Len(t, a2.Unawaited, 1)
	assert.Equal(t, "run", a2.Unawaited[0].Op)
	assert.Equal(t, "ConstraintError", a2.Unawaited[0].Failed)
	assert.Equal(t, lineOf(t, src, "db.run('INSERT INTO idem_keys"), a2.Unawaited[0].Line)
	a1 := s.Attempts[s.attempt(t, "a1")]
	require.Len(t, a1.Unawaited, 1, "a1's INSERT succeeded, unawaited")
	assert.Empty(t, a1.Unawaited[0].Failed)
}

// A crash inside the transaction: the attempt's connection closes, its
// transaction rolls back, it never answers, and the lock is free.
func TestLabRuntimeCrashRollsBack(t *testing.T) {
	t.Parallel()
	ctx, _ := openLabRunner(t, 5000)
	labLoad(t, ctx, handlerFile(t, "naive.js"))
	labJS[benchState](t, ctx, `labRunner.start(`+twoRetries+`)`)
	var s benchState
	for i := 0; i < 5; i++ { // begin, get, update, update, insert
		s = labJS[benchState](t, ctx, `labRunner.step('a1')`)
	}
	a1 := s.attempt(t, "a1")
	require.Equal(t, "commit", s.Attempts[a1].Next.Op, "a1 has written its transfer and not committed")
	s = labJS[benchState](t, ctx, `labRunner.inject('a1', 'crash')`)
	assert.Equal(t, "crashed", s.Attempts[a1].State)
	assert.Nil(t, s.Attempts[a1].Answer)
	last := s.Trace[len(s.Trace)-1]
	assert.Equal(t, "crash", last.Phase)
	assert.True(t, last.Rolled, "the open transaction rolled back")
	assert.Empty(t, s.DB.Tables["transfers"])
	assert.Equal(t, float64(1000000), s.DB.Tables["accounts"][0]["balance"])
	s = labJS[benchState](t, ctx, `labRunner.step('a2')`)
	a2 := s.attempt(t, "a2")
	assert.False(t, s.Attempts[a2].Waiting, "a2's BEGIN got the lock a1 held")
	assert.Equal(t, "get", s.Attempts[a2].Next.Op)
}

// An exception ends the attempt at its line; its transaction rolls back.
func TestLabRuntimeExceptionAtItsLine(t *testing.T) {
	t.Parallel()
	ctx, _ := openLabRunner(t, 5000)
	src := handlerFile(t, "throws.js")
	labLoad(t, ctx, src)
	labJS[benchState](t, ctx, `labRunner.start({attempts: [{id: 'a1', intent: 'i1', customer: 'c', key: '"k"', body: '{}', now: 0}]})`)
	labJS[benchState](t, ctx, `labRunner.step('a1')`)
	s := labJS[benchState](t, ctx, `labRunner.step('a1')`)
	require.True(t, s.Done)
	a := s.Attempts[0]
	assert.Equal(t, "threw", a.State)
	require.NotNil(t, a.Error)
	assert.Equal(t, "boom", a.Error.Message)
	assert.Equal(t, lineOf(t, src, "throw new Error"), a.Error.Line)
	last := s.Trace[len(s.Trace)-1]
	assert.Equal(t, "exception", last.Phase)
	assert.True(t, last.Rolled)
	assert.Empty(t, s.DB.Tables["transfers"])
}

// A hung handler is stopped after the step budget: the call rejects, the
// page goes on answering, and a fresh runner has the handler again.
func TestLabRuntimeHungHandlerIsStopped(t *testing.T) {
	// The budget is generous for a step on a busy machine (a step takes
	// well under a millisecond) and short for a test.
	ctx, _ := openLabRunner(t, 3000)
	labLoad(t, ctx, handlerFile(t, "hung.js"))
	labJS[benchState](t, ctx, `labRunner.start({attempts: [{id: 'a1', intent: 'i1', customer: 'c', key: '"k"', body: '{}', now: 0}]})`)
	got := labJS[map[string]any](t, ctx, `labRunner.step('a1').then(() => ({stopped: false}), (e) => ({stopped: !!e.stopped, message: e.message}))`)
	assert.Equal(t, true, got["stopped"], "%v", got)
	assert.Contains(t, got["message"], "stopped")
	// The page's own thread was never held: it answers at once.
	assert.Equal(t, 2, eval[int](t, ctx, `1 + 1`))
	assert.Equal(t, 2, eval[int](t, ctx, `labRunner.stats.workers`), "a fresh runner took the hung one's place")
	// The fresh runner has the hung handler loaded again; load another
	// and it runs.
	labLoad(t, ctx, handlerFile(t, "naive.js"))
	s := labJS[benchState](t, ctx, `labRunner.start(`+twoRetries+`)`)
	assert.Equal(t, "begin", s.Attempts[0].Next.Op)
	// The Stop button stops an explorer too: scoped never breaks, and
	// without bounds its walk would go on for hours.
	labLoad(t, ctx, handlerFile(t, "scoped.js"))
	stopped := labJS[map[string]any](t, ctx, `(() => {
	  const p = labRunner.explore({maxSchedules: 1e9, maxPreemptions: 1000, bound: 1000}).then(() => ({stopped: false}), (e) => ({stopped: !!e.stopped}));
	  setTimeout(() => labRunner.stop(), 300);
	  return p;
	})()`)
	assert.Equal(t, true, stopped["stopped"])
}

// The sandbox: a handler that tries the network, the page's storage, the
// DOM or another thread fails, and the probe server (another origin that
// would answer every request, CORS and all) never hears from it.
func TestLabRuntimeSandbox(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	probe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Content-Type", "text/javascript")
		w.Write([]byte("export const x = 1; self.probed = true;"))
	}))
	defer probe.Close()
	ctx, _ := openLabRunner(t, 5000)
	probes := []struct{ name, code string }{
		{"fetch", `const r = await fetch(PROBE + '/fetch'); return r.status;`},
		{"XMLHttpRequest", `const x = new XMLHttpRequest(); x.open('GET', PROBE + '/xhr', false); x.send(); return x.status;`},
		{"WebSocket", `const w = new WebSocket(PROBE.replace('http', 'ws') + '/ws'); await new Promise((r) => setTimeout(r, 300)); if (w.readyState !== 1) throw new Error('never opened'); return 'open';`},
		{"EventSource", `const e = new EventSource(PROBE + '/es'); await new Promise((r) => setTimeout(r, 300)); if (e.readyState !== 1) throw new Error('never opened'); return 'open';`},
		{"importScripts", `importScripts(PROBE + '/is.js'); return self.probed;`},
		{"import()", `const m = await import(PROBE + '/m.js'); return m.x;`},
		{"nested Worker", `const w = new Worker(PROBE + '/w.js'); await new Promise((r) => setTimeout(r, 300)); return typeof w;`},
		{"indexedDB", `return await new Promise((ok, no) => { const r = indexedDB.open('idemlab-probe'); r.onsuccess = () => ok('opened'); r.onerror = () => no(r.error); });`},
		{"caches", `const c = await caches.open('idemlab-probe'); return typeof c;`},
		{"navigator.storage", `const d = await navigator.storage.getDirectory(); return typeof d;`},
		{"localStorage", `localStorage.setItem('idemlab-probe', '1'); return 'set';`},
		{"document", `return document.title;`},
		{"BroadcastChannel", `new BroadcastChannel('idemlab').postMessage('x'); return 'sent';`},
	}
	for _, p := range probes {
		t.Run(p.name, func(t *testing.T) {
			src := `const PROBE = ` + quoteJS(probe.URL) + `;
async function transfer(req, db, pay) {
  try {
    const v = await (async () => { ` + p.code + ` })();
    return lab.json(200, { reached: true, value: String(v) });
  } catch (e) {
    return lab.json(200, { reached: false, error: String(e && e.message ? e.message : e) });
  }
}`
			labLoad(t, ctx, src)
			s := labJS[benchState](t, ctx, `labRunner.start({attempts: [{id: 'a1', intent: 'i1', customer: 'c', key: '"k"', body: '{}', now: 0}]})`)
			require.NotNil(t, s.Attempts[0].Answer, "%+v", s.Attempts[0])
			var got struct {
				Reached bool
				Value   string
				Error   string
			}
			require.NoError(t, json.Unmarshal([]byte(s.Attempts[0].Answer.Body), &got))
			assert.False(t, got.Reached, "%s reached: %s", p.name, got.Value)
			t.Logf("%s: %s", p.name, got.Error)
		})
	}
	assert.Zero(t, hits.Load(), "the probe server was reached")
}

// Losing the answer and timing out are marks on the attempt: it goes on
// and answers, and the client never reads what it answered.
func TestLabRuntimeLostAnswerAndTimeout(t *testing.T) {
	t.Parallel()
	ctx, _ := openLabRunner(t, 5000)
	labLoad(t, ctx, handlerFile(t, "scoped.js"))
	labJS[benchState](t, ctx, `labRunner.start(`+twoRetries+`)`)
	s := labJS[benchState](t, ctx, `labRunner.inject('a1', 'lose')`)
	assert.Equal(t, "fault", s.Trace[len(s.Trace)-1].Phase)
	assert.Equal(t, "lost", s.Trace[len(s.Trace)-1].Outcome)
	a1 := s.attempt(t, "a1")
	for i := 0; i < 30 && s.Attempts[a1].Answer == nil; i++ {
		s = labJS[benchState](t, ctx, `labRunner.step('a1')`)
	}
	require.NotNil(t, s.Attempts[a1].Answer)
	assert.Equal(t, 201, s.Attempts[a1].Answer.Status, "the attempt went on and answered")
	last := s.Trace[len(s.Trace)-1]
	assert.Equal(t, "answer", last.Phase)
	assert.Equal(t, "lost", last.Outcome, "but its client never read it")

	labJS[benchState](t, ctx, `labRunner.inject('a2', 'timeout')`)
	a2 := s.attempt(t, "a2")
	for i := 0; i < 30 && !s.Done; i++ {
		s = labJS[benchState](t, ctx, `labRunner.step('a2')`)
	}
	require.True(t, s.Done)
	assert.Equal(t, 201, s.Attempts[a2].Answer.Status, "the retry is answered with the stored answer")
	assert.Equal(t, s.Attempts[a1].Answer.Body, s.Attempts[a2].Answer.Body)
	assert.Equal(t, "timed-out", s.Trace[len(s.Trace)-1].Outcome)
	require.NotNil(t, s.Verdict)
	assert.True(t, s.Verdict.OK, "%v", s.Verdict.Broken)
	assert.Len(t, s.DB.Tables["transfers"], 1)
	assert.Len(t, s.DB.Charges, 1)
}

// The grader's malformed-keys and longest-key checks, played in the
// browser: naive takes any key (or none) and pays for each, so every
// malformed key is an answer the contract does not give, noted in words
// though no rule breaks; scoped refuses each with 400 and replays the
// longest valid key, and nothing is noted.
func TestLabRuntimeNotesTheContractsKeys(t *testing.T) {
	t.Parallel()
	ctx, _ := openLabRunner(t, 5000)
	type noted struct {
		Broke bool `json:"broke"`
		Notes []struct {
			Scenario  string   `json:"scenario"`
			Lanes     []string `json:"lanes"`
			Message   string   `json:"message"`
			MessageKo string   `json:"message_ko"`
		} `json:"notes"`
	}
	labLoad(t, ctx, handlerFile(t, "naive.js"))
	got := labJS[noted](t, ctx, `labRunner.explore({ only: ['malformed-keys'] })`)
	assert.False(t, got.Broke, "seven transfers of seven intents break no rule")
	if assert.Len(t, got.Notes, 7, "%+v", got.Notes) {
		for i, n := range got.Notes {
			assert.Equal(t, "malformed-keys", n.Scenario)
			assert.Equal(t, []string{fmt.Sprintf("a%d", i+1)}, n.Lanes)
			assert.Contains(t, n.Message, "was answered 201, and money may have moved; the contract says 400")
			assert.Contains(t, n.MessageKo, "계약은 400입니다")
		}
	}
	labLoad(t, ctx, handlerFile(t, "scoped.js"))
	for _, sc := range []string{"malformed-keys", "longest-key"} {
		got = labJS[noted](t, ctx, `labRunner.explore({ only: ['`+sc+`'] })`)
		assert.False(t, got.Broke, sc)
		assert.Empty(t, got.Notes, "%s: scoped answers as the contract says", sc)
	}
	// A handler that counts the quotes refuses the longest valid key.
	counts := strings.Replace(handlerFile(t, "scoped.js"), "const key = lab.parseKey(req.key);",
		"const key = req.key !== null && req.key.length > 255 ? null : lab.parseKey(req.key);", 1)
	require.NotEqual(t, handlerFile(t, "scoped.js"), counts)
	labLoad(t, ctx, counts)
	got = labJS[noted](t, ctx, `labRunner.explore({ only: ['longest-key'] })`)
	if assert.Len(t, got.Notes, 1) {
		assert.Contains(t, got.Notes[0].Message, "a valid key of exactly 255 characters (a1) was answered 400")
	}
}

// The day in the browser: a small day of the grader's kind of traffic
// against the student's own handler, in seeded random orders. naive pays
// the retries of the day's lost answers again; scoped keeps every rule.
func TestLabRuntimePlaysADay(t *testing.T) {
	t.Parallel()
	ctx, _ := openLabRunner(t, 5000)
	labLoad(t, ctx, handlerFile(t, "naive.js"))
	got := labJS[explored](t, ctx, `labRunner.explore({ only: ['day'] })`)
	require.True(t, got.Broke, "%+v", got.Message)
	assert.Equal(t, "day", got.Scenario)
	assert.Contains(t, got.Verdict.Broken, "one-transfer-per-intent")
	lanes := map[string]bool{}
	for _, e := range got.Trace {
		lanes[e.Lane] = true
	}
	assert.Greater(t, len(lanes), 8, "the day's attempts are drawn")
	labLoad(t, ctx, handlerFile(t, "scoped.js"))
	got = labJS[explored](t, ctx, `labRunner.explore({ only: ['day'] })`)
	assert.False(t, got.Broke, "%+v", got.Verdict.Broken)
	require.Len(t, got.Scenarios, 1)
	assert.Equal(t, 30, got.Scenarios[0].Tried, "thirty seeded orders of the day")
}

// TestLabRuntimeProblemIsLabServes: lab.problem writes in the browser the
// bytes it writes under idemlab lab serve (engine.Problem, what
// docs/lab-handler.md shows), so that a replay compared across the two,
// or a body a student reads in one and greps for in the other, agree.
func TestLabRuntimeProblemIsLabServes(t *testing.T) {
	t.Parallel()
	ctx, _ := openLabRunner(t, 5000)
	labLoad(t, ctx, `async function transfer(req, db, pay) {
  await db.get('SELECT 1');
  return req.body === 'a' ? lab.problem(409, 'Busy', 'retry <later>') : lab.problem(422, 'Other');
}`)
	labJS[benchState](t, ctx, `labRunner.start({attempts: [`+
		`{id: 'a1', intent: 'i1', customer: 'c', key: '"k"', body: 'a', now: 0},`+
		`{id: 'a2', intent: 'i2', customer: 'c', key: '"j"', body: 'b', now: 0}]})`)
	labJS[benchState](t, ctx, `labRunner.step('a1')`)
	s := labJS[benchState](t, ctx, `labRunner.step('a2')`)
	require.True(t, s.Done)
	want := map[string]*engine.Problem{
		"a1": {Type: "about:blank", Title: "Busy", Status: 409, Detail: "retry <later>"},
		"a2": {Type: "about:blank", Title: "Other", Status: 422},
	}
	for _, a := range s.Attempts {
		require.NotNil(t, a.Answer, a.ID)
		assert.Equal(t, string(want[a.ID].Response().Body), a.Answer.Body, a.ID)
	}
}

// TestLabRuntimePayRefusesWhatLabServeRefuses: the runner refuses the
// arguments pay cannot take as idemlab lab serve does (its test runs the
// same file): the amount given as a string was charged here, though the
// page's API reference says it is refused (the fifteenth simulated
// student's).
func TestLabRuntimePayRefusesWhatLabServeRefuses(t *testing.T) {
	t.Parallel()
	ctx, _ := openLabRunner(t, 5000)
	labLoad(t, ctx, handlerFile(t, "pay-args.js"))
	s := labJS[benchState](t, ctx, `labRunner.start({attempts: [{id: 'a1', intent: 'i1', customer: 'cust-1', key: '"k-1"', body: '{}', now: 1767258000000}]})`)
	for i := 0; i < 20 && !s.Done; i++ {
		s = labJS[benchState](t, ctx, `labRunner.step('a1')`)
	}
	require.True(t, s.Done)
	assert.JSONEq(t, `{"said":["PaymentError","PaymentError","PaymentError","PaymentError","PaymentError","charged"]}`, s.Attempts[0].Answer.Body)
}
