// runner.js runs a student's own handler (docs/lab-handler.md) in its own
// dedicated Worker: the same engine module as the playground's (Go, the
// real SQLite on the memdb VFS, the checker), the student's file, and the
// scheduler that makes every db.* and pay call a step.
//
// The sandbox. The server sends this file with its own Content-Security-
// Policy (server/web.go): default-src 'none' and script-src with only
// 'unsafe-eval' (the student's file is evaluated) and 'wasm-unsafe-eval'.
// A dedicated worker loaded from a URL is governed by its response's
// policy, not the page's, so here fetch, XMLHttpRequest, WebSocket,
// EventSource, importScripts, import() and nested workers can reach
// nothing, whatever the student's code tries, and nothing of the page's
// own policy has to be loosened. That is why the page, not this worker,
// fetches the module and Go's wasm_exec.js and hands them over (init):
// the worker could not fetch them itself. A worker has no DOM. What a CSP
// does not stop is storage: a worker of the page's origin can open the
// page's IndexedDB and Cache Storage, so lockDown() removes those (and
// the network's constructors again, for a host that serves this file
// without the header, as a static export may) before the student's file
// runs. An opaque-origin sandboxed iframe around the worker would take
// the storage away too, but it needs the page's CSP to allow frames and
// a second document per page; the header and the lockdown need neither.
//
// Messages in:  {type: 'init', module, wasmExec}     the compiled module and Go's loader
//               {id, fn, args}                      a call (see CALLS)
// Messages out: {type: 'ready'} | {type: 'failed', error}
//               {type: 'result', id, value} | {type: 'error', id, error}
//               {type: 'beat', tried}              the explorer is alive (the
//                                                  page's watchdog stops a hung handler)
//
// The trace: one event per step, the same shape on the bench and in the
// explorer's kept counterexample, typed fields for the race view (a view
// never parses message, which is SQLite's or the handler's words):
//   seq, step (the schedule's step count when it happened), lane (the
//   attempt), intent, customer, key (the header as sent), now (req.now);
//   phase: 'start' | 'db' | 'pay' | 'wait' | 'answer' | 'exception' |
//          'crash' | 'fault';
//   op ('run', 'get', 'all', 'begin', 'commit', 'rollback', 'pay'), sql,
//   params, line (the call's line in the student's file; 0 where the
//   explorer did not trace);
//   outcome: 'ok' | 'constraint' | 'error' (a db call), 'charged' |
//          'replayed' (pay), 'busy' (wait: holder is the attempt holding
//          the write lock), 'answered' | 'lost' | 'timed-out' (answer),
//          'threw', 'crashed', 'lost' | 'timed-out' (fault);
//   rows (changed by run, found by get/all), changed (by a get/all
//   given a statement that writes: INSERT … RETURNING), last_insert_rowid,
//   error_name, error_code ('SQLITE_CONSTRAINT_PRIMARYKEY', …), message,
//   charge_id, amount, replayed, status (the answer's), rolled_back (the
//   attempt's connection had a transaction open when it ended);
//   slip ('where-missing', 'write-given-to-get'): a db call that was
//   one of the slips the lab watches for;
//   key_rows (a db call's, traced runs only): the committed rows of the
//   student's own tables that hold the attempt's key after the call,
//   [{table, row, by}] (keyRows), by the attempt whose call made the row
//   as it stands ('' when it was there before the run).
'use strict';

const send = self.postMessage.bind(self);
let api = null; // the engine's functions, taken off the global scope

// --- the sandbox ---------------------------------------------------------------

// BLOCKED are the globals the student's code must not reach: the network
// (a second line behind the CSP), the page's storage, other threads.
const BLOCKED = [
  'fetch',
  'XMLHttpRequest',
  'WebSocket',
  'EventSource',
  'WebTransport',
  'importScripts',
  'indexedDB',
  'caches',
  'Worker',
  'SharedWorker',
  'BroadcastChannel',
  'localStorage',
  'sessionStorage',
  'cookieStore',
  'IDBFactory',
  'CacheStorage',
];

// lock makes name unreachable on obj and every prototype above it.
function lock(obj, name) {
  for (let o = obj; o; o = Object.getPrototypeOf(o)) {
    if (!Object.prototype.hasOwnProperty.call(o, name)) continue;
    try {
      delete o[name];
    } catch {
      // not configurable: shadowed below
    }
    if (Object.prototype.hasOwnProperty.call(o, name)) {
      try {
        Object.defineProperty(o, name, { value: undefined, writable: false, configurable: false });
      } catch {
        // nothing more a script can do
      }
    }
  }
  try {
    Object.defineProperty(obj, name, { value: undefined, writable: false, configurable: false });
  } catch {
    // already locked
  }
}

function lockDown() {
  for (const name of BLOCKED) lock(self, name);
  if (self.navigator) {
    for (const name of ['storage', 'locks', 'serviceWorker']) lock(self.navigator, name);
  }
}

// --- the student's file --------------------------------------------------------

const FILE = 'handler.js';

// lineOffset is how many lines new Function puts before the body: V8
// counts the body's lines from there.
const lineOffset = (() => {
  const stack = new Function('return new Error().stack;\n//# sourceURL=' + FILE)();
  const m = /handler\.js:(\d+):/.exec(stack || '');
  return m ? Number(m[1]) - 1 : 2;
})();

// lineOf is the student's line that the stack's innermost frame in their
// file is at, or 0.
function lineOf(stack) {
  const m = /handler\.js:(\d+):\d+/.exec(String(stack || ''));
  return m ? Number(m[1]) - lineOffset : 0;
}

// callerLine is the student's line of the call being made: the innermost
// frame in their file, unless the call's SQL is written further out. A
// helper of the student's (async function q(sql, ...args) { return
// db.run(sql, ...args); }) is the innermost frame of every statement, so
// the frame whose line (or the next, where the SQL starts on its own
// line) holds the statement's first words is the one the student means.
function callerLine(sql) {
  const stack = String(new Error().stack || '');
  const lines = [];
  for (const m of stack.matchAll(/handler\.js:(\d+):\d+/g)) lines.push(Number(m[1]) - lineOffset);
  if (!lines.length) return 0;
  const probe = sqlProbe(sql);
  if (probe && lines.length > 1) {
    const at = lines.find((l) => spaced(sourceLines.slice(l - 1, l + 1).join(' ')).includes(probe));
    if (at) return at;
  }
  return lines[0];
}

// sqlProbe is a statement's first words, spaces collapsed, for finding
// where it is written.
function sqlProbe(text) {
  return spaced(text).slice(0, 24);
}

function spaced(text) {
  return String(text || '')
    .replace(/\s+/g, ' ')
    .trim();
}

// sourceLines are the lines of the file last loaded (callerLine).
let sourceLines = [];

// describe turns what a handler threw into {name, message, line}. An
// error a db call or pay rejected with was made here, so its stack has no
// line of the student's: its line is the call's (callLines).
function describe(e) {
  if (e && typeof e === 'object') {
    const line = lineOf(e.stack) || callLines.get(e) || 0;
    return { name: String(e.name || 'Error'), message: String(e.message || e), line, code: e.code || '' };
  }
  return { name: 'Error', message: String(e), line: 0, code: '' };
}

// callLines is the student's line of each call whose Promise was rejected
// (settle), by the error it was rejected with.
const callLines = new WeakMap();

// syntaxLine finds the line of a syntax error in the body a handler file
// was compiled with: V8's SyntaxError from new Function says no line, but
// the same text parsed as a script (a timer's string, allowed by the
// worker's 'unsafe-eval') reports the error's position to the worker's
// error event. The function expression is only parsed, never called.
// It answers 0 when the browser says nothing.
function syntaxLine(body) {
  return new Promise((resolve) => {
    let done = false;
    const finish = (line) => {
      if (done) return;
      done = true;
      self.removeEventListener('error', onError);
      resolve(line);
    };
    const onError = (ev) => {
      ev.preventDefault();
      // The script's first line is the wrapper's.
      finish(ev.lineno > 1 ? ev.lineno - 1 : 0);
    };
    self.addEventListener('error', onError);
    setTimeout('(function (lab) {\n' + body + '\n})');
    setTimeout(() => finish(0), 100);
  });
}

// declaredTwice finds a name the file declares twice, most often a
// function: JavaScript lets the last declaration of a function win
// without a word, so a handler pasted above the starter's never runs and
// the starter's is graded in its place. In strict code a block's
// declarations must differ, so the file is compiled once more that way,
// only to ask. It answers the error said at the second declaration's
// line (code 'declared-twice', with the name and the first one's line),
// or null.
async function declaredTwice(source) {
  const text = '"use strict"; {\n' + source + '\n}';
  let name = '';
  try {
    new Function('lab', text);
    return null;
  } catch (e) {
    const m = e instanceof SyntaxError && /'([^']+)' has already been declared|redeclaration of (?:\w+ )?(\S+)/.exec(e.message);
    if (!m) return null;
    name = m[1] || m[2];
  }
  // The strict text's first line is its own.
  const line = Math.max(0, (await syntaxLine(text)) - 1);
  const esc = name.replace(/[$]/g, '\\$');
  const decl = new RegExp('\\bfunction\\s*\\*?\\s*' + esc + '\\s*\\(|\\b(?:const|let|var|class)\\s+' + esc + '\\b');
  const first =
    String(source)
      .split('\n')
      .findIndex((l) => decl.test(l)) + 1;
  return {
    name: 'SyntaxError',
    message:
      name +
      ' is declared twice' +
      (first && first !== line ? ' (first at line ' + (first - shownAt) + ')' : '') +
      ': only the last declaration counts, so the code of the first never runs; keep one',
    line,
    code: 'declared-twice',
    what: name,
    first: first !== line ? first : 0,
  };
}

// helper runs one of the global lab's helpers: the engine's own parsers,
// not steps. They are pure, and the explorer asks the same few thousands
// of times, so each answer is kept (a copy is handed out: the handler may
// change what it got).
const memo = new Map();
function helper(name, arg) {
  const k = name + '\u0000' + String(arg ?? '');
  let text = memo.get(k);
  if (text === undefined) {
    text = api.labHelper(name, String(arg ?? ''));
    if (memo.size > 4096) memo.clear();
    memo.set(k, text);
  }
  const r = JSON.parse(text);
  if (r.err) throw new Error(r.err.message);
  return r.ok;
}

