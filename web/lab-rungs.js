// lab-rungs.js is what a rung of the ladder asks of the lab's race panel
// (lab-race.js): the rung whose fix a broken rule, a diagnosed cause or a
// note asks for, and whether the rung the student is on asks for it or a
// later rung fixes it.
//
//   const judge = rungJudge({ rung, retention });
//
// rung() is the rung the student is on; retention() the retention the
// loaded file publishes (retentionSeconds, null when none), asked each
// time since it changes when a file loads.

import { RUNGS } from './lab-words.js';

// RULE_RUNG is the rung of the ladder whose fix a broken rule asks for
// first (the goals of lab-words.js): a second payment for one wish asks
// for the key's claim; a different request under a used key, for its
// fingerprint; a success without its transfer, for the in-progress state;
// a replay that differs, for the stored answer; another customer's answer,
// a short retention or a second charge at the network, for the scope, the
// retention and the network's key.
// (The rules' names are the checker's, lab.Rules in Go; a test holds
// them to it.)
const RULE_RUNG = [
  { n: 1, name: 'one-transfer-per-intent', rung: 'unique' },
  { n: 6, name: 'money-conserved', rung: 'unique' },
  { n: 2, name: 'different-request-never-succeeds', rung: 'fingerprint' },
  { n: 4, name: 'completion-has-its-transfer', rung: 'in-progress' },
  { n: 3, name: 'replay-is-byte-identical', rung: 'replay' },
  { n: 5, name: 'customers-see-own-responses', rung: 'scoped' },
  { n: 7, name: 'retention-outlasts-retries', rung: 'scoped' },
  { n: 8, name: 'one-charge-per-intent', rung: 'scoped' },
];

// askedRules names the rules a rung asks for (its own and the rungs'
// below it), for the explorer to look past a break of a later rung's rule
// for one of these (runner.explore's want).
export function askedRules(rung) {
  const here = RUNGS.indexOf(rung);
  return RULE_RUNG.filter((x) => RUNGS.indexOf(EARLIER[x.name] || x.rung) <= here).map((x) => x.name);
}

// EARLIER names a rule that a cause of an earlier rung than the rule's
// own breaks too: two live attempts that both pay break rule 8 where the
// unique rung's claim is missing (paid-without-claim), though the
// network's key, for a retry after a crash, is the scoped rung's.
const EARLIER = { 'one-charge-per-intent': 'unique' };

