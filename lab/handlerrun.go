package lab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"idemlab/engine"
)

// LabRetryHorizon is how long the lab's clients keep retrying: rule 7
// holds when a handler's published retention is longer.
const LabRetryHorizon = time.Hour

// HandlerRun is one run of a student's own handler (docs/lab-handler.md)
// as the browser's lab records it: the scenario's intents, every attempt
// with what it sent and what it answered, and what the lab read from its
// own tables and from the payment network afterwards. JudgeHandlerRun
// judges it by the checker's rules, as Check judges the engine's runs.
type HandlerRun struct {
	Intents  []Intent         `json:"intents"`
	Attempts []HandlerAttempt `json:"attempts"`
	// Transfers are the lab's transfers table after the run, each with the
	// attempt whose connection inserted it.
	Transfers []HandlerTransfer `json:"transfers"`
	// Charges are the payment network's charges, each with the attempt
	// that made it.
	Charges       []HandlerCharge  `json:"charges"`
	StartBalances map[string]int64 `json:"start_balances"`
	EndBalances   map[string]int64 `json:"end_balances"`
	// RetentionSeconds is the file's retentionSeconds; nil when it
	// publishes none (rule 7 is then not judged, as the grader does not).
	RetentionSeconds *float64 `json:"retention_seconds"`
	// Purges are the key rows a call of the handler deleted although
	// another attempt had written them (a purge of old keys, not an
	// attempt's release of its own claim): the browser's lab reads them
	// from the handler's own tables.
	Purges []HandlerPurge `json:"purges,omitempty"`
	// KeysRead says that the lab read the handler's own tables after
	// every call (a traced run of the browser's lab), and Claims are then
	// the attempts that wrote a row there (a claim, most often): an
	// attempt not among them claimed nothing.
	KeysRead bool `json:"keys_read,omitempty"`
	// KeysScoped says, of a traced run (KeysRead), that every statement
	// whose parameters held an attempt's key held its customer too: the
	// handler reads and writes its keys within the customer, so a 422
	// came from the customer's own row, not another customer's.
	KeysScoped bool `json:"keys_scoped,omitempty"`
	// NothingUnique says that the handler's own tables hold no PRIMARY
	// KEY or UNIQUE beyond a rowid: no INSERT of a key could fail there,
	// so no claim was ever refused.
	NothingUnique bool     `json:"nothing_unique,omitempty"`
	Claims        []string `json:"claims,omitempty"`
	// Takeovers are the calls that made another attempt's row of their
	// own key theirs, in place (where KeysRead): a claim taken over.
	Takeovers []HandlerTakeover `json:"takeovers,omitempty"`
	// Ignored are the inserts into the handler's own tables that a
	// conflict clause (OR IGNORE, ON CONFLICT … DO NOTHING) turned into
	// nothing: the browser's lab reads them from its database.
	Ignored []HandlerIgnored `json:"ignored,omitempty"`
	// TakenLive are the rows of the handler's own tables that an attempt
	// updated while the attempt that wrote them was still running: the
	// browser's lab reads them from its database, in every run.
	TakenLive []HandlerTakenLive `json:"taken_live,omitempty"`
	// TakenEnded are the rows of the handler's own tables that an attempt
	// updated after the attempt that wrote them had ended (a claim taken
	// over once its lease ran out, a key used again after its retention):
	// the browser's lab reads them from its database, in every run.
	TakenEnded []HandlerTakenLive `json:"taken_ended,omitempty"`
	// Scenario is the lab scenario the run played ("" when not told): it
	// tells the diagnosis what the run was testing, as a check's name
	// tells the grader's.
	Scenario string `json:"scenario,omitempty"`
}

// HandlerAttempt is one attempt: the request as the handler saw it and
// its answer. Answered is false when the attempt never answered (a crash,
// an exception: the client got nothing, or a 500 the checker does not
// count as an answer); Delivered is false when the client never read it
// (a lost answer, a timeout).
type HandlerAttempt struct {
	ID       string `json:"id"`
	Intent   string `json:"intent"`
	Customer string `json:"customer"`
	// Key is the Idempotency-Key header as sent (quotes and all), "" when
	// none was.
	Key       string            `json:"key"`
	Body      string            `json:"body"`
	Now       int64             `json:"now"`
	Answered  bool              `json:"answered"`
	Delivered bool              `json:"delivered"`
	Status    int               `json:"status"`
	Headers   map[string]string `json:"headers"`
	Response  string            `json:"response"`
	// Arrived and AnsweredAt are when the attempt reached the handler and
	// when it answered, on the run's one clock (Attempt.Arrived); zero
	// when not told.
	Arrived    int64 `json:"arrived,omitempty"`
	AnsweredAt int64 `json:"answered_at,omitempty"`
	// Pays are the attempt's calls to the payment network, in order.
	Pays []HandlerPay `json:"pays,omitempty"`
	// PayFault is how the scenario made the network fail the attempt's
	// first call to pay: "lost" (the network charged, and its answer never
	// came back: pay threw NetworkError), "down" (the network was not
	// reached and charged nothing: pay threw NetworkError), "" for none.
	PayFault string `json:"pay_fault,omitempty"`
	// Threw is what the handler threw, its name, line and message, when
	// the attempt ended in an exception (answered 500); "" otherwise.
	Threw string `json:"threw,omitempty"`
	// The slips a handler makes that no rule sees, which the browser's
	// lab watches for: Unawaited are the calls the attempt made without
	// await, those it never let run (it ended first) before those that
	// ran with nothing waiting for their answer; LeftOpen says that it
	// answered with its transaction still open, so the lab rolled back
	// what it wrote since BEGIN; Dropped are its db.run calls given a
	// statement that only reads, whose rows run threw away; PaidInTx are
	// its calls to the network made with its transaction open.
	Unawaited []HandlerCall `json:"unawaited,omitempty"`
	// Failed are the attempt's first calls that failed (Failed the
	// error's name, Message its words), whatever the handler did with
	// the error after.
	Failed []HandlerCall `json:"failed,omitempty"`
	// Unreturned is a refusal the attempt built with lab.problem (Op
	// "problem", its Status) and did not return, while it answered with
	// success: a return left out, the code going on past the refusal.
	Unreturned []HandlerCall `json:"unreturned,omitempty"`
	LeftOpen   bool          `json:"left_open,omitempty"`
	Dropped    []HandlerCall `json:"dropped,omitempty"`
	// Unscoped are its UPDATE and DELETE calls with no WHERE (every row
	// of the table); WriteRead its writes given to db.get or db.all
	// without RETURNING (answered no row, whatever they changed).
	Unscoped  []HandlerCall `json:"unscoped,omitempty"`
	WriteRead []HandlerCall `json:"write_read,omitempty"`
	PaidInTx  []HandlerCall `json:"paid_in_tx,omitempty"`
}

// HandlerCall is one call of a handler's: db.run, db.get, … or pay (Op:
// run, get, all, begin, commit, rollback, pay), at its line in the
// student's file (0 when not known).
type HandlerCall struct {
	Op   string `json:"op"`
	Line int    `json:"line,omitempty"`
	// Ran (an unawaited call's) says that the call ran but nothing ever
	// asked for its answer: pay(…) without await, whose error no one
	// sees. Without it the call never ran at all. Failed is the name of
	// the error such a call failed with, which no one saw (a claim's
	// ConstraintError): the attempt went on as if it had succeeded.
	Ran    bool   `json:"ran,omitempty"`
	Failed string `json:"failed,omitempty"`
	// Message is a failed call's error message (HandlerAttempt.Failed).
	Message string `json:"message,omitempty"`
	// Status is an unreturned refusal's (HandlerAttempt.Unreturned).
	Status int `json:"status,omitempty"`
}

// HandlerPay is one call to the payment network: the key the handler
// passed ("" for none), and how the network answered: "charged" (a new
// charge), "replayed" (the charge it knew under that key) or "refused"
// (an error: the key was first used for another payment, say).
type HandlerPay struct {
	NetworkKey string `json:"network_key"`
	Outcome    string `json:"outcome"`
	Charge     string `json:"charge_id,omitempty"`
}

// HandlerPurge is one call that deleted rows holding a key (as sent)
// that another attempt wrote: the attempt whose call it was, its time
// (Unix ms, as HandlerAttempt.Now), how many rows went, and when on the
// run's one clock (HandlerAttempt.Arrived; 0 when not told).
type HandlerPurge struct {
	Attempt string `json:"attempt"`
	Key     string `json:"key"`
	Now     int64  `json:"now"`
	Rows    int    `json:"rows"`
	Clock   int64  `json:"clock,omitempty"`
}

// HandlerTakeover is one claim taken over: the attempt whose call made
// the row of its key its own, the key, and the attempt that had written
// the row before.
type HandlerTakeover struct {
	Attempt string `json:"attempt"`
	Key     string `json:"key"`
	From    string `json:"from"`
	// Insert says that the call was INSERT OR REPLACE (or REPLACE INTO):
	// it replaced the other attempt's row instead of failing on it, a
	// claim that throws its verdict away.
	Insert bool `json:"insert,omitempty"`
}

// HandlerTakenLive is a row of the handler's table Table, written by
// the attempt From, that the attempt Attempt updated: while From was still
// running (HandlerRun.TakenLive, a claim taken from a live attempt), or
// after it had ended (HandlerRun.TakenEnded).
type HandlerTakenLive struct {
	Attempt string `json:"attempt"`
	From    string `json:"from"`
	Table   string `json:"table"`
}

// HandlerIgnored is one insert that changed no row for a conflict and
// raised no error: the attempt whose call it was, the table and the SQL.
type HandlerIgnored struct {
	Attempt string `json:"attempt"`
	Table   string `json:"table"`
	SQL     string `json:"sql"`
}

// HandlerTransfer is a row of the lab's transfers table.
type HandlerTransfer struct {
	ID      int64  `json:"id"`
	From    string `json:"from"`
	To      string `json:"to"`
	Amount  int64  `json:"amount"`
	Attempt string `json:"attempt"`
}

// HandlerCharge is a charge the payment network made.
type HandlerCharge struct {
	ID         string `json:"charge_id"`
	Attempt    string `json:"attempt"`
	Amount     int64  `json:"amount"`
	NetworkKey string `json:"network_key,omitempty"`
}

// History turns the run into the checker's history: transfers and charges
// belong to the intent of the attempt that made them, through its
// customer and key, as the engine's own runs record them.
func (r HandlerRun) History() History {
	h := History{Intents: r.Intents, StartBalances: r.StartBalances, EndBalances: r.EndBalances,
		RetryHorizon: LabRetryHorizon, Ledger: []LedgerTransfer{}, Charges: []ProcessorCharge{}}
	h.Retention = r.retention()
	byID := make(map[string]Attempt, len(r.Attempts))
	for _, a := range r.Attempts {
		key := ""
		if a.Key != "" {
			key, _ = engine.ParseKey([]string{a.Key})
		}
		at := Attempt{Lane: a.ID, Intent: a.Intent, Customer: a.Customer, Key: key, Body: []byte(a.Body),
			Delivered: a.Answered && a.Delivered, SentAt: time.UnixMilli(a.Now).UTC(), Arrived: a.Arrived}
		if a.Answered {
			at.Status, at.Response, at.Answered = a.Status, []byte(a.Response), a.AnsweredAt
			at.Replayed = replayedHeader(a.Headers)
			at.ContentType = headerOf(a.Headers, "Content-Type")
		}
		byID[a.ID] = at
		h.Attempts = append(h.Attempts, at)
	}
	for _, t := range r.Transfers {
		a := byID[t.Attempt]
		h.Ledger = append(h.Ledger, LedgerTransfer{ID: "tr_" + strconv.FormatInt(t.ID, 10), Customer: a.Customer, Key: a.Key,
			From: t.From, To: t.To, Amount: t.Amount, Intent: a.Intent})
	}
	for _, c := range r.Charges {
		a := byID[c.Attempt]
		h.Charges = append(h.Charges, ProcessorCharge{ID: c.ID, Customer: a.Customer, Key: a.Key, Amount: c.Amount, IdempotencyKey: c.NetworkKey, Intent: a.Intent})
	}
	return h
}

