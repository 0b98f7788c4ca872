// race.js draws the race view: a space-time diagram of client attempts.
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
//   import { buildRace, drawRace, raceSVGText, exportRace } from './race.js';
//
//   const model = buildRace({
//     events,      // engine trace events: seq, lane, intent, customer, key,
//                  // phase, sql, outcome, status, note, and at_ms or t_us
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
// Every mark carries data attributes, so tests and stylesheets find them
// without the words: rows data-lane / data-row (attempt | db | ledger |
// collapsed) / data-winner; marks data-mark (claim, duplicate, conflict,
// mismatch, replay, paid, paid-again, declined, crashed, answer, lost, …),
// data-seq, data-lane; arrows data-arrow (duplicate | conflict | mismatch
// | replay) with data-from-lane and data-to-lane or data-to; violations
// data-violation (the rule's name) with data-lanes.

import { svg } from './dom.js';
import { t as defaultT } from './strings.js';

// --- the model ---------------------------------------------------------------

const KEY_PHASES = new Set(['claim', 'compare', 'commit', 'store-response']);

function timeOf(e) {
  if (e.t_us !== undefined) return e.t_us / 1000;
  return e.at_ms || 0;
}

function amountOf(attempt, ev) {
  const m = ev && /moved (\d+) won/.exec(ev.note || '');
  if (m) return Number(m[1]);
  try {
    return JSON.parse(attempt.body || '{}').amount || 0;
  } catch {
    return 0;
  }
}

// PHASE_ICON marks the phases that decide nothing by themselves.
const PHASE_ICON = { receive: '⇢', validate: '✓', fingerprint: '#', compare: '=', 'store-response': '▤', respond: '✉' };

// markOf says what one trace event is, as a mark on its attempt's row:
// its kind (data-mark), its icon and its word key in strings.js.
function markOf(e) {
  const o = e.outcome;
  switch (e.phase) {
    case 'claim':
      if (o === 'claimed') return { kind: 'claim', icon: '◆' };
      if (o === 'taken-over') return { kind: 'takeover', icon: '↻' };
      if (o === 'duplicate') return { kind: 'duplicate', icon: '≡' };
      if (o === 'conflict') return { kind: 'conflict', icon: '‖' };
      if (o === 'ok') return { kind: 'lookup', icon: '?' };
      break;
    case 'compare':
      if (o === 'mismatch') return { kind: 'mismatch', icon: '≠' };
      if (o === 'conflict') return { kind: 'conflict', icon: '‖' };
      if (o === 'replayed') return { kind: 'replay', icon: '↺' };
      break;
    case 'execute':
      if (o === 'executed') return { kind: 'pay-call', icon: '→' };
      break;
    case 'commit':
      if (o === 'committed') return { kind: 'paid', icon: '■' };
      if (o === 'declined') return { kind: 'declined', icon: '⊘' };
      if (o === 'conflict') return { kind: 'conflict', icon: '‖' };
      break;
    case 'store-response':
      if (o === 'stored') return { kind: 'stored', icon: '▤' };
      if (o === 'duplicate') return { kind: 'late-key', icon: '≡' };
      break;
    case 'respond':
      if (o === 'delivered') return { kind: 'answer', icon: '✉' };
      if (o === 'lost') return { kind: 'lost', icon: '✂' };
      if (o === 'timed-out') return { kind: 'timed-out', icon: '✗' };
      break;
  }
  if (o === 'crashed') return { kind: 'crashed', icon: '✸' };
  if (o === 'rejected') return { kind: 'rejected', icon: '⊘' };
  if (o === 'error') return { kind: 'error', icon: '⚠' };
  return { kind: 'step', icon: o === 'skipped' ? '·' : PHASE_ICON[e.phase] || '•' };
}

