// engine.js is the page's side of the worker: it starts web/worker.js and
// turns each call into a Promise of the parsed JSON answer.
//
//   const engine = startEngine();
//   await engine.ready;            // resolves with version(), rejects with {kind, message}
//   const {session, state} = await engine.call('open', scenarioJSON, '');
//
// kind is 'missing' (no module on the server), 'nowasm' (no WebAssembly)
// or 'failed'. A call whose answer is {"error": …} rejects with an Error.

// rel turns a worker's epoch milliseconds into the page's clock.
const rel = (epoch) => epoch - performance.timeOrigin;

// recordTiming turns the worker's stage times into performance measures
// on the page's clock: idemlab-fetch (request to first byte),
// idemlab-compile (download and compile), idemlab-go-start (the Go runtime
// and the bridge until ready).
function recordTiming(tm) {
  if (!tm || !performance.measure) return;
  try {
    performance.measure('idemlab-fetch', { start: rel(tm.start), end: rel(tm.response) });
    performance.measure('idemlab-compile', { start: rel(tm.response), end: rel(tm.compiled) });
    performance.measure('idemlab-go-start', { start: rel(tm.compiled), end: rel(tm.ready) });
  } catch {
    // A measure with a missing stage is only a lost figure.
  }
}

export function startEngine() {
  let settle;
  const ready = new Promise((resolve, reject) => {
    settle = { resolve, reject };
  });
  if (typeof WebAssembly !== 'object' || typeof Worker !== 'function') {
    settle.reject({ kind: 'nowasm', message: 'no WebAssembly' });
    return { ready, call: () => Promise.reject(new Error('no engine')) };
  }
  // boot.js may have started the worker already (see there).
  const boot = globalThis.idemlabBoot;
  const worker = boot ? boot.worker : new Worker('worker.js');
  const pending = new Map();
  let nextId = 1;
  worker.onmessage = (e) => {
    const m = e.data;
    switch (m.type) {
      case 'ready':
        recordTiming(m.timing);
        settle.resolve(JSON.parse(m.version || '{}'));
        break;
      case 'missing':
      case 'nowasm':
      case 'failed':
        settle.reject({ kind: m.type, message: m.why || m.error || m.type });
        for (const p of pending.values()) p.reject(new Error(m.error || m.type));
        pending.clear();
        break;
      case 'progress': {
        const p = pending.get(m.id);
        if (p && p.onProgress) p.onProgress(m.done, m.total);
        break;
      }
      case 'result': {
        const p = pending.get(m.id);
        if (!p) break;
        pending.delete(m.id);
        // The call's own time in the worker: the rest of its round trip is
        // the way between the threads and the parsing.
        if (m.ran && m.ran[1] && !p.quiet) performance.measure('idemlab-call-' + p.fn, { start: rel(m.ran[0]), end: rel(m.ran[1]) });
        let v;
        try {
          v = JSON.parse(m.result);
        } catch (err) {
          p.reject(new Error('the engine answered with something that is not JSON'));
          break;
        }
        if (v && typeof v === 'object' && 'error' in v && Object.keys(v).length === 1) {
          p.reject(new Error(v.error));
        } else {
          p.resolve(v);
        }
        break;
      }
    }
  };
  worker.onerror = (e) => {
    settle.reject({ kind: 'failed', message: e.message || 'worker error' });
  };
  if (boot) {
    for (const e of boot.takeOver()) {
      if (e.type === 'message') worker.onmessage(e);
      else worker.onerror(e);
    }
  }
  function call(fn, ...args) {
    return send(fn, null, false, args);
  }
  function callWithProgress(fn, onProgress, ...args) {
    return send(fn, onProgress, false, args);
  }
  // quiet is a call whose time is not recorded as a measure: the page's
  // background work (warmUp in app.js), which must not pass for the
  // learner's own calls in the figures.
  function quiet(fn, ...args) {
    return send(fn, null, true, args);
  }
  function send(fn, onProgress, quiet, args) {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { fn, resolve, reject, onProgress, quiet });
      worker.postMessage({ id, fn, args });
    });
  }
  return { ready, call, callWithProgress, quiet };
}
