// lab.js runs the lab page ("Your endpoint"): the rungs and their words,
// the two code boxes (the handler and the schema, in the CodeMirror editor
// that `make editor` bundles into editor.js, or plain text boxes when it is
// missing), the code kept per rung in this browser, download, open a file
// and a link that carries the code.

import { $, el, startTheme } from './dom.js';
import { RUNGS, lt, rungKey, rungWords } from './lab-words.js';
import {
  compose,
  split,
  toLink,
  fromHash,
  load,
  save,
  forget,
  lineShift,
  loadRung,
  saveRung,
  loadDone,
  saveDone,
  keepBench,
  takeBench,
} from './lab-file.js';
import { startRace } from './lab-race.js';
import { setLang } from './strings.js';

const THEME_KEY = 'idemlab.theme';

const lab = {
  lang: 'en',
  rung: 'naive',
  start: null, // the naive handler, {handler, schema}
  handler: null, // the editors (or text boxes): {text(), setText(s), focus()}
  schema: null,
  dirty: false, // the shown code was edited since it was kept
};

const w = (key, vars) => lt(lab.lang, key, vars);

function say(sentence) {
  $('lab-status').textContent = sentence;
}

// --- words, theme, language --------------------------------------------------

function applyWords() {
  document.documentElement.lang = lab.lang;
  for (const e of document.querySelectorAll('[data-w]')) e.textContent = w(e.dataset.w);
  $('lang-select').value = lab.lang;
  document.title = 'idemlab: ' + w('labTitle');
  // The lessons open in the same language.
  $('to-lessons').href = lab.lang === 'en' ? './' : './?lang=' + lab.lang;
}

function setTheme(theme) {
  document.documentElement.dataset.theme = theme;
  $('theme-toggle').setAttribute('aria-pressed', theme === 'dark' ? 'true' : 'false');
}

function initTheme() {
  startTheme(THEME_KEY, setTheme);
  $('theme-toggle').addEventListener('click', () => {
    const next = document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark';
    setTheme(next);
    try {
      localStorage.setItem(THEME_KEY, next);
    } catch {}
  });
}

// --- rungs ----------------------------------------------------------------------

// A rung whose last grade said done is marked ✔ on the ladder (kept in
// this browser, lab-file.js's loadDone), so that the student sees which
// rung they have reached.
function renderRungs() {
  const done = loadDone();
  $('rung-list').replaceChildren(
    ...RUNGS.map((r, i) =>
      el(
        'li',
        {},
        el(
          'button',
          {
            type: 'button',
            'data-rung': r,
            'data-done': done.has(r) ? 'true' : null,
            'aria-current': r === lab.rung ? 'step' : null,
            'aria-label': done.has(r) ? i + 1 + '. ' + rungWords(lab.lang, r).name + ' (' + w('rungDoneMark') + ')' : null,
            onclick: () => chooseRung(r),
          },
          (done.has(r) ? '✔ ' : '') + (i + 1) + '. ' + rungWords(lab.lang, r).name,
        ),
      ),
    ),
  );
  $('rung-title').textContent = rungWords(lab.lang, lab.rung).title;
  $('rung-goal').textContent = w('goal_' + rungKey(lab.rung));
  const hints = w('hints_' + rungKey(lab.rung));
  $('rung-hints').replaceChildren(...(Array.isArray(hints) ? hints : []).map((h) => el('li', {}, h)));
  document.body.dataset.rung = lab.rung;
}

