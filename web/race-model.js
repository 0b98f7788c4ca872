// race-model.js turns engine trace events into the race view's model:
// attempts as rows grouped by key, each event a mark, the relations the
// trace implies (a duplicate's claim and the claim it hit, a 409 and the
// in_progress row, a replay and its stored answer) and the money each
// commit moved. race.js lays the model out and draws it; the model is
// plain data, so every screen can build it the same way.

import { won } from './dom.js';

// --- the model ---------------------------------------------------------------

export const KEY_PHASES = new Set(['claim', 'compare', 'commit', 'store-response']);

// GAP_MS is the longest quiet moment drawn to scale on the trace's clock.
const GAP_MS = 2;

// timeOf is an event's moment in milliseconds on the trace's clock.
// A classroom event's skew_us is how far its ledger's clock was moved on
// (a late retry comes "an hour later"): the hour is on the axis.
export function timeOf(e) {
  if (e.t_us !== undefined) return (e.t_us + (e.skew_us || 0)) / 1000;
  return e.at_ms || 0;
}

// amountOf is the won a commit moved: the engine's event says it; an event
// made up from a day's picture (day.js) does not, and its attempt's body
// does.
function amountOf(attempt, ev) {
  if (ev && ev.amount) return ev.amount;
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
// Marks are shared, never changed: one object per kind.
// STEP_BREAK_MS is the wait, on the step clock, that the axis marks.
const STEP_BREAK_MS = 60 * 1000;

const M_CLAIM = Object.freeze({ kind: 'claim', icon: '◆' });
const M_TAKEOVER = Object.freeze({ kind: 'takeover', icon: '↻' });
const M_DUPLICATE = Object.freeze({ kind: 'duplicate', icon: '≡' });
const M_CONFLICT = Object.freeze({ kind: 'conflict', icon: '‖' });
const M_LOOKUP = Object.freeze({ kind: 'lookup', icon: '?' });
const M_MISMATCH = Object.freeze({ kind: 'mismatch', icon: '≠' });
const M_REPLAY = Object.freeze({ kind: 'replay', icon: '↺' });
// A retry answered with something else than the first answer: a generic
// "already processed" (nothing was stored), or an answer built again
// from the ledger. Neither points at a stored answer.
const M_REPLAY_GENERIC = Object.freeze({ kind: 'replay-generic', icon: '∅' });
const M_REPLAY_RECOMPUTED = Object.freeze({ kind: 'replay-recomputed', icon: '≈' });
const M_PAY_CALL = Object.freeze({ kind: 'pay-call', icon: '→' });
const M_PAID = Object.freeze({ kind: 'paid', icon: '■' });
const M_DECLINED = Object.freeze({ kind: 'declined', icon: '⊘' });
const M_STORED = Object.freeze({ kind: 'stored', icon: '▤' });
const M_LATE_KEY = Object.freeze({ kind: 'late-key', icon: '≡' });
const M_ANSWER = Object.freeze({ kind: 'answer', icon: '✉' });
const M_LOST = Object.freeze({ kind: 'lost', icon: '✂' });
const M_TIMED_OUT = Object.freeze({ kind: 'timed-out', icon: '✗' });
const M_CRASHED = Object.freeze({ kind: 'crashed', icon: '✸' });
const M_REJECTED = Object.freeze({ kind: 'rejected', icon: '⊘' });
const M_ERROR = Object.freeze({ kind: 'error', icon: '⚠' });
const M_CLAIM_IGNORED = Object.freeze({ kind: 'claim-ignored', icon: '◇' });
// A server's own in-memory lock on the key (the scale-out lesson): taken,
// or waited for while another attempt on the same server holds it.
const M_LOCK = Object.freeze({ kind: 'lock', icon: '▣' });
const M_LOCK_WAIT = Object.freeze({ kind: 'lock-wait', icon: '⋯' });
// The database's write lock, waited for while another attempt's
// transaction holds it (the lab: a student's BEGIN IMMEDIATE).
const M_DB_WAIT = Object.freeze({ kind: 'db-wait', icon: '⋯' });
const M_SKIPPED = Object.freeze({ kind: 'step', icon: '·' });
const M_STEP = Object.freeze({ kind: 'step', icon: '•' });
const STEP_MARKS = Object.fromEntries(Object.entries(PHASE_ICON).map(([p, icon]) => [p, Object.freeze({ kind: 'step', icon })]));

function markOf(e) {
  const o = e.outcome;
  switch (e.phase) {
    case 'claim':
      // INSERT OR IGNORE "claims" even when it wrote nothing: the code
      // never reads the changed-rows count, the picture does (rows is 0,
      // not absent).
      if (o === 'claimed' && e.rows === 0) return M_CLAIM_IGNORED;
      if (o === 'claimed') return M_CLAIM;
      if (o === 'taken-over') return M_TAKEOVER;
      if (o === 'duplicate') return M_DUPLICATE;
      if (o === 'conflict') return M_CONFLICT;
      if (o === 'ok') return M_LOOKUP;
      if (o === 'locked') return M_LOCK;
      if (o === 'waiting') return M_LOCK_WAIT;
      break;
    case 'compare':
      if (o === 'mismatch') return M_MISMATCH;
      if (o === 'conflict') return M_CONFLICT;
      if (o === 'replayed')
        return e.replay_from === 'generic' ? M_REPLAY_GENERIC : e.replay_from === 'recomputed' ? M_REPLAY_RECOMPUTED : M_REPLAY;
      break;
    case 'execute':
      if (o === 'executed') return M_PAY_CALL;
      break;
    case 'commit':
      if (o === 'committed') return M_PAID;
      if (o === 'declined') return M_DECLINED;
      if (o === 'conflict') return M_CONFLICT;
      break;
    case 'store-response':
      if (o === 'stored') return M_STORED;
      if (o === 'duplicate') return M_LATE_KEY;
      break;
    case 'respond':
      if (o === 'delivered') return M_ANSWER;
      if (o === 'lost') return M_LOST;
      if (o === 'timed-out') return M_TIMED_OUT;
      break;
  }
  if (o === 'busy') return M_DB_WAIT;
  if (o === 'crashed') return M_CRASHED;
  if (o === 'rejected') return M_REJECTED;
  if (o === 'error') return M_ERROR;
  return o === 'skipped' ? M_SKIPPED : STEP_MARKS[e.phase] || M_STEP;
}

// sortEvents orders events by key, then seq, and returns them with their
// keys. Events mostly arrive in order (a storm's in each batch as the
// server emitted them), so an insertion sort moves few of them, none when
// they are in order already; if it has to move many, a full sort takes over.
function sortEvents(list, key) {
  const n = list.length;
  const at = new Float64Array(n);
  const ev = list.slice();
  for (let i = 0; i < n; i++) at[i] = key(ev[i]);
  let moves = 0;
  for (let i = 1; i < n && moves <= 16 * n; i++) {
    const t = at[i];
    const e = ev[i];
    let j = i - 1;
    while (j >= 0 && (at[j] > t || (at[j] === t && ev[j].seq > e.seq))) {
      at[j + 1] = at[j];
      ev[j + 1] = ev[j];
      j--;
      moves++;
    }
    at[j + 1] = t;
    ev[j + 1] = e;
  }
  if (moves <= 16 * n) return { events: ev, keys: at };
  const order = list.map((_, i) => i);
  const k = list.map(key);
  order.sort((p, q) => k[p] - k[q] || list[p].seq - list[q].seq);
  return { events: order.map((i) => list[i]), keys: Float64Array.from(order, (i) => k[i]) };
}

// buildRace turns traces into rows, marks, key-row segments and arrows
// placed on one time axis (see the top of this file). It is pure: the same
// input gives the same model.
export function buildRace(input) {
  const clock = input.clock || 'step';
  const policy = input.policy || {};
  // 'read': each key's row is what the events' key_row fields say the
  // tables held (the lab), not what the phases imply (readKeyRow).
  const keyRows = input.keyRows || '';
  const labelOf = input.labelOf || ((id) => id);
  // Events in order: of time on the trace's clock, else of the step.
  const ordered = sortEvents(input.events || [], clock === 'time' ? timeOf : (e) => e.seq);
  const events = ordered.events;

  // Attempts: the bench's lanes first (a waiting lane has no events yet),
  // then any lane the events name.
  const attempts = new Map();
  const attempt = (id, from) => {
    let a = attempts.get(id);
    if (!a) {
      a = {
        id,
        label: labelOf(id),
        intent: from.intent || '',
        customer: from.customer || '',
        key: from.key || '',
        body: from.body || '',
        state: from.state || '',
        next_phase: from.next_phase || '',
        next_part: from.next_part || '',
        fault: from.fault || null,
        server: Number(from.server) || 0,
        verdict: from.verdict || '',
        verdict_text: from.verdict_text || '',
        verdict_text_ko: from.verdict_text_ko || '',
        response: from.response || '',
        marks: [],
        order: attempts.size,
      };
      attempts.set(id, a);
    }
    return a;
  };
  for (const l of input.lanes || []) attempt(l.id, l);

  // The time axis: one column per event on the bench. On the trace's
  // clock, time is linear while things happen close together and each idle
  // gap beyond GAP_MS is compressed (logarithmically), so that a 50 ms
  // payment call and a 1 ms claim are both legible, and a storm of 12,000
  // events spans its own duration, not its number of events. Compressed
  // gaps are kept as breaks, which the axis marks with their real length.
  const times = clock === 'time' ? ordered.keys : null;
  const xs = new Array(events.length);
  const breaks = [];
  let x = 0;
  let lastAt = null;
  for (let i = 0; i < events.length; i++) {
    if (i > 0) {
      if (clock === 'time') {
        const gap = Math.max(0, times[i] - times[i - 1]);
        if (gap > GAP_MS) {
          const w = GAP_MS + 3 * Math.log2(gap / GAP_MS);
          breaks.push({ x0: x, x1: x + w, ms: gap });
          x += w;
        } else {
          x += gap;
        }
      } else {
        // On the step clock an event that says when it was sent (at, the
        // lab's attempts) a minute or more after the last one seen gets
        // two columns of their own before it: a break marked with the wait.
        const at = events[i].at;
        if (typeof at === 'number' && lastAt !== null && at - lastAt >= STEP_BREAK_MS) {
          breaks.push({ x0: x + 0.5, x1: x + 2.5, ms: at - lastAt });
          x += 2;
        }
        x += 1;
      }
    }
    if (typeof events[i].at === 'number') lastAt = Math.max(lastAt ?? events[i].at, events[i].at);
    xs[i] = x;
  }
  const span = events.length ? x + (clock === 'time' ? Math.max(GAP_MS, x * 0.02) : 1) : 1;

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
    // A tab joins customer and key: it is valid in an SVG file's
    // attributes, where a NUL would make the saved picture unreadable.
    const id = a.key ? 'k:' + (scoped ? a.customer + '\t' : '') + a.key : 'i:' + a.intent;
    let g = groups.get(id);
    if (!g) {
      g = { id, key: a.key, intent: a.intent, attempts: [], db: [], winner: null, claimMark: null, storedMark: null };
      groups.set(id, g);
    }
    return g;
  };

  const marks = [];
  const arrows = [];
  // The payment processor's side: every payment call, as the processor
  // answered it (a new charge, or its first charge again for a key it
  // knew). A second new charge for one wish is a charge again.
  const processor = [];
  const chargedBy = new Map(); // intent → how many new charges
  events.forEach((e, i) => {
    const a = attempt(e.lane, e);
    if (!a.key && e.key) a.key = e.key;
    if (!a.intent && e.intent) a.intent = e.intent;
    if (!a.customer && e.customer) a.customer = e.customer;
    if (!a.server && e.server) a.server = Number(e.server) || 0;
    const mk = markOf(e);
    const m = {
      i,
      x: xs[i],
      x0: a.marks.length ? a.marks[a.marks.length - 1].x : xs[i],
      ev: e,
      lane: a.id,
      kind: mk.kind,
      icon: mk.icon,
      px: 0,
      dbSegment: null,
    };
    if (m.kind === 'paid') {
      const amount = amountOf(a, e);
      m.amount = amount;
      const tr = e.transfer_id;
      const entry = { i, x: xs[i], lane: a.id, intent: a.intent, amount, transfer: tr, again: paidBy.has(a.intent) || !!e.paid_again };
      if (entry.again) {
        m.kind = 'paid-again';
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
    if (e.phase === 'execute' && (e.charge === 'charged' || e.charge === 'replayed')) {
      const n = chargedBy.get(a.intent) || 0;
      const fresh = e.charge === 'charged';
      if (fresh) chargedBy.set(a.intent, n + 1);
      processor.push({
        i,
        x: xs[i],
        lane: a.id,
        intent: a.intent,
        amount: e.amount || amountOf(a, e),
        charge: e.charge_id || '',
        replayed: !fresh,
        again: fresh && n > 0,
        key: e.downstream_key || '',
      });
    }
    a.marks.push(m);
    marks.push(m);
  });

  // Per group: who won, and what the key's row in the database went
  // through. The winner is the attempt whose transfer is first in the
  // ledger (the money moved there: a processor's charge that no commit
  // followed, or that a crash left behind, wins nothing), else the one
  // that claimed the key first and did not crash or throw (race.js's
  // legend says so: raceLg_winner); else none.
  // Each group's marks in the order they happened: one pass over them all.
  const groupMarks = new Map();
  for (const a of attempts.values()) {
    const g = groupOf(a);
    g.attempts.push(a);
    a.group = g;
    if (!groupMarks.has(g)) groupMarks.set(g, []);
  }
  for (const m of marks) groupMarks.get(attempts.get(m.lane).group).push(m);
  for (const g of groups.values()) {
    const ms = groupMarks.get(g);
    const firstPay = ms.find((m) => m.kind === 'paid');
    // An attempt that crashed or threw wins nothing by its claim: its
    // claim settled no one's transfer.
    const fell = new Set(ms.filter((m) => m.kind === 'crashed' || m.kind === 'error').map((m) => m.lane));
    const firstClaim = ms.find((m) => (m.kind === 'claim' || m.kind === 'takeover') && !fell.has(m.lane));
    g.winner = (firstPay || firstClaim || {}).lane || null;
    if (keyRows === 'read') {
      readKeyRow(g, ms);
      relate(g, ms, attempts, arrows);
      continue;
    }
    // The key row: absent until a claim (or, when the key is written only
    // after the work, until the response is stored).
    const held = policy.in_progress === 'two-phase' ? 'in_progress' : policy.in_progress === 'completed-first' ? 'completed' : 'recorded';
    let cur = null;
    const open = (m, state, owner, status) => {
      cur = { x0: m.x, state, owner, status, i: m.i };
      g.db.push(cur);
    };
    let lastClaim = null;
    const claimers = new Set();
    for (const m of ms) {
      if (m.kind === 'claim' || m.kind === 'takeover') {
        claimers.add(m.lane);
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
      } else if (
        (m.kind === 'paid' || m.kind === 'paid-again' || m.kind === 'declined') &&
        policy.in_progress === 'two-phase' &&
        claimers.has(m.lane)
      ) {
        // The transfer and the completed key commit together: the row this
        // lane claimed (check-then-insert may have written one per lane,
        // and a second payment completes its own).
        open(m, 'completed', m.lane, m.ev.status);
      }
      m.dbSegment = cur; // the row as this event saw it
    }
    if (!g.claimMark && lastClaim) g.claimMark = lastClaim;
    relate(g, ms, attempts, arrows);
  }

  // Violations: the lanes each names, and the label of its bracket: its
  // rule's number, as the checker's list numbers the rules, with a letter
  // where one rule is broken more than once (1a, 1b).
  const violations = (input.violations || []).map((v, n) => ({
    n: n + 1,
    rule: v.rule || {},
    label: String((v.rule && v.rule.n) || n + 1),
    message: v.message || '',
    message_ko: v.message_ko || '',
    lanes: (v.lanes || []).filter((l) => attempts.has(l)),
  }));
  const perRule = new Map();
  for (const v of violations) perRule.set(v.label, (perRule.get(v.label) || 0) + 1);
  const letters = new Map();
  for (const v of violations) {
    if (perRule.get(v.label) < 2) continue;
    const k = letters.get(v.label) || 0;
    letters.set(v.label, k + 1);
    v.label += String.fromCharCode(97 + (k % 26));
  }

  for (const a of attempts.values()) {
    a.signature = a.marks.map((m) => m.kind + (m.ev.status || '')).join(' ') + '|' + (a.state || '') + '|' + (a.verdict || '');
    a.answer = answerOf(a);
    a.paidAgain = a.marks.some((m) => m.kind === 'paid-again');
  }
  // Several app servers: each attempt's row says which one it reached.
  let servers = Number(input.servers) || 0;
  for (const a of attempts.values()) servers = Math.max(servers, a.server);
  // The processor's row is drawn where it tells what the ledger's does
  // not: a wish charged more often than the ledger paid it, or a call the
  // processor answered with its first charge (the key passed downstream),
  // and, on a bench (the step clock), wherever the processor's own rule is
  // broken: its bracket names charges, and they must be there to see. A
  // storm's view (the time clock) leaves it out for that alone: forty
  // charges on a row of their own would push the attempts off the screen,
  // and its ledger already shows each payment again.
  const paidTimes = new Map();
  for (const p of ledger) paidTimes.set(p.intent, (paidTimes.get(p.intent) || 0) + 1);
  // keepProcessor (the lab): the row stays once the processor has charged,
  // rather than go when the ledger catches up.
  const showProcessor =
    (input.keepProcessor && processor.length > 0) ||
    processor.some((p) => p.replayed) ||
    (clock === 'step' && processor.length > 0 && violations.some((v) => v.rule.name === 'one-charge-per-intent')) ||
    [...chargedBy].some(([intent, n]) => n > (paidTimes.get(intent) || 0));
  // The axis's numbers: an event's tick where the events carry them (the
  // lab's runner counts its steps; a start or an answer is no step),
  // else each column's place.
  const ticks = events.some((e) => e.tick !== undefined) ? events.map((e) => e.tick ?? null) : null;
  return {
    clock,
    span,
    events,
    xs,
    ticks,
    answers: input.answers || '',
    times,
    breaks,
    attempts,
    groups: [...groups.values()],
    marks,
    arrows,
    ledger,
    processor,
    showProcessor,
    opening: [...opening.entries()],
    violations,
    policy,
    servers,
  };
}

// relate draws what the trace implies between a group's attempts: a
// duplicate's claim and the claim it hit, a 422 and the claim of the key,
// a 409 and the row that caused it, a replay and the answer it returned.
function relate(g, ms, attempts, arrows) {
  for (const m of ms) {
    const seg = m.dbSegment;
    if (m.kind === 'duplicate' || m.kind === 'mismatch') {
      const to = g.claimMark && g.claimMark.lane !== m.lane ? g.claimMark : null;
      if (to) arrows.push({ kind: m.kind, from: m, to, toLane: to.lane, i: m.i });
    } else if (m.kind === 'conflict') {
      // A 409 at compare was decided on the row the lane's claim read,
      // which may have changed since.
      let read = seg;
      if (m.ev.phase === 'compare') {
        const a = attempts.get(m.lane);
        const claim = a.marks
          .slice(0, a.marks.indexOf(m))
          .reverse()
          .find((x) => x.ev.phase === 'claim');
        if (claim) read = claim.dbSegment;
      }
      arrows.push({ kind: 'conflict', from: m, toDb: g.id, toLane: read ? read.owner : g.winner, i: m.i });
    } else if (m.kind === 'replay') {
      const to = g.storedMark || (seg && seg.state === 'completed' ? { x: seg.x0, lane: seg.owner, db: true } : null);
      if (to) arrows.push({ kind: 'replay', from: m, to, toLane: to.lane, toDb: to.db ? g.id : null, i: m.i });
    }
  }
}

// readKeyRow draws a group's key row from what the tables held (the lab:
// each step's key_row, web/lab-model.js): a segment opens wherever the
// committed row holding the key changed. Its state is the value of the
// row's state column (in_progress and completed drawn as the lessons draw
// them, any other value as itself: 'valued'), 'recorded' for a row whose
// table has no such column, and 'absent' for a row that went away (deleted,
// or replaced by nothing); its owner is the attempt that wrote the row
// (key_row.by), else the one whose step made the change, and its status
// the answer's status the row stores (0: none).
function readKeyRow(g, ms) {
  g.read = true;
  let sig = '';
  let cur = null;
  for (const m of ms) {
    const kr = m.ev.key_row;
    if (kr !== undefined && (kr ? kr.sig : '') !== sig) {
      sig = kr ? kr.sig : '';
      const value = kr ? String(kr.value ?? '') : '';
      const state = !kr ? 'absent' : !kr.column ? 'recorded' : value === 'in_progress' || value === 'completed' ? value : 'valued';
      cur = {
        x0: m.x,
        state,
        // The attempt that wrote the row as it stands, where the lab says
        // (a row another attempt committed, first seen at this step).
        owner: (kr && kr.by) || m.lane,
        status: (kr && kr.stored) || 0,
        i: m.i,
        read: true,
        value,
        column: (kr && kr.column) || '',
        rows: (kr && kr.rows) || 0,
      };
      g.db.push(cur);
    }
    if ((m.kind === 'claim' || m.kind === 'takeover') && !g.claimMark) g.claimMark = m;
    m.dbSegment = cur;
  }
}

// answerOf is what the client heard, as a mark kind and words.
function answerOf(a) {
  const last = a.marks[a.marks.length - 1];
  if (!last) return null;
  const ev = last.ev;
  if (last.kind === 'crashed') return { kind: 'crashed', icon: '✸', status: 0 };
  // A fault set on an attempt still on its way (the lab's bench: "lose
  // a1's answer" before a1 answered) is its answer's fate, not an answer.
  if ((last.kind === 'lost' || last.kind === 'timed-out') && (a.state === 'waiting' || a.state === 'running')) return null;
  if (last.kind === 'lost' || last.kind === 'timed-out') return { kind: last.kind, icon: last.icon, status: ev.status || 0 };
  if (ev.phase !== 'respond' && last.kind !== 'rejected') return null;
  const replay = a.marks.find((m) => m.kind === 'replay' || m.kind === 'replay-generic' || m.kind === 'replay-recomputed');
  if (!replay) return { kind: 'answer', icon: '✉', status: ev.status || 0 };
  const kind = { replay: 'replayed', 'replay-generic': 'generic', 'replay-recomputed': 'recomputed' }[replay.kind];
  return { kind, icon: replay.icon, status: ev.status || 0 };
}
