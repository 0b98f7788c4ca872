package jsrun_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/lab/jsrun"
)

// logTail collects what a handler logs, so a test can wait for a line.
type logTail struct {
	t     *testing.T
	mu    sync.Mutex
	lines []string
	seen  chan string
}

func newLogTail(t *testing.T) *logTail { return &logTail{t: t, seen: make(chan string, 100)} }

func (l *logTail) Write(p []byte) (int, error) {
	s := strings.TrimSpace(string(p))
	l.t.Log(s)
	l.mu.Lock()
	l.lines = append(l.lines, s)
	l.mu.Unlock()
	select {
	case l.seen <- s:
	default:
	}
	return len(p), nil
}

func (l *logTail) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// waitFor blocks until a logged line contains s.
func (l *logTail) waitFor(t *testing.T, s string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line := <-l.seen:
			if strings.Contains(line, s) {
				return
			}
		case <-timeout:
			t.Fatalf("no log line with %q", s)
		}
	}
}

// start loads src as handler.js on a fresh SQLite file and serves it on
// 127.0.0.1.
func start(t *testing.T, src string, o jsrun.Options) (string, *jsrun.Handler) {
	t.Helper()
	if o.DB == "" {
		o.DB = filepath.Join(t.TempDir(), "bank.db")
	}
	if o.Log == nil {
		o.Log = newLogTail(t)
	}
	h, err := jsrun.Load("handler.js", []byte(src), o)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); h.Close() })
	return srv.URL, h
}

type answer struct {
	status int
	header http.Header
	body   string
}

func do(t testing.TB, method, url, body string, header ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

// post sends body to POST /transfers: the handler's req.body.
func post(t *testing.T, base, body string, header ...string) answer {
	t.Helper()
	return do(t, "POST", base+"/transfers", body, header...)
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &m), s)
	return m
}

func TestConstraintAndSQLErrors(t *testing.T) {
	base, _ := start(t, `
const schema = 'CREATE TABLE keys (k TEXT PRIMARY KEY, n INTEGER UNIQUE)';
async function transfer(req, db, pay) {
  const tries = {
    primary: ['INSERT INTO keys (k, n) VALUES (?, ?)', 'a', 2],
    unique: ['INSERT INTO keys (k, n) VALUES (?, ?)', 'b', 1],
    check: ['INSERT INTO accounts (id, balance) VALUES (?, ?)', 'x', -1],
    notnull: ['INSERT INTO accounts (id, balance) VALUES (?, ?)', 'y', null],
    syntax: ['INSERT INTO nowhere VALUES (1)'],
    params: ['INSERT INTO keys (k) VALUES (?)'],
    type: ['INSERT INTO keys (k) VALUES (?)', {}],
  };
  await db.run('INSERT INTO keys (k, n) VALUES (?, ?)', 'a', 1);
  const out = {};
  for (const [name, args] of Object.entries(tries)) {
    try {
      await db.run(...args);
      out[name] = 'no error';
    } catch (e) {
      out[name] = { name: e.name, code: e.code, message: e.message, isError: e instanceof Error };
    }
  }
  return lab.json(200, out);
}`, jsrun.Options{})
	a := post(t, base, "")
	require.Equal(t, 200, a.status, a.body)
	got := decode(t, a.body)
	want := map[string]map[string]any{
		"primary": {"name": "ConstraintError", "code": "SQLITE_CONSTRAINT_PRIMARYKEY", "message": "UNIQUE constraint failed: keys.k"},
		"unique":  {"name": "ConstraintError", "code": "SQLITE_CONSTRAINT_UNIQUE", "message": "UNIQUE constraint failed: keys.n"},
		"check":   {"name": "ConstraintError", "code": "SQLITE_CONSTRAINT_CHECK", "message": "CHECK constraint failed: balance >= 0"},
		"notnull": {"name": "ConstraintError", "code": "SQLITE_CONSTRAINT_NOTNULL", "message": "NOT NULL constraint failed: accounts.balance"},
		"syntax":  {"name": "SQLError", "message": "no such table: nowhere"},
	}
	for name, w := range want {
		e, ok := got[name].(map[string]any)
		require.True(t, ok, "%s: %v", name, got[name])
		for k, v := range w {
			assert.Equal(t, v, e[k], "%s.%s", name, k)
		}
		assert.Equal(t, true, e["isError"], name)
		if w["code"] == nil {
			assert.Nil(t, e["code"], "%s: only a constraint error has a code", name)
		}
	}
	for _, name := range []string{"params", "type"} {
		e, ok := got[name].(map[string]any)
		require.True(t, ok, "%s: %v", name, got[name])
		assert.Equal(t, "SQLError", e["name"], name)
	}
}

