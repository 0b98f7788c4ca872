// lab-race.js is the lab page's race panel: the student's handler loaded
// into the lab's runner (lab/lab.js, a worker of its own), a scenario put
// on the bench with each attempt parked before its next call, stepped by
// hand with faults at any step, the explorer's shortest breaking order
// played back on the same bench, and the checker's verdict (Go, in the
// engine's module) once every attempt has ended.
//
//   const race = startRace({ words, code, showErrors, lineOf });
//
// words(key, vars) gives the page's words; code() the handler file as the
// boxes hold it now; showErrors(list) marks [{line, message}] (the file's
// lines) in the handler's editor; lineOf(n) is the file's line n as the
// handler's box numbers it, for the words on the panel.

import { $, el } from './dom.js';
import { startRunner } from './lab/lab.js';
import { labRaceInput } from './lab-model.js';
import { RUNGS } from './lab-words.js';
import { buildRace } from './race-model.js';
import { drawRace } from './race.js';
import { t } from './strings.js';

// RULE_RUNG is the rung of the ladder whose fix a broken rule asks for
// first (the goals of lab-words.js): a second payment for one wish asks
// for the key's claim; a different request under a used key, for its
// fingerprint; a success without its transfer, for the in-progress state;
// a replay that differs, for the stored answer; another customer's answer,
// a short retention or a second charge at the network, for the scope, the
// retention and the network's key.
const RULE_RUNG = [
  { n: 1, rung: 'unique' },
  { n: 6, rung: 'unique' },
  { n: 2, rung: 'fingerprint' },
  { n: 4, rung: 'in-progress' },
  { n: 3, rung: 'replay' },
  { n: 5, rung: 'scoped' },
  { n: 7, rung: 'scoped' },
  { n: 8, rung: 'scoped' },
];

// LAB_WORDS are the race view's words the lab says its own way: "intent",
// as the checker's verdict and the lab's scenarios say it, where the
// lessons say "wish".
const LAB_WORDS = {
  raceLg_money_again: 'raceLab_money_again',
  raceLg_charge_again: 'raceLab_charge_again',
  raceIntentRow: 'raceLab_intentRow',
};
const raceWords = (key, vars) => t(LAB_WORDS[key] || key, vars);

// CAUSE_RUNG is the rung whose fix a diagnosed cause asks for: finer than
// the rule's (RULE_RUNG), since one rule breaks for several causes (rule
// 4 broken by another customer's key asks for the scope, not for the
// in-progress state).
const CAUSE_RUNG = {
  'key-optional': 'unique',
  'stored-validation-refusal': 'unique',
  'no-fingerprint': 'fingerprint',
  'raw-bytes-fingerprint': 'fingerprint',
  'order-sensitive-fingerprint': 'fingerprint',
  'completed-before-paid': 'in-progress',
  'in-process-lock': 'in-progress',
  'refusal-not-stored': 'in-progress',
  'generic-replay': 'replay',
  'recomputed-replay': 'replay',
  'replay-status': 'replay',
  'refusal-rerendered': 'replay',
  'global-keys': 'scoped',
  'short-retention': 'scoped',
};

// rungOf is the rung a violation of a rule asks for.
function rungOf(rule, v) {
  return (v && CAUSE_RUNG[v.cause]) || (RULE_RUNG.find((x) => x.n === rule.n) || {}).rung;
}

