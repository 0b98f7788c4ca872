// race.js draws the race view: a space-time diagram of client attempts.
// (Over 500 lines on purpose: the layout and every row's drawing share one
// geometry, its constants and its cursor; the model is in race-model.js.)
// Time runs left to right; each attempt is a row, rows are grouped by the
// key they carry (or the wish they serve, when there is no key), and each
// group has a row for its key in the database: absent, then held by the
// attempt that claimed it, then completed with its stored answer. A ledger
// row at the top shows every commit that moved money, with the balances
// after it. What the engine's trace says happened between attempts is
// drawn as a relation: a duplicate's claim points at the claim it hit, a
// 409 at the in_progress row that caused it, a replay at the answer it
// returned, a second payment is a red block with words, and each rule the
// checker found broken joins the attempts it names. Never colour alone:
// every mark carries an icon and a word.
//
// One module for every screen (the lesson bench, the projector, the
// phones), from traces alone:
//
//   import { buildRace, drawRace, seekRace, raceSVGText, raceCSS, exportRace } from './race.js';
//
//   const model = buildRace({
//     events,      // engine trace events: seq, lane, intent, customer, key,
//                  // phase, sql, outcome, status, at_ms or t_us, and the
//                  // typed fields amount, transfer_id, rows and key_state;
//                  // the lab's also key_row (what its tables held for the
//                  // key after the step: null, or {value, column, stored,
//                  // rows, sig}) and tick (the runner's step count, on the
//                  // events that are steps); note is shown as words, never read
//     lanes,       // optional: the bench's lanes (id, intent, customer, key,
//                  // body, state, next_phase, next_part, verdict, verdict_text,
//                  // response, delivered), so waiting lanes have rows too
//     violations,  // optional: the checker's violations [{rule, message, lanes}]
//     policy,      // optional: the policy, to name the key row's states
//     transfers,   // optional: the ledger [{transfer_id, from, to, amount}]
//     accounts,    // optional: the balances now [{id, balance}]
//     clock,       // 'step' (the engine's step: one column per event) or
//                  // 'time' (the trace's clock, idle gaps compressed)
//     labelOf,     // optional: lane id → the label shown (a nickname)
//     keyRows,     // optional: 'read' draws each key's row from the events'
//                  // key_row (the lab), not from the phases and the policy
//     answers,     // optional: 'as-sent' says a status as a number and keeps
//                  // the lane's response as it was sent (the lab's handler)
//     keepProcessor, // optional: the processor's row stays once it charged
//   });
//   drawRace(container, model, {
//     cursor,          // draw only the first `cursor` events (scrubbing)
//     currentSeq,      // the step shown: its mark and the rows it touched light up
//     selectedLane,    // the lane that moves next (bench)
//     onSelectLane,    // makes rows choosable (role=radio), called with a lane id
//     onMark,          // makes marks buttons, called with the trace event
//     expanded,        // Set of collapsed-row ids shown in full
//     onToggle,        // called with a collapsed-row id when its count is pressed
//     collapseOver,    // collapse identical attempts when a group has more rows
//     laneOrder,       // keep the attempts in the lanes' order (the lab's
//                      // cards), not the winner pinned on top
//     maxRows, width, compact, t,
//   });
//
//   seekRace(svgEl, cursor, currentSeq)
//     Shows a drawn view as it was after the first cursor events, without
//     drawing anything again (drawRace with the same model and options but
//     another cursor does the same).
//   raceSVGText(svgEl, await raceCSS())  → a standalone SVG document
//   exportRace(svgEl, name, 'svg' | 'png') → saves it
//
// Every mark carries data attributes, so tests and stylesheets find them
// without the words: rows data-lane / data-row (attempt | db | ledger |
// collapsed) / data-winner; marks data-mark (claim, duplicate, conflict,
// claim-ignored, mismatch, replay, paid, paid-again, declined, crashed,
// answer, lost, …),
// data-seq, data-lane; arrows data-arrow (duplicate | conflict | mismatch
// | replay) with data-from-lane and data-to-lane or data-to; violations
// data-violation (the rule's name) with data-lanes.

import { won, listen } from './dom.js';
import { vsvg as svg, mount } from './vdom.js';
import { t as defaultT, ruleTitle, inLang, extraPayments } from './strings.js';
import { KEY_PHASES } from './race-model.js';

export { buildRace, timeOf } from './race-model.js';

// --- layout --------------------------------------------------------------------

// rowID names a row across drawings of the same run.
function rowID(r) {
  if (r.type === 'db') return 'db:' + r.group.id;
  if (r.type === 'attempt') return 'a:' + r.attempt.id;
  if (r.type === 'collapsed') return 'c:' + r.id;
  return r.type;
}

// layoutRows orders each group (the winner pinned on top, or the lanes'
// own order with opts.laneOrder) and collapses identical attempts when a
// group is large.
function layoutRows(model, opts) {
  const rows = [];
  const collapseOver = opts.collapseOver ?? 12;
  const expanded = opts.expanded || new Set();
  const maxRows = opts.maxRows ?? 120;
  let hidden = 0;
  const laneRow = new Map();
  rows.push({ type: 'ledger' });
  if (model.showProcessor) rows.push({ type: 'processor' });
  for (const g of model.groups) {
    // A group's key row counts against maxRows like its attempts: three
    // hundred phones each with its own key would otherwise draw three
    // hundred key rows past the cap. A group that has no room for its key
    // row and one attempt is counted, not drawn.
    if (rows.length + 2 > maxRows) {
      hidden += g.attempts.length;
      continue;
    }
    rows.push({ type: 'db', group: g });
    const list = g.attempts.slice().sort((p, q) => {
      if (opts.laneOrder) return p.order - q.order;
      if (p.id === g.winner) return -1;
      if (q.id === g.winner) return 1;
      const pi = p.marks.length ? p.marks[0].i : Infinity;
      const qi = q.marks.length ? q.marks[0].i : Infinity;
      return pi - qi || p.order - q.order;
    });
    const sigs = new Map();
    if (list.length > collapseOver) {
      for (const a of list) {
        if (a.id === g.winner) continue;
        const s = sigs.get(a.signature) || [];
        s.push(a);
        sigs.set(a.signature, s);
      }
    }
    const done = new Set();
    for (const a of list) {
      if (done.has(a.id)) continue;
      const same = sigs.get(a.signature);
      const cid = g.id + '|' + a.signature;
      if (same && same.length > 1 && !expanded.has(cid)) {
        for (const b of same) done.add(b.id);
        if (rows.length >= maxRows) {
          hidden += same.length;
          continue;
        }
        const row = { type: 'collapsed', group: g, attempt: a, members: same, id: cid };
        for (const b of same) laneRow.set(b.id, row);
        rows.push(row);
        continue;
      }
      done.add(a.id);
      if (rows.length >= maxRows) {
        hidden++;
        continue;
      }
      const row = { type: 'attempt', group: g, attempt: a, winner: a.id === g.winner, expandedFrom: same && same.length > 1 ? cid : null };
      laneRow.set(a.id, row);
      rows.push(row);
    }
  }
  return { rows, laneRow, hidden };
}

// --- drawing ---------------------------------------------------------------------

// The view fits the width it is given: nothing runs past it and nothing is
// cut. Words are measured in the view's own font and wrap onto lines of
// their own (a row grows to hold them); a row label wraps in the label
// column; an answer goes after its attempt's last mark when it fits there,
// else on the lines under the marks. The checker's brackets have a column
// of their own at the right, which no word enters.
const AXIS_H = 40;
const FONT = 'system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans KR", "Apple SD Gothic Neo", sans-serif';

// Sizes of the view's words, in px, as race.css sets them.
function sizes(compact) {
  return {
    label: compact ? 13 : 15,
    sub: compact ? 11 : 12,
    answer: compact ? 12 : 14,
    seg: compact ? 11 : 12,
    rule: compact ? 12 : 14,
    legend: compact ? 11 : 12,
    band: compact ? 26 : 30,
  };
}

let measureCtx;
let measureFont = '';
const widths = new Map();
const charWidths = new Map();
// textW is the width of s in the view's font at size px and weight: the sum
// of its words' widths and the spaces between them. A word's width is the
// sum of its characters' (charW), each measured once per font: a canvas
// measureText costs 0.1–1 ms for a string Chromium has not seen, and the
// first steps of a bench show dozens of new words ("+3 ms", "paid
// 500,000"), which cost 8 ms a step in a profile of lesson 7. A sum of
// advances leaves out kerning, which only ever brings letters closer here;
// the 4 % and 1 px added to each word keep the estimate on the wide side.
function textW(s, size, weight = 400) {
  if (s.indexOf(' ') < 0) return wordW(s, size, weight);
  let w = 0;
  for (const word of s.split(' ')) w += wordW(word, size, weight);
  return w + (s.split(' ').length - 1) * charW(' ', size, weight) * 1.04;
}

function wordW(s, size, weight) {
  const k = size + '|' + weight + '|' + s;
  let w = widths.get(k);
  if (w === undefined) {
    w = 0;
    for (const ch of s) w += charW(ch, size, weight);
    w = w * 1.04 + 1;
    if (widths.size > 20000) widths.clear();
    widths.set(k, w);
  }
  return w;
}

// charW is one character's advance. The Hangul syllables of a font share
// one width, so one of them stands for all 11,172.
function charW(ch, size, weight) {
  const c = ch >= '\uac00' && ch <= '\ud7a3' ? '가' : ch;
  const k = size + '|' + weight + '|' + c;
  let w = charWidths.get(k);
  if (w === undefined) {
    if (measureCtx === undefined)
      measureCtx = (typeof document !== 'undefined' && document.createElement('canvas').getContext('2d')) || null;
    if (measureCtx) {
      const font = weight + ' ' + size + 'px ' + FONT;
      if (font !== measureFont) measureCtx.font = measureFont = font;
      w = measureCtx.measureText(c).width;
    } else {
      w = size * 0.62;
    }
    charWidths.set(k, w);
  }
  return w;
}

// ASCII's printable characters are measured with the signs (warmRaceFonts), so that a step
// seldom measures anything.
const ASCII = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('');

// warmRaceFonts finds, while the learner reads, the fonts the view's signs
// come from. A sign that the first font lacks (⇢, ⛁, ★, Hangul…) sends the
// browser looking through the system's fonts the first time it is drawn or
// measured at a size and weight: measured in headless Chromium, 0.1–0.8 s
// on the first step that showed a new sign. One size and weight per idle
// moment, so that a click never waits behind it.
const GLYPHS = '✔⊘⚠ℹ✘◌★⛁⇄▤▣▭⇢✓#=✉◆↻≡‖?≠↺∅→■✂⚡◇▶▸▾◐≈✗✸…—–·×가한';
export function warmRaceFonts() {
  if (typeof document === 'undefined' || typeof requestIdleCallback !== 'function') return;
  const todo = [];
  for (const size of [11, 12, 13, 14, 15]) for (const weight of [400, 600, 700]) todo.push([size, weight]);
  const next = () => {
    const job = todo.shift();
    if (!job) return;
    textW(GLYPHS + ASCII, job[0], job[1]);
    requestIdleCallback(next, { timeout: 2000 });
  };
  requestIdleCallback(next, { timeout: 2000 });
}

// wrap breaks s into lines no wider than maxW: at spaces, and inside a word
// only when the word alone is wider than a line.
export function wrap(s, maxW, size, weight) {
  if (!s) return [];
  if (textW(s, size, weight) <= maxW) return [s];
  const lines = [];
  let cur = '';
  for (const word of s.split(' ')) {
    const cand = cur ? cur + ' ' + word : word;
    if (textW(cand, size, weight) <= maxW) {
      cur = cand;
      continue;
    }
    if (cur) lines.push(cur);
    cur = '';
    if (textW(word, size, weight) <= maxW) {
      cur = word;
      continue;
    }
    // A word wider than the line (a JSON body, a long key) is cut where
    // it fits, after a comma, colon, slash or dash in its second half
    // where there is one: "amount":200000, never "a / mount".
    let rest = word;
    while (rest) {
      let piece = '';
      for (const ch of rest) {
        if (piece && textW(piece + ch, size, weight) > maxW) break;
        piece += ch;
      }
      if (piece.length === rest.length) {
        cur = piece;
        break;
      }
      const k = Math.max(piece.lastIndexOf(','), piece.lastIndexOf(':'), piece.lastIndexOf('/'), piece.lastIndexOf('-'));
      if (k >= piece.length / 2) piece = piece.slice(0, k + 1);
      lines.push(piece);
      rest = rest.slice(piece.length);
    }
  }
  if (cur) lines.push(cur);
  return lines;
}

