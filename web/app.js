// app.js is the lesson player's controller: the lesson text on one side,
// the bench on the other. It fetches lessons as JSON (api/…), runs the
// engine in a worker (engine.js, worker.js), calls it for every action the
// learner takes, and hands each State the engine returns to the views:
// bench.js (the bench, with the race view of race.js), sandbox.js (the
// knobs), day.js (a day of traffic as a picture). Where the learner is
// lives in the URL and their progress in localStorage (place.js). The
// engine judges the goals; the page shows them.
//
// (Over 500 lines on purpose: one controller owns the page's state and the
// one queue its engine calls go through; every view it drives is its own
// module.)

import { t, setLang } from './strings.js';
import { $, el, startTheme, won } from './dom.js';
import { exportRace, warmRaceFonts } from './race.js';
import { startEngine } from './engine.js';
import * as bench from './bench.js';
import { showPicture, showMoment } from './day.js';
import { readHash, hashWriter, saveGoals as recordGoals, markDone, lessonGoals, goalMet, lessonDone } from './place.js';

const THEME_KEY = 'idemlab.theme';
const SHORTCUTS_KEY = 'idemlab.shortcuts';
const MAX_RUN_STEPS = 1000;

const app = {
  engine: null,
  engineInfo: null, // version(): {version, levels, knobs}
  engineProblem: null,
  engineProblemText: '', // what the page says about it
  index: [], // [{id, n, title, summary}]
  lesson: null, // the lesson JSON
  // The bench: the scenario on it and its session in the engine.
  spec: null,
  session: null,
  state: null,
  base: null, // the scenario's own policy, before the sandbox
  override: null, // sandbox overrides {knob: value}, null when none
  moves: [],
  pinned: null, // the lane the learner chose to move next
  lastEvent: null, // an event the learner clicked, shown instead of state.last
  // The race view (bench.js): the model of the state it was built from,
  // the collapsed rows opened, and the width of its box.
  race: null,
  raceOf: null,
  expanded: null,
  raceWidth: 0,
  busy: Promise.resolve(),
  // lang is the language the learner asked for (?lang=ko); a lesson that
  // has no such translation, and any player string without one, shows in
  // English.
  lang: 'en',
  loadSeq: 0,
  // dayRun names the day the engine is replaying, so that Stop, another
  // scenario or another lesson can stop it.
  dayRun: null,
};

// url writes where the learner is into the address bar (place.js).
const url = hashWriter(() => ({
  lesson: app.lesson && app.lesson.id,
  scenario: app.spec && app.spec.id,
  moves: app.moves,
  override: app.override,
}));
const writeHash = () => url.write();

// saveGoals records the goals the engine judged met and redraws what
// shows progress when something new was met.
function saveGoals(lessonId, scenarioId, goals) {
  if (!recordGoals(lessonId, scenarioId, goals)) return;
  renderLessonGoals();
  renderLessonSelect();
}

// --- helpers -------------------------------------------------------------------

function applyI18n(root = document) {
  for (const e of root.querySelectorAll('[data-i18n]')) e.textContent = t(e.dataset.i18n);
  for (const e of root.querySelectorAll('[data-i18n-title]')) {
    e.title = t(e.dataset.i18nTitle);
    e.setAttribute('aria-label', t(e.dataset.i18nTitle));
  }
}

async function fetchJSON(url) {
  // boot.js may have asked already (the first lesson's files).
  const early = globalThis.idemlabEarly;
  if (early && early[url]) {
    const p = early[url];
    delete early[url];
    return p;
  }
  const r = await fetch(url);
  if (!r.ok) throw new Error(url + ': HTTP ' + r.status);
  return r.json();
}

// serial runs engine calls one after another, so a fast typist's keys
// apply in order and never interleave two calls on one session.
function serial(fn) {
  const run = app.busy.then(fn, fn);
  app.busy = run.catch(() => {});
  return run;
}

// --- theme ------------------------------------------------------------------

function setTheme(theme) {
  document.documentElement.dataset.theme = theme;
  $('theme-toggle').setAttribute('aria-pressed', theme === 'dark' ? 'true' : 'false');
  $('theme-toggle').title = theme === 'dark' ? t('themeLight') : t('themeDark');
}

function initTheme() {
  startTheme(THEME_KEY, setTheme);
}

function toggleTheme() {
  const theme = document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark';
  setTheme(theme);
  try {
    localStorage.setItem(THEME_KEY, theme);
  } catch {}
}

// --- the engine --------------------------------------------------------------

function showEngineProblem(msg) {
  const banner = $('engine-problem');
  banner.textContent = '⚠ ' + msg;
  banner.hidden = false;
  app.engineProblemText = msg;
  $('engine-status').textContent = '⚠ ' + msg;
  if ($('bench-body').hasAttribute('aria-busy')) $('step-count').textContent = '⚠ ' + msg;
}

