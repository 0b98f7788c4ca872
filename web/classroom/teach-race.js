// teach-race.js: the projector's picture of the room's current ledger. It
// records the ledger's trace events as they arrive and draws them in the
// race view (web/race.js, the one the lessons' bench draws), on the
// trace's own clock; the player pauses, steps, scrubs and replays a
// recorded storm in slow motion from its events alone. teach.js feeds it
// the room's messages; teach-verdict.js draws the verdict beside it.
import { $, el } from '/dom.js';
import { buildRace, drawRace, exportRace, fmtMS, timeOf as timeMS } from '/race.js';
import { t } from './words.js';

// REDRAW_MS: while a storm streams in, the view is rebuilt at most this
// often; a storm of 5,000 requests sends tens of thousands of events.
const REDRAW_MS = 150;
// MAX_EVENTS bounds what one run records: 1,000 clients × 5 attempts is
// about 45,000 events. Beyond it events are counted, not kept.
const MAX_EVENTS = 60000;
// A key's group collapses identical attempts into one counted row once it
// has more than COLLAPSE_OVER. The view draws no more rows than a window
// and a half holds (at least MIN_ROWS, at most MAX_ROWS; the rest are
// counted): each row drawn is time spent on every frame of a replay.
const MIN_ROWS = 20;
const MAX_ROWS = 40;
const COLLAPSE_OVER = 6;
// The page is the presenter (controls, and a small picture) unless it is
// opened as the room's screen (?view=screen), the audience view that the
// projector shows: the join screen, then the race filling the screen.
export const SCREEN = new URLSearchParams(location.search).get('view') === 'screen';
// VIEW_SCALE enlarges the drawn view for the back of a room: race.css's
// smallest words (11 px) are 16 px on the presenter, 21 px on the screen.
const VIEW_SCALE = SCREEN ? 1.9 : 1.46;
// viewScale is the enlargement the view was last drawn at.
let viewScale = VIEW_SCALE;

let code = '';
let roster = new Map(); // student id → nickname
let run = 0; // the ledger shown (the other modules ask shownRun)
let level = '';
let live = null;
let stormed = false; // a storm has been shown: the join card is a strip

// What the run recorded, and the race view built from it.
let events = []; // the run's trace events, as they arrived
let unrecorded = 0; // events past MAX_EVENTS, counted only
let violations = [];
let policy = {};
export const policies = new Map(); // level → the policy a storm announced for it
let model = null;
let modelDirty = false;
let expanded = new Set();
let queue = [];
let frame = 0;
let redraw = 0;
let drawCost = 0; // ms the last view took to build and draw
let seekFrame = 0;

// The player: "live" follows the events as they come; "paused" freezes the
// picture at cursor (events keep being recorded); "replay" moves cursor
// along the trace's clock at speed × real time.
// shownRun is the ledger the screen shows now.
export function shownRun() {
  return run;
}

export const view = { mode: 'live', cursor: 0, speed: 0.1, anchorT: 0, anchorWall: 0, raf: 0 };

function freshLive() {
  return { commits: new Map(), statuses: new Map(), lost: 0, crashed: 0, requests: new Set() };
}

// setCode names the room, for the files the view is saved as.
export function setCode(c) {
  code = c;
}

// setRoster keeps the students' nicknames, which name their lanes.
export function setRoster(list) {
  roster = new Map(list.map((r) => [r.id, r.nickname]));
}

// setVerdict joins the checker's broken rules (and the policy it judged
// by, when it names one) to the attempts they name in the view.
export function setVerdict(vs, p) {
  violations = vs;
  if (p) policy = p;
  modelDirty = true;
}

// receive queues a batch of events; they are recorded at the next frame.
export function receive(evs) {
  queue.push(...evs);
  if (!frame) frame = requestAnimationFrame(drain);
}

// showStage switches the room between its two layouts: before the first
// storm the join card is big and the storm form open; once a storm is
// shown the join card is a strip and the race view sits above the fold.
export function showStage(on) {
  stormed = stormed || on;
  $('room').classList.toggle('stormed', stormed);
  $('stage').hidden = !stormed;
}

// policyOf is the policy the view names the key row's states with: the one
// a storm announced for the level, else what the level's name says.
function policyOf(lvl) {
  return policies.get(lvl) || (lvl === 'naive' ? { claim: 'none' } : {});
}