const labGlobal = Object.freeze({
  parseKey: (raw) => (raw === null || raw === undefined ? null : helper('parseKey', raw)),
  parseTransfer: (body) => helper('parseTransfer', body),
  canonical: (body) => helper('canonical', body),
  sha256: (text) => helper('sha256', text),
  json: (status, value, headers) => ({
    status,
    headers: Object.assign({ 'Content-Type': 'application/json' }, headers || {}),
    body: JSON.stringify(value),
  }),
  // The bytes idemlab lab serve writes (engine.Problem in Go): its type,
  // detail left out when not given, and <, >, &, U+2028 and U+2029
  // escaped as Go's encoding/json escapes them.
  problem: (status, title, detail, headers) =>
    built({
      status,
      headers: Object.assign({ 'Content-Type': 'application/problem+json' }, headers || {}),
      body: JSON.stringify(
        detail === undefined || detail === null
          ? { type: 'about:blank', title: String(title), status }
          : { type: 'about:blank', title: String(title), status, detail: String(detail) },
      ).replace(/[<>&\u2028\u2029]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')),
    }),
  log: (...values) => {
    if (current)
      current.logs.push({
        attempt: current.attempt,
        line: callerLine(),
        text: values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(' '),
      });
  },
});

// current is the run whose attempt is running now (for lab.log).
let current = null;

// built keeps a refusal lab.problem made with the attempt that made it,
// to see as it answers whether the refusal was returned (unreturned).
function built(answer) {
  const a = current && current.attempts.find((x) => x.id === current.attempt);
  if (a && !a.ended && a.built.length < 8) a.built.push({ answer, line: current.traced ? callerLine() : 0 });
  return answer;
}

let handler = null; // {transfer, schema, retentionSeconds}
let dbId = '';

// shownAt: how many lines the file has before the handler's box begins
// (the tables, composed above it): what the handler threw is said to the
// checker at its line in the box, as the bench says it.
let shownAt = 0;

// load evaluates the student's file and opens its database.
async function load(source, accounts, shift) {
  shownAt = Number(shift) > 0 ? Number(shift) : 0;
  sourceLines = String(source).split('\n');
  let made;
  const body =
    String(source) +
    '\n;return { transfer: typeof transfer === "function" ? transfer : undefined,' +
    ' schema: typeof schema === "undefined" ? undefined : schema,' +
    ' retentionSeconds: typeof retentionSeconds === "undefined" ? undefined : retentionSeconds };\n//# sourceURL=' +
    FILE;
  try {
    made = new Function('lab', body)(labGlobal);
  } catch (e) {
    const error = describe(e);
    // An unclosed brace is found at the end of what was compiled, after
    // the student's last line: it is said at that line (the last that is
    // not empty).
    if (e instanceof SyntaxError && !error.line) error.line = Math.min(await syntaxLine(body), String(source).trimEnd().split('\n').length);
    return { error };
  }
  const twice = await declaredTwice(String(source));
  if (twice) return { error: twice };
  if (typeof made.transfer !== 'function') {
    return { error: { name: 'Error', message: 'the file declares no async function transfer(req, db, pay)', line: 0 } };
  }
  if (made.schema !== undefined && typeof made.schema !== 'string') {
    return { error: { name: 'Error', message: 'schema must be a string of SQL', line: 0 } };
  }
  if (made.retentionSeconds !== undefined && typeof made.retentionSeconds !== 'number') {
    return { error: { name: 'Error', message: 'retentionSeconds must be a number', line: 0 } };
  }
  if (dbId) api.labClose(dbId);
  dbId = '';
  const opened = JSON.parse(api.labOpen(made.schema || '', JSON.stringify(accounts || DEFAULT_ACCOUNTS)));
  // An error in the schema is at its line of the schema (schemaLine), not
  // of the handler.
  if (opened.err)
    return {
      error: {
        name: opened.err.name,
        message: opened.err.message,
        code: opened.err.code,
        line: 0,
        schemaLine: opened.err.schema_line || 0,
      },
    };
  dbId = opened.db;
  handler = made;
  scenarioSet = null;
  return { tables: opened.tables, retentionSeconds: made.retentionSeconds ?? null, schema: made.schema || '' };
}

const DEFAULT_ACCOUNTS = [
  { id: 'alice', balance: 1000000 },
  { id: 'bob', balance: 0 },
  { id: 'carol', balance: 1000000 },
];

// --- one run: the attempts of a scenario under one schedule --------------------

// A run owns the attempts of one scenario, the database's connections
// they hold and the trace. gen tells a run's attempts from an older run's
// still parked in memory.
let gen = 0;

class Run {
  constructor(scenario, traced, conns) {
    this.gen = ++gen;
    this.conns = conns;
    this.scenario = scenario;
    this.traced = traced;
    this.trace = [];
    this.logs = [];
    this.steps = 0;
    this.schedule = [];
    this.attempts = scenario.attempts.map((spec) => newAttempt(this, spec));
    this.byId = new Map(this.attempts.map((a) => [a.id, a]));
    this.holder = null; // the attempt whose connection holds a transaction
    // held: the committed rows of the student's tables after the last
    // traced call, each with the attempt whose call wrote it (heldRows);
    // purges: the key rows a call took away from another attempt's claim.
    this.held = traced ? heldRows(null, '') : null;
    this.purges = [];
    // claims: the attempts that wrote a row of the student's tables (a
    // claim, most often; a key hashed out of sight is one too).
    this.claims = new Set();
    // takeovers: the calls that made another attempt's row of their own
    // key theirs, in place (the same count of rows holding the key before
    // and after): a claim taken over.
    this.takeovers = [];
    // keyForms: each key the scenario's attempts send, as sent, with the
    // forms a row may hold it in (keysOf).
    this.keyForms = traced ? new Map(this.attempts.filter((a) => a.key).map((a) => [a.key, keysOf(a.key)])) : null;
    // clock orders the attempts' starts and answers (record: arrived,
    // answered_at): one tick for each.
    this.clock = 0;
  }

  event(a, fields) {
    if (!this.traced) return;
    this.trace.push(
      Object.assign(
        { seq: this.trace.length + 1, step: this.steps, lane: a.id, intent: a.intent, customer: a.customer, key: a.key, now: a.now },
        fields,
      ),
    );
  }

  // startDue starts every attempt whose turn has come: at once, or after
  // the attempt it follows has ended. An attempt's setBalance is the
  // lab's write, done as the attempt starts, before its handler runs.
  async startDue() {
    for (const a of this.attempts) {
      if (a.state !== 'new') continue;
      if (a.after) {
        const before = this.byId.get(a.after);
        // A client that gave up on the attempt before it sends again
        // (a time-out): its retry goes while that attempt still runs.
        if (before && !before.ended && !before.timedOut) continue;
      }
      if (a.setBalance) {
        const sb = a.setBalance;
        const r = JSON.parse(api.labSetBalance(dbId, String(sb.account), String(sb.balance)));
        if (r.err) throw new Error('setBalance ' + sb.account + ': ' + r.err.message);
      }
      a.state = 'running';
      a.startedAt = ++this.clock;
      a.conn = this.conns[a.id];
      this.event(a, { phase: 'start', body: a.body });
      await advance(a, () => startAttempt(this, a));
    }
  }

  // enabled lists the attempts a scheduler may step now.
  enabled() {
    return this.attempts.filter((a) => a.state === 'parked' && !a.waiting);
  }

  waiting() {
    return this.attempts.filter((a) => a.state === 'parked' && a.waiting);
  }

  done() {
    return this.attempts.every((a) => a.ended);
  }

  // step runs attempt a's pending call and lets it go on to its next call
  // or its answer. A BEGIN (or a write) that finds the write lock taken
  // leaves it waiting: nothing ran, the step is not counted, and step
  // answers false. But a Busy that no one's progress can end (deadlocked)
  // is the handler's to see, and so is every Busy when force is set: a
  // replayed schedule holds only the picks that were steps, so a pick
  // that meets a Busy there met it when the schedule was found, and it
  // was a step then: the deadlock's error.
  async step(a, force) {
    if (!a || a.state !== 'parked') throw new Error('attempt ' + (a ? a.id : '?') + ' has no call to run');
    const c = a.calls[0];
    const r = execute(this, a, c);
    if (r.err && r.err.name === 'Busy' && !force && !this.deadlocked(a)) {
      a.waiting = true;
      this.event(a, {
        phase: 'wait',
        op: c.op,
        sql: c.sql,
        params: c.params,
        line: c.line,
        outcome: 'busy',
        holder: this.holder ? this.holder.id : null,
      });
      return false;
    }
    this.steps++;
    this.schedule.push(a.id);
    if (a.arrived < 0) a.arrived = this.steps;
    a.calls.shift();
    // Ran while nothing was waiting for its answer yet: kept, to see at
    // the attempt's end whether anything ever did (unawaited), with its
    // error if it failed (a ConstraintError nobody saw).
    if (!c.promise.observed) {
      c.failed = r.err ? r.err.name : '';
      a.unseen.push(c);
    }
    // The first calls that failed, whatever the handler then did with
    // the error: a note says the one a catch went on past.
    if (r.err && r.err.name !== 'Busy' && a.failed.length < 3)
      a.failed.push({ op: c.op, line: c.line, failed: r.err.name, message: String(r.err.message || '').slice(0, 200) });
    a.waiting = false;
    a.steps++;
    // The network called with a transaction open: a slip (the network is
    // another place, which no ROLLBACK undoes, and the lock waits on it).
    if (c.op === 'pay' && a.tx) a.paidInTx.push({ op: 'pay', line: c.line });
    if (c.op !== 'pay') {
      a.tx = !!r.tx;
      this.setHolder(a, r.tx);
    }
    const fields = { phase: c.op === 'pay' ? 'pay' : 'db', op: c.op, sql: c.sql, params: c.params, line: c.line };
    if (r.err) {
      Object.assign(fields, {
        outcome: r.err.name === 'ConstraintError' ? 'constraint' : 'error',
        error_name: r.err.name,
        error_code: r.err.code || '',
        message: r.err.message,
      });
      // The network failed the call: whether it charged is the picture's
      // to show, though the handler is told only that no answer came.
      if (r.fault && r.charged)
        Object.assign(fields, {
          network_fault: r.fault,
          charge_id: r.charged.charge_id,
          amount: r.charged.amount,
          replayed: r.charged.replayed,
        });
      else if (r.fault) fields.network_fault = r.fault;
    } else if (c.op === 'pay') {
      Object.assign(fields, {
        outcome: r.ok.replayed ? 'replayed' : 'charged',
        charge_id: r.ok.charge_id,
        amount: r.ok.amount,
        replayed: r.ok.replayed,
      });
    } else {
      Object.assign(fields, { outcome: 'ok' });
      if (c.op === 'run') Object.assign(fields, { rows: r.ok.changes, last_insert_rowid: r.ok.lastInsertRowid });
      // A SELECT given to db.run: its rows were thrown away.
      if (c.op === 'run' && r.ok.dropped) a.dropped.push({ op: 'run', line: c.line });
      // An UPDATE or a DELETE with no WHERE: every row of its table. A
      // write given to db.get or db.all without RETURNING: it answers no
      // row, whatever it changed (undefined, or []). The call's event is
      // marked with the slip, where the verdict finds its line.
      if (WHOLE_TABLE.test(c.sql) && !WHERE_CLAUSE.test(c.sql)) {
        a.unscoped.push({ op: c.op, line: c.line });
        fields.slip = 'where-missing';
      }
      if (c.op !== 'run' && WRITES.test(c.sql) && !RETURNING.test(c.sql)) {
        a.writeRead.push({ op: c.op, line: c.line });
        fields.slip = 'write-given-to-get';
      }
      if (c.op === 'get') fields.rows = r.ok.row ? 1 : 0;
      if (c.op === 'all') fields.rows = r.ok.rows.length;
      // A get or an all given a statement that writes (INSERT …
      // RETURNING): the rows it changed, as run's.
      if (c.op !== 'run' && r.ok.changes) Object.assign(fields, { changed: r.ok.changes, last_insert_rowid: r.ok.lastInsertRowid });
    }
    if (this.traced && c.op !== 'pay') fields.key_rows = this.observe(a, c.sql);
    this.event(a, fields);
    if (a.calls.length > 0) {
      // The handler made several calls at once (Promise.all): it is
      // parked on the next already; let this one's continuation run.
      settle(c, r);
      for (let i = 0; i < 8; i++) await null;
    } else {
      await advance(a, () => settle(c, r));
    }
    // The scenario's attempt that dies once the network has charged it
    // (crashAfterPay), by hand on the bench as in the explorer's runs.
    if (c.op === 'pay' && this.scenario.crashAfterPay === a.id && !a.ended) await this.crash(a, true);
    await this.startDue();
    return true;
  }

  // deadlocked: a Busy that no one's progress can end (every other
  // attempt waits too) is the handler's to see, as SQLite's would be.
  deadlocked(a) {
    return !this.attempts.some((b) => b !== a && b.state === 'parked' && !b.waiting);
  }

  setHolder(a, tx) {
    if (tx) this.holder = a;
    else if (this.holder === a) this.holder = null;
    if (!this.holder) for (const b of this.attempts) b.waiting = false;
  }

  // crash: the attempt's process dies before its next call. Its
  // connection closes (SQLite rolls its open transaction back) and it
  // never answers.
  // A crash the scenario makes (crashAfterPay: dead as its charge came
  // back) is part of the step that paid: no step, no pick of its own.
  async crash(a, withStep) {
    if (a.ended) throw new Error('attempt ' + a.id + ' has ended');
    if (!withStep) {
      this.steps++;
      this.schedule.push('crash:' + a.id);
    }
    const next = a.calls[0];
    a.state = 'crashed';
    a.ended = true;
    a.calls = [];
    const rolled = release(this, a);
    this.event(a, {
      phase: 'crash',
      outcome: 'crashed',
      rolled_back: rolled,
      line: next ? next.line : 0,
      op: next ? next.op : '',
      sql: next ? next.sql : '',
    });
    await this.startDue();
  }

  // fault marks the attempt's answer lost (the client never reads it) or
  // timed out (the client gives up now; the attempt goes on).
  fault(a, kind) {
    if (kind === 'lose') a.lost = true;
    else if (kind === 'timeout') a.timedOut = true;
    else throw new Error('no such fault: ' + kind);
    this.event(a, { phase: 'fault', outcome: kind === 'lose' ? 'lost' : 'timed-out' });
  }

  // end stops what is still running (a schedule cut at its bound): those
  // attempts never answer.
  end() {
    for (const a of this.attempts) {
      if (a.ended) continue;
      if (a.conn) release(this, a);
      a.state = 'cut';
      a.ended = true;
    }
  }

  // record is what the checker judges, the attempts in the order they
  // reached the server (their first step): the first to arrive is the
  // keyed request the others are compared with, whatever order the
  // scenario lists them in. arrived and answered_at are when each started
  // and answered on the run's clock (0: never): a retry refused after an
  // attempt of its intent was answered 2xx breaks rule 3, one refused
  // while that attempt was still running does not.
  record() {
    const order = this.attempts.map((a, i) => ({ a, i, at: a.arrived < 0 ? Infinity : a.arrived }));
    order.sort((x, y) => x.at - y.at || x.i - y.i);
    return order.map(({ a }) => ({
      id: a.id,
      intent: a.intent,
      customer: a.customer || '',
      key: a.key || '',
      body: a.body,
      now: a.now,
      answered: !!a.answer,
      delivered: !!a.answer && !a.lost && !a.timedOut,
      status: a.answer ? a.answer.status : 0,
      headers: a.answer ? a.answer.headers : {},
      response: a.answer ? a.answer.body : '',
      arrived: a.startedAt,
      answered_at: a.answeredAt,
      // What it threw (its 500), as the bench shows it.
      threw: a.error ? a.error.name + (a.error.line > shownAt ? ' at line ' + (a.error.line - shownAt) : '') + ': ' + a.error.message : '',
      // Its slips that no rule sees, at the student's lines.
      unawaited: studentCalls(a.unawaited),
      failed: studentCalls(a.failed),
      unreturned: studentCalls(a.unreturned),
      left_open: a.leftOpen,
      dropped: studentCalls(a.dropped),
      unscoped: studentCalls(a.unscoped),
      write_read: studentCalls(a.writeRead),
      paid_in_tx: studentCalls(a.paidInTx),
      // The scenario's network failure, where it happened: the attempt
      // called pay (an attempt that ended before it never met it).
      pay_fault: a.payFaulted ? a.payFault : '',
    }));
  }

  // judge asks the checker in Go for its verdict on this run: brief
  // ({ok, broken}, what the explorer needs per schedule, from the
  // scenario set once by setScenario) or the full report.
  judge(brief) {
    const records = this.record();
    let r;
    if (brief) {
      const rows = records.map((a) => [
        a.id,
        a.answered ? 1 : 0,
        a.delivered ? 1 : 0,
        a.status,
        a.response,
        /^true$/i.test(headerOf(a.headers, 'Idempotent-Replayed')) ? 1 : 0,
        a.arrived,
        a.answered_at,
        slips(a),
        headerOf(a.headers, 'Content-Type'),
        // A 409's Retry-After: without it, every 409 read as one with
        // none, the brief verdict noted it, and the first such order
        // was taken for the scenario's note, hiding the true one.
        headerOf(a.headers, 'Retry-After'),
      ]);
      r = JSON.parse(api.labVerdict(dbId, JSON.stringify(rows)));
    } else {
      const req = {
        intents: this.scenario.intents,
        attempts: records,
        retention_seconds: handler.retentionSeconds ?? null,
        purges: this.purges,
        claims: [...this.claims],
        takeovers: this.takeovers,
        keys_read: !!this.traced,
        keys_scoped: !!this.traced && keysScoped(this),
        brief: false,
        scenario: this.scenario.name,
      };
      r = JSON.parse(api.labJudge(dbId, JSON.stringify(req)));
    }
    if (r.err) throw new Error(r.err.message);
    return r;
  }

  // observe reads the student's tables after attempt a's call (a traced
  // run's): whether a wrote a row there (claims), who wrote each row (a
  // row that was not there before the call, or not as it is now, is a's),
  // and which rows holding a scenario's key a's call took away although
  // another attempt wrote them (a purge; not a's release of its own claim,
  // nor a's takeover of a claim of its own key still in progress, deleted
  // to be made again). sql is the call's statement: a takeover that
  // INSERT OR REPLACE made is marked as such. It returns the rows that
  // hold a's key.
  observe(a, sql) {
    const before = this.held;
    this.held = heldRows(before, a.id);
    for (const [key, forms] of this.keyForms) {
      // The rows gone (not there as they were), of which another's: an
      // attempt that deleted its own claim purged nothing, whatever other
      // rows hold the same key string.
      const had = rowsHolding(before, forms);
      const now = rowsHolding(this.held, forms);
      const left = now.map((r) => r.sig);
      const gone = had.filter((r) => {
        const i = left.indexOf(r.sig);
        if (i < 0) return true;
        left.splice(i, 1);
        return false;
      });
      const others = gone.filter((r) => r.by !== a.id && !(key === a.key && unsettled(r.row))).length;
      const rows = Math.min(others, had.length - now.length);
      if (rows > 0) this.purges.push({ attempt: a.id, key, now: a.now, rows, clock: this.clock });
      if (key === a.key && had.length === now.length) {
        const from = gone.find((r) => r.by !== a.id);
        // Made by INSERT OR REPLACE (or REPLACE INTO): the claim replaced
        // the other's instead of failing on it. (An upsert's DO UPDATE
        // may be a takeover meant, with the lease in its WHERE.)
        if (from && now.some((r) => r.by === a.id))
          this.takeovers.push({ attempt: a.id, key, from: from.by, insert: /^\s*(insert\s+or\s+replace|replace)\b/i.test(sql || '') });
      }
    }
    if (this.held.some((r) => r.by === a.id)) this.claims.add(a.id);
    return a.key === null ? [] : keyRowsOf(this.held, keysOf(a.key));
  }

  state() {
    return {
      steps: this.steps,
      schedule: this.schedule.slice(),
      done: this.done(),
      holder: this.holder ? this.holder.id : null,
      attempts: this.attempts.map((a) => ({
        id: a.id,
        intent: a.intent,
        customer: a.customer,
        key: a.key,
        now: a.now,
        state: a.state,
        waiting: !!a.waiting,
        steps: a.steps,
        next: a.calls[0] ? { op: a.calls[0].op, sql: a.calls[0].sql, params: a.calls[0].params, line: a.calls[0].line } : null,
        answer: a.answer,
        error: a.error,
        unawaited: a.unawaited || [],
        dropped: a.dropped,
        unscoped: a.unscoped,
        write_read: a.writeRead,
        left_open: a.leftOpen,
        paid_in_tx: a.paidInTx,
        unreturned: a.unreturned,
        failed: a.failed,
        lost: !!a.lost,
        timed_out: !!a.timedOut,
      })),
      trace: this.trace.slice(),
      logs: this.logs.slice(),
    };
  }
}

// The key rows are what the student's own tables hold for an attempt's
// key now, committed: every row of a table of theirs (not the lab's
// accounts and transfers) with a column that holds the key, as parsed or
// as sent (holdsKey), each {table, row, by} (heldRows, keyRowsOf). The
// database's own connection reads them (api.labDump, as the bench's view
// of the tables), so a row another attempt has written in a transaction
// it has not committed is not there yet, and a rolled-back one never was.
// The race view draws the key's row from these (web/lab-model.js), not
// from the words of the SQL. Only a traced run reads them: the explorer's
// thousands of schedules do not.
const LAB_TABLES = new Set(['accounts', 'transfers']);

// keysOf is a key as sent and as the contract parses it (the two differ
// for a quoted key).
function keysOf(key) {
  const keys = [key];
  try {
    const parsed = labGlobal.parseKey(key);
    if (parsed && parsed !== key) keys.push(parsed);
  } catch {
    // a key the contract refuses: only as sent
  }
  return keys;
}

// heldRows reads every committed row of the student's tables, [{table,
// row, by, sig}]: a row found as it was in before keeps its writer, any
// other is by's (the attempt whose call just ran).
function heldRows(before, by) {
  const writers = new Map();
  for (const r of before || []) {
    if (!writers.has(r.sig)) writers.set(r.sig, []);
    writers.get(r.sig).push(r.by);
  }
  const dump = JSON.parse(api.labDump(dbId));
  const out = [];
  for (const [table, rows] of Object.entries(dump.tables || {})) {
    if (LAB_TABLES.has(table)) continue;
    for (const row of rows) {
      const sig = table + '\u0000' + JSON.stringify(row);
      const was = writers.get(sig);
      out.push({ table, row, sig, by: was && was.length ? was.shift() : by });
    }
  }
  return out;
}

// unsettled says whether a key row says it is still being worked on: a
// state column ('state', 'status', 'claim_state', …) whose text says so
// ('in_progress', 'pending', …). Deleting such a row of another attempt's
// under one's own key is how some handlers take a claim over, not a purge
// of kept keys.
const STATE_NAME = /^(state|status)$|_(state|status)$/i;
const UNSETTLED = /progress|pending|claim|process|start|running|lock/i;
function unsettled(row) {
  return Object.entries(row).some(([k, v]) => STATE_NAME.test(k) && typeof v === 'string' && UNSETTLED.test(v));
}

// keyRowsOf are the rows of held that hold one of keys (holdsKey), each
// {table, row, by}.
function keyRowsOf(held, keys) {
  return rowsHolding(held, keys).map((r) => ({ table: r.table, row: r.row, by: r.by }));
}

// rowsHolding are the entries of held (heldRows) that hold one of keys.
function rowsHolding(held, keys) {
  return held.filter((r) => Object.values(r.row).some((v) => keys.some((k) => holdsKey(v, k))));
}

// holdsKey says whether a column's value holds key: the key itself, or
// the key as one part of a longer string the handler composed
// ("cust-1:k-1", "cust-1|POST /transfers|k-1"), between separators.
const KEY_SEPARATORS = ' \t\n:|/,;#@';
function holdsKey(value, key) {
  if (typeof value !== 'string' || !key) return false;
  if (value === key) return true;
  for (let i = value.indexOf(key); i >= 0; i = value.indexOf(key, i + 1)) {
    const before = i === 0 ? '' : value[i - 1];
    const after = value.charAt(i + key.length);
    if ((!before || KEY_SEPARATORS.includes(before)) && (!after || KEY_SEPARATORS.includes(after))) return true;
  }
  return false;
}

function newAttempt(run, spec) {
  return {
    id: spec.id,
    intent: spec.intent,
    customer: spec.customer || null, // missing or empty: null, as the doc says
    key: spec.key ?? null,
    body: spec.body,
    now: spec.now,
    after: spec.after || '',
    setBalance: spec.setBalance || null,
    lost: !!spec.lose,
    payFault: spec.payFault || '',
    payFaulted: false,
    timedOut: false,
    run,
    state: 'new',
    ended: false,
    calls: [],
    waiting: false,
    steps: 0,
    arrived: -1,
    startedAt: 0,
    answeredAt: 0,
    conn: '',
    tx: false,
    wake: null,
    answer: null,
    error: null,
    unawaited: null,
    unseen: [],
    failed: [],
    built: [],
    unreturned: [],
    dropped: [],
    unscoped: [],
    writeRead: [],
    leftOpen: false,
    paidInTx: [],
  };
}

// advance runs kick and resolves when the attempt has parked at its next
// call or ended: what the student's code does between two calls runs
// inside it, as microtasks (or the timers it awaits).
function advance(a, kick) {
  return new Promise((resolve) => {
    a.wake = resolve;
    current = a.run;
    current.attempt = a.id;
    kick();
  });
}

function wake(a) {
  const w = a.wake;
  a.wake = null;
  if (w) w();
}

function startAttempt(run, a) {
  const req = Object.freeze({
    method: 'POST',
    route: '/transfers',
    customer: a.customer,
    key: a.key,
    body: a.body,
    contentType: 'application/json',
    attempt: a.id,
    now: a.now,
  });
  const call = (op, sql, params) => {
    if (a.ended || run.gen !== gen) return new Promise(() => {}); // a crashed attempt runs no more
    // The line costs a stack trace: only a traced run (the bench, the
    // kept counterexample) shows it, not the explorer's thousands.
    const c = { op, sql, params, line: run.traced ? callerLine(sql) : 0, resolve: null, reject: null, promise: null };
    c.promise = new Awaited((resolve, reject) => {
      c.resolve = resolve;
      c.reject = reject;
    });
    a.calls.push(c);
    if (a.calls.length === 1) {
      a.state = 'parked';
      wake(a);
    }
    return c.promise;
  };
  const sqlOf = (sql) => (typeof sql === 'string' ? sql : String(sql));
  const db = Object.freeze({
    run: (sql, ...params) => call('run', sqlOf(sql), params),
    get: (sql, ...params) => call('get', sqlOf(sql), params),
    all: (sql, ...params) => call('all', sqlOf(sql), params),
    begin: () => call('begin', 'BEGIN IMMEDIATE', []),
    commit: () => call('commit', 'COMMIT', []),
    rollback: () => call('rollback', 'ROLLBACK', []),
  });
  const pay = (args) =>
    call('pay', '', [
      args && typeof args === 'object' ? { from: args.from, to: args.to, amount: args.amount, key: args.key ?? null } : args,
    ]);
  let p;
  try {
    p = Promise.resolve(handler.transfer(req, db, pay));
  } catch (e) {
    p = Promise.reject(e);
  }
  p.then(
    (v) => finish(run, a, v),
    (e) => fail(run, a, e),
  );
}

// finish records the attempt's answer and hands its connection back (an
// open transaction rolls back, as the doc promises).
function finish(run, a, v) {
  if (a.ended || run.gen !== gen) return;
  const bad = answerProblem(v);
  if (bad) {
    fail(run, a, new TypeError(bad));
    return;
  }
  const headers = {};
  for (const [k, val] of Object.entries(v.headers || {})) headers[k] = String(val);
  a.answer = { status: v.status, headers, body: v.body ?? '' };
  a.answeredAt = ++run.clock;
  a.state = 'answered';
  a.ended = true;
  a.unawaited = unawaited(a);
  a.calls = [];
  const rolled = release(run, a);
  // Answered before its COMMIT: what it wrote is gone, and its client was
  // told otherwise.
  a.leftOpen = rolled;
  // A refusal built and dropped, and a success answered: the code went
  // on past the refusal (lab.problem(…) without its return).
  if (a.answer.status >= 200 && a.answer.status < 300) {
    const dropped = a.built.find((b) => b.answer !== v && b.answer.status >= 400 && b.answer.status < 500);
    if (dropped) a.unreturned = [{ op: 'problem', line: dropped.line, status: dropped.answer.status }];
  }
  a.built = [];
  run.event(a, {
    phase: 'answer',
    outcome: a.lost ? 'lost' : a.timedOut ? 'timed-out' : 'answered',
    status: v.status,
    replayed: /^true$/i.test(headerOf(headers, 'Idempotent-Replayed')),
    rolled_back: rolled,
    line: 0,
  });
  wake(a);
}

// unawaited lists the calls an attempt made without awaiting them, as it
// ends (answered or threw): first those it never let run (still waiting
// for their step: db.commit() without await, then return), then those
// that ran but whose answer nothing ever asked for (ran: true; pay(…)
// without await, whose NetworkError no one would see), with the name of
// the error each failed with (failed: a claim's ConstraintError that the
// code went on past). [{op, line, ran, failed}]
function unawaited(a) {
  const never = a.calls.map((c) => ({ op: c.op, line: c.line }));
  const unseen = a.unseen
    .filter((c) => !c.promise.observed)
    .map((c) => ({ op: c.op, line: c.line, ran: true, ...(c.failed ? { failed: c.failed } : {}) }));
  a.unseen = [];
  return never.concat(unseen);
}

// Awaited is the Promise a call into db or pay returns, which remembers
// whether anything asked for its answer: await, .then, .catch, .finally,
// Promise.all and return all reach its then (a Promise of another class
// is adopted through then, never taken as it is). What it derives is a
// plain Promise.
class Awaited extends Promise {
  static get [Symbol.species]() {
    return Promise;
  }
  then(onFulfilled, onRejected) {
    this.observed = true;
    return super.then(onFulfilled, onRejected);
  }
}

// studentCalls are calls ({op, line}) with their lines in the student's
// file (0: not known), as the checker's notes say them.
function studentCalls(calls) {
  return (calls || []).map((c) => ({
    op: c.op,
    line: c.line > shownAt ? c.line - shownAt : 0,
    ...(c.ran ? { ran: true } : {}),
    ...(c.failed ? { failed: c.failed } : {}),
    ...(c.message ? { message: c.message } : {}),
    ...(c.status ? { status: c.status } : {}),
  }));
}

// slips is a record's slips (record) as the brief verdict's flags: 1 a
// call never awaited that never ran, 2 an answer with its transaction
// open, 4 a SELECT given to db.run, 8 a call to pay with its transaction
// open, 16 a call to pay that the scenario's network failed, 32 a call
// that ran with nothing awaiting its answer, 64 one that failed so, 128
// a refusal built and not returned while a success was, 256 an UPDATE or
// a DELETE with no WHERE, 512 a write given to db.get or db.all without
// RETURNING.
function slips(r) {
  return (
    (r.unawaited.some((c) => !c.ran) ? 1 : 0) |
    (r.unawaited.some((c) => c.ran && !c.failed) ? 32 : 0) |
    (r.unawaited.some((c) => c.failed) ? 64 : 0) |
    (r.unreturned.length ? 128 : 0) |
    (r.left_open ? 2 : 0) |
    (r.dropped.length ? 4 : 0) |
    (r.paid_in_tx.length ? 8 : 0) |
    (r.pay_fault ? 16 : 0) |
    (r.unscoped.length ? 256 : 0) |
    (r.write_read.length ? 512 : 0)
  );
}

function headerOf(headers, name) {
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name.toLowerCase()) return v;
  return '';
}

