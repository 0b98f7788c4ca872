// lab-race.js is the lab page's race panel: the student's handler loaded
// into the lab's runner (lab/lab.js, a worker of its own), a scenario put
// on the bench with each attempt parked before its next call, stepped by
// hand with faults at any step, the explorer's shortest breaking order
// played back on the same bench, and the checker's verdict (Go, in the
// engine's module) once every attempt has ended.
//
//   const race = startRace({ words, lang, rung, goRung, code, showErrors, lineOf });
//
// words(key, vars) gives the page's words in lang; rung() the rung the
// student is on (the panel says which broken rules that rung asks about
// and which a later rung fixes) and goRung(r) takes them to another; code()
// the handler file as the boxes hold it now; showErrors(list) marks
// [{line, message}] (the file's lines) in the handler's editor and beside
// it; lineOf(n) is the file's line n as the handler's box numbers it, for
// the words on the panel.
//
// The panel shows one result at a time: the bench (its cards and the
// checker's verdict), the explorer's find, or the grade of every scenario.
// Each action clears the others' (playing a grade's row back keeps the
// grade, the list it was chosen from).

import { $, el } from './dom.js';
import { startRunner } from './lab/lab.js';
import { labRaceInput } from './lab-model.js';
import { RUNGS, rungKey, rungWords } from './lab-words.js';
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
  'key-ignored': 'unique',
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
  // A note's cause (lab.Note): no rule broke, but a claim a crash left
  // refused the retry ten minutes later. The lease that settles it is the
  // scoped rung's.
  'claim-never-settled': 'scoped',
  // Two live attempts both paid the network: the claim did not stop the
  // second. The unique rung's claim, made before pay, does.
  'paid-without-claim': 'unique',
};

// rungOf is the rung a violation of a rule asks for.
function rungOf(rule, v) {
  return (v && CAUSE_RUNG[v.cause]) || (RULE_RUNG.find((x) => x.n === rule.n) || {}).rung;
}