export function newRun(id, lvl, label) {
  if (id === run && lvl === level) {
    // The same ledger announced twice (its state, then its storm): keep
    // what it recorded; the storm's message may name its policy.
    $('run-label').textContent = `(${t('ledgerN', { n: id })}, ${label})`;
    policy = policyOf(level);
    modelDirty = true;
    return;
  }
  run = id;
  level = lvl || level;
  policy = policyOf(level);
  events = [];
  $('picture-box').hidden = true;
  $('picture').replaceChildren();
  unrecorded = 0;
  violations = [];
  expanded = new Set();
  model = null;
  modelDirty = false;
  queue = [];
  live = freshLive();
  clearTimeout(redraw);
  redraw = 0;
  stopReplay();
  view.mode = 'live';
  view.cursor = 0;
  $('race').replaceChildren();
  $('run-label').textContent = id > 0 ? `(${t('ledgerN', { n: id })}, ${label})` : '';
  // The last ledger's verdict is not this one's: until this one's comes,
  // the verdict says it is running.
  $('rules').replaceChildren(el('li', { class: 'running', text: t('running') }));
  // Nor is its count of duplicates: the tally's data-duplicates is the
  // checker's figure, set again only when this ledger's verdict comes (a
  // page that reconnected reads it to know the room is drawn again).
  delete $('tally').dataset.duplicates;
  $('balances').replaceChildren();
  $('keytable').replaceChildren();
  $('keys-total').textContent = '';
  $('stuck').hidden = true;
  $('interrupted').hidden = true;
  renderPlayer();
  renderLive();
}

// drainNow records what is queued at once, before a verdict that names it;
// the verdict's drawing then draws it.
export function drainNow() {
  if (frame) cancelAnimationFrame(frame);
  drain();
}

// drain records the queued events once per animation frame, however many
// arrived, so a storm of thousands of events never freezes the page; the
// view itself is redrawn at most every REDRAW_MS.
function drain() {
  frame = 0;
  const evs = queue;
  queue = [];
  let added = false;
  for (const e of evs) {
    if (e.run > run) newRun(e.run, level, '');
    if (e.run !== run) continue;
    addEvent(e);
    added = true;
  }
  if (!added) return;
  showStage(true);
  modelDirty = true;
  renderLive();
  if (view.mode === 'live') {
    // A big storm's view costs more to build the more it has recorded:
    // the page keeps at least twice that cost free between redraws, so
    // the instructor's clicks are never queued behind the drawing.
    if (!redraw) redraw = setTimeout(drawNow, Math.max(REDRAW_MS, 2 * drawCost));
  } else {
    renderPlayer(); // paused or replaying: the picture stays, the count grows
  }
}

// laneLabel names a student's lane after the student ("ana #2"); a storm's
// simulated clients keep their lane ids (c12.1).
export function laneLabel(lane) {
  const m = /^(s\d+)\.(\d+)$/.exec(lane || '');
  if (m && roster.has(m[1])) return `${roster.get(m[1])} #${m[2]}`;
  return lane;
}

function addEvent(e) {
  live.requests.add(e.lane);
  if (e.phase === 'commit' && e.outcome === 'committed') live.commits.set(e.intent, (live.commits.get(e.intent) || 0) + 1);
  if (e.phase === 'respond') {
    if (e.outcome === 'lost' || e.outcome === 'timed-out') live.lost++;
    else live.statuses.set(e.status, (live.statuses.get(e.status) || 0) + 1);
  }
  if (e.outcome === 'crashed') live.crashed++;
  if (events.length >= MAX_EVENTS) {
    unrecorded++;
    return;
  }
  events.push(e);
}

// currentModel rebuilds the race model when events or the verdict changed
// since it was last built. Events are kept in the order they arrived; the
// model orders them on the trace's clock, so cursor n is "the first n
// events in time".
export function currentModel() {
  if (modelDirty || !model) {
    const t0 = performance.now();
    model = buildRace({ events, violations, policy, clock: 'time', labelOf: laneLabel });
    modelDirty = false;
    measure('idemlab-projector-build', t0);
  }
  return model;
}

// drawNow draws the view at the player's cursor (the end, when live).
export function drawNow() {
  clearTimeout(redraw);
  redraw = 0;
  if (!events.length) {
    renderPlayer();
    return;
  }
  const start = performance.now();
  const m = currentModel();
  const t0 = performance.now();
  const n = m.events.length;
  if (view.mode === 'live') view.cursor = n;
  view.cursor = Math.max(0, Math.min(view.cursor, n));
  const box = $('race');
  // The view is drawn for the box's width over VIEW_SCALE, then enlarged
  // by it: the same picture, words large enough for the back row.
  // On a small screen the enlargement gives way, so that the view is never
  // drawn narrower than 640 units nor wider than its box.
  const boxW = box.clientWidth || document.documentElement.clientWidth - 40;
  const scale = Math.max(1, Math.min(VIEW_SCALE, (boxW - 4) / 640));
  const width = Math.max(320, (boxW - 4) / scale);
  const shownEvent = view.mode !== 'live' && view.cursor > 0 ? m.events[view.cursor - 1] : null;
  const svgEl = drawRace(box, m, {
    cursor: view.cursor,
    currentSeq: shownEvent ? shownEvent.seq : undefined,
    expanded,
    onToggle: toggleRow,
    collapseOver: COLLAPSE_OVER,
    maxRows: rowsToDraw(),
    width,
    compact: false,
  });
  viewScale = scale;
  svgEl.style.width = Number(svgEl.getAttribute('width')) * scale + 'px';
  svgEl.style.height = Number(svgEl.getAttribute('height')) * scale + 'px';
  measure('idemlab-projector-draw', t0);
  drawCost = performance.now() - start;
  if (view.mode !== 'live') follow(box, svgEl);
  renderPlayer();
}