// JudgeHandlerRun judges a run of a student's handler by the checker's
// rules (Check), and says of each broken rule what the evidence shows
// went wrong and what to change (Diagnose), as the grader does. It is a
// pure function.
func JudgeHandlerRun(r HandlerRun) Report {
	h := r.History()
	rep := Check(h)
	unboundFirsts(r, &rep)
	if vs := storedRefusals(h); len(vs) > 0 {
		for i := range rep.Rules {
			if rr := &rep.Rules[i]; rr.Rule.N == RuleNoSilentWrong.N {
				rr.Violations = append(rr.Violations, vs...)
				rr.OK, rep.OK = false, false
			}
		}
	}
	rep.Notes = contractNotes(r)
	if r.RetentionSeconds == nil {
		for i := range rep.Rules {
			if rr := &rep.Rules[i]; rr.Rule.N == RuleRetention.N {
				rr.Unknown = true
				rr.Why = "unknown: the handler publishes no retentionSeconds, so no client can know how long a key is kept (idemlab grade marks the rule unknown and fails until it is published)"
				rr.WhyKo = "알 수 없음: 핸들러가 retentionSeconds를 공개하지 않아 키를 얼마나 보존하는지 어떤 클라이언트도 알 수 없습니다(idemlab grade는 공개할 때까지 이 규칙을 알 수 없음으로 표시하고 불합격시킵니다)"
			}
		}
	}
	shared := sharedNetworkKeys(r)
	for _, n := range shared {
		rep.Notes = append(rep.Notes, n.note)
	}
	check := scenarioChecks[r.Scenario]
	unfingerprinted := unfingerprintedTakeovers(r)
	for i := range rep.Rules {
		rr := &rep.Rules[i]
		for j := range rr.Violations {
			v := &rr.Violations[j]
			id := Diagnose(check, rr.Rule, h.Attempts, v.Attempts, func(k int) bool { return midTransfer(h.Attempts, k) })
			// What the network did to an attempt of the violation is
			// evidence no answer gives: its own key table may be scoped.
			for _, n := range shared {
				if slices.Contains(v.Lanes, n.lane) {
					id = CauseNetworkKeyShared
				}
			}
			// A key taken away by a purge before the published retention
			// ran out: the retry found nothing to stop it or to replay.
			if rr.Rule.N != RuleRetention.N && purgedEarly(r, h, v.Attempts) {
				id = CauseKeyPurgedEarly
				// Deleted by an attempt of the same key: a release of a
				// claim that was not its own, not a purge of old keys.
				if releasedAnother(r, v.Attempts) {
					id = CauseReleasedAnother
				}
			}
			// Two retries that each took the same claim over and each moved
			// the money: whatever the answers look like, the second
			// takeover should have failed.
			if (rr.Rule.N == RuleOneTransfer.N || rr.Rule.N == RuleByteReplay.N || rr.Rule.N == RuleConservation.N) && (tookOverTwice(r, *v) || lostClaimWentOn(r, *v)) {
				id = CauseTakeoverUnchecked
			}
			if check == "reordered" && rr.Rule.N == RuleByteReplay.N {
				if c := fingerprintCause(h.Attempts, v.Attempts); c != "" {
					id = c
				}
			}
			// Attempts further apart than the retention: the key was gone
			// when the later one came, whatever else it shows (two
			// attempts that each paid and answered, say).
			if id == "" && rr.Rule.N != RuleRetention.N && outlived(r, h, v.Attempts) {
				id = CauseShortRetention
			}
			if id == "" && ignoredClaim(r, rr.Rule, *v) {
				id = CauseClaimIgnored
			}
			// An attempt of the violation whose claim's INSERT replaced
			// another attempt's row: whatever the answers resemble, the
			// claim never failed.
			if replacedClaim(r, *v) {
				id = CauseClaimReplaced
			}
			// A second charge for the intent: one attempt that called pay
			// twice, whatever else happened; or attempts that each paid
			// under a claim of their own (a takeover, a release after the
			// network's answer was lost) and gave pay no key, or not the
			// same one, where the key itself was still kept.
			if rr.Rule.N == RuleOneCharge.N {
				if paidTwiceByOne(r, v.Intent) {
					id = CausePaidTwice
				} else if id == "" && networkKeyMissing(r, v.Intent) {
					id = CauseNetworkKeyMissing
				}
			}
			if id == "" && paidTwiceUnclaimed(r, rr.Rule, v.Intent) {
				id = CausePaidUnclaimed
			}
			if id == "" && rr.Rule.N == RuleOneCharge.N && chargedAlive(r, v.Intent) {
				id = CausePaidUnclaimed
			}
			if id == "" && (rr.Rule.N == RuleOneTransfer.N || rr.Rule.N == RuleConservation.N) && paidThenCrashed(r, v.Intent) {
				id = CauseCompletedApart
			}
			// Two different requests sent together, both executed: the
			// claim did not stop the second (a key looked up before it was
			// inserted, say), whatever a fingerprint would have said.
			if rr.Rule.N == RuleNoSilentWrong.N && id == CauseNoFingerprint && executedTogether(r, *v) {
				id = ""
			}
			// A different request took over a crashed attempt's claim of
			// this key: what went wrong after it (the first request's retry
			// handed the other's answer, say) is that takeover's doing.
			if rr.Rule.N == RuleNoSilentWrong.N || rr.Rule.N == RuleByteReplay.N || rr.Rule.N == RuleNothingLost.N {
				for _, k := range v.Attempts {
					if a := r.Attempts[k]; unfingerprinted[keyID{a.Customer, a.Key}] {
						id = CauseTakeoverUnfingerprinted
					}
				}
			}
			// Keys kept in a table where nothing is unique: every claim's
			// INSERT succeeded, so nothing the claim was to stop was
			// stopped.
			if r.NothingUnique && (id == "" || id == CauseKeyIgnored || id == CausePaidUnclaimed || id == CauseNoFingerprint) &&
				(rr.Rule.N == RuleOneTransfer.N || rr.Rule.N == RuleOneCharge.N || rr.Rule.N == RuleNoSilentWrong.N) {
				id = CauseKeyNotUnique
			}
			// An attempt threw after its transfer committed, and a retry of
			// its request moved the money again: its error path released a
			// key whose transfer was done.
			if (rr.Rule.N == RuleOneTransfer.N || rr.Rule.N == RuleOneCharge.N) && releasedAfterCommit(r, v.Intent) {
				id = CauseCompletedKeyReleased
			}
			// The network failed an attempt's pay, and it answered as if
			// the request were settled and completed its key: the retry
			// was told the key was done with nothing behind it.
			if (rr.Rule.N == RuleNothingLost.N || rr.Rule.N == RuleByteReplay.N) && failureCompleted(r, v.Intent) {
				id = CauseFailureCompleted
			}
			// A slip in the JavaScript of an attempt of the violation (an
			// answer before COMMIT, a call never awaited, rows thrown
			// away) is what went wrong, whatever the answers resemble: a
			// transfer rolled back under a 201 looks like a replay rebuilt
			// or a key of another customer's.
			if c := slipOf(r, v.Lanes); c != "" {
				id = c
			}
			// A retry refused 422 as a different request, where only
			// another customer had sent a different request under its key
			// string: the key was read without its customer.
			if rr.Rule.N == RuleByteReplay.N && refusedForAnother(r, *v) {
				id = CauseGlobalKeys
			}
			// A retry refused 422 though every request of its customer
			// under its key sent the same bytes: the fingerprint is not
			// the request's.
			if refusedAsItself(r, *v) {
				id = CauseFingerprintUnstable
			}
			if c, ok := CauseOf(id); ok {
				v.Cause, v.Diagnosis, v.DiagnosisKo, v.Fix, v.FixKo = c.ID, c.Says, c.SaysKo, c.Fix, c.FixKo
			} else {
				v.Fix, v.FixKo = RuleFix(rr.Rule.Name), RuleFixKo(rr.Rule.Name)
			}
			v.Fix, v.FixKo = inTheFile(v.Fix), inTheFile(v.FixKo)
		}
	}
	return rep
}

// unboundFirsts judges again the violations of rule 2 whose first request
// crashed (it never answered): whether its claim ever reached the key
// table, its answers cannot tell. Where the later, different request took
// over the row the crashed attempt had written (tookFrom), the claim was
// there and the takeover let a different request through: the violation
// stands. Where the later request made a transfer of its own and took no
// row over, its claim found none: the crash came before the first claim
// was committed, the key was free, and the violation is dropped. So it is
// where the later request came after the published retention: the key
// was anyone's to claim again, whatever the row still said.
func unboundFirsts(r HandlerRun, rep *Report) {
	keep := r.retention()
	changed := false
	for i := range rep.Rules {
		rr := &rep.Rules[i]
		if rr.Rule.N != RuleNoSilentWrong.N {
			continue
		}
		kept := rr.Violations[:0]
		for _, v := range rr.Violations {
			if len(v.Attempts) == 2 {
				first, later := r.Attempts[v.Attempts[0]], r.Attempts[v.Attempts[1]]
				expired := keep > 0 && time.Duration(later.Now-first.Now)*time.Millisecond >= keep
				if !first.Answered && (expired || !tookFrom(r, later.ID, first.ID) && madeTransfer(r, later.ID)) {
					changed = true
					continue
				}
			}
			kept = append(kept, v)
		}
		rr.Violations = kept
		rr.OK = len(kept) == 0
	}
	if changed {
		rep.OK = true
		for _, rr := range rep.Rules {
			rep.OK = rep.OK && rr.OK
		}
	}
}

// executedTogether reports whether the two attempts of a violation each
// made a transfer, the later one having arrived before the first answered.
func executedTogether(r HandlerRun, v Violation) bool {
	if len(v.Attempts) != 2 {
		return false
	}
	a, b := r.Attempts[v.Attempts[0]], r.Attempts[v.Attempts[1]]
	return a.AnsweredAt != 0 && b.Arrived != 0 && b.Arrived < a.AnsweredAt && madeTransfer(r, a.ID) && madeTransfer(r, b.ID)
}

// unfingerprintedTakeovers are the keys (customer, key as sent) under
// which a request took over the row that a crashed attempt, with another
// request, had written (tookFrom): a takeover that did not compare the
// fingerprint.
func unfingerprintedTakeovers(r HandlerRun) map[keyID]bool {
	var out map[keyID]bool
	for _, y := range r.Attempts {
		if y.Answered || y.Key == "" {
			continue
		}
		for _, x := range r.Attempts {
			if x.ID == y.ID || x.Key != y.Key || x.Customer != y.Customer || SameRequest([]byte(x.Body), []byte(y.Body)) || !tookFrom(r, x.ID, y.ID) {
				continue
			}
			if out == nil {
				out = map[keyID]bool{}
			}
			out[keyID{x.Customer, x.Key}] = true
		}
	}
	return out
}

// tookFrom reports whether attempt id took over a row of the handler's
// own tables that attempt from had written (HandlerRun.TakenEnded,
// TakenLive, or a traced run's Takeovers).
func tookFrom(r HandlerRun, id, from string) bool {
	for _, ts := range [][]HandlerTakenLive{r.TakenEnded, r.TakenLive} {
		for _, t := range ts {
			if t.Attempt == id && t.From == from {
				return true
			}
		}
	}
	for _, t := range r.Takeovers {
		if t.Attempt == id && t.From == from {
			return true
		}
	}
	return false
}

// publishedAt are the grader's words for where an endpoint publishes its
// retention (GET {base}), and what a handler file of the browser's lab
// says instead: its retentionSeconds.
var publishedAt = strings.NewReplacer(
	`at GET {base} as {"retention_seconds": N}`, "in your file as const retentionSeconds = N",
	`GET {base} answers {"retention_seconds": N}`, "your file says const retentionSeconds = N",
	`GET {base}에서 {"retention_seconds": N}으로 공개하세요`, "파일에서 const retentionSeconds = N으로 공개하세요",
	`GET {base}가 {"retention_seconds": N}으로 답합니다`, "파일에 const retentionSeconds = N으로 적습니다",
)

// inTheFile is a fix in the browser's lab's words (publishedAt).
func inTheFile(fix string) string { return publishedAt.Replace(fix) }

// tookOverTwice reports whether two attempts of the violation's intent
// each took a claim of its key over (HandlerRun.Takeovers), one of them
// named by the violation: a takeover decided by a row read before the
// UPDATE, or a completion that did not check the claim was still its own,
// lets the second retry of a crashed attempt go on as the first did.
func tookOverTwice(r HandlerRun, v Violation) bool {
	if !r.KeysRead {
		return false
	}
	intent := intents(r)
	by := map[string]bool{}
	named := false
	for _, t := range r.Takeovers {
		if intent[t.Attempt] != v.Intent || t.Insert {
			continue
		}
		by[t.Attempt] = true
		named = named || slices.Contains(v.Lanes, t.Attempt)
	}
	return len(by) >= 2 && named
}

// transferred are the attempts of a run that made a transfer.
func transferred(r HandlerRun) map[string]bool {
	moved := map[string]bool{}
	for _, t := range r.Transfers {
		moved[t.Attempt] = true
	}
	return moved
}

// intents maps each attempt of a run to its intent.
func intents(r HandlerRun) map[string]string {
	intent := map[string]string{}
	for _, a := range r.Attempts {
		intent[a.ID] = a.Intent
	}
	return intent
}

// lostClaimWentOn reports whether an attempt of the violation's intent
// whose row another attempt took while it still ran made a transfer, and
// the attempt that took it made one too: the first went on with a
// claim no longer its own, its completion's owner not checked (or its
// changes not read), where it should have rolled its transfer back.
func lostClaimWentOn(r HandlerRun, v Violation) bool {
	moved := transferred(r)
	intent := intents(r)
	// Taken while the first still ran (TakenLive): it went on after the
	// takeover. A claim taken from an attempt that had ended (a crash, a
	// key kept too short a time) is their causes' story.
	for _, t := range r.TakenLive {
		if t.From != t.Attempt && intent[t.From] == v.Intent && intent[t.Attempt] == v.Intent && moved[t.From] && moved[t.Attempt] {
			return true
		}
	}
	return false
}