// buildRace turns traces into rows, marks, key-row segments and arrows
// placed on one time axis (see the top of this file). It is pure: the same
// input gives the same model.
export function buildRace(input) {
  const clock = input.clock || 'step';
  const policy = input.policy || {};
  const labelOf = input.labelOf || ((id) => id);
  const events = (input.events || []).slice().sort((a, b) => (clock === 'time' ? timeOf(a) - timeOf(b) : 0) || a.seq - b.seq);

  // Attempts: the bench's lanes first (a waiting lane has no events yet),
  // then any lane the events name.
  const attempts = new Map();
  const attempt = (id, from) => {
    let a = attempts.get(id);
    if (!a) {
      a = { id, label: labelOf(id), intent: from.intent || '', customer: from.customer || '', key: from.key || '', body: from.body || '',
        state: from.state || '', next_phase: from.next_phase || '', next_part: from.next_part || '', fault: from.fault || null,
        verdict: from.verdict || '', verdict_text: from.verdict_text || '', response: from.response || null,
        delivered: from.delivered, events: [], marks: [], order: attempts.size };
      attempts.set(id, a);
    }
    return a;
  };
  for (const l of input.lanes || []) attempt(l.id, l);

  // The time axis: one column per event on the bench; on the trace's clock,
  // each gap between events is compressed (a 50 ms payment call and a 1 ms
  // claim must both be legible), so x grows with log(1 + gap).
  const xs = new Array(events.length);
  let x = 0;
  let prevT = null;
  for (let i = 0; i < events.length; i++) {
    if (clock === 'time') {
      const t = timeOf(events[i]);
      if (prevT !== null) {
        const gap = Math.max(0, t - prevT);
        x += gap <= 0.05 ? 0.15 : Math.min(6, 0.6 + Math.log2(1 + gap));
      }
      prevT = t;
    } else if (i > 0) {
      x += 1;
    }
    xs[i] = x;
  }
  const span = events.length ? x + 1 : 1;

  // Intents paid so far, and the ledger's running balances.
  const paidBy = new Map(); // intent → first paying lane
  const ledger = [];
  const balances = new Map();
  const transfers = new Map((input.transfers || []).map((tr) => [tr.transfer_id, tr]));
  if (input.accounts) {
    for (const a of input.accounts) balances.set(a.id, a.balance);
    // Work back from the balances now to the balances before the first commit.
    for (const tr of transfers.values()) {
      if (balances.has(tr.from)) balances.set(tr.from, balances.get(tr.from) + tr.amount);
      if (balances.has(tr.to)) balances.set(tr.to, balances.get(tr.to) - tr.amount);
    }
  }
  const opening = new Map(balances);

  // Groups: by key (within the customer when keys are scoped), else by wish.
  const groups = new Map();
  const groupOf = (a) => {
    const scoped = policy.scope === 'customer-endpoint';
    const id = a.key ? 'k:' + (scoped ? a.customer + '\u0000' : '') + a.key : 'i:' + a.intent;
    let g = groups.get(id);
    if (!g) {
      g = { id, key: a.key, intent: a.intent, customer: scoped ? a.customer : '', attempts: [], db: [], winner: null, claimMark: null, storedMark: null };
      groups.set(id, g);
    }
    return g;
  };

  const marks = [];
  const arrows = [];
  events.forEach((e, i) => {
    const a = attempt(e.lane, e);
    if (!a.key && e.key) a.key = e.key;
    if (!a.intent && e.intent) a.intent = e.intent;
    if (!a.customer && e.customer) a.customer = e.customer;
    const m = Object.assign({ i, x: xs[i], x0: a.marks.length ? a.marks[a.marks.length - 1].x : xs[i] - (clock === 'time' ? 0.5 : 0), ev: e, lane: a.id }, markOf(e));
    if (m.kind === 'paid') {
      const amount = amountOf(a, e);
      m.amount = amount;
      const tr = (/ as (\S+)$/.exec(e.note || '') || [])[1];
      const entry = { i, x: xs[i], lane: a.id, intent: a.intent, amount, transfer: tr, again: paidBy.has(a.intent) || !!e.paid_again };
      if (entry.again) {
        m.kind = 'paid-again';
        m.firstPaidBy = paidBy.get(a.intent);
      } else {
        paidBy.set(a.intent, a.id);
      }
      const t = transfers.get(tr);
      if (t && balances.size) {
        if (balances.has(t.from)) balances.set(t.from, balances.get(t.from) - t.amount);
        if (balances.has(t.to)) balances.set(t.to, balances.get(t.to) + t.amount);
        entry.balances = [...balances.entries()];
      }
      ledger.push(entry);
    }
    a.events.push(e);
    a.marks.push(m);
    marks.push(m);
  });

  // Per group: who won, and what the key's row in the database went
  // through. The winner is the attempt that moved the money first, else
  // the one that claimed the key first.
  for (const a of attempts.values()) groupOf(a).attempts.push(a);
  for (const g of groups.values()) {
    const ms = [];
    for (const a of g.attempts) for (const m of a.marks) ms.push(m);
    ms.sort((p, q) => p.i - q.i);
    const firstPay = ms.find((m) => m.kind === 'paid');
    const firstClaim = ms.find((m) => m.kind === 'claim' || m.kind === 'takeover');
    g.winner = (firstPay || firstClaim || {}).lane || null;
    // The key row: absent until a claim (or, when the key is written only
    // after the work, until the response is stored).
    const held = policy.in_progress === 'two-phase' ? 'in_progress' : policy.in_progress === 'completed-first' ? 'completed' : 'recorded';
    let cur = null;
    const open = (m, state, owner, status) => {
      if (cur) cur.x1 = m.x;
      cur = { x0: m.x, x1: null, state, owner, status, i: m.i, lane: m.lane };
      g.db.push(cur);
    };
    let lastClaim = null;
    for (const m of ms) {
      if (m.kind === 'claim' || m.kind === 'takeover') {
        // check-then-insert writes a second row for the same key: each
        // claim is its own row in a table without a constraint.
        open(m, held, m.lane);
        lastClaim = m;
        if (!g.claimMark) g.claimMark = m;
      } else if (m.kind === 'stored' || m.kind === 'late-key') {
        const owner = m.lane;
        const status = (g.attempts.find((a) => a.id === owner)?.marks.find((x) => x.ev.phase === 'commit') || {}).ev?.status;
        if (m.kind === 'stored') {
          open(m, 'completed', owner, status);
          if (!g.storedMark) g.storedMark = m;
        }
      } else if ((m.kind === 'paid' || m.kind === 'declined') && policy.in_progress === 'two-phase' && cur && cur.owner === m.lane) {
        // The transfer and the completed key commit together.
        open(m, 'completed', m.lane, m.ev.status);
      }
      m.dbSegment = cur; // the row as this event saw it
    }
    if (!g.claimMark && lastClaim) g.claimMark = lastClaim;
    // Relations.
    for (const m of ms) {
      const seg = m.dbSegment;
      if (m.kind === 'duplicate' || m.kind === 'mismatch') {
        const to = g.claimMark && g.claimMark.lane !== m.lane ? g.claimMark : null;
        if (to) arrows.push({ kind: m.kind, from: m, to, toLane: to.lane, i: m.i });
      } else if (m.kind === 'conflict') {
        arrows.push({ kind: 'conflict', from: m, toDb: g.id, toSeg: seg, toLane: seg ? seg.owner : g.winner, i: m.i });
      } else if (m.kind === 'replay') {
        const to = g.storedMark || (seg && seg.state === 'completed' ? { x: seg.x0, lane: seg.owner, db: true } : null);
        if (to) arrows.push({ kind: 'replay', from: m, to, toLane: to.lane, toDb: to.db ? g.id : null, i: m.i });
      }
    }
  }

  // Violations: the lanes each names.
  const violations = (input.violations || []).map((v, n) => ({
    n: n + 1, rule: v.rule || {}, message: v.message || '', lanes: (v.lanes || []).filter((l) => attempts.has(l)),
  }));

  for (const a of attempts.values()) {
    a.signature = a.marks.map((m) => m.kind + (m.ev.status || '')).join(' ') + '|' + (a.state || '') + '|' + (a.verdict || '');
    a.answer = answerOf(a);
    a.paidAgain = a.marks.some((m) => m.kind === 'paid-again');
  }
  return { clock, span, events, xs, attempts, groups: [...groups.values()], marks, arrows, ledger, opening: [...opening.entries()], violations, policy };
}

