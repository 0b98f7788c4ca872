// lab-race.js is the lab page's race panel: the student's handler loaded
// into the lab's runner (lab/lab.js, a worker of its own), a scenario put
// on the bench with each attempt parked before its next call, stepped by
// hand with faults at any step, the explorer's shortest breaking order
// played back on the same bench, and the checker's verdict (Go, in the
// engine's module) once every attempt has ended.
//
//   const race = startRace({ words, lang, rung, goRung, code, showErrors, showSchemaErrors, lineOf, onGraded });
//
// words(key, vars) gives the page's words in lang; rung() the rung the
// student is on (the panel says which broken rules that rung asks about
// and which a later rung fixes) and goRung(r) takes them to another; code()
// the handler file as the boxes hold it now; showErrors(list) marks
// [{line, message}] (the file's lines) in the handler's editor and beside
// it; showSchemaErrors(list) marks [{line, message}] (the schema's lines,
// as the runner was given it) in the tables box and answers the first
// one's line in that box (0: none); lineOf(n) is the file's line n as the
// handler's box numbers it, for
// the words on the panel; onGraded(rung, done) hears each grade's verdict
// on the rung.
//
// The panel shows one result at a time: the bench (its cards and the
// checker's verdict), the explorer's find, or the grade of every scenario.
// Each action clears the others' (playing a grade's row back keeps the
// grade, the list it was chosen from).
//
// The panel's other parts are modules of their own: lab-rungs.js says which
// rung's fix a broken rule or a note asks for, lab-verdict.js says a
// verdict and the order that broke it in words, and lab-grade.js grades
// every scenario.

import { $, el, spaced } from './dom.js';
import { startRunner } from './lab/lab.js';
import { unclosedBrace } from './lab-brace.js';
import { labRaceInput } from './lab-model.js';
import { gradePanel } from './lab-grade.js';
import { rungJudge, askedRules } from './lab-rungs.js';
import { scheduleRuns, switchesOf, verdictWords } from './lab-verdict.js';
import { RUNGS, rungWords, plural } from './lab-words.js';
import { buildRace } from './race-model.js';
import { drawRace } from './race.js';
import { t } from './strings.js';

// LAB_WORDS are the race view's words the lab says its own way: "intent",
// as the checker's verdict and the lab's scenarios say it, where the
// lessons say "wish".
const LAB_WORDS = {
  raceLg_money_again: 'raceLab_money_again',
  raceLg_charge_again: 'raceLab_charge_again',
  raceIntentRow: 'raceLab_intentRow',
  // The lab's marks that decide nothing: the request's arrival and the
  // handler's db calls, which alone are the runner's numbered steps.
  raceLg_steps: 'raceLab_steps',
};
const raceWords = (key, vars) => t(LAB_WORDS[key] || key, vars);

// A step of a handler takes milliseconds; the runner's budget is for a
// loop that never yields, and is wide enough for a slow laptop under load,
// where loading a handler (a fresh database, the student's file compiled)
// took over 2 s in a test on a busy machine.
const BUDGET_MS = 8000;

// The runner's calls that run the student's handler: one of them gone
// quiet is a handler that may never end (loading a file is not said so).
const HANDLER_CALLS = new Set(['start', 'step', 'inject', 'explore']);

// sameCode says whether two texts of the code run alike, line for line:
// the same, but for what lines of comment say (the starting handler in
// another language: its comments stand on the same lines).
function sameCode(a, b) {
  if (a === b) return true;
  const code = (s) => String(s).replace(/^[ \t]*\/\/.*$/gm, '//');
  return code(a) === code(b);
}