function engineStatus(kind) {
  document.body.dataset.engine = kind;
  if (kind === 'ready') $('engine-status').textContent = '✔ ' + t('engineReady');
}

async function onEngineReady(info) {
  performance.mark('idemlab-engine-ready');
  app.engineInfo = info;
  engineStatus('ready');
  if (app.lesson && !app.session) await openFromHash();
}

function onEngineProblem(p) {
  app.engineProblem = p;
  engineStatus(p.kind);
  if (p.kind === 'missing') showEngineProblem(t('engineMissing'));
  else if (p.kind === 'nowasm') showEngineProblem(t('engineNoWasm'));
  else showEngineProblem(t('engineFailed', { error: p.message }));
}

function engineError(err) {
  const msg = t('engineError', { error: err.message || String(err) });
  const p = $('step-count');
  p.textContent = '⚠ ' + msg;
  p.classList.add('error');
  announce(msg);
}

// --- lessons -------------------------------------------------------------------

function renderLessonSelect() {
  const sel = $('lesson-select');
  const current = app.lesson ? app.lesson.id : sel.value;
  sel.replaceChildren(
    ...app.index.map((l) => {
      const done = lessonDone(l.id, app.lesson);
      // The index has each lesson's title in every language it is written
      // in; the lesson shown has its own, in the language it was read in.
      const title = app.lesson && app.lesson.id === l.id ? app.lesson.title : (l.titles && l.titles[app.lang]) || l.title;
      return el(
        'option',
        { value: l.id, selected: l.id === current },
        (done ? '✓ ' : '') + l.n + '. ' + title + (done ? ' (' + t('lessonDone') + ')' : ''),
      );
    }),
  );
}

// renderLangs offers the lesson's translations; choosing one reloads the
// page with ?lang=, keeping the place in the lesson.
function renderLangs() {
  const sel = $('lang-select');
  const langs = (app.lesson && app.lesson.langs) || ['en'];
  sel.replaceChildren(...langs.map((l) => el('option', { value: l, selected: l === app.lesson.lang }, LANG_NAMES[l] || l)));
  sel.parentElement.hidden = langs.length < 2;
}

const LANG_NAMES = { en: 'English', ko: '한국어' };

function chooseLang(l) {
  const url = new URL(location.href);
  url.searchParams.set('lang', l);
  location.assign(url.toString());
}

function renderLessonGoals() {
  const box = $('lesson-goals');
  if (!app.lesson) return;
  const goals = lessonGoals(app.lesson);
  if (!goals.length) {
    box.hidden = true;
    return;
  }
  const allMet = goals.every((g) => goalMet(app.lesson.id, g));
  if (allMet) markDone(app.lesson.id);
  box.replaceChildren(
    el('h2', { text: t('goals') }),
    el(
      'ul',
      { class: 'goals' },
      goals.map((g) => {
        const met = goalMet(app.lesson.id, g);
        return el(
          'li',
          { class: met ? 'met' : 'not-met', 'data-goal': g.id, 'data-met': met ? 'true' : 'false' },
          el('span', { class: 'goal-icon', 'aria-hidden': 'true', text: met ? '✔' : '○' }),
          ' ',
          el('strong', { text: met ? t('goalMet') : t('goalNotYet') }),
          ' — ',
          g.text,
        );
      }),
    ),
  );
  box.hidden = false;
}

async function loadLesson(id, fromHash) {
  const seq = ++app.loadSeq;
  $('lesson-loading').hidden = false;
  $('lesson-loading').textContent = t('loadingLesson');
  let lesson;
  try {
    const entry = app.index.find((l) => l.id === id);
    const lang = entry && (entry.langs || []).includes(app.lang) ? app.lang : 'en';
    lesson = await fetchJSON('api/lessons/' + encodeURIComponent(id) + '.' + lang + '.json');
  } catch (err) {
    $('lesson-loading').textContent = t('lessonLoadFailed', { error: err.message });
    url.release();
    return;
  }
  if (seq !== app.loadSeq) return;
  // Changing the lesson is queued behind the bench's actions like any
  // other (a replay, a run, a day): it must not close the session under
  // one of them, or that action draws its old lesson's state under the
  // new heading and writes it into the URL. A day still running is asked
  // to stop, so the learner does not wait for it.
  stopRunningDay();
  return serial(() => showLesson(seq, lesson, fromHash));
}

