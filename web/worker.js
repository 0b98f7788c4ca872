// worker.js runs the engine's WebAssembly module (Go, the engine, SQLite on
// the memdb VFS and the lab's scenario runner) off the page's main thread,
// so a slow call never freezes the page.
//
// Messages in:  {id, fn, args}            call globalThis.idemlab[fn](...args)
// Messages out: {type: 'ready', version, timing}  the module started;
//                                          timing has epoch ms of its stages
//               {type: 'missing', why}    no module (or no wasm_exec.js) on the server
//               {type: 'nowasm'}          this browser has no WebAssembly
//               {type: 'failed', error}   the module did not start
//               {type: 'result', id, result, ran}   result is the module's JSON string;
//                                          ran is [start, end] of the call, epoch ms
//               {type: 'progress', id, done, total}   from day()
'use strict';

// Times are sent to the page as absolute epoch milliseconds, since a
// worker's clock starts later than the page's.
const at = () => performance.timeOrigin + performance.now();

function fail(type, extra) {
  postMessage(Object.assign({ type }, extra || {}));
}

async function start() {
  if (typeof WebAssembly !== 'object' || typeof WebAssembly.instantiate !== 'function') {
    fail('nowasm');
    return;
  }
  const timing = { start: at() };
  // The module's download starts before Go's loader is read, so the two
  // travel together.
  const fetching = fetch('idemlab.wasm');
  fetching.catch(() => {});
  try {
    importScripts('wasm_exec.js');
  } catch (e) {
    fail('missing', { why: 'wasm_exec.js: ' + e.message });
    return;
  }
  let resp;
  try {
    resp = await fetching;
    timing.response = at();
  } catch (e) {
    fail('failed', { error: 'fetch idemlab.wasm: ' + e.message });
    return;
  }
  if (resp.status === 404) {
    fail('missing', { why: 'idemlab.wasm: 404' });
    return;
  }
  if (!resp.ok) {
    fail('failed', { error: 'idemlab.wasm: HTTP ' + resp.status });
    return;
  }
  const go = new Go();
  const ready = new Promise((resolve) => {
    globalThis.idemlabReady = resolve;
  });
  let instance;
  try {
    // Streaming compiles while the bytes arrive; a static host that sends
    // the wrong Content-Type makes it throw, so fall back to the buffer.
    const type = resp.headers.get('Content-Type') || '';
    if (WebAssembly.instantiateStreaming && type.startsWith('application/wasm')) {
      ({ instance } = await WebAssembly.instantiateStreaming(resp, go.importObject));
    } else {
      ({ instance } = await WebAssembly.instantiate(await resp.arrayBuffer(), go.importObject));
    }
  } catch (e) {
    fail('failed', { error: 'compile idemlab.wasm: ' + e.message });
    return;
  }
  timing.compiled = at();
  go.run(instance).then(() => fail('failed', { error: 'the engine module exited' }));
  await ready;
  timing.ready = at();
  let version = '{}';
  try {
    version = await globalThis.idemlab.version();
  } catch (e) {
    version = JSON.stringify({ error: String(e) });
  }
  postMessage({ type: 'ready', version, timing });
}

const started = start();

onmessage = async (e) => {
  const { id, fn, args } = e.data;
  await started;
  const ran = [0, 0];
  const api = globalThis.idemlab;
  let result;
  try {
    if (!api || typeof api[fn] !== 'function') {
      throw new Error('no such engine function: ' + fn);
    }
    const callArgs = (args || []).slice();
    if (fn === 'day') {
      callArgs.push((done, total) => postMessage({ type: 'progress', id, done, total }));
    }
    ran[0] = at();
    result = await api[fn](...callArgs);
  } catch (err) {
    result = JSON.stringify({ error: String(err && err.message ? err.message : err) });
  }
  ran[1] = at();
  postMessage({ type: 'result', id, result, ran });
};
