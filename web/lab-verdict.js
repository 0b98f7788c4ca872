// lab-verdict.js says a verdict of the lab's race panel (lab-race.js) in
// words: the checker's rules with how each fared and which rung asks for a
// broken one, what the checker diagnosed and what to change, a held
// scenario's answers, the notes of answers the contract does not give,
// and the order that broke a rule (scheduleRuns, switchesOf).
//
//   const { ruleTitle, ruleWords, rulesList, whyOf, causeLines, answersLine, noteLines, noteWhat, causesSaid, brokenSeven } = verdictWords({ w, lang, label, judge });
//
// w(key, vars) gives the page's words in lang; label(r) names a rung; judge
// is what the rung asks (lab-rungs.js rungJudge).

import { el, spaced } from './dom.js';
import { CAUSE_RUNG } from './lab-rungs.js';

export function verdictWords({ w, lang, label, judge, lineOf = (n) => n }) {
  const { rulesOf, unknownRule, fixRungs, later, laterNotes, askedCauses, here } = judge;

  // askedBy says that the rung fixer asks for a broken rule or a note,
  // and so the rung the student is on is not done: in those words when it
  // is that rung, else naming both ("rung 5 asks for it" alone, read on
  // rung 6, left "this rung" to guess).
  function askedBy(fixer) {
    if (fixer === here()) return w('ruleAsked', { rung: label(fixer) });
    return w('ruleAskedEarlier', { rung: label(fixer), here: label(here()) });
  }

  function ruleTitle(rule) {
    return (lang === 'ko' && rule.title_ko) || rule.title || rule.name;
  }

  // ruleWords names the checker's rule in the page's language.
  function ruleWords(rule) {
    return rule.n + '. ' + ruleTitle(rule);
  }

  // rulesList lists the checker's rules (verdict.report, lab.Report in
  // Go) with how each fared, and why a broken one broke: whether the rung
  // the student is on asks for it, or a later rung fixes it (expected
  // here). Rule 7 without a published retention is unknown, as idemlab
  // grade says it.
  // whyOf is a violation's sentence, and what its intent is where the
  // sentence names one ("intent i1"): the lanes are a1, a2, and a student
  // never met an i1.
  function whyOf(v) {
    const says = (lang === 'ko' && v.message_ko) || v.message;
    if (!v.intent || !(v.lanes || []).length || !says.includes(v.intent)) return [says];
    // After a sentence that ends in a bracket, a second bracket read as
    // clumsy (the fifteenth simulated student): a dash instead.
    const words = /\)\s*$/.test(says) ? 'intentIsAfter' : 'intentIs';
    return [says, ' ', el('span', { class: 'lab-intent' }, w(words, { intent: v.intent, lanes: v.lanes.join(', ') }))];
  }

  function rulesList(verdict, trace) {
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
                ? el(
                    'div',
                    { class: 'lab-rung-note' },
                    expected
                      ? w('ruleExpected', { rung: label(fixer) })
                      : EVERY_RUNG.has(((r.violations || [])[0] || {}).cause)
                        ? w('ruleAskedAlways')
                        : askedBy(fixer),
                  )
                : null,
              ...(r.violations || []).slice(0, 2).map((v) => el('div', { class: 'lab-why' }, ...whyOf(v))),
              ...(r.violations || []).slice(0, 1).flatMap((v) => causeLines(v, false, trace)),
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
  // The trace of the run (the bench's, or the order the explorer and the
  // grade replayed to show) tells where in the code a cause was done
  // (causeWhere): the statement is named at its line.
  function causeLines(v, note, trace) {
    const says = (lang === 'ko' && v.diagnosis_ko) || v.diagnosis;
    const fix = (lang === 'ko' && v.fix_ko) || v.fix;
    const at = says && causeWhere(v.cause, v.lanes, trace);
    return [
      says
        ? el('div', { class: 'lab-cause', 'data-cause': v.cause || '', 'data-note': note ? 'true' : null }, w('gradeCause', { says }))
        : null,
      at
        ? el(
            'div',
            { class: 'lab-where', 'data-line': String(lineOf(at.line)) },
            w('causeWhere', { line: lineOf(at.line), lane: at.lane, call: at.op === 'pay' ? 'pay' : 'db.' + at.op }),
            at.sql ? [': ', el('code', {}, shortSQL(at.sql))] : null,
          )
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
  function noteLines(notes, trace) {
    // A note said in several scenarios (a throw at the same line, say) is
    // said once, with how many more scenarios said it too.
    const seen = new Map();
    for (const n of notes || []) {
      const k = (n.cause || '') + '\u0000' + n.message;
      if (seen.has(k)) seen.get(k).more++;
      else seen.set(k, { n, more: 0 });
    }
    // A cause is explained (which rung asks, what went wrong, what to
    // change) at its first note; the notes after it of the same cause say
    // only what happened (three malformed keys read as three copies of
    // the same advice on a phone).
    const explained = new Set();
    return [...seen.values()].flatMap(({ n, more }) => {
      const says = (lang === 'ko' && n.message_ko) || n.message;
      const again = !!n.cause && explained.has(n.cause);
      if (n.cause) explained.add(n.cause);
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
          w(n.cause === 'claim-never-settled' ? 'noteNeverSettled' : SLIPS.has(n.cause) ? 'noteSlip' : 'gradeNote', { says }),
          more ? ' ' + w('noteMore', { n: more, s: more === 1 ? '' : 's' }) : null,
        ),
        // A 500 is no rung's feature: every rung asks that the handler
        // answer (the first rung's label would read as a step back).
        fixer && !again
          ? el(
              'div',
              { class: 'lab-rung-note' },
              n.cause === 'handler-failed'
                ? w('ruleAskedEvery')
                : EVERY_RUNG.has(n.cause)
                  ? w('ruleAskedAlways')
                  : expected
                    ? w('ruleExpected', { rung: label(fixer) })
                    : askedBy(fixer),
            )
          : null,
        ...(n.cause && !again ? causeLines(n, true, n.trace || trace) : []),
      ];
    });
  }

  // EVERY_RUNG are the slips in the handler's JavaScript (lab-rungs.js),
  // the 401 the contract asks from the start, and a request served at
  // all (no 409 for nobody): every rung asks for them,
  // and naming the first rung read as a step back to a student on rung 4.
  const EVERY_RUNG = new Set([
    'call-not-awaited',
    'transaction-left-open',
    'rows-dropped',
    'where-missing',
    'write-given-to-get',
    'pay-in-transaction',
    'customer-optional',
    'wait-for-nobody',
    'answer-not-returned',
    'success-not-json',
    'transfer-id-wrong',
    'balance-after-wrong',
    'refusal-not-problem-json',
  ]);
  // SLIPS are those in the JavaScript: what they say is the code's, not
  // an answer the contract forbids.
  const SLIPS = new Set([
    'call-not-awaited',
    'transaction-left-open',
    'rows-dropped',
    'pay-in-transaction',
    'answer-not-returned',
    'where-missing',
    'write-given-to-get',
  ]);

  // noteWhat says in a few words what the notes of these causes are (a
  // claim never settled, a 409 without Retry-After …), each cause once.
  function noteWhat(causes) {
    return [...new Set(causes)].map((c) => w('noteWhat_' + c.replace(/-/g, '_'))).join('; ');
  }

  // causesSaid is what follows the numbers of rules the rung asks for, in
  // its sentence: the causes that make them this rung's (askedCauses), so
  // that a rule another line calls a later rung's reads as this one's for
  // a reason; "" when no cause was told.
  function causesSaid(rules) {
    const causes = askedCauses(rules);
    // Said as the cause, not after a colon: "(rule 3: a call … without
    // await)" read as if rule 3 were the await rule.
    return causes.length ? w('causedBy', { what: noteWhat(causes) }) : '';
  }

  // brokenSeven says rule 7 broken by the retention a file publishes
  // (seconds), once: it breaks in every order alike.
  function brokenSeven(seconds) {
    return el('p', { class: 'lab-grade-unknown', 'data-rule': '7' }, '✘ ' + w('gradeBroken7', { seconds }));
  }

  return { ruleTitle, ruleWords, rulesList, whyOf, causeLines, answersLine, noteLines, noteWhat, causesSaid, brokenSeven };
}

