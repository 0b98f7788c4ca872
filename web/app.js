// app.js is the lesson player: the lesson text on one side, the bench on
// the other. It fetches lessons as JSON (api/…), runs the engine in a
// worker (engine.js, worker.js) and draws each State the engine returns.
//
// The URL holds where the learner is: #lesson=ID&s=SCENARIO&m=MOVES&p=POLICY
// where MOVES is a comma-separated list of lane ids ("A1" = step lane A1,
// "A1!crash" = inject that fault at A1's next phase) replayed on load, and
// POLICY the sandbox's knob overrides as JSON. Progress (the goals met) is
// kept in localStorage under "idemlab.progress.v1".

import { t, setLang } from './strings.js';
import { verdictBadge } from './lanes.js';
import { buildRace, drawRace, exportRace } from './race.js';
import { startEngine } from './engine.js';

const $ = (id) => document.getElementById(id);
const PROGRESS_KEY = 'idemlab.progress.v1';
const THEME_KEY = 'idemlab.theme';
const KNOBS = ['claim', 'fingerprint', 'in_progress', 'replay', 'scope', 'retention', 'lease'];
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
  busy: Promise.resolve(),
  // lang is the language the learner asked for (?lang=ko); a lesson that
  // has no such translation, and any player string without one, shows in
  // English.
  lang: 'en',
  loadSeq: 0,
};

// --- small DOM helpers -------------------------------------------------------

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'selected' || k === 'disabled' || k === 'checked') e[k] = v;
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function table(columns, rows, attrs) {
  if (!rows.length) return el('p', { class: 'empty', text: t('noRows') });
  return el('table', attrs || {},
    el('thead', {}, el('tr', {}, columns.map((c) => el('th', { scope: 'col', text: c.label })))),
    el('tbody', {}, rows.map((r) => el('tr', r.attrs || {}, columns.map((c) => el('td', { class: c.class }, c.cell(r)))))));
}

function won(n) {
  return Number(n).toLocaleString('en-US');
}

function applyI18n(root = document) {
  for (const e of root.querySelectorAll('[data-i18n]')) e.textContent = t(e.dataset.i18n);
  for (const e of root.querySelectorAll('[data-i18n-title]')) {
    e.title = t(e.dataset.i18nTitle);
    e.setAttribute('aria-label', t(e.dataset.i18nTitle));
  }
}

async function fetchJSON(url) {
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

// --- the URL and progress -----------------------------------------------------

function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  let override = null;
  if (p.get('p')) {
    try {
      override = JSON.parse(p.get('p'));
    } catch {
      override = null;
    }
  }
  return { lesson: p.get('lesson'), scenario: p.get('s'), moves: (p.get('m') || '').split(',').filter(Boolean), override };
}

// writeHash updates the URL a moment after the last change: Chromium
// takes a noticeable time per history.replaceState (measured here: most of
// a step's drawing time), so a burst of steps writes it once. The page
// writes it at once before it unloads.
//
// ownHash is the hash the page last wrote or read. A hash that differs
// from it was put there by the learner (a pasted link): a write that was
// still pending then must not overwrite it. Without this check, a link
// pasted within 250 ms of a step was replaced by the old place before its
// hashchange was handled, and the player opened the old place again.
let hashTimer = 0;
let ownHash = location.hash;
function writeHash() {
  clearTimeout(hashTimer);
  document.body.dataset.urlPending = 'true';
  hashTimer = setTimeout(writeHashNow, 250);
}

function writeHashNow() {
  clearTimeout(hashTimer);
  document.body.dataset.urlPending = 'false';
  if (location.hash !== ownHash) return; // the learner's link wins; hashchange opens it
  const p = new URLSearchParams();
  if (app.lesson) p.set('lesson', app.lesson.id);
  if (app.spec) p.set('s', app.spec.id);
  if (app.moves.length) p.set('m', app.moves.join(','));
  if (app.override && Object.keys(app.override).length) p.set('p', JSON.stringify(app.override));
  // Commas and bangs stay readable: the moves read "A1,A2,A1!crash".
  const hash = '#' + p.toString().replace(/%2C/gi, ',').replace(/%21/g, '!');
  if (location.hash !== hash) history.replaceState(null, '', hash);
  ownHash = location.hash;
}

function loadProgress() {
  try {
    return JSON.parse(localStorage.getItem(PROGRESS_KEY)) || {};
  } catch {
    return {};
  }
}