func TestDBCallsResolveToRows(t *testing.T) {
	base, _ := start(t, `
async function transfer(req, db, pay) {
  const a = await db.run('INSERT INTO accounts (id, balance) VALUES (?, ?)', 'alice', 5);
  const b = await db.run('INSERT INTO accounts (id, balance) VALUES (?, ?)', 'bob', 7.0);
  const changed = await db.run('UPDATE accounts SET balance = balance + 1');
  const one = await db.get('SELECT id, balance FROM accounts WHERE id = ?', 'bob');
  const none = await db.get('SELECT id FROM accounts WHERE id = ?', 'carol');
  const all = await db.all('SELECT id, balance, NULL AS nada, 1.5 AS half FROM accounts ORDER BY id');
  return lab.json(200, { a, b, changes: changed.changes, one, none: none === undefined, all });
}`, jsrun.Options{})
	a := post(t, base, "")
	require.Equal(t, 200, a.status, a.body)
	assert.JSONEq(t, `{"a": {"changes": 1, "lastInsertRowid": 1}, "b": {"changes": 1, "lastInsertRowid": 2},
	  "changes": 2, "one": {"id": "bob", "balance": 8}, "none": true,
	  "all": [{"id": "alice", "balance": 6, "nada": null, "half": 1.5}, {"id": "bob", "balance": 8, "nada": null, "half": 1.5}]}`, a.body)
}

// TestBeginWaitsForTheOtherAttempt: one attempt takes the write lock and
// holds it across a slow payment; another attempt's begin() waits until
// the first commits, so it reads the first's row.
func TestBeginWaitsForTheOtherAttempt(t *testing.T) {
	logs := newLogTail(t)
	base, _ := start(t, `
const schema = 'CREATE TABLE marks (who TEXT)';
async function transfer(req, db, pay) {
  await db.begin();
  if (req.body === 'hold') {
    await db.run("INSERT INTO marks VALUES ('holder')");
    lab.log('holding the lock');
    await pay({ from: 'a', to: 'b', amount: 1 });   // slow: the network's delay
    await db.commit();
    return lab.json(200, 'committed');
  }
  const seen = await db.get('SELECT count(*) AS n FROM marks');
  await db.commit();
  return lab.json(200, seen.n);
}`, jsrun.Options{Log: logs, PayDelay: 2 * time.Second, Budget: 30 * time.Second})
	held := make(chan answer, 1)
	go func() { held <- post(t, base, "hold") }()
	logs.waitFor(t, "holding the lock")
	waiter := post(t, base, "wait")
	assert.Equal(t, 200, waiter.status, waiter.body)
	assert.Equal(t, "1", waiter.body, "begin() waited for the holder's commit")
	assert.Equal(t, `"committed"`, (<-held).body)
}

// TestExceptionRollsBackAndNamesTheLine: a handler that throws inside its
// transaction gets 500 naming its line, and nothing it wrote stays.
func TestExceptionRollsBackAndNamesTheLine(t *testing.T) {
	logs := newLogTail(t)
	base, _ := start(t, `async function transfer(req, db, pay) {
  await db.begin();
  await db.run("INSERT INTO accounts (id, balance) VALUES ('ghost', 1)");
  if (req.body === 'throw') null.boom;
  if (req.body === 'reject') await db.run('SELECT * FROM nowhere');
  await db.commit();
  return lab.json(200, 'kept');
}`, jsrun.Options{Log: logs})
	for body, line := range map[string]string{"throw": "line 4", "reject": "line 5"} {
		a := post(t, base, body)
		assert.Equal(t, 500, a.status)
		assert.Equal(t, "application/problem+json", a.header.Get("Content-Type"))
		assert.Contains(t, decode(t, a.body)["detail"], "handler.js "+line, body)
		assert.Equal(t, 404, do(t, "GET", base+"/accounts/ghost", "").status, "%s: the open transaction was rolled back", body)
	}
	assert.Contains(t, logs.all(), "TypeError")
	assert.Contains(t, logs.all(), "no such table: nowhere")
	a := post(t, base, "commit")
	assert.Equal(t, 200, a.status, "the connection is usable after a rollback")
	assert.Equal(t, 200, do(t, "GET", base+"/accounts/ghost", "").status)
}

