// test.js starts the lab's runner on the bare test page and says when it
// is ready, for the browser tests (server/lab_runtime_browser_test.go).
import { startRunner } from './lab.js';

const runner = startRunner({ budgetMs: Number(new URLSearchParams(location.search).get('budget')) || 2000 });
window.labRunner = runner;
runner.ready.then(
  () => {
    document.body.dataset.runner = 'ready';
  },
  (e) => {
    document.body.dataset.runner = 'failed';
    document.body.dataset.runnerError = String(e.message || e);
  },
);