async function showLesson(seq, lesson, fromHash) {
  if (seq !== app.loadSeq) return;
  await closeSession();
  // The first lesson is the page itself; another one opened in place is
  // said in one sentence (the article's own text is not a live region).
  if (app.lesson) announce(t('newsLesson', { n: lesson.n, title: lesson.title }));
  app.lesson = lesson;
  $('lesson-loading').hidden = true;
  document.title = lesson.n + '. ' + lesson.title + ' · idemlab';
  const text = $('lesson-text');
  const published =
    lesson.retention || lesson.scope
      ? el('p', { class: 'published', text: t('published', { retention: lesson.retention || '—', scope: lesson.scope || '—' }) })
      : null;
  // The HTML is rendered from markdown on the server with raw HTML refused.
  text.innerHTML = '<h1>' + escapeHTML(lesson.n + '. ' + lesson.title) + '</h1>' + lesson.html;
  if (published) text.querySelector('h1').after(published);
  for (const holder of text.querySelectorAll('.scenario[data-scenario]')) mountScenarioCard(holder);
  const hints = $('lesson-hints');
  hints.querySelector('ol').replaceChildren(...(lesson.hints || []).map((h) => el('li', { text: h })));
  hints.hidden = !(lesson.hints || []).length;
  hints.open = false;
  renderLessonGoals();
  renderLessonSelect();
  renderLangs();
  const hash = fromHash ? readHash() : { scenario: null, moves: [], override: null };
  const first = (lesson.scenarios || [])[0];
  const sid = hash.scenario && (lesson.scenarios || []).some((s) => s.id === hash.scenario) ? hash.scenario : first && first.id;
  app.spec = (lesson.scenarios || []).find((s) => s.id === sid) || null;
  app.moves = hash.scenario === sid ? hash.moves : [];
  app.override = hash.scenario === sid ? hash.override : null;
  url.release();
  // A link that names a later scenario opens the lesson where its text
  // is; one that names the first (every link the page writes names one)
  // opens it at the top, where the text leads to it.
  markActiveCard(hash.scenario === sid && first && sid !== first.id);
  bench.renderBenchHead();
  writeHash();
  if (app.engineInfo) await openScenarioNow();
  else {
    app.lastEvent = null;
    bench.drawBenchWaiting(app.spec);
  }
  lessonPainted();
}

// lessonPainted marks "idemlab-lesson-painted" once the first lesson opened
// has been painted: its text and its bench (the engine's state, or the
// scenario waiting for the engine: its lanes, balances and rules). What
// the learner first sees; "idemlab-interactive" is when the bench steps.
let lessonPaintedMarked = false;
function lessonPainted() {
  if (lessonPaintedMarked) return;
  lessonPaintedMarked = true;
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      performance.mark('idemlab-lesson-painted');
      // While the engine still compiles, the race view's fonts are found.
      warmRaceFonts();
    }),
  );
}