// TestEndlessLoopIsInterrupted: while (true) {} inside a transaction is
// stopped by the budget with 500; the server keeps answering, and the lock
// the loop held is released.
func TestEndlessLoopIsInterrupted(t *testing.T) {
	base, _ := start(t, `async function transfer(req, db, pay) {
  await db.begin();
  await db.run('INSERT INTO accounts (id, balance) VALUES (?, 1)', req.body);
  if (req.body === 'loop') while (true) {}
  if (req.body === 'hang') await new Promise(() => {});
  await db.commit();
  return lab.json(200, 'done');
}`, jsrun.Options{Budget: 300 * time.Millisecond})
	var wg sync.WaitGroup
	loops := make([]answer, 2)
	for i := range loops {
		wg.Add(1)
		go func() { defer wg.Done(); loops[i] = post(t, base, "loop") }()
	}
	assert.Equal(t, 404, do(t, "GET", base+"/accounts/nobody", "").status, "the server answers while the loops run")
	wg.Wait()
	for _, a := range loops {
		assert.Equal(t, 500, a.status)
		assert.Contains(t, decode(t, a.body)["detail"], "time budget", a.body)
	}
	a := post(t, base, "hang")
	assert.Equal(t, 500, a.status)
	assert.Contains(t, decode(t, a.body)["detail"], "nothing will settle", a.body)
	a = post(t, base, "after")
	assert.Equal(t, 200, a.status, "the lock is free again: %s", a.body)
	assert.Equal(t, 404, do(t, "GET", base+"/accounts/loop", "").status, "the loop's insert was rolled back")
}

// TestAllocatingHandlerIsStopped: a handler that keeps allocating inside
// a transaction is stopped once the heap passes the budget, answered 500
// with the reason, its transaction rolled back, and the endpoint answers
// the next request.
func TestAllocatingHandlerIsStopped(t *testing.T) {
	base, _ := start(t, `async function transfer(req, db, pay) {
  await db.begin();
  await db.run('INSERT INTO accounts (id, balance) VALUES (?, 1)', req.body);
  const hoard = [];
  if (req.body === 'hoard') for (;;) hoard.push(new Array(100000).fill(hoard.length));
  await db.commit();
  return lab.json(200, 'done');
}`, jsrun.Options{MaxHeap: 64 << 20, Budget: time.Minute})
	a := post(t, base, "hoard")
	assert.Equal(t, 500, a.status)
	assert.Contains(t, decode(t, a.body)["detail"], "memory passed its budget of 64 MiB", a.body)
	a = post(t, base, "after")
	assert.Equal(t, 200, a.status, "the endpoint answers after the stop: %s", a.body)
	assert.Equal(t, 404, do(t, "GET", base+"/accounts/hoard", "").status, "the hoarder's insert was rolled back")
}

func TestPayDedupsByKey(t *testing.T) {
	base, h := start(t, `async function transfer(req, db, pay) {
  const first = await pay({ from: 'a', to: 'b', amount: 100, key: 'c1:k1' });
  const again = await pay({ from: 'a', to: 'b', amount: 100, key: 'c1:k1' });
  const other = await pay({ from: 'a', to: 'b', amount: 100, key: 'c2:k1' });
  const plain1 = await pay({ from: 'a', to: 'b', amount: 100 });
  const plain2 = await pay({ from: 'a', to: 'b', amount: 100 });
  let changed, bad;
  try { await pay({ from: 'a', to: 'b', amount: 200, key: 'c1:k1' }); } catch (e) { changed = e.name + ': ' + e.message; }
  try { await pay({ from: 'a', amount: -1 }); } catch (e) { bad = e.name; }
  return lab.json(200, { first, again, other: other.replayed, plains: plain1.charge_id !== plain2.charge_id, changed, bad });
}`, jsrun.Options{PayDelay: -1})
	a := post(t, base, "")
	require.Equal(t, 200, a.status, a.body)
	got := decode(t, a.body)
	first, again := got["first"].(map[string]any), got["again"].(map[string]any)
	assert.Equal(t, false, first["replayed"])
	assert.Equal(t, true, again["replayed"])
	assert.Equal(t, first["charge_id"], again["charge_id"])
	assert.Equal(t, float64(100), again["amount"])
	assert.Equal(t, false, got["other"], "another customer's key is another charge")
	assert.Equal(t, true, got["plains"], "without a key every call is a charge")
	assert.Contains(t, got["changed"], "PaymentError: ")
	assert.Equal(t, "PaymentError", got["bad"])
	charges, calls, err := h.Payments()
	require.NoError(t, err)
	assert.Equal(t, int64(4), charges)
	assert.Equal(t, int64(5), calls)
}

