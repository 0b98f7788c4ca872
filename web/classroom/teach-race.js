// teach-race.js: the projector's picture of the room's current ledger. A
// RoomRace records the ledger's trace events as they arrive and draws them
// in the race view (web/race.js, the one the lessons' bench draws), on the
// trace's own clock; its player pauses, steps, scrubs and replays a
// recorded storm in slow motion from its events alone. teach.js makes the
// one RoomRace of the page and feeds it the room's messages; teach-verdict.js
// draws the verdict beside it, through the RoomRace it is handed. The
// RoomRace owns every piece of this state; the views below it take data
// and fill the nodes they are given.
import { $, el } from '/dom.js';
import { buildRace, drawRace, exportRace, fmtMS, timeOf as timeMS } from '/race.js';
import { t, tileWord } from './words.js';
import { tile } from './tile.js';

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

// measure keeps the page's latest figure of one kind (make bench reads
// them), never a growing list: a replay draws sixty frames a second.
export function measure(name, start) {
  performance.clearMeasures(name);
  performance.measure(name, { start, end: performance.now() });
}

function freshLive() {
  return { commits: new Map(), statuses: new Map(), lost: 0, crashed: 0, requests: new Set() };
}

// countEvent adds one event to a tally (freshLive): the requests seen,
// the commits per intent, the answers by status, the lost and crashed.
function countEvent(live, e) {
  live.requests.add(e.lane);
  if (e.phase === 'commit' && e.outcome === 'committed') live.commits.set(e.intent, (live.commits.get(e.intent) || 0) + 1);
  if (e.phase === 'respond') {
    if (e.outcome === 'lost' || e.outcome === 'timed-out') live.lost++;
    else live.statuses.set(e.status, (live.statuses.get(e.status) || 0) + 1);
  }
  if (e.outcome === 'crashed') live.crashed++;
}

// RoomRace is the controller of the projector's race view: what the shown
// ledger recorded, the race model built from it, the player's position and
// the live tally. screen is true on the room's screen (?view=screen), the
// audience view the projector shows, false on the presenter.
export class RoomRace {
  constructor({ screen }) {
    // scale enlarges the drawn view for the back of a room: race.css's
    // smallest words (11 px) are 16 px on the presenter, 21 px on the screen.
    this.scale = screen ? 1.9 : 1.46;
    // viewScale is the enlargement the view was last drawn at.
    this.viewScale = this.scale;
    this.code = '';
    this.roster = new Map(); // student id → nickname
    this.run = 0; // the ledger shown
    this.level = '';
    this.live = null;
    this.stormed = false; // a storm has been shown: the join card is a strip
    // What the run recorded, and the race view built from it.
    this.events = []; // the run's trace events, as they arrived
    this.unrecorded = 0; // events past MAX_EVENTS, counted only
    this.violations = [];
    this.policy = {};
    this.policies = new Map(); // level → the policy a storm announced for it
    this.model = null;
    this.modelDirty = false;
    this.expanded = new Set();
    this.queue = [];
    this.frame = 0;
    this.redraw = 0;
    this.drawCost = 0; // ms the last view took to build and draw
    this.seekFrame = 0;
    this.resizing = 0;
    // The player: "live" follows the events as they come; "paused" freezes
    // the picture at cursor (events keep being recorded); "replay" moves
    // cursor along the trace's clock at speed × real time.
    this.player = { mode: 'live', cursor: 0, speed: 0.1, anchorT: 0, anchorWall: 0, raf: 0 };
    this.drain = this.drain.bind(this);
    this.drawNow = this.drawNow.bind(this);
    this.tick = this.tick.bind(this);
    this.laneLabel = this.laneLabel.bind(this);
    this.toggleRow = this.toggleRow.bind(this);
    this.listen();
  }

  // shownRun is the ledger the screen shows now.
  shownRun() {
    return this.run;
  }

  // setCode names the room, for the files the view is saved as.
  setCode(c) {
    this.code = c;
  }

  // setRoster keeps the students' nicknames, which name their lanes.
  setRoster(list) {
    this.roster = new Map(list.map((r) => [r.id, r.nickname]));
  }

  // announcePolicy keeps the policy a storm announced for its level.
  announcePolicy(level, p) {
    this.policies.set(level, p);
  }

  // setVerdict joins the checker's broken rules (and the policy it judged
  // by, when it names one) to the attempts they name in the view.
  setVerdict(vs, p) {
    this.violations = vs;
    if (p) this.policy = p;
    this.modelDirty = true;
  }