function escapeHTML(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

function mountScenarioCard(holder) {
  const spec = (app.lesson.scenarios || []).find((s) => s.id === holder.dataset.scenario);
  if (!spec) return;
  holder.replaceChildren(
    el(
      'p',
      { class: 'scenario-title' },
      el('span', { 'aria-hidden': 'true', text: '⚗ ' }),
      t('scenario') + ': ',
      el('strong', { text: spec.title || spec.id }),
    ),
    el(
      'p',
      { class: 'scenario-meta' },
      t('level') + ' ',
      el('code', { text: spec.level }),
      spec.lanes && spec.lanes.length ? ' · ' + t('laneCount', { n: spec.lanes.length }) : '',
      spec.day ? ' · ' + t('day') : '',
    ),
    el(
      'button',
      { type: 'button', class: 'open-scenario', 'data-scenario': spec.id, onclick: () => chooseScenario(spec.id) },
      t('openOnBench'),
    ),
  );
}

// markActiveCard marks the card of the scenario on the bench as current,
// and with follow brings its part of the lesson into view: the bench must
// never show one scenario while the text beside it describes another.
// Every card's button is named with its scenario, so that a list of the
// page's buttons does not read "Open on the bench" three times.
function markActiveCard(follow) {
  let current = null;
  for (const holder of document.querySelectorAll('#lesson-text .scenario[data-scenario]')) {
    const active = !!app.spec && holder.dataset.scenario === app.spec.id;
    holder.classList.toggle('active', active);
    const b = holder.querySelector('button.open-scenario');
    if (active) {
      current = holder;
      holder.setAttribute('aria-current', 'true');
    } else holder.removeAttribute('aria-current');
    if (!b) continue;
    const spec = (app.lesson.scenarios || []).find((s) => s.id === holder.dataset.scenario) || {};
    b.textContent = active ? '✔ ' + t('onBench') : t('openOnBench');
    b.setAttribute('aria-label', t(active ? 'onBenchNamed' : 'openOnBenchNamed', { title: spec.title || spec.id }));
    if (active) b.setAttribute('aria-current', 'true');
    else b.removeAttribute('aria-current');
  }
  if (follow && current) followCard(current);
}

// followCard scrolls the lesson to the section that describes a card's
// scenario: from its heading to the card when both fit in the window, else
// as much of the text before the card as fits, the card at the bottom.
// Nothing moves when all of it is in view already.
function followCard(card) {
  let head = card.previousElementSibling;
  while (head && !/^H[1-3]$/.test(head.tagName)) head = head.previousElementSibling;
  const top = parseFloat(getComputedStyle(document.documentElement).scrollPaddingTop) || 0;
  const c = card.getBoundingClientRect();
  const h = (head || card).getBoundingClientRect();
  if (h.top >= top && c.bottom <= innerHeight) return;
  const behavior = matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth';
  if (head && c.bottom - h.top <= innerHeight - top) head.scrollIntoView({ block: 'start', behavior });
  else card.scrollIntoView({ block: 'end', behavior });
}

function chooseScenario(id) {
  stopRunningDay();
  return serial(async () => {
    await closeSession();
    app.spec = app.lesson.scenarios.find((s) => s.id === id);
    app.moves = [];
    app.override = null;
    // Beside the bench the text follows it; below it (a narrow screen)
    // the learner is taken to the bench instead.
    const beside = matchMedia('(min-width: 1101px)').matches;
    markActiveCard(beside);
    bench.renderBenchHead();
    writeHash();
    if (app.engineInfo) await openScenarioNow();
    else {
      app.lastEvent = null;
      bench.drawBenchWaiting(app.spec);
    }
    $('bench').focus({ preventScroll: beside });
  });
}

function cycleScenario(delta) {
  const list = (app.lesson && app.lesson.scenarios) || [];
  if (!list.length) return;
  const i = list.findIndex((s) => app.spec && s.id === app.spec.id);
  const next = list[(i + delta + list.length) % list.length];
  chooseScenario(next.id);
}

function gotoLesson(delta) {
  if (!app.lesson) return;
  const i = app.index.findIndex((l) => l.id === app.lesson.id);
  const next = app.index[i + delta];
  if (next) loadLesson(next.id, false);
}

// --- the bench ---------------------------------------------------------------

// warmUp plays the first bench's scenario once to its end in a session of
// its own, in the worker, one step after the other, and then
// closes it. The engine's first steps in a page are its slowest: the
// browser runs a WebAssembly function first from quickly compiled code and
// compiles it well only once it is hot, and SQLite prepares each statement
// the first time. Measured on lesson 7 in headless Chromium, the engine's
// call took 4–74 ms on the first dozen steps and about 1 ms once the same
// steps had run before (docs/PERFORMANCE.md). A learner who clicks while it
// runs waits for one background step at most, and it stops at the
// learner's first action.
let warmed = false;
function warmUp(spec) {
  if (warmed || !app.engine) return;
  warmed = true;
  const engine = app.engine;
  let session = null;
  let lane = null;
  let steps = 0;
  // The steps run in the worker, off the page's thread: one follows the
  // answer of the other, once the bench's first frame is painted.
  const later = (fn) => setTimeout(fn, 0);
  const stop = () => {
    if (session) engine.quiet('close', session).catch(() => {});
    session = null;
  };
  const play = async () => {
    try {
      if (app.acted) return stop();
      const state = session
        ? await engine.quiet('step', session, lane)
        : await engine.quiet('open', JSON.stringify(spec), '').then((o) => ((session = o.session), o.state));
      lane = state.next;
      if (app.acted || state.done || !lane || ++steps > 200) return stop();
      later(play);
    } catch {
      stop();
    }
  };
  requestAnimationFrame(() => requestAnimationFrame(() => later(play)));
}

async function closeSession() {
  if (app.session && app.engine) {
    const s = app.session;
    app.session = null;
    try {
      await app.engine.call('close', s);
    } catch {}
  }
  app.session = null;
  app.state = null;
  app.pinned = null;
  app.lastEvent = null;
  // No session, no step: a step count of 0 is the next session's.
  delete $('step-count').dataset.step;
}

function openFromHash() {
  return serial(() => openScenarioNow());
}

// openScenarioNow opens the scenario on the bench in the engine and replays
// the moves from the URL, stopping at the first one that no longer applies.
async function openScenarioNow() {
  const spec = app.spec;
  if (!spec || !app.engineInfo) return;
  $('bench-body').hidden = !!spec.day;
  $('day-body').hidden = !spec.day;
  if (spec.day) {
    resetDay();
    bench.renderGoals(
      (spec.goals || []).map((g) => Object.assign({}, g, { met: false })),
      $('day-goals'),
    );
    interactive();
    return;
  }
  try {
    const t0 = performance.now();
    const opened = await app.engine.call('open', JSON.stringify(spec), '');
    performance.measure('idemlab-open', { start: t0, end: performance.now() });
    if (app.spec !== spec) {
      app.engine.call('close', opened.session).catch(() => {});
      return;
    }
    app.session = opened.session;
    app.base = opened.state.policy;
    warmUp(spec);
    let state = opened.state;
    if (app.override && Object.keys(app.override).length) {
      state = await app.engine.call('setPolicy', app.session, JSON.stringify(Object.assign({}, app.base, app.override)));
    }
    // app.moves keeps the whole place from the URL until the replay is
    // over: a URL write that fires while it runs (a slow device takes
    // longer than the write's 250 ms) must write the place the learner
    // opened, not the moves replayed so far.
    const applied = [];
    for (const m of app.moves.slice()) {
      const [lane, fault] = m.split('!');
      try {
        state = fault ? await app.engine.call('inject', app.session, lane, fault) : await app.engine.call('step', app.session, lane);
      } catch {
        break;
      }
      applied.push(m);
    }
    app.moves = applied;
    app.state = state;
    bench.render();
    writeHash();
    interactive();
  } catch (err) {
    engineError(err);
  }
}

// interactive is called whenever the bench shows a new scenario. The first
// time, it marks "idemlab-drawn" (the engine's state is in the page) and,
// once a frame with it has been laid out and painted, "idemlab-interactive":
// what the learner sees and can click. The first layout of the bench can
// take long (it resolves the page's fonts), so the second mark is the
// honest one.
let interactiveMarked = false;
function interactive() {
  // Tests wait on these to know which lesson the bench shows, and that it
  // opened a scenario again (a scenario opened anew shows what it showed).
  document.body.dataset.lesson = app.lesson ? app.lesson.id : '';
  document.body.dataset.opens = String(Number(document.body.dataset.opens || 0) + 1);
  if (interactiveMarked) return;
  interactiveMarked = true;
  performance.mark('idemlab-drawn');
  // The callback of the second frame runs after the first frame, the one
  // that shows the bench, has been painted.
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      performance.mark('idemlab-interactive');
      document.body.dataset.interactive = 'true';
    }),
  );
}