// replacedClaim reports whether an attempt of the violation made another
// attempt's row of its key its own with an INSERT (HandlerTakeover.Insert).
func replacedClaim(r HandlerRun, v Violation) bool {
	for _, t := range r.Takeovers {
		if t.Insert && slices.Contains(v.Lanes, t.Attempt) {
			return true
		}
	}
	return false
}

// paidThenCrashed reports whether an attempt of intent crashed (never
// answered) after its transfer committed, and another attempt of it made
// a transfer too: the retry found the key not completed and did the work
// again, which a completion in the transfer's own transaction prevents.
func paidThenCrashed(r HandlerRun, intent string) bool {
	crashed := map[string]bool{}
	for _, a := range r.Attempts {
		if a.Intent == intent && !a.Answered {
			crashed[a.ID] = true
		}
	}
	var dead, other bool
	for _, t := range r.Transfers {
		for _, a := range r.Attempts {
			if a.ID == t.Attempt && a.Intent == intent {
				if crashed[a.ID] {
					dead = true
				} else {
					other = true
				}
			}
		}
	}
	return dead && other
}

// outlived reports whether a violation's attempts were sent further apart
// than the handler's published retention, itself no longer than the
// clients' retry horizon: the later one found the key expired and was
// executed anew, which a retention longer than the horizon would have
// kept (the cause is the retention, whichever rule broke).
func outlived(r HandlerRun, h History, idx []int) bool {
	if r.RetentionSeconds == nil || h.Retention <= 0 || h.Retention > LabRetryHorizon || len(idx) < 2 {
		return false
	}
	lo, hi := h.Attempts[idx[0]].SentAt, h.Attempts[idx[0]].SentAt
	for _, i := range idx[1:] {
		at := h.Attempts[i].SentAt
		if at.Before(lo) {
			lo = at
		}
		if at.After(hi) {
			hi = at
		}
	}
	return hi.Sub(lo) >= h.Retention
}

// purgedEarly reports whether a purge (HandlerRun.Purges) deleted the
// key of a violation's attempts while they ran (after the first of them
// arrived and before the last answered; by their times where the run's
// clock is not told), sooner than the published retention (or, with none
// published, the clients' retry horizon) after the first was sent: a
// later attempt came while the key was promised to be kept.
func purgedEarly(r HandlerRun, h History, idx []int) bool {
	if len(idx) < 2 {
		return false
	}
	keep := promisedKeep(r)
	keys := map[string]bool{}
	first, last := h.Attempts[idx[0]].SentAt, h.Attempts[idx[0]].SentAt
	// On the run's clock, when it is told: from the first attempt's
	// arrival to the last one's answer. Attempts of a day run in any
	// order whatever their times, so a purge by a request sent later may
	// run before a retry sent earlier.
	clocked := true
	var arrived, ended int64
	for n, i := range idx {
		a := r.Attempts[i]
		if a.Key != "" {
			keys[a.Key] = true
		}
		if at := h.Attempts[i].SentAt; at.Before(first) {
			first = at
		} else if at.After(last) {
			last = at
		}
		end := max(a.AnsweredAt, a.Arrived)
		clocked = clocked && a.Arrived > 0
		if n == 0 || a.Arrived < arrived {
			arrived = a.Arrived
		}
		ended = max(ended, end)
	}
	for _, p := range r.Purges {
		at := time.UnixMilli(p.Now).UTC()
		during := !at.Before(first) && !at.After(last)
		if clocked && p.Clock > 0 {
			during = p.Clock >= arrived && p.Clock <= ended
		}
		if p.Rows > 0 && keys[p.Key] && during && !at.Before(first) && at.Sub(first) < keep {
			return true
		}
	}
	return false
}

// releasedAnother reports whether a purge of a key of the attempts idx
// was made by an attempt that sent that very key and was refused (4xx):
// a release of another attempt's row on a refusal's path (a DELETE after
// a 422, say), not a purge of old keys, which a request makes on its way
// to its own answer.
func releasedAnother(r HandlerRun, idx []int) bool {
	keys := map[string]bool{}
	for _, i := range idx {
		if k := r.Attempts[i].Key; k != "" {
			keys[k] = true
		}
	}
	refused := map[string]string{}
	for _, a := range r.Attempts {
		if a.Answered && a.Status >= 400 && a.Status < 500 {
			refused[a.ID] = a.Key
		}
	}
	return slices.ContainsFunc(r.Purges, func(p HandlerPurge) bool {
		k, ok := refused[p.Attempt]
		return p.Rows > 0 && keys[p.Key] && ok && k == p.Key
	})
}

// promisedKeep is how long a handler promises to keep a key: its
// published retention, or, with none published, the clients' retry
// horizon.
func promisedKeep(r HandlerRun) time.Duration {
	if keep := r.retention(); keep > 0 {
		return keep
	}
	return LabRetryHorizon
}

// retention is the file's retentionSeconds as a duration, 0 when none
// is published.
func (r HandlerRun) retention() time.Duration {
	if r.RetentionSeconds != nil && *r.RetentionSeconds > 0 {
		return time.Duration(*r.RetentionSeconds * float64(time.Second))
	}
	return 0
}

// purgedBefore reports whether a purge took away the key of attempt i
// (as sent) before it answered (on the run's clock; else by the time it
// was sent), sooner than the published retention (or the clients' retry
// horizon) after that key's first attempt of the same customer.
func purgedBefore(r HandlerRun, i int) bool {
	a := r.Attempts[i]
	if a.Key == "" {
		return false
	}
	keep := promisedKeep(r).Milliseconds()
	first := a.Now
	for _, b := range r.Attempts {
		if b.Key == a.Key && b.Customer == a.Customer && b.Now < first {
			first = b.Now
		}
	}
	for _, p := range r.Purges {
		before := p.Now <= a.Now
		if p.Clock > 0 && a.AnsweredAt > 0 {
			before = p.Clock < a.AnsweredAt
		}
		if p.Rows > 0 && p.Key == a.Key && before && p.Now >= first && p.Now-first < keep {
			return true
		}
	}
	return false
}

// ignoredClaim reports whether a violation comes from a claim whose
// conflict clause threw its verdict away (HandlerRun.Ignored): for a
// second transfer or charge, an attempt of the intent whose insert was
// ignored made one, and none that made one died (a takeover after a crash
// is another story); for an answer that is not the first one's (rule 3),
// an attempt of the violation had its insert ignored and went on.
func ignoredClaim(r HandlerRun, rule Rule, v Violation) bool {
	ignored := map[string]bool{}
	for _, g := range r.Ignored {
		ignored[g.Attempt] = true
	}
	if len(ignored) == 0 {
		return false
	}
	if rule.N == RuleByteReplay.N {
		return slices.ContainsFunc(v.Lanes, func(l string) bool { return ignored[l] })
	}
	if !countsMoney(rule) {
		return false
	}
	mine := false
	for id, answered := range movers(r, v.Intent) {
		if !answered {
			return false
		}
		mine = mine || ignored[id]
	}
	return mine
}

// paidTwiceUnclaimed reports whether two attempts of intent each made a
// transfer or a charge while no attempt of it ever wrote a row of the
// handler's own tables (HandlerRun.Claims, where the lab read them): no
// claim could stop the second, crash or none. A crash between a transfer and
// its key's completion needs a key to complete (completed-apart).
func paidTwiceUnclaimed(r HandlerRun, rule Rule, intent string) bool {
	if !r.KeysRead || !countsMoney(rule) {
		return false
	}
	for _, a := range r.Attempts {
		if a.Intent == intent && slices.Contains(r.Claims, a.ID) {
			return false
		}
	}
	return len(movers(r, intent)) > 1
}

// countsMoney: the rules a second transfer or charge breaks.
func countsMoney(rule Rule) bool {
	return rule.N == RuleOneTransfer.N || rule.N == RuleOneCharge.N || rule.N == RuleConservation.N
}

// movers are the attempts of intent that made a transfer or a charge,
// each with whether it answered.
func movers(r HandlerRun, intent string) map[string]bool {
	of := answeredOf(r, intent)
	out := map[string]bool{}
	for _, t := range r.Transfers {
		if answered, ok := of[t.Attempt]; ok {
			out[t.Attempt] = answered
		}
	}
	for _, c := range r.Charges {
		if answered, ok := of[c.Attempt]; ok {
			out[c.Attempt] = answered
		}
	}
	return out
}

// answeredOf maps each attempt of intent to whether it was answered.
func answeredOf(r HandlerRun, intent string) map[string]bool {
	of := map[string]bool{}
	for _, a := range r.Attempts {
		if a.Intent == intent {
			of[a.ID] = a.Answered
		}
	}
	return of
}

// chargedAlive reports whether every attempt of intent that the payment
// network charged was answered: none crashed or threw, so a second charge
// came from a live attempt that nothing stopped before it paid.
func chargedAlive(r HandlerRun, intent string) bool {
	answered := answeredOf(r, intent)
	n := 0
	for _, c := range r.Charges {
		if ok, mine := answered[c.Attempt]; mine {
			if !ok {
				return false
			}
			n++
		}
	}
	return n > 1
}

// refusedForAnother reports whether an attempt of violation v was refused
// 422 (a different request under its key) where no request of its own
// customer under that key differed from it, but another customer's did:
// the handler compared it with that customer's row.
func refusedForAnother(r HandlerRun, v Violation) bool {
	if r.KeysScoped {
		return false // every statement on a key named its customer
	}
	for _, k := range v.Attempts {
		a := r.Attempts[k]
		if a.Status != 422 || a.Key == "" {
			continue
		}
		mine, others := false, false
		for _, b := range r.Attempts {
			if b.ID == a.ID || b.Key != a.Key || b.Body == a.Body {
				continue
			}
			if b.Customer == a.Customer {
				mine = true
			} else {
				others = true
			}
		}
		if others && !mine {
			return true
		}
	}
	return false
}

// refusedAsItself reports whether an attempt of violation v was refused
// as a different request though it sent the very bytes of an earlier one
// (sameBytesRefused).
func refusedAsItself(r HandlerRun, v Violation) bool {
	return slices.ContainsFunc(v.Attempts, func(k int) bool { return sameBytesRefused(r, k) >= 0 })
}

// sameBytesRefused is, for attempt k refused 422 (a different request
// under its key), the earlier attempt of its customer under that key
// that sent the very same bytes, where every attempt of its customer
// under that key did, and no other customer sent a request under that
// key string (whose row a lookup without the customer may have read
// instead: refusedForAnother). -1 when there is none: the 422 may be
// owed.
func sameBytesRefused(r HandlerRun, k int) int {
	a := r.Attempts[k]
	if a.Status != 422 || a.Key == "" {
		return -1
	}
	earlier := -1
	for j, b := range r.Attempts {
		if j == k || b.Key != a.Key {
			continue
		}
		if b.Customer != a.Customer && r.KeysScoped {
			continue // another customer's row, never read for this one
		}
		if b.Customer != a.Customer || b.Body != a.Body {
			return -1
		}
		if earlier < 0 && (b.Arrived < a.Arrived || a.Arrived == 0 && j < k) {
			earlier = j
		}
	}
	return earlier
}

// paidTwiceByOne reports whether one attempt of intent was charged twice
// by the network: it called pay again (a loop, a retry of the call)
// without the key that turns the second call into the first's replay.
func paidTwiceByOne(r HandlerRun, intent string) bool {
	of := answeredOf(r, intent)
	seen := map[string]bool{}
	for _, c := range r.Charges {
		if _, mine := of[c.Attempt]; mine {
			if seen[c.Attempt] {
				return true
			}
			seen[c.Attempt] = true
		}
	}
	return false
}

// networkKeyMissing reports whether the intent's second charge came from
// an attempt that paid under a claim of its own, after another attempt
// of the intent was charged, with no key given to pay or another key
// than the first charge's: every attempt that paid had claimed the key
// (its row in the handler's table was its own: a takeover, a claim made
// afresh after a release), or the network's answer to the first was lost
// (the retry rightly ran again). The claim did its part; the key given
// to pay did not.
func networkKeyMissing(r HandlerRun, intent string) bool {
	of := answeredOf(r, intent)
	var charges []HandlerCharge
	lost := false
	for _, c := range r.Charges {
		if _, mine := of[c.Attempt]; mine {
			charges = append(charges, c)
		}
	}
	for _, a := range r.Attempts {
		lost = lost || a.Intent == intent && a.PayFault == "lost"
	}
	if len(charges) < 2 {
		return false
	}
	first := charges[0].NetworkKey
	sameKey := first != ""
	for _, c := range charges[1:] {
		sameKey = sameKey && c.NetworkKey == first
	}
	if sameKey {
		return false // the network was given one key: not the key's fault
	}
	if lost {
		return true
	}
	if !r.KeysRead {
		return false
	}
	for _, c := range charges {
		if !slices.Contains(r.Claims, c.Attempt) {
			return false
		}
	}
	return true
}

// replaysNetworkFailure reports whether a was handed, as it was, the 5xx
// of an attempt of its intent whose pay the network failed: the failure
// stored as the key's answer (networkFailed says so), not a failure of a's.
func replaysNetworkFailure(r HandlerRun, a HandlerAttempt) bool {
	return a.PayFault == "" && slices.ContainsFunc(r.Attempts, func(f HandlerAttempt) bool {
		return f.PayFault != "" && f.Intent == a.Intent && f.Answered && f.Status == a.Status && f.Response == a.Response
	})
}

