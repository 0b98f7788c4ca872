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
//                  // note is shown as words, never read
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


import { svg, won } from './dom.js';
import { t as defaultT, ruleTitle, inLang } from './strings.js';
import { KEY_PHASES } from './race-model.js';

export { buildRace, timeOf } from './race-model.js';

// --- layout --------------------------------------------------------------------

// layoutRows orders each group (the winner pinned on top) and collapses
// identical attempts when a group is large.
function layoutRows(model, opts) {
  const rows = [];
  const collapseOver = opts.collapseOver ?? 12;
  const expanded = opts.expanded || new Set();
  const maxRows = opts.maxRows ?? 120;
  let hidden = 0;
  const laneRow = new Map();
  rows.push({ type: 'ledger' });
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

const ROW_H = 36;
const ROW_H_COMPACT = 46; // the answer's words get a line of their own
const DB_H = 36;
const LEDGER_H = 52;
const AXIS_H = 40;

let clipIds = 0;

// drawRace draws the model into container (see the top of this file) and
// returns the <svg> element. The whole history is drawn once; the cursor
// only shows or hides what happened after it (seekRace), so scrubbing a
// recorded storm redraws nothing. Called again with the same model and
// the same options but another cursor or step shown, it only seeks.
export function drawRace(container, model, opts = {}) {
  const t = opts.t || defaultT;
  const compact = opts.compact ?? (container.clientWidth > 0 && container.clientWidth < 600);
  const width0 = opts.width || container.clientWidth || 900;
  const key = [compact, Math.round(width0), opts.collapseOver, opts.maxRows, opts.selectedLane, [...(opts.expanded || [])].join('\u0001')].join('|');
  const old = container.firstElementChild;
  if (old && old.__race && old.__race.model === model && old.__race.key === key) {
    seekRace(old, opts.cursor ?? model.events.length, opts.currentSeq);
    return old;
  }
  const labelW = compact ? 96 : 190;
  const answerW = compact ? 24 : 210;
  const rowH = compact ? ROW_H_COMPACT : ROW_H;
  const timeClock = model.clock === 'time';
  // Waiting and running lanes on the bench show their next phase one
  // column to the right of everything that has happened.
  const ghosts = [...model.attempts.values()].some((a) => a.state === 'waiting' || a.state === 'running');
  const cols = model.span + (ghosts ? 1 : 0);
  // The plot takes what the labels, the answers and the broken rules'
  // brackets leave of the width asked for, so the view fits it.
  const vioCount = Math.min(6, model.violations.filter((v) => v.lanes.length).length);
  const avail = Math.max(160, width0 - labelW - answerW - 24 - vioCount * 22);
  const unit = timeClock ? Math.min(60, avail / cols) : Math.max(compact ? 22 : 26, Math.min(64, avail / cols));
  const X = (x) => labelW + 12 + x * unit;
  const plotW = cols * unit + 12;
  const { rows, laneRow, hidden } = layoutRows(model, opts);

  // Rows' vertical positions.
  let y = AXIS_H;
  for (const r of rows) {
    r.y = y;
    r.h = r.type === 'ledger' ? LEDGER_H : r.type === 'db' ? DB_H : rowH;
    y += r.h + (r.type === 'db' ? 2 : 0);
  }
  const violations = model.violations.filter((v) => v.lanes.length).slice(0, 6);
  const vioH = violations.length ? 10 + violations.length * 20 : 0;
  const height = y + (hidden ? 22 : 0) + vioH + 6;
  const width = labelW + 12 + plotW + answerW + violations.length * 22;

  const root = svg('svg', {
    xmlns: 'http://www.w3.org/2000/svg', class: 'race' + (compact ? ' compact' : ''), width, height,
    viewBox: `0 0 ${width} ${height}`, role: 'group', 'aria-label': t('raceTitle'), 'data-clock': model.clock,
    'data-attempts': model.attempts.size,
  });
  root.append(svg('title', { text: t('raceTitle') }));
  const clipId = 'race-now-' + ++clipIds;
  const clipRect = svg('rect', { x: 0, y: 0, width, height });
  root.append(svg('defs', {},
    svg('clipPath', { id: clipId }, clipRect),
    ...['duplicate', 'conflict', 'mismatch', 'replay'].map((k) => svg('marker', {
      id: 'race-head-' + k, viewBox: '0 0 10 10', refX: 8, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse',
    }, svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'head head-' + k })))));

  root.append(drawAxis(model, { X, t, height: height - vioH, unit }));
  const c = { X, labelW, t, width, unit, compact, clip: 'url(#' + clipId + ')', opts, cols, rowH };
  const rowsLayer = svg('g', { class: 'rows' });
  for (const r of rows) {
    if (r.type === 'ledger') drawLedger(rowsLayer, r, model, c);
    else if (r.type === 'db') drawDB(rowsLayer, r, model, c);
    else drawAttempt(rowsLayer, r, model, c);
  }
  root.append(rowsLayer, drawArrows(model, rows, laneRow, c));

  // Broken rules: a bracket right of the answers joins the rows of the
  // attempts each names, with its number; the sentences are listed below.
  const vio = svg('g', { class: 'violations', 'data-verdict-layer': 'true' });
  violations.forEach((v, k) => {
    const ys = v.lanes.map((l) => laneRow.get(l)).filter(Boolean).map((r) => r.y + r.h / 2);
    if (!ys.length) return;
    const bx = width - 26 - k * 22;
    const y0 = Math.min(...ys);
    const y1 = Math.max(...ys);
    vio.append(svg('g', { class: 'violation', 'data-violation': v.rule.name || '', 'data-lanes': v.lanes.join(',') },
      svg('path', { d: `M${bx - 6},${y0} H${bx} V${y1} H${bx - 6}`, class: 'bracket' }),
      ...ys.map((yy) => svg('circle', { cx: bx - 6, cy: yy, r: 3, class: 'bracket-dot' })),
      svg('text', { x: bx + 2, y: (y0 + y1) / 2 + 4, class: 'bracket-n', text: '✘' + v.n }),
      svg('title', { text: '✘' + v.n + ' ' + ruleTitle(v.rule) + ': ' + inLang(v.message, v.message_ko) })));
  });
  let ly = y + (hidden ? 22 : 0) + 14;
  for (const v of violations) {
    const line = '✘' + v.n + ' ' + t('raceBroken') + ' — ' + ruleTitle(v.rule) + ': ' + inLang(v.message, v.message_ko);
    vio.append(svg('text', { x: 6, y: ly, class: 'violation-text', 'data-violation': v.rule.name || '', text: clip(line, Math.floor(width / 8.3)) },
      svg('title', { text: line })));
    ly += 20;
  }
  root.append(vio);
  if (hidden) root.append(svg('text', { x: 6, y: y + 15, class: 'more', 'data-hidden': hidden, text: t('raceMore', { n: hidden }) }));
  const now = svg('line', { y1: AXIS_H - 6, y2: y, class: 'now', 'data-now': '' });
  root.append(now);

  // Everything is drawn and shown: the cursor is at the end. Seeking
  // elsewhere (a recorded storm) first lists the elements that belong to
  // a moment, in order; the bench never needs that list.
  now.setAttribute('visibility', 'hidden');
  root.setAttribute('data-cursor', model.events.length);
  root.__race = { model, key, X, unit, clipRect, now, vio, labelW, timed: null, idx: null, cursor: model.events.length, current: undefined };
  container.replaceChildren(root);
  seekRace(root, opts.cursor ?? model.events.length, opts.currentSeq);
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