// answerProblem says what is wrong with what transfer returned, naming the
// value it got: the exception it becomes has no line of the student's (a
// returned value carries none), so the value is what points at the return.
function answerProblem(v) {
  if (!v || typeof v !== 'object') return 'transfer must return {status, headers, body}, not ' + shown(v);
  if (v.status === undefined) return 'the answer has no status (a whole number from 100 to 599)';
  if (!Number.isInteger(v.status) || v.status < 100 || v.status > 599)
    return "the answer's status must be a whole number from 100 to 599, not " + shown(v.status);
  if (v.body !== undefined && typeof v.body !== 'string')
    return "the answer's body must be a string (JSON.stringify it, or use lab.json), not " + shown(v.body);
  if (v.headers !== undefined && (typeof v.headers !== 'object' || v.headers === null))
    return "the answer's headers must be an object, not " + shown(v.headers);
  return '';
}

// shown writes a value short, with its kind where its look would hide it:
// '"201" (a string)', 'undefined (was a return left out?)', 'an object'.
function shown(x) {
  if (x === undefined) return 'undefined (was a return left out?)';
  if (x === null) return 'null';
  if (typeof x === 'string') return JSON.stringify(x.length > 40 ? x.slice(0, 40) + '…' : x) + ' (a string)';
  if (typeof x === 'number' || typeof x === 'boolean') return String(x);
  if (Array.isArray(x)) return 'an array';
  if (typeof x === 'object') return typeof x.then === 'function' ? 'a Promise (was an await left out?)' : 'an object';
  return 'a ' + typeof x;
}