// TestPaymentsSurviveARollback: a charge is the network's, in a file of
// its own: the handler's rollback does not undo it.
func TestPaymentsSurviveARollback(t *testing.T) {
	base, h := start(t, `async function transfer(req, db, pay) {
  await db.begin();
  await pay({ from: 'a', to: 'b', amount: 1, key: 'k' });
  await db.rollback();
  return lab.json(200, 'rolled back');
}`, jsrun.Options{PayDelay: -1})
	require.Equal(t, 200, post(t, base, "").status)
	charges, _, err := h.Payments()
	require.NoError(t, err)
	assert.Equal(t, int64(1), charges)
}

func TestRequestAndAnswer(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_123)
	base, _ := start(t, `async function transfer(req, db, pay) {
  if (req.body === 'bad') return { status: 'ok' };
  return { status: 202, headers: { 'X-Req': JSON.stringify(req), 'Retry-After': 1 }, body: 'raw bytes' };
}`, jsrun.Options{Now: func() time.Time { return now }})
	a := post(t, base, `{"x": 1}`, "X-Customer-ID", "shop", "Idempotency-Key", `"a"`, "Idempotency-Key", `"b"`, "Content-Type", "application/json")
	assert.Equal(t, 202, a.status)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(a.header.Get("X-Req")), &got))
	first, _ := got["attempt"].(string)
	assert.Regexp(t, `^a1\.[0-9a-f]{4}$`, first, "the attempt's number, and the process's tag")
	assert.Equal(t, "raw bytes", a.body)
	assert.Equal(t, "1", a.header.Get("Retry-After"))
	assert.JSONEq(t, `{"method": "POST", "route": "/transfers", "customer": "shop", "key": "\"a\", \"b\"",
	  "body": "{\"x\": 1}", "contentType": "application/json", "attempt": "`+first+`", "now": 1700000000123}`, a.header.Get("X-Req"))
	a = post(t, base, "", "X-Customer-ID", "")
	var req map[string]any
	require.NoError(t, json.Unmarshal([]byte(a.header.Get("X-Req")), &req))
	assert.Nil(t, req["customer"], "an empty customer is a missing one")
	assert.Nil(t, req["key"])
	assert.Equal(t, "a2"+strings.TrimPrefix(first, "a1"), req["attempt"])
	a = post(t, base, "bad")
	assert.Equal(t, 500, a.status)
	assert.Contains(t, a.body, "status")
}

