// boot.js starts the engine's Web Worker as the page begins to load,
// before the stylesheet and the JavaScript modules arrive, so that the
// engine's download and compilation overlap everything else. A classic
// script, because module scripts wait for the whole page.
//
// It keeps every message the worker sends until engine.js takes the worker
// over from globalThis.idemlabBoot: a worker's messages are not queued for
// a listener that comes later, and "the module is missing" can arrive
// before the page's modules have loaded.
'use strict';
if (typeof Worker === 'function' && typeof WebAssembly === 'object') {
  try {
    const worker = new Worker('worker.js');
    const early = [];
    const keep = (e) => early.push(e);
    worker.addEventListener('message', keep);
    worker.addEventListener('error', keep);
    globalThis.idemlabBoot = {
      worker,
      // takeOver stops keeping messages and returns those kept so far.
      takeOver() {
        worker.removeEventListener('message', keep);
        worker.removeEventListener('error', keep);
        globalThis.idemlabBoot = undefined;
        return early;
      },
    };
    performance.mark('idemlab-worker');
  } catch (e) {
    // engine.js starts the worker itself and reports what went wrong.
  }
}
