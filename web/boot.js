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

// The lesson index, and the lesson the address names (else the first),
// are asked for now as well: the page's modules would ask only once they
// have all arrived and run, one request after the other (measured cold:
// the index at 384 ms, the lesson at 438 ms, the page's files all in by
// 150 ms). app.js takes each answer from globalThis.idemlabEarly by its
// address, once.
(function () {
  if (typeof fetch !== 'function') return;
  const early = {};
  const ask = (url) => {
    const p = fetch(url).then((r) => (r.ok ? r.json() : Promise.reject(new Error(url + ': HTTP ' + r.status))));
    p.catch(() => {});
    early[url] = p;
    return p;
  };
  globalThis.idemlabEarly = early;
  const lang = new URLSearchParams(location.search).get('lang') || 'en';
  const named = new URLSearchParams(location.hash.slice(1)).get('lesson');
  const lessonURL = (id) => 'api/lessons/' + encodeURIComponent(id) + '.' + lang + '.json';
  const index = ask('api/lessons.json');
  if (named) ask(lessonURL(named));
  else
    index.then(
      (list) => {
        if (list && list.length) ask(lessonURL(list[0].id));
      },
      () => {},
    );
})();