// fail ends the attempt with the exception it threw: no answer is
// recorded as the handler's (the client gets a 500), and its open
// transaction rolls back.
function fail(run, a, e) {
  if (a.ended || run.gen !== gen) return;
  a.error = describe(e);
  a.answer = { status: 500, headers: {}, body: '' };
  a.answeredAt = ++run.clock;
  a.state = 'threw';
  a.ended = true;
  a.unawaited = unawaited(a);
  a.calls = [];
  const rolled = release(run, a);
  run.event(a, {
    phase: 'exception',
    outcome: 'threw',
    error_name: a.error.name,
    message: a.error.message,
    line: a.error.line,
    rolled_back: rolled,
  });
  wake(a);
}

// release ends the attempt's connection, its open transaction rolled
// back. The database is told even when none is open: it judges a row
// taken from an attempt by whether that attempt's connection is still
// held (a claim taken from a running attempt, labdb's Takeovers).
function release(run, a) {
  if (!a.conn) return false;
  const r = JSON.parse(api.labRelease(dbId, a.conn));
  a.conn = '';
  a.tx = false;
  if (run.holder === a) run.setHolder(a, false);
  return !!r.rolled_back;
}

// What pay throws when a scenario makes the network fail (payFault): one
// error for both failures, as a real client cannot tell a lost answer
// from a network never reached. The bench's event says which it was.
const NETWORK_FAILED = 'the payment network did not answer in time: it may or may not have charged';