// lines draws wrapped lines as one <text>, a <tspan> a line.
// Each line but the last ends in a space, so that the text read as one
// (a screen reader, a copy) keeps its words apart where it was wrapped.
function lines(list, x, y, lh, attrs) {
  return svg(
    'text',
    Object.assign({ x, y }, attrs),
    ...list.map((l, k) => svg('tspan', { x, dy: k ? lh : 0, text: k < list.length - 1 ? l + ' ' : l })),
  );
}

const widest = (list, size, weight) => list.reduce((w, s) => Math.max(w, textW(s, size, weight)), 0);

let clipIds = 0;

// outcomeOf is how the attempt itself ended, the one meaning of its row's
// mark: a broken rule is shown by its bracket, never on the rows it names.
function outcomeOf(a) {
  if (a.paidAgain) return 'fail';
  if (!a.answer) return a.state === 'crashed' ? 'info' : 'pending';
  if (a.answer.kind === 'lost' || a.answer.kind === 'timed-out' || a.answer.kind === 'crashed') return 'info';
  const s = Number(a.answer.status) || 0;
  if (s >= 500) return 'error';
  // A 409 refuses nothing: the key is still in progress, and the client
  // is told to come back (the ‖ of the row's conflict mark and answer).
  if (s === 409) return 'wait';
  if (s >= 400) return 'refused';
  return 'ok';
}
const OUTCOME_ICON = { ok: '✔', wait: '‖', refused: '⊘', error: '⚠', info: 'ℹ', fail: '✘', pending: '◌' };

// decidedAt is the index of the event after which a row's sign holds:
// the last of its attempts to end (its answer, its crash), or to pay
// again; -1 when one never ends (its sign is ◌ throughout). Before it, a
// view seeked to an earlier moment shows ◌ (seekRace): the row has not
// ended there.
function decidedAt(attempts) {
  let at = -1;
  for (const a of attempts) {
    const again = a.marks.find((m) => m.kind === 'paid-again');
    if (!again && !a.answer && a.state !== 'crashed') return -1;
    const last = again || a.marks[a.marks.length - 1];
    if (last) at = Math.max(at, last.i);
  }
  return at;
}

// drawRace draws the model into container (see the top of this file) and
// returns the <svg> element. The whole history is drawn once; the cursor
// only shows or hides what happened after it (seekRace), so scrubbing a
// recorded storm redraws nothing. Called again with the same model and
// the same options but another cursor or step shown, it only seeks.
export function drawRace(container, model, opts = {}) {
  const t = opts.t || defaultT;
  // The width given is the box's: reading the box again would lay the page
  // out in the middle of the drawing.
  const width = Math.max(240, Math.floor(opts.width || container.clientWidth || 900));
  const compact = opts.compact ?? width < 600;
  const key = [compact, width, opts.collapseOver, opts.maxRows, opts.selectedLane, [...(opts.expanded || [])].join('\u0001')].join('|');
  const old = container.firstElementChild;
  if (old && old.__race && old.__race.model === model && old.__race.key === key) {
    old.__race.opts = opts;
    seekRace(old, opts.cursor ?? model.events.length, opts.currentSeq);
    return old;
  }
  // The element focused in the old view, to focus its like in the new one.
  const focused = old && old.__race && old.contains(document.activeElement) ? document.activeElement.getAttribute('data-focus') : null;
  const fs = sizes(compact);
  const { rows, laneRow, hidden } = layoutRows(model, opts);
  const violations = model.violations.filter((v) => v.lanes.length).slice(0, 6);

  // Columns: the labels', the plot's, and one per broken rule's bracket.
  // The label column holds each attempt's label on a line, and each word
  // of the key rows' names (a key wraps between its words, not inside one,
  // where the width allows).
  const heads = rows.filter((r) => r.type === 'attempt' || r.type === 'collapsed').map((r) => headOf(r, model, opts));
  const keyWords = rows.filter((r) => r.type === 'db').flatMap((r) => (r.group.key || r.group.intent || '').split(' '));
  const bw = compact ? 18 : 22;
  const textRight = width - (violations.length ? violations.length * bw + 8 : 6);
  // On a phone each row's name stands on a line of its own above the row,
  // and the plot takes the whole width: beside it, the names' column took
  // a third of the width and the marks of a ten-step race ran together.
  const stacked = opts.stacked ?? (compact && width < 480);
  // The rows' own names (ledger, processor) never break inside a word: on a
  // phone "processor" was cut after its eighth letter.
  const nameWords = (t('raceLedger') + (model.showProcessor ? ' ' + t('raceProcessor') : '')).split(' ');
  const labelW = stacked
    ? Math.floor(textRight - 4)
    : Math.ceil(
        Math.max(
          Math.min(width * 0.3, widest(nameWords, fs.label, 600) + 24),
          Math.min(
            width * (compact ? 0.24 : 0.26),
            Math.max(
              compact ? 48 : 84,
              widest(heads, fs.label, 600) + 14,
              widest(keyWords, fs.label, 600) + 14,
              textW('⛁ ' + t('raceLedger'), fs.label, 600) + 14,
              model.showProcessor ? textW('⇄ ' + t('raceProcessor'), fs.label, 600) + 14 : 0,
            ),
          ),
        ),
      );
  const plotLeft = stacked ? 6 : labelW + 8;
  const timeClock = model.clock === 'time';
  // Waiting and running lanes on the bench show their next phase one
  // column to the right of everything that has happened.
  const ghosts = [...model.attempts.values()].some((a) => a.state === 'waiting' || a.state === 'running');
  const cols = model.span + (ghosts ? 1 : 0);
  const avail = Math.max(40, textRight - plotLeft - 14);
  // On the step clock, once the columns no longer fit at their widest,
  // the plot is laid out for a count of columns rounded up to four: the
  // scale then changes on one step in four, not on every step (each change
  // moves every mark of the view).
  const maxUnit = compact ? 40 : 52;
  const unit = timeClock ? Math.min(60, avail / cols) : cols * maxUnit <= avail ? maxUnit : avail / (Math.ceil(cols / 4) * 4);
  const X = (x) => plotLeft + 8 + x * unit;
  const c = { X, t, fs, width, labelW, plotLeft, textRight, unit, compact, stacked, opts, cols, model, rowOf: (id) => laneRow.get(id) };

  // Plan every row (its height follows from the words it must hold), then
  // place them.
  for (const r of rows) {
    if (r.type === 'ledger') planLedger(r, c);
    else if (r.type === 'processor') planProcessor(r, c);
    else if (r.type === 'db') planDB(r, c);
    else planAttempt(r, c);
  }
  let y = AXIS_H;
  for (const r of rows) {
    r.y = y;
    r.mid = y + (r.head || 0) + (r.band || r.h) / 2;
    y += r.h + (r.type === 'db' ? 2 : 0);
  }
  const rowsEnd = y;
  const moreLines = hidden ? wrap(t('raceMore', { n: hidden }), width - 12, fs.sub, 400) : [];
  y += moreLines.length * (fs.sub + 4) + (hidden ? 6 : 0);
  // A broken rule's words start with its rule's number, as its bracket's
  // label does (1a, 1b: one rule broken twice).
  const vioLines = violations.map((v) =>
    wrap(
      '✘ ' + t('raceRuleBroken', { n: v.label }) + ' — ' + ruleTitle(v.rule) + ': ' + inLang(v.message, v.message_ko),
      width - 12,
      fs.rule,
      600,
    ),
  );
  const vioTop = y + (violations.length ? 8 : 0);
  y = vioTop + vioLines.reduce((n, l) => n + l.length * (fs.rule + 5) + 4, 0);
  const legend = planLegend(model, rows, violations, c, opts.cursor !== undefined);
  const legendTop = y + 10;
  const height = Math.ceil(legendTop + legend.h + 6);

  const selectable = !!opts.onSelectLane;
  let root = svg('svg', {
    xmlns: 'http://www.w3.org/2000/svg',
    class: 'race' + (compact ? ' compact' : ''),
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: 'group',
    'aria-label': t('raceTitle'),
    'data-clock': model.clock,
    'data-attempts': model.attempts.size,
    'data-columns': cols,
    'data-plot-x': plotLeft,
    'data-stacked': stacked ? 'true' : null,
  });
  root.append(svg('title', { text: t('raceTitle') }));
  // A view drawn again over its old self keeps its ids, so that the
  // elements that name them stay as they are (patch below).
  const num = old && old.__race ? old.__race.num : ++clipIds;
  const clipId = 'race-now-' + num;
  const clipRect = svg('rect', { x: 0, y: 0, width, height });
  root.append(
    svg(
      'defs',
      {},
      svg('clipPath', { id: clipId }, clipRect),
      ...['duplicate', 'conflict', 'mismatch', 'replay'].map((k) =>
        svg(
          'marker',
          {
            id: 'race-head-' + k + '-' + num,
            viewBox: '0 0 10 10',
            refX: 8,
            refY: 5,
            markerWidth: 7,
            markerHeight: 7,
            orient: 'auto-start-reverse',
          },
          svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'head head-' + k }),
        ),
      ),
    ),
  );
  c.clip = 'url(#' + clipId + ')';
  c.heads = num;

  root.append(drawAxis(model, { X, t, height: rowsEnd, textRight, stacked }));
  // The lanes that can move next are a radio group (the bench): each row's
  // label is a radio; its marks are buttons beside it, never inside it.
  const rowsLayer = svg('g', selectable ? { class: 'rows', role: 'radiogroup', 'aria-label': t('chooseLane') } : { class: 'rows' });
  // Each row names itself (data-k) and is drawn at its own origin, moved
  // down by a transform: a row that moves between two drawings (one above
  // it grew, or it moved up when its attempt acted) is moved as it is
  // (dom.js patch), one attribute, not every position in it rewritten.
  // A stacked row's name is above its content: the content is drawn from
  // r.head down, the name and the band from 0.
  for (const r of rows) {
    const y = r.y;
    r.y = r.head || 0;
    r.mid -= y;
    const g = r.draw(r);
    r.y = y;
    r.mid += y;
    g.setAttribute('data-k', rowID(r));
    g.setAttribute('transform', 'translate(0,' + y + ')');
    rowsLayer.append(g);
  }
  const arrows = drawArrows(model, rows, laneRow, c);
  const knock = knockOut(rowsLayer, arrows, width, height, num, fs, stacked);
  if (knock) root.append(knock);
  root.append(rowsLayer, arrows);
  // One stop in the tab order for the lanes (the chosen one, else the first
  // that can move) and one for the marks; the arrow keys move within each.
  const radios = [...rowsLayer.querySelectorAll('[role=radio]:not([aria-disabled])')];
  const stop = radios.find((e) => e.getAttribute('aria-checked') === 'true') || radios[0];
  if (stop) stop.setAttribute('tabindex', '0');
  const firstMark = rowsLayer.querySelector('.mark[role=button]');
  if (firstMark) firstMark.setAttribute('tabindex', '0');

  // Broken rules: a bracket in its own column at the right joins the rows
  // of the attempts each names, its number above it; the sentences follow
  // the rows.
  const vio = svg('g', { class: 'violations', 'data-verdict-layer': 'true' });
  violations.forEach((v, k) => {
    const ys = v.lanes
      .map((l) => laneRow.get(l))
      .filter(Boolean)
      .map((r) => r.mid);
    if (!ys.length) return;
    const bx = width - 10 - k * bw;
    const y0 = Math.min(...ys);
    const y1 = Math.max(...ys);
    vio.append(
      svg(
        'g',
        { class: 'violation', 'data-violation': v.rule.name || '', 'data-lanes': v.lanes.join(',') },
        svg('path', { d: `M${bx - 6},${y0} H${bx} V${y1} H${bx - 6}`, class: 'bracket' }),
        ...ys.map((yy) => svg('circle', { cx: bx - 6, cy: yy, r: 3, class: 'bracket-dot' })),
        svg('text', {
          x: bx - 3,
          y: y0 - 8,
          'text-anchor': 'middle',
          class: 'bracket-n',
          'data-rule-n': v.rule.n || null,
          text: '✘' + v.label,
        }),
        svg('title', {
          text: '✘ ' + t('raceRuleBroken', { n: v.label }) + ' — ' + ruleTitle(v.rule) + ': ' + inLang(v.message, v.message_ko),
        }),
      ),
    );
  });
  let ly = vioTop + fs.rule;
  violations.forEach((v, k) => {
    vio.append(lines(vioLines[k], 6, ly, fs.rule + 5, { class: 'violation-text', 'data-violation': v.rule.name || '' }));
    ly += vioLines[k].length * (fs.rule + 5) + 4;
  });
  root.append(vio);
  if (hidden) root.append(lines(moreLines, 6, rowsEnd + fs.sub + 2, fs.sub + 4, { class: 'more', 'data-hidden': hidden }));
  root.append(legend.draw(legendTop));
  const now = svg('line', { y1: AXIS_H - 6, y2: rowsEnd, class: 'now', 'data-now': '' });
  root.append(now);

  // Everything is drawn and shown: the cursor is at the end. Seeking
  // elsewhere (a recorded storm) first lists the elements that belong to
  // a moment, in order; the bench never needs that list.
  now.setAttribute('visibility', 'hidden');
  root.setAttribute('data-cursor', model.events.length);
  // The drawing is laid over the old view where there is one: only what
  // changed is written (a step adds a mark or two), and the browser lays
  // out and paints that, not hundreds of elements anew.
  const v = root;
  root = mount(container, v, old && old.__race ? old.__race.v : null);
  root.__race = {
    model,
    key,
    num,
    v,
    // The options it was last shown with: a test draws the same model
    // afresh beside it and compares.
    opts,
    X,
    unit,
    clipRect: clipRect.el,
    now: now.el,
    vio: vio.el,
    labelW: plotLeft,
    timed: null,
    idx: null,
    cursor: model.events.length,
    current: undefined,
  };
  seekRace(root, opts.cursor ?? model.events.length, opts.currentSeq);
  if (focused) {
    const again =
      root.querySelector('[data-focus="' + focused + '"]') ||
      root.querySelector('[role=radio][tabindex="0"]') ||
      root.querySelector('.mark[tabindex="0"]');
    if (again) again.focus();
  }
  return root;
}