function laneOf(id) {
  return app.state && app.state.lanes.find((l) => l.id === id);
}

function movable(lane) {
  return lane && (lane.state === 'waiting' || lane.state === 'running');
}

// nextLane is the lane Step moves: the learner's choice while it can
// still move, else the scenario's schedule.
function nextLane() {
  if (!app.state) return null;
  if (app.pinned && movable(laneOf(app.pinned))) return app.pinned;
  if (app.state.next && movable(laneOf(app.state.next))) return app.state.next;
  const any = app.state.lanes.find(movable);
  return any ? any.id : null;
}

// measureStep records where one bench action's time went, as performance
// measures: "idemlab-engine" (t0 to t1: the worker round trip), "idemlab-draw"
// (t1 to t2: the views), "idemlab-paint" (the next frame's style, layout and
// paint: from its animation-frame callback to the first task after it) and
// "idemlab-own", their sum: the page's own work from the engine call to the
// painted frame, without the wait for that frame, which a busy or headless
// browser stretches.
function measureStep(t0, t1, t2) {
  performance.measure('idemlab-engine', { start: t0, end: t1 });
  performance.measure('idemlab-draw', { start: t1, end: t2 });
  requestAnimationFrame(() => {
    const t3 = performance.now();
    const ch = new MessageChannel();
    ch.port1.onmessage = () => {
      const t4 = performance.now();
      performance.measure('idemlab-paint', { start: t3, end: t4 });
      performance.measure('idemlab-own', { start: t0, duration: t2 - t0 + (t4 - t3) });
    };
    ch.port2.postMessage(null);
  });
}

// act runs one bench action and draws its state (measureStep). kind names
// the action for the sentence that announces what happened (bench.news).
function act(kind, fn) {
  app.acted = true;
  return serial(async () => {
    if (!app.session) return;
    try {
      const before = app.state;
      const t0 = performance.now();
      const state = await fn();
      const t1 = performance.now();
      if (state) {
        app.state = state;
        app.lastEvent = null;
        $('step-count').classList.remove('error');
        bench.render();
        writeHash();
        measureStep(t0, t1, performance.now());
        keepControlFocus();
        announce(bench.news(kind, before, state));
      }
    } catch (err) {
      engineError(err);
    }
  });
}

// CONTROLS are the bench's buttons in the order the Tab key meets them.
const CONTROLS = ['btn-back', 'btn-step', 'btn-run', 'btn-reset', 'btn-inject'];

// keepControlFocus moves the focus off a bench button that its own action
// disabled (the last Step, Run to the end, Back to step 0): a disabled
// button drops the focus to the page's body, and a keyboard user would
// start again from the top. It goes to the next button that still works,
// else the one before it, else the bench itself.
function keepControlFocus() {
  const a = document.activeElement;
  const i = CONTROLS.indexOf(a && a.id);
  if (i < 0 || !a.disabled) return;
  const order = CONTROLS.slice(i + 1).concat(CONTROLS.slice(0, i).reverse());
  const next = order.map((id) => $(id)).find((b) => !b.disabled && !b.hidden);
  (next || $('bench')).focus();
}