  // receive queues a batch of events; they are recorded at the next frame.
  receive(evs) {
    this.queue.push(...evs);
    if (!this.frame) this.frame = requestAnimationFrame(this.drain);
  }

  // showStage switches the room between its two layouts: before the first
  // storm the join card is big and the storm form open; once a storm is
  // shown the join card is a strip and the race view sits above the fold.
  showStage(on) {
    this.stormed = this.stormed || on;
    $('room').classList.toggle('stormed', this.stormed);
    $('stage').hidden = !this.stormed;
  }

  // policyOf is the policy the view names the key row's states with: the
  // one a storm announced for the level, else what the level's name says.
  policyOf(lvl) {
    return this.policies.get(lvl) || (lvl === 'naive' ? { claim: 'none' } : {});
  }

  newRun(id, lvl, label) {
    if (id === this.run && lvl === this.level) {
      // The same ledger announced twice (its state, then its storm): keep
      // what it recorded; the storm's message may name its policy.
      $('run-label').textContent = `(${t('ledgerN', { n: id })}, ${label})`;
      this.policy = this.policyOf(this.level);
      this.modelDirty = true;
      return;
    }
    this.run = id;
    this.level = lvl || this.level;
    this.policy = this.policyOf(this.level);
    this.events = [];
    $('picture-box').hidden = true;
    $('picture').replaceChildren();
    this.unrecorded = 0;
    this.violations = [];
    this.expanded = new Set();
    this.model = null;
    this.modelDirty = false;
    this.queue = [];
    this.live = freshLive();
    clearTimeout(this.redraw);
    this.redraw = 0;
    this.stopReplay();
    this.player.mode = 'live';
    this.player.cursor = 0;
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
    this.renderPlayer();
    this.renderLive();
  }

  // drainNow records what is queued at once, before a verdict that names
  // it; the verdict's drawing then draws it.
  drainNow() {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.drain();
  }

  // drain records the queued events once per animation frame, however many
  // arrived, so a storm of thousands of events never freezes the page; the
  // view itself is redrawn at most every REDRAW_MS.
  drain() {
    this.frame = 0;
    const evs = this.queue;
    this.queue = [];
    let added = false;
    for (const e of evs) {
      if (e.run > this.run) this.newRun(e.run, this.level, '');
      if (e.run !== this.run) continue;
      this.addEvent(e);
      added = true;
    }
    if (!added) return;
    this.showStage(true);
    this.modelDirty = true;
    this.renderLive();
    if (this.player.mode === 'live') {
      // A big storm's view costs more to build the more it has recorded:
      // the page keeps at least twice that cost free between redraws, so
      // the instructor's clicks are never queued behind the drawing.
      if (!this.redraw) this.redraw = setTimeout(this.drawNow, Math.max(REDRAW_MS, 2 * this.drawCost));
    } else {
      this.renderPlayer(); // paused or replaying: the picture stays, the count grows
    }
  }

  // laneLabel names a student's lane after the student ("ana #2"); a
  // storm's simulated clients keep their lane ids (c12.1).
  laneLabel(lane) {
    const m = /^(s\d+)\.(\d+)$/.exec(lane || '');
    if (m && this.roster.has(m[1])) return `${this.roster.get(m[1])} #${m[2]}`;
    return lane;
  }

  addEvent(e) {
    countEvent(this.live, e);
    if (this.events.length >= MAX_EVENTS) {
      this.unrecorded++;
      return;
    }
    this.events.push(e);
  }

  // currentModel rebuilds the race model when events or the verdict
  // changed since it was last built. Events are kept in the order they
  // arrived; the model orders them on the trace's clock, so cursor n is
  // "the first n events in time".
  currentModel() {
    if (this.modelDirty || !this.model) {
      const t0 = performance.now();
      this.model = buildRace({
        events: this.events,
        violations: this.violations,
        policy: this.policy,
        clock: 'time',
        labelOf: this.laneLabel,
      });
      this.modelDirty = false;
      measure('idemlab-projector-build', t0);
    }
    return this.model;
  }

  // refresh shows a new verdict: the view drawn again when it follows the
  // events, else only the player's words (the paused picture stays).
  refresh() {
    if (this.player.mode === 'live') this.drawNow();
    else this.renderPlayer();
  }