function drawAxis(model, c) {
  const { X, t, height } = c;
  const axis = svg('g', { class: 'axis' });
  axis.append(svg('text', { x: 4, y: 15, class: 'axis-label', text: model.clock === 'time' ? t('raceAxisTime') : t('raceAxisStep') }));
  let lastTick = -Infinity;
  let lastLabel = '';
  const t0 = model.times && model.times.length ? model.times[0] : 0;
  for (let i = 0; i < model.events.length; i++) {
    const px = X(model.xs[i]);
    if (px - lastTick < (model.clock === 'time' ? 64 : 28)) continue;
    const label = model.clock === 'time' ? fmtMS(model.times[i] - t0) : String(i + 1);
    if (label === lastLabel) continue;
    lastTick = px;
    lastLabel = label;
    axis.append(svg('line', { x1: px, x2: px, y1: AXIS_H - 4, y2: height, class: 'tick' }),
      svg('text', { x: px, y: 15, class: 'tick-label', 'text-anchor': 'middle', text: label }));
  }
  // A quiet stretch drawn shorter than it was says how long it was.
  for (const b of model.breaks || []) {
    const x0 = X(b.x0);
    const x1 = X(b.x1);
    if (x1 - x0 < 16) continue;
    axis.append(svg('g', { class: 'break', 'data-break-ms': Math.round(b.ms) },
      svg('rect', { x: x0 + 2, y: 19, width: x1 - x0 - 4, height: 4, rx: 2 }),
      x1 - x0 > 60 ? svg('text', { x: (x0 + x1) / 2, y: 34, 'text-anchor': 'middle', class: 'break-label', text: '≈ ' + fmtMS(b.ms) }) : null,
      svg('title', { text: t('raceBreak', { ms: fmtMS(b.ms) }) })));
  }
  return axis;
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
      ty = toRow.y + toRow.h / 2;
    } else {
      const dbRow = rows.find((r) => r.type === 'db' && r.group.id === fromRow.group.id);
      if (!dbRow) continue;
      tx = (ar.from.px ?? X(ar.from.x)) - Math.max(4, unit * 0.3);
      ty = dbRow.y + dbRow.h - 3;
    }
    const fx = ar.from.px ?? X(ar.from.x);
    const fy = fromRow.y + fromRow.h / 2;
    const dir = ty < fy ? 1 : -1;
    const path = `M${fx},${fy - dir * 9} C${fx},${(fy + ty) / 2} ${tx},${(fy + ty) / 2} ${tx},${ty + dir * 9}`;
    layer.append(svg('path', {
      d: path, class: 'arrow arrow-' + ar.kind, 'marker-end': 'url(#race-head-' + ar.kind + ')', 'data-arrow': ar.kind, 'data-i': ar.from.i,
      'data-from-lane': ar.from.lane, 'data-from-seq': ar.from.ev.seq, 'data-to-lane': ar.toLane || '', 'data-to': ar.toDb || '',
    }, svg('title', { text: t('raceArrow_' + ar.kind, { from: labelOfLane(model, ar.from.lane), to: labelOfLane(model, ar.toLane) }) })));
  }
  return layer;
}