// follow scrolls a view wider than the screen so that the moment shown
// (the "now" line of a replay or a scrub) stays in the middle third.
function follow(box, svgEl) {
  const now = svgEl.querySelector('[data-now]');
  if (!now || box.scrollWidth <= box.clientWidth) return;
  const x = Number(now.getAttribute('x1')) * viewScale;
  const left = box.scrollLeft;
  if (x < left + box.clientWidth / 3 || x > left + (2 * box.clientWidth) / 3) box.scrollLeft = Math.max(0, x - box.clientWidth / 2);
}

// measure keeps the page's latest figure of one kind (make bench reads
// them), never a growing list: a replay draws sixty frames a second.
export function measure(name, start) {
  performance.clearMeasures(name);
  performance.measure(name, { start, end: performance.now() });
}

// rowsToDraw is how many rows of the view a window and a half holds, at
// race.js's 36-pixel rows enlarged by VIEW_SCALE.
function rowsToDraw() {
  return Math.max(MIN_ROWS, Math.min(MAX_ROWS, Math.ceil((1.5 * innerHeight) / (36 * VIEW_SCALE))));
}

function toggleRow(id) {
  if (expanded.has(id)) expanded.delete(id);
  else expanded.add(id);
  drawNow();
}

// --- the player -------------------------------------------------------------

// renderPlayer shows where the picture is: the slider over the recorded
// events, the event shown in words, and the play button's state.
export function renderPlayer() {
  const n = model ? model.events.length : events.length;
  const recorded = events.length;
  const scrub = $('scrub');
  scrub.max = String(Math.max(recorded, n));
  scrub.value = String(view.mode === 'live' ? recorded : view.cursor);
  const playing = view.mode !== 'paused';
  $('play').textContent = playing ? t('pauseBtn') : t('playBtn');
  $('play').setAttribute('aria-pressed', playing ? 'false' : 'true');
  $('player').dataset.mode = view.mode;
  const cursor = view.mode === 'live' ? recorded : view.cursor;
  let at = '';
  if (model && cursor > 0 && model.events.length) {
    const first = timeMS(model.events[0]);
    at = ` · ${fmtMS(timeMS(model.events[Math.min(cursor, model.events.length) - 1]) - first)}`;
  }
  $('position').textContent =
    t('position', { n: cursor, total: recorded }) +
    at +
    (view.mode === 'replay' ? ' · ' + t('replayAt', { speed: view.speed }) : view.mode === 'paused' ? ' · ' + t('pausedWord') : '') +
    (unrecorded ? ' ' + t('unrecorded', { n: unrecorded }) : '');
  const ev = view.mode !== 'live' && model && cursor > 0 ? model.events[cursor - 1] : null;
  $('now-event').textContent = ev ? describe(ev) : '';
}

// describe says what one event did, for the room to read aloud.
function describe(e) {
  return (
    `${laneLabel(e.lane)} · ${e.phase} → ${e.outcome}` +
    (e.status ? ` (${e.status})` : '') +
    (e.note ? ` · ${e.note}` : '') +
    (e.sql ? ` · ${e.sql}` : '')
  );
}

function pause() {
  if (!events.length) return;
  stopReplay();
  if (view.mode === 'live') view.cursor = model ? model.events.length : 0;
  view.mode = 'paused';
  drawNow();
}

// play resumes: from the end, the view follows the events again; from
// anywhere else, it replays from the cursor at the chosen speed.
function play() {
  if (!events.length) return;
  const m = currentModel();
  if (view.mode === 'paused' && view.cursor < m.events.length) {
    startReplay(view.cursor);
    return;
  }
  stopReplay();
  view.mode = 'live';
  drawNow();
}

function step(d) {
  if (!events.length) return;
  const m = currentModel();
  if (view.mode === 'live') view.cursor = m.events.length;
  stopReplay();
  view.mode = 'paused';
  view.cursor = Math.max(0, Math.min(m.events.length, view.cursor + d));
  drawNow();
}