// announce says one sentence in the page's live region: what a step did,
// where Back or Reset went, which lesson opened.
function announce(sentence) {
  if (sentence) $('news').textContent = sentence;
}

function step() {
  return act('step', async () => {
    const lane = nextLane();
    if (!lane || app.state.done) return null;
    const st = await app.engine.call('step', app.session, lane);
    app.moves.push(lane);
    return st;
  });
}

function back() {
  return act('back', async () => {
    if (!app.state || app.state.step === 0) return null;
    const st = await app.engine.call('back', app.session);
    app.moves.pop();
    return st;
  });
}

// runAll steps the default order one move at a time, so that every move is
// in the URL and Back can take any of them back.
function runAll() {
  return act('run', async () => {
    let st = app.state;
    for (let i = 0; i < MAX_RUN_STEPS && st && !st.done; i++) {
      const lane = st.next && (st.lanes.find((l) => l.id === st.next) || {}).state !== 'done' ? st.next : (st.lanes.find(movable) || {}).id;
      if (!lane) break;
      st = await app.engine.call('step', app.session, lane);
      app.moves.push(lane);
    }
    return st;
  });
}

function reset() {
  return act('reset', async () => {
    const st = await app.engine.call('reset', app.session);
    app.moves = [];
    app.pinned = null;
    return st;
  });
}

function inject() {
  return act('step', async () => {
    const lane = nextLane();
    if (!lane) return null;
    const kind = $('fault-kind').value;
    const st = await app.engine.call('inject', app.session, lane, kind);
    app.moves.push(lane + '!' + kind);
    return st;
  });
}

// setKnob flips one knob alone: every other knob goes back to the level's
// setting, so whatever breaks next is that knob's doing.
function setKnob(knob, value) {
  return act('policy', async () => {
    const override = JSON.stringify(app.base[knob]) === JSON.stringify(value) ? {} : { [knob]: value };
    const st = await app.engine.call('setPolicy', app.session, JSON.stringify(Object.assign({}, app.base, override)));
    // The policy and the moves change together, after the engine took
    // the policy: a URL write in between would name a place that never was.
    app.override = Object.keys(override).length ? override : null;
    app.moves = [];
    app.pinned = null;
    return st;
  });
}

function sandboxBack() {
  return act('policy', async () => {
    const st = await app.engine.call('setPolicy', app.session, JSON.stringify(app.base));
    app.override = null;
    app.moves = [];
    app.pinned = null;
    return st;
  });
}

function choose(laneId) {
  if (!movable(laneOf(laneId))) return;
  app.pinned = laneId;
  bench.render();
}

function chooseNth(n) {
  if (!app.state) return;
  const lane = app.state.lanes[n];
  if (lane) choose(lane.id);
}

function cycleLane() {
  if (!app.state) return;
  const lanes = app.state.lanes.filter(movable);
  if (!lanes.length) return;
  const i = lanes.findIndex((l) => l.id === nextLane());
  choose(lanes[(i + 1) % lanes.length].id);
}

// --- what the learner does on the view -------------------------------------------

function showEvent(ev) {
  app.lastEvent = ev;
  bench.drawBenchRace();
  bench.renderLast();
}

function toggleRaceRow(id) {
  app.expanded = app.expanded || new Set();
  if (app.expanded.has(id)) app.expanded.delete(id);
  else app.expanded.add(id);
  bench.drawBenchRace();
}

function exportBench(format) {
  const svgEl = $('race').querySelector('svg');
  if (!svgEl || !app.spec) return;
  const step = app.state ? app.state.step : 0;
  exportRace(svgEl, 'idemlab-' + (app.lesson ? app.lesson.id : 'bench') + '-' + app.spec.id + '-step' + step, format);
}

function applyGoalPolicy(policy) {
  return act('policy', async () => {
    const st = await app.engine.call('setPolicy', app.session, JSON.stringify(Object.assign({}, app.base, policy)));
    app.override = Object.assign({}, policy);
    app.moves = [];
    app.pinned = null;
    return st;
  });
}

// --- a day of traffic ------------------------------------------------------------

function resetDay() {
  $('day-progress').hidden = true;
  $('day-status').textContent = '';
  $('day-summary').textContent = '';
  $('day-rules').replaceChildren();
  $('day-picture').replaceChildren();
  $('day-picture-panel').hidden = true;
  $('day-moment').replaceChildren();
  $('day-moment').hidden = true;
}

let dayRuns = 0;

// stopRunningDay asks the engine to stop the day it is replaying, if any.
function stopRunningDay() {
  if (app.dayRun) app.engine.call('stopDay', app.dayRun).catch(() => {});
}

// sizedDay is the day the size menu asks for: the lesson's own, or the
// same seed and customers with more payments (a day big enough to watch
// the bar, and to stop).
function sizedDay(day) {
  const n = Number($('day-size').value);
  return n > 0 ? { day: Object.assign({}, day, { intents: n }) } : {};
}