// WHERE says, for a cause that is one statement's doing, how to find that
// statement in a traced run (the bench's, or a replayed order's): the
// call (op, and the SQL it ran), the lane among the cause's (lane: its
// index; else any of them), the slip the runner marked it with, at least
// rows changed, the calls looked at first (prefer: their ops), and the
// first or the last such call.
const COMPLETES = /^\s*update\b[\s\S]*\bcompleted\b/i;
const WHERE = {
  'claim-ignored': { op: 'run', sql: /\bor\s+ignore\b|\bon\s+conflict\b[\s\S]*\bdo\s+nothing\b/i },
  'claim-replaced': { op: 'run', sql: /\bor\s+replace\b|^\s*replace\b/i },
  // The completion that went on after its claim was taken: the last.
  'takeover-unchecked': { op: 'run', sql: COMPLETES, params: true, last: true },
  'completed-apart': { op: 'run', sql: COMPLETES, params: true },
  // The retry's UPDATE that took the live attempt's row.
  'lease-too-short': { op: 'run', sql: /^\s*update\b/i, lane: 1, rows: 1 },
  'network-key-missing': { op: 'pay', last: true },
  'network-key-shared': { op: 'pay', lane: 1 },
  'paid-twice': { op: 'pay', last: true },
  // The error path's DELETE of a key whose transfer had committed: the
  // attempt that threw (the violation's first).
  'completed-key-released': { op: 'run', sql: /^\s*delete\b/i, lane: 0 },
  // The UPDATE or DELETE with no WHERE; the write given to get or all:
  // the calls the runner marked with the slip.
  'where-missing': { op: ['run', 'get', 'all'], slip: 'where-missing' },
  'write-given-to-get': { op: ['get', 'all'], slip: 'write-given-to-get' },
  // A statement on the handler's own key table that finds a row by its
  // key without the customer: the first such read or write.
  // A read comes first: a purge of old keys without the customer (a
  // DELETE by age) is not what handed a customer another's row.
  'global-keys': { op: ['get', 'all', 'run'], sql: /\bwhere\b/i, not: /\bcustomer\b|\b(accounts|transfers)\b/i, prefer: ['get', 'all'] },
};