// WHOLE_TABLE and WHERE_CLAUSE find an UPDATE or a DELETE with no WHERE
// (every row of its table: a slip); WRITES and RETURNING a write given to
// db.get or db.all that returns no row.
const WHOLE_TABLE = /^\s*(update|delete)\b/i;
const WHERE_CLAUSE = /\bwhere\b/i;
const WRITES = /^\s*(insert|update|delete|replace)\b/i;
const RETURNING = /\breturning\b/i;

// keysScoped says, of a traced run, that every db call whose parameters
// held its attempt's key (as parsed, alone or inside a value of the
// handler's own) held the attempt's customer too, and that there was
// such a call: the handler keeps keys within the customer, so a refusal
// came from the customer's own row. A fingerprint compared with the
// wrong thing was called "keys are global" without it (the sixteenth
// simulated student's).
function keysScoped(run) {
  let seen = 0;
  for (const e of run.trace) {
    if (e.phase !== 'db' || !['run', 'get', 'all'].includes(e.op) || !Array.isArray(e.params)) continue;
    const a = run.attempts.find((x) => x.id === e.lane);
    const key = a && a.key !== null ? labGlobal.parseKey(a.key) : null;
    if (!a || !a.customer || !key) continue;
    const has = (s) => e.params.some((p) => typeof p === 'string' && p.includes(s));
    if (!has(key)) continue;
    if (!has(a.customer)) return false;
    seen++;
  }
  return seen > 0;
}

// PAY_ARGS is pay's refusal of arguments it cannot take, in the words
// idemlab lab serve uses (lab/jsrun).
const PAY_ARGS = 'pay takes {from, to, amount, key}: two account ids, a whole amount > 0 and, if you pass one, a key string';

function execute(run, a, c) {
  if (c.op === 'pay') {
    const args = c.params[0];
    // The arguments are taken as idemlab lab serve takes them: two account
    // ids, a whole amount above 0 (a number, not "200000"), and, if given,
    // a key string.
    const bad = { err: { name: 'PaymentError', message: PAY_ARGS } };
    if (!args || typeof args !== 'object') return bad;
    if (typeof args.from !== 'string' || typeof args.to !== 'string') return bad;
    if (typeof args.amount !== 'number' || !Number.isSafeInteger(args.amount) || args.amount <= 0) return bad;
    if (args.key !== null && args.key !== undefined && (typeof args.key !== 'string' || args.key === '')) return bad;
    const requestKey = a.key === null ? '' : labGlobal.parseKey(a.key) || '';
    const amount = args.amount;
    const key = args.key === null || args.key === undefined ? null : args.key;
    // The scenario's network failure, on the attempt's first call: not
    // reached (nothing charged), or its answer lost after it charged.
    const fault = a.payFault && !a.payFaulted ? a.payFault : '';
    a.payFaulted = a.payFaulted || !!fault;
    if (fault === 'down') return { err: { name: 'NetworkError', message: NETWORK_FAILED }, fault };
    const r = JSON.parse(
      api.labPay(dbId, JSON.stringify([a.id, a.customer || '', requestKey, String(args.from), String(args.to), amount, key])),
    );
    if (fault === 'lost' && !r.err) return { err: { name: 'NetworkError', message: NETWORK_FAILED }, fault, charged: r.ok };
    return r;
  }
  for (const p of c.params) {
    if (p !== null && typeof p !== 'string' && typeof p !== 'number') {
      return { err: { name: 'SQLError', message: 'parameters are numbers, strings or null; got ' + typeof p }, tx: run.holder === a };
    }
  }
  // One string for the step's arguments: JSON.stringify escapes any
  // newline in the parameters, and the SQL comes last.
  return JSON.parse(api.labStep(dbId + '\n' + a.conn + '\n' + c.op + '\n' + JSON.stringify(c.params) + '\n' + c.sql));
}

// settle resolves or rejects the call's Promise as the handler sees it.
function settle(c, r) {
  if (r.err) {
    const e = new Error(r.err.message);
    e.name = r.err.name === 'Busy' ? 'SQLError' : r.err.name;
    if (r.err.code) e.code = r.err.code;
    if (c.line) callLines.set(e, c.line);
    c.reject(e);
    return;
  }
  switch (c.op) {
    case 'run':
      c.resolve({ changes: r.ok.changes, lastInsertRowid: r.ok.lastInsertRowid });
      break;
    case 'get':
      c.resolve(r.ok.row);
      break;
    case 'all':
      c.resolve(r.ok.rows);
      break;
    case 'pay':
      c.resolve({ charge_id: r.ok.charge_id, amount: r.ok.amount, replayed: r.ok.replayed });
      break;
    default:
      c.resolve(undefined);
  }
}

// setScenario tells the checker the scenario the next runs play (its
// intents and attempts), so that each schedule sends only its answers.
let scenarioSet = null;
function setScenario(scenario) {
  if (scenarioSet === scenario) return;
  const req = {
    intents: scenario.intents,
    attempts: scenario.attempts.map((a) => ({
      id: a.id,
      intent: a.intent,
      customer: a.customer || '',
      key: a.key || '',
      body: a.body,
      now: a.now,
      pay_fault: a.payFault || '',
    })),
    retention_seconds: handler.retentionSeconds ?? null,
    scenario: scenario.name,
  };
  const r = JSON.parse(api.labScenario(dbId, JSON.stringify(req)));
  if (r.err) throw new Error(r.err.message);
  scenarioSet = scenario;
}

// newRun resets the database and gives every attempt its connection, in
// one call into the module.
async function newRun(scenario, traced) {
  setScenario(scenario);
  const r = JSON.parse(api.labReset(dbId, JSON.stringify(scenario.attempts.map((a) => a.id))));
  if (r.err) throw new Error(r.err.message);
  // The accounts a scenario opens (the day's), as a top-up does: their
  // money counts as starting money for the checker.
  for (const acc of scenario.accounts || []) {
    const b = JSON.parse(api.labSetBalance(dbId, String(acc.id), String(acc.balance)));
    if (b.err) throw new Error('account ' + acc.id + ': ' + b.err.message);
  }
  const run = new Run(scenario, traced, r.conns);
  await run.startDue();
  return run;
}

// --- the stepper (by hand) -------------------------------------------------------

let bench = null;

async function start(scenario) {
  need();
  bench = await newRun(normalize(scenario), true);
  return benchState();
}

function benchState() {
  const s = bench.state();
  s.db = JSON.parse(api.labDump(dbId));
  if (bench.done()) s.verdict = bench.judge(false);
  return s;
}

// step runs the attempt's next call. force: a Busy is the handler's to
// see, not a wait (Run.step): the page sets it when it plays back a
// schedule the explorer found, which holds only the picks that were steps.
async function step(id, force) {
  needBench();
  const a = bench.byId.get(id);
  if (!a) throw new Error('no attempt ' + id);
  if (a.state !== 'parked') throw new Error('attempt ' + id + ' has no call to run (' + a.state + ')');
  await bench.step(a, !!force);
  settleDeadlock(bench);
  return benchState();
}

async function inject(id, kind) {
  needBench();
  const a = bench.byId.get(id);
  if (!a) throw new Error('no attempt ' + id);
  if (kind === 'crash') await bench.crash(a);
  else {
    bench.fault(a, kind);
    // A client that gave up sends its retry now (startDue).
    await bench.startDue();
  }
  return benchState();
}

// settleDeadlock: when every attempt left waits for the lock and none
// holds it any more, the waiting are free to go again.
function settleDeadlock(run) {
  if (run.enabled().length === 0 && run.waiting().length > 0 && !run.holder) {
    for (const a of run.waiting()) a.waiting = false;
  }
}

function need() {
  if (!handler || !dbId) throw new Error('no handler loaded');
}

function needBench() {
  need();
  if (!bench) throw new Error('no scenario on the bench');
}

// --- the explorer ----------------------------------------------------------------

const T0 = Date.UTC(2026, 0, 1, 9, 0, 0);
const HOUR = 3600 * 1000;

function body(from, to, amount, reorder) {
  return reorder ? JSON.stringify({ amount, to, from }) : JSON.stringify({ from, to, amount });
}