func TestLabHelpers(t *testing.T) {
	base, _ := start(t, `async function transfer(req, db, pay) {
  return lab.json(200, {
    key: lab.parseKey('"order-1"'), bare: lab.parseKey('order-1'), list: lab.parseKey('"a", "b"'),
    empty: lab.parseKey('""'), params: lab.parseKey('"a";v=1'), none: lab.parseKey(null),
    long: lab.parseKey('"' + 'k'.repeat(255) + '"') !== null, tooLong: lab.parseKey('"' + 'k'.repeat(256) + '"'),
    transfer: lab.parseTransfer('{"to": "bob", "amount": 5, "from": "alice"}'),
    stringAmount: lab.parseTransfer('{"from": "alice", "to": "bob", "amount": "5"}'),
    same: lab.parseTransfer('{"from": "alice", "to": "alice", "amount": 5}'),
    extra: lab.parseTransfer('{"from": "alice", "to": "bob", "amount": 5, "memo": "x"}'),
    canonical: lab.canonical('{\n  "to": "bob",\n  "amount": 5,\n  "from": "alice"\n}'),
    canonicalOther: lab.canonical('{"b": [1, {"d": 1, "c": 2}], "a": 1e2}'),
    canonicalBad: lab.canonical('{'),
    sha: lab.sha256('abc'),
    json: lab.json(201, { a: 1 }, { 'X-A': 'b' }),
    problem: lab.problem(409, 'Busy', 'retry', { 'Retry-After': '1' }),
  });
}`, jsrun.Options{})
	a := post(t, base, "")
	require.Equal(t, 200, a.status, a.body)
	assert.Equal(t, "application/json", a.header.Get("Content-Type"))
	assert.JSONEq(t, `{
	  "key": "order-1", "bare": null, "list": null, "empty": null, "params": null, "none": null,
	  "long": true, "tooLong": null,
	  "transfer": {"from": "alice", "to": "bob", "amount": 5},
	  "stringAmount": null, "same": null, "extra": null,
	  "canonical": "{\"amount\":5,\"from\":\"alice\",\"to\":\"bob\"}",
	  "canonicalOther": "{\"a\":100,\"b\":[1,{\"c\":2,\"d\":1}]}",
	  "canonicalBad": null,
	  "sha": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	  "json": {"status": 201, "headers": {"Content-Type": "application/json", "X-A": "b"}, "body": "{\"a\":1}"},
	  "problem": {"status": 409, "headers": {"Content-Type": "application/problem+json", "Retry-After": "1"},
	              "body": "{\"type\":\"about:blank\",\"title\":\"Busy\",\"status\":409,\"detail\":\"retry\"}"}
	}`, a.body)
}

func TestSandbox(t *testing.T) {
	base, _ := start(t, `async function transfer(req, db, pay) {
  return lab.json(200, [typeof require, typeof fetch, typeof process, typeof setTimeout, typeof XMLHttpRequest, typeof import_meta]);
}`, jsrun.Options{})
	a := post(t, base, "")
	require.Equal(t, 200, a.status, a.body)
	assert.JSONEq(t, `["undefined", "undefined", "undefined", "undefined", "undefined", "undefined"]`, a.body)
}

// TestTopLevelStateDoesNotCarryOver: every attempt runs the file afresh,
// so a counter at the top level is new each time.
func TestTopLevelStateDoesNotCarryOver(t *testing.T) {
	base, _ := start(t, `let seen = 0;
async function transfer(req, db, pay) { seen++; return lab.json(200, seen); }`, jsrun.Options{})
	assert.Equal(t, "1", post(t, base, "").body)
	assert.Equal(t, "1", post(t, base, "").body)
}

func TestContractRoutes(t *testing.T) {
	base, _ := start(t, `const retentionSeconds = 86400;
async function transfer(req, db, pay) { return lab.json(200, req.body.length); }`, jsrun.Options{})
	a := do(t, "GET", base+"/", "")
	assert.Equal(t, 200, a.status)
	assert.Equal(t, float64(86400), decode(t, a.body)["retention_seconds"])

	json := []string{"Content-Type", "application/json"}
	for _, c := range []struct {
		method, path, body string
		header             []string
		status             int
		want               string
	}{
		{"PUT", "/accounts/alice", `{"balance": 1000000}`, json, 200, `{"id":"alice","balance":1000000}`},
		{"PUT", "/accounts/alice", `{"balance": 5}`, nil, 200, `{"id":"alice","balance":5}`},
		{"GET", "/accounts/alice", "", nil, 200, `{"id":"alice","balance":5}`},
		{"PUT", "/accounts/bob", `{"balance": 0}`, json, 200, `{"id":"bob","balance":0}`},
		{"PUT", "/accounts/b%20b", `{"balance": 1}`, json, 400, ""},
		{"PUT", "/accounts/alice", `{"balance": "1"}`, json, 400, ""},
		{"PUT", "/accounts/alice", `{"balance": -1}`, json, 400, ""},
		{"PUT", "/accounts/alice", `{"balance": 1.5}`, json, 400, ""},
		{"PUT", "/accounts/alice", `{"balance": 1, "x": 2}`, json, 400, ""},
		{"PUT", "/accounts/alice", `{"balance": 1}`, []string{"Content-Type", "text/plain"}, 415, ""},
		{"GET", "/accounts/alice", "", nil, 200, `{"id":"alice","balance":5}`},
		{"GET", "/accounts/nobody", "", nil, 404, ""},
		{"DELETE", "/accounts/alice", "", nil, 405, ""},
		{"GET", "/transfers", "", nil, 405, ""},
		{"POST", "/", "", nil, 405, ""},
		{"GET", "/elsewhere", "", nil, 404, ""},
		{"POST", "/transfers", strings.Repeat("a", 64<<10), nil, 200, "65536"},
		{"POST", "/transfers", strings.Repeat("a", 64<<10+1), nil, 413, ""},
		{"PUT", "/accounts/alice", strings.Repeat(" ", 64<<10+1), json, 413, ""},
	} {
		a := do(t, c.method, base+c.path, c.body, c.header...)
		assert.Equal(t, c.status, a.status, "%s %s %.40s: %s", c.method, c.path, c.body, a.body)
		if c.want != "" {
			assert.Equal(t, c.want, a.body, "%s %s", c.method, c.path)
		}
		if a.status >= 400 {
			assert.Equal(t, "application/problem+json", a.header.Get("Content-Type"), "%s %s", c.method, c.path)
		}
	}

	base, _ = start(t, `async function transfer() {}`, jsrun.Options{})
	a = do(t, "GET", base+"/", "")
	assert.NotContains(t, decode(t, a.body), "retention_seconds", "nothing declared, nothing published")
}