function runDay() {
  return serial(async () => {
    const spec = app.spec;
    if (!spec || !spec.day) return;
    resetDay();
    const bar = $('day-progress');
    bar.hidden = false;
    bar.value = 0;
    $('btn-day').disabled = true;
    // The engine replays the day in its worker; Stop reaches it by the
    // run's name, between two groups of retries.
    const run = 'day-' + ++dayRuns;
    app.dayRun = run;
    const stop = $('btn-day-stop');
    stop.hidden = false;
    stop.disabled = false;
    stop.onclick = () => {
      stop.disabled = true;
      stopRunningDay();
    };
    try {
      const tally = await app.engine.callWithProgress(
        'day',
        (done, total) => {
          bar.max = total || 1;
          bar.value = done;
          $('day-status').textContent = t('dayRunning', { done: won(done), total: won(total) });
        },
        JSON.stringify(Object.assign({ lang: app.lang, run }, spec, sizedDay(spec.day))),
      );
      if (tally.stopped) {
        $('day-status').textContent = t('dayStopped', { done: won(tally.done), total: won(tally.total) });
        return;
      }
      bar.value = bar.max;
      $('day-status').textContent = t('dayDone', { attempts: won(tally.attempts ?? (tally.report && tally.report.summary.attempts) ?? 0) });
      // The day as a picture; a column opens its attempts in the race view.
      $('day-picture-panel').hidden = false;
      $('day-moment').hidden = true;
      showPicture($('day-picture'), tally.picture || {}, tally.picture_svg || '', (bucket) =>
        showMoment($('day-moment'), bucket, { policy: tally.policy, width: $('bench').clientWidth - 40 }),
      );
      bench.renderReport(tally.report, $('day-summary'), $('day-rules'));
      // The engine judged the day's goals; the page shows them.
      const goals = tally.goals || [];
      bench.renderGoals(goals, $('day-goals'));
      saveGoals(app.lesson.id, spec.id, goals);
    } catch (err) {
      $('day-status').textContent = '⚠ ' + t('engineError', { error: err.message });
    } finally {
      app.dayRun = null;
      stop.hidden = true;
      stop.onclick = null;
      $('btn-day').disabled = false;
    }
  });
}

// --- keyboard ----------------------------------------------------------------------

function toggleKeys() {
  const box = $('keys-help');
  // Closed with the focus inside (on its switch), the list hands the focus
  // back to the button that opens it rather than to the page's body.
  const inside = box.contains(document.activeElement);
  box.hidden = !box.hidden;
  $('keys-toggle').setAttribute('aria-expanded', box.hidden ? 'false' : 'true');
  if (box.hidden && inside) $('keys-toggle').focus();
}

// shortcutsOn reports whether the learner keeps the single-key shortcuts
// (WCAG 2.1.4: a speech-input user's words arrive as letters, and a stray
// "n" must not step the bench). They are on unless turned off in the keys
// help; the choice is remembered.
function shortcutsOn() {
  try {
    return localStorage.getItem(SHORTCUTS_KEY) !== 'off';
  } catch {
    return true;
  }
}

function setShortcuts(on) {
  try {
    if (on) localStorage.removeItem(SHORTCUTS_KEY);
    else localStorage.setItem(SHORTCUTS_KEY, 'off');
  } catch {}
  $('shortcuts-on').checked = on;
}

function onKey(e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  // Escape closes the keys help wherever the focus is: it is how a dialog
  // is left, not a shortcut.
  if (e.key === 'Escape') {
    if (!$('keys-help').hidden) {
      toggleKeys();
      e.preventDefault();
    }
    return;
  }
  if (!shortcutsOn()) return;
  const tag = (e.target && e.target.tagName) || '';
  const typing =
    (tag === 'INPUT' && e.target.type !== 'radio') || tag === 'TEXTAREA' || tag === 'SELECT' || (e.target && e.target.isContentEditable);
  if (typing) return;
  const onButton = tag === 'BUTTON' || tag === 'SUMMARY' || tag === 'A';
  // Inside a group of radios the arrows move between them; they step the
  // bench everywhere else.
  const inRadios = !!(e.target && e.target.closest && e.target.closest('[role=radiogroup], [role=radio]'));
  const benchOpen = app.session && !$('bench-body').hidden;
  let handled = true;
  switch (e.key) {
    case 'ArrowRight':
      if (inRadios) return;
      if (benchOpen) step();
      break;
    case 'n':
      if (benchOpen) step();
      break;
    case ' ':
      if (onButton || inRadios) return; // Space presses the focused button or radio.
      if (benchOpen) step();
      break;
    case 'ArrowLeft':
      if (inRadios) return;
      if (benchOpen) back();
      break;
    case 'b':
      if (benchOpen) back();
      break;
    case 'e':
      if (benchOpen) runAll();
      break;
    case 'r':
      if (benchOpen) reset();
      break;
    case 'f':
      if (benchOpen) inject();
      break;
    case 'l':
      cycleLane();
      break;
    case '[':
      gotoLesson(-1);
      break;
    case ']':
      gotoLesson(1);
      break;
    case ',':
      cycleScenario(-1);
      break;
    case '.':
      cycleScenario(1);
      break;
    case 't':
      toggleTheme();
      break;
    case '?':
      toggleKeys();
      break;
    default:
      if (/^[1-9]$/.test(e.key)) chooseNth(Number(e.key) - 1);
      else handled = false;
  }
  if (handled) e.preventDefault();
}