// seekRace shows the view as it was after the first cursor events: what
// happened later is hidden, the key rows and the ledger end at the "now"
// line, and the checker's verdict shows only at the end. currentSeq lights
// up that step's mark and the rows its SQL touched.
export function seekRace(root, cursor, currentSeq) {
  const s = root.__race;
  if (!s) return;
  const n = s.model.events.length;
  cursor = Math.max(0, Math.min(n, cursor));
  if (cursor !== s.cursor) {
    if (!s.timed) {
      const timed = [...root.querySelectorAll('[data-i]')];
      const idx = timed.map((e) => Number(e.getAttribute('data-i')));
      const order = timed.map((_, k) => k).sort((p, q) => idx[p] - idx[q]);
      s.timed = order.map((k) => timed[k]);
      s.idx = order.map((k) => idx[k]);
    }
    // Only the elements between the old and the new cursor change.
    const lo = Math.min(cursor, s.cursor);
    const hi = Math.max(cursor, s.cursor);
    for (let k = lowerBound(s.idx, lo); k < s.idx.length && s.idx[k] < hi; k++) {
      s.timed[k].setAttribute('visibility', s.idx[k] < cursor ? 'visible' : 'hidden');
    }
    const end = cursor >= n;
    const nowX = cursor > 0 ? s.X(s.model.xs[cursor - 1]) + Math.max(6, s.unit * 0.5) : s.labelW + 6;
    s.clipRect.setAttribute('width', end ? root.getAttribute('width') : nowX);
    s.now.setAttribute('x1', nowX);
    s.now.setAttribute('x2', nowX);
    s.now.setAttribute('visibility', end ? 'hidden' : 'visible');
    s.vio.setAttribute('visibility', end ? 'visible' : 'hidden');
    // A row's sign says how its attempts ended: before that, ◌.
    if (!s.decided) s.decided = [...root.querySelectorAll('[data-decided]')];
    for (const g of s.decided) {
      const at = Number(g.getAttribute('data-decided'));
      const ended = at >= 0 && cursor > at;
      g.classList.toggle('not-yet', !ended);
      const icon = g.querySelector('.v-icon');
      if (icon) icon.textContent = ended ? icon.getAttribute('data-final') : OUTCOME_ICON.pending;
    }
    root.setAttribute('data-cursor', cursor);
    s.cursor = cursor;
  }
  if (currentSeq !== s.current) {
    for (const e of root.querySelectorAll('[data-current], .touched')) {
      e.removeAttribute('data-current');
      e.removeAttribute('data-touched');
      e.classList.remove('current', 'touched');
    }
    if (currentSeq !== undefined) {
      // The step shown is the marks' stop in the tab order, unless a mark
      // has the focus now.
      const shown = root.querySelector('.mark[role=button][data-seq="' + currentSeq + '"]');
      const act = document.activeElement;
      if (shown && !(act && root.contains(act) && act.matches('.mark[role=button]'))) {
        for (const m of root.querySelectorAll('.mark[role=button][tabindex="0"]')) m.setAttribute('tabindex', '-1');
        shown.setAttribute('tabindex', '0');
      }
      for (const e of root.querySelectorAll('[data-seq="' + currentSeq + '"]')) {
        if (e.classList.contains('mark')) {
          e.classList.add('current');
          e.setAttribute('data-current', 'true');
        } else {
          e.classList.add('touched');
          e.setAttribute('data-touched', 'true');
        }
      }
      // The key row the step's SQL touched.
      const ev = s.model.events.find((e) => e.seq === currentSeq);
      if (ev && KEY_PHASES.has(ev.phase) && ev.sql) {
        for (const r of root.querySelectorAll('[data-row="db"]')) {
          if (r.getAttribute('data-lanes-in').split(' ').includes(ev.lane)) {
            r.classList.add('touched');
            r.setAttribute('data-touched', 'true');
          }
        }
      }
    }
    s.current = currentSeq;
  }
}