function labelOfLane(model, id) {
  const a = id && model.attempts.get(id);
  return a ? a.label : id || '';
}

function clip(s, n) {
  return s.length > n ? s.slice(0, Math.max(1, n - 1)) + '…' : s;
}

// fmtMS writes a span of milliseconds as a person reads it.
export function fmtMS(ms) {
  if (ms < 10) return (Math.round(ms * 10) / 10) + ' ms';
  if (ms < 1000) return Math.round(ms) + ' ms';
  if (ms < 60000) return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + ' s';
  const m = Math.floor(ms / 60000);
  if (m < 60) return m + ' min';
  return Math.floor(m / 60) + ' h ' + (m % 60) + ' min';
}

function drawLedger(parent, r, model, c) {
  const { X, t } = c;
  const g = svg('g', { class: 'row row-ledger', 'data-row': 'ledger' },
    svg('rect', { x: 0, y: r.y, width: c.width, height: r.h, class: 'band band-ledger' }),
    svg('text', { x: 8, y: r.y + 20, class: 'row-label', text: '⛁ ' + t('raceLedger') }),
    svg('text', { x: 8, y: r.y + 40, class: 'row-sub', text: clip(model.opening.map(([k, v]) => k + ' ' + won(v)).join(' · '), Math.floor((c.labelW - 8) / 6.5)) }),
    svg('title', { text: t('raceLedger') + ': ' + model.opening.map(([k, v]) => k + ' ' + won(v)).join(' · ') }));
  const inTime = svg('g', { 'clip-path': c.clip });
  const ledger = model.ledger;
  ledger.forEach((p, k) => {
    const x = X(p.x);
    const word = markWord({ kind: p.again ? 'paid-again' : 'paid', amount: p.amount }, t);
    inTime.append(svg('g', { class: 'money' + (p.again ? ' money-again' : ''), 'data-mark': p.again ? 'paid-again' : 'paid', 'data-lane': p.lane, 'data-seq': model.events[p.i].seq },
      svg('rect', { x: x - 9, y: r.y + 4, width: 18, height: 28, rx: 3 }),
      svg('text', { x, y: r.y + 23, 'text-anchor': 'middle', class: 'money-icon', text: p.again ? '✘' : '■' }),
      svg('title', { text: word + ' · ' + labelOfLane(model, p.lane) + (p.transfer ? ' · ' + p.transfer : '') + (p.balances ? ' · ' + p.balances.map(([a, v]) => a + ' ' + won(v)).join(', ') : '') })));
    // Words where the row has room before the next payment: a second
    // payment says so; a first one says the balances after it.
    const next = ledger[k + 1];
    const room = (next ? X(next.x) - 12 : c.width - 12) - (x + 12);
    const label = p.again ? '✘ ' + word + ' (' + labelOfLane(model, p.lane) + ')' : p.balances ? p.balances.map(([a, v]) => a + ' ' + won(v)).join(' · ') : '';
    if (label && room >= label.length * 7.2) {
      inTime.append(svg('text', { x: x + 12, y: r.y + (p.again ? 23 : 46), class: p.again ? 'paid-again-text' : 'row-sub balance-after', 'data-mark': p.again ? 'paid-again-text' : null, 'data-lane': p.lane, text: label }));
    }
  });
  g.append(inTime);
  // Many second payments: their sum in words, on the row's second line.
  const again = ledger.filter((p) => p.again);
  if (again.length > 1) {
    const sum = again.reduce((n, p) => n + p.amount, 0);
    g.append(svg('text', { x: c.width - 8, y: r.y + 47, 'text-anchor': 'end', class: 'paid-again-text halo', 'data-mark': 'paid-again-total', 'data-i': again[again.length - 1].i,
      text: sum ? t('racePaidAgainTotal', { n: again.length, amount: won(sum) }) : t('racePaidAgainCount', { n: again.length }) }));
  }
  parent.append(g);
}