// scenarios are the rules' scenarios from the issue: who sends what, when.
// An attempt is {id, intent, customer, key, body, now}, and may say
//   after: 'aN'     it starts once attempt aN has ended, or once aN's
//                   client gave up on it (a time-out set on the bench);
//   lose: true      its answer never reaches the client;
//   payFault: 'lost' | 'down'
//                   its first call to pay fails (NetworkError): the
//                   network charged and its answer was lost, or it was
//                   never reached and charged nothing;
//   setBalance: {account, balance}
//                   before it starts, the lab (not the handler) sets the
//                   account's balance, opening the account if there is
//                   none: a top-up, an account opened between attempts.
//                   What it adds counts as the account's starting money
//                   for the checker. Give it with after: the write waits
//                   for no lock, and fails while an attempt holds one.
// MALFORMED_KEYS are Idempotency-Key headers the contract refuses, as the
// grader's malformed-keys check sends them.
const MALFORMED_KEYS = [
  'k-2', // a bare token
  '""', // an empty string
  '"' + 'k'.repeat(256) + '"', // 256 characters
  '"clé-2"', // outside printable ASCII
  '"k-2", "k-3"', // two keys on one line
  '42', // a number
  '"k-2";v=1', // a parameter
];

// LONGEST_KEY is a valid key of exactly 255 characters between its quotes.
const LONGEST_KEY = '"' + ('k-255-' + '0123456789abcdefghijklmnopqrstuvwxyz'.repeat(8)).slice(0, 255) + '"';

// labDay is a small day of the grader's kind of traffic (lab.NewLabDay:
// a few customers, eight wishes, lost answers, retries, a teller's
// correction, a client's own key scheme), its accounts opened at the
// start of each run. Its attempts race where the day sends them while an
// earlier one is still being processed; a retry otherwise waits for the
// attempt it follows. Far too many orders to walk: seeded random ones.
let dayScenario = null;
function labDay() {
  if (!dayScenario) {
    const d = JSON.parse(api.labDay('1', String(T0)));
    if (d.err) throw new Error('day: ' + d.err.message);
    // The day names its attempts after their intents (i000005.1); the
    // page names attempts a1, a2, … everywhere, in the order they are sent.
    const ids = new Map(d.attempts.map((a, i) => [a.id, 'a' + (i + 1)]));
    dayScenario = {
      name: 'day',
      random: true,
      randomSchedules: 30,
      bound: d.attempts.length * 16,
      accounts: d.accounts,
      attempts: d.attempts.map((a) => ({
        id: ids.get(a.id),
        intent: a.intent,
        customer: a.customer,
        key: a.key || null,
        body: a.body,
        now: a.now,
        lose: a.lose,
        after: a.after ? ids.get(a.after) || a.after : '',
      })),
    };
  }
  return dayScenario;
}

function scenarios() {
  const b = body('alice', 'bob', 200000);
  const over = body('alice', 'bob', 1500000);
  const toDave = body('alice', 'dave', 200000);
  const one = (id, extra) => Object.assign({ id, intent: 'i1', customer: 'cust-1', key: '"k-1"', body: b, now: T0 }, extra || {});
  const retention =
    handler && typeof handler.retentionSeconds === 'number' && handler.retentionSeconds > 0 ? handler.retentionSeconds * 1000 : HOUR;
  return [
    { name: 'simultaneous-retries', attempts: [one('a1'), one('a2')] },
    // The retry is sent once the first answer was lost: after a1 ended.
    { name: 'retry-after-lost-answer', attempts: [one('a1', { lose: true }), one('a2', { after: 'a1', now: T0 + 1000 })] },
    // Another transfer of the customer's moves the balance between the
    // answer that was lost and its retry: a replay built again from the
    // ledger says the new balance, where the stored bytes say the old.
    {
      name: 'retry-after-another-transfer',
      attempts: [
        one('a1', { lose: true }),
        one('a2', { after: 'a1', intent: 'i2', key: '"k-2"', body: body('alice', 'bob', 100000), now: T0 + 1000 }),
        one('a3', { after: 'a2', now: T0 + 2000 }),
      ],
    },
    // The teller's client timed out, and the teller sends the corrected
    // amount under the same key: the first request is the keyed one.
    {
      name: 'corrected-amount',
      attempts: [one('a1', { lose: true }), one('a2', { after: 'a1', intent: 'i2', body: body('alice', 'bob', 300000), now: T0 + 1000 })],
    },
    // The same amount to another payee, under the same key: a fingerprint
    // of the whole request tells it apart, one of the amount alone does
    // not.
    {
      name: 'corrected-payee',
      attempts: [one('a1', { lose: true }), one('a2', { after: 'a1', intent: 'i2', body: body('alice', 'carol', 200000), now: T0 + 1000 })],
    },
    // The same amount to the same payee from another of the customer's
    // accounts: a fingerprint of the amount and the payee alone does not
    // tell it apart.
    {
      name: 'corrected-payer',
      attempts: [one('a1', { lose: true }), one('a2', { after: 'a1', intent: 'i2', body: body('carol', 'bob', 200000), now: T0 + 1000 })],
    },
    // The teller's first request is still running when the corrected
    // amount goes out under the same key: whichever claims the key is the
    // keyed request, and the other is a different one, owed 422 at once,
    // not a 409 that no retry of it can ever get past.
    {
      name: 'correction-while-running',
      attempts: [one('a1'), one('a2', { intent: 'i2', body: body('alice', 'bob', 300000) })],
    },
    {
      name: 'reordered-json',
      attempts: [one('a1', { lose: true }), one('a2', { body: body('alice', 'bob', 200000, true), now: T0 + 1000 })],
    },
    {
      name: 'another-customers-key',
      attempts: [one('a1'), one('a2', { intent: 'i2', customer: 'cust-2', body: body('carol', 'bob', 50000) })],
    },
    { name: 'crash-at-every-step', crash: 'a1', walkAll: true, attempts: [one('a1'), one('a2', { after: 'a1', now: T0 + 1000 })] },
    // A first attempt that stalls (a server paused for two minutes: past
    // a lease, within every rung's retention) while its retry comes: the
    // retry may take its claim over once the lease has run out, and the
    // first, resuming, must then not complete the key nor keep its
    // transfer (the completion's owner check).
    {
      name: 'stalled-first-attempt',
      attempts: [one('a1'), one('a2', { now: T0 + 2 * 60 * 1000 })],
    },
    // The same crash, and the client's retry ten minutes later: a claim
    // left by a dead attempt is taken over once its lease has run out (or
    // stays in progress), and a takeover after the payment pays again
    // unless the network was given the key.
    {
      name: 'crash-then-late-retry',
      crash: 'a1',
      walkAll: true,
      attempts: [one('a1'), one('a2', { after: 'a1', now: T0 + 10 * 60 * 1000 })],
    },
    // The same request's two retries, sent together after the lease of a
    // dead attempt's claim ran out: a1 crashes right after the network
    // charged it, its claim still in progress. Both retries may find it
    // expired; one alone may take it over (an UPDATE whose WHERE says the
    // claim is still as it was read, its changes read), or both move the
    // money.
    {
      name: 'crash-then-two-late-retries',
      crashAfterPay: 'a1',
      random: true,
      bound: 60,
      attempts: [one('a1'), one('a2', { after: 'a1', now: T0 + 10 * 60 * 1000 }), one('a3', { after: 'a1', now: T0 + 10 * 60 * 1000 })],
    },
    // A crash at any step, then, shortly before the keys' retention runs
    // out (past any lease shorter than it), the teller's corrected amount
    // under the same key, then the first request's own retry: a claim the
    // crash left may be taken over once its lease has run out, but only by
    // its own request; the correction is a different one.
    {
      name: 'crash-then-corrected-amount',
      crash: 'a1',
      walkAll: true,
      attempts: [
        one('a1'),
        one('a2', { after: 'a1', intent: 'i2', body: body('alice', 'bob', 300000), now: T0 + Math.min(retention, HOUR) - 2000 }),
        one('a3', { after: 'a2', now: T0 + Math.min(retention, HOUR) - 1000 }),
      ],
    },
    // The payment network fails the first attempt's call: it charges, and
    // its answer is lost on the way back (pay throws NetworkError); then
    // the client's retry, told 5xx. The retry must find the key free (the
    // failed attempt released its claim) and, giving pay the same key, get
    // the first charge back instead of a second.
    {
      name: 'network-answer-lost',
      attempts: [one('a1', { payFault: 'lost' }), one('a2', { after: 'a1', now: T0 + 1000 })],
    },
    // The same, but the network was never reached and charged nothing:
    // no transfer may be made without its charge, and the retry pays.
    {
      name: 'network-down',
      attempts: [one('a1', { payFault: 'down' }), one('a2', { after: 'a1', now: T0 + 1000 })],
    },
    {
      name: 'retry-after-retention',
      attempts: [one('a1', { lose: true }), one('a2', { after: 'a1', now: T0 + Math.min(retention, HOUR) - 1000 })],
    },
    { name: 'three-retries', random: true, attempts: [one('a1'), one('a2'), one('a3')] },
    // Another customer uses the same key string for a transfer of its own,
    // and retries it after a lost answer: every statement about a key (the
    // claim, the lookup after a failed INSERT, the completion) names the
    // customer, or the retry is answered from the first customer's row.
    {
      name: 'another-customers-key-then-retry',
      attempts: [
        one('a1'),
        one('a2', { after: 'a1', intent: 'i2', customer: 'cust-2', body: body('carol', 'bob', 50000), now: T0 + 1000, lose: true }),
        one('a3', { after: 'a2', intent: 'i2', customer: 'cust-2', body: body('carol', 'bob', 50000), now: T0 + 2000 }),
      ],
    },
    // Another customer sends exactly the first one's body under the same
    // key string: their own new transfer, not the first one's answer.
    {
      name: 'other-customer-same-body',
      attempts: [one('a1'), one('a2', { after: 'a1', intent: 'i2', customer: 'cust-2', now: T0 + 1000 })],
    },
    // Two transfers of alice's at once, different wishes under their own
    // keys, which her balance cannot both cover: one is refused 402, and
    // the branch that finds the balance gone after the check (a debit that
    // changed no row) must end its transaction like any other.
    {
      name: 'two-transfers-one-balance',
      attempts: [
        one('a1', { body: body('alice', 'bob', 600000) }),
        one('a2', { intent: 'i2', key: '"k-2"', body: body('alice', 'carol', 600000) }),
      ],
    },
    // More than alice has is refused 402; alice is topped up; the retry
    // under the same key must get the same 402 and move nothing.
    {
      name: 'refusal-then-top-up',
      attempts: [
        one('a1', { body: over }),
        one('a2', { after: 'a1', body: over, now: T0 + 1000, setBalance: { account: 'alice', balance: 2000000 } }),
      ],
    },
    // A payee with no account is refused 404; the account is opened; the
    // retry under the same key must get the same 404.
    {
      name: 'unknown-payee-then-opened',
      attempts: [
        one('a1', { body: toDave }),
        one('a2', { after: 'a1', body: toDave, now: T0 + 1000, setBalance: { account: 'dave', balance: 0 } }),
      ],
    },
    // A client that sends no Idempotency-Key, and retries after a lost
    // answer: without a key no retry can be told from a new request, so
    // the contract answers 400 and moves nothing.
    { name: 'missing-key', attempts: [one('a1', { key: null, lose: true }), one('a2', { key: null, after: 'a1', now: T0 + 1000 })] },
    // A body the contract refuses before anything is claimed (the amount a
    // JSON string: 400), then the repaired body under the same key: the
    // refusal stored nothing, so the repaired request is new and pays.
    {
      name: 'repaired-body',
      attempts: [
        one('a1', { body: JSON.stringify({ from: 'alice', to: 'bob', amount: '200000' }) }),
        one('a2', { after: 'a1', now: T0 + 1000 }),
      ],
    },
    // A transfer without X-Customer-ID (401: nobody to scope the key to),
    // then the same transfer with it under the same key: the refusal
    // stored nothing, so the authenticated request is new and pays.
    {
      name: 'repaired-auth',
      attempts: [one('a1', { customer: null }), one('a2', { after: 'a1', now: T0 + 1000 })],
    },
    // The answered request sent again three other ways, as the grader's
    // reordered check does: re-spaced in the same order, reordered, then
    // both (one member a line). Which are refused tells a fingerprint of
    // the raw bytes (the re-spaced one) from one that keeps the members'
    // order (only the reordered ones).
    {
      name: 'retry-three-ways',
      // Four attempts one after the other.
      bound: 4 * 16,
      attempts: [
        one('a1'),
        one('a2', { after: 'a1', now: T0 + 1000, body: '{ "from": "alice", "to": "bob", "amount": 200000 }' }),
        one('a3', { after: 'a2', now: T0 + 2000, body: body('alice', 'bob', 200000, true) }),
        one('a4', { after: 'a3', now: T0 + 3000, body: '{\n  "to": "bob",\n  "amount": 200000,\n  "from": "alice"\n}' }),
      ],
    },
    // Keys the contract refuses (an RFC 8941 string of 1 to 255 printable
    // ASCII characters is the only key), each its own small transfer, one
    // after the other: each must be answered 400 and move nothing.
    {
      name: 'malformed-keys',
      // Seven attempts one after the other, a dozen steps each at most.
      bound: 7 * 16,
      attempts: MALFORMED_KEYS.map((key, i) =>
        one('a' + (i + 1), {
          intent: 'i' + (i + 1),
          key,
          body: body('alice', 'bob', 1000 * (i + 1)),
          after: i ? 'a' + i : '',
          now: T0 + i * 1000,
        }),
      ),
    },
    // A valid key of exactly 255 characters between its quotes: accepted,
    // paid once, and its retry replayed.
    {
      name: 'longest-key',
      attempts: [one('a1', { key: LONGEST_KEY }), one('a2', { key: LONGEST_KEY, after: 'a1', now: T0 + 1000 })],
    },
    // The answer is delivered, then the same request comes again with its
    // fields reordered (reordered-json loses the first answer).
    {
      name: 'reordered-after-answer',
      attempts: [one('a1'), one('a2', { after: 'a1', body: body('alice', 'bob', 200000, true), now: T0 + 1000 })],
    },
    labDay(),
  ].map(normalize);
}

