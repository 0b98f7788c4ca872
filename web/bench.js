// bench.js draws the bench: the scenario's head, the race view with the
// SQL of the step shown beside it, the key tables, the balances and the
// ledger, the checker's rules and the goals, and the sandbox's knobs. It
// reads the player's state (app.js) and draws it; what the learner does is
// app.js's (the actions given to initBench).

import { t, ruleTitle, inLang, extraPayments } from './strings.js';
import { $, el, won, patch } from './dom.js';
import { buildRace, drawRace } from './race.js';
import { renderKnobs } from './sandbox.js';

let app = null;
let on = null;

// initBench gives the bench the player's state and its actions: nextLane,
// choose, showEvent, toggleRaceRow, applyGoalPolicy, setKnob, saveGoals.
export function initBench(state, actions) {
  app = state;
  on = actions;
}

// VERDICT_ICON are characters that common system fonts carry (no emoji,
// which a classroom machine may draw as empty boxes); each comes with its word.
const VERDICT_ICON = { ok: '✔', info: 'ℹ', fail: '✘', pending: '…' };

// verdictBadge is a lane's verdict as an icon, a word and its sentence.
export function verdictBadge(verdict, text) {
  const v = VERDICT_ICON[verdict] ? verdict : 'pending';
  const name = 'verdict' + v[0].toUpperCase() + v.slice(1);
  return el(
    'span',
    { class: 'verdict verdict-' + v, 'data-verdict': v },
    el('span', { class: 'verdict-icon', 'aria-hidden': 'true', text: VERDICT_ICON[v] }),
    ' ',
    el('strong', { class: 'verdict-word', text: t(name) }),
    el('span', { class: 'verdict-text', text: ' — ' + (text || t(name + 'Text')) }),
  );
}

function table(columns, rows, attrs) {
  if (!rows.length) return el('p', { class: 'empty', text: t('noRows') });
  return el(
    'table',
    attrs || {},
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        columns.map((c) => el('th', { scope: 'col', text: c.label })),
      ),
    ),
    el(
      'tbody',
      {},
      rows.map((r) =>
        el(
          'tr',
          r.attrs || {},
          columns.map((c) => el('td', { class: c.class }, c.cell(r))),
        ),
      ),
    ),
  );
}