function drawDB(parent, r, model, c) {
  const { X, t } = c;
  const gr = r.group;
  // Under the server-cache claim the key lives in the servers' memories,
  // each its own: the row says so rather than call it a database row.
  const keyWord = model.policy.claim === 'server-cache' ? 'raceCacheRow' : 'raceKeyRow';
  const name = gr.key ? t(keyWord, { key: gr.key }) : t('raceIntentRow', { intent: gr.intent });
  const g = svg('g', { class: 'row row-db', 'data-row': 'db', 'data-key': gr.key || '', 'data-intent': gr.intent || '', 'data-lanes-in': gr.attempts.map((a) => a.id).join(' ') },
    svg('rect', { x: 0, y: r.y, width: c.width, height: r.h, class: 'band band-db' }),
    svg('text', { x: 8, y: r.y + 23, class: 'row-label db-label', text: '▤ ' + clip(name, c.compact ? 11 : 17) }, svg('title', { text: name })));
  const inTime = svg('g', { 'clip-path': c.clip });
  const end = c.width - 12;
  const startX = X(0);
  if (!gr.key || model.policy.claim === 'none') {
    g.append(svg('text', { x: c.compact ? 8 : startX, y: r.y + (c.compact ? 33 : 23), class: 'db-none', text: t(c.compact ? 'raceNoKeyTableShort' : 'raceNoKeyTable') }));
  } else {
    const first = gr.db[0];
    inTime.append(svg('line', { x1: startX, x2: first ? X(first.x0) : end, y1: r.y + r.h / 2, y2: r.y + r.h / 2, class: 'absent' }));
    if (!first) inTime.append(svg('text', { x: startX + 4, y: r.y + 12, class: 'db-state-text', text: t('raceAbsent') }));
  }
  gr.db.forEach((s, k) => {
    const x0 = X(s.x0);
    const next = gr.db[k + 1];
    const x1 = next ? X(next.x0) : end;
    const label = s.state === 'completed'
      ? t('raceCompleted', { status: s.status || '', owner: labelOfLane(model, s.owner) })
      : s.state === 'in_progress' ? t('raceInProgress', { owner: labelOfLane(model, s.owner) }) : t('raceRecorded', { state: s.state, owner: labelOfLane(model, s.owner) });
    // A narrow segment says less, never nothing: the state's sign and who.
    const short = (s.state === 'completed' ? '✔ ' + (s.status || '') : s.state === 'in_progress' ? '◐' : '▭') + ' ' + labelOfLane(model, s.owner);
    const room = (x1 - x0 - 8) / 7;
    inTime.append(svg('g', { class: 'seg seg-' + s.state.replace('_', '-'), 'data-db-state': s.state, 'data-owner': s.owner, 'data-seq': model.events[s.i].seq },
      svg('rect', { x: x0, y: r.y + 4, width: Math.max(4, x1 - x0), height: r.h - 8, rx: 4 }),
      svg('text', { x: x0 + 5, y: r.y + r.h / 2 + 4, class: 'seg-text', text: room >= label.length ? label : clip(short, Math.max(2, Math.floor(room))) }),
      svg('title', { text: label })));
  });
  g.append(inTime);
  parent.append(g);
}