// answerOf is what the client heard, as a mark kind and words.
function answerOf(a) {
  const last = a.marks[a.marks.length - 1];
  if (!last) return null;
  const ev = last.ev;
  if (last.kind === 'crashed') return { kind: 'crashed', icon: '✸', status: 0 };
  if (last.kind === 'lost' || last.kind === 'timed-out') return { kind: last.kind, icon: last.icon, status: ev.status || 0 };
  if (ev.phase !== 'respond' && last.kind !== 'rejected') return null;
  const replayed = a.marks.some((m) => m.kind === 'replay');
  return { kind: replayed ? 'replayed' : 'answer', icon: replayed ? '↺' : '✉', status: ev.status || 0 };
}

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
const DB_H = 36;
const LEDGER_H = 42;
const AXIS_H = 24;

// drawRace draws the model into container (see the top of this file) and
// returns the <svg> element.
export function drawRace(container, model, opts = {}) {
  const t = opts.t || defaultT;
  const compact = opts.compact ?? (container.clientWidth > 0 && container.clientWidth < 600);
  const labelW = compact ? 96 : 190;
  const answerW = compact ? 96 : 190;
  const cursor = opts.cursor ?? model.events.length;
  const lastX = cursor > 0 ? model.xs[Math.min(cursor, model.events.length) - 1] : 0;
  // Waiting and running lanes on the bench show their next phase one
  // column to the right of everything that has happened.
  const ghosts = [...model.attempts.values()].some((a) => a.state === 'waiting' || a.state === 'running');
  const cols = model.span + (ghosts ? 1 : 0);
  const avail = Math.max(200, (opts.width || container.clientWidth || 900) - labelW - answerW - 40);
  const unit = model.clock === 'time'
    ? Math.max(6, Math.min(60, avail / cols))
    : Math.max(compact ? 22 : 26, Math.min(64, avail / cols));
  const X = (x) => labelW + 12 + x * unit;
  const plotW = cols * unit + 12;
  const { rows, laneRow, hidden } = layoutRows(model, opts);

  // Rows' vertical positions.
  let y = AXIS_H;
  for (const r of rows) {
    r.y = y;
    r.h = r.type === 'ledger' ? LEDGER_H : r.type === 'db' ? DB_H : ROW_H;
    y += r.h + (r.type === 'db' ? 2 : 0);
  }
  const violations = model.violations.filter((v) => v.lanes.length);
  const vioH = violations.length ? 10 + Math.min(violations.length, 6) * 20 : 0;
  const height = y + (hidden ? 22 : 0) + vioH + 6;
  const width = labelW + 12 + plotW + answerW;

  const root = svg('svg', {
    xmlns: 'http://www.w3.org/2000/svg', class: 'race' + (compact ? ' compact' : ''), width, height,
    viewBox: `0 0 ${width} ${height}`, role: 'group', 'aria-label': t('raceTitle'), 'data-clock': model.clock,
    'data-attempts': model.attempts.size, 'data-cursor': cursor,
  });
  root.append(svg('title', { text: t('raceTitle') }));
  const shown = (m) => m.i < cursor;
  const current = opts.currentSeq;

  // Axis: the step or the time of every few events.
  const axis = svg('g', { class: 'axis' });
  axis.append(svg('text', { x: 4, y: 15, class: 'axis-label', text: model.clock === 'time' ? t('raceAxisTime') : t('raceAxisStep') }));
  let lastTick = -Infinity;
  for (let i = 0; i < model.events.length; i++) {
    const px = X(model.xs[i]);
    if (px - lastTick < (model.clock === 'time' ? 70 : 28)) continue;
    lastTick = px;
    const e = model.events[i];
    const label = model.clock === 'time' ? fmtMS(timeOf(e) - timeOf(model.events[0])) : String(i + 1);
    axis.append(svg('line', { x1: px, x2: px, y1: AXIS_H - 4, y2: height - vioH, class: 'tick' }),
      svg('text', { x: px, y: 15, class: 'tick-label', 'text-anchor': 'middle', text: label }));
  }
  root.append(axis);

  const layer = { rows: svg('g', { class: 'rows' }), arrows: svg('g', { class: 'arrows' }), marks: svg('g', { class: 'marks' }) };

  for (const r of rows) {
    if (r.type === 'ledger') drawLedger(layer.rows, r, model, { X, labelW, shown, t, current, width });
    else if (r.type === 'db') drawDB(layer.rows, r, model, { X, labelW, shown, t, current, lastX, cursor, width });
    else drawAttempt(layer.rows, r, model, { X, labelW, shown, t, current, opts, cols, answerW, width, unit, compact });
  }

  // Arrows between rows: from a mark to the row or mark it points at.
  for (const ar of model.arrows) {
    if (!shown(ar.from)) continue;
    const fromRow = laneRow.get(ar.from.lane);
    if (!fromRow || (fromRow.type === 'collapsed' && fromRow.attempt.id !== ar.from.lane)) continue;
    let tx;
    let ty;
    if (ar.to && !ar.to.db) {
      const toRow = laneRow.get(ar.to.lane);
      if (!toRow) continue;
      tx = X(ar.to.x);
      ty = toRow.y + toRow.h / 2;
    } else {
      const dbRow = rows.find((r) => r.type === 'db' && r.group.id === (ar.toDb || ar.from.dbSegment && ar.from.lane && fromRow.group.id));
      if (!dbRow) continue;
      tx = X(ar.from.x) - unit * 0.3;
      ty = dbRow.y + dbRow.h - 3;
    }
    const fx = X(ar.from.x);
    const fy = fromRow.y + fromRow.h / 2;
    const dir = ty < fy ? 1 : -1;
    const path = `M${fx},${fy - dir * 9} C${fx},${(fy + ty) / 2} ${tx},${(fy + ty) / 2} ${tx},${ty + dir * 9}`;
    layer.arrows.append(svg('path', {
      d: path, class: 'arrow arrow-' + ar.kind, 'marker-end': 'url(#race-head-' + ar.kind + ')', 'data-arrow': ar.kind,
      'data-from-lane': ar.from.lane, 'data-from-seq': ar.from.ev.seq, 'data-to-lane': ar.toLane || '', 'data-to': ar.toDb || '',
    }, svg('title', { text: t('raceArrow_' + ar.kind, { from: labelOfLane(model, ar.from.lane), to: labelOfLane(model, ar.toLane) }) })));
  }

  // Broken rules: a bracket in the answer column joins the rows of the
  // attempts each names, with its number; the sentences are listed below.
  const vio = svg('g', { class: 'violations' });
  violations.slice(0, 6).forEach((v, k) => {
    const ys = v.lanes.map((l) => laneRow.get(l)).filter(Boolean).map((r) => r.y + r.h / 2);
    if (!ys.length) return;
    const bx = width - 14 - k * 9;
    const y0 = Math.min(...ys);
    const y1 = Math.max(...ys);
    vio.append(svg('g', { class: 'violation', 'data-violation': v.rule.name || '', 'data-lanes': v.lanes.join(',') },
      svg('path', { d: `M${bx - 6},${y0} H${bx} V${y1} H${bx - 6}`, class: 'bracket' }),
      ...ys.map((yy) => svg('circle', { cx: bx - 6, cy: yy, r: 3, class: 'bracket-dot' })),
      svg('text', { x: bx + 2, y: (y0 + y1) / 2 + 4, class: 'bracket-n', text: '✘' + v.n }),
      svg('title', { text: '✘' + v.n + ' ' + (v.rule.title || '') + ': ' + v.message })));
  });
  let ly = y + (hidden ? 22 : 0) + 14;
  violations.slice(0, 6).forEach((v) => {
    const line = '✘' + v.n + ' ' + t('raceBroken') + ' — ' + (v.rule.title || v.rule.name || '') + ': ' + v.message;
    vio.append(svg('text', { x: 6, y: ly, class: 'violation-text', 'data-violation': v.rule.name || '', text: clip(line, Math.floor(width / 8.3)) }));
    ly += 20;
  });
  if (hidden) {
    root.append(svg('text', { x: 6, y: y + 15, class: 'more', 'data-hidden': hidden, text: t('raceMore', { n: hidden }) }));
  }

  // The present moment when scrubbing a recorded storm.
  if (opts.cursor !== undefined && cursor < model.events.length) {
    root.append(svg('line', { x1: X(lastX) + unit * 0.5, x2: X(lastX) + unit * 0.5, y1: AXIS_H - 6, y2: y, class: 'now', 'data-now': cursor }));
  }

  root.append(svg('defs', {}, ...['duplicate', 'conflict', 'mismatch', 'replay'].map((k) => svg('marker', {
    id: 'race-head-' + k, viewBox: '0 0 10 10', refX: 8, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse',
  }, svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'head head-' + k })))));
  root.append(layer.rows, layer.arrows, vio);
  container.replaceChildren(root);
  return root;
}