// networkFault says how the network failed a call to pay, in the words
// of a sentence "the network … when a1 called pay" (the Korean follows
// "결제망").
func networkFault(fault string) (string, string) {
	if fault == "lost" {
		return "charged it, and its answer was lost on the way back", "이 청구했지만 그 답이 돌아오는 길에 사라졌습니다"
	}
	return "could not be reached and charged nothing", "에 닿지 못해 아무것도 청구되지 않았습니다"
}

// unpaidTransfer notes the first transfer made for a request that the
// network never paid: no attempt of its intent was charged, nor answered
// with a charge already made (a replay under its key). A handler that
// pays after COMMIT, and crashes or meets the network down between the
// two, or that goes on when pay throws, makes one. Once a run.
func unpaidTransfer(r HandlerRun) []Note {
	intentOf := intents(r)
	paid := map[string]bool{}
	for _, c := range r.Charges {
		paid[intentOf[c.Attempt]] = true
	}
	for _, a := range r.Attempts {
		for _, p := range a.Pays {
			paid[a.Intent] = paid[a.Intent] || p.Outcome == "charged" || p.Outcome == "replayed"
		}
	}
	for _, t := range r.Transfers {
		intent, ok := intentOf[t.Attempt]
		if !ok || paid[intent] {
			continue
		}
		why, whyKo := "", ""
		if i := slices.IndexFunc(r.Attempts, func(a HandlerAttempt) bool { return a.Intent == intent && a.PayFault != "" }); i >= 0 {
			what, whatKo := networkFault(r.Attempts[i].PayFault)
			why = fmt.Sprintf("the network %s when %s called pay, yet ", what, r.Attempts[i].ID)
			whyKo = fmt.Sprintf("%s 시도가 pay를 불렀을 때 결제망%s. 그런데도 ", r.Attempts[i].ID, whatKo)
		}
		return []Note{causedNote(CauseTransferUnpaid, []string{t.Attempt},
			fmt.Sprintf("%s%s made transfer tr_%d (%s won from %s to %s), and the network was never charged for its request: the money moved in the bank, and the network never paid it",
				why, t.Attempt, t.ID, engine.GroupDigits(t.Amount), t.From, t.To),
			fmt.Sprintf("%s%s 시도가 송금을 만들었는데(tr_%d: 보내는 계좌 %s, 받는 계좌 %s, 금액 %s원), 이 요청으로 결제망에 청구된 적은 없습니다. 은행 안에서는 돈이 옮겨졌는데 결제망은 한 번도 지급하지 않았습니다.",
				whyKo, t.Attempt, t.ID, t.From, t.To, engine.GroupDigits(t.Amount)))}
	}
	return nil
}

// networkFailed notes, for a run where the network failed an attempt's
// pay (HandlerAttempt.PayFault) and no transfer was made for its
// request, what the retry met: a claim the failed attempt kept
// (claim-not-released), or that attempt's failure again
// (failure-stored). Once a run.
func networkFailed(r HandlerRun) []Note {
	i := slices.IndexFunc(r.Attempts, func(a HandlerAttempt) bool { return a.PayFault != "" })
	if i < 0 {
		return nil
	}
	failed := r.Attempts[i]
	of := answeredOf(r, failed.Intent)
	if slices.ContainsFunc(r.Transfers, func(t HandlerTransfer) bool { _, mine := of[t.Attempt]; return mine }) {
		return nil // done, or made unpaid: unpaidTransfer says so
	}
	charged := slices.ContainsFunc(r.Charges, func(c HandlerCharge) bool { _, mine := of[c.Attempt]; return mine })
	what, whatKo := networkFault(failed.PayFault)
	if !failed.Answered {
		return nil // a crash or a cut run: what its claim became is the lease's business
	}
	charge, chargeKo := "", ""
	if charged {
		charge, chargeKo = "; the network has charged for it, and no transfer was made", " 결제망은 이 요청에 청구했는데 송금은 만들어지지 않았습니다."
	}
	for _, b := range r.Attempts {
		if b.ID == failed.ID || b.Intent != failed.Intent || !b.Answered || !b.Delivered || b.Arrived > 0 && failed.AnsweredAt > 0 && b.Arrived < failed.AnsweredAt {
			continue
		}
		switch {
		case b.Status == 409:
			return []Note{causedNote(CauseClaimNotReleased, []string{failed.ID, b.ID},
				fmt.Sprintf("the network %s when %s called pay; %s answered %d and kept its claim, so its retry %s was told 409 (come back later) by a claim no one is working on%s",
					what, failed.ID, failed.ID, failed.Status, b.ID, charge),
				fmt.Sprintf("%s 시도가 pay를 불렀을 때 결제망%s. %s 시도는 %d 응답을 보내고 선점을 그대로 두어서, 재시도(%s)는 아무도 처리하지 않는 선점 때문에 409(나중에 다시 오라)를 받았습니다.%s",
					failed.ID, whatKo, failed.ID, failed.Status, b.ID, chargeKo))}
		case !Success(b.Status) && b.Status == failed.Status && b.Response == failed.Response && b.Threw == "":
			// A retry that threw answered its own 500, not the first's.
			return []Note{causedNote(CauseFailureStored, []string{failed.ID, b.ID},
				fmt.Sprintf("the network %s when %s called pay; %s answered %d, and its retry %s was handed the same %d again: the failure was kept as the key's answer%s",
					what, failed.ID, failed.ID, failed.Status, b.ID, b.Status, charge),
				fmt.Sprintf("%s 시도가 pay를 불렀을 때 결제망%s. %s 시도는 %d 응답을 보냈고, 재시도(%s)도 같은 %d 응답을 다시 받았습니다. 실패가 키의 답으로 저장되었습니다.%s",
					failed.ID, whatKo, failed.ID, failed.Status, b.ID, b.Status, chargeKo))}
		}
	}
	return nil
}

// releasedAfterCommit reports whether an attempt of intent made a
// transfer, then threw (answered 500 with an exception), and another
// attempt of intent made a transfer after it.
func releasedAfterCommit(r HandlerRun, intent string) bool {
	intentOf := intents(r)
	first := slices.IndexFunc(r.Transfers, func(t HandlerTransfer) bool { return intentOf[t.Attempt] == intent })
	if first < 0 {
		return false
	}
	by := r.Transfers[first].Attempt
	if i := slices.IndexFunc(r.Attempts, func(a HandlerAttempt) bool { return a.ID == by }); r.Attempts[i].Threw == "" {
		return false
	}
	return slices.ContainsFunc(r.Transfers[first+1:], func(t HandlerTransfer) bool { return intentOf[t.Attempt] == intent && t.Attempt != by })
}

// failureCompleted reports whether the network failed the pay of an
// attempt of intent that then answered below 500, made no transfer, and
// left a retry of the intent answered with success while no transfer of
// the intent exists: the failure was taken for the request's settled
// answer and completed the key.
func failureCompleted(r HandlerRun, intent string) bool {
	intentOf := intents(r)
	if slices.ContainsFunc(r.Transfers, func(t HandlerTransfer) bool { return intentOf[t.Attempt] == intent }) {
		return false
	}
	i := slices.IndexFunc(r.Attempts, func(a HandlerAttempt) bool {
		return a.Intent == intent && a.PayFault != "" && a.Answered && a.Status > 0 && a.Status < 500
	})
	if i < 0 {
		return false
	}
	return slices.ContainsFunc(r.Attempts, func(b HandlerAttempt) bool {
		return b.ID != r.Attempts[i].ID && b.Intent == intent && b.Answered && Success(b.Status)
	})
}

// scenarioChecks names, for the browser lab's scenarios, the grader's
// check that tests the same thing, where the diagnosis reads the check.
var scenarioChecks = map[string]string{
	"missing-key":               "missing-key",
	"repaired-body":             "repaired",
	"repaired-auth":             "repaired",
	"malformed-keys":            "malformed-keys",
	"longest-key":               "longest-key",
	"retry-three-ways":          "reordered",
	"reordered-after-answer":    "reordered",
	"another-customers-key":     "other-customer",
	"other-customer-same-body":  "other-customer",
	"refusal-then-top-up":       "refusals",
	"unknown-payee-then-opened": "refusals",
}

// midTransfer reports whether attempt g of a handler run was answered
// while another attempt under its key, one that carried the transfer (or
// whose answer was never read), was still running, on the run's clock
// (Attempt.Arrived, Attempt.Answered; never when the run did not tell).
//
// An attempt that never answered (it crashed) counts as running for ever,
// unless another attempt under the key had answered with the transfer
// before a did: the work was done, and a is answered after it, not in the
// middle of it (two retries after a crash, one of which took the claim
// over and paid).
func midTransfer(attempts []Attempt, g int) bool {
	a := attempts[g]
	if a.Answered == 0 {
		return false
	}
	done := false
	for x, c := range attempts {
		if x != g && c.Key == a.Key && c.Customer == a.Customer && c.Answered > 0 && c.Answered < a.Answered && TransferID(c.Response) != "" {
			done = true
		}
	}
	for x, b := range attempts {
		if x == g || b.Key != a.Key || b.Customer != a.Customer || b.Delivered && TransferID(b.Response) == "" || b.Arrived == 0 {
			continue
		}
		if b.Answered == 0 && done {
			continue
		}
		if b.Arrived < a.Answered && (b.Answered == 0 || a.Answered < b.Answered) {
			return true
		}
	}
	return false
}

// storedRefusals judges, for a run of a student's handler, what the
// grader's repaired check judges over HTTP (lab/grade checkRepaired): a
// request refused 400 or 401, which the contract refuses before anything
// is claimed, then repaired under the same key, is a new request and must
// be executed. A repaired request of the same intent refused with the
// refusal's status or 422 after the refusal was answered, and never paid,
// shows that the refusal was kept under the key (rule 2). A run that does
// not tell when its attempts arrived and answered is not judged so.
func storedRefusals(h History) []Violation {
	paid := map[keyID]bool{}
	for _, t := range h.Ledger {
		paid[keyID{t.Customer, t.Key}] = true
	}
	var vs []Violation
	for i, b := range h.Attempts {
		if b.Key == "" || !b.Delivered || b.Status != 400 && b.Status != 401 || b.Answered == 0 {
			continue
		}
		for j := i + 1; j < len(h.Attempts); j++ {
			f := h.Attempts[j]
			// A 401's request named no customer: its repair is the same
			// wish sent with one.
			sameCustomer := f.Customer == b.Customer || b.Status == 401 && b.Customer == ""
			// The very same request refused again is no repair: it is
			// still refused for its own fault.
			same := f.Customer == b.Customer && string(f.Body) == string(b.Body)
			if f.Key != b.Key || !sameCustomer || same || f.Intent != b.Intent || !f.Delivered || f.Arrived <= b.Answered ||
				f.Status != b.Status && f.Status != 422 || paid[keyID{f.Customer, f.Key}] {
				continue
			}
			how := "answered"
			// The lanes stand in brackets after a noun, which carries the
			// particle.
			ko := fmt.Sprintf("요청(%s)이 거절(%d)된 뒤 같은 키로 고쳐 보낸 요청(%s)이 %d 응답을 받고 결제되지 않았습니다", b.Lane, b.Status, f.Lane, f.Status)
			if string(f.Response) == string(b.Response) {
				how = "answered the refusal again,"
				ko = fmt.Sprintf("요청(%s)이 거절(%d)된 뒤 같은 키로 고쳐 보낸 요청(%s)이 같은 거절(%d)을 다시 받고 결제되지 않았습니다", b.Lane, b.Status, f.Lane, f.Status)
			}
			vs = append(vs, Violation{Rule: RuleNoSilentWrong, Intent: f.Intent, Attempts: []int{i, j}, Lanes: []string{b.Lane, f.Lane},
				Message: fmt.Sprintf("%s was refused %d, and the repaired request under the same key (%s) was %s %d and never paid: the refusal was kept under the key, so the customer's corrected request can never go through",
					b.Lane, b.Status, f.Lane, how, f.Status),
				MessageKo: ko + ". 거절이 키에 저장되어 고객이 고친 요청은 영영 실행되지 않습니다"})
			break
		}
	}
	return vs
}