  // drawNow draws the view at the player's cursor (the end, when live).
  drawNow() {
    const view = this.player;
    clearTimeout(this.redraw);
    this.redraw = 0;
    if (!this.events.length) {
      this.renderPlayer();
      return;
    }
    const start = performance.now();
    const m = this.currentModel();
    const t0 = performance.now();
    const n = m.events.length;
    if (view.mode === 'live') view.cursor = n;
    view.cursor = Math.max(0, Math.min(view.cursor, n));
    const box = $('race');
    // The view is drawn for the box's width over the scale, then enlarged
    // by it: the same picture, words large enough for the back row.
    // On a small screen the enlargement gives way, so that the view is
    // never drawn narrower than 640 units nor wider than its box.
    const boxW = box.clientWidth || document.documentElement.clientWidth - 40;
    const scale = Math.max(1, Math.min(this.scale, (boxW - 4) / 640));
    const width = Math.max(320, (boxW - 4) / scale);
    const shownEvent = view.mode !== 'live' && view.cursor > 0 ? m.events[view.cursor - 1] : null;
    const svgEl = drawRace(box, m, {
      cursor: view.cursor,
      currentSeq: shownEvent ? shownEvent.seq : undefined,
      expanded: this.expanded,
      onToggle: this.toggleRow,
      collapseOver: COLLAPSE_OVER,
      maxRows: rowsToDraw(this.scale),
      width,
      compact: false,
    });
    this.viewScale = scale;
    svgEl.style.width = Number(svgEl.getAttribute('width')) * scale + 'px';
    svgEl.style.height = Number(svgEl.getAttribute('height')) * scale + 'px';
    measure('idemlab-projector-draw', t0);
    this.drawCost = performance.now() - start;
    if (view.mode !== 'live') follow(box, svgEl, this.viewScale);
    this.renderPlayer();
  }

  toggleRow(id) {
    if (this.expanded.has(id)) this.expanded.delete(id);
    else this.expanded.add(id);
    this.drawNow();
  }

  // --- the player -----------------------------------------------------------

  // renderPlayer shows where the picture is: the slider over the recorded
  // events, the event shown in words, and the play button's state.
  renderPlayer() {
    const view = this.player;
    const model = this.model;
    const n = model ? model.events.length : this.events.length;
    const recorded = this.events.length;
    const cursor = view.mode === 'live' ? recorded : view.cursor;
    let at = '';
    if (model && cursor > 0 && model.events.length) {
      const first = timeMS(model.events[0]);
      at = ` · ${fmtMS(timeMS(model.events[Math.min(cursor, model.events.length) - 1]) - first)}`;
    }
    const ev = view.mode !== 'live' && model && cursor > 0 ? model.events[cursor - 1] : null;
    showPlayer(playerNodes(), {
      mode: view.mode,
      max: Math.max(recorded, n),
      value: cursor,
      position:
        t('position', { n: cursor, total: recorded }) +
        at +
        (view.mode === 'replay' ? ' · ' + t('replayAt', { speed: view.speed }) : view.mode === 'paused' ? ' · ' + t('pausedWord') : '') +
        (this.unrecorded ? ' ' + t('unrecorded', { n: this.unrecorded }) : ''),
      now: ev ? describe(ev, this.laneLabel) : '',
      sql: ev && ev.sql ? ev.sql : '',
    });
    this.renderMoment(model, view.mode === 'live' ? n : cursor);
  }

  // renderMoment shows, while the picture is at a moment before the end,
  // the counts up to that moment in place of the ledger's final ones: a
  // paused storm never says at once "no payment yet" in its picture and
  // "39 extra transfers" in its tiles. At the end the final ones are back.
  renderMoment(model, cursor) {
    const past = !!model && cursor < model.events.length;
    // A replay calls it every frame: the same moment is not counted again.
    if (past && this.moment && this.moment.model === model && this.moment.cursor === cursor) return;
    this.moment = past ? { model, cursor } : null;
    $('tally').hidden = past;
    $('tally-now').hidden = !past;
    if (!past) {
      $('tally-now').replaceChildren();
      return;
    }
    const live = freshLive();
    for (const e of model.events.slice(0, cursor)) countEvent(live, e);
    const { tiles } = liveTally(live, 0);
    $('tally-now').replaceChildren(el('p', { class: 'tally-now-word muted', text: t('tallyNow', { n: cursor }) }), ...tiles);
  }

  pause() {
    const view = this.player;
    if (!this.events.length) return;
    this.stopReplay();
    if (view.mode === 'live') view.cursor = this.model ? this.model.events.length : 0;
    view.mode = 'paused';
    this.drawNow();
  }