function lowerBound(a, v) {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// headOf is an attempt row's label: how it ended, whether it won, whether
// it moves next, and who.
function headOf(r, model, opts) {
  const a = r.attempt;
  if (r.type === 'collapsed') return OUTCOME_ICON[outcomeOf(a)] + ' × ' + r.members.length;
  return OUTCOME_ICON[outcomeOf(a)] + ' ' + (r.winner ? '★ ' : '') + (opts.selectedLane === a.id ? '▶ ' : '') + a.label;
}

function drawAxis(model, c) {
  const { X, t, height, stacked } = c;
  const axis = svg('g', { class: 'axis' });
  // Stacked (a phone), the axis's name goes on the second line, under the
  // first columns' numbers, which need the room.
  axis.append(
    svg('text', { x: 4, y: stacked ? 34 : 15, class: 'axis-label', text: model.clock === 'time' ? t('raceAxisTime') : t('raceAxisStep') }),
  );
  let lastTick = X(0) - 1000;
  let lastLabel = '';
  const t0 = model.times && model.times.length ? model.times[0] : 0;
  const axisW = textW(model.clock === 'time' ? t('raceAxisTime') : t('raceAxisStep'), 11) + 8;
  for (let i = 0; i < model.events.length; i++) {
    const px = X(model.xs[i]);
    // On the step clock a column is numbered by its event's tick where the
    // events carry one (the lab's runner's steps), else by its place.
    const label = model.clock === 'time' ? fmtMS(model.times[i] - t0) : model.ticks ? String(model.ticks[i] ?? '') : String(i + 1);
    if (!label) continue;
    const w = textW(label, 11);
    if (
      px - lastTick < (model.clock === 'time' ? Math.max(64, w + 8) : stacked ? Math.max(14, w + 3) : Math.max(24, w + 8)) ||
      px - w / 2 < (stacked ? 0 : axisW)
    )
      continue;
    if (label === lastLabel) continue;
    lastTick = px;
    lastLabel = label;
    axis.append(
      svg('line', { x1: px, x2: px, y1: AXIS_H - 4, y2: height, class: 'tick' }),
      svg('text', { x: px, y: 15, class: 'tick-label', 'text-anchor': 'middle', text: label }),
    );
  }
  // A quiet stretch drawn shorter than it was says how long it was.
  for (const b of model.breaks || []) {
    const x0 = X(b.x0);
    const x1 = X(b.x1);
    if (x1 - x0 < 16) continue;
    const label = '≈ ' + fmtMS(b.ms);
    // On the step clock (the lab) a break is rare and a wait the reader
    // needs: its words stand under it even when wider than it, kept inside
    // the plot. On the time clock a storm's many breaks are labelled only
    // where the words fit.
    const lw = textW(label, 11) + 8;
    const lx = Math.max(axisW + lw / 2, Math.min((x0 + x1) / 2, c.textRight - lw / 2));
    axis.append(
      svg(
        'g',
        { class: 'break', 'data-break-ms': Math.round(b.ms) },
        svg('rect', { x: x0 + 2, y: 19, width: x1 - x0 - 4, height: 4, rx: 2 }),
        x1 - x0 > lw
          ? svg('text', {
              x: stacked ? Math.max(axisW + lw / 2, (x0 + x1) / 2) : (x0 + x1) / 2,
              y: 34,
              'text-anchor': 'middle',
              class: 'break-label',
              text: label,
            })
          : model.clock !== 'time'
            ? svg('text', { x: lx, y: 34, 'text-anchor': 'middle', class: 'break-label', text: label })
            : null,
        svg('title', { text: t('raceBreak', { ms: fmtMS(b.ms) }) }),
      ),
    );
  }
  return axis;
}

// knockOut cuts the arrows where they cross a row's words (an answer, a
// "paid again"): an arrow from one lane to another, drawn over the rows,
// ran through the sentence under a lane on a phone, where that sentence
// wraps across the plot. Each such sentence's box (its lines, with a
// margin) is cut out of the arrows' layer: the words stay whole, and the
// arrow stops at the box and starts again past it, never weaving between
// the lines of a wrapped sentence. It returns the mask (null when nothing
// is to be cut) and points the arrows' layer at it.
function knockOut(rowsLayer, arrows, width, height, num, fs, stacked) {
  if (!arrows.children.length) return null;
  const boxes = [];
  for (const g of rowsLayer.children) {
    // Stacked, the rows' names stand in the plot too.
    for (const t of g.querySelectorAll(
      'text.answer, text.paid-again-text' + (stacked ? ', text.row-label, text.row-sub-label, text.expand' : ''),
    )) {
      const answer = t.classList.contains('answer');
      const label = !answer && !t.classList.contains('paid-again-text');
      const size = answer ? fs.answer : label ? fs.label : fs.rule;
      const weight = answer || label ? 600 : 700;
      let y = Number(t.getAttribute('y'));
      let top = Infinity;
      let bottom = -Infinity;
      let left = Infinity;
      let right = -Infinity;
      const spans = t.querySelectorAll(':scope > tspan');
      for (const s of spans.length ? spans : [t]) {
        if (s !== t) y += Number(s.getAttribute('dy')) || 0;
        const x = Number(s.getAttribute('x'));
        top = Math.min(top, y - size);
        bottom = Math.max(bottom, y + size * 0.3);
        left = Math.min(left, x);
        right = Math.max(right, x + textW(s.textContent, size, weight));
      }
      if (right <= left) continue;
      boxes.push(
        svg(
          'g',
          { transform: g.getAttribute('transform') },
          svg('rect', {
            x: left - 4,
            y: top - 3,
            width: right - left + 8,
            height: bottom - top + 6,
            rx: 3,
            class: 'knock ' + (answer ? 'knock-answer' : 'knock-again'),
          }),
        ),
      );
    }
  }
  if (!boxes.length) return null;
  const id = 'race-knock-' + num;
  arrows.setAttribute('mask', 'url(#' + id + ')');
  return svg(
    'mask',
    { id, maskUnits: 'userSpaceOnUse', x: 0, y: 0, width, height },
    svg('rect', { x: 0, y: 0, width, height, class: 'knock-all' }),
    ...boxes,
  );
}

function drawArrows(model, rows, laneRow, c) {
  const { X, t, unit } = c;
  const layer = svg('g', { class: 'arrows' });
  for (const ar of model.arrows) {
    const fromRow = laneRow.get(ar.from.lane);
    if (!fromRow || (fromRow.type === 'collapsed' && fromRow.attempt.id !== ar.from.lane)) continue;
    let tx;
    let ty;
    if (ar.to && !ar.to.db) {
      const toRow = laneRow.get(ar.to.lane);
      if (!toRow) continue;
      tx = ar.to.px ?? X(ar.to.x);
      ty = toRow.mid;
    } else {
      const dbRow = rows.find((r) => r.type === 'db' && r.group.id === fromRow.group.id);
      if (!dbRow) continue;
      tx = (ar.from.px ?? X(ar.from.x)) - Math.max(4, unit * 0.3);
      ty = dbRow.y + (dbRow.head || 0) + dbRow.band - 3;
    }
    const fx = ar.from.px ?? X(ar.from.x);
    const fy = fromRow.mid;
    const dir = ty < fy ? 1 : -1;
    const path = `M${fx},${fy - dir * 9} C${fx},${(fy + ty) / 2} ${tx},${(fy + ty) / 2} ${tx},${ty + dir * 9}`;
    layer.append(
      svg(
        'path',
        {
          d: path,
          class: 'arrow arrow-' + ar.kind,
          'marker-end': 'url(#race-head-' + ar.kind + '-' + c.heads + ')',
          'data-arrow': ar.kind,
          'data-i': ar.from.i,
          'data-from-lane': ar.from.lane,
          'data-from-seq': ar.from.ev.seq,
          'data-to-lane': ar.toLane || '',
          'data-to': ar.toDb || '',
        },
        svg('title', { text: t('raceArrow_' + ar.kind, { from: labelOfLane(model, ar.from.lane), to: labelOfLane(model, ar.toLane) }) }),
      ),
    );
  }
  return layer;
}

function labelOfLane(model, id) {
  const a = id && model.attempts.get(id);
  return a ? a.label : id || '';
}

// fmtMS writes a span of milliseconds as a person reads it.
export function fmtMS(ms) {
  if (ms < 10) return Math.round(ms * 10) / 10 + ' ms';
  if (ms < 1000) return Math.round(ms) + ' ms';
  if (ms < 60000) return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + ' s';
  const m = Math.floor(ms / 60000);
  if (m < 60) return m + ' min';
  return Math.floor(m / 60) + ' h ' + (m % 60) + ' min';
}

// Placed words on the lines under a row's band: each line keeps where its
// last word ends, and a word goes on the first line where it fits.
function placer() {
  const ends = [];
  return {
    put(x, w) {
      let k = 0;
      while (k < ends.length && ends[k] > x - 6) k++;
      ends[k] = x + w;
      return k;
    },
    get count() {
      return ends.length;
    },
  };
}

// headAbove sizes a row whose name is labelLines and whose content (the
// band and the words under it) is contentH tall: beside the name, as tall
// as the taller of the two; stacked (a phone), the name on its own lines
// above the content (r.head).
function headAbove(r, c, labelLines, contentH) {
  const { fs } = c;
  r.head = c.stacked ? labelLines.length * (fs.label + 4) + 2 : 0;
  r.h = c.stacked ? r.head + contentH : Math.max(labelLines.length * (fs.label + 4) + 10, contentH);
}

function planLedger(r, c) {
  const { X, t, fs, model } = c;
  r.band = 36;
  const labelLines = wrap('⛁ ' + t('raceLedger'), c.labelW - 10, fs.label, 600);
  const opening = model.opening.map(([k, v]) => k + ' ' + won(v)).join(' · ');
  const openLines = opening ? wrap(t('raceOpening', { balances: opening }), c.textRight - c.plotLeft, fs.sub, 400) : [];
  const ledger = model.ledger;
  const again = ledger.filter((p) => p.again);
  let againText = '';
  if (again.length === 1) {
    const p = again[0];
    againText = '✘ ' + markWord({ kind: 'paid-again', amount: p.amount }, t) + ' (' + labelOfLane(model, p.lane) + ')';
  } else if (again.length > 1) {
    const sum = again.reduce((n, p) => n + p.amount, 0);
    againText = sum ? '✘ ' + extraPayments(again.length, sum) : t('racePaidAgainCount', { n: again.length });
  }
  // The balances once the last payment again committed: what the double
  // payment left, which the band has no room for beside its block.
  const lastAgain = again[again.length - 1];
  if (againText && lastAgain && lastAgain.balances) {
    againText += ' · ' + t('raceAfter', { balances: lastAgain.balances.map(([a, v]) => a + ' ' + won(v)).join(' · ') });
  }
  const againLines = wrap(againText, c.textRight - c.plotLeft, fs.rule, 700);
  const subH = fs.sub + 4;
  const ruleH = fs.rule + 4;
  // The balances after each first payment go beside its block where the
  // band has room before the next block; else before this one, after
  // whatever was drawn there (a payment near the right edge keeps its
  // balances); else, as on a phone, on a line of their own under the band.
  const blocks = ledgerBlocks(ledger, c);
  const beside = [];
  const under = [];
  let used = c.plotLeft; // the right edge of what the band holds so far
  blocks.forEach((bk, k) => {
    const p = bk.list[0];
    const x = bk.px;
    const again = bk.list.some((q) => q.again);
    const next = blocks[k + 1];
    const room = (next ? next.px - next.w / 2 - 6 : c.textRight) - (x + bk.w / 2 + 4);
    const roomBefore = x - bk.w / 2 - 4 - (used + 6);
    const label = !again && bk.list.length === 1 && p.balances ? p.balances.map(([a, v]) => a + ' ' + won(v)).join(' · ') : '';
    const lw = label ? textW(label, 11) : 0;
    const after = label && room >= lw;
    if (after || (label && roomBefore >= lw)) beside[k] = { after, label };
    else if (label) {
      const text = t('raceAfterOf', { who: labelOfLane(model, p.lane), balances: label });
      under.push({ p, lines: wrap(text, c.textRight - c.plotLeft, fs.sub, 400) });
    }
    used = after ? x + bk.w / 2 + 4 + lw : x + bk.w / 2;
  });
  // A crowd of payments (a storm) keeps its balances in the blocks'
  // titles: a line for each would bury the band.
  if (under.length > 3) under.length = 0;
  const underH = under.reduce((n, u) => n + u.lines.length * subH, 0);
  headAbove(r, c, labelLines, r.band + openLines.length * subH + underH + againLines.length * ruleH + 4);
  r.draw = () => {
    const g = svg(
      'g',
      { class: 'row row-ledger', 'data-row': 'ledger' },
      svg('rect', { x: 0, y: r.y - r.head, width: c.width, height: r.h, class: 'band band-ledger' }),
      lines(labelLines, 8, c.stacked ? fs.label + 2 : r.y + 22, fs.label + 4, { class: 'row-label' }),
      svg('title', { text: t('raceLedger') + (opening ? ': ' + opening : '') }),
    );
    let ly = r.y + r.band + fs.sub;
    if (openLines.length) {
      g.append(lines(openLines, c.plotLeft, ly, subH, { class: 'row-sub opening' }));
      ly += openLines.length * subH;
    }
    for (const u of under) {
      g.append(lines(u.lines, c.plotLeft, ly, subH, { class: 'row-sub balance-after', 'data-lane': u.p.lane, 'data-i': u.p.i }));
      ly += u.lines.length * subH;
    }
    const inTime = svg('g', { 'clip-path': c.clip });
    blocks.forEach((bk, k) => {
      const p = bk.list[0];
      const x = bk.px;
      const again = bk.list.some((q) => q.again);
      const sum = bk.list.reduce((n, q) => n + q.amount, 0);
      const word = markWord({ kind: again ? 'paid-again' : 'paid', amount: sum }, t);
      const row = c.rowOf && c.rowOf(p.lane);
      const who =
        bk.list.length > 1
          ? '× ' + bk.list.length
          : labelOfLane(model, p.lane) + (row && row.type === 'collapsed' ? ' (' + t('raceOneOf', { n: row.members.length }) + ')' : '');
      inTime.append(
        svg(
          'g',
          {
            class: 'money' + (again ? ' money-again' : '') + (bk.w < 14 ? ' small' : ''),
            'data-mark': again ? 'paid-again' : 'paid',
            'data-lane': p.lane,
            'data-seq': model.events[p.i].seq,
            'data-i': p.i,
            'data-n': bk.list.length > 1 ? bk.list.length : null,
            'data-seqs': bk.list.length > 1 ? bk.list.map((q) => model.events[q.i].seq).join(' ') : null,
            'data-lanes': bk.list.length > 1 ? bk.list.map((q) => q.lane).join(',') : null,
          },
          svg('rect', { x: x - bk.w / 2, y: r.y + 4, width: bk.w, height: 28, rx: 3 }),
          svg('text', { x, y: r.y + 23, 'text-anchor': 'middle', class: 'money-icon', text: bk.text }),
          svg('title', {
            text:
              word +
              ' · ' +
              who +
              (bk.list.length === 1 && p.transfer ? ' · ' + p.transfer : '') +
              (bk.list.length === 1 && p.balances ? ' · ' + p.balances.map(([a, v]) => a + ' ' + won(v)).join(', ') : ''),
          }),
        ),
      );
      const side = beside[k];
      if (side) {
        inTime.append(
          svg('text', {
            x: side.after ? x + bk.w / 2 + 4 : x - bk.w / 2 - 4,
            y: r.y + 22,
            'text-anchor': side.after ? null : 'end',
            class: 'row-sub balance-after',
            'data-lane': p.lane,
            'data-i': p.i,
            text: side.label,
          }),
        );
      }
    });
    g.append(inTime);
    if (againLines.length) {
      const last = again[again.length - 1];
      g.append(
        lines(againLines, nearMark(againLines, X(last.x), c, fs.rule), ly + 2, ruleH, {
          class: 'paid-again-text',
          'data-mark': again.length > 1 ? 'paid-again-total' : 'paid-again-text',
          'data-lane': again.length === 1 ? last.lane : null,
          'data-i': last.i,
        }),
      );
    }
    return g;
  };
}

// nearMark is where lines of text that speak of a mark at x start: under
// the mark, kept inside the plot (a label at the left edge, far from a
// block at the right, was read as the opening balances').
function nearMark(textLines, x, c, size) {
  const w = Math.max(...textLines.map((l) => textW(l, size, 700)));
  return Math.max(c.plotLeft, Math.min(x - w / 2, c.textRight - w));
}

// CHARGE_ICON is the sign of each kind of block in the processor's row.
const CHARGE_ICON = { charged: '$', again: '$', replayed: '↺' };

// planProcessor draws the payment processor's row under the ledger's: its
// own records, which no rollback of the ledger undoes. One block per new
// charge (a second for one wish is red: charged again), and a hollow ↺
// where the processor answered a call with the first charge of its key.
function planProcessor(r, c) {
  const { X, t, fs, model } = c;
  r.band = 36;
  const labelLines = wrap('⇄ ' + t('raceProcessor'), c.labelW - 10, fs.label, 600);
  const charges = model.processor.filter((p) => !p.replayed);
  const again = charges.filter((p) => p.again);
  const againText = again.length
    ? '✘ ' + again.map((p) => t('raceChargedAgain', { amount: won(p.amount) }) + ' (' + labelOfLane(model, p.lane) + ')').join(' · ')
    : '';
  const againLines = wrap(againText, c.textRight - c.plotLeft, fs.rule, 700);
  const ruleH = fs.rule + 4;
  headAbove(r, c, labelLines, r.band + againLines.length * ruleH + 4);
  r.draw = () => {
    const g = svg(
      'g',
      { class: 'row row-ledger row-processor', 'data-row': 'processor' },
      svg('rect', { x: 0, y: r.y - r.head, width: c.width, height: r.h, class: 'band band-ledger' }),
      lines(labelLines, 8, c.stacked ? fs.label + 2 : r.y + 22, fs.label + 4, { class: 'row-label' }),
      svg('title', { text: t('raceProcessor') }),
    );
    const inTime = svg('g', { 'clip-path': c.clip });
    for (const bk of ledgerBlocks(charges, c, { one: CHARGE_ICON.charged, again: CHARGE_ICON.again })) {
      const p = bk.list[0];
      const isAgain = bk.list.some((q) => q.again);
      const word = t(isAgain ? 'raceChargedAgain' : 'raceCharged', { amount: won(bk.list.reduce((n, q) => n + q.amount, 0)) });
      inTime.append(
        svg(
          'g',
          {
            class: 'charge' + (isAgain ? ' charge-again' : '') + (bk.w < 14 ? ' small' : ''),
            'data-mark': isAgain ? 'charged-again' : 'charged',
            'data-lane': p.lane,
            'data-charge': p.charge,
            'data-seq': model.events[p.i].seq,
            'data-i': p.i,
            'data-n': bk.list.length > 1 ? bk.list.length : null,
          },
          svg('rect', { x: bk.px - bk.w / 2, y: r.y + 4, width: bk.w, height: 28, rx: 3 }),
          svg('text', { x: bk.px, y: r.y + 23, 'text-anchor': 'middle', class: 'money-icon', text: bk.text }),
          svg('title', { text: word + ' · ' + bk.list.map((q) => labelOfLane(model, q.lane) + ' ' + q.charge).join(', ') }),
        ),
      );
    }
    for (const p of model.processor.filter((q) => q.replayed)) {
      const w = Math.max(9, Math.min(18, c.unit - 2));
      inTime.append(
        svg(
          'g',
          {
            class: 'charge charge-replayed',
            'data-mark': 'charge-replayed',
            'data-lane': p.lane,
            'data-charge': p.charge,
            'data-seq': model.events[p.i].seq,
            'data-i': p.i,
          },
          svg('rect', { x: X(p.x) - w / 2, y: r.y + 6, width: w, height: 24, rx: 3 }),
          svg('text', { x: X(p.x), y: r.y + 23, 'text-anchor': 'middle', class: 'money-icon', text: CHARGE_ICON.replayed }),
          svg('title', {
            text: t('raceChargeReplayed', { charge: p.charge }) + ' · ' + labelOfLane(model, p.lane) + (p.key ? ' · ' + p.key : ''),
          }),
        ),
      );
    }
    g.append(inTime);
    if (againLines.length) {
      const last = again[again.length - 1];
      g.append(
        lines(againLines, nearMark(againLines, X(again[again.length - 1].x), c, fs.rule), r.y + r.band + fs.rule, ruleH, {
          class: 'paid-again-text',
          'data-mark': 'charged-again-text',
          'data-lane': last.lane,
          'data-i': last.i,
        }),
      );
    }
    return g;
  };
}

// ledgerBlocks places the ledger's blocks: one per payment, at its moment;
// payments too close together to be told apart share a block that says
// how many they are ("✘39"), and a block never covers the next.
export function ledgerBlocks(ledger, c, icons = LEDGER_ICON) {
  const { X } = c;
  const narrow = Math.max(9, Math.min(18, c.unit - 2));
  const blocks = [];
  const size = (bk) => {
    const again = bk.list.some((q) => q.again);
    bk.text = (again ? icons.again : icons.one) + (bk.list.length > 1 ? bk.list.length : '');
    bk.w = bk.list.length > 1 ? Math.max(18, textW(bk.text, 12, 700) + 6) : narrow;
    // A block grown by its count stays inside the plot.
    if (bk.left + bk.w > c.textRight) bk.left = Math.max(c.plotLeft, c.textRight - bk.w);
    bk.px = bk.left + bk.w / 2;
  };
  // A block kept inside the plot may move left onto the one before it,
  // when it is new or when its count grew: then the two are one block.
  const settle = () => {
    while (blocks.length > 1) {
      const last = blocks[blocks.length - 1];
      const before = blocks[blocks.length - 2];
      if (last.left >= before.left + before.w + 2) break;
      before.list.push(...last.list);
      blocks.pop();
      size(before);
    }
  };
  for (const p of ledger) {
    const left = X(p.x) - narrow / 2;
    const prev = blocks[blocks.length - 1];
    const prevRight = prev ? prev.left + prev.w + 2 : -Infinity;
    if (
      prev &&
      (left < prevRight || prevRight + narrow > c.textRight) &&
      (prev.list.every((q) => q.again === p.again) || prevRight + narrow > c.textRight)
    ) {
      prev.list.push(p);
      size(prev);
    } else {
      const bk = { list: [p], left: Math.max(left, prevRight) };
      size(bk);
      blocks.push(bk);
    }
    settle();
  }
  return blocks;
}

// LEDGER_ICON is the sign of a ledger block: a payment, or one made again.
// One sign a meaning: ■ is money moved, red when it moved again for the
// same intent (as the paid-again mark on the attempt's row); ✘ is kept
// for what failed (a row that paid again, a broken rule).
const LEDGER_ICON = { one: '■', again: '■' };

function planDB(r, c) {
  const { X, t, fs, model } = c;
  const gr = r.group;
  r.band = c.compact ? 28 : 32;
  // Under the server-cache claim the key lives in the servers' memories,
  // each its own: the row says so rather than call it a database row.
  const keyWord = model.policy.claim === 'server-cache' ? 'raceCacheRow' : 'raceKeyRow';
  let name = gr.key ? t(keyWord, { key: gr.key }) : t('raceIntentRow', { intent: gr.intent });
  // Keys scoped by customer: one key string may be two customers' keys,
  // each a row of its own, told apart by whose it is.
  const customer = gr.attempts.length ? gr.attempts[0].customer : '';
  if (gr.key && customer && model.groups.some((o) => o !== gr && o.key === gr.key)) name += ' · ' + customer;
  const nameLines = wrap('▤ ' + name, c.labelW - 10, fs.label, 600);
  const plotW = c.textRight - c.plotLeft;
  const none = !gr.key || model.policy.claim === 'none';
  const noneLines = none ? wrap(t(gr.read ? 'raceRowNoKey' : 'raceNoKeyTable'), plotW, fs.sub, 400) : [];
  // Each state's words inside its segment, in short where the long do not
  // fit, else on a line under the band.
  const place = placer();
  const segs = gr.db.map((s, k) => {
    const x0 = X(s.x0);
    const next = gr.db[k + 1];
    const x1 = next ? X(next.x0) : c.textRight;
    const owner = labelOfLane(model, s.owner);
    const label = s.read
      ? readSegWords(s, owner, t)
      : s.state === 'completed'
        ? t('raceCompleted', { status: s.status || '', owner })
        : s.state === 'in_progress'
          ? t('raceInProgress', { owner })
          : t('raceRecorded', { state: s.state, owner });
    const short =
      (s.state === 'completed'
        ? '✔ ' + (s.status || '')
        : s.state === 'in_progress'
          ? '◐'
          : s.state === 'absent'
            ? '–'
            : '▭' + (s.status ? ' ' + s.status : '')) +
      ' ' +
      owner;
    const room = x1 - x0 - 8;
    if (textW(label, fs.seg) <= room) return { s, x0, x1, label, text: label, line: -1 };
    // A row of the student's own table says its state in the student's
    // words ("running"), which no sign stands for: where they do not fit
    // inside, they go whole on a line under the band (a phone showed "▭
    // a1" for "running · a1").
    const lw = textW(label, fs.seg);
    if (s.read && lw <= c.textRight - c.plotLeft) {
      const x = Math.max(c.plotLeft, Math.min(x0, c.textRight - lw));
      return { s, x0, x1, label, text: label, line: place.put(x, lw), x };
    }
    if (textW(short, fs.seg) <= room) return { s, x0, x1, label, text: short, line: -1 };
    const w = textW(short, fs.seg);
    const x = Math.max(c.plotLeft, Math.min(x0, c.textRight - w));
    return { s, x0, x1, label, text: short, line: place.put(x, w), x };
  });
  const absent = !none && !gr.db.length;
  const lh = fs.seg + 4;
  headAbove(r, c, nameLines, r.band + (place.count + noneLines.length) * lh + (place.count || noneLines.length ? 4 : 0));
  r.draw = () => {
    const g = svg(
      'g',
      {
        class: 'row row-db',
        'data-row': 'db',
        'data-key': gr.key || '',
        'data-intent': gr.intent || '',
        'data-lanes-in': gr.attempts.map((a) => a.id).join(' '),
      },
      svg('rect', { x: 0, y: r.y - r.head, width: c.width, height: r.h, class: 'band band-db' }),
      lines(nameLines, 8, c.stacked ? fs.label + 2 : r.y + 21, fs.label + 4, { class: 'row-label db-label' }),
      svg('title', { text: name }),
    );
    const inTime = svg('g', { 'clip-path': c.clip });
    const midY = r.y + r.band / 2;
    if (none) {
      g.append(lines(noneLines, c.plotLeft, r.y + r.band + fs.sub - 2, lh, { class: 'db-none' }));
      g.append(svg('line', { x1: X(0), x2: c.textRight, y1: midY, y2: midY, class: 'absent' }));
    } else {
      const first = gr.db[0];
      inTime.append(svg('line', { x1: X(0), x2: first ? X(first.x0) : c.textRight, y1: midY, y2: midY, class: 'absent' }));
      if (absent) inTime.append(svg('text', { x: X(0) + 4, y: midY - 5, class: 'db-state-text', text: t('raceAbsent') }));
    }
    for (const p of segs) {
      const { s } = p;
      const under = p.line >= 0;
      inTime.append(
        svg(
          'g',
          {
            class: 'seg seg-' + s.state.replace('_', '-'),
            'data-db-state': s.state,
            'data-owner': s.owner,
            'data-seq': model.events[s.i].seq,
            'data-value': s.read ? s.value : null,
            'data-stored': s.read && s.status ? s.status : null,
            'data-rows': s.read && s.rows ? s.rows : null,
          },
          // A row that went away is the dashed line of no row again.
          s.state === 'absent'
            ? svg('line', { x1: p.x0, x2: p.x1, y1: midY, y2: midY, class: 'absent' })
            : svg('rect', { x: p.x0, y: r.y + 4, width: Math.max(4, p.x1 - p.x0), height: r.band - 8, rx: 4 }),
          svg(
            'text',
            under
              ? { x: p.x, y: r.y + r.band + fs.seg - 1 + p.line * lh, class: 'seg-text seg-under', text: p.text }
              : s.state === 'absent'
                ? { x: p.x0 + 5, y: midY - 5, class: 'seg-text seg-under', text: p.text }
                : { x: p.x0 + 5, y: midY + 4, class: 'seg-text', text: p.text },
          ),
          svg('title', { text: p.label }),
        ),
      );
    }
    g.append(inTime);
    return g;
  };
}

// readSegWords says a key row's segment read from the tables (the lab):
// the value of its state column as the table holds it, else "row written",
// the answer's status it stores, whose step made it so, and how many rows
// hold the key when more than one does.
function readSegWords(s, owner, t) {
  if (s.state === 'absent') return t('raceRowGone', { owner });
  const what = (s.state === 'recorded' ? t('raceRowWritten') : s.value) + (s.status ? ' ' + s.status : '');
  return t('raceRowSeg', { what, owner }) + (s.rows > 1 ? ' · ' + t('raceRowsN', { n: s.rows }) : '');
}

// marksOf places a row's marks: one per event of its attempt, or (a row
// that stands for several alike) one per moment any of them acted, with
// how many acted there. On the trace's clock marks of one row keep a
// little room between them, so that a claim 0.1 ms after the receive is
// still its own mark, and never run past the plot.
function marksOf(r, c) {
  const { X, model, compact, textRight } = c;
  const timeClock = model.clock === 'time';
  if (r.type === 'collapsed') return bucketMarks(r, c);
  const all = r.attempt.marks;
  const gap0 = timeClock ? (compact ? 13 : 17) : 0;
  const limit = textRight - 10;
  let gap = gap0;
  let placed;
  for (let tries = 0; tries < 4; tries++) {
    placed = [];
    let prev = null;
    for (const m of all) {
      const px = X(m.x);
      if (prev && px < prev.px + Math.max(gap, 1) && (prev.kind === m.kind || (r.type === 'collapsed' && prev.px + gap > limit))) {
        prev.n++;
        prev.members.push(m);
        continue;
      }
      const at = prev ? Math.max(px, prev.px + gap) : px;
      prev = { px: at, kind: m.kind, icon: m.icon, m, n: 1, members: [m] };
      placed.push(prev);
    }
    if (!placed.length || placed[placed.length - 1].px <= limit) break;
    gap = gap0 / (tries + 2);
  }
  for (const p of placed) {
    if (p.px > limit) p.px = limit;
    for (const m of p.members) m.px = p.px;
  }
  return placed;
}

// What a mark that stands for several events shows: the one that matters
// most (money first), its title naming them all.
const WEIGHT = [
  'paid-again',
  'paid',
  'crashed',
  'lost',
  'timed-out',
  'conflict',
  'mismatch',
  'duplicate',
  'claim-ignored',
  'replay',
  'replay-recomputed',
  'replay-generic',
  'takeover',
  'claim',
  'declined',
  'rejected',
  'error',
  'stored',
  'late-key',
  'pay-call',
  'lock-wait',
  'db-wait',
  'lock',
  'lookup',
  'answer',
];
const weightOf = (kind) => {
  const k = WEIGHT.indexOf(kind);
  return k < 0 ? WEIGHT.length : k;
};

// bucketMarks places the marks of a row that stands for several alike
// attempts: time is cut into slots a mark wide, and each slot where any of
// them acted gets one mark, at its own moment, with how many acted there.
function bucketMarks(r, c) {
  const { X, model, compact, textRight } = c;
  const slot = model.clock === 'time' ? (compact ? 13 : 16) : Math.max(10, c.unit);
  const limit = textRight - 10;
  const slots = new Map();
  for (const a of r.members) {
    for (const m of a.marks) {
      const px = Math.min(limit, X(m.x));
      const k = Math.floor((px - c.plotLeft) / slot);
      let p = slots.get(k);
      if (!p) {
        p = { px: c.plotLeft + (k + 0.5) * slot, members: [], n: 0 };
        slots.set(k, p);
      }
      p.members.push(m);
      p.n++;
    }
  }
  const placed = [...slots.values()].sort((p, q) => p.px - q.px);
  for (const p of placed) {
    p.m = p.members.reduce((best, m) => (weightOf(m.kind) < weightOf(best.kind) ? m : best), p.members[0]);
    p.kind = p.m.kind;
    // The count is of the attempts that did what the mark shows (one that
    // did it twice in a slot is one): under a payment, the payments, which
    // add up to what the ledger and the tiles say. The title names the
    // rest of the slot.
    p.n = new Set(p.members.filter((m) => m.kind === p.kind).map((m) => m.lane)).size;
    p.icon = p.m.icon;
    p.px = Math.min(limit, Math.max(c.plotLeft + slot / 2, p.px));
    for (const m of p.members) m.px = p.px;
  }
  return placed;
}

function planAttempt(r, c) {
  const { X, t, fs, opts, unit, compact, model } = c;
  const a = r.attempt;
  const collapsed = r.type === 'collapsed';
  const selectable = !!opts.onSelectLane && !collapsed;
  const movable = a.state === 'waiting' || a.state === 'running';
  const selected = opts.selectedLane === a.id;
  const verdict = outcomeOf(a);
  r.band = fs.band;
  const headLines = wrap(headOf(r, model, opts), c.labelW - 10, fs.label, 600);
  // Which app server the attempt reached, in words and a stripe of its own
  // colour (never the colour alone); the winner's word; a collapsed row's
  // "show all".
  const server = model.servers > 1 && a.server && !collapsed ? t('laneServer', { n: a.server }) : '';
  const subLines = wrap([r.winner ? '★ ' + t('raceWinner') : '', server].filter(Boolean).join(' · '), c.labelW - 10, fs.sub, 700);
  const expandWord = collapsed ? '▸ ' + t('raceExpand') : r.expandedFrom && opts.onToggle ? '▾' : '';
  // Stacked, the winner's word and "show all" follow the name on its line
  // where they fit: a phone's rows are tall enough with one line above.
  const inline =
    c.stacked &&
    headLines.length === 1 &&
    subLines.length <= 1 &&
    8 +
      textW(headLines[0], fs.label, 600) +
      (subLines.length ? 10 + textW(subLines[0], fs.sub, 700) : 0) +
      (expandWord ? 10 + textW(expandWord, fs.sub, 400) : 0) <=
      c.labelW;
  const labelH = inline
    ? fs.label + 12
    : headLines.length * (fs.label + 4) + subLines.length * (fs.sub + 3) + (expandWord ? fs.sub + 4 : 0) + 8;

  const placed = marksOf(r, c);
  const last = placed[placed.length - 1];
  const place = placer();
  const lh = fs.answer + 5;
  // How it ended, in words: after its last mark where they fit, else on
  // the lines under the band; a second payment on a line of its own.
  let answer = null;
  if (a.answer && last && a.state !== 'running') {
    const charged = (model.processor || []).some((p) => p.lane === a.id && !p.replayed);
    const words = answerWords(a, t, collapsed ? r.members.length : 0, model.answers === 'as-sent', charged);
    const w = textW(words, fs.answer, 600);
    const again = a.paidAgain
      ? '✘ ' +
        markWord(
          a.marks.find((m) => m.kind === 'paid-again'),
          t,
        )
      : '';
    if (!again && last.px + 14 + w <= c.textRight) {
      answer = { words: [words], x: last.px + 14, line: -1 };
    } else {
      const ws = wrap(words, c.textRight - c.plotLeft, fs.answer, 600);
      const x = Math.max(c.plotLeft, Math.min(last.px - 10, c.textRight - widest(ws, fs.answer, 600)));
      answer = { words: ws, x, line: 0, again: again ? wrap(again, c.textRight - c.plotLeft, fs.answer, 700) : [] };
      for (let k = 0; k < ws.length + answer.again.length; k++) place.put(c.plotLeft - 100, 0);
      if (answer.again.length)
        answer.againX = Math.max(c.plotLeft, Math.min(last.px - 10, c.textRight - widest(answer.again, fs.answer, 700)));
    }
  } else if (a.state === 'crashed' && !placed.length) {
    answer = { words: [t('raceCrashedWord')], x: X(0), line: -1 };
  }
  // The next phase of a lane still on its way (the bench), and the fault
  // the scenario scripted for it, as the cards said it.
  let ghost = null;
  if (movable && a.next_phase && !collapsed) {
    const gx = X(c.cols - 1);
    const words =
      (a.next_part === 'lock'
        ? '⋯ ' + t('raceWaitsLock')
        : t('raceNext', { phase: a.next_phase + (a.next_part ? ' (' + a.next_part + ')' : '') })) +
      (a.fault && a.fault.kind ? ' · ⚡ ' + t('laneScriptedFault', { kind: a.fault.kind, phase: a.fault.phase }) : '');
    const w = textW(words, fs.sub, 400);
    if (gx + 14 + w <= c.textRight) {
      ghost = { gx, words: [words], x: gx + 14, line: -1 };
    } else {
      const ws = wrap(words, c.textRight - c.plotLeft, fs.sub, 400);
      const x = Math.max(c.plotLeft, c.textRight - widest(ws, fs.sub, 400));
      ghost = { gx, words: ws, x, line: place.count };
      for (let k = 0; k < ws.length; k++) place.put(c.plotLeft - 100, 0);
    }
  }
  // Counts of a row that stands for several: under each mark; marks of one
  // kind too close together for a count each share one, their sum, under
  // the middle of the run (three ■ of a storm read "×19", as the ledger's
  // block above them does). A count with no room after the one before is
  // left to the marks' titles.
  const counts = [];
  if (collapsed) {
    const runs = [];
    for (const p of placed) {
      const last = runs[runs.length - 1];
      const w = textW('×' + p.n, 11, 600);
      if (last && last.kind === p.kind && p.px - last.x1 < w + 6) {
        last.n += p.n;
        last.x1 = p.px;
        continue;
      }
      runs.push({ kind: p.kind, n: p.n, x0: p.px, x1: p.px, p });
    }
    let end = -Infinity;
    for (const run of runs) {
      if (run.n < 2) continue;
      const s = '×' + run.n;
      const w = textW(s, 11, 600);
      const px = (run.x0 + run.x1) / 2;
      if (px - w / 2 < end + 3) continue;
      counts.push({ p: run.p, px, s, n: run.n, x0: run.x0, x1: run.x1 });
      end = px + w / 2;
    }
  }
  const countH = counts.length ? 12 : 0;
  const contentH = r.band + countH + place.count * lh + (place.count ? 4 : 0);
  r.head = c.stacked ? labelH - 6 : 0;
  r.h = c.stacked ? r.head + contentH : Math.max(labelH, contentH);

  r.draw = () => {
    const attrs = {
      class:
        'row row-attempt verdict-' +
        verdict +
        (r.winner ? ' winner' : '') +
        (selected ? ' selected' : '') +
        (collapsed ? ' collapsed' : ''),
      'data-row': collapsed ? 'collapsed' : 'attempt',
      'data-lane': a.id,
      'data-verdict': verdict,
      'data-state': a.state || null,
      'data-winner': r.winner ? 'true' : null,
      'data-count': collapsed ? r.members.length : null,
      'data-lanes': collapsed ? r.members.map((m) => m.id).join(',') : null,
      'data-server': model.servers > 1 && a.server ? a.server : null,
      'data-decided': verdict === 'pending' ? null : decidedAt(collapsed ? r.members : [a]),
    };
    if (selectable && movable) attrs.onclick = () => opts.onSelectLane(a.id);
    const g = svg('g', attrs);
    const midY = r.mid;
    const top = r.y - r.head;
    g.append(svg('rect', { x: 0, y: top, width: c.width, height: r.h, class: 'band' }));
    if (server) g.append(svg('rect', { x: 0, y: top + 2, width: 4, height: r.h - 4, class: 'server-stripe server-' + a.server }));
    // The label: how it ended (icon and word, never colour alone), and who.
    const head = svg('text', { x: 8, y: top + fs.label + 5, class: 'row-label' });
    // Each line but the last ends in a space, as in lines().
    const sp = (k) => (k < headLines.length - 1 ? ' ' : '');
    headLines.forEach((l, k) =>
      head.append(
        k
          ? svg('tspan', { x: 8, dy: fs.label + 4, text: l + sp(k) })
          : svg(
              'tspan',
              { x: 8 },
              svg('tspan', { class: 'v-icon', text: OUTCOME_ICON[verdict], 'data-final': OUTCOME_ICON[verdict] }),
              l.slice(OUTCOME_ICON[verdict].length) + sp(k),
            ),
      ),
    );
    head.append(
      svg('title', {
        text:
          a.label +
          (server ? ' · ' + server : '') +
          ' — ' +
          t('raceLg_' + verdict) +
          (a.verdict_text ? ' — ' + inLang(a.verdict_text, a.verdict_text_ko) : ''),
      }),
    );
    let sy = top + headLines.length * (fs.label + 4) + fs.sub + 3;
    // Inline (stacked): after the name, on its baseline.
    let sx = 8;
    if (inline) {
      sy = top + fs.label + 5;
      sx = 8 + textW(headLines[0], fs.label, 600) + 10;
    }
    const label = svg('g', { class: 'lane-label' }, head);
    if (subLines.length) {
      label.append(
        lines(subLines, sx, sy, fs.sub + 3, {
          class: 'row-sub-label' + (r.winner ? ' winner-tag' : '') + (server ? ' server-tag server-' + a.server : ''),
          'data-server-tag': server ? a.server : null,
        }),
      );
      if (inline) sx += textW(subLines[0], fs.sub, 700) + 10;
      else sy += subLines.length * (fs.sub + 3);
    }
    if (selectable) {
      label.setAttribute('role', 'radio');
      label.setAttribute('aria-checked', selected ? 'true' : 'false');
      label.setAttribute('aria-label', t('chooseLane') + ': ' + a.label + ' — ' + t('raceLg_' + verdict));
      label.setAttribute('data-focus', 'lane:' + a.id);
      label.setAttribute('data-lane', a.id);
      if (!movable) label.setAttribute('aria-disabled', 'true');
      label.setAttribute('tabindex', '-1');
      listen(label, 'keydown', (e) => radioKey(e, a.id, movable, opts));
      label.prepend(svg('rect', { x: 2, y: top + 2, width: c.labelW - 2, height: (c.stacked ? r.head : r.h) - 4, class: 'pick' }));
    }
    g.append(label);
    if (expandWord) {
      const id = collapsed ? r.id : r.expandedFrom;
      const ex = svg('text', { x: sx, y: sy, class: 'expand', text: expandWord });
      if (opts.onToggle) {
        for (const [k, v] of Object.entries({
          role: 'button',
          tabindex: 0,
          'data-focus': (collapsed ? 'x:' : 'c:') + id,
          [collapsed ? 'data-expand' : 'data-collapse']: id,
          'aria-label': collapsed ? t('raceExpand') + ' (× ' + r.members.length + ')' : t('raceCollapse'),
        }))
          ex.setAttribute(k, v);
        listen(ex, 'click', (e) => {
          e.stopPropagation();
          opts.onToggle(id);
        });
        listen(ex, 'keydown', (e) => {
          if (e.key === 'Enter' || e.key === ' ') {
            e.preventDefault();
            e.stopPropagation();
            opts.onToggle(id);
          }
        });
      }
      g.append(ex);
    }
    // Its life: a line from each mark to the next.
    for (let k = 1; k < placed.length; k++) {
      g.append(svg('line', { x1: placed[k - 1].px, x2: placed[k].px, y1: midY, y2: midY, class: 'life', 'data-i': placed[k].m.i }));
    }
    const wideSpan = model.clock === 'time' && !collapsed;
    for (const p of placed) {
      const m = p.m;
      const cx = p.px;
      const wide = m.kind === 'paid' || m.kind === 'paid-again';
      const base = Math.max(10, Math.min(unit - 2, 20));
      const mw = model.clock === 'time' ? (wide ? 16 : 14) : wide ? Math.max(base, Math.min(unit - 1, 22)) : base;
      const word = markWord(m, t);
      const mAttrs = {
        class: 'mark k-' + m.kind + (mw < 14 ? ' small' : ''),
        'data-mark': m.kind,
        'data-seq': m.ev.seq,
        'data-lane': m.lane,
        'data-i': m.i,
        'data-phase': m.ev.phase,
        'data-outcome': m.ev.outcome,
        'data-status': m.ev.status || null,
        'data-n': p.n > 1 ? p.n : null,
        'data-seqs': p.members.length > 1 ? p.members.map((x) => x.ev.seq).join(' ') : null,
      };
      if (opts.onMark && !collapsed) {
        Object.assign(mAttrs, {
          role: 'button',
          tabindex: -1,
          'data-focus': 'seq:' + m.ev.seq,
          'aria-label': labelOfLane(model, m.lane) + ' · ' + m.ev.phase + ' · ' + word,
          onclick: (e) => {
            e.stopPropagation();
            opts.onMark(m.ev);
          },
          onkeydown: (e) => markKey(e, m.ev, opts),
        });
      }
      if (wideSpan && X(m.x) - X(m.x0) > 24) {
        // A phase that took time (the payment call): a bar over its span.
        g.append(
          svg('rect', {
            x: X(m.x0),
            y: midY - 4,
            width: Math.min(X(m.x), cx) - X(m.x0),
            height: 8,
            class: 'span span-' + m.kind,
            rx: 2,
            'data-i': m.i,
          }),
        );
      }
      const h = compact ? 22 : 26;
      g.append(
        svg(
          'g',
          mAttrs,
          svg('rect', { x: cx - mw / 2, y: midY - h / 2, width: mw, height: h, rx: 4 }),
          svg('text', { x: cx, y: midY + 5, 'text-anchor': 'middle', class: 'mark-icon', text: m.icon }),
          svg('title', {
            text:
              p.members.length > 1
                ? '× ' + p.n + ': ' + kindsOf(p.members, t)
                : labelOfLane(model, m.lane) +
                  ' · ' +
                  m.ev.phase +
                  ' · ' +
                  word +
                  (m.ev.note ? '\n' + m.ev.note : '') +
                  (m.ev.sql ? '\n' + m.ev.sql : ''),
          }),
        ),
      );
    }
    for (const { p, px, s, n, x0, x1 } of counts) {
      g.append(
        svg('text', {
          x: px,
          y: r.y + r.band + 9,
          'text-anchor': 'middle',
          class: 'count',
          'data-i': p.m.i,
          'data-kind': p.kind,
          'data-n': n,
          'data-from': x0,
          'data-to': x1,
          text: s,
        }),
      );
    }
    if (ghost) {
      // Drawn at its column by a transform: the next phase moves one column
      // on every step, by one attribute.
      g.append(
        svg(
          'g',
          {
            class: 'mark ghost' + (selected ? ' ghost-next' : ''),
            'data-mark': 'next',
            'data-phase': a.next_phase,
            'data-lane': a.id,
            transform: 'translate(' + ghost.gx + ',0)',
          },
          svg('rect', { x: -10, y: midY - 13, width: 20, height: 26, rx: 4 }),
          lines(ghost.words, ghost.x - ghost.gx, ghost.line < 0 ? midY + 4 : r.y + r.band + countH + fs.sub - 1 + ghost.line * lh, lh, {
            class: 'ghost-text',
          }),
        ),
      );
    }
    if (answer) {
      const y0 = answer.line < 0 ? midY + 5 : r.y + r.band + countH + fs.answer - 2;
      const k = a.answer ? a.answer.kind : 'crashed';
      const said = lines(answer.words, answer.x, y0, lh, {
        class: 'answer answer-' + k,
        'data-answer': k,
        'data-status': a.answer ? a.answer.status || null : null,
        'data-i': last ? last.m.i : null,
      });
      // The handler's own body, byte for byte (the lab).
      if (model.answers === 'as-sent' && a.response) said.append(svg('title', { text: a.response }));
      g.append(said);
      if (answer.again && answer.again.length) {
        g.append(
          lines(answer.again, answer.againX, y0 + answer.words.length * lh, lh, {
            class: 'paid-again-text',
            'data-mark': 'paid-again-text',
            'data-i': last.m.i,
          }),
        );
      }
    }
    return g;
  };
}

// kindsOf says what several marks were, most telling first: "paid again:
// 10,000 won × 9, answer delivered × 3".
function kindsOf(marks, t) {
  const n = new Map();
  for (const m of marks) {
    const w = markWord(m, t);
    n.set(w, (n.get(w) || 0) + 1);
  }
  return [...n.entries()].map(([w, k]) => w + (k > 1 ? ' × ' + k : '')).join(', ');
}

// radioKey moves the choice between the lanes with the arrow keys, as a
// radio group does; Enter and Space choose the lane focused.
function radioKey(e, id, movable, opts) {
  const keys = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 };
  if ((e.key === 'Enter' || e.key === ' ') && movable) {
    e.preventDefault();
    e.stopPropagation();
    opts.onSelectLane(id);
    return;
  }
  if (!(e.key in keys)) return;
  e.preventDefault();
  e.stopPropagation();
  const radios = [...e.currentTarget.ownerSVGElement.querySelectorAll('[role=radio]:not([aria-disabled])')];
  if (!radios.length) return;
  const k = radios.indexOf(e.currentTarget);
  const next = radios[(k + keys[e.key] + radios.length) % radios.length];
  next.focus();
  opts.onSelectLane(next.getAttribute('data-lane'));
}