// contractNotes says every answer the contract does not give, though no
// rule broke: in any scenario, a 409 without Retry-After and a transfer
// without X-Customer-ID answered with success; in the scenarios
// that test the contract's key syntax as the grader's malformed-keys and
// longest-key checks do, a malformed key must get 400 (and move nothing,
// which the rules judge), and a valid key of exactly 255 characters must
// be accepted, and its retry replayed with Idempotent-Replayed: true; in
// the retry ten minutes after a crash, a claim never settled
// (neverSettled).
func contractNotes(r HandlerRun) []Note {
	var notes []Note
	// In every scenario, as the grader notes it in every check: a 409
	// must say when to come back (Retry-After), once a run.
	for _, a := range r.Attempts {
		if a.Answered && a.Delivered && a.Status == 409 && !validRetryAfter(a.Headers) {
			notes = append(notes, causedNote(CauseNoRetryAfter, []string{a.ID},
				fmt.Sprintf("%s was answered 409 without a valid Retry-After; the contract says 409 with Retry-After: 1, so that a client knows when to come back instead of hammering the endpoint or giving up", a.ID),
				fmt.Sprintf("시도(%s)가 올바른 Retry-After 없이 409 응답을 받았습니다. 계약은 Retry-After: 1과 함께 409입니다. 그래야 클라이언트가 엔드포인트를 두드리거나 포기하지 않고 언제 다시 올지 압니다.", a.ID)))
			break
		}
	}
	// A 409 whose Retry-After asks for more than a minute: milliseconds
	// taken for seconds (the fourteenth simulated student's 1000), once a
	// run.
	for _, a := range r.Attempts {
		if a.Answered && a.Delivered && a.Status == 409 && validRetryAfter(a.Headers) {
			if n, err := strconv.Atoi(strings.TrimSpace(headerOf(a.Headers, "Retry-After"))); err == nil && n > 60 {
				notes = append(notes, causedNote(CauseRetryAfterLong, []string{a.ID},
					fmt.Sprintf("%s was answered 409 with Retry-After: %d, a wait of %s for a transfer that ends in a moment; the contract says Retry-After: 1", a.ID, n, waitWords(n, "en")),
					fmt.Sprintf("시도(%s)가 409 응답과 함께 Retry-After: %d 헤더를 받았습니다. 금방 끝나는 송금에 %s 기다리라는 뜻입니다. 계약은 Retry-After: 1입니다.", a.ID, n, waitWords(n, "ko"))))
				break
			}
		}
	}
	// A retry told 429 (or 425) while the same request ran under its key:
	// the contract says 409, once a run.
	for _, b := range r.Attempts {
		if !b.Answered || !b.Delivered || b.Status != 429 && b.Status != 425 || b.Key == "" || b.AnsweredAt == 0 {
			continue
		}
		i := slices.IndexFunc(r.Attempts, func(a HandlerAttempt) bool {
			return a.ID != b.ID && a.Customer == b.Customer && a.Key == b.Key && SameRequest([]byte(a.Body), []byte(b.Body)) &&
				a.Arrived > 0 && a.Arrived < b.AnsweredAt && (!a.Answered || a.AnsweredAt > b.AnsweredAt)
		})
		if i < 0 {
			continue
		}
		notes = append(notes, causedNote(CauseInProgressNot409, []string{r.Attempts[i].ID, b.ID},
			fmt.Sprintf("%s was answered %d while %s, the same request under its key, was still running: the contract answers 409 Conflict with Retry-After: 1 while a key is in progress", b.ID, b.Status, r.Attempts[i].ID),
			fmt.Sprintf("시도(%s)는 같은 키의 같은 요청(%s)이 아직 실행 중일 때 %d 응답을 받았습니다. 계약은 키가 처리 중인 동안 Retry-After: 1과 함께 409 Conflict로 답합니다.", b.ID, r.Attempts[i].ID, b.Status)))
		break
	}
	// A refusal without a problem+json body, once a run: the contract's
	// errors are problem details (the twelfth and thirteenth simulated
	// students' empty 422 and 409 without Content-Type passed the rung).
	for _, a := range r.Attempts {
		if !a.Answered || !a.Delivered || a.Status < 400 || a.Status >= 500 {
			continue
		}
		if mediaType(a.Headers) == "application/problem+json" && strings.TrimSpace(a.Response) != "" || replayedHeader(a.Headers) ||
			slices.ContainsFunc(r.Attempts, func(b HandlerAttempt) bool {
				// A replay of an earlier answer: what it carries is the
				// replay's business (replay-headers).
				return b.ID != a.ID && b.Key != "" && b.Key == a.Key && b.Customer == a.Customer && b.Answered && b.Status == a.Status &&
					b.Response == a.Response && b.AnsweredAt > 0 && b.AnsweredAt < a.AnsweredAt
			}) {
			continue
		}
		said, saidKo := contentTypeSaid(a.Headers)
		if strings.TrimSpace(a.Response) == "" {
			said += " and an empty body"
			saidKo += " 빈 본문으로"
		}
		notes = append(notes, causedNote(CauseRefusalNotProblem, []string{a.ID},
			fmt.Sprintf("%s was refused %d %s; the contract's errors are application/problem+json", a.ID, a.Status, said),
			fmt.Sprintf("시도(%s)가 %s %d 거절을 받았습니다. 계약의 오류는 application/problem+json입니다.", a.ID, saidKo, a.Status)))
		break
	}
	// A success without a JSON Content-Type (the fourteenth simulated
	// student's 201 with headers: {}), once a run; a replay's headers are
	// the replay's business (replay-headers).
	for _, a := range r.Attempts {
		if !a.Answered || !a.Delivered || !Success(a.Status) || replayedHeader(a.Headers) || strings.TrimSpace(a.Response) == "" {
			continue
		}
		if ct := mediaType(a.Headers); ct == "application/json" || strings.HasPrefix(ct, "application/") && strings.HasSuffix(ct, "+json") {
			continue
		}
		said, saidKo := contentTypeSaid(a.Headers)
		notes = append(notes, causedNote(CauseSuccessNotJSON, []string{a.ID},
			fmt.Sprintf("%s was answered %d %s; the contract's transfers are application/json", a.ID, a.Status, said),
			fmt.Sprintf("시도(%s)가 %s %d 응답을 받았습니다. 계약의 송금 응답은 application/json입니다.", a.ID, saidKo, a.Status)))
		break
	}
	// A success naming a transfer other than the one its attempt made
	// ("tr_undefined": the fifteenth simulated student's rows[0] read as
	// a result), once a run.
	for _, a := range r.Attempts {
		if !a.Answered || !a.Delivered || !Success(a.Status) {
			continue
		}
		i := slices.IndexFunc(r.Transfers, func(t HandlerTransfer) bool { return t.Attempt == a.ID })
		said := TransferID([]byte(a.Response))
		if i < 0 || said == "" || namesRow(said, r.Transfers[i].ID) {
			continue
		}
		notes = append(notes, causedNote(CauseTransferIDWrong, []string{a.ID},
			fmt.Sprintf("%s made transfer %d (row %d of transfers) and answered %d with transfer_id %q, which does not name it", a.ID, r.Transfers[i].ID, r.Transfers[i].ID, a.Status, said),
			fmt.Sprintf("시도(%s)는 송금(transfers의 %d번 행)을 만들고 %d 응답을 보냈는데, 응답의 transfer_id(%q)가 그 송금을 가리키지 않습니다.", a.ID, r.Transfers[i].ID, a.Status, said)))
		break
	}
	// A success whose balance_after is not the payer's balance after its
	// own transfer (the sixteenth simulated student's balance read before
	// the debit), once a run. Judged where the ledger alone explains the
	// balances (no top-up in the run).
	if i, payer, after, said, ok := wrongBalanceAfter(r); ok {
		a := r.Attempts[i]
		notes = append(notes, causedNote(CauseBalanceAfterWrong, []string{a.ID},
			fmt.Sprintf("%s answered %d with balance_after %s, but %s's balance after its transfer was %s won", a.ID, a.Status, said, payer, engine.GroupDigits(after)),
			fmt.Sprintf("시도(%s)가 보낸 %d 응답의 balance_after 값: %s. 송금 뒤 %s 계좌의 잔액은 %s원이었습니다.", a.ID, a.Status, said, payer, engine.GroupDigits(after))))
	}
	// A transfer without X-Customer-ID answered with success: the contract
	// says 401 before anything is claimed or moved (the grader notes it in
	// its missing-key check). Once a run.
	// So is any other answer below 500 (a 409 from a claim that a key
	// without its customer met): the twelfth simulated student's handler
	// without the check passed the rung so.
	for _, a := range r.Attempts {
		if a.Answered && a.Customer == "" && a.Status != 401 && a.Status < 500 {
			notes = append(notes, causedNote(CauseCustomerOptional, []string{a.ID},
				fmt.Sprintf("%s carried no X-Customer-ID and was answered %d; the contract says 401, before anything is claimed or moved", a.ID, a.Status),
				fmt.Sprintf("시도(%s)는 X-Customer-ID 없이 왔는데 %d 응답을 받았습니다. 계약은 아무것도 선점하거나 옮기기 전에 401입니다.", a.ID, a.Status)))
			break
		}
	}
	// A handler that answered 500 (it threw, or said so): once a run,
	// with what it threw. After a purge took the attempt's key away
	// within the published retention, the purge is the cause: the key's
	// row was not there to stop it.
	for i, a := range r.Attempts {
		if !a.Answered || a.Status < 500 {
			continue
		}
		// The network failed the attempt's pay: a 5xx is the contract's
		// answer to that, the network's error thrown on, or its words
		// thrown in a value of the handler's own (a string: the sixteenth
		// simulated student's, which the bench noted and the grade,
		// running without the thrown words, passed). Another error thrown
		// after the network's is the handler's own.
		if a.PayFault != "" && (a.Threw == "" || strings.HasPrefix(a.Threw, "NetworkError") || strings.Contains(a.Threw, networkFailedWords)) ||
			replaysNetworkFailure(r, a) {
			continue
		}
		en := fmt.Sprintf("%s was answered %d: the handler threw or failed, and nothing the contract serves was done", a.ID, a.Status)
		ko := fmt.Sprintf("시도(%s)가 %d 응답을 받았습니다. 핸들러가 예외를 던지거나 실패해서 계약이 처리하는 일이 아무것도 이루어지지 않았습니다.", a.ID, a.Status)
		if a.Threw != "" {
			en = fmt.Sprintf("%s was answered %d: the handler threw %s", a.ID, a.Status, a.Threw)
			ko = fmt.Sprintf("시도(%s)가 %d 응답을 받았습니다. 핸들러가 던진 예외: %s", a.ID, a.Status, threwKo(a.Threw))
		}
		if strings.HasPrefix(a.Threw, "PaymentError") && strings.Contains(a.Threw, "was first used for another payment") {
			// Another customer's payment had used the key first: the
			// network key's note says so, with its own fix (the generic
			// advice on a throw, first, sent the student elsewhere).
			if slices.ContainsFunc(sharedNetworkKeys(r), func(s sharedKey) bool { return s.lane == a.ID }) {
				continue
			}
			// Not a bug at its line: the network refused a key it had
			// seen with another payment.
			en += "; the network had seen the key passed to pay with another payment: two different payments reached pay under one key (another request under the same key went on to pay, or one key served two customers)"
			ko += " 결제망은 pay에 넘긴 키를 이미 다른 결제에서 보았습니다. 서로 다른 결제 두 건이 한 키로 pay에 왔습니다(같은 키의 다른 요청이 결제까지 갔거나, 키 하나를 두 고객이 함께 썼습니다)."
		}
		// A debit without its guard: the accounts table's CHECK refused
		// the balance below 0 (the thirteenth simulated student was sent
		// to the key's INSERT by the fix's words).
		if strings.Contains(a.Threw, "CHECK constraint failed") && strings.Contains(a.Threw, "balance") {
			en += "; the accounts table refuses a balance below 0: guard the debit (UPDATE accounts SET balance = balance - ? WHERE id = ? AND balance >= ?) and answer 402 when it changes no row"
			ko += " accounts 테이블은 0보다 작은 잔액을 거부합니다. 출금에 조건을 두고(UPDATE accounts SET balance = balance - ? WHERE id = ? AND balance >= ?) 바뀐 행이 없으면 402로 답하세요."
		}
		// The network charged it, and no transfer came of it: said, since
		// the customer paid for nothing.
		if j := slices.IndexFunc(r.Charges, func(c HandlerCharge) bool { return c.Attempt == a.ID }); j >= 0 && !transferred(r)[a.ID] {
			en += fmt.Sprintf("; the network had charged it (%s), and no transfer was made", r.Charges[j].ID)
			ko += fmt.Sprintf(" 결제망은 이 시도에 청구했는데(%s) 송금은 만들어지지 않았습니다.", r.Charges[j].ID)
		}
		cause := CauseHandlerFailed
		if purgedBefore(r, i) {
			cause = CauseKeyPurgedEarly
			en += "; a purge had deleted its key's row before the published retention ran out"
			ko += ". 공개한 보존 기간이 끝나기 전에 정리 작업이 이 키의 행을 지웠습니다."
		}
		n := causedNote(cause, []string{a.ID}, en, ko)
		if cause == CauseHandlerFailed && strings.Contains(a.Threw, "ConstraintError") {
			n.Fix += ". " + constraintIsVerdict
			n.FixKo += " " + constraintIsVerdictKo
		}
		notes = append(notes, n)
		break
	}
	// A replay of the first answer's bytes without Idempotent-Replayed:
	// true, in any scenario but the longest key's, which says its own
	// (as the grader's longest-key check does): once a run.
	if r.Scenario != "longest-key" {
		notes = append(notes, unmarkedReplay(r)...)
	}
	// A claim taken from an attempt still running: once a run.
	if t, ok := takenTooSoon(r); ok {
		notes = append(notes, causedNote(CauseLeaseTooShort, []string{t.From, t.Attempt},
			fmt.Sprintf("%s took over the row %s had written in your table %s while %s was still running: a lease shorter than a transfer takes hands a live attempt's claim to its retry", t.Attempt, t.From, t.Table, t.From),
			fmt.Sprintf("%s 시도가 %s 테이블에서 %s 시도가 쓴 행을, %s 시도가 아직 실행 중일 때 가져갔습니다. 리스가 송금에 걸리는 시간보다 짧으면 살아 있는 시도의 선점이 재시도에게 넘어갑니다.", t.Attempt, t.Table, t.From, t.From)))
	}
	notes = append(notes, refusedAsDifferent(r)...)
	notes = append(notes, refusedAsItselfNote(r)...)
	notes = append(notes, waitedAsSame(r)...)
	notes = append(notes, networkFailed(r)...)
	notes = append(notes, unpaidTransfer(r)...)
	notes = append(notes, waitedForNobody(r)...)
	notes = append(notes, claimLeftByAnswer(r)...)
	notes = append(notes, slipNotes(r)...)
	switch r.Scenario {
	case "malformed-keys":
		for _, a := range r.Attempts {
			if !a.Answered || !a.Delivered || a.Status == 400 {
				continue
			}
			why := "it is not one Structured Field string"
			if _, p := engine.ParseKey([]string{a.Key}); p != nil {
				why = p.Detail
			}
			moved, movedKo := "", ""
			if Success(a.Status) {
				moved, movedKo = ", and money may have moved", " 돈이 움직였을 수 있습니다."
			}
			notes = append(notes, causedNote(CauseKeyUnchecked, []string{a.ID},
				fmt.Sprintf("the key %s (%s) was answered %d%s; the contract says 400: %s",
					clipKey(a.Key, "bytes"), a.ID, a.Status, moved, why),
				fmt.Sprintf("키 %s(%s)에 %d 응답을 보냈습니다.%s 계약은 400입니다. 키는 큰따옴표 안의 인쇄 가능한 ASCII 1~255자로 된 Structured Field 문자열 하나여야 합니다.",
					clipKey(a.Key, "바이트"), a.ID, a.Status, movedKo)))
		}
	case "crash-then-late-retry", "crash-then-two-late-retries":
		notes = append(notes, neverSettled(r)...)
	case "longest-key":
		var first *HandlerAttempt
		for i := range r.Attempts {
			a := &r.Attempts[i]
			if !a.Answered || !a.Delivered {
				continue
			}
			if first == nil {
				first = a
				// A 5xx is the handler's failure, said once for the run
				// (handler-failed), not a refusal of the key; a 409 told to
				// the first attempt of a fresh key is a wait for no one
				// (wait-for-nobody), not about the key's length.
				if !Success(a.Status) && a.Status < 500 && !waitStatuses[a.Status] {
					notes = append(notes, causedNote(CauseLongestKeyRefused, []string{a.ID},
						fmt.Sprintf("a valid key of exactly 255 characters (%s) was answered %d; the contract allows 1 to 255 characters between the quotes (a limit that counts the quotes, or the header's bytes, refuses it)",
							a.ID, a.Status),
						fmt.Sprintf("정확히 255자인 올바른 키(%s)에 %d 응답을 보냈습니다. 계약은 따옴표 사이 1~255자를 허용합니다(따옴표나 헤더의 바이트까지 세는 한도는 이 키를 거절합니다).",
							a.ID, a.Status)))
					return notes
				}
				continue
			}
			if Success(a.Status) && a.Response == first.Response && !replayedHeader(a.Headers) &&
				SameContentType(headerOf(a.Headers, "Content-Type"), headerOf(first.Headers, "Content-Type")) {
				notes = append(notes, unmarkedNote(first.ID, a.ID))
			}
		}
	}
	return notes
}