// chooseRung keeps the code of the rung being left and shows the code of
// the rung chosen: what was saved for it, else the code of the rung before
// it (a student climbs from where they are), else the naive handler. The
// rung is remembered: a reload opens it again.
//
// A rung keeps only code written on it: passing through a rung keeps no
// copy there, so that the code carried up is always the latest. Where the
// rung has code of its own but the rung just left holds newer code, the
// page offers to bring that code here (carry).
function chooseRung(r, opts = {}) {
  if (!RUNGS.includes(r) || r === lab.rung) return;
  const left = lab.rung;
  keep();
  setRung(r);
  const url = new URL(location.href);
  url.searchParams.set('rung', r);
  url.hash = '';
  history.replaceState(null, '', url);
  const own = load(r);
  const newer = load(left);
  const offer = own && newer && newer.at > own.at && (newer.handler !== own.handler || newer.schema !== own.schema);
  const said = offer ? w('rungOwnOlder', { rung: rungWords(lab.lang, r).label, from: rungWords(lab.lang, left).label }) : whoseCode(r);
  show(codeOf(r));
  say(said);
  const carryBtn = $('btn-carry');
  carryBtn.hidden = !offer;
  carryBtn.dataset.from = offer ? left : '';
  carryBtn.textContent = offer ? w('carryHere', { from: rungWords(lab.lang, left).label }) : '';
  renderRungs();
  if (opts.focus) $('rung-title').focus();
}

// carry brings the code of the rung just left (chooseRung's offer) onto
// this one, and sets this rung's own code aside for "Bring back my code".
function carry() {
  const from = $('btn-carry').dataset.from;
  const code = from && load(from);
  $('btn-carry').hidden = true;
  if (!code) return;
  save(lab.rung + '~mine', current());
  show(code);
  keep(true);
  $('btn-restore').hidden = false;
  say(w('carried', { from: rungWords(lab.lang, from).label }));
  lab.handler.focus();
}

function setRung(r) {
  lab.rung = r;
  saveRung(r);
  // "Bring back my code" belongs to the rung whose code was set aside.
  $('btn-restore').hidden = !load(r + '~mine');
}

function codeOf(r) {
  const own = load(r);
  if (own) return own;
  for (let i = RUNGS.indexOf(r) - 1; i >= 0; i--) {
    const before = load(RUNGS[i]);
    if (before) return before;
  }
  return lab.start;
}

// whoseCode says which code a rung opens with (codeOf): the student's own
// for it, the code left on an earlier rung, or the starting handler. The
// editor's text changes at once; the sentence says why.
function whoseCode(r) {
  const rung = rungWords(lab.lang, r).label;
  if (load(r)) return w('rungOwnCode', { rung });
  for (let i = RUNGS.indexOf(r) - 1; i >= 0; i--) {
    if (load(RUNGS[i])) return w('rungCarried', { rung, from: rungWords(lab.lang, RUNGS[i]).label });
  }
  return w('rungStarter', { rung });
}

function show(code) {
  lab.dirty = false;
  // An offer to bring other code here (chooseRung) ends with this code.
  $('btn-carry').hidden = true;
  lab.showing = true;
  lab.handler.setText(code.handler);
  lab.schema.setText(code.schema);
  lab.showing = false;
  showErrorList([]);
  showErrorList([], 'schema');
}

function current() {
  return { handler: lab.handler.text(), schema: lab.schema.text() };
}

// keep saves the shown code under the rung shown, a moment after the last
// key (and at once when the rung changes or the page is left): code
// written on the rung (dirty), or, forced, code put there (a file, a
// link, code brought back).
let keepTimer = 0;
function keepSoon() {
  if (lab.showing) return;
  lab.dirty = true;
  // A sentence that said whose code the editor held (whoseCode) is
  // wrong once the student types: it is the student's own now.
  const own = w('rungOwnCode', { rung: rungWords(lab.lang, lab.rung).label });
  if ($('lab-status').textContent === whoseCode(lab.rung) && $('lab-status').textContent !== own) say(own);
  // The errors said of older code are at lines that moved.
  showErrorList([]);
  showErrorList([], 'schema');
  // A link made before the edit carries the old code; the bench runs it.
  $('share-box').hidden = true;
  if (lab.race) lab.race.codeChanged();
  clearTimeout(keepTimer);
  keepTimer = setTimeout(keep, 400);
}

function keep(force) {
  clearTimeout(keepTimer);
  if (!lab.handler || !(lab.dirty || force)) return;
  lab.dirty = false;
  if (!save(lab.rung, current())) say(w('savedNot'));
}

// --- files and links ---------------------------------------------------------------