// seek moves the picture to cursor c; a slider dragged fires faster than
// frames are painted, so the drawing waits for the next frame and draws
// only the latest position.
export function seek(c) {
  if (!events.length) return;
  stopReplay();
  view.mode = 'paused';
  view.cursor = c;
  renderPlayer();
  if (!seekFrame) {
    seekFrame = requestAnimationFrame(() => {
      seekFrame = 0;
      drawNow();
    });
  }
}

// startReplay replays the recorded events from cursor on the trace's own
// clock, slowed to view.speed: a storm of 0.4 s at 0.02× takes 20 s.
function startReplay(from) {
  const m = currentModel();
  if (!m.events.length) return;
  stopReplay();
  view.mode = 'replay';
  view.cursor = Math.min(from, m.events.length - 1);
  view.anchorT = view.cursor > 0 ? timeMS(m.events[view.cursor - 1]) : timeMS(m.events[0]);
  view.anchorWall = performance.now();
  drawNow();
  view.raf = requestAnimationFrame(tick);
}

function tick(now) {
  view.raf = 0;
  if (view.mode !== 'replay') return;
  const m = currentModel();
  const target = view.anchorT + (now - view.anchorWall) * view.speed;
  let c = view.cursor;
  while (c < m.events.length && timeMS(m.events[c]) <= target) c++;
  if (c !== view.cursor) {
    view.cursor = c;
    drawNow();
  }
  if (c >= m.events.length) {
    view.mode = 'live';
    drawNow();
    return;
  }
  view.raf = requestAnimationFrame(tick);
}

function stopReplay() {
  if (view.raf) cancelAnimationFrame(view.raf);
  view.raf = 0;
}

function setSpeed(s) {
  if (view.mode === 'replay' && model) {
    // Keep the picture where it is; only the pace changes.
    const now = performance.now();
    view.anchorT += (now - view.anchorWall) * view.speed;
    view.anchorWall = now;
  }
  view.speed = s;
  renderPlayer();
}

$('play').addEventListener('click', () => (view.mode === 'paused' ? play() : pause()));
$('step-back').addEventListener('click', () => step(-1));
$('step-fwd').addEventListener('click', () => step(1));
$('replay').addEventListener('click', () => startReplay(0));
$('speed').addEventListener('change', () => setSpeed(Number($('speed').value) || 1));
$('scrub').addEventListener('input', () => seek(Number($('scrub').value)));
$('save-svg').addEventListener('click', () => save('svg'));
$('save-png').addEventListener('click', () => save('png'));

// Keys for the player, unless the instructor is typing into the form.
document.addEventListener('keydown', (e) => {
  if ($('room').hidden || $('stage').hidden || e.altKey || e.ctrlKey || e.metaKey) return;
  const tgt = e.target;
  if (tgt.closest && tgt.closest('input, select, textarea, summary, form')) return;
  if (e.key === ' ' && tgt.closest && tgt.closest('button, [role=button]')) return; // Space presses the focused button
  switch (e.key) {
    case ' ':
      if (view.mode === 'paused') play();
      else pause();
      break;
    case 'ArrowLeft':
      step(-1);
      break;
    case 'ArrowRight':
      step(1);
      break;
    case 'Home':
      seek(0);
      break;
    case 'End':
      play();
      if (view.mode === 'replay') {
        stopReplay();
        view.mode = 'live';
        drawNow();
      }
      break;
    default:
      return;
  }
  e.preventDefault();
});

let resizing = 0;
window.addEventListener('resize', () => {
  clearTimeout(resizing);
  resizing = setTimeout(() => events.length && drawNow(), 200);
});

// save writes the view as it is shown (at the cursor) as an SVG or PNG
// file for a slide, at its drawn size.
function save(format) {
  const shown = $('race').querySelector('svg');
  if (!shown) return;
  const copy = shown.cloneNode(true);
  copy.removeAttribute('style');
  exportRace(copy, `idemlab-${code}-ledger${run}-event${view.mode === 'live' ? events.length : view.cursor}`, format);
}

// --- the live tally ----------------------------------------------------------

function renderLive() {
  if (!live) return;
  let dup = 0;
  for (const n of live.commits.values()) if (n > 1) dup += n - 1;
  $('lane-count').textContent =
    t('requestsN', { n: live.requests.size }) + (unrecorded ? ' ' + t('unrecordedCounted', { n: unrecorded }) : '');
  const st = (c) => live.statuses.get(c) || 0;
  $('tally').replaceChildren(
    tile(t('tile_liveDup'), dup, dup > 0 ? 'fail' : 'ok'),
    tile('201', st(201)),
    tile('409', st(409)),
    tile('422', st(422)),
    tile(t('tile_lost'), live.lost),
    tile(t('tile_crashed'), live.crashed),
  );
}

export function tile(label, value, cls = '') {
  return el(
    'div',
    { class: 'tile ' + cls },
    el('div', { class: 'tval', text: String(value) }),
    el('div', { class: 'tlabel', text: label }),
  );
}