// takenTooSoon returns the first row taken from a running attempt
// (TakenLive) by an attempt sent less than a minute after it: a claim
// taken over later than that, from an attempt stalled that long, is what
// a lease is for.
func takenTooSoon(r HandlerRun) (HandlerTakenLive, bool) {
	now := map[string]int64{}
	for _, a := range r.Attempts {
		now[a.ID] = a.Now
	}
	for _, t := range r.TakenLive {
		if now[t.Attempt]-now[t.From] < 60*1000 {
			return t, true
		}
	}
	return HandlerTakenLive{}, false
}

// waitStatuses are the answers that tell a client to come back later: the
// intent is not settled by them.
var waitStatuses = map[int]bool{409: true, 425: true, 429: true, 503: true}

// neverSettled notes, for a run where an attempt crashed (it never
// answered) and a retry of the same request came long after it (the
// crash-then-late-retry scenario's ten minutes, past any lease a handler
// should hold a claim for), that the retry was still told to wait: the
// claim the crash left is never settled (CauseNeverSettled). A retry that
// is told to wait a second after the crash is right, and not noted; so is
// one told to wait while another late retry took the claim over and got
// the answer (two retries together): the intent was settled.
//
// When the crashed attempt's transfer had committed (the money moved), the
// claim was left in progress by a completion written apart from the
// transfer's transaction: the note says so, with that cause
// (CauseCompletedApart, the in-progress rung's), since a lease would only
// let a retry pay again.
func neverSettled(r HandlerRun) []Note {
	const long = 5 * 60 * 1000 // ms
	moved := transferred(r)
	var notes []Note
	for i, a := range r.Attempts {
		if a.Answered || a.Key == "" {
			continue
		}
		late := func(b HandlerAttempt) bool {
			return b.Key == a.Key && b.Customer == a.Customer && b.Body == a.Body && b.Now-a.Now >= long && b.Answered
		}
		if slices.ContainsFunc(r.Attempts[i+1:], func(b HandlerAttempt) bool { return late(b) && !waitStatuses[b.Status] }) {
			continue // a late retry settled it
		}
		for _, b := range r.Attempts[i+1:] {
			if !late(b) || !b.Delivered {
				continue
			}
			minutes := (b.Now - a.Now) / 60000
			if moved[a.ID] {
				notes = append(notes, causedNote(CauseCompletedApart, []string{a.ID, b.ID},
					fmt.Sprintf("%s crashed after its transfer committed, with its key still in progress; the retry %s, sent %d minutes later, was answered %d: the money moved, and no retry will ever be told so",
						a.ID, b.ID, minutes, b.Status),
					fmt.Sprintf("시도(%s)가 송금을 커밋한 뒤 키가 아직 처리 중인 채로 죽었고, %d분 뒤에 보낸 재시도(%s)가 %d 응답을 받았습니다. 돈은 움직였지만 어떤 재시도도 그 사실을 듣지 못합니다.",
						a.ID, minutes, b.ID, b.Status)))
				break
			}
			// The retry wrote the dead attempt's row (a takeover ran) and
			// was told to wait all the same: the takeover left the claim
			// the dead attempt's, so the retry's own completion found
			// nothing of its own (the sixteenth simulated student's
			// takeover that set the state and forgot the owner).
			if slices.ContainsFunc(r.TakenEnded, func(t HandlerTakenLive) bool { return t.Attempt == b.ID && t.From == a.ID }) {
				notes = append(notes, causedNote(CauseTakeoverKeptOwner, []string{a.ID, b.ID},
					fmt.Sprintf("%s crashed and never answered; the retry %s, sent %d minutes later, updated the row %s left, and was answered %d all the same: the takeover did not make the claim %s's",
						a.ID, b.ID, minutes, a.ID, b.Status, b.ID),
					fmt.Sprintf("시도(%s)가 죽어 답하지 못했고, %d분 뒤에 보낸 재시도(%s)가 %s 시도가 남긴 행을 고쳤는데도 %d 응답을 받았습니다. 넘겨받기가 선점을 %s 시도의 것으로 만들지 않았습니다.",
						a.ID, minutes, b.ID, a.ID, b.Status, b.ID)))
				break
			}
			notes = append(notes, causedNote(CauseNeverSettled, []string{a.ID, b.ID},
				fmt.Sprintf("%s crashed and never answered; the retry %s, sent %d minutes later, was answered %d: the claim %s left is still in progress, and no retry will ever settle this intent",
					a.ID, b.ID, minutes, b.Status, a.ID),
				fmt.Sprintf("시도(%s)가 죽어 답하지 못했고, %d분 뒤에 보낸 재시도(%s)가 %d 응답을 받았습니다. 죽은 시도가 남긴 선점이 아직 처리 중이라 어떤 재시도도 이 의도를 끝내지 못합니다.",
					a.ID, minutes, b.ID, b.Status)))
			break
		}
	}
	return notes
}

// waitedForNobody notes the first request of a run all of whose attempts
// the handler answered with a status that says come back later (409,
// 503, …), no transfer made, while no attempt under its customer and key
// did anything else (crashed, ran on, or answered otherwise): the wait
// was for no one, and the request is never served. A catch-all around
// the key's INSERT that answers 409 makes one. Once a run.
func waitedForNobody(r HandlerRun) []Note {
	moved := transferred(r)
	waited := func(b HandlerAttempt) bool { return b.Answered && waitStatuses[b.Status] && !moved[b.ID] }
	for _, a := range r.Attempts {
		if !waited(a) {
			continue
		}
		var lanes, said []string
		mine := func(b HandlerAttempt) bool {
			return b.Intent == a.Intent || b.Key != "" && b.Key == a.Key && b.Customer == a.Customer
		}
		if !slices.ContainsFunc(r.Attempts, func(b HandlerAttempt) bool { return mine(b) && !waited(b) }) {
			for _, b := range r.Attempts {
				if b.Intent == a.Intent {
					lanes = append(lanes, b.ID)
					said = append(said, fmt.Sprintf("%s %d", b.ID, b.Status))
				}
			}
			// The error a catch went on past, if a call failed otherwise
			// than with the key's ConstraintError: what to mend first.
			past, pastKo := "", ""
			for _, b := range r.Attempts {
				if b.Intent != a.Intent {
					continue
				}
				if i := slices.IndexFunc(b.Failed, func(c HandlerCall) bool { return c.Failed != "ConstraintError" && c.Op != "rollback" }); i >= 0 {
					c := b.Failed[i]
					past = fmt.Sprintf("; %s's %s%s failed with %s (%s), and the handler went on past it", b.ID, callName(c.Op), atLine(c.Line, " at line %d"), c.Failed, c.Message)
					pastKo = fmt.Sprintf(" %s 시도의 %s%s 호출이 %s 오류(%s)로 실패했는데, 핸들러는 그 오류를 지나쳐 계속했습니다.", b.ID, atLine(c.Line, "%d번째 줄의 "), callName(c.Op), c.Failed, c.Message)
					break
				}
			}
			return []Note{causedNote(CauseWaitForNobody, lanes,
				fmt.Sprintf("every attempt of %s was told to come back later (%s), and none of them, nor any other attempt under its key, was working on it: the request is never served, however long its client retries%s",
					a.Intent, strings.Join(said, ", "), past),
				fmt.Sprintf("%s의 모든 시도가 나중에 다시 오라는 답을 받았는데(%s), 그 요청을 처리하던 시도는 그중에도, 같은 키의 다른 시도 중에도 없었습니다. 클라이언트가 아무리 재시도해도 요청은 처리되지 않습니다.%s",
					a.Intent, strings.Join(said, ", "), pastKo))}
		}
	}
	return nil
}

// claimLeftByAnswer notes a retry told to come back later (409, …)
// after an earlier attempt of the same request had answered otherwise (a
// 402, say) and while no other attempt under its key was running: the
// answering attempt left its claim in progress, and the wait is for no
// one. An attempt that crashed or threw may still hold its claim on
// purpose (the lease and claim-not-released say so): it is not counted as
// an answer. Once a run.
func claimLeftByAnswer(r HandlerRun) []Note {
	moved := transferred(r)
	for _, b := range r.Attempts {
		if !b.Answered || !waitStatuses[b.Status] || moved[b.ID] || b.Key == "" || b.Arrived == 0 {
			continue
		}
		sameKey := func(c HandlerAttempt) bool { return c.ID != b.ID && c.Customer == b.Customer && c.Key == b.Key }
		// Someone under the key may be working: one that arrived before b
		// and had not answered by then (or never did).
		if slices.ContainsFunc(r.Attempts, func(c HandlerAttempt) bool {
			return sameKey(c) && c.Arrived < b.Arrived && (!c.Answered || c.AnsweredAt == 0 || c.AnsweredAt > b.Arrived)
		}) {
			continue
		}
		i := slices.IndexFunc(r.Attempts, func(a HandlerAttempt) bool {
			return sameKey(a) && a.Answered && !waitStatuses[a.Status] && a.Status < 500 && a.AnsweredAt > 0 && a.AnsweredAt <= b.Arrived &&
				SameRequest([]byte(a.Body), []byte(b.Body))
		})
		if i < 0 {
			continue
		}
		a := r.Attempts[i]
		return []Note{causedNote(CauseClaimLeft, []string{a.ID, b.ID},
			fmt.Sprintf("%s answered %d and left its claim in progress: its retry %s, sent after that answer, was told %d (come back later) by a claim no attempt was working on",
				a.ID, a.Status, b.ID, b.Status),
			fmt.Sprintf("%s 시도는 %d 응답을 보내면서 자기 선점을 처리 중인 채로 남겼습니다. 그 답 뒤에 보낸 재시도(%s)는 아무도 처리하지 않는 선점 때문에 %d(나중에 다시 오라) 응답을 받았습니다.",
				a.ID, a.Status, b.ID, b.Status))}
	}
	return nil
}