// normalize fills a scenario's intents from its attempts' first bodies.
function normalize(s) {
  const intents = new Map();
  for (const a of s.attempts) {
    // A wish sent first without a customer (refused 401) is still the
    // customer's: the attempt that names one says whose.
    if (intents.has(a.intent)) {
      if (!intents.get(a.intent).customer && a.customer) intents.get(a.intent).customer = a.customer;
      continue;
    }
    let t = {};
    try {
      t = JSON.parse(a.body);
    } catch {
      // an invalid body has no amount
    }
    intents.set(a.intent, {
      id: a.intent,
      customer: a.customer || '',
      from: String(t.from || ''),
      to: String(t.to || ''),
      amount: Number(t.amount) || 0,
    });
  }
  return Object.assign({}, s, { intents: s.intents || [...intents.values()] });
}

// runSchedule plays one schedule: choose(run, options) picks the next
// action among options (attempt ids, and 'crash:aN' where the scenario
// crashes); it returns the run and its decisions, each {options, pick,
// stepped}: stepped is false for a pick whose call found the write lock
// taken and waited (no step). The schedule a caller is handed is the
// stepped picks (stepsOf): as long as the run's step count, and replayed
// with force (replaySchedule, the page's bench) it runs the same steps.
async function runSchedule(scenario, choose, bound, traced, force) {
  const run = await newRun(scenario, traced);
  const decisions = [];
  // A scenario of many attempts one after the other may need more steps.
  const limit = Math.max(bound, scenario.bound || 0);
  while (!run.done()) {
    if (run.steps >= limit) {
      run.end();
      break;
    }
    let options = run.enabled().map((a) => a.id);
    if (options.length === 0) {
      const w = run.waiting();
      if (w.length === 0) break; // an attempt awaits something that never comes: the watchdog's
      for (const a of w) a.waiting = false; // the holder is gone: try again
      options = w.map((a) => a.id);
    }
    if (scenario.crash) {
      const c = run.byId.get(scenario.crash);
      if (c && !c.ended && c.state === 'parked') options = options.concat('crash:' + c.id);
    }
    const pick = choose(options, decisions.length, decisions);
    const d = { options, pick, stepped: true };
    decisions.push(d);
    if (pick.startsWith('crash:')) await run.crash(run.byId.get(pick.slice(6)));
    else d.stepped = await run.step(run.byId.get(pick), force);
  }
  return { run, decisions };
}

// stepsOf is a schedule's picks that were steps: what the explorer hands
// out and replays.
function stepsOf(decisions) {
  return decisions.filter((d) => d.stepped).map((d) => d.pick);
}

// preemptions counts the switches away from an attempt that could have
// gone on.
function preemptions(decisions) {
  let n = 0;
  for (let i = 1; i < decisions.length; i++) {
    const prev = decisions[i - 1].pick;
    if (decisions[i].pick !== prev && decisions[i].options.includes(prev)) n++;
  }
  return n;
}

let lastBeat = 0;
function beat(tried) {
  const now = performance.now();
  if (now - lastBeat > 50) {
    lastBeat = now;
    send({ type: 'beat', tried });
  }
}

// exploreScenario tries every schedule of a two-attempt scenario with at
// most p preemptions, for p = 0, 1, 2, …, maxPreemptions: a depth-first
// walk over the choices, replaying each schedule from the reset database
// (a continuation cannot be copied). At the first p where a schedule
// breaks a rule it finishes that p and answers the shortest breaking one:
// fewest switches first, then fewest steps.
async function exploreScenario(scenario, o, counter) {
  let noted = null;
  let found = null;
  const perRule = {};
  // wanted: a rule the student's rung asks for broke (o.want). Until one
  // did, a break of later rungs' rules only does not end the walk: the
  // next levels may break the rung's own (a SELECT then an INSERT breaks
  // rule 3 in one switch and rule 1 in two), and that order is shown.
  const wanted = () => !o.want || Object.keys(perRule).some((n) => o.want.includes(n));
  for (let p = 0; p <= o.maxPreemptions; p++) {
    let best = null;
    let prefix = [];
    const deeper = !!found && !wanted();
    for (;;) {
      if (counter.tried >= o.maxSchedules) return { best: found || best, exhausted: false, noted, perRule };
      const { run, decisions } = await runSchedule(
        scenario,
        (options, i, decisions) => {
          if (i < prefix.length) return prefix[i];
          // Go on with the attempt that ran last, when it can: the
          // walk's first schedule of each branch has no extra switch.
          const last = i > 0 ? decisions[i - 1].pick : null;
          return options.includes(last) ? last : options[0];
        },
        o.bound,
        false,
      );
      counter.tried++;
      beat(counter.tried);
      const verdict = preemptions(decisions) <= p ? run.judge(true) : { ok: true };
      if (verdict.broken && verdict.broken.includes(RETENTION_RULE)) counter.retention = true;
      const broke = brokeOrder(verdict);
      if (broke && (!found || scenario.walkAll) && (!best || run.steps < best.steps))
        best = { schedule: stepsOf(decisions), steps: run.steps, broken: verdict.broken };
      if (broke && (!found || scenario.walkAll || deeper)) byRule(perRule, verdict.broken, decisions, run.steps);
      if (verdict.notes && !noted) noted = await confirmNoted(scenario, decisions, o, counter);
      if (found && noted && !scenario.walkAll && !deeper) break;
      if (deeper && wanted()) break;
      prefix = nextPrefix(decisions, p);
      if (!prefix) break;
    }
    if (best && (!found || best.steps < found.steps)) found = best;
    // A crash scenario walks every level, once it broke, for the rules
    // and the note (a claim never settled) that only a crash after the
    // claim shows: a preemption or more. Its orders are few.
    if (found && !scenario.walkAll && wanted()) break;
  }
  return { best: wantedBest(found, perRule, o), exhausted: true, noted, perRule };
}

// wantedBest is the order to show: the shortest that broke a rule the
// rung asks for (o.want), when a longer one did and the shortest break
// was only later rungs' rules; else the shortest break.
function wantedBest(found, perRule, o) {
  if (!found || !o.want || (found.broken || []).some((n) => o.want.includes(n))) return found;
  let best = found;
  for (const name of o.want) {
    const r = perRule[name];
    if (r && (best === found || r.steps < best.steps)) best = { schedule: r.schedule, steps: r.steps, broken: [name] };
  }
  return best;
}

// RETENTION_RULE is rule 7, the retention a file publishes against the
// clients' hour of retries: a policy, broken in every order alike when
// the retention is too short. An order that breaks it alone is no
// counterexample, and the explorer looks past it for the rules an order
// does break (explore says apart that rule 7 broke: retentionBroken).
const RETENTION_RULE = 'retention-outlasts-retries';

// brokeOrder is whether a judged order broke a rule other than rule 7.
function brokeOrder(verdict) {
  return !verdict.ok && (verdict.broken || []).some((n) => n !== RETENTION_RULE);
}

// byRule keeps, for each rule a schedule broke, the shortest schedule
// that broke it: the shortest break of a scenario may keep a rule that a
// longer order breaks (a crash before the claim, or after the transfer).
function byRule(perRule, broken, decisions, steps) {
  for (const name of broken || []) {
    if (name === RETENTION_RULE) continue;
    if (!perRule[name] || steps < perRule[name].steps) perRule[name] = { schedule: stepsOf(decisions), steps };
  }
}