// CAUSE_RUNG is the rung whose fix a diagnosed cause asks for: finer than
// the rule's (RULE_RUNG), since one rule breaks for several causes (rule
// 4 broken by another customer's key asks for the scope, not for the
// in-progress state).
export const CAUSE_RUNG = {
  'key-optional': 'unique',
  'stored-validation-refusal': 'unique',
  'key-ignored': 'unique',
  'no-fingerprint': 'fingerprint',
  'reordered-refused': 'fingerprint',
  'raw-bytes-fingerprint': 'fingerprint',
  // A retry of the very same bytes refused 422: a fingerprint made of
  // more than the request (req.attempt, the time).
  'fingerprint-unstable': 'fingerprint',
  'order-sensitive-fingerprint': 'fingerprint',
  'completed-before-paid': 'in-progress',
  'in-process-lock': 'in-progress',
  'refusal-not-stored': 'in-progress',
  'generic-replay': 'replay',
  'recomputed-replay': 'replay',
  'replay-status': 'replay',
  'replay-headers': 'replay',
  // A claim taken from an attempt still running: the lease is the
  // scoped rung's.
  'lease-too-short': 'scoped',
  'refusal-rerendered': 'replay',
  'global-keys': 'scoped',
  'short-retention': 'scoped',
  // A note's cause (lab.Note): no rule broke, but a claim a crash left
  // refused the retry ten minutes later. The lease that settles it is the
  // scoped rung's.
  'claim-never-settled': 'scoped',
  // A takeover that left the claim the dead attempt's: the takeover is
  // the scoped rung's.
  'takeover-kept-owner': 'scoped',
  // Two live attempts both paid the network: the claim did not stop the
  // second. The unique rung's claim, made before pay, does.
  'paid-without-claim': 'unique',
  // A crash between the transfer's commit and the key's completion left
  // the key in progress: the in-progress rung completes the key in the
  // transfer's own transaction.
  'completed-apart': 'in-progress',
  // The key passed to pay was the client's as sent: another customer's
  // payment met it at the network. Keys scoped to the customer are the
  // scoped rung's.
  'network-key-shared': 'scoped',
  // A purge deleted a key before the published retention ran out: the
  // retention is the scoped rung's.
  'key-purged-early': 'scoped',
  // The key's INSERT was ignored for its conflict (OR IGNORE, DO NOTHING)
  // and the attempt went on: the unique rung's claim fails loudly.
  'claim-ignored': 'unique',
  // The key's INSERT OR REPLACE replaced another attempt's claim: the
  // unique rung's claim fails loudly.
  'claim-replaced': 'unique',
  // Two retries each took a crashed attempt's claim over and each moved
  // the money: the lease's takeover, decided by its own UPDATE, is the
  // scoped rung's.
  'takeover-unchecked': 'scoped',
  // A different request took over the claim a crash left: the lease's
  // takeover, for the same request alone, is the scoped rung's.
  'takeover-unfingerprinted': 'scoped',
  // A different request told 409 while the first ran: the state, read
  // after the fingerprint, is the in-progress rung's.
  'state-before-fingerprint': 'in-progress',
  // The network failed an attempt's pay (the browser's network
  // scenarios). A retry charged again: the network's key is the scoped
  // rung's. A retry told to wait by a claim the failed attempt kept: the
  // release on an error is the in-progress rung's. The failure stored as
  // the key's answer: what is stored is the replay rung's. Money moved that
  // the network never charged: the starting handler pays before BEGIN and
  // lets pay's error end the attempt, so every rung asks for it.
  'network-key-missing': 'scoped',
  'claim-not-released': 'in-progress',
  'failure-stored': 'replay',
  // The network's failure answered as if the request were settled (a
  // 402) and its key completed: releasing the claim on a failure is the
  // in-progress rung's.
  'failure-completed': 'in-progress',
  // A key deleted by the error path of an attempt whose transfer had
  // committed (a throw after COMMIT): releasing only a claim in progress
  // is the in-progress rung's.
  'completed-key-released': 'in-progress',
  // A 409 asking for a wait of minutes (milliseconds taken for seconds):
  // the 409's Retry-After is the in-progress rung's.
  'retry-after-too-long': 'in-progress',
  // A success without a JSON Content-Type: the starting handler answers
  // with lab.json, so every rung asks for it.
  'success-not-json': 'naive',
  // A success naming no transfer it made ("tr_undefined"): the starting
  // handler names its row, so every rung asks for it.
  'transfer-id-wrong': 'naive',
  // A balance_after read before the debit: the starting handler reads it
  // after, so every rung asks for it.
  'balance-after-wrong': 'naive',
  'transfer-unpaid': 'naive',
  // Every attempt of a request told to wait, with no one working on it:
  // the starting handler serves every request, so every rung asks for it.
  'wait-for-nobody': 'naive',
  // A retry told to wait by the claim of an attempt that had answered
  // (a 402 returned before the key was completed): settling the claim on
  // every path is the in-progress rung's.
  'claim-left-by-answer': 'in-progress',
  // A refusal built and not returned (a return left out): the starting
  // handler returns each of its refusals, so every rung asks for it.
  'answer-not-returned': 'naive',
  // One attempt charged twice (pay called again without the key): the
  // starting handler calls pay once, so every rung asks for it.
  'paid-twice': 'naive',
  // A transfer without X-Customer-ID answered with success: every rung
  // asks for the 401 the starting handler gives.
  'customer-optional': 'naive',
  // The network called inside a transaction: the starting handler pays
  // before BEGIN, so every rung asks for it.
  'pay-in-transaction': 'naive',
  // A key the contract refuses taken as one, and the longest valid key
  // refused: the unique rung's, where the key first decides.
  'key-unchecked': 'unique',
  'longest-key-refused': 'unique',
  // Two of the contract's notes, which the grader makes too: a 409
  // without Retry-After (the in-progress rung's), a replay without
  // Idempotent-Replayed: true (the replay rung's).
  'conflict-without-retry-after': 'in-progress',
  // A retry told 429 (or 425) while its key was in progress: the
  // contract's 409 is the in-progress rung's.
  'in-progress-not-409': 'in-progress',
  // A release of another attempt's row under its own key (a DELETE on
  // a refusal's path): the release is the in-progress rung's.
  'released-another-claim': 'in-progress',
  // A refusal without its problem+json: the starting handler builds
  // every refusal with lab.problem, so every rung asks for it.
  'refusal-not-problem-json': 'naive',
  'replay-unmarked': 'replay',
  // A handler that answered 500: every rung asks that it answer.
  'handler-failed': 'naive',
  // Slips in the handler's JavaScript that no rule sees (a call never
  // awaited, an answer before COMMIT, a SELECT given to db.run): every
  // rung asks that they be gone.
  'call-not-awaited': 'naive',
  'transaction-left-open': 'naive',
  'rows-dropped': 'naive',
  // A key table where nothing is unique: the unique rung's constraint.
  'key-not-unique': 'unique',
  'where-missing': 'naive',
  'write-given-to-get': 'naive',
};

// rungOf is the rung a violation of a rule asks for.
function rungOf(rule, v) {
  return (v && CAUSE_RUNG[v.cause]) || (RULE_RUNG.find((x) => x.n === rule.n) || {}).rung;
}

export function rungJudge({ rung, retention }) {
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
    return !!r.rule && r.rule.n === 7 && !!r.ok && retention() === null;
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

  // askedCauses are the causes that make broken rules this rung's (or an
  // earlier one's): a rule whose usual fix is a later rung's may break
  // here for a cause the rung asks about (rule 3 by a raw-bytes
  // fingerprint, at the fingerprint rung), and the words say which. The
  // cause of the most violations comes first: a side cause named first
  // (a refusal not stored, where the key table had no constraint) sent a
  // student to the wrong place.
  function askedCauses(rules) {
    const here = RUNGS.indexOf(rung());
    const count = new Map();
    for (const r of rules)
      for (const v of r.violations || [])
        if (v && v.cause && CAUSE_RUNG[v.cause] && RUNGS.indexOf(CAUSE_RUNG[v.cause]) <= here)
          count.set(v.cause, (count.get(v.cause) || 0) + 1);
    return [...count.keys()].sort((a, b) => count.get(b) - count.get(a));
  }

  return { rulesOf, unknownRule, fixRungs, later, askedNotes, laterNotes, askedCauses, here: rung };
}