// --- start -------------------------------------------------------------------------

async function main() {
  bench.initBench(app, { nextLane, choose, showEvent, toggleRaceRow, applyGoalPolicy, setKnob, saveGoals });
  app.lang = new URLSearchParams(location.search).get('lang') || 'en';
  setLang(app.lang);
  document.documentElement.lang = app.lang;
  applyI18n();
  $('to-lab').href = app.lang === 'en' ? 'lab.html' : 'lab.html?lang=' + encodeURIComponent(app.lang);
  initTheme();
  $('theme-toggle').addEventListener('click', toggleTheme);
  // The skip link focuses the bench without writing #bench over the
  // address bar's place in the lessons.
  document.querySelector('a.skip').addEventListener('click', (e) => {
    e.preventDefault();
    $('bench').focus();
  });
  $('keys-toggle').addEventListener('click', toggleKeys);
  $('shortcuts-on').checked = shortcutsOn();
  $('shortcuts-on').addEventListener('change', (e) => setShortcuts(e.target.checked));
  $('btn-step').addEventListener('click', step);
  $('btn-back').addEventListener('click', back);
  $('btn-run').addEventListener('click', runAll);
  $('btn-reset').addEventListener('click', reset);
  $('btn-inject').addEventListener('click', inject);
  $('btn-sandbox-reset').addEventListener('click', sandboxBack);
  $('btn-day').addEventListener('click', runDay);
  $('btn-export-svg').addEventListener('click', () => exportBench('svg'));
  $('btn-export-png').addEventListener('click', () => exportBench('png'));
  // The race view is drawn for its box's width, which the observer keeps
  // (so a step draws without asking the browser for a layout first); a
  // window resized, not the bench growing taller with each step, redraws it.
  let resizeTimer = 0;
  new ResizeObserver((entries) => {
    const w = Math.round(entries[entries.length - 1].contentRect.width);
    if (!w || w === app.raceWidth) return;
    const first = !app.raceWidth;
    app.raceWidth = w;
    if (first) return;
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => app.state && bench.drawBenchRace(), 100);
  }).observe($('race'));
  $('prev-lesson').addEventListener('click', () => gotoLesson(-1));
  $('next-lesson').addEventListener('click', () => gotoLesson(1));
  $('lesson-select').addEventListener('change', (e) => loadLesson(e.target.value, false));
  $('lang-select').addEventListener('change', (e) => chooseLang(e.target.value));
  document.addEventListener('keydown', onKey);
  window.addEventListener('pagehide', url.writeNow);
  // A URL typed or pasted into the address bar (the page's own writes use
  // replaceState and fire no hashchange) moves the player there.
  window.addEventListener('hashchange', () => {
    // The learner's link replaces whatever the page meant to write.
    url.adopt();
    const h = readHash();
    if (h.lesson && (!app.lesson || h.lesson !== app.lesson.id)) {
      loadLesson(h.lesson, true);
      return;
    }
    const spec = app.lesson && (app.lesson.scenarios || []).find((x) => x.id === h.scenario);
    if (!spec) {
      url.release();
      return;
    }
    stopRunningDay();
    serial(async () => {
      await closeSession();
      app.spec = spec;
      app.moves = h.moves;
      app.override = h.override;
      url.release();
      markActiveCard(true);
      bench.renderBenchHead();
      if (app.engineInfo) await openScenarioNow();
    });
  });

  // The engine starts at once and the lesson text loads beside it, so the
  // learner reads while the module compiles.
  app.engine = startEngine();
  app.engine.ready.then(onEngineReady, onEngineProblem);

  try {
    app.index = await fetchJSON('api/lessons.json');
  } catch (err) {
    $('lesson-loading').textContent = t('lessonLoadFailed', { error: err.message });
    return;
  }
  if (!app.index.length) {
    $('lesson-loading').textContent = t('lessonsMissing');
    return;
  }
  renderLessonSelect();
  const want = readHash().lesson;
  const id = app.index.some((l) => l.id === want) ? want : app.index[0].id;
  await loadLesson(id, true);
}

main();