export function startRace({ words: w, code, showErrors, lineOf = (n) => n }) {
  // A step of a handler takes milliseconds; the budget is for a loop that
  // never yields, and is wide enough for a slow laptop under load, where
  // loading a handler (a fresh database, the student's file compiled)
  // took over 2 s in a test on a busy machine.
  const runner = startRunner({ budgetMs: 8000 });
  const panel = { runner, scenarios: [], state: null, busy: false, loaded: '', retention: null };
  const status = (s) => ($('lab-run-status').textContent = s);
  const buttons = ['btn-lab-start', 'btn-lab-explore', 'btn-lab-grade'];

  function setBusy(busy) {
    panel.busy = busy;
    for (const id of buttons) $(id).disabled = busy;
    $('btn-lab-stop').disabled = !busy;
    for (const b of document.querySelectorAll('#lab-lanes button')) b.disabled = busy;
  }

  // load gives the runner the code the boxes hold, when it changed. A file
  // that does not load is shown at its line.
  async function load() {
    const src = code();
    // What was found for other code no longer says anything.
    if (src !== panel.loaded) {
      $('lab-found').hidden = true;
      $('lab-grade').hidden = true;
    }
    if (src === panel.loaded && panel.scenarios.length) return true;
    const r = await runner.load(src);
    if (r && r.error) {
      panel.loaded = '';
      showErrors(r.error.line ? [{ line: r.error.line, message: r.error.message }] : []);
      status(w('loadFailed', { error: (r.error.line ? 'line ' + lineOf(r.error.line) + ': ' : '') + r.error.message }));
      return false;
    }
    showErrors([]);
    panel.loaded = src;
    panel.retention = r.retentionSeconds ?? null;
    panel.scenarios = await runner.scenarios();
    const sel = $('lab-scenario');
    const chosen = sel.value;
    sel.replaceChildren(...panel.scenarios.map((s) => el('option', { value: s.name, selected: s.name === chosen }, scenarioWords(s.name))));
    return true;
  }

  // scenarioWords names a scenario of the runner in the page's language
  // (its id when the page has no words for it).
  function scenarioWords(name) {
    const k = 'scenario_' + name.replace(/-/g, '_');
    const words = w(k);
    return words === k ? name : words;
  }

  // ruleWords names the checker's rule in the page's language.
  function ruleWords(rule) {
    const ko = document.documentElement.lang === 'ko';
    return rule.n + '. ' + ((ko && rule.title_ko) || rule.title || rule.name);
  }

  // guard runs one action of the panel: one at a time, Stop enabled while
  // it runs, and a stopped handler (the watchdog's or the Stop button's)
  // said in words.
  async function guard(fn) {
    if (panel.busy) return;
    const from = focusKey();
    setBusy(true);
    try {
      await fn();
    } catch (err) {
      status(err.stopped ? w('stopped', { why: err.message }) : err.message);
      if (err.stopped) panel.loaded = '';
    } finally {
      setBusy(false);
      refocus(from);
      // Tests wait on this: one more action of the panel has ended.
      document.body.dataset.labActs = String(Number(document.body.dataset.labActs || 0) + 1);
    }
  }

  // An action disables the panel's buttons while it runs, and the cards
  // are drawn anew after every step: either drops the focus to the page's
  // body. focusKey says where it was (a card's button by its attempt and
  // action, else a button's id); refocus puts it back on the same button,
  // else on the next attempt's step, else on Start, so that a keyboard
  // user never starts over from the top of the page.
  function focusKey() {
    const e = document.activeElement;
    if (!e || e === document.body) return null;
    if (e.dataset && e.dataset.focus) return { card: e.dataset.focus };
    return e.id ? { id: e.id } : null;
  }

  function refocus(from) {
    if (!from) return;
    const lanes = $('lab-lanes');
    const target = from.card
      ? lanes.querySelector('[data-focus="' + from.card + '"]') || lanes.querySelector('button.primary') || $('btn-lab-start')
      : $(from.id);
    if (target && !target.disabled && document.activeElement !== target) target.focus();
  }

  async function putOnBench(name) {
    if (!(await load())) return;
    const sc = panel.scenarios.find((s) => s.name === (name || $('lab-scenario').value)) || panel.scenarios[0];
    $('lab-scenario').value = sc.name;
    show(await runner.start(sc));
    status(w('onBench', { scenario: scenarioWords(sc.name) }));
  }

  function show(state) {
    panel.state = state;
    renderRace(state);
    renderLanes(state);
    renderTrace(state);
    renderVerdict(state);
    const errors = state.attempts
      .filter((a) => a.error && a.error.line)
      .map((a) => ({ line: a.error.line, message: a.id + ': ' + a.error.message }));
    showErrors(errors);
    if (state.done) status(w('allDone'));
    document.body.dataset.labSteps = String(state.steps);
    document.body.dataset.labDone = state.done ? 'true' : 'false';
  }

  // renderRace draws the run in the lessons' race view: a row per
  // attempt, each statement a mark (its SQL in the mark's title), the
  // ledger's payments and the network's charges, the broken rules'
  // brackets once the checker has judged the run.
  function renderRace(state) {
    const box = $('lab-race-view');
    box.hidden = false;
    const model = buildRace(labRaceInput(state));
    drawRace(box, model, { width: box.clientWidth || 900, t: raceWords });
  }

  function renderLanes(state) {
    $('lab-lanes').replaceChildren(
      ...state.attempts.map((a) => {
        const card = el('section', { class: 'lab-lane state-' + a.state, 'data-attempt': a.id, 'aria-label': a.id });
        card.append(el('h4', {}, a.id + ' · ' + (a.customer || '—') + ' · ' + (a.key || '—')));
        if (a.next && a.state === 'parked') {
          card.append(
            el(
              'p',
              { class: 'lab-next' },
              w('nextCall', { op: a.next.op === 'pay' ? 'pay' : 'db.' + a.next.op, line: lineOf(a.next.line) }),
            ),
            el(
              'pre',
              { class: 'lab-sql' },
              a.next.sql || (a.next.op === 'pay' ? 'pay(' + JSON.stringify(a.next.params || '') + ')' : a.next.op.toUpperCase()),
            ),
          );
          if (a.waiting) card.append(el('p', { class: 'lab-wait' }, '⋯ ' + w('waitsLock', { holder: state.holder || '?' })));
          const act = (label, what, fn, cls) =>
            el('button', { type: 'button', class: cls || '', 'data-focus': a.id + ':' + what, onclick: () => guard(fn) }, label);
          card.append(
            el(
              'div',
              { class: 'controls' },
              act(w('runStep', { id: a.id }), 'step', async () => show(await runner.step(a.id)), 'primary'),
              act('✸ ' + w('crash', { id: a.id }), 'crash', async () => show(await runner.inject(a.id, 'crash'))),
              act('✂ ' + w('loseAnswer', { id: a.id }), 'lose', async () => show(await runner.inject(a.id, 'lose'))),
              act('✗ ' + w('timeOut', { id: a.id }), 'timeout', async () => show(await runner.inject(a.id, 'timeout'))),
            ),
          );
        } else {
          card.append(el('p', { class: 'lab-end', 'data-end': a.state }, endWords(a)));
          if (a.answer && a.answer.body) card.append(el('pre', { class: 'lab-answer' }, a.answer.body));
        }
        return card;
      }),
    );
  }

  function endWords(a) {
    if (a.state === 'crashed') return '✸ ' + w('crashed');
    if (a.error)
      return '⚠ ' + w('threw', { name: a.error.name, line: a.error.line ? lineOf(a.error.line) : '?', message: a.error.message });
    if (!a.answer) return w('cut');
    return (a.lost || a.timed_out ? '✂ ' : '✉ ') + w(a.lost || a.timed_out ? 'answerLost' : 'answered', { status: a.answer.status });
  }

  function renderTrace(state) {
    const box = $('lab-trace-box');
    box.hidden = !state.trace.length;
    $('lab-trace').replaceChildren(
      ...state.trace
        .filter((e) => e.phase !== 'start')
        .map((e) =>
          el(
            'li',
            { 'data-outcome': e.outcome || '' },
            e.lane +
              ' · ' +
              (e.op ? (e.op === 'pay' ? 'pay' : 'db.' + e.op) : e.phase) +
              (e.line ? ' (' + lineOf(e.line) + ')' : '') +
              ' → ' +
              (e.outcome || ''),
            e.sql ? el('code', {}, ' ' + e.sql) : null,
            e.message ? el('span', { class: 'lab-msg' }, ' — ' + e.message) : null,
          ),
        ),
    );
  }

  function renderVerdict(state) {
    const box = $('lab-verdict');
    if (!state.done || !state.verdict) {
      box.replaceChildren();
      return;
    }
    box.replaceChildren(el('p', {}, w('allDone')), rulesList(state.verdict));
  }

  // rulesList lists the checker's rules (verdict.report, lab.Report in
  // Go) with how each fared, and why a broken one broke.
  function rulesList(verdict) {
    const ko = document.documentElement.lang === 'ko';
    return el(
      'ul',
      { class: 'lab-rules' },
      ...((verdict.report && verdict.report.rules) || []).map((r) =>
        el(
          'li',
          { 'data-rule': r.rule.name, 'data-ok': r.ok ? 'true' : 'false', class: r.ok ? 'ok' : 'fail' },
          (r.ok ? '✔ ' : '✘ ') +
            r.rule.n +
            '. ' +
            ((ko && r.rule.title_ko) || r.rule.title || r.rule.name) +
            ': ' +
            w(r.ok ? 'ruleHolds' : 'ruleBroken'),
          ...(r.violations || []).slice(0, 2).map((v) => el('div', { class: 'lab-why' }, (ko && v.message_ko) || v.message)),
          ...(r.violations || []).slice(0, 1).flatMap(causeLines),
        ),
      ),
    );
  }

  // causeLines says what the checker in Go diagnosed of a broken rule
  // (lab.JudgeHandlerRun, the grader's causes and fixes): what went wrong
  // when the evidence tells, and what to change.
  function causeLines(v) {
    const ko = document.documentElement.lang === 'ko';
    const says = (ko && v.diagnosis_ko) || v.diagnosis;
    const fix = (ko && v.fix_ko) || v.fix;
    return [
      says ? el('div', { class: 'lab-cause', 'data-cause': v.cause || '' }, w('gradeCause', { says })) : null,
      fix ? el('div', { class: 'lab-fix' }, w('gradeFix', { fix })) : null,
    ];
  }

  // answersLine says what a held scenario's attempts were answered, in one
  // order: each attempt's status when there are a few, else how many got
  // each status ("—" for none: a crash).
  function answersLine(answers) {
    if (!answers || !answers.length) return null;
    const st = (a) => (a.status ? String(a.status) : '—');
    let said;
    if (answers.length <= 4) said = answers.map((a) => a.id + ' ' + st(a)).join(' · ');
    else {
      const n = new Map();
      for (const a of answers) n.set(st(a), (n.get(st(a)) || 0) + 1);
      said = [...n].map(([k, c]) => k + ' ×' + c).join(' · ');
    }
    return el('div', { class: 'lab-answers' }, w('gradeAnswers', { answers: said }));
  }

  // noteLines are the answers the contract does not give (a malformed
  // key answered 201), one line each.
  function noteLines(notes) {
    const ko = document.documentElement.lang === 'ko';
    return (notes || []).map((n) =>
      el(
        'div',
        { class: 'lab-note', 'data-lanes': (n.lanes || []).join(',') },
        w('gradeNote', { says: (ko && n.message_ko) || n.message }),
      ),
    );
  }

  async function explore() {
    if (!(await load())) return;
    status(w('exploring'));
    $('lab-found').hidden = true;
    const r = await runner.explore();
    document.body.dataset.labExplored = r.broke ? 'broke' : 'held';
    if (!r.broke) {
      status(w('exploredNone', { tried: r.tried, ms: Math.round(r.ms), bound: r.bound }));
      if (r.notes && r.notes.length) {
        const found = $('lab-found');
        found.hidden = false;
        found.dataset.scenario = r.notes[0].scenario;
        found.dataset.rule = '';
        found.replaceChildren(el('p', {}, w('exploredNoted', { n: r.notes.length })), ...noteLines(r.notes));
      }
      return;
    }
    const broken = ((r.verdict.report && r.verdict.report.rules) || []).find((x) => !x.ok);
    status(
      w('exploredBroke', {
        rule: broken ? ruleWords(broken.rule) : '?',
        scenario: scenarioWords(r.scenario),
        tried: r.tried,
        steps: r.steps,
        switches: switchesOf(r.schedule),
      }),
    );
    const found = $('lab-found');
    found.hidden = false;
    found.dataset.scenario = r.scenario;
    found.dataset.rule = broken ? broken.rule.name : '';
    found.replaceChildren(
      el(
        'p',
        { class: 'schedule', 'data-switches': String(switchesOf(r.schedule)) },
        w('scheduleWords', { schedule: scheduleRuns(r.schedule) }),
      ),
      rulesList(r.verdict),
      el('button', { type: 'button', id: 'btn-lab-replay', onclick: () => guard(() => replay(r.scenario, r.schedule)) }, w('replayFound')),
    );
  }

  // gradeAll explores every scenario on its own, so that every rule a
  // scenario breaks is found (explore stops at the first), and names the
  // rung that fixes the first broken rule in ladder order: the rung the
  // student has reached is the one before it.
  async function gradeAll() {
    if (!(await load())) return;
    const rows = [];
    const broken = new Set();
    const asked = new Set();
    for (const [i, sc] of panel.scenarios.entries()) {
      status(w('grading', { n: i + 1, total: panel.scenarios.length, scenario: sc.name }));
      const r = await runner.explore({ only: [sc.name], answers: true });
      const rules = r.broke ? ((r.verdict.report && r.verdict.report.rules) || []).filter((x) => !x.ok).map((x) => x.rule) : [];
      for (const rule of rules) broken.add(rule.n);
      if (r.broke)
        for (const x of (r.verdict.report && r.verdict.report.rules) || [])
          if (!x.ok) for (const v of x.violations && x.violations.length ? x.violations : [null]) asked.add(rungOf(x.rule, v));
      rows.push({ sc, r, rules });
    }
    const ns = [...broken].sort((a, b) => a - b);
    const next = [...asked].filter(Boolean).sort((a, b) => RUNGS.indexOf(a) - RUNGS.indexOf(b))[0];
    // A file that publishes no retentionSeconds leaves rule 7 unknown, as
    // idemlab grade says it (and fails until it is published): no client
    // can rely on a retention nobody published.
    const unknown = panel.retention === null;
    const box = $('lab-grade');
    box.hidden = false;
    box.dataset.broken = ns.join(',');
    box.dataset.unknown = unknown ? '7' : '';
    box.replaceChildren(
      el('h4', {}, w('gradeHeading')),
      el(
        'table',
        {},
        el(
          'thead',
          {},
          el('tr', {}, el('th', { scope: 'col' }, w('gradeScenario')), el('th', { scope: 'col' }, w('gradeResult')), el('td', {})),
        ),
        el(
          'tbody',
          {},
          ...rows.map(({ sc, r, rules }) =>
            el(
              'tr',
              { 'data-scenario': sc.name, 'data-broke': r.broke ? 'true' : 'false', 'data-notes': String((r.notes || []).length) },
              el('th', { scope: 'row' }, scenarioWords(sc.name)),
              el(
                'td',
                {},
                r.broke
                  ? '✘ ' + w('gradeBroke', { rules: rules.map(ruleWords).join('; '), steps: r.steps })
                  : r.notes && r.notes.length
                    ? '⚠ ' + w('gradeNoted', { tried: r.tried })
                    : '✔ ' + w('gradeHeld', { tried: r.tried }),
                ...(r.broke ? causeLines(firstViolation(r.verdict)) : [answersLine(r.answers), ...noteLines(r.notes)]),
              ),
              el(
                'td',
                {},
                r.broke ? el('button', { type: 'button', onclick: () => guard(() => replay(sc.name, r.schedule)) }, w('gradePlay')) : null,
              ),
            ),
          ),
        ),
      ),
      // replaceChildren would write a null out as the word "null".
      ...(unknown ? [el('p', { class: 'lab-grade-unknown' }, '⚠ ' + w('gradeUnknown7'))] : []),
      el(
        'p',
        { class: 'lab-grade-sum' },
        ns.length ? w('gradeNext', { rules: ns.join(', '), rung: next || '?' }) : unknown ? w('gradeTopUnknown') : w('gradeTop'),
      ),
    );
    status('');
  }

  // firstViolation is the first broken rule's first violation of a
  // verdict's report ({} when none).
  function firstViolation(verdict) {
    const broken = ((verdict && verdict.report && verdict.report.rules) || []).find((x) => !x.ok);
    return (broken && broken.violations && broken.violations[0]) || {};
  }

  // replay plays a schedule on the bench, one step at a time, so that the
  // lanes and the trace show it as if stepped by hand.
  async function replay(name, schedule) {
    await putOnBench(name);
    for (const pick of schedule) {
      const state = pick.startsWith('crash:') ? await runner.inject(pick.slice(6), 'crash') : await runner.step(pick, true);
      show(state);
    }
  }

  $('btn-lab-start').addEventListener('click', () => guard(() => putOnBench()));
  $('btn-lab-explore').addEventListener('click', () => guard(explore));
  $('btn-lab-grade').addEventListener('click', () => guard(gradeAll));
  $('btn-lab-stop').addEventListener('click', () => runner.stop());

  status(w('engineStarting'));
  runner.ready.then(
    () => {
      status('');
      setBusy(false);
      document.body.dataset.runner = 'ready';
      guard(load);
    },
    (err) => {
      status(w('engineFailedLab', { error: err.message }));
      document.body.dataset.runner = 'failed';
    },
  );
  return panel;
}

// scheduleRuns says a schedule as its runs: "a1 ×3 → a2 ×12 → a1 ×9", the
// few moves a reader follows, where the steps one by one are dozens.
export function scheduleRuns(schedule) {
  const runs = [];
  for (const pick of schedule) {
    const last = runs[runs.length - 1];
    if (last && last.pick === pick) last.n++;
    else runs.push({ pick, n: 1 });
  }
  return runs.map((r) => (r.n > 1 ? r.pick + ' ×' + r.n : r.pick)).join(' → ');
}

// switchesOf counts where a schedule moves from one attempt to another.
export function switchesOf(schedule) {
  let n = 0;
  for (let i = 1; i < schedule.length; i++) if (schedule[i] !== schedule[i - 1]) n++;
  return n;
}