export function startRace({ words: w, lang = 'en', rung = () => RUNGS[0], goRung = () => {}, code, showErrors, lineOf = (n) => n }) {
  // A step of a handler takes milliseconds; the budget is for a loop that
  // never yields, and is wide enough for a slow laptop under load, where
  // loading a handler (a fresh database, the student's file compiled)
  // took over 2 s in a test on a busy machine.
  const runner = startRunner({ budgetMs: 8000 });
  const panel = { runner, scenarios: [], state: null, bench: null, busy: false, loaded: '', retention: null, focusVerdict: false };
  const status = (s) => ($('lab-run-status').textContent = s);
  const buttons = ['btn-lab-start', 'btn-lab-explore', 'btn-lab-grade'];
  const label = (r) => rungWords(lang, r).label;

  function setBusy(busy) {
    panel.busy = busy;
    for (const id of buttons) $(id).disabled = busy;
    $('btn-lab-stop').disabled = !busy;
    for (const b of document.querySelectorAll('#lab-lanes button')) b.disabled = busy;
  }

  // --- one result at a time ---------------------------------------------------

  function clearBench() {
    panel.state = null;
    panel.bench = null;
    $('lab-race-view').hidden = true;
    $('lab-lanes').replaceChildren();
    delete $('lab-lanes').dataset.holder;
    $('lab-verdict').replaceChildren();
    $('lab-trace-box').hidden = true;
    $('lab-trace').replaceChildren();
    document.body.dataset.labSteps = '0';
    document.body.dataset.labDone = 'false';
  }

  function clearFound() {
    $('lab-found').hidden = true;
    $('lab-found').replaceChildren();
  }

  function clearGrade() {
    $('lab-grade').hidden = true;
    $('lab-grade').replaceChildren();
  }

  // load gives the runner the code the boxes hold, when it changed. A file
  // that does not load is shown at its line. What was found for other code
  // no longer says anything.
  async function load() {
    const src = code();
    if (src !== panel.loaded) {
      clearFound();
      clearGrade();
      clearBench();
    }
    if (src === panel.loaded && panel.scenarios.length) return true;
    const r = await runner.load(src);
    if (r && r.error) {
      panel.loaded = '';
      const said = (r.error.name && r.error.name !== 'Error' ? r.error.name + ': ' : '') + r.error.message;
      showErrors(r.error.line ? [{ line: r.error.line, message: said }] : []);
      status(w('loadFailed', { error: (r.error.line ? w('atLine', { line: lineOf(r.error.line) }) + ': ' : '') + said }));
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

  function ruleTitle(rule) {
    return (lang === 'ko' && rule.title_ko) || rule.title || rule.name;
  }

  // ruleWords names the checker's rule in the page's language.
  function ruleWords(rule) {
    return rule.n + '. ' + ruleTitle(rule);
  }

  // --- what the rung asks ---------------------------------------------------

  // rulesOf is a verdict's rules with how each fared (lab.Report in Go).
  function rulesOf(verdict) {
    return (verdict && verdict.report && verdict.report.rules) || [];
  }

  // unknownRule: the checker cannot judge the rule, as idemlab grade says
  // of rule 7 when the file publishes no retentionSeconds (lab.RuleResult's
  // unknown, with why in words). A checker that said the rule holds is
  // not believed there.
  function unknownRule(r) {
    if (r.unknown === true || r.verdict === 'unknown' || r.status === 'unknown') return true;
    return !!r.rule && r.rule.n === 7 && !!r.ok && panel.retention === null;
  }

  // fixRungs are the rungs that fix a broken (or unknown) rule, one per
  // violation, in ladder order: rule 7 unknown is the scoped rung's.
  function fixRungs(r) {
    if (unknownRule(r)) return ['scoped'];
    const vs = r.violations && r.violations.length ? r.violations : [null];
    return vs
      .map((v) => rungOf(r.rule, v))
      .filter(Boolean)
      .sort((a, b) => RUNGS.indexOf(a) - RUNGS.indexOf(b));
  }

  // later: every fix a broken rule asks for is a later rung's than the
  // student's; the rule is expected to break here. A rule no rung is
  // known to fix is this rung's business.
  function later(r) {
    const here = RUNGS.indexOf(rung());
    const rungs = fixRungs(r);
    return rungs.length > 0 && rungs.every((x) => RUNGS.indexOf(x) > here);
  }

  // askedNotes are the notes with a cause (lab.Note) that the rung the
  // student is on, or an earlier one, asks to settle: they keep the rung
  // from being done though no rule broke. laterNotes are the rest of the
  // caused notes, a later rung's.
  function askedNotes(notes) {
    const here = RUNGS.indexOf(rung());
    return (notes || []).filter((n) => n.cause && CAUSE_RUNG[n.cause] && RUNGS.indexOf(CAUSE_RUNG[n.cause]) <= here);
  }
  function laterNotes(notes) {
    const here = RUNGS.indexOf(rung());
    return (notes || []).filter((n) => n.cause && CAUSE_RUNG[n.cause] && RUNGS.indexOf(CAUSE_RUNG[n.cause]) > here);
  }

  // --- actions ----------------------------------------------------------------

  // guard runs one action of the panel: one at a time, Stop enabled while
  // it runs, and a stopped handler (the watchdog's or the Stop button's)
  // said in words.
  async function guard(fn) {
    if (panel.busy) return;
    const from = focusKey();
    panel.focusVerdict = false;
    setBusy(true);
    try {
      await fn();
    } catch (err) {
      status(err.stopped ? w('stopped', { why: err.message }) : err.message);
      if (err.stopped) panel.loaded = '';
    } finally {
      setBusy(false);
      if (panel.focusVerdict && $('lab-verdict-title')) focusVerdict();
      else refocus(from);
      panel.focusVerdict = false;
      // Tests wait on this: one more action of the panel has ended.
      document.body.dataset.labActs = String(Number(document.body.dataset.labActs || 0) + 1);
    }
  }

  // An action disables the panel's buttons while it runs, and the cards
  // are drawn anew after every step: either drops the focus to the page's
  // body. focusKey says where it was (a card's button by its attempt and
  // action, else a button's id); refocus puts it back on the same button,
  // else on the next attempt's step that can run, else on Start, so that
  // a keyboard user never starts over from the top of the page. Once the
  // last attempt has ended the focus goes to the verdict (focusVerdict),
  // not to Start: another Enter there would start the bench over and
  // clear what the student came to read.
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
      ? lanes.querySelector('[data-focus="' + from.card + '"]') ||
        lanes.querySelector('button.primary:not([aria-disabled=true])') ||
        $('btn-lab-start')
      : $(from.id);
    if (target && !target.disabled && !target.hidden && document.activeElement !== target) target.focus();
  }

  function focusVerdict() {
    const h = $('lab-verdict-title');
    h.focus({ preventScroll: true });
    h.scrollIntoView({ block: 'nearest' });
  }

  // putOnBench puts a scenario on the bench (the chosen one, or name),
  // every attempt parked before its first call.
  async function putOnBench(name, opts = {}) {
    if (!(await load())) return false;
    clearFound();
    if (!opts.keepGrade) clearGrade();
    const sc = panel.scenarios.find((s) => s.name === (name || $('lab-scenario').value)) || panel.scenarios[0];
    $('lab-scenario').value = sc.name;
    panel.bench = sc;
    panel.state = null;
    show(await runner.start(sc));
    status(w('onBench', { scenario: scenarioWords(sc.name) }));
    return true;
  }

  function show(state) {
    const before = panel.state;
    panel.state = state;
    renderRace(state);
    renderLanes(state);
    renderTrace(state);
    renderVerdict(state);
    const errors = state.attempts
      .filter((a) => a.error && a.error.line)
      .map((a) => ({ line: a.error.line, message: a.id + ': ' + a.error.name + ': ' + a.error.message }));
    showErrors(errors);
    if (state.done) status(w('allDone'));
    if (state.done && !(before && before.done)) panel.focusVerdict = true;
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

  // specOf is what the scenario sends as the attempt: its body, and the
  // attempt it waits for.
  function specOf(id) {
    return ((panel.bench && panel.bench.attempts) || []).find((x) => x.id === id) || {};
  }

  function renderLanes(state) {
    $('lab-lanes').dataset.holder = state.holder || '';
    $('lab-lanes').replaceChildren(
      ...state.attempts.map((a) => {
        const spec = specOf(a.id);
        const card = el('section', { class: 'lab-lane state-' + a.state, 'data-attempt': a.id, 'aria-labelledby': 'lab-lane-' + a.id });
        // A space between the card's blocks: on screen each block has its
        // line, but read as text (a screen reader, textContent) "answered
        // 201" and the body after it would run together.
        const add = (...nodes) => {
          for (const n of nodes) {
            if (card.firstChild) card.append(' ');
            card.append(n);
          }
        };
        add(el('h4', { id: 'lab-lane-' + a.id }, a.id + ' · ' + (a.customer || '—') + ' · ' + (a.key || '—')));
        if (spec.body !== undefined)
          add(
            el(
              'p',
              { class: 'lab-req' },
              el('span', { class: 'muted' }, w('sends') + ' '),
              el('code', {}, ...breakable(String(spec.body))),
            ),
          );
        if (a.next && a.state === 'parked') {
          add(
            el(
              'p',
              { class: 'lab-next' },
              w('nextCall', { op: a.next.op === 'pay' ? 'pay' : 'db.' + a.next.op, line: lineOf(a.next.line) }),
            ),
            el('pre', { class: 'lab-sql' }, a.next.sql || (a.next.op === 'pay' ? payWords(a.next.params) : a.next.op.toUpperCase())),
          );
          const holder = state.holder || '?';
          if (a.waiting) add(el('p', { class: 'lab-wait', id: 'lab-wait-' + a.id }, '⋯ ' + w('waitsLock', { holder })));
          const act = (label, what, fn, attrs) =>
            el('button', Object.assign({ type: 'button', 'data-focus': a.id + ':' + what, onclick: () => guard(fn) }, attrs || {}), label);
          // A step while the attempt waits for the lock would run nothing
          // (the runner only records the wait again): the button says so
          // and does nothing but say why.
          const step = a.waiting
            ? act('⋯ ' + w('runStepWaits', { id: a.id }), 'step', async () => status(w('waitsNoStep', { id: a.id, holder })), {
                class: 'primary',
                'aria-disabled': 'true',
                'aria-describedby': 'lab-wait-' + a.id,
              })
            : act(w('runStep', { id: a.id }), 'step', async () => show(await runner.step(a.id)), { class: 'primary' });
          add(
            el(
              'div',
              { class: 'controls' },
              step,
              act('✸ ' + w('crash', { id: a.id }), 'crash', async () => show(await runner.inject(a.id, 'crash'))),
              act('✂ ' + w('loseAnswer', { id: a.id }), 'lose', async () => show(await runner.inject(a.id, 'lose'))),
              act('✗ ' + w('timeOut', { id: a.id }), 'timeout', async () => show(await runner.inject(a.id, 'timeout'))),
            ),
          );
        } else if (a.state === 'new') {
          add(el('p', { class: 'lab-end', 'data-end': 'new' }, spec.after ? w('notSentAfter', { after: spec.after }) : w('notSent')));
        } else {
          add(el('p', { class: 'lab-end', 'data-end': a.state }, endWords(a)));
          if (a.answer && !a.error) {
            const headers = Object.entries(a.answer.headers || {});
            if (headers.length) add(el('pre', { class: 'lab-headers' }, headers.map(([k, v]) => k + ': ' + v).join('\n')));
            if (a.answer.body) add(el('pre', { class: 'lab-answer' }, ...breakable(a.answer.body)));
          }
        }
        return card;
      }),
    );
  }

  // payWords says a pay call as the student wrote it: pay({ from, to,
  // amount, key }), the key left out when none was given.
  function payWords(params) {
    const p = params && params[0];
    if (!p || typeof p !== 'object') return 'pay(' + JSON.stringify(p ?? null) + ')';
    const fields = Object.entries(p).filter(([k, v]) => !(k === 'key' && (v === null || v === undefined)));
    return 'pay({ ' + fields.map(([k, v]) => k + ': ' + JSON.stringify(v)).join(', ') + ' })';
  }

  function endWords(a) {
    if (a.state === 'crashed') {
      // Rolled back only when a transaction was open (the runner's crash event says).
      const crash = ((panel.state && panel.state.trace) || []).find((e) => e.phase === 'crash' && e.lane === a.id);
      return '✸ ' + w(crash && !crash.rolled_back ? 'crashedNoTx' : 'crashed');
    }
    if (a.error)
      return (
        '⚠ ' +
        (a.error.line
          ? w('threw', { name: a.error.name, line: lineOf(a.error.line), message: a.error.message })
          : w('threwNoLine', { name: a.error.name, message: a.error.message }))
      );
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

  // renderVerdict shows the checker's verdict once every attempt has
  // ended, under a heading the focus can go to.
  function renderVerdict(state) {
    const box = $('lab-verdict');
    if (!state.done || !state.verdict) {
      box.replaceChildren();
      return;
    }
    const notes = (state.verdict.report && state.verdict.report.notes) || [];
    box.replaceChildren(
      ...spaced(el('h4', { id: 'lab-verdict-title', tabindex: '-1' }, w('verdictHeading')), rulesList(state.verdict), ...noteLines(notes)),
    );
  }

  // rulesList lists the checker's rules (verdict.report, lab.Report in
  // Go) with how each fared, and why a broken one broke: whether the rung
  // the student is on asks for it, or a later rung fixes it (expected
  // here). Rule 7 without a published retention is unknown, as idemlab
  // grade says it.
  function rulesList(verdict) {
    return el(
      'ul',
      { class: 'lab-rules' },
      ...spaced(
        rulesOf(verdict).map((r) => {
          const unknown = unknownRule(r);
          const broken = unknown || !r.ok;
          const expected = broken && later(r);
          const fixer = broken ? fixRungs(r)[0] : '';
          return el(
            'li',
            {
              'data-rule': r.rule.name,
              'data-ok': unknown ? 'unknown' : r.ok ? 'true' : 'false',
              'data-expected': broken ? String(expected) : null,
              class: !broken ? 'ok' : expected ? 'expected' : unknown ? 'unknown' : 'fail',
            },
            ...spaced(
              el(
                'div',
                { class: 'lab-rule-head' },
                (unknown ? '⚠ ' : r.ok ? '✔ ' : '✘ ') +
                  ruleWords(r.rule) +
                  ': ' +
                  (unknown ? (lang === 'ko' && r.why_ko) || r.why || w('ruleUnknown7') : w(r.ok ? 'ruleHolds' : 'ruleBroken')),
              ),
              broken && fixer
                ? el('div', { class: 'lab-rung-note' }, w(expected ? 'ruleExpected' : 'ruleAsked', { rung: label(fixer) }))
                : null,
              ...(r.violations || []).slice(0, 2).map((v) => el('div', { class: 'lab-why' }, (lang === 'ko' && v.message_ko) || v.message)),
              ...(r.violations || []).slice(0, 1).flatMap(causeLines),
            ),
          );
        }),
      ),
    );
  }

  // causeLines says what the checker in Go diagnosed of a broken rule
  // (lab.JudgeHandlerRun, the grader's causes and fixes): what went wrong
  // when the evidence tells, and what to change.
  // A note's cause (note: true) is the browser's alone: the grader cannot
  // crash an endpoint, so it never names it.
  function causeLines(v, note) {
    const says = (lang === 'ko' && v.diagnosis_ko) || v.diagnosis;
    const fix = (lang === 'ko' && v.fix_ko) || v.fix;
    return [
      says
        ? el('div', { class: 'lab-cause', 'data-cause': v.cause || '', 'data-note': note ? 'true' : null }, w('gradeCause', { says }))
        : null,
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
  // A note with a cause (a claim never settled) says so in its own words,
  // with what went wrong, what to change, and which rung asks for it.
  function noteLines(notes) {
    return (notes || []).flatMap((n) => {
      const says = (lang === 'ko' && n.message_ko) || n.message;
      const fixer = n.cause ? CAUSE_RUNG[n.cause] : '';
      const expected = fixer && laterNotes([n]).length > 0;
      return [
        el(
          'div',
          {
            class: 'lab-note',
            'data-lanes': (n.lanes || []).join(','),
            'data-cause': n.cause || '',
            'data-expected': fixer ? String(expected) : null,
          },
          w(n.cause === 'claim-never-settled' ? 'noteNeverSettled' : 'gradeNote', { says }),
        ),
        fixer ? el('div', { class: 'lab-rung-note' }, w(expected ? 'ruleExpected' : 'ruleAsked', { rung: label(fixer) })) : null,
        ...(n.cause ? causeLines(n, true) : []),
      ];
    });
  }

  // explore searches the scenario chosen in the menu first, then, when it
  // holds, every other scenario, and says which it searched: the student
  // asked about that one.
  async function explore() {
    if (!(await load())) return;
    clearBench();
    clearGrade();
    clearFound();
    const names = panel.scenarios.map((s) => s.name);
    const chosen = names.includes($('lab-scenario').value) ? $('lab-scenario').value : names[0];
    status(w('exploring', { scenario: scenarioWords(chosen) }));
    const first = await runner.explore({ only: [chosen] });
    let r = first;
    if (!first.broke && names.length > 1) {
      status(w('exploringOthers', { scenario: scenarioWords(chosen) }));
      const rest = await runner.explore({ only: names.filter((n) => n !== chosen) });
      r = Object.assign({}, rest, {
        tried: first.tried + rest.tried,
        ms: first.ms + rest.ms,
        scenarios: [...(first.scenarios || []), ...(rest.scenarios || [])],
        notes: [...(first.notes || []), ...(rest.notes || [])],
      });
    }
    const found = $('lab-found');
    found.dataset.chosen = chosen;
    found.dataset.searched = (r.scenarios || []).map((s) => s.name).join(',');
    document.body.dataset.labExplored = r.broke ? 'broke' : 'held';
    if (!r.broke) {
      status(w('exploredNone', { n: names.length, chosen: scenarioWords(chosen), tried: r.tried, ms: Math.round(r.ms), bound: r.bound }));
      if (r.notes && r.notes.length) {
        found.hidden = false;
        found.dataset.scenario = r.notes[0].scenario;
        found.dataset.rule = '';
        const asked = askedNotes(r.notes);
        const first = r.notes[0];
        found.dataset.asked = asked.length ? 'note' : '';
        found.replaceChildren(
          ...spaced(
            el('p', {}, w('exploredNoted', { n: r.notes.length })),
            asked.length ? el('p', { class: 'lab-rung-sum', 'data-done': 'false' }, w('exploredAskedNote', { rung: label(rung()) })) : null,
            ...noteLines(r.notes),
            first.schedule
              ? el(
                  'button',
                  { type: 'button', id: 'btn-lab-replay', onclick: () => guard(() => replay(first.scenario, first.schedule, {})) },
                  w('replayFound'),
                )
              : null,
          ),
        );
      }
      return;
    }
    const bad = rulesOf(r.verdict).filter((x) => !x.ok);
    const asked = bad.filter((x) => !later(x));
    const named = asked[0] || bad[0];
    status(
      w(r.scenario === chosen ? 'exploredBroke' : 'exploredBrokeOther', {
        n: named ? named.rule.n : '?',
        title: named ? ruleTitle(named.rule) : '?',
        scenario: scenarioWords(r.scenario),
        chosen: scenarioWords(chosen),
        triedChosen: first.tried,
        tried: r.tried,
        steps: r.steps,
        switches: switchesOf(r.schedule),
      }),
    );
    found.hidden = false;
    found.dataset.scenario = r.scenario;
    found.dataset.rule = named ? named.rule.name : '';
    found.dataset.asked = asked.map((x) => x.rule.n).join(',');
    found.replaceChildren(
      ...spaced(
        el(
          'p',
          { class: 'lab-rung-sum', 'data-done': asked.length ? 'false' : 'true' },
          asked.length
            ? w('exploredAsked', { rung: label(rung()), rules: asked.map((x) => x.rule.n).join(', ') })
            : w('exploredLater', { rung: label(rung()) }),
        ),
        el(
          'p',
          { class: 'schedule', 'data-switches': String(switchesOf(r.schedule)) },
          w('scheduleWords', { schedule: scheduleRuns(r.schedule) }),
        ),
        rulesList(r.verdict),
        el(
          'button',
          { type: 'button', id: 'btn-lab-replay', onclick: () => guard(() => replay(r.scenario, r.schedule, {})) },
          w('replayFound'),
        ),
      ),
    );
  }

  // gradeAll explores every scenario on its own, so that every rule a
  // scenario breaks is found (explore stops at the first), says whether
  // the rung the student is on holds (every rule it asks for holds in
  // every scenario; what a later rung fixes is expected to break), and
  // names the rung that fixes the first broken rule in ladder order.
  async function gradeAll() {
    if (!(await load())) return;
    clearBench();
    clearFound();
    clearGrade();
    const here = rung();
    const rows = [];
    const broken = new Set();
    const askedRules = new Set();
    const fixes = new Set();
    // Scenarios whose notes (a claim never settled) this rung asks to
    // settle, and the later rungs that settle the rest.
    const askedNoteRows = [];
    const laterNoteRungs = new Set();
    for (const [i, sc] of panel.scenarios.entries()) {
      status(w('grading', { n: i + 1, total: panel.scenarios.length, scenario: scenarioWords(sc.name) }));
      const r = await runner.explore({ only: [sc.name], answers: true });
      const bad = r.broke ? rulesOf(r.verdict).filter((x) => !x.ok) : [];
      // Rules the shortest order kept but another order broke (a crash
      // before the claim breaks one rule, after the transfer another).
      const others = r.broke
        ? rulesOf(r.verdict)
            .filter((x) => x.ok && r.perRule && r.perRule[x.rule.name])
            .map((x) => Object.assign({}, x, { ok: false, violations: r.perRule[x.rule.name].violations || [] }))
        : [];
      const asked = [...bad, ...others].filter((x) => !later(x));
      const notesAsked = askedNotes(r.notes);
      const notesLater = laterNotes(r.notes);
      if (notesAsked.length) askedNoteRows.push(sc);
      for (const n of notesLater) laterNoteRungs.add(CAUSE_RUNG[n.cause]);
      for (const x of [...bad, ...others]) broken.add(x.rule.n);
      for (const x of asked) askedRules.add(x.rule.n);
      for (const x of [...bad, ...others]) for (const f of fixRungs(x)) fixes.add(f);
      rows.push({ sc, r, rules: bad.map((x) => x.rule), others, asked, notesAsked });
    }
    // A file that publishes no retentionSeconds leaves rule 7 unknown, as
    // idemlab grade says it (and fails until it is published): no client
    // can rely on a retention nobody published. The scoped rung asks for it.
    const unknown = panel.retention === null;
    const unknownAsked = unknown && RUNGS.indexOf(here) >= RUNGS.indexOf('scoped');
    const ns = [...broken].sort((a, b) => a - b);
    const next = [...fixes].sort((a, b) => RUNGS.indexOf(a) - RUNGS.indexOf(b))[0];
    const asked = [...askedRules].sort((a, b) => a - b);
    const done = !asked.length && !unknownAsked && !askedNoteRows.length;
    const laterRules = ns.filter((n) => !askedRules.has(n));
    if (unknown && !unknownAsked && !laterRules.includes(7)) laterRules.push(7);
    laterRules.sort((a, b) => a - b);
    const up = RUNGS[RUNGS.indexOf(here) + 1];
    const box = $('lab-grade');
    box.hidden = false;
    box.dataset.broken = ns.join(',');
    box.dataset.unknown = unknown ? '7' : '';
    box.dataset.rung = here;
    box.dataset.rungDone = done ? 'true' : 'false';
    box.dataset.asked = asked.join(',');
    box.dataset.notesAsked = String(askedNoteRows.length);
    const rungLines = done
      ? [
          el(
            'p',
            { class: 'lab-rung-sum', 'data-done': 'true' },
            w('rungDone', { rung: label(here) }) +
              (laterRules.length ? ' ' + w('rungDoneLater', { rules: laterRules.join(', ') }) : '') +
              (laterNoteRungs.size ? ' ' + w('rungDoneLaterNote', { rung: [...laterNoteRungs].map(label).join(', ') }) : ''),
          ),
          up
            ? el(
                'p',
                { class: 'lab-rung-next' },
                w('rungNextGoal', { rung: label(up), goal: w('goal_' + rungKey(up)) }),
                ' ',
                el('button', { type: 'button', id: 'btn-lab-next-rung', onclick: () => goRung(up) }, w('goToRung', { rung: label(up) })),
              )
            : null,
        ]
      : [
          asked.length
            ? el(
                'p',
                { class: 'lab-rung-sum', 'data-done': 'false' },
                w('rungNotDone', {
                  rung: label(here),
                  rules: asked.join(', '),
                  scenarios: fewOf(rows.filter((row) => row.asked.length).map((row) => '“' + scenarioWords(row.sc.name) + '”')),
                }),
              )
            : null,
          unknownAsked ? el('p', { class: 'lab-rung-sum', 'data-done': 'false' }, w('rungNotDone7', { rung: label(here) })) : null,
          askedNoteRows.length
            ? el(
                'p',
                { class: 'lab-rung-sum', 'data-done': 'false' },
                w('rungNotDoneNote', {
                  rung: label(here),
                  scenarios: fewOf(askedNoteRows.map((sc) => '“' + scenarioWords(sc.name) + '”')),
                }),
              )
            : null,
        ];
    box.replaceChildren(
      ...spaced(
        el('h4', {}, w('gradeHeading')),
        ...rungLines,
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
            ...rows.map(({ sc, r, rules, others, asked, notesAsked }) =>
              el(
                'tr',
                {
                  'data-scenario': sc.name,
                  'data-broke': r.broke ? 'true' : 'false',
                  'data-expected': r.broke ? String(!asked.length) : null,
                  'data-notes': String((r.notes || []).length),
                  'data-notes-asked': String(notesAsked.length),
                  'data-rules': [...rules, ...others.map((x) => x.rule)].map((x) => x.n).join(','),
                  // Each broken rule with its first violation's cause: "1:short-retention".
                  'data-rule-causes': [...(r.broke ? rulesOf(r.verdict).filter((x) => !x.ok) : []), ...others]
                    .map((x) => x.rule.n + ':' + (((x.violations || [])[0] || {}).cause || ''))
                    .join(','),
                },
                el('th', { scope: 'row' }, scenarioWords(sc.name)),
                el(
                  'td',
                  {},
                  ...spaced(
                    el(
                      'div',
                      { class: 'lab-result' },
                      r.broke
                        ? '✘ ' +
                            w(asked.length ? 'gradeBroke' : 'gradeBrokeLater', { rules: rules.map(ruleWords).join('; '), steps: r.steps })
                        : r.notes && r.notes.length
                          ? '⚠ ' +
                            w(r.notes.some((n) => n.cause === 'claim-never-settled') ? 'gradeNotedSettle' : 'gradeNoted', {
                              tried: r.tried,
                            })
                          : '✔ ' + w('gradeHeld', { tried: r.tried }),
                    ),
                    ...(r.broke
                      ? [
                          ...causeLines(firstViolation(r.verdict)),
                          ...others.map((x) => alsoBroke(sc.name, x, r.perRule[x.rule.name])),
                          ...noteLines((r.notes || []).filter((n) => n.cause)),
                        ]
                      : [answersLine(r.answers), ...noteLines(r.notes)]),
                  ),
                ),
                el(
                  'td',
                  {},
                  r.broke
                    ? el(
                        'button',
                        { type: 'button', onclick: () => guard(() => replay(sc.name, r.schedule, { keepGrade: true })) },
                        w('gradePlay'),
                      )
                    : r.notes && r.notes.length && r.notes[0].schedule
                      ? el(
                          'button',
                          { type: 'button', onclick: () => guard(() => replay(sc.name, r.notes[0].schedule, { keepGrade: true })) },
                          w('gradePlay'),
                        )
                      : null,
                ),
              ),
            ),
          ),
        ),
        unknown ? el('p', { class: 'lab-grade-unknown' }, '⚠ ' + w('gradeUnknown7')) : null,
        el(
          'p',
          { class: 'lab-grade-sum' },
          ns.length
            ? w('gradeNext', { rules: ns.join(', '), rung: next ? label(next) : '?' })
            : unknown
              ? w('gradeTopUnknown')
              : w('gradeTop'),
        ),
      ),
    );
    status('');
  }

  // alsoBroke says of a rule the shortest order kept that another order of
  // the scenario broke it, whether this rung asks for it, and plays that
  // order.
  function alsoBroke(name, x, found) {
    return el(
      'div',
      { class: 'lab-also', 'data-rule': x.rule.name, 'data-expected': String(later(x)) },
      w(later(x) ? 'gradeAlsoBrokeLater' : 'gradeAlsoBroke', { rule: ruleWords(x.rule), steps: found.steps }),
      ' ',
      el(
        'button',
        {
          type: 'button',
          class: 'lab-also-play',
          'aria-label': w('gradePlay') + ': ' + ruleWords(x.rule),
          onclick: () => guard(() => replay(name, found.schedule, { keepGrade: true })),
        },
        w('gradePlay'),
      ),
    );
  }

  // fewOf says a list of scenarios in a line: the first three, and how
  // many more (the table below names them all).
  function fewOf(list) {
    return list.length <= 3 ? list.join(', ') : w('andMore', { list: list.slice(0, 3).join(', '), n: list.length - 3 });
  }

  // firstViolation is the first broken rule's first violation of a
  // verdict's report ({} when none).
  function firstViolation(verdict) {
    const broken = rulesOf(verdict).find((x) => !x.ok);
    return (broken && broken.violations && broken.violations[0]) || {};
  }

  // replay plays a schedule on the bench, one step at a time, so that the
  // lanes and the trace show it as if stepped by hand. Played from the
  // grade, the grade stays: it is the list the student plays from.
  async function replay(name, schedule, opts) {
    if (!(await putOnBench(name, opts))) return;
    for (const pick of schedule) {
      const state = pick.startsWith('crash:') ? await runner.inject(pick.slice(6), 'crash') : await runner.step(pick, true);
      show(state);
    }
    status(w('played', { scenario: scenarioWords(name), schedule: scheduleRuns(schedule) }));
  }

  // ← and → move between the attempts' cards: from a button to the same
  // button of the next attempt that has one (Tab would cross every fault
  // button of the card first).
  $('lab-lanes').addEventListener('keydown', (e) => {
    if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
    const b = e.target.closest && e.target.closest('button[data-focus]');
    if (!b) return;
    const what = b.dataset.focus.slice(b.dataset.focus.indexOf(':') + 1);
    const all = [...$('lab-lanes').querySelectorAll('button[data-focus]')].filter(
      (x) => x.dataset.focus.slice(x.dataset.focus.indexOf(':') + 1) === what && !x.disabled,
    );
    if (all.length < 2) return;
    e.preventDefault();
    const i = all.indexOf(b);
    all[(i + (e.key === 'ArrowRight' ? 1 : all.length - 1)) % all.length].focus();
  });

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

// breakable gives a body's text with a place to break the line after
// each comma (<wbr>, which adds nothing to the text), so that a narrow
// card wraps a JSON body between its members: "amount":20000 / 0} read as
// 20,000 won.
function breakable(text) {
  const parts = text.split(/(?<=,)/);
  return parts.flatMap((p, i) => (i < parts.length - 1 ? [p, el('wbr')] : [p]));
}

// spaced leaves out null children (replaceChildren, unlike el, would
// write one as the text "null") and puts a space between the blocks left:
// on screen each block has its line, but read as text (a screen reader,
// textContent) a rule's words and the message under them would run
// together.
function spaced(...nodes) {
  const out = [];
  for (const n of nodes.flat()) {
    if (n === null || n === undefined || n === false) continue;
    if (out.length) out.push(' ');
    out.push(n);
  }
  return out;
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
