// lab.js is the page's side of the lab's runner (runner.js): it hands the
// worker the engine module and Go's loader (the worker's own policy lets
// it fetch nothing), turns each call into a Promise, and stops a handler
// that hangs: a call that neither answers nor beats within the budget
// gets its worker terminated and a fresh one started, with the last
// handler loaded again, so the page never waits on the student's loop.
//
//   const runner = startRunner({ budgetMs: 2000 });
//   await runner.ready;
//   await runner.load(source);                  // {tables, retentionSeconds} or {error}
//   let s = await runner.start(scenario);        // the bench: every attempt parked at its first call
//   s = await runner.step('a1');                 // runs a1's call, to its next one
//   s = await runner.step('a1', true);           // the same, a Busy thrown (playing back a found schedule)
//   s = await runner.inject('a2', 'crash');      // or 'lose', 'timeout'
//   const found = await runner.explore();        // {broke, scenario, schedule, trace, verdict, tried}
//
// A call the watchdog stopped rejects with an Error whose stopped is true,
// kind 'budget' or 'button', and hung the call that had gone quiet before
// the stop ('' if none). onSlow(fn) says a call fn ('step', 'explore', …)
// has gone quiet for slowMs (no answer, no beat): a hung handler, seen
// before the budget stops it; onSlow('') says it spoke again or was
// stopped.

const assets = {};

// loadAssets fetches and compiles the module once per page: a restarted
// worker gets the same compiled module.
function loadAssets() {
  if (!assets.promise) {
    const wasm = new URL('../idemlab.wasm', import.meta.url);
    const exec = new URL('../wasm_exec.js', import.meta.url);
    assets.promise = Promise.all([
      fetch(wasm).then((r) => {
        if (!r.ok) throw new Error('idemlab.wasm: HTTP ' + r.status);
        const type = r.headers.get('Content-Type') || '';
        return WebAssembly.compileStreaming && type.startsWith('application/wasm')
          ? WebAssembly.compileStreaming(r)
          : r.arrayBuffer().then((b) => WebAssembly.compile(b));
      }),
      fetch(exec).then((r) => {
        if (!r.ok) throw new Error('wasm_exec.js: HTTP ' + r.status);
        return r.text();
      }),
    ]).then(([module, wasmExec]) => ({ module, wasmExec }));
  }
  return assets.promise;
}

export function startRunner(options) {
  const o = Object.assign({ budgetMs: 2000, slowMs: 1500, onSlow: () => {} }, options || {});
  const pending = new Map();
  let nextId = 1;
  let worker = null;
  let ready = null;
  let timer = 0;
  let slowTimer = 0;
  let slow = ''; // the call said to have gone quiet (onSlow)
  let source = null;
  let accounts = null;
  let shift = 0;
  const stats = { workers: 0, stopped: 0, lastStop: '' };

  function spawn() {
    stats.workers++;
    const w = new Worker(new URL('runner.js', import.meta.url));
    worker = w;
    let settle;
    ready = new Promise((resolve, reject) => {
      settle = { resolve, reject };
    });
    ready.catch(() => {});
    w.onmessage = (e) => {
      if (w !== worker) return;
      const m = e.data;
      switch (m.type) {
        case 'ready':
          settle.resolve();
          break;
        case 'failed':
          settle.reject(new Error(m.error));
          break;
        case 'beat':
          arm();
          break;
        case 'result':
        case 'error': {
          const p = pending.get(m.id);
          if (!p) break;
          pending.delete(m.id);
          if (m.type === 'result') p.resolve(m.value);
          else p.reject(new Error(m.error));
          arm();
          break;
        }
      }
    };
    w.onerror = (e) => settle.reject(new Error(e.message || 'the runner failed'));
    loadAssets().then(
      (a) => w.postMessage({ type: 'init', module: a.module, wasmExec: a.wasmExec }),
      (err) => settle.reject(err),
    );
    // A fresh worker after a stop has the last handler again.
    if (source !== null) {
      const s = source;
      ready.then(() => post('load', [s, accounts, shift])).catch(() => {});
    }
  }

  // arm restarts the watchdog while calls are out: each answer or beat
  // gives the next step a full budget.
  function arm() {
    clearTimeout(timer);
    timer = 0;
    quiet();
    if (pending.size > 0) {
      timer = setTimeout(
        () => stop('the handler ran ' + o.budgetMs + ' ms without reaching its next step or its answer: stopped', 'budget'),
        o.budgetMs,
      );
      const fn = pending.values().next().value.fn;
      slowTimer = setTimeout(() => {
        slow = fn;
        o.onSlow(fn);
      }, o.slowMs);
    }
  }

  // quiet ends the wait for a call gone quiet, and says so if it was said.
  function quiet() {
    clearTimeout(slowTimer);
    slowTimer = 0;
    if (slow) {
      slow = '';
      o.onSlow('');
    }
  }

  // stop terminates the worker (a hung handler, or the Stop button) and
  // starts a fresh one; every call out rejects.
  function stop(why, kind) {
    clearTimeout(timer);
    timer = 0;
    const hung = slow;
    quiet();
    stats.stopped++;
    stats.lastStop = why || 'stopped';
    worker.terminate();
    const out = [...pending.values()];
    pending.clear();
    spawn();
    for (const p of out) {
      const err = new Error(stats.lastStop);
      err.stopped = true;
      err.kind = kind;
      err.hung = hung;
      p.reject(err);
    }
  }

  function post(fn, args) {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject, fn });
      worker.postMessage({ id, fn, args });
      arm();
    });
  }

  async function call(fn, ...args) {
    await ready;
    return post(fn, args);
  }

  spawn();
  return {
    get ready() {
      return ready;
    },
    stats,
    // shiftLines: the lines of the file above the handler's own first
    // line (the page composes the tables above it), so that a thrown
    // error's line is said as the editor numbers it.
    load(src, accts, shiftLines) {
      source = String(src);
      accounts = accts || null;
      shift = shiftLines || 0;
      return call('load', source, accounts, shift);
    },
    start: (scenario) => call('start', scenario),
    step: (id, force) => call('step', id, !!force),
    inject: (id, kind) => call('inject', id, kind),
    scenarios: () => call('scenarios'),
    explore: (opts) => call('explore', opts || {}),
    measure: (name, n) => call('measure', name, n),
    stop: () => stop('stopped by the Stop button', 'button'),
  };
}