  // play resumes: from the end, the view follows the events again; from
  // anywhere else, it replays from the cursor at the chosen speed.
  play() {
    const view = this.player;
    if (!this.events.length) return;
    const m = this.currentModel();
    if (view.mode === 'paused' && view.cursor < m.events.length) {
      this.startReplay(view.cursor);
      return;
    }
    this.stopReplay();
    view.mode = 'live';
    this.drawNow();
  }

  step(d) {
    const view = this.player;
    if (!this.events.length) return;
    const m = this.currentModel();
    if (view.mode === 'live') view.cursor = m.events.length;
    this.stopReplay();
    view.mode = 'paused';
    view.cursor = Math.max(0, Math.min(m.events.length, view.cursor + d));
    this.drawNow();
  }

  // seek moves the picture to cursor c; a slider dragged fires faster than
  // frames are painted, so the drawing waits for the next frame and draws
  // only the latest position.
  seek(c) {
    const view = this.player;
    if (!this.events.length) return;
    this.stopReplay();
    view.mode = 'paused';
    view.cursor = c;
    this.renderPlayer();
    if (!this.seekFrame) {
      this.seekFrame = requestAnimationFrame(() => {
        this.seekFrame = 0;
        this.drawNow();
      });
    }
  }

  // seekTime moves the picture to the first event ms or more after the
  // storm's first (a column of the storm's picture names its moment); it
  // reports whether there was a picture to move.
  seekTime(ms) {
    const m = this.currentModel();
    if (!m.events.length) return false;
    const first = timeMS(m.events[0]);
    let c = 0;
    while (c < m.events.length && timeMS(m.events[c]) - first < ms) c++;
    this.seek(c);
    return true;
  }

  // startReplay replays the recorded events from cursor on the trace's own
  // clock, slowed to the player's speed: a storm of 0.4 s at 0.02× takes
  // 20 s.
  startReplay(from) {
    const view = this.player;
    const m = this.currentModel();
    if (!m.events.length) return;
    this.stopReplay();
    view.mode = 'replay';
    view.cursor = Math.min(from, m.events.length - 1);
    view.anchorT = view.cursor > 0 ? timeMS(m.events[view.cursor - 1]) : timeMS(m.events[0]);
    view.anchorWall = performance.now();
    this.drawNow();
    view.raf = requestAnimationFrame(this.tick);
  }

  tick(now) {
    const view = this.player;
    view.raf = 0;
    if (view.mode !== 'replay') return;
    const m = this.currentModel();
    const target = view.anchorT + (now - view.anchorWall) * view.speed;
    let c = view.cursor;
    while (c < m.events.length && timeMS(m.events[c]) <= target) c++;
    if (c !== view.cursor) {
      view.cursor = c;
      this.drawNow();
    }
    if (c >= m.events.length) {
      view.mode = 'live';
      this.drawNow();
      return;
    }
    view.raf = requestAnimationFrame(this.tick);
  }

  stopReplay() {
    const view = this.player;
    if (view.raf) cancelAnimationFrame(view.raf);
    view.raf = 0;
  }

  setSpeed(s) {
    const view = this.player;
    if (view.mode === 'replay' && this.model) {
      // Keep the picture where it is; only the pace changes.
      const now = performance.now();
      view.anchorT += (now - view.anchorWall) * view.speed;
      view.anchorWall = now;
    }
    view.speed = s;
    this.renderPlayer();
  }

  // listen wires the player's controls, its keys and the window's resize.
  listen() {
    const view = this.player;
    $('play').addEventListener('click', () => (view.mode === 'paused' ? this.play() : this.pause()));
    $('step-back').addEventListener('click', () => this.step(-1));
    $('step-fwd').addEventListener('click', () => this.step(1));
    $('replay').addEventListener('click', () => this.startReplay(0));
    $('speed').addEventListener('change', () => this.setSpeed(Number($('speed').value) || 1));
    $('scrub').addEventListener('input', () => this.seek(Number($('scrub').value)));
    $('save-svg').addEventListener('click', () => this.save('svg'));
    $('save-png').addEventListener('click', () => this.save('png'));

    // Keys for the player, unless the instructor is typing into the form.
    document.addEventListener('keydown', (e) => {
      if ($('room').hidden || $('stage').hidden || e.altKey || e.ctrlKey || e.metaKey) return;
      const tgt = e.target;
      if (tgt.closest && tgt.closest('input, select, textarea, summary, form')) return;
      if (e.key === ' ' && tgt.closest && tgt.closest('button, [role=button]')) return; // Space presses the focused button
      switch (e.key) {
        case ' ':
          if (view.mode === 'paused') this.play();
          else this.pause();
          break;
        case 'ArrowLeft':
          this.step(-1);
          break;
        case 'ArrowRight':
          this.step(1);
          break;
        case 'Home':
          this.seek(0);
          break;
        case 'End':
          this.play();
          if (view.mode === 'replay') {
            this.stopReplay();
            view.mode = 'live';
            this.drawNow();
          }
          break;
        default:
          return;
      }
      e.preventDefault();
    });

    window.addEventListener('resize', () => {
      clearTimeout(this.resizing);
      this.resizing = setTimeout(() => this.events.length && this.drawNow(), 200);
    });
  }