export function renderBenchHead() {
  const spec = app.spec;
  $('bench-title').textContent = spec ? t('scenario') + ': ' + (spec.title || spec.id) : t('benchEmpty');
  $('bench-meta').replaceChildren();
  if (spec) {
    $('bench-meta').append(t('level') + ' ', el('code', { class: 'level', text: spec.level }));
    if (app.override) {
      $('bench-meta').append(
        ' · ',
        el(
          'span',
          { class: 'tag sandboxed' },
          '⚙ ' +
            Object.entries(app.override)
              .map(([k, v]) => k + '=' + v)
              .join(', '),
        ),
      );
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
export function drawBenchWaiting(spec) {
  $('day-body').hidden = true;
  $('bench-body').hidden = true;
  if (!spec || spec.day) return;
  $('bench-body').hidden = false;
  $('bench-body').inert = true;
  $('bench-body').setAttribute('aria-busy', 'true');
  $('step-count').textContent = app.engineProblemText ? '⚠ ' + app.engineProblemText : t('engineLoading');
  for (const id of ['btn-step', 'btn-back', 'btn-run', 'btn-reset', 'btn-inject']) $(id).disabled = true;
  const lanes = (spec.lanes || []).map((l) => ({
    id: l.id,
    intent: l.intent || l.id,
    customer: l.customer,
    key: l.key,
    fault: l.fault,
    state: 'waiting',
    next_phase: 'receive',
    events: [],
    verdict: 'pending',
  }));
  drawRace(
    $('race'),
    buildRace({ lanes, clock: 'step', accounts: Object.entries(spec.accounts || {}).map(([id, balance]) => ({ id, balance })) }),
    // The lane the schedule moves first is marked as the engine's first
    // state will mark it: its ▶ is a glyph from a fallback font, and the
    // first layout to need that font at that size waits on the browser
    // process for it (traced: 0.6–2 s while the engine compiled).
    { onSelectLane: () => {}, width: raceWidth(), selectedLane: firstLane(spec) },
  );
  renderLast();
  $('keys-table').__drawn = undefined;
  $('keys-table').replaceChildren(keyTable([], 'keys'));
  $('loose-keys-wrap').hidden = true;
  $('accounts-table').__drawn = undefined;
  $('accounts-table').replaceChildren(accountsTable(Object.entries(spec.accounts || {}).map(([id, balance]) => ({ id, balance }))));
  $('transfers-table').__drawn = undefined;
  $('transfers-table').replaceChildren(transfersTable([]));
  $('summary').textContent = '';
  $('rules').replaceChildren(
    ...(app.lesson.rules || []).map((r) =>
      el(
        'li',
        { class: 'rule pending', 'data-rule': r.name },
        el('span', { class: 'rule-icon', 'aria-hidden': 'true', text: '…' }),
        ' ',
        el('strong', { text: t('ruleNotChecked') }),
        ' ',
        el('span', { text: r.n + '. ' + ruleTitle(r) }),
      ),
    ),
  );
  renderGoals((spec.goals || []).map((g) => Object.assign({}, g, { met: false })));
}

// firstLane is the lane a scenario's schedule moves first.
function firstLane(spec) {
  const first = (spec.schedule || [])[0];
  if (first) return String(first).split('@')[0];
  return spec.lanes && spec.lanes[0] ? spec.lanes[0].id : null;
}

export function render() {
  const st = app.state;
  if (!st) return;
  $('bench-body').inert = false;
  $('bench-body').removeAttribute('aria-busy');
  $('btn-reset').disabled = false;
  renderBenchHead();
  const lane = on.nextLane();
  $('step-count').textContent =
    (st.done ? t('stepDone', { n: st.step }) : t('step', { n: st.step })) +
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
  patchIf($('keys-table'), [st.keys, st.start_ms], () => keyTable(st.keys || [], 'keys'));
  const loose = st.loose_keys || [];
  $('loose-keys-wrap').hidden = !loose.length && st.policy.claim !== 'check-then-insert';
  patchIf($('loose-keys-table'), [loose, st.start_ms], () => keyTable(loose, 'loose-keys'));
  // Under the server-cache claim, each server's own memory is its key table.
  const caches = st.caches || [];
  $('caches-wrap').hidden = !caches.length;
  patchIf($('caches-table'), [caches, st.start_ms], () =>
    caches.map((c) =>
      el(
        'div',
        { class: 'server-cache', 'data-server': c.server },
        el('h4', { text: t('laneServer', { n: c.server }) }),
        keyTable(c.keys || [], 'cache-' + c.server),
      ),
    ),
  );
  patchIf($('accounts-table'), st.accounts, () => accountsTable(st.accounts || []));
  patchIf($('transfers-table'), st.transfers, () => transfersTable(st.transfers || []));
  renderReport(st.report, $('summary'), $('rules'));
  // The engine judged the goals (a goal's knobs included); the page shows them.
  const goals = st.goals || [];
  renderGoals(goals);
  renderKnobs($('knobs'), st.policy, { base: app.base, known: app.engineInfo && app.engineInfo.knobs, onChange: on.setKnob });
  $('btn-sandbox-reset').disabled = !app.override;
  on.saveGoals(app.lesson.id, app.spec.id, goals);
}

// patchIf redraws a table only when the data it is drawn from (or the
// page's language) changed since it was last drawn: most steps change
// one table of five, and building the others anew to find nothing to
// patch cost the step as much as patching them.
function patchIf(box, data, build) {
  const key = app.lang + '\u0001' + JSON.stringify(data ?? null);
  if (box.__drawn === key) return;
  box.__drawn = key;
  patch(box, build());
}

export function fmtDuration(ms) {
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
    [
      { label: t('colAccount'), cell: (a) => a.id },
      { label: t('colBalance'), class: 'num', cell: (a) => won(a.balance) },
    ],
    accounts.map((a) => Object.assign({ attrs: { 'data-account': a.id, 'data-balance': a.balance } }, a)),
    { id: 'accounts' },
  );
}

function transfersTable(transfers) {
  return table(
    [
      { label: t('colId'), cell: (x) => x.transfer_id },
      { label: t('colFrom'), cell: (x) => x.from },
      { label: t('colTo'), cell: (x) => x.to },
      { label: t('colAmount'), class: 'num', cell: (x) => won(x.amount) },
      { label: t('colKey'), cell: (x) => x.key || '' },
    ],
    transfers.map((x) => Object.assign({ attrs: { 'data-transfer': x.transfer_id } }, x)),
    { id: 'transfers' },
  );
}

function keyTable(rows, id) {
  return table(
    [
      { label: t('colScope'), cell: (r) => r.scope },
      { label: t('colKey'), cell: (r) => r.key },
      { label: t('colState'), cell: (r) => r.state || '—' },
      { label: t('colOwner'), cell: (r) => r.owner || '' },
      { label: t('colFingerprint'), class: 'mono', cell: (r) => (r.fingerprint ? r.fingerprint.slice(0, 12) + '…' : '—') },
      { label: t('colResponse'), cell: (r) => (r.response ? String(r.response.status) : '—') },
      { label: t('colTransfer'), cell: (r) => r.transfer_id || '' },
      { label: t('colExpires'), cell: (r) => fmtTime(r.expires_at) },
    ],
    rows.map((r) => Object.assign({ attrs: { 'data-key': r.key, 'data-state': r.state || '' } }, r)),
    { id },
  );
}

// raceWidth is the width the race view may use: its box's.
function raceWidth() {
  return app.raceWidth || $('race').clientWidth || 900;
}

// drawBenchRace draws the bench's state as the race view: one row per lane
// on the engine's step, the key rows and the ledger, the step shown (the
// last one, or the mark the learner clicked) lit up with the rows its SQL
// touched.
// raceCache is the race view's model and the state it was built from: a
// mark clicked shows another step of the same state without building it
// again. The view's own; the controller never reads it.
const raceCache = { of: null, model: null };

export function drawBenchRace() {
  const st = app.state;
  if (!st) return;
  const events = [];
  const violations = [];
  if (raceCache.of !== st) {
    for (const l of st.lanes) events.push(...(l.events || []));
    for (const r of (st.report && st.report.rules) || [])
      for (const v of r.violations || []) violations.push(Object.assign({ rule: r.rule }, v));
  }
  // A mark clicked shows another step of the same state: the model stays,
  // and the view only lights up that step.
  if (raceCache.of !== st) {
    raceCache.model = buildRace({
      events,
      lanes: st.lanes,
      violations,
      policy: st.policy,
      transfers: st.transfers,
      accounts: st.accounts,
      clock: 'step',
      servers: st.servers,
    });
    raceCache.of = st;
  }
  const shown = app.lastEvent || st.last;
  const focused = raceFocus();
  drawRace($('race'), raceCache.model, {
    selectedLane: st.done ? null : on.nextLane(),
    onSelectLane: on.choose,
    onMark: on.showEvent,
    currentSeq: shown ? shown.seq : undefined,
    width: raceWidth(),
    expanded: app.expanded,
    onToggle: on.toggleRaceRow,
  });
  refocusRace(focused);
}

// FOCUS_KEYS are the data attributes that name what an element of the
// race view stands for (race.js): a row's lane and kind, a mark's event,
// a collapsed row's count that opens it or closes it again.
const FOCUS_KEYS = ['row', 'lane', 'seq', 'expand', 'collapse'];

// raceFocus is what the focused element of the race view stands for, or
// null when the focus is elsewhere.
function raceFocus() {
  const a = document.activeElement;
  const box = $('race');
  if (!a || a === box || !box.contains(a)) return null;
  const id = {};
  for (const k of FOCUS_KEYS) if (a.dataset && a.dataset[k] !== undefined) id[k] = a.dataset[k];
  return id;
}

// refocusRace gives the focus back to the element that stands for the same
// thing in the view just drawn: drawing replaces the SVG, and the focus of
// a learner who chose a lane or opened a row with the keyboard would fall
// to the page's body. A row opened or closed gives it to its other toggle;
// failing all, the lane's row, then the lane chosen to move next.
function refocusRace(id) {
  const box = $('race');
  if (!id || box.contains(document.activeElement)) return;
  const pick = (attrs) => {
    const sel = Object.entries(attrs)
      .map(([k, v]) => '[data-' + k + '="' + CSS.escape(v) + '"]')
      .join('');
    return sel ? box.querySelector(sel) : null;
  };
  const swapped = id.expand !== undefined ? { collapse: id.expand } : id.collapse !== undefined ? { expand: id.collapse } : null;
  const target =
    pick(id) ||
    (swapped && pick(swapped)) ||
    (id.lane !== undefined && box.querySelector('[role=radio][data-lane="' + CSS.escape(id.lane) + '"]')) ||
    box.querySelector('[role=radio][aria-checked="true"]') ||
    box.querySelector('[tabindex="0"]');
  if (target) target.focus();
}

// news is the sentence the page's live region says after a bench action
// (kind: step, run, back, reset, policy), built from the typed fields of
// the trace events the action added (never from their notes, which are
// for people and may be reworded): "Step 4: A1 committed 500,000 won as
// T1." A screen reader hears what happened, not only a number.
export function news(kind, before, st) {
  switch (kind) {
    case 'back':
      return t('newsBack', { n: st.step });
    case 'reset':
      return t('newsReset');
    case 'policy':
      return t('newsPolicy');
  }
  const seen = lastSeq(before);
  const added = [];
  for (const l of st.lanes) for (const e of l.events || []) if (e.seq > seen) added.push(e);
  added.sort((a, b) => a.seq - b.seq);
  const parts = [];
  if (kind === 'run') parts.push(t('newsRun', { n: st.step }));
  else parts.push(t('newsStep', { n: st.step, what: added.map(eventNews).join(t('newsAnd')) || t('newsNothing') }));
  if (st.done) {
    const broken = ((st.report && st.report.rules) || []).filter((r) => !r.ok).map((r) => r.rule.n + '. ' + ruleTitle(r.rule));
    parts.push(t('newsDone'), broken.length ? t('newsBroken', { rules: broken.join(', ') }) : t('newsHolds'));
  }
  return parts.join(' ');
}

function lastSeq(st) {
  let seq = -Infinity;
  for (const l of (st && st.lanes) || []) for (const e of l.events || []) if (e.seq > seq) seq = e.seq;
  return seq;
}

// OK_PHASE are the phases whose plain success says more than "ran".
const OK_PHASE = { receive: 'news_ok_receive', validate: 'news_ok_validate', fingerprint: 'news_ok_fingerprint' };

// eventNews is one trace event as a clause: who, and what the phase did,
// from its outcome, amount, status, transfer id, rows and key state.
export function eventNews(ev) {
  const v = {
    lane: ev.lane,
    phase: ev.phase,
    key: ev.key || '',
    status: ev.status || '',
    amount: won(ev.amount),
    transfer: ev.transfer_id || '',
  };
  // A recovery point recorded after the payment call, or read in its place.
  if (ev.phase === 'execute' && ev.recovery && ev.outcome !== 'executed') {
    return t(ev.charge === 'recovered' ? 'news_recovered' : 'news_recovery_made', Object.assign(v, { charge: ev.charge_id || '' }));
  }
  switch (ev.outcome) {
    case 'committed':
      return t(ev.transfer_id ? 'news_committed_as' : 'news_committed', v);
    case 'executed':
      // What the processor did with the call: charged, answered with its
      // first charge, or declined.
      return t(ev.charge ? 'news_executed_' + ev.charge : 'news_executed', Object.assign(v, { charge: ev.charge_id || '' }));
    case 'duplicate':
      return t(ev.rows === 0 ? 'news_claim_ignored' : 'news_duplicate', v);
    case 'ok':
      if (ev.key_state === 'absent') return t('news_ok_absent', v);
      return t(OK_PHASE[ev.phase] || 'news_ok', v);
    case 'replayed':
      // A replay says what it sent: the stored answer, one built again,
      // or a generic "already processed".
      if (ev.replay_from === 'generic' || ev.replay_from === 'recomputed') return t('news_replayed_' + ev.replay_from, v);
      return t('news_replayed', v);
    case 'lost':
    case 'delivered':
    case 'conflict':
    case 'mismatch':
    case 'claimed':
    case 'taken-over':
    case 'declined':
    case 'stored':
    case 'crashed':
    case 'timed-out':
    case 'rejected':
    case 'locked':
    case 'waiting':
    case 'skipped':
      return t('news_' + ev.outcome.replace('-', '_'), v);
    default:
      return t('news_other', Object.assign(v, { outcome: ev.outcome }));
  }
}

export function renderLast() {
  const ev = app.lastEvent || (app.state && app.state.last);
  const box = $('last-step');
  if (!ev) {
    patch(box, el('p', { class: 'empty', text: t('lastNone') }));
    return;
  }
  const lane = app.state && app.state.lanes.find((l) => l.id === ev.lane);
  patch(
    box,
    ...[
      lane && lane.verdict
        ? el(
            'p',
            { class: 'last-verdict' },
            el('strong', { text: lane.id }),
            ' ',
            verdictBadge(lane.verdict, inLang(lane.verdict_text, lane.verdict_text_ko)),
          )
        : null,
      el(
        'p',
        { class: 'last-head' },
        el('strong', { text: ev.lane }),
        ' · ',
        el('code', { text: ev.phase }),
        ' · ' + t('outcome') + ' ',
        el('strong', { class: 'outcome', 'data-outcome': ev.outcome, text: ev.outcome }),
        ev.status ? ' · ' + ev.status : '',
      ),
      ev.note ? el('p', { class: 'note', text: ev.note }) : null,
      el('h4', { text: t('lastSQL') }),
      el('pre', { id: 'last-sql', class: 'sql' }, ev.sql || t('noSQL')),
    ].filter(Boolean),
  );
}

export function renderReport(report, summaryBox, list) {
  if (!report) {
    summaryBox.textContent = '';
    patch(list);
    return;
  }
  const s = report.summary || {};
  summaryBox.textContent = t('summary', {
    transfers: s.transfers ?? 0,
    intents: s.intents ?? 0,
    extra: extraPayments(s.duplicates ?? 0, s.paid_twice ?? 0),
    conflicts: s.conflicts_409 ?? 0,
    mismatches: s.mismatches_422 ?? 0,
    replays: s.replays ?? 0,
  });
  summaryBox.dataset.duplicates = s.duplicates ?? 0;
  summaryBox.dataset.paidTwice = s.paid_twice ?? 0;
  patch(
    list,
    ...(report.rules || []).map((r) =>
      el(
        'li',
        {
          class: r.ok ? 'rule ok' : 'rule broken',
          'data-rule': r.rule.name,
          'data-ok': r.ok ? 'true' : 'false',
        },
        el('span', { class: 'rule-icon', 'aria-hidden': 'true', text: r.ok ? '✔' : '✘' }),
        ' ',
        el('strong', { text: r.ok ? t('ruleHolds') : t('ruleBroken') }),
        ' ',
        el('span', { text: r.rule.n + '. ' + ruleTitle(r.rule) }),
        (r.violations || []).length
          ? el(
              'ul',
              { class: 'violations' },
              r.violations.slice(0, 5).map((v) =>
                el(
                  'li',
                  {},
                  inLang(v.message, v.message_ko),
                  (v.lanes || []).length ? ' (' + v.lanes.join(', ') + ')' : '',
                  // The checker names the scale-out mistake behind a double payment
                  // across servers; the page says why in the learner's language.
                  v.cause ? el('p', { class: 'cause', 'data-cause': v.cause, text: t('cause_' + v.cause.replace('-', '_')) }) : null,
                ),
              ),
            )
          : null,
      ),
    ),
  );
}

export function renderGoals(goals, list = $('goals')) {
  if (list.id === 'goals') $('bench-goals-panel').hidden = !goals.length;
  patch(
    list,
    ...goals.map((g) =>
      el(
        'li',
        { class: g.met ? 'met' : 'not-met', 'data-goal': g.id, 'data-met': g.met ? 'true' : 'false' },
        el('span', { class: 'goal-icon', 'aria-hidden': 'true', text: g.met ? '✔' : '○' }),
        ' ',
        el('strong', { text: g.met ? t('goalMet') : t('goalNotYet') }),
        ' — ',
        g.text,
        g.policy && Object.keys(g.policy).length
          ? el(
              'button',
              {
                type: 'button',
                class: 'goal-policy',
                onclick: () => on.applyGoalPolicy(g.policy),
              },
              t('goalUnderPolicy', {
                policy: Object.entries(g.policy)
                  .map(([k, v]) => k + '=' + v)
                  .join(', '),
              }),
            )
          : null,
      ),
    ),
  );
}
