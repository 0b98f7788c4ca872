// lab-grade.js is the grade of the lab's race panel (lab-race.js): every
// scenario explored on its own, a row each with the rules it broke and
// why, whether the rung the student is on holds, and the rung to go to
// next.
//
//   const { gradeAll } = gradePanel({ w, label, rung, goRung, runner, panel, status, load, ... });
//
// The panel hands over what the grade uses: its words (w, label,
// scenarioWords), the rungs (rung, goRung), its runner and state, its
// actions (load, the clear functions, guard, replay), what the rung asks
// (lab-rungs.js) and the words of a verdict (lab-verdict.js).

import { $, el, spaced } from './dom.js';
import { CAUSE_RUNG, askedRules as rulesAskedAt } from './lab-rungs.js';
import { RUNGS, rungKey, plural } from './lab-words.js';

export function gradePanel(ctx) {
  const { w, label, rung, goRung, runner, panel, status, load, clearBench, clearFound, clearGrade, scenarioWords, guard, replay } = ctx;
  const onGraded = ctx.onGraded || (() => {});
  const { rulesOf, fixRungs, later, askedNotes, laterNotes } = ctx;
  const { ruleWords, whyOf, causeLines, answersLine, noteLines, noteWhat, causesSaid, brokenSeven } = ctx;

  // notDone says that the rung is not done, and why: in one sentence for
  // one reason; for several, the sentence's head once and a list of the
  // reasons under it (the head said twice read as the same line twice).
  function notDone(here, whys) {
    const head = w('rungNotDoneHead', { rung: label(here) });
    if (whys.length === 1) return [el('p', { class: 'lab-rung-sum', 'data-done': 'false' }, head + ' ' + whys[0])];
    return [el('div', { class: 'lab-rung-sum', 'data-done': 'false' }, head, el('ul', {}, ...whys.map((x) => el('li', {}, x))))];
  }

  // gradeAll explores every scenario on its own, so that every rule a
  // scenario breaks is found (explore stops at the first), says whether
  // the rung the student is on holds (every rule it asks for holds in
  // every scenario; what a later rung fixes is expected to break), and
  // names the rung that fixes the first broken rule in ladder order.
  async function gradeAll() {
    const here = rung();
    // Code that cannot be loaded is not done, whatever an earlier grade
    // of other code said: the ladder's ✔ goes.
    if (!(await load())) return onGraded(here, false);
    clearBench();
    clearFound();
    clearGrade();
    const rows = [];
    const broken = new Set();
    const askedRules = new Set();
    const askedRows = [];
    const fixes = new Set();
    // Scenarios whose notes (a claim never settled) this rung asks to
    // settle, and the later rungs that settle the rest.
    const askedNoteRows = [];
    const askedNoteCauses = new Set();
    const laterNoteRungs = new Set();
    const laterNoteCauses = new Set();
    let retention7 = false;
    for (const [i, sc] of panel.scenarios.entries()) {
      status(w('grading', { n: i + 1, total: panel.scenarios.length, scenario: scenarioWords(sc.name) }));
      const r = await runner.explore({ only: [sc.name], answers: true, want: rulesAskedAt(here) });
      // Rule 7 (the published retention) breaks in every order alike: it
      // is said once, under the table, not on every row.
      if (r.retentionBroken) retention7 = true;
      const bad = r.broke ? rulesOf(r.verdict).filter((x) => !x.ok && x.rule.n !== 7) : [];
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
      for (const n of notesAsked) askedNoteCauses.add(n.cause);
      for (const n of notesLater) laterNoteRungs.add(CAUSE_RUNG[n.cause]);
      for (const n of notesLater) laterNoteCauses.add(n.cause);
      for (const x of [...bad, ...others]) broken.add(x.rule.n);
      for (const x of asked) askedRules.add(x.rule.n);
      askedRows.push(...asked);
      for (const x of [...bad, ...others]) for (const f of fixRungs(x)) fixes.add(f);
      rows.push({ sc, r, rules: bad.map((x) => x.rule), others, asked, notesAsked });
    }
    // A file that publishes no retentionSeconds leaves rule 7 unknown, as
    // idemlab grade says it (and fails until it is published): no client
    // can rely on a retention nobody published. The scoped rung asks for it.
    const unknown = panel.retention === null;
    const unknownAsked = unknown && RUNGS.indexOf(here) >= RUNGS.indexOf('scoped');
    // A retention published but not longer than the clients' hour: rule 7
    // broken, the scoped rung's (short-retention).
    const retentionAsked = retention7 && RUNGS.indexOf(here) >= RUNGS.indexOf(CAUSE_RUNG['short-retention']);
    if (retention7) {
      broken.add(7);
      fixes.add(CAUSE_RUNG['short-retention']);
    }
    const ns = [...broken].sort((a, b) => a - b);
    const next = [...fixes].sort((a, b) => RUNGS.indexOf(a) - RUNGS.indexOf(b))[0];
    const asked = [...askedRules].sort((a, b) => a - b);
    const done = !asked.length && !unknownAsked && !retentionAsked && !askedNoteRows.length;
    const laterRules = ns.filter((n) => !askedRules.has(n) && !(n === 7 && retentionAsked));
    if (unknown && !unknownAsked && !laterRules.includes(7)) laterRules.push(7);
    laterRules.sort((a, b) => a - b);
    const up = RUNGS[RUNGS.indexOf(here) + 1];
    const box = $('lab-grade');
    box.hidden = false;
    box.dataset.broken = ns.join(',');
    box.dataset.unknown = unknown ? '7' : '';
    box.dataset.retentionBroken = retention7 ? 'true' : 'false';
    box.dataset.rung = here;
    box.dataset.rungDone = done ? 'true' : 'false';
    box.dataset.asked = asked.join(',');
    box.dataset.notesAsked = String(askedNoteRows.length);
    onGraded(here, done);
    const rungLines = done
      ? [
          el(
            'p',
            { class: 'lab-rung-sum', 'data-done': 'true' },
            w('rungDone', { rung: label(here) }) +
              (laterRules.length ? ' ' + w('rungDoneLater', { rules: laterRules.join(', '), s: plural(laterRules) }) : '') +
              (laterNoteRungs.size
                ? ' ' +
                  w('rungDoneLaterNote', {
                    rung: [...laterNoteRungs]
                      .sort((a, b) => RUNGS.indexOf(a) - RUNGS.indexOf(b))
                      .map(label)
                      .join(', '),
                    what: noteWhat([...laterNoteCauses]),
                  })
                : ''),
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
      : notDone(
          here,
          [
            asked.length
              ? w('rungWhyRules', {
                  rules: asked.join(', '),
                  s: plural(asked),
                  why: causesSaid(askedRows),
                  scenarios: fewOf(rows.filter((row) => row.asked.length).map((row) => '“' + scenarioWords(row.sc.name) + '”')),
                })
              : null,
            unknownAsked ? w('rungWhy7') : null,
            retentionAsked ? w('rungWhy7Short') : null,
            askedNoteRows.length
              ? w('rungWhyNote', {
                  what: noteWhat([...askedNoteCauses]),
                  scenarios: fewOf(askedNoteRows.map((sc) => '“' + scenarioWords(sc.name) + '”')),
                })
              : null,
          ].filter(Boolean),
        );
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
                  'data-rule-causes': [...(r.broke ? rulesOf(r.verdict).filter((x) => !x.ok && x.rule.n !== 7) : []), ...others]
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
                          whatHappened(firstViolation(r.verdict)),
                          ...causeLines(firstViolation(r.verdict), false, r.trace),
                          ...others.map((x) => alsoBroke(sc.name, x, r.perRule[x.rule.name])),
                          ...(r.notes || []).filter((n) => n.cause).flatMap((n) => notePlayed(sc.name, n, r.schedule)),
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
                        {
                          type: 'button',
                          'aria-label': w('gradePlayBreak') + ': ' + scenarioWords(sc.name),
                          onclick: () => guard(() => replay(sc.name, r.schedule, { keepGrade: true })),
                        },
                        w('gradePlayBreak'),
                      )
                    : r.notes && r.notes.length && r.notes[0].schedule
                      ? el(
                          'button',
                          {
                            type: 'button',
                            'aria-label': w('gradePlayNote') + ': ' + scenarioWords(sc.name),
                            onclick: () => guard(() => replay(sc.name, r.notes[0].schedule, { keepGrade: true })),
                          },
                          w('gradePlayNote'),
                        )
                      : null,
                ),
              ),
            ),
          ),
        ),
        unknown ? el('p', { class: 'lab-grade-unknown' }, '⚠ ' + w('gradeUnknown7')) : null,
        retention7 ? brokenSeven(panel.retention) : null,
        el(
          'p',
          { class: 'lab-grade-sum' },
          ns.length
            ? // A fix a rung below this one teaches: the code lost it,
              // and the student is not sent back down the ladder.
              w(next && RUNGS.indexOf(next) < RUNGS.indexOf(here) ? 'gradeNextBelow' : 'gradeNext', {
                rules: ns.join(', '),
                s: plural(ns),
                one: w(ns.length > 1 ? 'oneOfThem' : 'itAlone'),
                rung: next ? label(next) : '?',
              })
            : askedNoteRows.length || laterNoteRungs.size
              ? w('gradeTopNoted')
              : unknown
                ? w('gradeTopUnknown')
                : w('gradeTop'),
        ),
      ),
    );
    fixOnce(box);
    status('');
    // The grade stands below the buttons, often below the fold: its
    // heading is brought to the top of the screen (under the page's bar,
    // lab.css), so that a student sees that it came, and what it says.
    box.scrollIntoView({ block: 'start' });
  }

  // fixOnce says each change, and each cause's words, in full on the
  // first row that needs them: a later row (a rule's or a note's) with the
  // same words points to that row. Students read the same paragraphs row
  // after row, on a phone and in 28 rows of a laptop's grade.
  function fixOnce(box) {
    for (const [kind, same] of [
      ['lab-fix', 'gradeFixSame'],
      ['lab-cause', 'gradeCauseSame'],
    ]) {
      const seen = new Map();
      for (const said of box.querySelectorAll('tr[data-scenario] .' + kind)) {
        const name = said.closest('tr').dataset.scenario;
        const first = seen.get(said.textContent);
        if (!first) seen.set(said.textContent, name);
        else if (first !== name) {
          said.dataset.sameAs = first;
          said.textContent = w(same, { scenario: scenarioWords(first) });
        }
      }
    }
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
          'aria-label': w('gradePlayOther') + ': ' + ruleWords(x.rule),
          onclick: () => guard(() => replay(name, found.schedule, { keepGrade: true })),
        },
        w('gradePlayOther'),
      ),
    );
  }

  // notePlayed says a note beside a break, and plays the order the note
  // was seen in when it is not the break's: the row's own button plays
  // the break, where the note's answer (a 500, a 409) may not happen.
  function notePlayed(name, n, shown) {
    const own = n.schedule && n.schedule.join(' ') !== (shown || []).join(' ');
    return [
      ...noteLines([n]),
      own
        ? el(
            'button',
            {
              type: 'button',
              class: 'lab-note-play',
              'aria-label': w('gradePlayNote') + ': ' + noteWhat([n.cause]),
              onclick: () => guard(() => replay(name, n.schedule, { keepGrade: true })),
            },
            w('gradePlayNote'),
          )
        : null,
    ];
  }

  // fewOf says a list of scenarios in a line: the first three, and how
  // many more (the table below names them all).
  function fewOf(list) {
    return list.length <= 3 ? list.join(', ') : w('andMore', { list: list.slice(0, 3).join(', '), n: list.length - 3 });
  }

  // firstViolation is the first broken rule's first violation of a
  // verdict's report ({} when none).
  // whatHappened is a broken rule's own sentence, on a row whose
  // violation has no diagnosed cause: without it the row gave a fix with
  // no word of what went wrong.
  function whatHappened(v) {
    if (!v || v.diagnosis || !v.message) return null;
    return el('div', { class: 'lab-why' }, w('gradeWhat'), ...whyOf(v));
  }

  function firstViolation(verdict) {
    const broken = rulesOf(verdict).find((x) => !x.ok);
    return (broken && broken.violations && broken.violations[0]) || {};
  }

  return { gradeAll };
}