// markKey moves between the marks with the arrow keys (along a row, and to
// the nearest mark of the row above or below); Enter and Space show the
// step.
function markKey(e, ev, opts) {
  const el = e.currentTarget;
  if (e.key === 'Enter' || e.key === ' ') {
    e.preventDefault();
    e.stopPropagation();
    opts.onMark(ev);
    return;
  }
  const root = el.ownerSVGElement;
  const row = el.closest('[data-row]');
  const inRow = (r) => [...r.querySelectorAll('.mark[role=button]')];
  const xOf = (m) => Number(m.querySelector('text').getAttribute('x'));
  let to = null;
  if (e.key === 'ArrowRight' || e.key === 'ArrowLeft' || e.key === 'Home' || e.key === 'End') {
    const ms = inRow(row);
    const k = ms.indexOf(el);
    to = e.key === 'Home' ? ms[0] : e.key === 'End' ? ms[ms.length - 1] : ms[k + (e.key === 'ArrowRight' ? 1 : -1)];
  } else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
    const rows = [...root.querySelectorAll('[data-row=attempt]')].filter((r) => inRow(r).length);
    let k = rows.indexOf(row) + (e.key === 'ArrowDown' ? 1 : -1);
    if (k >= 0 && k < rows.length) {
      const x = xOf(el);
      to = inRow(rows[k]).reduce((best, m) => (!best || Math.abs(xOf(m) - x) < Math.abs(xOf(best) - x) ? m : best), null);
    }
  } else {
    return;
  }
  e.preventDefault();
  e.stopPropagation();
  if (to) rove(root, to);
}