function labelOfLane(model, id) {
  const a = id && model.attempts.get(id);
  return a ? a.label : id || '';
}

function clip(s, n) {
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

function fmtMS(ms) {
  if (ms < 1000) return Math.round(ms) + ' ms';
  if (ms < 60000) return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + ' s';
  const m = Math.floor(ms / 60000);
  if (m < 60) return m + ' min';
  return Math.floor(m / 60) + ' h ' + (m % 60) + ' min';
}

function drawLedger(parent, r, model, c) {
  const { X, shown, t, current } = c;
  const g = svg('g', { class: 'row row-ledger', 'data-row': 'ledger' },
    svg('rect', { x: 0, y: r.y, width: c.width, height: r.h, class: 'band band-ledger' }),
    svg('text', { x: 8, y: r.y + 17, class: 'row-label', text: '⛁ ' + t('raceLedger') }),
    svg('text', { x: 8, y: r.y + 34, class: 'row-sub', text: clip(model.opening.map(([k, v]) => k + ' ' + fmtWon(v)).join(' · '), Math.floor((c.labelW - 8) / 6.5)) }),
    svg('title', { text: t('raceLedger') + ': ' + model.opening.map(([k, v]) => k + ' ' + fmtWon(v)).join(' · ') }));
  let againShown = 0;
  for (const p of model.ledger) {
    if (!shown(p)) continue;
    const x = X(p.x);
    const word = markWord({ kind: p.again ? 'paid-again' : 'paid', amount: p.amount }, t);
    const cur = current !== undefined && model.events[p.i].seq === current;
    g.append(svg('g', { class: 'money' + (p.again ? ' money-again' : '') + (cur ? ' touched' : ''), 'data-mark': p.again ? 'paid-again' : 'paid', 'data-lane': p.lane, 'data-seq': model.events[p.i].seq, 'data-touched': cur ? 'true' : null },
      svg('rect', { x: x - 9, y: r.y + 4, width: 18, height: r.h - 8, rx: 3 }),
      svg('text', { x: x, y: r.y + r.h / 2 + 5, 'text-anchor': 'middle', class: 'money-icon', text: p.again ? '✘' : '■' }),
      svg('title', { text: word + ' · ' + p.lane + (p.transfer ? ' · ' + p.transfer : '') + (p.balances ? ' · ' + p.balances.map(([k, v]) => k + ' ' + fmtWon(v)).join(', ') : '') })));
    if (p.again && againShown < 4) {
      againShown++;
      g.append(svg('text', { x: x + 12, y: r.y + 16, class: 'paid-again-text', 'data-mark': 'paid-again-text', 'data-lane': p.lane, text: '✘ ' + word + ' (' + labelOfLane(model, p.lane) + ')' }));
    } else if (p.balances) {
      // The balances after this commit, where the row has room before the next.
      const text = p.balances.map(([k, v]) => k + ' ' + fmtWon(v)).join(' · ');
      const next = model.ledger.find((q) => q.i > p.i && shown(q));
      const room = (next ? X(next.x) - 10 : c.width - 8) - (x + 12);
      if (room >= text.length * 6.5) g.append(svg('text', { x: x + 12, y: r.y + 34, class: 'row-sub balance-after', text }));
    }
  }
  // Many payments: the sum in words at the end of the row.
  const again = model.ledger.filter((p) => shown(p) && p.again);
  if (again.length > againShown) {
    const sum = again.reduce((n, p) => n + p.amount, 0);
    g.append(svg('text', { x: c.width - 8, y: r.y + 16, 'text-anchor': 'end', class: 'paid-again-text', 'data-mark': 'paid-again-total', text: t('racePaidAgainTotal', { n: again.length, amount: fmtWon(sum) }) }));
  }
  parent.append(g);
}

function drawDB(parent, r, model, c) {
  const { X, shown, t, current } = c;
  const gr = r.group;
  const name = gr.key ? t('raceKeyRow', { key: gr.key }) : t('raceIntentRow', { intent: gr.intent });
  const touched = current !== undefined && gr.attempts.some((a) => a.marks.some((m) => m.ev.seq === current && KEY_PHASES.has(m.ev.phase) && m.ev.sql));
  const g = svg('g', { class: 'row row-db' + (touched ? ' touched' : ''), 'data-row': 'db', 'data-key': gr.key || '', 'data-intent': gr.intent || '', 'data-touched': touched ? 'true' : null },
    svg('rect', { x: 0, y: r.y, width: c.width, height: r.h, class: 'band band-db' }),
    svg('text', { x: 8, y: r.y + 23, class: 'row-label db-label', text: '▤ ' + clip(name, 22) }, svg('title', { text: name })));
  const end = X(c.lastX) + 12;
  // Absent: a dashed line until the first row appears.
  const firstSeg = gr.db.find((s) => model.events[s.i] && s.i < c.cursor);
  const startX = X(0);
  if (!gr.key || model.policy.claim === 'none') {
    g.append(svg('text', { x: startX, y: r.y + 19, class: 'db-none', text: t('raceNoKeyTable') }));
  } else {
    g.append(svg('line', { x1: startX, x2: firstSeg ? X(firstSeg.x0) : end, y1: r.y + r.h / 2, y2: r.y + r.h / 2, class: 'absent' }));
    if (!firstSeg) g.append(svg('text', { x: startX + 4, y: r.y + 12, class: 'db-state-text', text: t('raceAbsent') }));
  }
  for (const s of gr.db) {
    if (s.i >= c.cursor) continue;
    const x0 = X(s.x0);
    const next = gr.db.find((o) => o.i > s.i && o.i < c.cursor);
    const x1 = next ? X(next.x0) : end;
    const isCur = current !== undefined && model.events[s.i].seq === current;
    const label = s.state === 'completed'
      ? t('raceCompleted', { status: s.status || '', owner: s.owner })
      : s.state === 'in_progress' ? t('raceInProgress', { owner: s.owner }) : t('raceRecorded', { state: s.state, owner: s.owner });
    // A narrow segment says less, never nothing: the state's icon and who.
    const short = (s.state === 'completed' ? '✔ ' + (s.status || '') : s.state === 'in_progress' ? '⏳' : '▭') + ' ' + labelOfLane(model, s.owner);
    g.append(svg('g', { class: 'seg seg-' + s.state.replace('_', '-') + (isCur ? ' touched' : ''), 'data-db-state': s.state, 'data-owner': s.owner, 'data-seq': model.events[s.i].seq },
      svg('rect', { x: x0, y: r.y + 4, width: Math.max(4, x1 - x0), height: r.h - 8, rx: 4 }),
      svg('text', { x: x0 + 5, y: r.y + r.h / 2 + 4, class: 'seg-text', text: (x1 - x0 - 8) / 7 >= label.length ? label : clip(short, Math.max(2, Math.floor((x1 - x0 - 8) / 7))) }),
      svg('title', { text: label })));
  }
  parent.append(g);
}

function drawAttempt(parent, r, model, c) {
  const { X, shown, t, current, opts, cols, unit } = c;
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
  };
  if (selectable) {
    Object.assign(attrs, { role: 'radio', 'aria-checked': selected ? 'true' : 'false', 'aria-disabled': movable ? null : 'true', tabindex: movable ? 0 : -1,
      'aria-label': t('chooseLane') + ': ' + a.label, onclick: () => movable && opts.onSelectLane(a.id),
      onkeydown: (e) => { if ((e.key === 'Enter' || e.key === ' ') && movable) { e.preventDefault(); e.stopPropagation(); opts.onSelectLane(a.id); } } });
  }
  const g = svg('g', attrs);
  g.append(svg('rect', { x: 0, y: r.y, width: c.width, height: r.h, class: 'band' }));
  // The label: who, and how it ended (icon and word, never colour alone).
  const vIcon = { ok: '✔', info: 'ℹ', fail: '✘', pending: '…' }[verdict] || '…';
  const head = collapsed ? '× ' + r.members.length : (r.winner ? '★ ' : '') + (selected ? '▶ ' : '') + clip(a.label, 14);
  g.append(svg('text', { x: 8, y: r.y + 23, class: 'row-label' }, svg('tspan', { class: 'v-icon', text: vIcon + ' ' }), head,
    svg('title', { text: a.label + (a.verdict_text ? ' — ' + a.verdict_text : '') })));
  if (r.winner) {
    g.append(c.compact
      ? svg('text', { x: 8, y: r.y + r.h - 2, class: 'winner-tag small', text: t('raceWinner') })
      : svg('text', { x: c.labelW - 6, y: r.y + 23, 'text-anchor': 'end', class: 'winner-tag', text: t('raceWinner') }));
  }
  if (collapsed) {
    g.append(svg('text', { x: c.labelW - 6, y: r.y + 23, 'text-anchor': 'end', class: 'expand', role: opts.onToggle ? 'button' : null, tabindex: opts.onToggle ? 0 : null,
      'data-expand': r.id, onclick: opts.onToggle ? () => opts.onToggle(r.id) : null,
      onkeydown: opts.onToggle ? (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); opts.onToggle(r.id); } } : null,
      text: '▸ ' + t('raceExpand') }));
  } else if (r.expandedFrom && opts.onToggle) {
    g.append(svg('text', { x: c.labelW - 6, y: r.y + 23, 'text-anchor': 'end', class: 'expand', role: 'button', tabindex: 0, 'data-collapse': r.expandedFrom,
      onclick: () => opts.onToggle(r.expandedFrom), text: '▾' }));
  }
  // The attempt's life: a line from its first to its last event, then
  // one mark per event (a segment from the event before, on the clock).
  const ms = a.marks.filter(shown);
  if (ms.length) {
    g.append(svg('line', { x1: X(ms[0].x0), x2: X(ms[ms.length - 1].x), y1: r.y + r.h / 2, y2: r.y + r.h / 2, class: 'life' }));
  }
  for (const m of ms) {
    const cx = X(m.x);
    const isCur = current !== undefined && m.ev.seq === current;
    const wide = m.kind === 'paid' || m.kind === 'paid-again';
    const mw = wide ? Math.max(unit * 0.9, 20) : Math.max(Math.min(unit * 0.8, 20), 12);
    const word = markWord(m, t);
    const mAttrs = {
      class: 'mark k-' + m.kind + (isCur ? ' current' : ''), 'data-mark': m.kind, 'data-seq': m.ev.seq, 'data-lane': a.id,
      'data-phase': m.ev.phase, 'data-outcome': m.ev.outcome, 'data-status': m.ev.status || null, 'data-current': isCur ? 'true' : null,
    };
    if (opts.onMark) {
      Object.assign(mAttrs, { role: 'button', tabindex: -1, 'aria-label': a.label + ' · ' + m.ev.phase + ' · ' + word,
        onclick: (e) => { e.stopPropagation(); opts.onMark(m.ev); } });
    }
    if (model.clock === 'time' && m.x - m.x0 > 0.8) {
      // A phase that took time (the payment call): a bar over its span.
      g.append(svg('rect', { x: X(m.x0), y: r.y + r.h / 2 - 4, width: X(m.x) - X(m.x0), height: 8, class: 'span span-' + m.kind, rx: 2 }));
    }
    g.append(svg('g', mAttrs,
      svg('rect', { x: cx - mw / 2, y: r.y + 5, width: mw, height: r.h - 10, rx: 4 }),
      svg('text', { x: cx, y: r.y + r.h / 2 + 5, 'text-anchor': 'middle', class: 'mark-icon', text: m.icon }),
      svg('title', { text: a.label + ' · ' + m.ev.phase + ' · ' + word + (m.ev.note ? '\n' + m.ev.note : '') + (m.ev.sql ? '\n' + m.ev.sql : '') })));
  }
  // The next phase of a lane still on its way (the bench).
  if ((a.state === 'waiting' || a.state === 'running') && a.next_phase && !collapsed) {
    const gx = X(cols - 1);
    g.append(svg('g', { class: 'mark ghost' + (selected ? ' ghost-next' : ''), 'data-mark': 'next', 'data-phase': a.next_phase, 'data-lane': a.id },
      svg('rect', { x: gx - 10, y: r.y + 5, width: 20, height: r.h - 10, rx: 4 }),
      svg('text', { x: gx + 14, y: r.y + r.h / 2 + 4, class: 'ghost-text', text: t('raceNext', { phase: a.next_phase + (a.next_part ? ' (' + a.next_part + ')' : '') }) })));
  }
  // How it ended, in words, after its last mark.
  const last = ms[ms.length - 1];
  if (a.answer && last === a.marks[a.marks.length - 1] && !(a.state === 'running')) {
    const ax = Math.max(X(last.x) + 16, c.width - c.answerW - 4);
    const words = answerWords(a, t, collapsed ? r.members.length : 0);
    const text = svg('text', { x: X(last.x) + 14, y: r.y + r.h / 2 + 5, class: 'answer answer-' + a.answer.kind, 'data-answer': a.answer.kind, 'data-status': a.answer.status || null, text: words });
    if (a.paidAgain) {
      const again = a.marks.find((m) => m.kind === 'paid-again');
      text.append(svg('tspan', { class: 'paid-again-text', 'data-mark': 'paid-again-text', text: ' · ✘ ' + markWord(again, t) }));
    }
    g.append(text);
    void ax;
  } else if (a.state === 'crashed' && !ms.length) {
    g.append(svg('text', { x: X(0), y: r.y + r.h / 2 + 5, class: 'answer answer-crashed', text: t('raceCrashedWord') }));
  }
  parent.append(g);
}

function markWord(m, t) {
  switch (m.kind) {
    case 'paid': return m.amount ? t('racePaid', { amount: fmtWon(m.amount) }) : t('racePaidSome');
    case 'paid-again': return m.amount ? t('racePaidAgain', { amount: fmtWon(m.amount) }) : t('racePaidAgainSome');
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

function fmtWon(n) {
  return Number(n || 0).toLocaleString('en-US');
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