// unmarkedReplay notes the first retry of a run answered with the bytes
// of the first outcome under its customer, key and request (a replay)
// without Idempotent-Replayed: true: a success that made its transfer, or
// a refusal a rung stores (402, 404), as the grader notes both. Two
// generic answers alike ("already processed") are no replay of the first
// answer, and are not noted.
func unmarkedReplay(r HandlerRun) []Note {
	stored := func(status int) bool { return Success(status) || status == 402 || status == 404 }
	for i, b := range r.Attempts {
		if !b.Answered || !b.Delivered || !stored(b.Status) || b.Key == "" || replayedHeader(b.Headers) || b.AnsweredAt == 0 {
			continue
		}
		// The first outcome of b's customer, key and request, by the
		// run's clock: a success from the attempt that made its transfer
		// (a generic "already processed" given twice is the same bytes
		// twice, not a replay of the first answer), or a refusal.
		first := -1
		for j, a := range r.Attempts {
			if j == i || !a.Answered || !stored(a.Status) || a.Key != b.Key || a.Customer != b.Customer ||
				!SameRequest([]byte(a.Body), []byte(b.Body)) || a.AnsweredAt == 0 || a.AnsweredAt >= b.AnsweredAt ||
				Success(a.Status) && !madeTransfer(r, a.ID) {
				continue
			}
			if first < 0 || a.AnsweredAt < r.Attempts[first].AnsweredAt {
				first = j
			}
		}
		if first < 0 {
			continue
		}
		a := r.Attempts[first]
		if a.Status != b.Status || a.Response != b.Response ||
			!SameContentType(headerOf(a.Headers, "Content-Type"), headerOf(b.Headers, "Content-Type")) {
			continue
		}
		return []Note{unmarkedNote(a.ID, b.ID)}
	}
	return nil
}

// sharedKey is a payment of one customer's that met another customer's
// key at the network, and the note that says so.
type sharedKey struct {
	lane string
	note Note
}

// sharedNetworkKeys finds the attempts whose payment the network answered
// with another customer's charge (replayed) or refused, under a key that
// customer's payment used first: the handler passed the network a key
// that is not scoped to the customer, as its key table may well be.
func sharedNetworkKeys(r HandlerRun) []sharedKey {
	byID := map[string]HandlerAttempt{}
	for _, a := range r.Attempts {
		byID[a.ID] = a
	}
	var out []sharedKey
	for _, b := range r.Attempts {
		for _, p := range b.Pays {
			if p.NetworkKey == "" || (p.Outcome != "replayed" && p.Outcome != "refused") {
				continue
			}
			i := slices.IndexFunc(r.Charges, func(c HandlerCharge) bool { return c.NetworkKey == p.NetworkKey })
			if i < 0 {
				continue
			}
			first, ok := byID[r.Charges[i].Attempt]
			if !ok || first.Customer == b.Customer {
				continue
			}
			what, whatKo := fmt.Sprintf("answered it with %s's charge %s, so %s was never charged", first.Customer, r.Charges[i].ID, b.Customer),
				fmt.Sprintf("%s의 청구(%s)로 답해서 %s에게는 한 번도 청구하지 않았습니다", first.Customer, r.Charges[i].ID, b.Customer)
			if p.Outcome == "refused" {
				what, whatKo = fmt.Sprintf("refused it as another payment, so %s's own transfer could not be paid", b.Customer),
					fmt.Sprintf("다른 결제라며 거절해서 %s의 송금은 결제될 수 없었습니다", b.Customer)
			}
			out = append(out, sharedKey{lane: b.ID, note: causedNote(CauseNetworkKeyShared, []string{first.ID, b.ID},
				fmt.Sprintf("%s's payment (%s) went to the network under the key %q, which %s's payment (%s) had used first: the network %s",
					b.Customer, b.ID, p.NetworkKey, first.Customer, first.ID, what),
				fmt.Sprintf("%s의 결제(%s)가 키(%q)를 달고 결제망에 갔는데, 이 키는 %s의 결제(%s)가 먼저 쓴 키입니다. 결제망은 %s.",
					b.Customer, b.ID, p.NetworkKey, first.Customer, first.ID, whatKo))})
			break
		}
	}
	return out
}

// causedNote is a note with its cause's words and fix (CauseOf).
func causedNote(cause string, lanes []string, message, messageKo string) Note {
	c, _ := CauseOf(cause)
	return Note{Lanes: lanes, Message: message, MessageKo: messageKo,
		Cause: c.ID, Diagnosis: c.Says, DiagnosisKo: c.SaysKo, Fix: c.Fix, FixKo: c.FixKo}
}

// unmarkedNote says that the replay of the first answer (first)
// lacks Idempotent-Replayed: true.
func unmarkedNote(first, replay string) Note {
	return causedNote(CauseReplayUnmarked, []string{first, replay},
		fmt.Sprintf("the replay %s is right but lacks the header Idempotent-Replayed: true", replay),
		fmt.Sprintf("재생(%s)은 맞지만 Idempotent-Replayed: true 헤더가 없습니다.", replay))
}

// madeTransfer reports whether the attempt wrote a transfer into the
// ledger.
func madeTransfer(r HandlerRun, id string) bool {
	for _, t := range r.Transfers {
		if t.Attempt == id {
			return true
		}
	}
	return false
}

// networkFailedWords are the words of the NetworkError the browser's
// network throws (web/lab/runner.js NETWORK_FAILED).
const networkFailedWords = "the payment network did not answer in time"

// threwAt is the line the page puts in what a handler threw: "TypeError
// at line 46: …".
var threwAt = regexp.MustCompile(`^(\w+) at line (\d+): `)

// threwKo is what a handler threw, its line said in Korean ("TypeError
// (46번째 줄): …"); the error's own name and message stay as thrown.
func threwKo(threw string) string {
	return threwAt.ReplaceAllString(threw, "${1}(${2}번째 줄): ")
}

// wrongBalanceAfter finds the first success of an attempt that made a
// transfer whose body's balance_after is not the payer's balance right
// after that transfer, worked out from the start balances and the ledger
// in its order: the attempt's index, the payer, the balance it should
// have said, what it said, and true. Where the ledger does not explain
// the end balances (a top-up in the scenario), nothing is judged.
func wrongBalanceAfter(r HandlerRun) (int, string, int64, string, bool) {
	if len(r.Transfers) == 0 || len(r.StartBalances) == 0 {
		return 0, "", 0, "", false
	}
	ts := slices.Clone(r.Transfers)
	slices.SortFunc(ts, func(a, b HandlerTransfer) int { return int(a.ID - b.ID) })
	bal := maps.Clone(r.StartBalances)
	after, payer := map[string]int64{}, map[string]string{}
	for _, t := range ts {
		bal[t.From] -= t.Amount
		bal[t.To] += t.Amount
		after[t.Attempt], payer[t.Attempt] = bal[t.From], t.From
	}
	for k, v := range r.EndBalances {
		if bal[k] != v {
			return 0, "", 0, "", false
		}
	}
	for i, a := range r.Attempts {
		want, made := after[a.ID]
		if !made || !a.Answered || !a.Delivered || !Success(a.Status) {
			continue
		}
		var body struct {
			BalanceAfter *json.Number `json:"balance_after"`
		}
		d := json.NewDecoder(strings.NewReader(a.Response))
		d.UseNumber()
		if d.Decode(&body) != nil || body.BalanceAfter == nil {
			continue
		}
		if n, err := body.BalanceAfter.Int64(); err != nil || n != want {
			return i, payer[a.ID], want, body.BalanceAfter.String(), true
		}
	}
	return 0, "", 0, "", false
}

// mediaType is an answer's Content-Type without its parameters, in
// lower case ("" for none).
func mediaType(headers map[string]string) string {
	return strings.ToLower(strings.TrimSpace(strings.SplitN(headerOf(headers, "Content-Type"), ";", 2)[0]))
}

// contentTypeSaid says an answer's Content-Type as the notes say it, in
// English and in Korean.
func contentTypeSaid(headers map[string]string) (string, string) {
	ct := headerOf(headers, "Content-Type")
	if ct == "" {
		return "with no Content-Type", "Content-Type 없이"
	}
	return fmt.Sprintf("with Content-Type %q", ct), fmt.Sprintf("Content-Type(%q) 형식으로", ct)
}

// namesRow reports whether a transfer_id names row id: its last run of
// digits is the row's id ("tr_7", "7", "T-7").
func namesRow(said string, id int64) bool {
	end := len(said)
	for end > 0 && (said[end-1] < '0' || said[end-1] > '9') {
		end--
	}
	start := end
	for start > 0 && said[start-1] >= '0' && said[start-1] <= '9' {
		start--
	}
	return start < end && said[start:end] == strconv.FormatInt(id, 10)
}

// waitWords says n seconds as a reader counts them: "1,000 s (about 17
// minutes)".
func waitWords(n int, lang string) string {
	min := (n + 30) / 60
	if lang == "ko" {
		return fmt.Sprintf("%s초(약 %d분)", engine.GroupDigits(int64(n)), min)
	}
	return fmt.Sprintf("%s s (about %d minutes)", engine.GroupDigits(int64(n)), min)
}

// validRetryAfter reports whether headers hold one Retry-After in a form
// RFC 9110 allows: a number of seconds, or an HTTP date (the name in any
// case).
func validRetryAfter(headers map[string]string) bool {
	for k, v := range headers {
		if !strings.EqualFold(k, "Retry-After") {
			continue
		}
		t := strings.TrimSpace(v)
		if t != "" && strings.Trim(t, "0123456789") == "" {
			return true
		}
		_, err := time.Parse(time.RFC1123, t)
		return err == nil
	}
	return false
}

// replayedHeader reports whether headers say Idempotent-Replayed: true,
// the name in any case.
func replayedHeader(headers map[string]string) bool {
	return strings.EqualFold(strings.TrimSpace(headerOf(headers, "Idempotent-Replayed")), "true")
}