function drawAttempt(parent, r, model, c) {
  const { X, t, opts, unit, compact } = c;
  const a = r.attempt;
  const collapsed = r.type === 'collapsed';
  const selectable = !!opts.onSelectLane && !collapsed;
  const movable = a.state === 'waiting' || a.state === 'running';
  const selected = opts.selectedLane === a.id;
  const verdict = a.paidAgain ? 'fail' : a.verdict || (a.answer ? (a.answer.kind === 'lost' || a.answer.kind === 'timed-out' || a.answer.kind === 'crashed' ? 'info' : 'ok') : 'pending');
  const attrs = {
    class: 'row row-attempt verdict-' + verdict + (r.winner ? ' winner' : '') + (selected ? ' selected' : '') + (collapsed ? ' collapsed' : ''),
    'data-row': collapsed ? 'collapsed' : 'attempt', 'data-lane': a.id, 'data-verdict': verdict, 'data-state': a.state || null,
    'data-winner': r.winner ? 'true' : null, 'data-count': collapsed ? r.members.length : null,
    'data-lanes': collapsed ? r.members.map((m) => m.id).join(',') : null,
    'data-server': model.servers > 1 && a.server ? a.server : null,
  };
  if (selectable) {
    Object.assign(attrs, { role: 'radio', 'aria-checked': selected ? 'true' : 'false', 'aria-disabled': movable ? null : 'true', tabindex: movable ? 0 : -1,
      'aria-label': t('chooseLane') + ': ' + a.label, onclick: () => movable && opts.onSelectLane(a.id),
      onkeydown: (e) => { if ((e.key === 'Enter' || e.key === ' ') && movable) { e.preventDefault(); e.stopPropagation(); opts.onSelectLane(a.id); } } });
  }
  const g = svg('g', attrs);
  const midY = compact ? r.y + 16 : r.y + r.h / 2;
  g.append(svg('rect', { x: 0, y: r.y, width: c.width, height: r.h, class: 'band' }));
  // The label: who, and how it ended (icon and word, never colour alone).
  const vIcon = { ok: '✔', info: 'ℹ', fail: '✘', pending: '…' }[verdict] || '…';
  const head = collapsed ? '× ' + r.members.length : (r.winner ? '★ ' : '') + (selected ? '▶ ' : '') + clip(a.label, compact ? 8 : 14);
  // Which app server the attempt reached, in words and a stripe of its own
  // colour (never the colour alone).
  const server = model.servers > 1 && a.server && !collapsed ? t('laneServer', { n: a.server }) : '';
  if (server) g.append(svg('rect', { x: 0, y: r.y + 2, width: 4, height: r.h - 4, class: 'server-stripe server-' + a.server }));
  // On a narrow screen the label column has no room for the server beside
  // the name: it goes on the row's second line, at the column's right.
  g.append(svg('text', { x: 8, y: midY + 5, class: 'row-label' }, svg('tspan', { class: 'v-icon', text: vIcon + ' ' }), head,
    server && !compact ? svg('tspan', { class: 'server-tag server-' + a.server, 'data-server-tag': a.server, text: ' · ' + server }) : null,
    svg('title', { text: a.label + (server ? ' · ' + server : '') + (a.verdict_text ? ' — ' + inLang(a.verdict_text, a.verdict_text_ko) : '') })));
  if (server && compact) {
    g.append(svg('text', { x: c.labelW - 6, y: r.y + r.h - 4, 'text-anchor': 'end', class: 'row-label' },
      svg('tspan', { class: 'server-tag server-' + a.server, 'data-server-tag': a.server, text: server })));
  }
  if (r.winner) {
    g.append(compact
      ? svg('text', { x: 8, y: r.y + r.h - 4, class: 'winner-tag small', text: t('raceWinner') })
      : svg('text', { x: c.labelW - 6, y: midY + 5, 'text-anchor': 'end', class: 'winner-tag', text: t('raceWinner') }));
  }
  if (collapsed) {
    g.append(svg('text', { x: c.labelW - 6, y: midY + 5, 'text-anchor': 'end', class: 'expand', role: opts.onToggle ? 'button' : null, tabindex: opts.onToggle ? 0 : null,
      'data-expand': r.id, onclick: opts.onToggle ? () => opts.onToggle(r.id) : null,
      onkeydown: opts.onToggle ? (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); opts.onToggle(r.id); } } : null,
      text: '▸ ' + t('raceExpand') }));
  } else if (r.expandedFrom && opts.onToggle) {
    g.append(svg('text', { x: c.labelW - 6, y: midY + 5, 'text-anchor': 'end', class: 'expand', role: 'button', tabindex: 0, 'data-collapse': r.expandedFrom,
      onclick: () => opts.onToggle(r.expandedFrom), text: '▾' }));
  }
  // The attempt's marks, one per event, at its moment; on the trace's
  // clock marks of one row keep a little room between them, so that a
  // claim 0.1 ms after the receive is still its own mark.
  const ms = a.marks;
  const minGap = model.clock === 'time' ? (compact ? 13 : 17) : 0;
  let prevPx = -Infinity;
  for (const m of ms) {
    m.px = Math.max(X(m.x), prevPx + minGap);
    prevPx = m.px;
  }
  // Its life: a line from each event to the next.
  for (let k = 1; k < ms.length; k++) {
    g.append(svg('line', { x1: ms[k - 1].px, x2: ms[k].px, y1: midY, y2: midY, class: 'life', 'data-i': ms[k].i }));
  }
  const wideSpan = model.clock === 'time';
  for (const m of ms) {
    const cx = m.px;
    const wide = m.kind === 'paid' || m.kind === 'paid-again';
    const mw = model.clock === 'time' ? (wide ? 16 : 14) : wide ? Math.max(unit * 0.9, 20) : Math.max(Math.min(unit * 0.8, 20), 12);
    const word = markWord(m, t);
    const mAttrs = {
      class: 'mark k-' + m.kind, 'data-mark': m.kind, 'data-seq': m.ev.seq, 'data-lane': a.id, 'data-i': m.i,
      'data-phase': m.ev.phase, 'data-outcome': m.ev.outcome, 'data-status': m.ev.status || null,
    };
    if (opts.onMark) {
      Object.assign(mAttrs, { role: 'button', tabindex: -1, 'aria-label': a.label + ' · ' + m.ev.phase + ' · ' + word,
        onclick: (e) => { e.stopPropagation(); opts.onMark(m.ev); } });
    }
    if (wideSpan && X(m.x) - X(m.x0) > 24) {
      // A phase that took time (the payment call): a bar over its span.
      g.append(svg('rect', { x: X(m.x0), y: midY - 4, width: X(m.x) - X(m.x0), height: 8, class: 'span span-' + m.kind, rx: 2, 'data-i': m.i }));
    }
    g.append(svg('g', mAttrs,
      svg('rect', { x: cx - mw / 2, y: midY - (compact ? 11 : 13), width: mw, height: compact ? 22 : 26, rx: 4 }),
      svg('text', { x: cx, y: midY + 5, 'text-anchor': 'middle', class: 'mark-icon', text: m.icon }),
      svg('title', { text: a.label + ' · ' + m.ev.phase + ' · ' + word + (m.ev.note ? '\n' + m.ev.note : '') + (m.ev.sql ? '\n' + m.ev.sql : '') })));
  }
  // The next phase of a lane still on its way (the bench).
  if (movable && a.next_phase && !collapsed) {
    const gx = X(c.cols - 1);
    g.append(svg('g', { class: 'mark ghost' + (selected ? ' ghost-next' : ''), 'data-mark': 'next', 'data-phase': a.next_phase, 'data-lane': a.id },
      svg('rect', { x: gx - 10, y: midY - 13, width: 20, height: 26, rx: 4 }),
      svg('text', { x: gx + 14, y: midY + 4, class: 'ghost-text', text: (a.next_part === 'lock' ? '⋯ ' + t('raceWaitsLock') : t('raceNext', { phase: a.next_phase + (a.next_part ? ' (' + a.next_part + ')' : '') })) +
        // The fault the scenario scripted for this lane, as the cards said it.
        (a.fault && a.fault.kind ? ' · ⚡ ' + t('laneScriptedFault', { kind: a.fault.kind, phase: a.fault.phase }) : '') })));
  }
  // How it ended, in words: after its last mark, or (compact) under it.
  const last = ms[ms.length - 1];
  if (a.answer && last && a.state !== 'running') {
    const words = answerWords(a, t, collapsed ? r.members.length : 0);
    const at = compact ? { x: Math.max(c.labelW + 4, Math.min(last.px, c.width - words.length * 6.6 - 4)), y: r.y + r.h - 4 } : { x: last.px + 14, y: midY + 5 };
    const text = svg('text', { x: at.x, y: at.y, class: 'answer answer-' + a.answer.kind, 'data-answer': a.answer.kind, 'data-status': a.answer.status || null, 'data-i': last.i, text: words });
    if (a.paidAgain) {
      const again = ms.find((m) => m.kind === 'paid-again');
      text.append(svg('tspan', { class: 'paid-again-text', 'data-mark': 'paid-again-text', text: ' · ✘ ' + markWord(again, t) }));
    }
    g.append(text);
  } else if (a.state === 'crashed' && !ms.length) {
    g.append(svg('text', { x: X(0), y: midY + 5, class: 'answer answer-crashed', text: t('raceCrashedWord') }));
  }
  parent.append(g);
}

function markWord(m, t) {
  switch (m.kind) {
    case 'paid': return m.amount ? t('racePaid', { amount: won(m.amount) }) : t('racePaidSome');
    case 'paid-again': return m.amount ? t('racePaidAgain', { amount: won(m.amount) }) : t('racePaidAgainSome');
    default: return t('raceMark_' + m.kind.replace('-', '_')) + (m.ev.status ? ' ' + m.ev.status : '');
  }
}

function answerWords(a, t, count) {
  const s = a.answer.status;
  let w;
  switch (a.answer.kind) {
    case 'crashed': w = t('raceCrashedWord'); break;
    case 'lost': w = t('raceLostWord', { status: s }); break;
    case 'timed-out': w = t('raceTimedOutWord', { status: s }); break;
    case 'replayed': w = t('raceReplayedWord', { status: s }); break;
    default: w = statusWords(s, t);
  }
  // The client heard nothing, and the money moved all the same.
  const unheard = a.answer.kind === 'lost' || a.answer.kind === 'timed-out' || a.answer.kind === 'crashed';
  if (unheard && a.marks.some((m) => m.kind === 'paid' || m.kind === 'paid-again')) w += ' — ' + t('raceButPaid');
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