// rove makes el the marks' one stop in the tab order, and focuses it.
function rove(root, el) {
  for (const m of root.querySelectorAll('.mark[role=button][tabindex="0"]')) m.setAttribute('tabindex', '-1');
  el.setAttribute('tabindex', '0');
  el.focus();
}

// planLegend lists what every kind of mark drawn means: the rows' outcome
// signs, the marks, the arrows, the ledger's blocks, the key row's states
// and the rules' brackets. Only what the view shows is listed (seekable:
// or shows at a moment it can be seeked to).
function planLegend(model, rows, violations, c, seekable) {
  const { t, fs, width } = c;
  const items = [];
  const attemptRows = rows.filter((r) => r.type === 'attempt' || r.type === 'collapsed');
  const outcomes = new Set(attemptRows.map((r) => outcomeOf(r.attempt)));
  // A view drawn to be seeked (a recorded storm's, given a cursor) shows
  // ◌ on rows not ended at the moment shown (seekRace).
  if (seekable && attemptRows.length) outcomes.add('pending');
  for (const o of ['ok', 'wait', 'refused', 'error', 'info', 'fail', 'pending']) {
    if (outcomes.has(o)) items.push({ kind: 'outcome', o, words: t('raceLg_' + o) });
  }
  if (attemptRows.some((r) => r.winner)) items.push({ kind: 'winner', words: t('raceLg_winner') });
  if (attemptRows.some((r) => r.type === 'collapsed')) items.push({ kind: 'count', words: t('raceLg_count') });
  const kinds = new Map();
  for (const r of attemptRows)
    for (const m of r.type === 'collapsed' ? r.members.flatMap((x) => x.marks) : r.attempt.marks)
      if (!kinds.has(m.kind + m.icon)) kinds.set(m.kind + m.icon, m);
  const steps = [...kinds.values()].filter((m) => m.kind === 'step').map((m) => m.icon);
  // One entry a sign: a payment's mark on its attempt's row looks as the
  // ledger's block does, and is told once, with the ledger's words; a ⚠
  // step and a ⚠ answer (5xx) share one entry.
  const money = model.ledger.some((p) => !p.again);
  const errors = outcomes.has('error') && [...kinds.values()].some((m) => m.kind === 'error');
  if (errors)
    items.splice(
      items.findIndex((it) => it.kind === 'outcome' && it.o === 'error'),
      1,
    );
  for (const m of kinds.values()) {
    // The row's paid-again mark is the ledger's red block: told once.
    if (m.kind === 'step' || (m.kind === 'paid' && money) || (m.kind === 'paid-again' && model.ledger.some((p) => p.again))) continue;
    items.push({
      kind: 'mark',
      m,
      words:
        m.kind === 'paid'
          ? t('racePaidSome')
          : m.kind === 'paid-again'
            ? t('racePaidAgainSome')
            : m.kind === 'error' && errors
              ? t('raceLg_error_both')
              : t('raceMark_' + m.kind.replace('-', '_')),
    });
  }
  if (steps.length) items.push({ kind: 'steps', icons: steps.join(' '), words: t('raceLg_steps') });
  for (const k of ['duplicate', 'conflict', 'mismatch', 'replay']) {
    if (model.arrows.some((a) => a.kind === k)) items.push({ kind: 'arrow', arrow: k, words: t('raceLg_arrow_' + k) });
  }
  if (model.ledger.some((p) => !p.again)) items.push({ kind: 'money', again: false, words: t('raceLg_money') });
  if (model.ledger.some((p) => p.again)) items.push({ kind: 'money', again: true, words: t('raceLg_money_again') });
  if (rows.some((r) => r.type === 'processor')) {
    const p = model.processor;
    if (p.some((q) => !q.replayed && !q.again)) items.push({ kind: 'charge', charge: 'charged', words: t('raceLg_charge') });
    if (p.some((q) => q.again)) items.push({ kind: 'charge', charge: 'again', words: t('raceLg_charge_again') });
    if (p.some((q) => q.replayed)) items.push({ kind: 'charge', charge: 'replayed', words: t('raceLg_charge_replayed') });
  }
  const states = new Set();
  // A key row read from the tables (the lab) is told in its own words:
  // the state column's value, the status stored, who wrote it (first seen
  // of each state, for the column's name).
  const read = new Map();
  let stored = false;
  for (const r of rows)
    if (r.type === 'db') {
      if (r.group.key && model.policy.claim !== 'none') {
        if (!r.group.read) states.add('absent');
        else if (!read.has('absent')) read.set('absent', {});
      }
      for (const s of r.group.db) {
        if (!s.read) {
          states.add(s.state);
          if (s.state === 'completed' && s.status) stored = true;
        } else if (!read.has(s.state) || (s.status && !read.get(s.state).status)) read.set(s.state, s);
      }
    }
  // A completed row stores the answer where the policy replays the stored
  // one (the replay rung on); below it, completed says only that the work
  // was done. A policy not told: a completed row with a status stores it.
  const keeps = model.policy && model.policy.replay ? model.policy.replay === 'stored' : stored;
  for (const s of ['absent', 'in_progress', 'completed', 'recorded'])
    if (states.has(s)) items.push({ kind: 'state', state: s, words: t('raceLg_' + s + (s === 'completed' && !keeps ? '_bare' : '')) });
  for (const s of ['absent', 'in_progress', 'completed', 'valued', 'recorded']) {
    const seg = read.get(s);
    if (!seg) continue;
    const key = 'raceLg_row_' + s + (s === 'completed' && seg.status ? '_stored' : '');
    items.push({ kind: 'state', state: s, words: t(key, { column: seg.column || '' }) });
  }
  // The bench lights the step it shows (seekRace's current).
  if (c.opts.currentSeq !== undefined) items.push({ kind: 'current', words: t('raceLg_current') });
  if (violations.length) items.push({ kind: 'bracket', words: t('raceLg_bracket') });

  // Flow the items in lines; an item wider than a line wraps its words.
  const size = fs.legend;
  const lh = size + 8;
  const sample = 26;
  const head = t('raceLegend');
  const placedItems = [];
  let x = 6 + textW(head, size, 700) + 10;
  let line = 0;
  let extra = 0;
  for (const it of items) {
    const sw = it.kind === 'steps' ? textW(it.icons, 13, 700) + 8 : sample;
    const ws = wrap(it.words, width - 12 - sw - 4, size, 400);
    const w = sw + 4 + widest(ws, size, 400);
    if (x + w > width - 6 && x > 6) {
      line += 1 + extra;
      extra = 0;
      x = 6;
    }
    placedItems.push({ it, x, line, sw, ws });
    extra = Math.max(extra, ws.length - 1);
    x += w + 14;
  }
  const h = (line + 1 + extra) * lh + 4;
  return {
    h,
    draw(top) {
      const g = svg(
        'g',
        { class: 'legend', 'data-legend': 'true' },
        svg('text', { x: 6, y: top + size + 2, class: 'legend-head', text: head }),
      );
      for (const { it, x: at, line: l, sw, ws } of placedItems) {
        // Each item is drawn at its own origin and put in place by a
        // transform, and names itself (data-k): an item that comes earlier
        // in the legend moves the ones after it by one attribute each.
        const ix = 0;
        const cy = size / 2 + 4;
        const name = it.kind + (it.o || it.arrow || it.state || it.charge || (it.m && it.m.kind) || '');
        const item = svg('g', {
          class: 'legend-item',
          'data-legend-item': name,
          'data-k': 'lg:' + name,
          transform: 'translate(' + at + ',' + (top + l * lh) + ')',
        });
        if (it.kind === 'outcome')
          item.append(
            svg('text', { x: ix + sw / 2, y: cy + 5, 'text-anchor': 'middle', class: 'lg-outcome lg-' + it.o, text: OUTCOME_ICON[it.o] }),
          );
        else if (it.kind === 'winner')
          item.append(svg('text', { x: ix + sw / 2, y: cy + 5, 'text-anchor': 'middle', class: 'lg-winner', text: '★' }));
        else if (it.kind === 'count')
          item.append(svg('text', { x: ix + sw / 2, y: cy + 4, 'text-anchor': 'middle', class: 'lg-count', text: '×n' }));
        else if (it.kind === 'mark')
          item.append(
            svg(
              'g',
              { class: 'lg-mark k-' + it.m.kind },
              svg('rect', { x: ix + 5, y: cy - 10, width: 16, height: 20, rx: 3 }),
              svg('text', { x: ix + 13, y: cy + 5, 'text-anchor': 'middle', class: 'mark-icon', text: it.m.icon }),
            ),
          );
        else if (it.kind === 'steps') item.append(svg('text', { x: ix + 2, y: cy + 5, class: 'lg-steps', text: it.icons }));
        else if (it.kind === 'arrow')
          item.append(
            svg('path', {
              d: `M${ix + 2},${cy} H${ix + sw - 4}`,
              class: 'lg-arrow arrow-' + it.arrow,
              'marker-end': 'url(#race-head-' + it.arrow + '-' + c.heads + ')',
            }),
          );
        else if (it.kind === 'money')
          item.append(
            svg(
              'g',
              { class: 'lg-money' + (it.again ? ' again' : '') },
              svg('rect', { x: ix + 5, y: cy - 10, width: 16, height: 20, rx: 3 }),
              svg('text', {
                x: ix + 13,
                y: cy + 5,
                'text-anchor': 'middle',
                class: 'money-icon',
                text: it.again ? LEDGER_ICON.again : LEDGER_ICON.one,
              }),
            ),
          );
        else if (it.kind === 'charge')
          item.append(
            svg(
              'g',
              { class: 'lg-charge' + (it.charge === 'again' ? ' charge-again' : it.charge === 'replayed' ? ' charge-replayed' : '') },
              svg('rect', { x: ix + 5, y: cy - 10, width: 16, height: 20, rx: 3 }),
              svg('text', { x: ix + 13, y: cy + 5, 'text-anchor': 'middle', class: 'money-icon', text: CHARGE_ICON[it.charge] }),
            ),
          );
        else if (it.kind === 'state') {
          item.append(
            it.state === 'absent'
              ? svg('line', { x1: ix + 2, x2: ix + sw - 2, y1: cy, y2: cy, class: 'absent' })
              : svg(
                  'g',
                  // Styled by the key row's own rules (race.css .seg).
                  { class: 'lg-seg seg seg-' + it.state.replace('_', '-') },
                  svg('rect', { x: ix + 2, y: cy - 8, width: sw - 4, height: 16, rx: 3 }),
                  svg('text', {
                    x: ix + sw / 2,
                    y: cy + 4,
                    'text-anchor': 'middle',
                    class: 'seg-text',
                    text: it.state === 'completed' ? '✔' : it.state === 'in_progress' ? '◐' : '▭',
                  }),
                ),
          );
        } else if (it.kind === 'current') {
          item.append(svg('g', { class: 'lg-current' }, svg('rect', { x: ix + 5, y: cy - 10, width: 16, height: 20, rx: 3 })));
        } else if (it.kind === 'bracket') {
          item.append(svg('path', { d: `M${ix + 8},${cy - 8} H${ix + 14} V${cy + 8} H${ix + 8}`, class: 'lg-bracket' }));
        }
        item.append(lines(ws, ix + sw + 4, cy + 4, lh, { class: 'legend-text' }));
        g.append(item);
      }
      return g;
    },
  };
}