// causeWhere finds in trace (a traced run: the bench's, or an order the
// explorer or the grade replayed) the call that did cause,
// among the attempts lanes names: {line, lane, op, sql}, or null where
// the cause is no one statement's or the run was not traced.
export function causeWhere(cause, lanes, trace) {
  const find = WHERE[cause];
  if (!find || !trace || !trace.length) return null;
  const want = find.lane !== undefined && lanes && lanes[find.lane] ? [lanes[find.lane]] : lanes && lanes.length ? lanes : null;
  const said = (e) => (e.sql || '') + (find.params ? ' ' + JSON.stringify(e.params || []) : '');
  const hits = trace.filter(
    (e) =>
      e.line > 0 &&
      [].concat(find.op).includes(e.op) &&
      (!find.not || !find.not.test(e.sql || '')) &&
      (!want || want.includes(e.lane)) &&
      (!find.sql || find.sql.test(said(e))) &&
      (!find.slip || e.slip === find.slip) &&
      (!find.rows || (e.rows || 0) >= find.rows),
  );
  const preferred = find.prefer ? hits.filter((h) => find.prefer.includes(h.op)) : [];
  const among = preferred.length ? preferred : hits;
  const e = find.last ? among[among.length - 1] : among[0];
  return e ? { line: e.line, lane: e.lane, op: e.op, sql: e.op === 'pay' ? '' : e.sql } : null;
}

// shortSQL is a statement on one line, cut where it runs long.
function shortSQL(sql) {
  const one = String(sql).replace(/\s+/g, ' ').trim();
  return one.length > 80 ? one.slice(0, 79) + '…' : one;
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