  // save writes the view as it is shown (at the cursor) as an SVG or PNG
  // file for a slide, at its drawn size.
  save(format) {
    const shown = $('race').querySelector('svg');
    if (!shown) return;
    const copy = shown.cloneNode(true);
    copy.removeAttribute('style');
    const at = this.player.mode === 'live' ? this.events.length : this.player.cursor;
    exportRace(copy, `idemlab-${this.code}-ledger${this.run}-event${at}`, format);
  }

  // --- the live tally --------------------------------------------------------

  renderLive() {
    if (!this.live) return;
    const { count, tiles } = liveTally(this.live, this.unrecorded);
    $('lane-count').textContent = count;
    $('tally').replaceChildren(...tiles);
  }
}

// --- views: data in, DOM filled or returned ----------------------------------

// rowsToDraw is how many rows of the view a window and a half holds, at
// race.js's 36-pixel rows enlarged by scale.
function rowsToDraw(scale) {
  return Math.max(MIN_ROWS, Math.min(MAX_ROWS, Math.ceil((1.5 * innerHeight) / (36 * scale))));
}

// follow scrolls a view wider than the screen so that the moment shown
// (the "now" line of a replay or a scrub) stays in the middle third.
function follow(box, svgEl, scale) {
  const now = svgEl.querySelector('[data-now]');
  if (!now || box.scrollWidth <= box.clientWidth) return;
  const x = Number(now.getAttribute('x1')) * scale;
  const left = box.scrollLeft;
  if (x < left + box.clientWidth / 3 || x > left + (2 * box.clientWidth) / 3) box.scrollLeft = Math.max(0, x - box.clientWidth / 2);
}

// playerNodes are the player's parts on the page.
function playerNodes() {
  return { player: $('player'), scrub: $('scrub'), play: $('play'), position: $('position'), now: $('now-event') };
}

// showPlayer fills the player's nodes: the slider (max, value), the play
// button for the mode, where the picture is and the event shown, in words.
function showPlayer(nodes, p) {
  nodes.scrub.max = String(p.max);
  nodes.scrub.value = String(p.value);
  const playing = p.mode !== 'paused';
  nodes.play.textContent = playing ? t('pauseBtn') : t('playBtn');
  nodes.play.setAttribute('aria-pressed', playing ? 'false' : 'true');
  nodes.player.dataset.mode = p.mode;
  nodes.position.textContent = p.position;
  nodes.now.textContent = p.now;
  // The step's SQL (up to seven statements for a commit) is the line's
  // tooltip: on the line itself it buried the event under the statements.
  if (p.sql) nodes.now.title = p.sql;
  else nodes.now.removeAttribute('title');
}

// describe says what one event did, for the room to read aloud.
function describe(e, laneLabel) {
  return `${laneLabel(e.lane)} · ${e.phase} → ${e.outcome}` + (e.status ? ` (${e.status})` : '') + (e.note ? ` · ${e.note}` : '');
}

// liveTally is the running count of a storm as it streams in: the line
// of requests seen and the tiles of its answers so far.
function liveTally(live, unrecorded) {
  let dup = 0;
  for (const n of live.commits.values()) if (n > 1) dup += n - 1;
  const st = (c) => live.statuses.get(c) || 0;
  return {
    count: t('requestsN', { n: live.requests.size }) + (unrecorded ? ' ' + t('unrecordedCounted', { n: unrecorded }) : ''),
    tiles: [
      tile(tileWord('tile_liveDup', dup), dup, dup > 0 ? 'fail' : 'ok'),
      tile('201', st(201)),
      tile('409', st(409)),
      tile('422', st(422)),
      tile(tileWord('tile_lost', live.lost), live.lost),
      tile(t('tile_crashed'), live.crashed),
    ],
  };
}