function saveGoals(lessonId, scenarioId, goals) {
  const progress = loadProgress();
  const mine = progress[lessonId] || {};
  let changed = false;
  for (const g of goals || []) {
    const k = scenarioId + '/' + g.id;
    if (g.met && !mine[k]) {
      mine[k] = true;
      changed = true;
    }
  }
  if (!changed) return;
  progress[lessonId] = mine;
  try {
    localStorage.setItem(PROGRESS_KEY, JSON.stringify(progress));
  } catch {
    // Private windows may refuse storage; progress then lasts the visit.
  }
  renderLessonGoals();
  renderLessonSelect();
}

function lessonGoals(lesson) {
  if (lesson.goals && lesson.goals.length) return lesson.goals;
  const out = [];
  for (const s of lesson.scenarios || []) for (const g of s.goals || []) out.push(Object.assign({ scenario: s.id }, g));
  return out;
}

function goalMet(lessonId, g) {
  const mine = loadProgress()[lessonId] || {};
  return !!mine[(g.scenario || '') + '/' + g.id];
}

function lessonDone(id) {
  const mine = loadProgress()[id];
  if (!mine) return false;
  if (app.lesson && app.lesson.id === id) {
    const goals = lessonGoals(app.lesson);
    return goals.length > 0 && goals.every((g) => goalMet(id, g));
  }
  return Object.keys(mine).length > 0 && !!mine.done;
}

// --- theme ------------------------------------------------------------------

function setTheme(theme) {
  document.documentElement.dataset.theme = theme;
  $('theme-toggle').setAttribute('aria-pressed', theme === 'dark' ? 'true' : 'false');
  $('theme-toggle').title = theme === 'dark' ? t('themeLight') : t('themeDark');
}

function initTheme() {
  let theme = null;
  try {
    theme = localStorage.getItem(THEME_KEY);
  } catch {}
  if (!theme) theme = matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
  setTheme(theme);
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
}

// --- lessons -------------------------------------------------------------------

function renderLessonSelect() {
  const sel = $('lesson-select');
  const current = app.lesson ? app.lesson.id : sel.value;
  sel.replaceChildren(...app.index.map((l) => {
    const done = lessonDone(l.id);
    // The index has each lesson's default-language title; the lesson shown
    // has its own, in the language it was read in.
    const title = app.lesson && app.lesson.id === l.id ? app.lesson.title : l.title;
    return el('option', { value: l.id, selected: l.id === current },
      (done ? '✓ ' : '') + l.n + '. ' + title + (done ? ' (' + t('lessonDone') + ')' : ''));
  }));
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
  if (allMet) {
    const progress = loadProgress();
    if (!(progress[app.lesson.id] || {}).done) {
      progress[app.lesson.id] = Object.assign(progress[app.lesson.id] || {}, { done: true });
      try {
        localStorage.setItem(PROGRESS_KEY, JSON.stringify(progress));
      } catch {}
    }
  }
  box.replaceChildren(el('h2', { text: t('goals') }), el('ul', { class: 'goals' }, goals.map((g) => {
    const met = goalMet(app.lesson.id, g);
    return el('li', { class: met ? 'met' : 'not-met', 'data-goal': g.id, 'data-met': met ? 'true' : 'false' },
      el('span', { class: 'goal-icon', 'aria-hidden': 'true', text: met ? '✔' : '○' }), ' ',
      el('strong', { text: met ? t('goalMet') : t('goalNotYet') }), ' — ', g.text);
  })));
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
    return;
  }
  if (seq !== app.loadSeq) return;
  await closeSession();
  app.lesson = lesson;
  $('lesson-loading').hidden = true;
  document.title = lesson.n + '. ' + lesson.title + ' · idemlab';
  const text = $('lesson-text');
  const published = lesson.retention || lesson.scope
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
  markActiveCard();
  renderBenchHead();
  writeHash();
  if (app.engineInfo) await openScenario();
  else drawBenchWaiting(app.spec);
}