// TestSchemaRunsOnce: the lab's tables and the schema are created on a
// new file; a restart on the same file keeps its data and does not run the
// schema again.
func TestSchemaRunsOnce(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bank.db")
	src := `const schema = 'CREATE TABLE mine (x INTEGER)';
async function transfer(req, db) {
  await db.run('INSERT INTO mine VALUES (1)');
  return lab.json(200, (await db.get('SELECT count(*) AS n FROM mine')).n);
}`
	for _, want := range []string{"1", "2"} {
		h, err := jsrun.Load("handler.js", []byte(src), jsrun.Options{DB: db, Log: newLogTail(t)})
		require.NoError(t, err)
		srv := httptest.NewServer(h)
		assert.Equal(t, want, post(t, srv.URL, "").body)
		srv.Close()
		require.NoError(t, h.Close())
	}
	_, err := jsrun.Load("handler.js", []byte(`const schema = 'CREATE TABL x';
async function transfer() {}`), jsrun.Options{DB: filepath.Join(t.TempDir(), "new.db"), Log: newLogTail(t)})
	require.ErrorContains(t, err, "its schema failed")
}

// TestAHandlerDeclaredTwiceIsRefused: a file with two declarations of
// transfer (a handler pasted above another) would serve the last one
// without a word; it is refused at load, naming the name and the line of
// the declaration that would have run.
func TestAHandlerDeclaredTwiceIsRefused(t *testing.T) {
	mine := "async function transfer(req, db, pay) {\n  return lab.json(201, { mine: true });\n}\n"
	other := "// the starter\nasync function transfer(req, db, pay) {\n  return lab.json(201, { starter: true });\n}\n"
	_, err := jsrun.Load("handler.js", []byte(mine+other), jsrun.Options{DB: filepath.Join(t.TempDir(), "bank.db"), Log: newLogTail(t)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "handler.js declares transfer twice (again at line 5): only the last declaration counts")

	// One declaration, and a helper of the same name inside it (another
	// scope), load.
	url, _ := start(t, "async function transfer(req, db, pay) {\n  function transfer() {}\n  return lab.json(201, { mine: true });\n}\n", jsrun.Options{})
	assert.Equal(t, 201, post(t, url, `{"from":"alice","to":"bob","amount":1}`, "X-Customer-ID", "c1").status)
}

// TestPayRefusesWhatTheBrowserRefuses: the arguments pay cannot take are
// refused with PaymentError, the amount given as a string among them,
// as the browser's runner refuses them (web/lab/testdata/pay-args.js,
// which the browser's test runs too).
func TestPayRefusesWhatTheBrowserRefuses(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "web", "lab", "testdata", "pay-args.js"))
	require.NoError(t, err)
	base, _ := start(t, string(src), jsrun.Options{PayDelay: -1})
	a := post(t, base, "")
	require.Equal(t, 200, a.status, a.body)
	assert.JSONEq(t, `{"said":["PaymentError","PaymentError","PaymentError","PaymentError","PaymentError","charged"]}`, a.body)
}