// nextPrefix is the next schedule of the depth-first walk: the deepest
// decision with an untried option whose schedule stays within p
// preemptions. Options are tried in order; the first was the default.
function nextPrefix(decisions, p) {
  for (let i = decisions.length - 1; i >= 0; i--) {
    const d = decisions[i];
    const at = d.options.indexOf(d.pick);
    for (let j = at + 1; j < d.options.length; j++) {
      const cand = decisions.slice(0, i).map((x) => x.pick);
      cand.push(d.options[j]);
      if (preemptionsOf(cand, decisions) <= p) return cand;
    }
  }
  return null;
}

// preemptionsOf counts the preemptions of a prefix, with the options each
// decision had (the same up to the prefix's last choice: a schedule is
// determined by its choices).
function preemptionsOf(picks, decisions) {
  let n = 0;
  for (let i = 1; i < picks.length; i++) {
    if (picks[i] !== picks[i - 1] && decisions[i].options.includes(picks[i - 1])) n++;
  }
  return n;
}

// mulberry32 is a small seeded PRNG: the same seed, the same schedules.
function mulberry32(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// exploreRandom plays the seeded random schedules of a scenario of more
// than two attempts (too many interleavings to walk), all
// o.randomSchedules of them, and answers the shortest that breaks a rule
// (the first found of that length): not the first break, which is as
// long as chance made it. The same seed, the same answer.
async function exploreRandom(scenario, o, counter) {
  const rnd = mulberry32(o.seed);
  let best = null;
  let noted = null;
  const perRule = {};
  const n = scenario.randomSchedules ? Math.min(o.randomSchedules, scenario.randomSchedules) : o.randomSchedules;
  for (let i = 0; i < n && counter.tried < o.maxSchedules; i++) {
    const { run, decisions } = await runSchedule(scenario, (options) => options[Math.floor(rnd() * options.length)], o.bound, false);
    counter.tried++;
    beat(counter.tried);
    const verdict = run.judge(true);
    if (verdict.broken && verdict.broken.includes(RETENTION_RULE)) counter.retention = true;
    const broke = brokeOrder(verdict);
    if (broke && (!best || run.steps < best.steps)) best = { schedule: stepsOf(decisions), steps: run.steps, broken: verdict.broken };
    if (broke) byRule(perRule, verdict.broken, decisions, run.steps);
    if (verdict.notes && !noted) noted = await confirmNoted(scenario, decisions, o, counter);
  }
  return { best, exhausted: true, noted, perRule };
}

// confirmNoted replays an order whose brief verdict counted notes, judged
// in full, and answers it as the scenario's noted order only if the full
// verdict has notes too: the brief one knows less of each answer (its
// headers, what it threw), and an order it noted wrongly, taken first,
// hid the one that had the note (a 500 from a check-then-insert hidden
// behind a 409 read as one without Retry-After). A few such replays a
// scenario at most.
const CONFIRMS = 4;
async function confirmNoted(scenario, decisions, o, counter) {
  counter.confirms = counter.confirms || new Map();
  const n = counter.confirms.get(scenario.name) || 0;
  if (n >= CONFIRMS) return null;
  counter.confirms.set(scenario.name, n + 1);
  const schedule = stepsOf(decisions);
  const replay = await replaySchedule(scenario, schedule, o.bound);
  const notes = (replay.verdict.report && replay.verdict.report.notes) || [];
  return notes.length ? { schedule } : null;
}

// want: the rules the student's rung asks for (lab-rungs.js askedRules),
// looked for past a break of later rungs' rules only; null: the first
// break ends a scenario's walk.
const EXPLORE_DEFAULTS = { bound: 40, maxPreemptions: 3, maxSchedules: 20000, randomSchedules: 200, seed: 1, only: null, want: null };

// explore runs the rules' scenarios until a schedule breaks a rule and
// answers the shortest one found, replayed with its trace and the full
// verdict; or that none broke within the bound.
async function explore(options) {
  need();
  const o = Object.assign({}, EXPLORE_DEFAULTS, options || {});
  const counter = { tried: 0 };
  const started = performance.now();
  const perScenario = [];
  // Answers the contract does not give, though no rule broke (a malformed
  // key answered 201): the first such schedule of a scenario, replayed
  // for the judge's words. They do not stop the explorer.
  const notes = [];
  let answers = [];
  for (const sc of scenarios()) {
    if (o.only && !o.only.includes(sc.name)) continue;
    const before = counter.tried;
    const { best, noted, perRule } = sc.random ? await exploreRandom(sc, o, counter) : await exploreScenario(sc, o, counter);
    perScenario.push({ name: sc.name, tried: counter.tried - before, broke: !!best, noted: !!noted });
    // A held scenario is replayed once, in the noted order if any: for
    // its notes' words, and for what its attempts were answered (the
    // grade shows it: a 422 or a 409 seen is progress though no rule
    // changed).
    // A scenario that broke a rule is replayed in its noted order too:
    // a note (a claim never settled) may be this rung's business though
    // the rule broken is a later rung's. Each note keeps its replay's
    // trace, so that the page names the line of the call behind it.
    if (noted || (!best && o.answers)) {
      const replay = await replaySchedule(sc, noted ? noted.schedule : [], o.bound);
      if (noted)
        for (const n of (replay.verdict.report && replay.verdict.report.notes) || [])
          notes.push(Object.assign({ scenario: sc.name, schedule: noted.schedule, trace: replay.trace }, n));
      if (o.answers && !best) answers = (replay.attempts || []).map((a) => ({ id: a.id, status: a.answer ? a.answer.status : 0 }));
    }
    if (best) {
      const replay = await replaySchedule(sc, best.schedule, o.bound);
      // A rule the shortest order kept, broken by another order: that
      // order is replayed for the violations, whose causes say which
      // rung fixes it.
      const kept = new Set(((replay.verdict.report && replay.verdict.report.rules) || []).filter((r) => r.ok).map((r) => r.rule.name));
      for (const [name, found] of Object.entries(perRule || {})) {
        if (!kept.has(name)) continue;
        const other = await replaySchedule(sc, found.schedule, o.bound);
        const rule = ((other.verdict.report && other.verdict.report.rules) || []).find((r) => r.rule.name === name);
        found.violations = (rule && rule.violations) || [];
      }
      return {
        broke: true,
        scenario: sc.name,
        schedule: best.schedule,
        steps: best.steps,
        replayedSteps: replay.steps,
        tried: counter.tried,
        ms: performance.now() - started,
        scenarios: perScenario,
        trace: replay.trace,
        verdict: replay.verdict,
        attempts: replay.attempts,
        notes,
        // Every rule an order of the scenario broke (at the walk's first
        // level that broke one), with the shortest order that broke it.
        perRule,
        // Rule 7 broke (the published retention), in every order alike.
        retentionBroken: !!counter.retention,
      };
    }
  }
  return {
    broke: false,
    tried: counter.tried,
    ms: performance.now() - started,
    scenarios: perScenario,
    notes,
    answers,
    bound: o.bound,
    maxPreemptions: o.maxPreemptions,
    retentionBroken: !!counter.retention,
    message: 'no break found within this bound',
  };
}

// replaySchedule plays a found schedule again, traced. It holds only the
// picks that were steps, so each runs with force (Run.step): no pick
// waits, and the replay has the found run's steps, one per pick.
async function replaySchedule(scenario, schedule, bound) {
  const { run } = await runSchedule(scenario, (options, i) => schedule[i] ?? options[0], bound, true, true);
  return { trace: run.trace, verdict: run.judge(false), attempts: run.state().attempts, steps: run.steps };
}

// bench measures schedules a second: n schedules of one scenario, each
// judged, as the explorer runs them.
async function measure(name, n) {
  need();
  const sc = scenarios().find((s) => s.name === name);
  if (!sc) throw new Error('no scenario ' + name);
  let i = 0;
  const t0 = performance.now();
  for (; i < n; i++) {
    const { run } = await runSchedule(sc, (options) => options[i % options.length], 40, false);
    run.judge(true);
    beat(i);
  }
  const ms = performance.now() - t0;
  return { schedules: n, ms, perSecond: (n * 1000) / ms };
}

// --- messages ------------------------------------------------------------------

const CALLS = {
  load: (source, accounts, shift) => load(source, accounts, shift),
  start: (scenario) => start(scenario),
  step: (id, force) => step(id, force),
  inject: (id, kind) => inject(id, kind),
  // The scenarios' list needs no handler: a page whose saved file does not
  // load still lists them.
  scenarios: () => scenarios(),
  explore: (options) => explore(options),
  measure: (name, n) => measure(name, n),
};

// DIRECT are the calls the module also exports as plain Wasm functions
// (wasm/direct_js.go), by their number there. A call through syscall/js
// passes the Go scheduler's event loop; a direct one is a plain call, and
// the explorer makes about sixteen a schedule.
const DIRECT = ['labStep', 'labPay', 'labReset', 'labRelease', 'labVerdict', 'labSetBalance'];

// withDirectCalls returns the engine's functions with DIRECT's made
// direct: the arguments, joined by NUL characters, are written into the
// module's memory, and the answer is read from it. The module is built
// with this file; one without the exports (an old copy a cache kept) is
// refused with its reason, rather than run slowly without a word.
function withDirectCalls(engine, exports) {
  const out = { ...engine };
  for (const name of ['labDirect', 'labDirectIn', 'labDirectOut'])
    if (typeof exports[name] !== 'function')
      throw new Error('the engine module exports no ' + name + ': it is older than the lab runner; reload the page');
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  DIRECT.forEach((name, fn) => {
    out[name] = (...args) => {
      const bytes = enc.encode(args.join('\0'));
      const at = exports.labDirectIn(bytes.length) >>> 0;
      new Uint8Array(exports.mem.buffer, at, bytes.length).set(bytes);
      const n = exports.labDirect(fn, bytes.length);
      return dec.decode(new Uint8Array(exports.mem.buffer, exports.labDirectOut() >>> 0, n));
    };
  });
  return out;
}

async function init(m) {
  try {
    (0, eval)(m.wasmExec + '\n//# sourceURL=wasm_exec.js');
    const go = new self.Go();
    const ready = new Promise((resolve) => {
      self.idemlabReady = resolve;
    });
    const instance = await WebAssembly.instantiate(m.module, go.importObject);
    go.run(instance);
    await ready;
    api = withDirectCalls(self.idemlab, instance.exports);
    delete self.idemlab;
    delete self.idemlabReady;
    lockDown();
    send({ type: 'ready' });
  } catch (e) {
    send({ type: 'failed', error: String(e && e.message ? e.message : e) });
  }
}

self.addEventListener('message', async (e) => {
  const m = e.data;
  if (m.type === 'init') {
    await init(m);
    return;
  }
  const { id, fn, args } = m;
  try {
    if (!api) throw new Error('the runner has not started');
    const f = CALLS[fn];
    if (!f) throw new Error('no such call: ' + fn);
    const value = await f(...(args || []));
    send({ type: 'result', id, value });
  } catch (err) {
    send({ type: 'error', id, error: String(err && err.message ? err.message : err) });
  }
});