function markWord(m, t) {
  switch (m.kind) {
    case 'paid':
      return m.amount ? t('racePaid', { amount: won(m.amount) }) : t('racePaidSome');
    case 'paid-again':
      return m.amount ? t('racePaidAgain', { amount: won(m.amount) }) : t('racePaidAgainSome');
    default:
      return t('raceMark_' + m.kind.replace('-', '_')) + (m.ev.status ? ' ' + m.ev.status : '');
  }
}

// answerWords says how an attempt ended. asSent (the lab): the status is
// the handler's own, said as a number, never in idemlab's words for what
// that status means at its levels (the body is the handler's too: the
// answer's title shows it as sent). charged: the processor charged for
// this attempt, which an unheard answer says though the ledger did not
// move.
function answerWords(a, t, count, asSent, charged) {
  const s = a.answer.status;
  let w;
  switch (a.answer.kind) {
    case 'crashed':
      w = t('raceCrashedWord');
      break;
    case 'lost':
      w = t('raceLostWord', { status: s });
      break;
    case 'timed-out':
      w = t('raceTimedOutWord', { status: s });
      break;
    case 'replayed':
      w = t('raceReplayedWord', { status: s });
      break;
    case 'generic':
      w = t('raceGenericWord', { status: s });
      break;
    case 'recomputed':
      w = t('raceRecomputedWord', { status: s });
      break;
    default:
      w = asSent ? '✉ ' + t('raceAnswered', { status: s }) : statusWords(s, t);
  }
  // The client heard nothing, and the money moved all the same.
  const unheard = a.answer.kind === 'lost' || a.answer.kind === 'timed-out' || a.answer.kind === 'crashed';
  if (unheard && a.marks.some((m) => m.kind === 'paid' || m.kind === 'paid-again')) w += ' — ' + t('raceButPaid');
  else if (unheard && charged) w += ' — ' + t('raceButCharged');
  return count ? t('raceCount', { n: count, what: w }) : w;
}