// headerOf returns the value of the header name in a handler's answer,
// whatever case the handler wrote its name in; "" when it has none.
func headerOf(headers map[string]string, name string) string {
	for k, v := range headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// clipKey says a long header by its start, its end and its length in
// bytes (unit: "bytes", "바이트"). The end is kept: in the malformed keys,
// a closing quote there or not is the point.
func clipKey(s, unit string) string {
	if len(s) <= 40 {
		return s
	}
	r := []rune(s)
	if len(r) <= 40 {
		return s
	}
	return fmt.Sprintf("%s…%s (%d %s)", string(r[:20]), string(r[len(r)-4:]), len(s), unit)
}

// fingerprintCause tells, as the grader's reordered check does, which
// fingerprint refused a retry (idx[1]) of the same request (idx[0])
// written another way:
// when the retry whose body differs from the first only in its spaces was
// refused, the fingerprint hashes the raw bytes; when only retries with
// their members reordered were, it keeps their order. "" when the run
// sent no re-spaced retry after an answered first request.
func fingerprintCause(attempts []Attempt, idx []int) string {
	// Only a retry refused as a different request (422) is the
	// fingerprint's doing: a replay that differs is the stored answer's,
	// and a 409 for every repeat says nothing of a fingerprint.
	if len(idx) < 2 || attempts[idx[1]].Status != 422 {
		return ""
	}
	first := attempts[idx[0]]
	if !Success(first.Status) {
		return ""
	}
	sent := false
	for _, a := range attempts {
		if a.Lane == first.Lane || a.Key != first.Key || a.Customer != first.Customer || a.Intent != first.Intent || !a.Delivered {
			continue
		}
		if bytes.Equal(a.Body, first.Body) || !sameSpacedApart(a.Body, first.Body) {
			continue
		}
		sent = true
		if a.Status == 422 {
			return CauseRawBytes
		}
	}
	if !sent {
		// Only a reordered copy was refused: the order counted, and
		// nothing tells raw bytes from an unsorted parse.
		if b := attempts[idx[1]]; !bytes.Equal(b.Body, first.Body) && !sameSpacedApart(b.Body, first.Body) {
			return CauseReorderedRefused
		}
		return ""
	}
	return CauseOrderSensitive
}

// refusedAsDifferent notes a request refused 422 as a different one while
// it is the same as an earlier one under its key (its members reordered or
// re-spaced), sent before that one was answered: rule 3 judges only
// retries sent after an answer, so the wrong refusal would go unsaid. The
// fix is the fingerprint's (the answer owed there, 409, is the
// in-progress rung's to teach).
func refusedAsDifferent(r HandlerRun) []Note {
	for _, b := range r.Attempts {
		if !b.Answered || !b.Delivered || b.Status != 422 || b.Key == "" || b.Arrived == 0 {
			continue
		}
		for _, a := range r.Attempts {
			if a.ID == b.ID || a.Key != b.Key || a.Customer != b.Customer || a.Arrived == 0 || a.Arrived >= b.Arrived ||
				(a.AnsweredAt != 0 && a.AnsweredAt < b.Arrived) || a.Body == b.Body || !SameRequest([]byte(a.Body), []byte(b.Body)) {
				continue
			}
			id := CauseReorderedRefused
			if sameSpacedApart([]byte(a.Body), []byte(b.Body)) {
				id = CauseRawBytes
			}
			return []Note{causedNote(id, []string{a.ID, b.ID},
				fmt.Sprintf("%s was refused 422 as a different request, though it is %s's request with its body written another way, sent while %s was still running: a fingerprint of the canonical body knows it for the same request", b.ID, a.ID, a.ID),
				fmt.Sprintf("시도(%s)가 다른 요청이라며 422로 거절당했습니다. 하지만 본문만 다르게 쓴 시도(%s)의 같은 요청이고, 시도(%s)가 아직 실행 중일 때 왔습니다. 정규화한 본문의 지문이라면 같은 요청임을 알아봅니다.", b.ID, a.ID, a.ID))}
		}
	}
	return nil
}

// refusedAsItselfNote notes a request refused 422 as a different one
// though it sent the very bytes of an earlier attempt of its customer
// under the same key (sameBytesRefused): whether it came while that one
// ran or after its answer, no rule judges a 422 (it is no replay), so the
// wrong refusal would go unsaid. Once a run.
func refusedAsItselfNote(r HandlerRun) []Note {
	for k, b := range r.Attempts {
		if !b.Answered || !b.Delivered {
			continue
		}
		if j := sameBytesRefused(r, k); j >= 0 {
			a := r.Attempts[j]
			return []Note{causedNote(CauseFingerprintUnstable, []string{a.ID, b.ID},
				fmt.Sprintf("%s sent the very bytes of %s's request, under the same key and from the same customer, and was refused 422 as a different request: the fingerprints of two attempts of one request compared as different", b.ID, a.ID),
				fmt.Sprintf("시도(%s)는 %s 시도와 바이트까지 같은 요청을 같은 키, 같은 고객으로 보냈는데 다른 요청이라며 422로 거절당했습니다. 한 요청의 두 시도의 지문이 비교에서 다르게 나왔습니다.", b.ID, a.ID))}
		}
	}
	return nil
}

// waitedAsSame notes a different request told 409 under a key that
// another request held, still running: the contract answers a different
// request 422, whatever the first one's state, since no retry of it can
// ever succeed (the mirror of refusedAsDifferent). Once a run.
func waitedAsSame(r HandlerRun) []Note {
	for _, b := range r.Attempts {
		if !b.Answered || !b.Delivered || b.Status != 409 || b.Key == "" || b.AnsweredAt == 0 {
			continue
		}
		for _, a := range r.Attempts {
			if a.ID == b.ID || a.Key != b.Key || a.Customer != b.Customer || a.Arrived == 0 || a.Arrived > b.AnsweredAt ||
				(a.AnsweredAt != 0 && a.AnsweredAt < b.AnsweredAt) || SameRequest([]byte(a.Body), []byte(b.Body)) || !mayHold(a) {
				continue
			}
			return []Note{causedNote(CauseStateBeforeFingerprint, []string{a.ID, b.ID},
				fmt.Sprintf("%s was answered 409 (come back later) while %s held its key, though %s's request is not %s's (%s against %s): no retry of it can ever succeed under that key, and the contract answers it 422 at once",
					b.ID, a.ID, b.ID, a.ID, compact([]byte(b.Body)), compact([]byte(a.Body))),
				fmt.Sprintf("시도(%s)는 %s 시도가 키를 쥐고 있는 동안 409(나중에 다시 오라)를 받았습니다. 하지만 두 요청의 본문이 다릅니다(이 시도: %s, 키를 쥔 시도: %s). 그 키로는 몇 번을 다시 보내도 성공할 수 없으니, 계약은 곧바로 422로 답합니다.",
					b.ID, a.ID, compact([]byte(b.Body)), compact([]byte(a.Body))))}
		}
	}
	return nil
}

// mayHold reports whether an attempt may have held its key: one that
// never answered may, one answered otherwise only if its answer binds the
// key (bindsKey).
func mayHold(a HandlerAttempt) bool { return !a.Answered || bindsKey(a.Status) }

// sameSpacedApart reports whether two JSON texts differ only in the
// whitespace between their tokens.
func sameSpacedApart(a, b []byte) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

// slipNotes says the slips no rule sees (HandlerAttempt's Unawaited,
// LeftOpen, Dropped), each kind once a run, at the first attempt that
// made it: a handler that leaves out an await, answers before COMMIT or
// reads with db.run often passes the first scenarios by luck, and its
// effects (a charge with no transfer, a 201 with no transfer) would
// otherwise be put down to a later rung.
func slipNotes(r HandlerRun) []Note {
	var notes []Note
	var unawaited, open, dropped, inTx, unreturned, unscoped, writeRead bool
	for _, a := range r.Attempts {
		if len(a.Unscoped) > 0 && !unscoped {
			unscoped = true
			c := a.Unscoped[0]
			notes = append(notes, causedNote(CauseWhereMissing, []string{a.ID},
				fmt.Sprintf("%s ran an UPDATE or a DELETE with no WHERE%s: it changed every row of its table, other keys' and other customers' rows too", a.ID, atLine(c.Line, " at line %d")),
				fmt.Sprintf("시도(%s)가 %sWHERE 없는 UPDATE나 DELETE를 실행했습니다. 다른 키와 다른 고객의 행까지, 테이블의 모든 행이 바뀌었습니다.", a.ID, atLine(c.Line, "%d번째 줄에서 "))))
		}
		if len(a.WriteRead) > 0 && !writeRead {
			writeRead = true
			c := a.WriteRead[0]
			none := "undefined" // db.get's answer; db.all's is []
			if c.Op == "all" {
				none = "[]"
			}
			notes = append(notes, causedNote(CauseWriteRead, []string{a.ID},
				fmt.Sprintf("%s gave a statement that writes to %s%s: without RETURNING it answers no row (%s), whatever it changed, so changes cannot be read from it", a.ID, callName(c.Op), atLine(c.Line, " at line %d"), none),
				fmt.Sprintf("시도(%s)가 %s쓰기 쿼리를 %s에 넘겼습니다. RETURNING이 없으면 무엇을 바꿨든 행을 하나도 돌려주지 않으므로(%s) 거기서 changes를 읽을 수 없습니다.", a.ID, atLine(c.Line, "%d번째 줄에서 "), callName(c.Op), none)))
		}
		if len(a.Unreturned) > 0 && !unreturned {
			unreturned = true
			c := a.Unreturned[0]
			notes = append(notes, causedNote(CauseAnswerUnreturned, []string{a.ID},
				fmt.Sprintf("%s built the refusal lab.problem(%d, …)%s and never returned it: the code went on past it and answered %d", a.ID, c.Status, atLine(c.Line, " at line %d"), a.Status),
				fmt.Sprintf("시도(%s)가 %s거절 응답 lab.problem(%d, …)을 만들고 돌려주지 않았습니다. 코드는 그 거절을 지나쳐 계속했고 %d 응답을 보냈습니다.", a.ID, atLine(c.Line, "%d번째 줄에서 "), c.Status, a.Status)))
		}
		if len(a.PaidInTx) > 0 && !inTx {
			inTx = true
			c := a.PaidInTx[0]
			notes = append(notes, causedNote(CausePaidInTx, []string{a.ID},
				fmt.Sprintf("%s called pay%s with its transaction open: the network's charge is made in another system, where no ROLLBACK reaches, and the transaction's lock was held while the network answered, so any other attempt that wanted to write had to wait", a.ID, atLine(c.Line, " at line %d")),
				fmt.Sprintf("시도(%s)가 트랜잭션을 연 채로 %spay를 불렀습니다. 결제망의 청구는 다른 곳의 일이라 ROLLBACK으로 되돌릴 수 없고, 결제망이 답하는 동안 트랜잭션의 잠금이 잡혀 있어서 쓰기를 하려는 다른 시도는 기다려야 했습니다.", a.ID, atLine(c.Line, "%d번째 줄에서 "))))
		}
		if len(a.Unawaited) > 0 && !unawaited {
			unawaited = true
			// The call whose error no one saw is what went wrong, if any.
			c := a.Unawaited[0]
			if i := slices.IndexFunc(a.Unawaited, func(c HandlerCall) bool { return c.Failed != "" }); i >= 0 {
				c = a.Unawaited[i]
			}
			what := fmt.Sprintf("%s ended while its %s%s was still waiting to run, so that statement never ran", a.ID, callName(c.Op), atLine(c.Line, " at line %d"))
			whatKo := fmt.Sprintf("시도(%s)는 %s%s 호출이 실행되기도 전에 끝나서, 그 호출은 실행되지 않았습니다.", a.ID, atLine(c.Line, "%d번째 줄의 "), callName(c.Op))
			switch {
			case c.Failed != "":
				what = fmt.Sprintf("%s called %s%s without await: the call failed with %s, and nothing saw it, so the code after it went on as if it had succeeded", a.ID, callName(c.Op), atLine(c.Line, " at line %d"), c.Failed)
				whatKo = fmt.Sprintf("시도(%s)가 %s%s 호출을 await 없이 했습니다. 호출은 %s 오류로 실패했지만 아무도 보지 못해서, 뒤의 코드는 성공한 것처럼 계속했습니다.", a.ID, atLine(c.Line, "%d번째 줄의 "), callName(c.Op), c.Failed)
			case c.Ran:
				err, errKo := "a ConstraintError", "ConstraintError"
				if c.Op == "pay" {
					err, errKo = "a network that failed", "결제망 장애"
				}
				what = fmt.Sprintf("%s called %s%s without await: the call ran, but nothing waited for its answer, so the code after it went on without knowing how it ended, and an error from it (%s) would never be seen", a.ID, callName(c.Op), atLine(c.Line, " at line %d"), err)
				whatKo = fmt.Sprintf("시도(%s)가 %s%s 호출을 await 없이 했습니다. 호출은 실행되었지만 아무도 그 결과를 기다리지 않았습니다. 그래서 뒤의 코드는 호출이 어떻게 끝났는지 모른 채 계속했고, 호출이 오류를 내도(%s 등) 아무도 보지 못합니다.", a.ID, atLine(c.Line, "%d번째 줄의 "), callName(c.Op), errKo)
			}
			notes = append(notes, causedNote(CauseNotAwaited, []string{a.ID}, what, whatKo))
		}
		if a.LeftOpen && !open {
			open = true
			notes = append(notes, causedNote(CauseLeftOpen, []string{a.ID},
				fmt.Sprintf("%s answered %d with its transaction still open: the lab rolled it back, so nothing it wrote after BEGIN was kept", a.ID, a.Status),
				fmt.Sprintf("시도(%s)는 트랜잭션을 연 채로 %d 응답을 보냈습니다. 랩이 그 트랜잭션을 롤백했으니 BEGIN 뒤에 쓴 것은 하나도 남지 않았습니다.", a.ID, a.Status)))
		}
		if len(a.Dropped) > 0 && !dropped {
			dropped = true
			c := a.Dropped[0]
			notes = append(notes, causedNote(CauseRowsDropped, []string{a.ID},
				fmt.Sprintf("%s gave a SELECT to db.run%s: run answers only {changes, lastInsertRowid}, so the rows it read were thrown away, and the answer is an object whether a row was found or not", a.ID, atLine(c.Line, " at line %d")),
				fmt.Sprintf("시도(%s)가 %sSELECT를 db.run에 넘겼습니다. run은 {changes, lastInsertRowid}만 돌려주므로 읽은 행은 버려지고, 행을 찾았든 못 찾았든 돌려받는 값은 객체입니다.", a.ID, atLine(c.Line, "%d번째 줄에서 "))))
		}
	}
	return notes
}

// slipOf returns the cause of the first slip among the attempts of lanes
// (slipNotes' causes, an answer before COMMIT first), or "".
func slipOf(r HandlerRun, lanes []string) string {
	cause := ""
	for _, a := range r.Attempts {
		if !slices.Contains(lanes, a.ID) {
			continue
		}
		switch {
		case a.LeftOpen:
			return CauseLeftOpen
		case len(a.Unreturned) > 0:
			return CauseAnswerUnreturned
		case slices.ContainsFunc(a.Unawaited, func(c HandlerCall) bool { return !c.Ran || c.Failed != "" }) && cause == "":
			// A call that never ran changed what the attempt did, and so did
			// one whose error no one saw; one that ran in its turn and
			// succeeded, unawaited, did not (what the network's failure
			// then made is transfer-unpaid's to say).
			cause = CauseNotAwaited
		case len(a.Unscoped) > 0:
			// Every row changed: whatever the answers look like after it
			// (a claim taken, another customer's key) is its doing.
			return CauseWhereMissing
		case len(a.WriteRead) > 0 && cause == "":
			cause = CauseWriteRead
		case len(a.Dropped) > 0 && cause == "":
			cause = CauseRowsDropped
		}
	}
	return cause
}

// callName is a call as the student wrote it: pay, or db.run and its
// kin.
func callName(op string) string {
	if op == "pay" {
		return "pay"
	}
	return "db." + op
}

// atLine is format with the line, or "" when the line is not known (0).
func atLine(line int, format string) string {
	if line <= 0 {
		return ""
	}
	return fmt.Sprintf(format, line)
}