function escapeHTML(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

function mountScenarioCard(holder) {
  const spec = (app.lesson.scenarios || []).find((s) => s.id === holder.dataset.scenario);
  if (!spec) return;
  holder.replaceChildren(
    el('p', { class: 'scenario-title' }, el('span', { 'aria-hidden': 'true', text: '⚗ ' }), t('scenario') + ': ', el('strong', { text: spec.title || spec.id })),
    el('p', { class: 'scenario-meta' }, t('level') + ' ', el('code', { text: spec.level }),
      spec.lanes && spec.lanes.length ? ' · ' + t('laneCount', { n: spec.lanes.length }) : '', spec.day ? ' · ' + t('day') : ''),
    el('button', { type: 'button', class: 'open-scenario', 'data-scenario': spec.id, onclick: () => chooseScenario(spec.id) }, t('openOnBench')));
}

function markActiveCard() {
  for (const holder of document.querySelectorAll('#lesson-text .scenario[data-scenario]')) {
    const active = app.spec && holder.dataset.scenario === app.spec.id;
    holder.classList.toggle('active', active);
    const b = holder.querySelector('button.open-scenario');
    if (b) b.textContent = active ? '✔ ' + t('onBench') : t('openOnBench');
  }
}

function chooseScenario(id) {
  return serial(async () => {
    await closeSession();
    app.spec = app.lesson.scenarios.find((s) => s.id === id);
    app.moves = [];
    app.override = null;
    markActiveCard();
    renderBenchHead();
    writeHash();
    if (app.engineInfo) await openScenarioNow();
    else drawBenchWaiting(app.spec);
    // Beside the text the bench is already in view; below it (a narrow
    // screen) the learner is taken there.
    $('bench').focus({ preventScroll: matchMedia('(min-width: 1101px)').matches });
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
}

function openFromHash() {
  return serial(() => openScenarioNow());
}

function openScenario() {
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
    renderGoals((spec.goals || []).map((g) => Object.assign({}, g, { met: false })), $('day-goals'));
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
    let state = opened.state;
    if (app.override && Object.keys(app.override).length) {
      state = await app.engine.call('setPolicy', app.session, JSON.stringify(Object.assign({}, app.base, app.override)));
    }
    const moves = app.moves;
    app.moves = [];
    for (const m of moves) {
      const [lane, fault] = m.split('!');
      try {
        state = fault
          ? await app.engine.call('inject', app.session, lane, fault)
          : await app.engine.call('step', app.session, lane);
      } catch {
        break;
      }
      app.moves.push(m);
    }
    app.state = state;
    render();
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
  // Tests wait on this to know which lesson the bench shows.
  document.body.dataset.lesson = app.lesson ? app.lesson.id : '';
  if (interactiveMarked) return;
  interactiveMarked = true;
  performance.mark('idemlab-drawn');
  // The callback of the second frame runs after the first frame, the one
  // that shows the bench, has been painted.
  requestAnimationFrame(() => requestAnimationFrame(() => {
    performance.mark('idemlab-interactive');
    document.body.dataset.interactive = 'true';
  }));
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

// act runs one bench action and draws its state. The time in the engine
// (worker round trip included) and the time drawing are recorded as
// performance measures "idemlab-engine" and "idemlab-draw".
function act(fn) {
  return serial(async () => {
    if (!app.session) return;
    try {
      const t0 = performance.now();
      const state = await fn();
      const t1 = performance.now();
      if (state) {
        app.state = state;
        app.lastEvent = null;
        $('step-count').classList.remove('error');
        render();
        writeHash();
        performance.measure('idemlab-engine', { start: t0, end: t1 });
        performance.measure('idemlab-draw', { start: t1, end: performance.now() });
      }
    } catch (err) {
      engineError(err);
    }
  });
}

function step() {
  return act(async () => {
    const lane = nextLane();
    if (!lane || app.state.done) return null;
    const st = await app.engine.call('step', app.session, lane);
    app.moves.push(lane);
    return st;
  });
}

function back() {
  return act(async () => {
    if (!app.state || app.state.step === 0) return null;
    const st = await app.engine.call('back', app.session);
    app.moves.pop();
    return st;
  });
}

// runAll steps the default order one move at a time, so that every move is
// in the URL and Back can take any of them back.
function runAll() {
  return act(async () => {
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
  return act(async () => {
    const st = await app.engine.call('reset', app.session);
    app.moves = [];
    app.pinned = null;
    return st;
  });
}

function inject() {
  return act(async () => {
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
  return act(async () => {
    const override = JSON.stringify(app.base[knob]) === JSON.stringify(value) ? {} : { [knob]: value };
    app.override = Object.keys(override).length ? override : null;
    const st = await app.engine.call('setPolicy', app.session, JSON.stringify(Object.assign({}, app.base, override)));
    app.moves = [];
    app.pinned = null;
    return st;
  });
}

function sandboxBack() {
  return act(async () => {
    app.override = null;
    const st = await app.engine.call('setPolicy', app.session, JSON.stringify(app.base));
    app.moves = [];
    app.pinned = null;
    return st;
  });
}

function choose(laneId) {
  if (!movable(laneOf(laneId))) return;
  app.pinned = laneId;
  render();
  // A learner choosing with the keyboard keeps the focus on the lane.
  const row = document.querySelector('#race [role=radio][data-lane="' + CSS.escape(laneId) + '"]');
  if (row && document.activeElement && document.activeElement.getAttribute('role') === 'radio') row.focus();
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

// --- drawing -------------------------------------------------------------------

function renderBenchHead() {
  const spec = app.spec;
  $('bench-title').textContent = spec ? t('scenario') + ': ' + (spec.title || spec.id) : t('benchEmpty');
  $('bench-meta').replaceChildren();
  if (spec) {
    $('bench-meta').append(t('level') + ' ', el('code', { class: 'level', text: spec.level }));
    if (app.override) {
      $('bench-meta').append(' · ', el('span', { class: 'tag sandboxed' }, '⚙ ' + Object.entries(app.override).map(([k, v]) => k + '=' + v).join(', ')));
    }
  }
}

// drawBenchWaiting puts a scenario on the bench before the engine has
// started: its lanes, waiting, the opening balances, the empty tables and
// the rules not yet checked, inert until the engine's first state replaces
// it (render). The learner sees what is coming; and the browser lays the
// bench out, finding every font it needs, while the engine still downloads
// and compiles. Drawn only after the engine's state, that first layout met
// a machine busy with the engine's compilation: measured in Chromium on two
// cores, each new font took the browser 0.1–0.5 s to hand over, and the
// bench reached the screen a second after its state had arrived.
function drawBenchWaiting(spec) {
  $('day-body').hidden = true;
  $('bench-body').hidden = true;
  if (!spec || spec.day) return;
  $('bench-body').hidden = false;
  $('bench-body').inert = true;
  $('bench-body').setAttribute('aria-busy', 'true');
  $('step-count').textContent = app.engineProblemText ? '⚠ ' + app.engineProblemText : t('engineLoading');
  for (const id of ['btn-step', 'btn-back', 'btn-run', 'btn-reset', 'btn-inject']) $(id).disabled = true;
  const lanes = (spec.lanes || []).map((l) => ({
    id: l.id, intent: l.intent || l.id, customer: l.customer, key: l.key, fault: l.fault,
    state: 'waiting', next_phase: 'receive', events: [], verdict: 'pending',
  }));
  drawRace($('race'), buildRace({ lanes, clock: 'step', accounts: Object.entries(spec.accounts || {}).map(([id, balance]) => ({ id, balance })) }),
    { onSelectLane: () => {}, width: raceWidth() });
  app.lastEvent = null;
  renderLast();
  $('keys-table').replaceChildren(keyTable([], 'keys'));
  $('loose-keys-wrap').hidden = true;
  $('accounts-table').replaceChildren(accountsTable(Object.entries(spec.accounts || {}).map(([id, balance]) => ({ id, balance }))));
  $('transfers-table').replaceChildren(transfersTable([]));
  $('summary').textContent = '';
  $('rules').replaceChildren(...(app.lesson.rules || []).map((r) => el('li', { class: 'rule pending', 'data-rule': r.name },
    el('span', { class: 'rule-icon', 'aria-hidden': 'true', text: '…' }), ' ',
    el('strong', { text: t('ruleNotChecked') }), ' ',
    el('span', { text: r.n + '. ' + r.title }))));
  renderGoals((spec.goals || []).map((g) => Object.assign({}, g, { met: false })));
}

function render() {
  const st = app.state;
  if (!st) return;
  $('bench-body').inert = false;
  $('bench-body').removeAttribute('aria-busy');
  $('btn-reset').disabled = false;
  renderBenchHead();
  const lane = nextLane();
  $('step-count').textContent = (st.done ? t('stepDone', { n: st.step }) : t('step', { n: st.step })) +
    (st.clock_ms ? ' · ' + t('clock', { time: fmtDuration(st.clock_ms) }) : '');
  $('step-count').dataset.step = st.step;
  $('step-count').dataset.done = st.done ? 'true' : 'false';
  $('btn-step').textContent = (lane && !st.done ? t('stepLane', { lane }) : t('stepNoLane')) + ' ▶';
  $('btn-step').disabled = st.done || !lane;
  $('btn-back').disabled = st.step === 0;
  $('btn-run').disabled = st.done;
  $('btn-inject').disabled = st.done || !lane;
  $('btn-inject').title = lane ? t('injectAt', { lane }) + ' (f)' : 'f';

  drawBenchRace();
  renderLast();
  $('keys-table').replaceChildren(keyTable(st.keys || [], 'keys'));
  const loose = st.loose_keys || [];
  $('loose-keys-wrap').hidden = !loose.length && st.policy.claim !== 'check-then-insert';
  $('loose-keys-table').replaceChildren(keyTable(loose, 'loose-keys'));
  $('accounts-table').replaceChildren(accountsTable(st.accounts || []));
  $('transfers-table').replaceChildren(transfersTable(st.transfers || []));
  renderReport(st.report, $('summary'), $('rules'));
  const goals = (st.goals || []).map((g) => Object.assign({}, g, { met: g.met && policyHolds(g.policy, st.policy) }));
  renderGoals(goals);
  renderKnobs(st.policy);
  saveGoals(app.lesson.id, app.spec.id, goals);
}

function fmtDuration(ms) {
  const s = Math.round(ms / 1000);
  if (s < 60) return s + 's';
  const m = Math.floor(s / 60);
  if (m < 60) return m + 'm' + (s % 60 ? (s % 60) + 's' : '');
  const h = Math.floor(m / 60);
  return h + 'h' + (m % 60 ? (m % 60) + 'm' : '');
}

// SCENARIO_START_MS is lab/scenario.Start, the fixed moment every scenario
// begins; key times are shown relative to it ("+5m"), beside the clock.
const SCENARIO_START_MS = Date.UTC(2026, 10, 30);

function fmtTime(ms) {
  if (!ms) return t('never');
  const start = app.state && app.state.start_ms ? app.state.start_ms : SCENARIO_START_MS;
  return '+' + fmtDuration(Math.max(0, ms - start));
}

function accountsTable(accounts) {
  return table(
    [{ label: t('colAccount'), cell: (a) => a.id }, { label: t('colBalance'), class: 'num', cell: (a) => won(a.balance) }],
    accounts.map((a) => Object.assign({ attrs: { 'data-account': a.id, 'data-balance': a.balance } }, a)), { id: 'accounts' });
}

function transfersTable(transfers) {
  return table(
    [{ label: t('colId'), cell: (x) => x.transfer_id }, { label: t('colFrom'), cell: (x) => x.from },
      { label: t('colTo'), cell: (x) => x.to }, { label: t('colAmount'), class: 'num', cell: (x) => won(x.amount) },
      { label: t('colKey'), cell: (x) => x.key || '' }],
    transfers.map((x) => Object.assign({ attrs: { 'data-transfer': x.transfer_id } }, x)), { id: 'transfers' });
}

function keyTable(rows, id) {
  return table([
    { label: t('colScope'), cell: (r) => r.scope },
    { label: t('colKey'), cell: (r) => r.key },
    { label: t('colState'), cell: (r) => r.state || '—' },
    { label: t('colOwner'), cell: (r) => r.owner || '' },
    { label: t('colFingerprint'), class: 'mono', cell: (r) => (r.fingerprint ? r.fingerprint.slice(0, 12) + '…' : '—') },
    { label: t('colResponse'), cell: (r) => (r.response ? String(r.response.status) : '—') },
    { label: t('colTransfer'), cell: (r) => r.transfer_id || '' },
    { label: t('colExpires'), cell: (r) => fmtTime(r.expires_at) },
  ], rows.map((r) => Object.assign({ attrs: { 'data-key': r.key, 'data-state': r.state || '' } }, r)), { id });
}

function showEvent(ev) {
  app.lastEvent = ev;
  drawBenchRace();
  renderLast();
}

// raceWidth is the width the race view may use: the bench's own.
function raceWidth() {
  return $('race').clientWidth || $('bench').clientWidth - 32 || 900;
}

// drawBenchRace draws the bench's state as the race view: one row per lane
// on the engine's step, the key rows and the ledger, the step shown (the
// last one, or the mark the learner clicked) lit up with the rows its SQL
// touched.
function drawBenchRace() {
  const st = app.state;
  if (!st) return;
  const events = [];
  for (const l of st.lanes) events.push(...(l.events || []));
  const violations = [];
  for (const r of (st.report && st.report.rules) || []) for (const v of r.violations || []) violations.push(Object.assign({ rule: r.rule }, v));
  app.race = buildRace({
    events, lanes: st.lanes, violations, policy: st.policy, transfers: st.transfers, accounts: st.accounts, clock: 'step',
  });
  const shown = app.lastEvent || st.last;
  drawRace($('race'), app.race, {
    selectedLane: st.done ? null : nextLane(), onSelectLane: choose, onMark: showEvent,
    currentSeq: shown ? shown.seq : undefined, width: raceWidth(), expanded: app.expanded, onToggle: toggleRaceRow,
  });
}

function toggleRaceRow(id) {
  app.expanded = app.expanded || new Set();
  if (app.expanded.has(id)) app.expanded.delete(id);
  else app.expanded.add(id);
  drawBenchRace();
}

function exportBench(format) {
  const svgEl = $('race').querySelector('svg');
  if (!svgEl || !app.spec) return;
  const step = app.state ? app.state.step : 0;
  exportRace(svgEl, 'idemlab-' + (app.lesson ? app.lesson.id : 'bench') + '-' + app.spec.id + '-step' + step, format);
}

function renderLast() {
  const ev = app.lastEvent || (app.state && app.state.last);
  const box = $('last-step');
  if (!ev) {
    box.replaceChildren(el('p', { class: 'empty', text: t('lastNone') }));
    return;
  }
  const lane = laneOf(ev.lane);
  box.replaceChildren(...[
    lane && lane.verdict ? el('p', { class: 'last-verdict' }, el('strong', { text: lane.id }), ' ', verdictBadge(lane.verdict, lane.verdict_text, t)) : null,
    el('p', { class: 'last-head' },
      el('strong', { text: ev.lane }), ' · ', el('code', { text: ev.phase }), ' · ' + t('outcome') + ' ',
      el('strong', { class: 'outcome', 'data-outcome': ev.outcome, text: ev.outcome }),
      ev.status ? ' · ' + ev.status : ''),
    ev.note ? el('p', { class: 'note', text: ev.note }) : null,
    el('h4', { text: t('lastSQL') }),
    el('pre', { id: 'last-sql', class: 'sql' }, ev.sql || t('noSQL')),
  ].filter(Boolean));
}

function renderReport(report, summaryBox, list) {
  if (!report) {
    summaryBox.textContent = '';
    list.replaceChildren();
    return;
  }
  const s = report.summary || {};
  summaryBox.textContent = t('summary', {
    transfers: s.transfers ?? 0, intents: s.intents ?? 0, duplicates: s.duplicates ?? 0, paid: won(s.paid_twice ?? 0),
    conflicts: s.conflicts_409 ?? 0, mismatches: s.mismatches_422 ?? 0, replays: s.replays ?? 0,
  });
  summaryBox.dataset.duplicates = s.duplicates ?? 0;
  summaryBox.dataset.paidTwice = s.paid_twice ?? 0;
  list.replaceChildren(...(report.rules || []).map((r) => el('li', {
    class: r.ok ? 'rule ok' : 'rule broken', 'data-rule': r.rule.name, 'data-ok': r.ok ? 'true' : 'false',
  },
  el('span', { class: 'rule-icon', 'aria-hidden': 'true', text: r.ok ? '✔' : '✘' }), ' ',
  el('strong', { text: r.ok ? t('ruleHolds') : t('ruleBroken') }), ' ',
  el('span', { text: r.rule.n + '. ' + r.rule.title }),
  (r.violations || []).length ? el('ul', { class: 'violations' }, r.violations.slice(0, 5).map((v) => el('li', {},
    v.message, (v.lanes || []).length ? ' (' + v.lanes.join(', ') + ')' : ''))) : null)));
}

// policyHolds reports whether a goal's knob overrides are what the session
// plays under: "break it by switching the claim to insert-or-ignore" is met
// only with that claim, whatever else broke the rule.
function policyHolds(want, policy) {
  for (const [knob, v] of Object.entries(want || {})) {
    const have = policy[knob];
    if (durationMS(v) !== null && durationMS(have) !== null) {
      if (durationMS(v) !== durationMS(have)) return false;
    } else if (v !== have) {
      return false;
    }
  }
  return true;
}

// durationMS reads a Go duration string ("5m", "24h0m0s", "1m30s") or a
// number of seconds, as the policy's retention and lease are written; null
// for anything else.
function durationMS(v) {
  if (typeof v === 'number') return v * 1000;
  if (typeof v !== 'string' || !/^(\d+(\.\d+)?(h|m|s|ms))+$/.test(v)) return null;
  const unit = { h: 3600e3, m: 60e3, s: 1e3, ms: 1 };
  let total = 0;
  for (const [, n, , u] of v.matchAll(/(\d+(\.\d+)?)(ms|h|m|s)/g)) total += Number(n) * unit[u];
  return total;
}

// dayGoalMet judges a day's goal on its report the way the scenario runner
// judges a session's: "break" wants the rule broken, "hold" wants it (or,
// with no rule named, every rule) to hold.
function dayGoalMet(g, report) {
  if (!report) return false;
  const rule = (report.rules || []).find((r) => r.rule.name === g.rule);
  if (g.expect === 'break') return !!rule && !rule.ok;
  if (g.expect === 'hold') return g.rule ? !!rule && rule.ok : !!report.ok;
  return false;
}

function renderGoals(goals, list = $('goals')) {
  if (list.id === 'goals') $('bench-goals-panel').hidden = !goals.length;
  list.replaceChildren(...goals.map((g) => el('li', { class: g.met ? 'met' : 'not-met', 'data-goal': g.id, 'data-met': g.met ? 'true' : 'false' },
    el('span', { class: 'goal-icon', 'aria-hidden': 'true', text: g.met ? '✔' : '○' }), ' ',
    el('strong', { text: g.met ? t('goalMet') : t('goalNotYet') }), ' — ', g.text,
    g.policy && Object.keys(g.policy).length ? el('button', {
      type: 'button', class: 'goal-policy', onclick: () => applyGoalPolicy(g.policy),
    }, t('goalUnderPolicy', { policy: Object.entries(g.policy).map(([k, v]) => k + '=' + v).join(', ') })) : null)));
}

function applyGoalPolicy(policy) {
  return act(async () => {
    app.override = Object.assign({}, policy);
    const st = await app.engine.call('setPolicy', app.session, JSON.stringify(Object.assign({}, app.base, policy)));
    app.moves = [];
    app.pinned = null;
    return st;
  });
}

// DURATION_CHOICES are the retention and lease values the sandbox offers
// beside the policy's own: forever (0s), the lower rungs' 5 minutes, an
// hour (the lab clients' retry horizon) and the published 24 hours.
const DURATION_CHOICES = {
  retention: ['0s', '5m0s', '1h0m0s', '24h0m0s'],
  lease: ['0s', '30s', '5m0s'],
};

function knobChoices(knob, current) {
  const known = (app.engineInfo && app.engineInfo.knobs && app.engineInfo.knobs[knob]) || DURATION_CHOICES[knob] || [];
  const list = known.slice();
  for (const v of [current, app.base && app.base[knob]]) {
    if (v !== undefined && v !== null && !list.includes(v)) list.push(v);
  }
  return list;
}

function renderKnobs(policy) {
  const box = $('knobs');
  box.replaceChildren(...KNOBS.filter((k) => k in policy).map((knob) => {
    const changed = app.base && JSON.stringify(app.base[knob]) !== JSON.stringify(policy[knob]);
    const id = 'knob-' + knob;
    return el('div', { class: 'knob' + (changed ? ' changed' : ''), 'data-knob': knob, 'data-changed': changed ? 'true' : 'false' },
      el('label', { for: id, text: t('knob_' + knob) }),
      el('select', { id, 'data-knob': knob, onchange: (e) => setKnob(knob, e.target.value) },
        knobChoices(knob, policy[knob]).map((v) => el('option', { value: v, selected: v === policy[knob] }, String(v)))),
      changed ? el('span', { class: 'tag' }, '⚙ ' + t('sandboxChanged')) : null);
  }));
  $('btn-sandbox-reset').disabled = !app.override;
}

// --- a day of traffic ------------------------------------------------------------

function resetDay() {
  $('day-progress').hidden = true;
  $('day-status').textContent = '';
  $('day-summary').textContent = '';
  $('day-rules').replaceChildren();
}

function runDay() {
  return serial(async () => {
    const spec = app.spec;
    if (!spec || !spec.day) return;
    const bar = $('day-progress');
    bar.hidden = false;
    bar.value = 0;
    $('btn-day').disabled = true;
    try {
      const tally = await app.engine.callWithProgress('day', (done, total) => {
        bar.max = total || 1;
        bar.value = done;
        $('day-status').textContent = t('dayRunning', { done, total });
      }, JSON.stringify(spec));
      bar.value = bar.max;
      $('day-status').textContent = t('dayDone', { attempts: tally.attempts ?? (tally.report && tally.report.summary.attempts) ?? 0 });
      renderReport(tally.report, $('day-summary'), $('day-rules'));
      const goals = (spec.goals || []).map((g) => Object.assign({}, g, { met: dayGoalMet(g, tally.report) }));
      renderGoals(goals, $('day-goals'));
      saveGoals(app.lesson.id, spec.id, goals);
    } catch (err) {
      $('day-status').textContent = '⚠ ' + t('engineError', { error: err.message });
    } finally {
      $('btn-day').disabled = false;
    }
  });
}

// --- keyboard ----------------------------------------------------------------------

function toggleKeys() {
  const box = $('keys-help');
  box.hidden = !box.hidden;
  $('keys-toggle').setAttribute('aria-expanded', box.hidden ? 'false' : 'true');
}

function onKey(e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const tag = (e.target && e.target.tagName) || '';
  const typing = tag === 'INPUT' && e.target.type !== 'radio' || tag === 'TEXTAREA' || tag === 'SELECT' || (e.target && e.target.isContentEditable);
  if (typing) return;
  const onButton = tag === 'BUTTON' || tag === 'SUMMARY' || tag === 'A';
  const benchOpen = app.session && !$('bench-body').hidden;
  let handled = true;
  switch (e.key) {
    case 'ArrowRight':
    case 'n':
      if (benchOpen) step();
      break;
    case ' ':
      if (onButton) return; // Space presses the focused button.
      if (benchOpen) step();
      break;
    case 'ArrowLeft':
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
    case 'Escape':
      if (!$('keys-help').hidden) toggleKeys();
      else handled = false;
      break;
    default:
      if (/^[1-9]$/.test(e.key)) chooseNth(Number(e.key) - 1);
      else handled = false;
  }
  if (handled) e.preventDefault();
}

// --- start -------------------------------------------------------------------------

async function main() {
  app.lang = new URLSearchParams(location.search).get('lang') || 'en';
  setLang(app.lang);
  document.documentElement.lang = app.lang;
  applyI18n();
  initTheme();
  $('theme-toggle').addEventListener('click', toggleTheme);
  $('keys-toggle').addEventListener('click', toggleKeys);
  $('btn-step').addEventListener('click', step);
  $('btn-back').addEventListener('click', back);
  $('btn-run').addEventListener('click', runAll);
  $('btn-reset').addEventListener('click', reset);
  $('btn-inject').addEventListener('click', inject);
  $('btn-sandbox-reset').addEventListener('click', sandboxBack);
  $('btn-day').addEventListener('click', runDay);
  $('btn-export-svg').addEventListener('click', () => exportBench('svg'));
  $('btn-export-png').addEventListener('click', () => exportBench('png'));
  let resizeTimer = 0;
  new ResizeObserver(() => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => app.state && drawBenchRace(), 100);
  }).observe($('bench'));
  $('prev-lesson').addEventListener('click', () => gotoLesson(-1));
  $('next-lesson').addEventListener('click', () => gotoLesson(1));
  $('lesson-select').addEventListener('change', (e) => loadLesson(e.target.value, false));
  $('lang-select').addEventListener('change', (e) => chooseLang(e.target.value));
  document.addEventListener('keydown', onKey);
  window.addEventListener('pagehide', writeHashNow);
  // A URL typed or pasted into the address bar (the page's own writes use
  // replaceState and fire no hashchange) moves the player there.
  window.addEventListener('hashchange', () => {
    // The learner's link replaces whatever the page meant to write.
    clearTimeout(hashTimer);
    document.body.dataset.urlPending = 'false';
    ownHash = location.hash;
    const h = readHash();
    if (h.lesson && (!app.lesson || h.lesson !== app.lesson.id)) {
      loadLesson(h.lesson, true);
      return;
    }
    const spec = app.lesson && (app.lesson.scenarios || []).find((x) => x.id === h.scenario);
    if (!spec) return;
    serial(async () => {
      await closeSession();
      app.spec = spec;
      app.moves = h.moves;
      app.override = h.override;
      markActiveCard();
      renderBenchHead();
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

// verdictBadge is re-exported for pages that show a lone verdict.
export { verdictBadge };