function download() {
  keep();
  const blob = new Blob([compose(lab.handler.text(), lab.schema.text())], { type: 'text/javascript' });
  const a = el('a', { href: URL.createObjectURL(blob), download: 'handler-' + lab.rung + '.js' });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

async function openFile(file) {
  if (!file) return;
  try {
    if (file.size > 256 * 1024) throw new Error('larger than 256 KB');
    const code = split(await file.text());
    show(code);
    keep(true);
    say(w('opened', { name: file.name }));
  } catch (err) {
    say(w('openFailed', { error: err.message === 'no async function transfer(req, db, pay)' ? w('notAHandler') : err.message }));
  }
}

async function share() {
  keep();
  const base = location.href.split('#')[0];
  const link = await toLink(base, Object.assign({ rung: lab.rung }, current()));
  $('share-box').hidden = false;
  $('share-link').value = link;
  let copied = false;
  try {
    await navigator.clipboard.writeText(link);
    copied = true;
  } catch {}
  say((copied ? w('linkCopied') : w('linkReady')) + (link.length > 8000 ? ' ' + w('linkTooLong', { n: link.length }) : ''));
  if (!copied) $('share-link').select();
}

// startOver shows the code the rung starts from (what codeOf gives once
// the rung's own code is gone: the code kept on the rung before it, else
// the naive handler) and sets the student's code aside for "Bring back my
// code".
function startOver() {
  // The question names the code it starts from: on rung 6 that is the
  // code kept on rung 5, not the naive handler.
  const before = RUNGS.slice(0, RUNGS.indexOf(lab.rung)).findLast((r) => load(r));
  const from = before ? w('fromRung', { rung: rungWords(lab.lang, before).label }) : w('fromStart');
  if (!confirm(w('startOverConfirm', { from }))) return;
  keep();
  const mine = current();
  forget(lab.rung);
  show(codeOf(lab.rung));
  save(lab.rung + '~mine', mine);
  $('btn-restore').hidden = false;
  say(w('startedOver', { from }));
  lab.handler.focus();
}

// openLink shows the code a link carries (location.hash), as the rung it
// names, and keeps it. The student's own code of that rung, when it
// differs, is set aside (restore). It returns whether the hash held code.
async function openLink() {
  let linked;
  try {
    linked = await fromHash(location.hash);
  } catch (err) {
    say(w('linkFailed', { error: err.message }));
    return false;
  }
  if (!linked) return false;
  if (RUNGS.includes(linked.rung)) setRung(linked.rung);
  const code = { handler: linked.handler, schema: linked.schema };
  renderRungs();
  const own = load(lab.rung);
  const aside = own && (own.handler !== code.handler || own.schema !== code.schema);
  if (aside) save(lab.rung + '~mine', own);
  $('btn-restore').hidden = !load(lab.rung + '~mine');
  show(code);
  keep(true);
  say(w(aside ? 'openedLinkAside' : 'openedLink', { rung: rungWords(lab.lang, lab.rung).label }));
  return true;
}

// restore brings back the student's own code that a link set aside.
function restore() {
  const mine = load(lab.rung + '~mine');
  if (!mine) return;
  show(mine);
  keep(true);
  forget(lab.rung + '~mine');
  $('btn-restore').hidden = true;
  say(w('restored'));
  lab.handler.focus();
}

// --- errors beside the editor -------------------------------------------------------

// showErrorList says each error marked in the handler's editor beside it:
// its line (the box's numbering) as a button that puts the cursor there,
// and what went wrong.
// box: the tables box ('schema') or the handler's (the default); each list
// replaces only its own box's errors.
function showErrorList(list, box = 'handler') {
  const where = $(box === 'schema' ? 'schema-errors' : 'handler-errors');
  where.replaceChildren(
    ...list.map((e) =>
      el(
        'p',
        { 'data-line': String(e.line) },
        el(
          'button',
          {
            type: 'button',
            title: w(box === 'schema' ? 'goToSchemaLineLabel' : 'goToLineLabel', { line: e.line }),
            onclick: () => goToLine(e.line, box === 'schema' ? lab.schema : lab.handler),
          },
          '⚠ ' + w('goToLine', { line: e.line }),
        ),
        ' ',
        el('span', {}, e.message),
      ),
    ),
  );
}

// goToLine puts the cursor at the start of line n of a box (the
// handler's unless told) and shows it.
function goToLine(n, box = lab.handler) {
  box.focus();
  if (box.goToLine) box.goToLine(n);
}

// --- editors -----------------------------------------------------------------------

// plainBox is the text box the page falls back on without the editor.
function plainBox(parent, label) {
  const ta = el('textarea', { 'aria-label': label, spellcheck: 'false', autocapitalize: 'off' });
  ta.addEventListener('input', keepSoon);
  parent.replaceChildren(ta);
  return {
    text: () => ta.value,
    setText: (s) => (ta.value = s),
    focus: () => ta.focus(),
    showErrors: () => {},
    goToLine(n) {
      const at =
        ta.value
          .split('\n')
          .slice(0, n - 1)
          .join('\n').length + (n > 1 ? 1 : 0);
      ta.setSelectionRange(at, at);
    },
  };
}

async function makeEditors() {
  let createEditor = null;
  try {
    ({ createEditor } = await import('./editor.js'));
  } catch {
    const p = $('editor-problem');
    p.textContent = w('editorMissing');
    p.hidden = false;
  }
  const make = (box, language, label) =>
    createEditor
      ? createEditor(box, { language, label, onChange: keepSoon, syntaxError: w('syntaxError'), braceMissing: w('braceMissing') })
      : plainBox(box, label);
  lab.handler = make($('handler-box'), 'javascript', w('handlerLabel'));
  lab.schema = make($('schema-box'), 'sql', w('schemaLabel'));
  for (const box of [lab.handler, lab.schema]) {
    if (!box.view || box.goToLine) continue;
    // The editor's own view (CodeMirror): the cursor to a line, scrolled
    // to the middle of the window, clear of the sticky header (a line
    // scrolled to the top edge would sit under it).
    const view = box.view;
    box.goToLine = (n) => {
      const line = view.state.doc.line(Math.min(Math.max(1, n), view.state.doc.lines));
      view.dispatch({ selection: { anchor: line.from }, effects: view.constructor.scrollIntoView(line.from, { y: 'center' }) });
    };
  }
  // Each box carries its editor, for the page's tests and the race panel.
  $('handler-box').editor = lab.handler;
  $('schema-box').editor = lab.schema;
  document.body.dataset.editor = createEditor ? 'codemirror' : 'plain';
}

// showAPI fills the API reference (req, db, pay, lab: docs/lab-handler.md,
// or lab-handler.ko.md on the Korean page, rendered by the server or
// written by the export) the first time it is opened. The HTML is
// idemlab's own document, rendered without raw HTML.
let apiLoaded = false;
async function showAPI() {
  if (apiLoaded || !$('lab-api').open) return;
  apiLoaded = true;
  try {
    const resp = await fetch(lab.lang === 'ko' ? 'api/lab/api.ko.html' : 'api/lab/api.html');
    if (!resp.ok) throw new Error('HTTP ' + resp.status);
    $('lab-api-body').innerHTML = await resp.text();
    document.body.dataset.api = 'shown';
  } catch (e) {
    apiLoaded = false;
    $('lab-api-body').textContent = w('apiFailed', { error: e.message });
  }
}

// showRules lists the rules the checker judges (lab.Rules, by number, in
// the page's language) the first time the list is opened.
let rulesLoaded = false;
async function showRules() {
  if (rulesLoaded || !$('lab-rules-all').open) return;
  rulesLoaded = true;
  try {
    const resp = await fetch('api/lab/rules.json');
    if (!resp.ok) throw new Error('HTTP ' + resp.status);
    const rules = await resp.json();
    $('lab-rules-list').replaceChildren(
      ...rules.map((r) => el('li', { value: String(r.n), 'data-rule': r.name }, (lab.lang === 'ko' && r.title_ko) || r.title)),
    );
    document.body.dataset.rules = 'shown';
  } catch (e) {
    rulesLoaded = false;
    $('lab-rules-list').replaceChildren(el('li', {}, w('apiFailed', { error: e.message })));
  }
}

async function loadStart() {
  // The same naive handler, its comments in the page's language.
  const resp = await fetch(lab.lang === 'ko' ? 'api/lab/start.ko.js' : 'api/lab/start.js');
  if (!resp.ok) throw new Error('HTTP ' + resp.status);
  return split(await resp.text());
}

// --- start -------------------------------------------------------------------------

async function main() {
  const params = new URLSearchParams(location.search);
  lab.lang = params.get('lang') === 'ko' ? 'ko' : 'en';
  // The race view speaks the page's language too.
  setLang(lab.lang);
  // The rung the link names, else the one the student was last on.
  const rung = RUNGS.includes(params.get('rung')) ? params.get('rung') : loadRung();
  if (RUNGS.includes(rung)) lab.rung = rung;
  applyWords();
  $('lab-api').addEventListener('toggle', () => showAPI());
  $('lab-rules-all').addEventListener('toggle', () => showRules());
  initTheme();
  $('lang-select').addEventListener('change', (e) => {
    keep();
    // The page loads again in the other language; the bench is played
    // again there.
    keepBench(lab.race && lab.race.place());
    const url = new URL(location.href);
    url.searchParams.set('lang', e.target.value);
    location.assign(url);
  });
  renderRungs();
  const [start] = await Promise.all([
    loadStart().catch((err) => {
      say(w('startMissing', { error: err.message }));
      return { handler: '', schema: '' };
    }),
    makeEditors(),
  ]);
  lab.start = start;
  setRung(lab.rung);
  if (!(await openLink())) show(codeOf(lab.rung));
  // A link pasted into this tab's address bar changes only the hash.
  addEventListener('hashchange', () => {
    keep();
    openLink();
  });
  $('btn-download').addEventListener('click', download);
  $('btn-open').addEventListener('click', () => $('file-input').click());
  $('file-input').addEventListener('change', (e) => {
    openFile(e.target.files[0]);
    e.target.value = '';
  });
  $('btn-share').addEventListener('click', share);
  $('btn-start-over').addEventListener('click', startOver);
  $('btn-restore').addEventListener('click', restore);
  $('btn-carry').addEventListener('click', carry);
  // The race panel runs the code the boxes hold; its lines are the file's,
  // shifted back to the handler box's.
  lab.race = startRace({
    words: w,
    lang: lab.lang,
    rung: () => lab.rung,
    goRung: (r) => chooseRung(r, { focus: true }),
    // The grade's verdict on the rung, kept for the ladder's marks.
    onGraded: (r, done) => {
      saveDone(r, done);
      renderRungs();
    },
    code: () => compose(lab.handler.text(), lab.schema.text()),
    restore: takeBench(),
    lineOf: (n) => n - lineShift(lab.handler.text(), lab.schema.text()),
    showErrors: (list) => {
      const shift = lineShift(lab.handler.text(), lab.schema.text());
      const shown = list.map((e) => ({ line: e.line - shift, message: e.message })).filter((e) => e.line >= 1);
      lab.handler.showErrors(shown);
      showErrorList(shown);
    },
    // The schema's line 1 is the blank line compose puts after the
    // backtick: its line n is the box's line n - 1, past the blank lines
    // compose drops from the box's top.
    showSchemaErrors: (list) => {
      const top = lab.schema.text().match(/^\n*/)[0].length;
      const shown = list.map((e) => ({ line: e.line - 1 + top, message: e.message })).filter((e) => e.line >= 1);
      lab.schema.showErrors(shown);
      showErrorList(shown, 'schema');
      return shown.length ? shown[0].line : 0;
    },
  });
  addEventListener('pagehide', () => keep());
  document.body.dataset.ready = 'true';
  // The page is ready for the student: the code is in the editor.
  performance.mark('idemlab-lab-ready');
}

main();