export function startRace({
  words: w,
  lang = 'en',
  rung = () => RUNGS[0],
  goRung = () => {},
  code,
  showErrors,
  showSchemaErrors = () => 0,
  lineOf = (n) => n,
  onGraded = () => {},
  restore = null,
}) {
  const runner = startRunner({ budgetMs: BUDGET_MS, onSlow: (fn) => saySlow(fn) });
  // acts: what was done on the bench since its scenario was put there
  // ("a1", "crash:a1", "lose:a2", "timeout:a2"), so that the page, loaded
  // again in the other language, plays it again (place, restore).
  const panel = {
    runner,
    scenarios: [],
    state: null,
    bench: null,
    acts: [],
    busy: false,
    loaded: '',
    retention: null,
    focusVerdict: false,
    focusStep: false,
    wanted: '', // the scenario to choose once the list is filled (restore)
  };
  const status = (s) => ($('lab-run-status').textContent = s);
  const buttons = ['btn-lab-start', 'btn-lab-explore', 'btn-lab-grade'];
  const label = (r) => rungWords(lang, r).label;

  function setBusy(busy) {
    panel.busy = busy;
    // The button pressed keeps the focus while its work runs: disabled, it
    // would drop the focus to the page's top (a keyboard user's next Tab
    // starts there). It is said unavailable instead, and guard ignores it.
    for (const id of buttons) {
      const b = $(id);
      const held = busy && b === document.activeElement;
      b.disabled = busy && !held;
      if (held) b.setAttribute('aria-disabled', 'true');
      else b.removeAttribute('aria-disabled');
    }
    $('btn-lab-stop').disabled = !busy;
    for (const b of document.querySelectorAll('#lab-lanes button')) b.disabled = busy;
  }

  // --- one result at a time ---------------------------------------------------

  function clearBench() {
    panel.state = null;
    panel.bench = null;
    panel.acts = [];
    caption('');
    $('lab-race-view').hidden = true;
    $('lab-lanes').replaceChildren();
    $('lab-stepbar').hidden = true;
    $('lab-stepbar').replaceChildren();
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
    $('lab-found').removeAttribute('data-stale');
  }

  function clearGrade() {
    $('lab-grade').hidden = true;
    $('lab-grade').replaceChildren();
    $('lab-grade').removeAttribute('data-stale');
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
    const r = await runner.load(src, null, 1 - lineOf(1));
    if (r && r.error) {
      panel.loaded = '';
      // A file that never loaded (a broken one kept from the last visit)
      // still lists the scenarios, to choose from once it is mended.
      if (!$('lab-scenario').options.length) fillScenarios(await runner.scenarios());
      let said = (r.error.name && r.error.name !== 'Error' ? r.error.name + ': ' : '') + r.error.message;
      // The tables box's SQL failed: marked there, said as the tables'.
      if (r.error.schemaLine) {
        showErrors([]);
        const line = showSchemaErrors([{ line: r.error.schemaLine, message: said }]);
        status(w(line ? 'schemaFailed' : 'schemaFailedNoLine', { line, error: said.replace(/^SQLError: your schema: /, '') }));
        return false;
      }
      showSchemaErrors([]);
      // A missing }: the engine finds it at the end of the file, or at
      // the first token that no longer fits, lines below; where the braces
      // do not balance, the indentation tells where it was left out
      // (lab-brace.js).
      const twice = r.error.code === 'declared-twice';
      const brace = r.error.name === 'SyntaxError' && !twice ? unclosedBrace(src) : null;
      if (brace) {
        r.error.line = brace.before;
        said = 'SyntaxError: ' + w('braceMissing', { open: lineOf(brace.open) });
      }
      if (twice)
        said =
          'SyntaxError: ' +
          w(r.error.first ? 'declaredTwice' : 'declaredTwiceNoLine', { name: r.error.what, first: lineOf(r.error.first) });
      showErrors(r.error.line ? [{ line: r.error.line, message: said }] : []);
      status(w('loadFailed', { error: (r.error.line ? w('atLine', { line: lineOf(r.error.line) }) + ': ' : '') + said }));
      return false;
    }
    showErrors([]);
    showSchemaErrors([]);
    panel.loaded = src;
    panel.retention = r.retentionSeconds ?? null;
    panel.scenarios = await runner.scenarios();
    fillScenarios(panel.scenarios);
    return true;
  }

  // fillScenarios lists the scenarios in the menu, the one chosen kept.
  function fillScenarios(list) {
    const sel = $('lab-scenario');
    // The scenario chosen before the page was loaded again (restore), the
    // first time the list is filled.
    const chosen = panel.wanted || sel.value;
    panel.wanted = '';
    sel.replaceChildren(...list.map((s) => el('option', { value: s.name, selected: s.name === chosen }, scenarioWords(s.name))));
  }

  // scenarioWords names a scenario of the runner in the page's language
  // (its id when the page has no words for it).
  function scenarioWords(name) {
    const k = 'scenario_' + name.replace(/-/g, '_');
    const words = w(k);
    return words === k ? name : words;
  }

  // What the rung asks (lab-rungs.js), the words of a verdict
  // (lab-verdict.js) and the grade of every scenario (lab-grade.js).
  const judge = rungJudge({ rung, retention: () => panel.retention });
  const { rulesOf, later, askedNotes } = judge;
  const verdict = verdictWords({ w, lang, label, judge, lineOf });
  const { ruleTitle, rulesList, noteLines, noteWhat, causesSaid, brokenSeven } = verdict;
  const { gradeAll } = gradePanel({
    ...judge,
    ...verdict,
    onGraded,
    w,
    label,
    rung,
    goRung,
    runner,
    panel,
    status,
    load,
    clearBench,
    clearFound,
    clearGrade,
    scenarioWords,
    guard,
    replay,
  });

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
      status(err.stopped ? stoppedWords(err) : err.message);
      // A stopped runner is a fresh one: the bench it held is gone, and is
      // not left on the page as if its steps could still run.
      if (err.stopped) {
        panel.loaded = '';
        clearBench();
      }
    } finally {
      setBusy(false);
      const step = panel.focusStep && $('lab-stepbar').querySelector('button:not([aria-disabled=true])');
      if (panel.focusVerdict && $('lab-verdict-title')) focusVerdict();
      else if (step && !$('lab-stepbar').hidden) step.focus();
      else refocus(from);
      panel.focusVerdict = false;
      panel.focusStep = false;
      // Tests wait on this: one more action of the panel has ended.
      document.body.dataset.labActs = String(Number(document.body.dataset.labActs || 0) + 1);
    }
  }

  // saySlow says, while a call of the student's handler has gone quiet
  // (the runner's onSlow), that it may never end and how it is ended; the
  // status line comes back when the call speaks again.
  let beforeSlow = null;
  function saySlow(fn) {
    if (fn && HANDLER_CALLS.has(fn)) {
      beforeSlow = $('lab-run-status').textContent;
      status(w('stillRunning', { secs: BUDGET_MS / 1000 }));
      document.body.dataset.labSlow = 'true';
    } else if (!fn && beforeSlow !== null) {
      status(beforeSlow);
      beforeSlow = null;
      delete document.body.dataset.labSlow;
    }
  }

  // stoppedWords says why a handler was stopped, in the page's language.
  function stoppedWords(err) {
    if (err.kind === 'budget') return w('stoppedBudget', { secs: BUDGET_MS / 1000 });
    return w(err.hung && HANDLER_CALLS.has(err.hung) ? 'stoppedButtonHung' : 'stoppedButton');
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
    // A step bar's button goes with its attempt's last step: the focus
    // moves to another attempt's, else the way a card's does.
    const bar = from.id && from.id.startsWith('lab-stepbar-');
    const target = from.card
      ? lanes.querySelector('[data-focus="' + from.card + '"]') ||
        lanes.querySelector('button.primary:not([aria-disabled=true])') ||
        $('btn-lab-start')
      : bar
        ? $(from.id) ||
          $('lab-stepbar').querySelector('button:not([aria-disabled=true])') ||
          $('lab-stepbar').querySelector('button') ||
          lanes.querySelector('button.primary:not([aria-disabled=true])') ||
          $('btn-lab-start')
        : $(from.id);
    if (target && !target.disabled && !target.hidden && document.activeElement !== target) target.focus();
  }

  // focusVerdict takes the focus to the verdict's heading, brought to the
  // middle of the screen: at its bottom edge (the nearest place) the
  // heading stood alone, its rules below the fold.
  function focusVerdict() {
    const h = $('lab-verdict-title');
    h.focus({ preventScroll: true });
    h.scrollIntoView({ block: 'center' });
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
    panel.acts = [];
    const state = await runner.start(sc);
    show(state);
    // What the bench shows is said above its picture (caption), not in
    // the status line, which stands above the grade. A handler that
    // throws before its first await has ended every attempt already.
    status('');
    caption(w(state.done ? 'benchEnded' : 'onBench', { scenario: scenarioWords(sc.name) }));
    return true;
  }

  // caption says what the bench shows right above its picture: the status
  // line stands above the grade, which may be a screen away.
  function caption(s) {
    $('lab-bench-caption').textContent = s;
    $('lab-bench-caption').hidden = !s;
  }

  // benchAct does one thing to an attempt on the bench and shows it.
  // force: a step of a schedule played again (the runner's step).
  async function benchAct(pick, force = false) {
    const [kind, id] = pick.includes(':') ? pick.split(':') : ['step', pick];
    const state = kind === 'step' ? await runner.step(id, force) : await runner.inject(id, kind);
    panel.acts.push(pick);
    show(state);
  }

  function show(state) {
    const before = panel.state;
    panel.state = state;
    renderRace(state);
    renderLanes(state);
    renderStepbar(state);
    renderTrace(state);
    renderVerdict(state);
    const errors = state.attempts
      .filter((a) => a.error && a.error.line)
      .map((a) => ({ line: a.error.line, message: a.id + ': ' + a.error.name + ': ' + a.error.message }));
    showErrors(errors);
    if (state.done && panel.bench) caption(w('benchEnded', { scenario: scenarioWords(panel.bench.name) }));
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
    const model = buildRace(labRaceInput(state, lineOf));
    // The rows keep the cards' order (a1, a2 …): the winner is starred,
    // not moved, so that a row and its card are found in the same place.
    panel.raceWidth = box.clientWidth || 900;
    drawRace(box, model, { width: panel.raceWidth, t: raceWords, laneOrder: true });
  }

  // specOf is what the scenario sends as the attempt: its body, and the
  // attempt it waits for.
  function specOf(id) {
    return ((panel.bench && panel.bench.attempts) || []).find((x) => x.id === id) || {};
  }

  // renderStepbar puts each attempt's step right under the picture, and
  // on a phone holds it at the bottom of the screen while the picture is
  // read (lab.css): there the cards, and their buttons, stand a screen or
  // more below the picture, and every step meant scrolling down to tap and
  // back up to see. The faults stay on the cards.
  function renderStepbar(state) {
    const bar = $('lab-stepbar');
    const holder = state.holder || '?';
    const can = state.attempts.filter((a) => a.next && a.state === 'parked');
    bar.hidden = !can.length;
    bar.setAttribute('aria-label', w('stepbar'));
    bar.replaceChildren(
      ...can.map((a) =>
        el(
          'button',
          {
            type: 'button',
            id: 'lab-stepbar-' + a.id,
            class: a.waiting ? null : 'primary',
            'aria-label': w(a.waiting ? 'runStepWaits' : 'runStep', { id: a.id }),
            'aria-disabled': a.waiting ? 'true' : null,
            onclick: () => guard(a.waiting ? async () => status(w('waitsNoStep', { id: a.id, holder })) : () => benchAct(a.id)),
          },
          (a.waiting ? '⋯ ' : '▶ ') + a.id,
        ),
      ),
    );
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
          // A fault set on a running attempt is the client's side: the
          // server goes on, and the card says so.
          if (a.timed_out) add(el('p', { class: 'lab-fault', 'data-fault': 'timeout' }, '✗ ' + w('clientGone', { id: a.id })));
          else if (a.lost) add(el('p', { class: 'lab-fault', 'data-fault': 'lose' }, '✂ ' + w('answerWillBeLost', { id: a.id })));
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
            : act(w('runStep', { id: a.id }), 'step', () => benchAct(a.id), { class: 'primary' });
          add(
            el(
              'div',
              { class: 'controls' },
              step,
              act('✸ ' + w('crash', { id: a.id }), 'crash', () => benchAct('crash:' + a.id)),
              // An answer already lost, or a client that gave up, has
              // nothing left to lose; a client gives up once (it may
              // still give up on an answer the scenario loses: then it
              // sends its retry at once).
              a.lost || a.timed_out ? null : act('✂ ' + w('loseAnswer', { id: a.id }), 'lose', () => benchAct('lose:' + a.id)),
              a.timed_out ? null : act('✗ ' + w('timeOut', { id: a.id }), 'timeout', () => benchAct('timeout:' + a.id)),
            ),
          );
        } else if (a.state === 'new') {
          add(el('p', { class: 'lab-end', 'data-end': 'new' }, spec.after ? w('notSentAfter', { after: spec.after }) : w('notSent')));
        } else {
          add(el('p', { class: 'lab-end', 'data-end': a.state }, endWords(a)));
          // Calls it made and never awaited: they never ran, or ran with
          // nothing waiting for their answer (ran).
          for (const c of a.unawaited || []) {
            const words = (c.failed ? 'unawaitedFailed' : c.ran ? 'unawaitedRan' : 'unawaited') + (c.line ? '' : 'NoLine');
            add(
              el(
                'p',
                { class: 'lab-unawaited', 'data-op': c.op, 'data-slip': c.ran ? 'not-awaited' : null },
                '⚠ ' + w(words, { call: c.op === 'pay' ? 'pay' : 'db.' + c.op, line: lineOf(c.line), error: c.failed }),
              ),
            );
          }
          // Calls that failed otherwise than with the key's verdict, the
          // handler going on past them: a misspelt column a catch hid.
          if (a.state === 'answered')
            for (const c of (a.failed || []).filter((c) => c.failed !== 'ConstraintError' && c.op !== 'rollback'))
              add(
                el(
                  'p',
                  { class: 'lab-unawaited', 'data-slip': 'failed-call' },
                  '⚠ ' +
                    w(c.line ? 'failedCall' : 'failedCallNoLine', {
                      call: c.op === 'pay' ? 'pay' : 'db.' + c.op,
                      line: lineOf(c.line),
                      error: c.failed + ': ' + c.message,
                    }),
                ),
              );
          // A refusal built and not returned: a return left out.
          for (const c of a.unreturned || [])
            add(
              el(
                'p',
                { class: 'lab-unawaited', 'data-slip': 'not-returned' },
                '⚠ ' + w(c.line ? 'unreturned' : 'unreturnedNoLine', { status: c.status, line: lineOf(c.line) }),
              ),
            );
          // Answered before its COMMIT: the runner rolled it back.
          if (a.left_open) add(el('p', { class: 'lab-unawaited', 'data-slip': 'left-open' }, '⚠ ' + w('leftOpen')));
          // SELECTs given to db.run: their rows were thrown away.
          for (const c of a.dropped || [])
            add(
              el(
                'p',
                { class: 'lab-unawaited', 'data-slip': 'dropped' },
                '⚠ ' + w(c.line ? 'dropped' : 'droppedNoLine', { line: lineOf(c.line) }),
              ),
            );
          // The network called with its transaction open.
          for (const c of a.paid_in_tx || [])
            add(
              el(
                'p',
                { class: 'lab-unawaited', 'data-slip': 'pay-in-transaction' },
                '⚠ ' + w(c.line ? 'paidInTx' : 'paidInTxNoLine', { line: lineOf(c.line) }),
              ),
            );
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
          ? w('threw', { name: a.error.name, line: lineOf(a.error.line), message: said(a.error.message) })
          : w('threwNoLine', { name: a.error.name, message: said(a.error.message) }))
      );
    if (!a.answer) return w('cut');
    // A client that gave up is marked as the race view marks it (✗), an
    // answer lost on the way as the legend's ✂.
    if (a.timed_out) return '✗ ' + w('answerGaveUp', { status: a.answer.status });
    return (a.lost ? '✂ ' : '✉ ') + w(a.lost ? 'answerLost' : 'answered', { status: a.answer.status });
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
              (e.op ? (e.op === 'pay' ? 'pay' + payKey(e) : 'db.' + e.op) : e.phase) +
              (e.line ? ' (' + lineOf(e.line) + ')' : '') +
              ' → ' +
              (e.outcome || ''),
            e.sql ? el('code', {}, ' ' + e.sql) : null,
            e.message ? el('span', { class: 'lab-msg' }, ' — ' + said(e.message)) : null,
          ),
        ),
    );
  }

  // payKey says the key a call to pay was given (the network's own
  // idempotency), or that it was given none: the bench's only view of it.
  function payKey(e) {
    const args = (e.params && e.params[0]) || {};
    return args.key === undefined || args.key === null ? ' ' + w('payNoKey') : ' ' + w('payKey', { key: String(args.key) });
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
      ...spaced(
        el('h4', { id: 'lab-verdict-title', tabindex: '-1' }, w('verdictHeading')),
        rulesList(state.verdict, state.trace),
        ...noteLines(notes, state.trace),
        ...chargedDead(state).map((id) =>
          el(
            'p',
            { class: 'lab-unsettled', 'data-attempt': id },
            w('chargedNoTransfer', { id, scenario: scenarioWords('crash-then-two-late-retries') }),
          ),
        ),
      ),
    );
  }

  // chargedDead names the attempts that crashed once the network had
  // charged them, where no transfer was made for their request: every rule
  // may hold (no one was told anything wrong), yet the request is not
  // settled, and the picture shows a charge without its transfer.
  function chargedDead(state) {
    const v = state.verdict;
    const intentOf = new Map(state.attempts.map((a) => [a.id, a.intent]));
    const moved = new Set((v.transfers || []).map((t) => intentOf.get(t.attempt)));
    const dead = new Set(state.attempts.filter((a) => a.state === 'crashed').map((a) => a.id));
    const out = [];
    for (const c of v.charges || []) {
      if (dead.has(c.attempt) && !moved.has(intentOf.get(c.attempt)) && !out.includes(c.attempt)) out.push(c.attempt);
    }
    return out;
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
    // Past a break of later rungs' rules, the walk looks for this rung's:
    // within a scenario (deeper orders) and across them (the next
    // scenario). A break of later rungs' rules alone is shown only when no
    // scenario broke what this rung asks.
    const want = askedRules(rung());
    const asksHere = (x) => x.broke && rulesOf(x.verdict).some((y) => !y.ok && y.rule.n !== 7 && !later(y));
    const order = [chosen, ...names.filter((n) => n !== chosen)];
    let first = null;
    let hit = null;
    let fallback = null;
    let last = null;
    const all = { tried: 0, ms: 0, scenarios: [], notes: [], retentionBroken: false };
    for (const name of order) {
      if (first) status(w(first.broke ? 'exploringOthersLater' : 'exploringOthers', { scenario: scenarioWords(chosen) }));
      const one = await runner.explore({ only: [name], want });
      first ||= one;
      last = one;
      all.tried += one.tried;
      all.ms += one.ms;
      all.scenarios.push(...(one.scenarios || []));
      all.notes.push(...(one.notes || []));
      all.retentionBroken ||= !!one.retentionBroken;
      // On the first rung every break is a later rung's: the first one
      // found is the one to show.
      if (asksHere(one) || (one.broke && rung() === 'naive')) {
        hit = one;
        break;
      }
      if (one.broke && !fallback) fallback = one;
    }
    const r = Object.assign({}, hit || fallback || last, all);
    const found = $('lab-found');
    found.dataset.chosen = chosen;
    found.dataset.searched = (r.scenarios || []).map((s) => s.name).join(',');
    document.body.dataset.labExplored = r.broke ? 'broke' : 'held';
    delete found.dataset.noteScenario;
    if (!r.broke) {
      // Rule 7 broke in every order alike (the published retention): no
      // order is its counterexample, but it is said. Notes are said below
      // it, with the first noted order to play. A note this rung asks to
      // be gone leads the status line: "no break found" alone read as done.
      const notes = r.notes || [];
      const asked = askedNotes(notes);
      const before =
        (r.retentionBroken ? w('exploredSevenFirst') + ' ' : '') +
        (asked.length ? w('exploredNoteFirst', { what: noteWhat(asked.map((n) => n.cause)) }) + ' ' : '');
      status(
        before +
          afterColon(
            before,
            w('exploredNone', { n: names.length, chosen: scenarioWords(chosen), tried: r.tried, ms: Math.round(r.ms), bound: r.bound }),
          ),
      );
      if (!r.retentionBroken && !notes.length) return;
      found.hidden = false;
      found.dataset.rule = r.retentionBroken && !notes.length ? 'retention-outlasts-retries' : '';
      if (notes.length) found.dataset.scenario = notes[0].scenario;
      const first = notes[0];
      found.dataset.asked = asked.length ? 'note' : '';
      found.replaceChildren(
        ...spaced(
          r.retentionBroken ? brokenSeven(panel.retention) : null,
          notes.length ? el('p', {}, w('exploredNoted', { n: notes.length })) : null,
          asked.length
            ? el(
                'p',
                { class: 'lab-rung-sum', 'data-done': 'false' },
                w('exploredAskedNote', { rung: label(rung()), what: noteWhat(asked.map((n) => n.cause)) }),
              )
            : null,
          ...noteLines(notes),
          first && first.schedule
            ? el(
                'button',
                { type: 'button', id: 'btn-lab-replay', onclick: () => guard(() => replay(first.scenario, first.schedule, {})) },
                w('replayFound'),
              )
            : null,
        ),
      );
      return;
    }
    // The rule an order broke is named: rule 7 (the published retention)
    // breaks in every order alike, and stands in the verdict's list.
    const bad = rulesOf(r.verdict).filter((x) => !x.ok && x.rule.n !== 7);
    const asked = bad.filter((x) => !later(x));
    const named = asked[0] || bad[0];
    // Only later rungs' rules broke, but an order left a note this rung
    // asks to settle (a 500 from a throw, a claim never settled): the rung
    // is not done, as its grade says, and that note comes first, with its
    // order to play; the later rungs' break follows. The status line says
    // the note first too: a student read the later rule as the blocker.
    const notesAsked = asked.length ? [] : askedNotes(r.notes || []);
    const noteFirst = notesAsked.length ? w('exploredNoteFirst', { what: noteWhat(notesAsked.map((n) => n.cause)) }) + ' ' : '';
    status(
      noteFirst +
        afterColon(
          noteFirst,
          w(r.scenario === chosen ? 'exploredBroke' : first.broke ? 'exploredBrokeOtherLater' : 'exploredBrokeOther', {
            n: named ? named.rule.n : '?',
            title: named ? ruleTitle(named.rule) : '?',
            scenario: scenarioWords(r.scenario),
            chosen: scenarioWords(chosen),
            triedChosen: first.tried,
            tried: r.tried,
            s: r.tried === 1 ? '' : 's',
            steps: r.steps,
            switches: switchesOf(r.schedule),
          }),
        ),
    );
    found.hidden = false;
    found.dataset.scenario = r.scenario;
    found.dataset.rule = named ? named.rule.name : '';
    found.dataset.asked = asked.map((x) => x.rule.n).join(',');
    if (notesAsked.length) {
      const first = notesAsked[0];
      found.dataset.asked = 'note';
      found.dataset.noteScenario = first.scenario;
      found.replaceChildren(
        ...spaced(
          el(
            'p',
            { class: 'lab-rung-sum', 'data-done': 'false' },
            w('exploredAskedNote', { rung: label(rung()), what: noteWhat(notesAsked.map((n) => n.cause)) }),
          ),
          ...noteLines(notesAsked),
          first.schedule
            ? el(
                'button',
                { type: 'button', id: 'btn-lab-replay', onclick: () => guard(() => replay(first.scenario, first.schedule, {})) },
                w('replayFound'),
              )
            : null,
          el('p', { class: 'lab-later' }, w('exploredLaterToo', { scenario: scenarioWords(r.scenario) })),
          el(
            'p',
            { class: 'schedule', 'data-switches': String(switchesOf(r.schedule)) },
            w('scheduleWords', { schedule: scheduleRuns(r.schedule) }),
          ),
          rulesList(r.verdict, r.trace),
          el(
            'button',
            { type: 'button', id: 'btn-lab-replay-later', onclick: () => guard(() => replay(r.scenario, r.schedule, {})) },
            w('replayLater'),
          ),
        ),
      );
      return;
    }
    found.replaceChildren(
      ...spaced(
        el(
          'p',
          { class: 'lab-rung-sum', 'data-done': asked.length ? 'false' : 'true' },
          asked.length
            ? w('exploredAsked', {
                rung: label(rung()),
                rules: asked.map((x) => x.rule.n).join(', '),
                s: plural(asked),
                why: causesSaid(asked),
              })
            : w('exploredLater', { rung: label(rung()) }),
        ),
        el(
          'p',
          { class: 'schedule', 'data-switches': String(switchesOf(r.schedule)) },
          w('scheduleWords', { schedule: scheduleRuns(r.schedule) }),
        ),
        rulesList(r.verdict, r.trace),
        el(
          'button',
          { type: 'button', id: 'btn-lab-replay', onclick: () => guard(() => replay(r.scenario, r.schedule, {})) },
          w('replayFound'),
        ),
      ),
    );
  }

  // said is an error's message in the page's language, where the lab
  // wrote it (the network's failure); SQLite's and the handler's own are
  // as they came.
  function said(message) {
    return message === 'the payment network did not answer in time: it may or may not have charged' ? w('networkNoAnswer') : message;
  }

  // afterColon is a sentence said after a lead that ends with a colon
  // ("Besides that:"): its first letter is then small, as inside a
  // sentence. Without a lead it is as written.
  function afterColon(lead, said) {
    return lead && /:\s*$/.test(lead) ? said.charAt(0).toLowerCase() + said.slice(1) : said;
  }

  // replay plays a schedule on the bench, one step at a time, so that the
  // lanes and the trace show it as if stepped by hand. Played from the
  // grade, the grade stays: it is the list the student plays from.
  async function replay(name, schedule, opts) {
    if (!(await putOnBench(name, opts))) return;
    // A schedule the explorer found holds only the picks that were steps
    // (force); what a student did by hand is played as it was done.
    for (const pick of schedule) await benchAct(pick, opts.force ?? true);
    caption(w('played', { scenario: scenarioWords(name), schedule: scheduleRuns(schedule) }));
  }

  // A box that changed width (a phone turned, a window resized, the page
  // opened at another size) gets the picture drawn again at its width:
  // drawn once for a wider box, it hid its right side behind a scroll.
  if (typeof ResizeObserver === 'function') {
    new ResizeObserver(() => {
      const box = $('lab-race-view');
      if (panel.state && !box.hidden && box.clientWidth && box.clientWidth !== panel.raceWidth) renderRace(panel.state);
    }).observe($('lab-race-view'));
  }

  // codeChanged says, above the bench, that the code in the boxes is no
  // longer what the bench runs: its steps and line numbers are the code's
  // it was put there with.
  // The explorer's and the grade's results say so too, at their top, while
  // the code differs from what they judged (an edit undone takes it away).
  panel.codeChanged = () => {
    const stale = code() !== panel.loaded;
    if (panel.bench && stale) caption(w('benchStale', { scenario: scenarioWords(panel.bench.name) }));
    for (const id of ['lab-found', 'lab-grade']) {
      const box = $(id);
      const note = box.querySelector(':scope > .lab-stale');
      const say = stale && !box.hidden;
      if (say && !note) box.prepend(el('p', { class: 'lab-stale' }, w('resultsStale')));
      if (!say && note) note.remove();
      box.toggleAttribute('data-stale', say);
    }
  };

  // place is what the bench holds, to be played again by a page loaded
  // anew (restore): the scenario, what was done to it, and the code it
  // ran. Null when nothing is on the bench.
  // The scenario chosen in the list is kept too, bench or none.
  panel.place = () =>
    Object.assign(
      { chosen: $('lab-scenario').value },
      panel.bench ? { scenario: panel.bench.name, acts: panel.acts.slice(), code: panel.loaded } : {},
    );

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

  // ← and → move along the step bar, as along the cards.
  $('lab-stepbar').addEventListener('keydown', (e) => {
    if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
    const all = [...$('lab-stepbar').querySelectorAll('button')];
    const i = all.indexOf(e.target);
    if (i < 0 || all.length < 2) return;
    e.preventDefault();
    all[(i + (e.key === 'ArrowRight' ? 1 : all.length - 1)) % all.length].focus();
  });

  // Put on the bench from the keyboard (a click with no pointer: detail
  // 0), the focus goes to the first step under the picture, where ← and →
  // move between the attempts: left on Start, the arrows did nothing and
  // the next Enter started the bench over.
  $('btn-lab-start').addEventListener('click', (e) =>
    guard(async () => {
      if ((await putOnBench()) && e.detail === 0) panel.focusStep = true;
    }),
  );
  $('btn-lab-explore').addEventListener('click', () => guard(explore));
  $('btn-lab-grade').addEventListener('click', () => guard(gradeAll));
  $('btn-lab-stop').addEventListener('click', () => runner.stop());

  if (restore && restore.chosen) panel.wanted = restore.chosen;
  status(w('engineStarting'));
  runner.ready.then(
    () => {
      status('');
      setBusy(false);
      document.body.dataset.runner = 'ready';
      // The bench the page held before it was loaded again (another
      // language), played again when the code is the same.
      if (restore && restore.scenario && sameCode(restore.code, code()))
        guard(async () => {
          if (restore.acts.length) await replay(restore.scenario, restore.acts, { force: false });
          else await putOnBench(restore.scenario);
          // The student reads where they were: the focus is not moved.
          panel.focusVerdict = false;
        });
      else guard(load);
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