function statusWords(s, t) {
  const k = 'raceStatus' + s;
  const w = t(k);
  return w === k ? t('raceAnswered', { status: s }) : w;
}

// --- export ---------------------------------------------------------------------------

// raceCSS is the text of race.css, fetched once (the page links the same
// file), for a picture that must carry its own style.
let cssText = null;
export async function raceCSS() {
  if (cssText === null) {
    const r = await fetch(new URL('./race.css', import.meta.url));
    cssText = r.ok ? await r.text() : '';
  }
  return cssText;
}

// raceSVGText returns the drawn view as a standalone SVG document, its
// style (race.css) inside it, for a slide or a homework sheet.
export function raceSVGText(svgEl, css) {
  const copy = svgEl.cloneNode(true);
  copy.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  const style = document.createElementNS('http://www.w3.org/2000/svg', 'style');
  style.textContent = css;
  copy.insertBefore(style, copy.firstChild);
  // Interactive state is not part of a picture.
  for (const e of copy.querySelectorAll('[tabindex]')) e.removeAttribute('tabindex');
  return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(copy);
}

// exportRace saves the view as name.svg, or as name.png at twice its size.
export async function exportRace(svgEl, name, format = 'svg') {
  const text = raceSVGText(svgEl, await raceCSS());
  let blob = new Blob([text], { type: 'image/svg+xml' });
  if (format === 'png') blob = await svgToPNG(text, Number(svgEl.getAttribute('width')), Number(svgEl.getAttribute('height')));
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name + '.' + format;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  return blob;
}

export function svgToPNG(text, w, h, scale = 2) {
  return new Promise((resolve, reject) => {
    const img = new Image();
    img.onload = () => {
      const canvas = document.createElement('canvas');
      canvas.width = Math.ceil(w * scale);
      canvas.height = Math.ceil(h * scale);
      const ctx = canvas.getContext('2d');
      ctx.fillStyle = '#ffffff';
      ctx.fillRect(0, 0, canvas.width, canvas.height);
      ctx.scale(scale, scale);
      ctx.drawImage(img, 0, 0);
      canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('no PNG'))), 'image/png');
    };
    img.onerror = () => reject(new Error('the SVG did not load as an image'));
    img.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(text);
  });
}
