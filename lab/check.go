// Package lab drives the engine from outside and judges it: histories of
// client attempts (history.go), the invariant checker and its eight rules
// (check.go), the day of traffic (day.go: its params and limits; daygen.go
// generates it, dayfile.go reads and writes its file), its replay through
// the engine (replay.go), tally (tally.go) and picture (picture*.go). The
// lessons' benches are in lab/scenario and the black-box HTTP grader in
// lab/grade. The package imports no net/http, so the browser's
// WebAssembly module can carry it.
package lab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Rule is one invariant.
type Rule struct {
	N     int    `json:"n"`
	Name  string `json:"name"`
	Title string `json:"title"`
	// TitleKo is the title in Korean, for the Korean pages and pictures.
	TitleKo string `json:"title_ko"`
}

// TitleIn is the rule's title in lang ("ko"), else in English.
func (r Rule) TitleIn(lang string) string {
	if lang == "ko" && r.TitleKo != "" {
		return r.TitleKo
	}
	return r.Title
}

// The eight rules of the invariant checker.
var (
	RuleOneTransfer   = Rule{1, "one-transfer-per-intent", "at most one transfer per intent", "의도 하나에 송금은 최대 한 번"}
	RuleNoSilentWrong = Rule{2, "different-request-never-succeeds", "a request that differs from the keyed one is never answered with success", "키를 처음 쓴 요청과 다른 요청에는 절대 성공으로 답하지 않는다"}
	RuleByteReplay    = Rule{3, "replay-is-byte-identical", "a replay is byte-identical to the first response", "재생은 첫 응답과 바이트 하나까지 같다"}
	RuleNothingLost   = Rule{4, "completion-has-its-transfer", "a key that reports completion has its transfer", "완료를 알린 키에는 그 송금이 있다"}
	RuleOwnResponses  = Rule{5, "customers-see-own-responses", "no customer ever receives another customer's response", "어떤 고객도 다른 고객의 응답을 받지 않는다"}
	RuleConservation  = Rule{6, "money-conserved", "money is conserved", "돈의 총합은 변하지 않는다"}
	RuleRetention     = Rule{7, "retention-outlasts-retries", "the retention outlasts the clients' retry horizon", "보존 기간이 클라이언트의 재시도 기간보다 길다"}
	// RuleOneCharge is rule 1 at the payment processor, whose charges no
	// rollback of the ledger undoes. It is judged only when the history
	// holds the processor's records (History.Charges).
	RuleOneCharge = Rule{8, "one-charge-per-intent", "the processor charges each intent at most once", "결제 대행사는 의도 하나에 최대 한 번 청구한다"}
)

// Rules returns the rules in order, a fresh copy for each caller.
func Rules() []Rule { return slices.Clone(rules) }

var rules = []Rule{RuleOneTransfer, RuleNoSilentWrong, RuleByteReplay, RuleNothingLost, RuleOwnResponses, RuleConservation, RuleRetention, RuleOneCharge}

// Violation is one broken rule with the shortest history that shows it.
type Violation struct {
	Rule    Rule   `json:"rule"`
	Message string `json:"message"`
	// MessageKo is Message in Korean, for the Korean pages.
	MessageKo string `json:"message_ko,omitempty"`
	// Attempts are the indexes into History.Attempts that show the failure,
	// in the order they were sent; Lanes are their lanes.
	Attempts []int    `json:"attempts,omitempty"`
	Lanes    []string `json:"lanes,omitempty"`
	Intent   string   `json:"intent,omitempty"`
	// Cause names the mistake behind the failure when the checker can tell
	// (MemoryGuardLock or MemoryGuardCache: the attempts reached different
	// servers, each guarded only by its own memory).
	Cause string `json:"cause,omitempty"`
	// Diagnosis says the cause in words and Fix what to change, with
	// their Korean (lab.CauseOf; without a cause, Fix is the rule's usual
	// one): set on the runs of a student's handler (JudgeHandlerRun), as
	// the grader sets them on its failures.
	Diagnosis   string `json:"diagnosis,omitempty"`
	DiagnosisKo string `json:"diagnosis_ko,omitempty"`
	Fix         string `json:"fix,omitempty"`
	FixKo       string `json:"fix_ko,omitempty"`
}

// RuleResult is one rule's verdict.
type RuleResult struct {
	Rule       Rule        `json:"rule"`
	OK         bool        `json:"ok"`
	Violations []Violation `json:"violations,omitempty"`
	// Unknown is set where the run cannot tell whether the rule holds
	// (rule 7 for a handler that publishes no retention: nothing broke,
	// but no client can rely on a retention nobody published); Why says
	// so in words.
	Unknown bool   `json:"unknown,omitempty"`
	Why     string `json:"why,omitempty"`
	WhyKo   string `json:"why_ko,omitempty"`
}

// Summary counts what happened.
type Summary struct {
	Intents    int   `json:"intents"`
	Attempts   int   `json:"attempts"`
	Transfers  int   `json:"transfers"`
	Duplicates int   `json:"duplicates"`
	PaidTwice  int64 `json:"paid_twice"`
	Conflicts  int   `json:"conflicts_409"`
	Mismatches int   `json:"mismatches_422"`
	Replays    int   `json:"replays"`
	Lost       int   `json:"lost_responses"`
	Moved      int64 `json:"money_moved"`
	// Unpaid counts the intents that never got a transfer at all: a wish
	// the server refused, or one whose every answer said "no".
	Unpaid int `json:"unpaid_intents"`
}

// Report is the checker's verdict on a history.
type Report struct {
	OK      bool         `json:"ok"`
	Summary Summary      `json:"summary"`
	Rules   []RuleResult `json:"rules"`
	// Notes are answers that break no rule but are not what the lab
	// contract says (a malformed key answered 201): the grader's notes,
	// which make a check warn. Only a run of a student's handler has them
	// (JudgeHandlerRun).
	Notes []Note `json:"notes,omitempty"`
}

// Note is one answer the contract does not give, in both languages.
// Cause, Diagnosis and Fix (with their Korean) are set when the note has a
// cause of its own (CauseNeverSettled), as a violation's are.
type Note struct {
	Lanes       []string `json:"lanes"`
	Message     string   `json:"message"`
	MessageKo   string   `json:"message_ko"`
	Cause       string   `json:"cause,omitempty"`
	Diagnosis   string   `json:"diagnosis,omitempty"`
	DiagnosisKo string   `json:"diagnosis_ko,omitempty"`
	Fix         string   `json:"fix,omitempty"`
	FixKo       string   `json:"fix_ko,omitempty"`
}

// Rule returns the result for one rule.
func (r Report) Rule(rule Rule) RuleResult {
	for _, rr := range r.Rules {
		if rr.Rule.N == rule.N {
			return rr
		}
	}
	return RuleResult{Rule: rule, OK: true}
}

// Broken lists the names of the broken rules.
func (r Report) Broken() []string {
	var out []string
	for _, rr := range r.Rules {
		if !rr.OK {
			out = append(out, rr.Rule.Name)
		}
	}
	return out
}

// maxViolations caps how many examples a rule reports.
const maxViolations = 5

// Check judges a history against every rule. It is a pure function.
func Check(h History) Report {
	c := newChecker(h)
	rep := Report{OK: true, Summary: c.summary()}
	for _, rule := range rules {
		vs := c.check(rule)
		if len(vs) > maxViolations {
			vs = vs[:maxViolations]
		}
		rr := RuleResult{Rule: rule, OK: len(vs) == 0, Violations: vs}
		rep.OK = rep.OK && rr.OK
		rep.Rules = append(rep.Rules, rr)
	}
	return rep
}

type keyID struct{ customer, key string }

type checker struct {
	h            History
	intents      map[string]Intent
	order        []string            // intent ids in first-seen order
	transfers    map[string]int      // per intent
	charges      map[string][]string // the processor's charge ids per intent
	byTransferID map[string]LedgerTransfer
	keyIntent    map[keyID]string // (customer, key) → intent of its first attempt
	firstByKey   map[keyID]int    // (customer, key) → index of the attempt the key is bound to
	// Indexes of the attempts per (customer, key) and per intent, in order,
	// so that a day of 100,000 attempts is checked in linear time.
	byKey       map[keyID][]int
	byKeyString map[string][]int // the key alone, across customers
	byIntent    map[string][]int
}

func newChecker(h History) *checker {
	c := &checker{h: h, intents: map[string]Intent{}, transfers: map[string]int{}, charges: map[string][]string{},
		byTransferID: map[string]LedgerTransfer{}, keyIntent: map[keyID]string{}, firstByKey: map[keyID]int{},
		byKey: map[keyID][]int{}, byKeyString: map[string][]int{}, byIntent: map[string][]int{}}
	for _, in := range h.Intents {
		c.intents[in.ID] = in
		c.order = append(c.order, in.ID)
	}
	for i, a := range h.Attempts {
		if _, ok := c.intents[a.Intent]; !ok {
			c.intents[a.Intent] = Intent{ID: a.Intent, Customer: a.Customer}
			c.order = append(c.order, a.Intent)
		}
		c.byIntent[a.Intent] = append(c.byIntent[a.Intent], i)
		if a.Key == "" {
			continue
		}
		k := keyID{a.Customer, a.Key}
		c.byKey[k] = append(c.byKey[k], i)
		c.byKeyString[a.Key] = append(c.byKeyString[a.Key], i)
		// A request refused 400 or 401 was answered before anything was
		// claimed (the contract's order), so it is not the keyed request
		// later ones are compared with: the repaired one is.
		if _, ok := c.keyIntent[k]; !ok && a.Status != 400 && a.Status != 401 {
			c.keyIntent[k] = a.Intent
		}
		// Nor is any answer that binds the key to nothing (bindsKey). Two
		// different requests sent together may claim in either order, and
		// the one that claimed is the keyed one, though the other arrived
		// first.
		if _, ok := c.firstByKey[k]; !ok && bindsKey(a.Status) {
			c.firstByKey[k] = i
		}
	}
	if h.Ledger != nil {
		for _, t := range h.Ledger {
			c.byTransferID[t.ID] = t
			if t.Intent != "" {
				c.transfers[t.Intent]++
			} else if in, ok := c.keyIntent[keyID{t.Customer, t.Key}]; ok {
				c.transfers[in]++
			}
		}
	} else {
		for in, n := range h.TransfersPerIntent {
			c.transfers[in] = n
		}
	}
	for _, ch := range h.Charges {
		if ch.Intent != "" {
			c.charges[ch.Intent] = append(c.charges[ch.Intent], ch.ID)
		} else if in, ok := c.keyIntent[keyID{ch.Customer, ch.Key}]; ok {
			c.charges[in] = append(c.charges[in], ch.ID)
		}
	}
	return c
}

// bindsKey reports whether an answer with this status can come from the
// request its key is bound to: not a refusal made before anything is
// claimed (400, 401), nor word that another holds the key (409) or that it
// was used for another request (422), nor a failure (5xx: the contract
// releases a claim whose work threw). 0, no answer, may: an attempt that
// crashed may have claimed.
func bindsKey(status int) bool {
	return status != 400 && status != 401 && status != 409 && status != 422 && status < 500
}

func (c *checker) summary() Summary {
	s := Summary{Intents: len(c.intents), Attempts: len(c.h.Attempts)}
	for _, id := range c.order {
		n := c.transfers[id]
		s.Transfers += n
		if n == 0 {
			s.Unpaid++
		}
		if n > 1 {
			s.Duplicates += n - 1
			s.PaidTwice += int64(n-1) * c.intents[id].Amount
		}
		s.Moved += int64(n) * c.intents[id].Amount
	}
	if c.h.Ledger != nil {
		s.Transfers, s.Moved = len(c.h.Ledger), 0
		for _, t := range c.h.Ledger {
			s.Moved += t.Amount
		}
	}
	for _, a := range c.h.Attempts {
		switch {
		case a.Status == 409:
			s.Conflicts++
		case a.Status == 422:
			s.Mismatches++
		}
		if a.Replayed {
			s.Replays++
		}
		if !a.Delivered {
			s.Lost++
		}
	}
	return s
}

func (c *checker) attemptsOf(intent string) []int {
	return append([]int(nil), c.byIntent[intent]...)
}

func (c *checker) violation(rule Rule, intent, msg, msgKo string, attempts ...int) Violation {
	sort.Ints(attempts)
	v := Violation{Rule: rule, Message: msg, MessageKo: msgKo, Intent: intent, Attempts: attempts}
	for _, i := range attempts {
		v.Lanes = append(v.Lanes, c.h.Attempts[i].Lane)
	}
	return v
}

// memoryGuardWhy says why a memory guard let a double payment through, in
// English and in Korean.
func memoryGuardWhy(guard string) (string, string) {
	if guard == MemoryGuardCache {
		return "a key cache in one server's memory is empty on another: the retry was a cache miss there",
			"한 서버 메모리의 키 캐시는 다른 서버에서는 비어 있습니다: 재시도는 그 서버에서 캐시 미스였습니다"
	}
	return "a lock held in one server's memory does not stop another server: each took its own",
		"한 서버 메모리에 잡은 잠금은 다른 서버를 막지 못합니다: 서버마다 자기 잠금을 잡았습니다"
}

// serversOf lists, in order, the servers an intent's attempts reached.
func (c *checker) serversOf(intent string) []int {
	seen := map[int]bool{}
	var out []int
	for _, i := range c.byIntent[intent] {
		if s := c.h.Attempts[i].Server; s > 0 && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Ints(out)
	return out
}

func joinInts(ns []int, sep string) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, sep)
}

// final reports whether an answer is the request's outcome (as opposed to
// "not yet" or "try again").
func final(status int) bool { return Success(status) || status == 402 || status == 404 }

func (c *checker) check(rule Rule) []Violation {
	var vs []Violation
	switch rule {
	case RuleOneTransfer:
		for _, id := range c.order {
			if n := c.transfers[id]; n > 1 {
				in := c.intents[id]
				// Counted as the tally counts it: the payments after the
				// first, and the won they moved.
				extra, won := n-1, int64(n-1)*in.Amount
				v := c.violation(rule, id, fmt.Sprintf("%s (intent %s: %s won sent %d times from %s to %s)",
					ExtraPayments(extra, won, "en"), id, GroupDigits(in.Amount), n, in.From, in.To),
					fmt.Sprintf("%s (의도 %s: %s 계좌에서 %s 계좌로 %s원이 %d번 지급됨)", ExtraPayments(extra, won, "ko"), id, in.From, in.To, GroupDigits(in.Amount), n),
					c.attemptsOf(id)...)
				if servers := c.serversOf(id); len(servers) > 1 && c.h.MemoryGuard != "" {
					v.Cause = c.h.MemoryGuard
					why, whyKo := memoryGuardWhy(c.h.MemoryGuard)
					v.Message += "; its attempts reached servers " + joinInts(servers, " and ") + ", and " + why
					v.MessageKo += "; 시도들이 서버 " + joinInts(servers, ", ") + "에 닿았고, " + whyKo
				}
				vs = append(vs, v)
			}
		}
	case RuleOneCharge:
		for _, id := range c.order {
			ids := c.charges[id]
			if len(ids) < 2 {
				continue
			}
			in := c.intents[id]
			n, paid := len(ids), c.transfers[id]
			// Fewer transfers than charges: a charge whose ledger work was
			// rolled back, or never done, stays charged. As many: each
			// attempt paid on its own, and the ledger holds them all.
			why := "each attempt that paid called the processor on its own"
			whyKo := "결제한 시도마다 따로 결제 대행사를 불렀습니다"
			if paid < n {
				why = "a charge stands even where the ledger's work was rolled back or never done"
				whyKo = "원장 쪽 작업이 롤백되거나 끝나지 않아도 결제 대행사의 청구는 되돌려지지 않습니다"
			}
			vs = append(vs, c.violation(rule, id,
				fmt.Sprintf("the processor charged intent %s %d times (%s won each: %s), while the ledger shows %d %s: %s; only a key passed downstream makes it answer a repeated call with its first charge",
					id, n, GroupDigits(in.Amount), strings.Join(ids, ", "), paid, Plural(paid, "transfer", "transfers"), why),
				fmt.Sprintf("결제 대행사가 의도 %s에 %d번 청구했습니다(건당 %s원: %s). 원장의 송금은 %d건입니다: %s. 키를 결제 대행사에 넘겨야 같은 호출에 첫 청구로 답합니다",
					id, n, GroupDigits(in.Amount), strings.Join(ids, ", "), paid, whyKo),
				c.attemptsOf(id)...))
		}
	case RuleNoSilentWrong:
		for i, a := range c.h.Attempts {
			if a.Key == "" || !Success(a.Status) {
				continue
			}
			first := c.firstByKey[keyID{a.Customer, a.Key}]
			if first == i || SameRequest(c.h.Attempts[first].Body, a.Body) {
				continue
			}
			was, now := compact(c.h.Attempts[first].Body), compact(a.Body)
			msg := fmt.Sprintf("key %q was first used for %s, then for %s, and the second was answered %d instead of 422", a.Key, was, now, a.Status)
			msgKo := fmt.Sprintf("%q 키는 처음 %s에 쓰였고 다음에 %s에 쓰였는데, 두 번째 요청이 422가 아니라 %d 응답을 받았습니다", a.Key, was, now, a.Status)
			if c.h.Keyless {
				msg = fmt.Sprintf("a request sent as %s was sent again as %s and answered %d instead of 422: the server keeps no key table, so nothing compared the two", was, now, a.Status)
				msgKo = fmt.Sprintf("%s 요청 다음에 %s 요청이 다시 왔는데 422가 아니라 %d 응답을 받았습니다: 서버에 키 테이블이 없어 둘을 비교한 것이 없습니다", was, now, a.Status)
			}
			vs = append(vs, c.violation(rule, a.Intent, msg, msgKo, first, i))
		}
	case RuleByteReplay:
		for i, a := range c.h.Attempts {
			if a.Key == "" || !final(a.Status) {
				continue
			}
			first := c.firstFinal(keyID{a.Customer, a.Key}, a.Body)
			if first < 0 || first == i {
				continue
			}
			if f := c.h.Attempts[first]; f.Status != a.Status || !bytes.Equal(f.Response, a.Response) || !SameContentType(f.ContentType, a.ContentType) {
				// Without a key table the retry is, to the server, the
				// same request sent again: it is said in those terms.
				retry, retryKo := fmt.Sprintf("a retry under key %q", a.Key), fmt.Sprintf("%q 키로 보낸 재시도가", a.Key)
				if c.h.Keyless {
					retry, retryKo = "the same request sent again", "다시 보낸 같은 요청이"
				} else if a.Arrived != 0 && f.Answered != 0 && a.Arrived < f.Answered {
					// It arrived before the first was answered: not a retry
					// of that answer, the same request at the same time.
					retry, retryKo = fmt.Sprintf("the same request sent at the same time under key %q (%s)", a.Key, a.Lane),
						fmt.Sprintf("%q 키로 동시에 보낸 같은 요청(%s)이", a.Key, a.Lane)
				}
				if Success(f.Status) && TransferID(f.Response) == "" && TransferID(a.Response) != "" {
					// The first answer names no transfer and this one is the
					// transfer's own: the first is the one that departs.
					vs = append(vs, c.violation(rule, a.Intent, fmt.Sprintf("under key %q the attempt that answered first (%s) got %d %s, an answer that names no transfer, while %s got the transfer's own answer %d %s: every attempt must get the transfer's answer",
						a.Key, f.Lane, f.Status, compact(f.Response), a.Lane, a.Status, compact(a.Response)),
						fmt.Sprintf("%q 키로 서버가 먼저 답한 시도(%s)는 송금을 가리키지 않는 응답(%d %s)을 받았고, %s 시도는 그 송금의 응답(%d %s)을 받았습니다: 모든 시도가 송금의 응답을 받아야 합니다",
							a.Key, f.Lane, f.Status, compact(f.Response), a.Lane, a.Status, compact(a.Response)), first, i))
					continue
				}
				vs = append(vs, c.violation(rule, a.Intent, fmt.Sprintf("%s got %d %s, not what the attempt that answered first (%s) got: %s",
					retry, a.Status, compact(a.Response), f.Lane, replayDifference(diffWordsEn, f, a)),
					fmt.Sprintf("%s 응답(%d %s)을 받았습니다. 서버가 먼저 답한 시도(%s)가 받은 것과 다릅니다: %s",
						retryKo, a.Status, compact(a.Response), f.Lane, replayDifference(diffWordsKo, f, a)), first, i))
			}
		}
		// A retry refused (a 409, a 422: no final answer, so not compared
		// above) although it arrived after an attempt of the same intent,
		// customer and key had been answered 2xx: the retry must get that
		// answer. A simultaneous retry refused 409 is right; this one came
		// after the answer. Judged only where the history orders arrivals
		// and answers (Attempt.Arrived).
		for i, a := range c.h.Attempts {
			if a.Key == "" || a.Arrived == 0 || !a.Delivered || a.Status < 400 || a.Status >= 500 || final(a.Status) {
				continue
			}
			for j, f := range c.h.Attempts {
				if j == i || f.Intent != a.Intent || f.Customer != a.Customer || f.Key != a.Key ||
					!Success(f.Status) || f.Answered == 0 || f.Answered >= a.Arrived {
					continue
				}
				vs = append(vs, c.violation(rule, a.Intent, fmt.Sprintf("a retry under key %q (%s) came after %s had been answered %d, and was refused %d %s: it must get that answer",
					a.Key, a.Lane, f.Lane, f.Status, a.Status, compact(a.Response)),
					fmt.Sprintf("%q 키로 보낸 재시도(%s)는 %s 시도가 %d 응답을 받은 뒤에 왔는데 응답(%d %s)으로 거절되었습니다: %s 시도가 받은 %d 응답을 그대로 받아야 합니다",
						a.Key, a.Lane, f.Lane, f.Status, a.Status, compact(a.Response), f.Lane, f.Status), j, i))
				break
			}
		}
	case RuleNothingLost:
		for _, id := range c.order {
			if c.transfers[id] > 0 {
				continue
			}
			for _, i := range c.attemptsOf(id) {
				if a := c.h.Attempts[i]; Success(a.Status) && c.ownsKey(a) {
					vs = append(vs, c.violation(rule, id, fmt.Sprintf("intent %s was answered %d %s, but no transfer exists for it",
						id, a.Status, compact(a.Response)),
						fmt.Sprintf("의도 %s에 응답(%d %s)을 보냈지만, 그 송금은 없습니다", id, a.Status, compact(a.Response)), c.attemptsOf(id)...))
					break
				}
			}
		}
	case RuleOwnResponses:
		for i, a := range c.h.Attempts {
			if !Success(a.Status) || a.Key == "" {
				continue
			}
			if other, j := c.answeredFromOthers(i); other != "" {
				msg := fmt.Sprintf("customer %s was answered %d %s for key %q, an answer that belongs to customer %s",
					a.Customer, a.Status, compact(a.Response), a.Key, other)
				msgKo := fmt.Sprintf("%s 고객이 %q 키로 응답(%d %s)을 받았는데, 이는 %s 고객의 응답입니다",
					a.Customer, a.Key, a.Status, compact(a.Response), other)
				if c.h.Keyless {
					msg = fmt.Sprintf("customer %s was answered %d %s, an answer that belongs to customer %s", a.Customer, a.Status, compact(a.Response), other)
					msgKo = fmt.Sprintf("%s 고객이 응답(%d %s)을 받았는데, 이는 %s 고객의 응답입니다", a.Customer, a.Status, compact(a.Response), other)
				} else if !namesTransfer(a.Response) {
					// A generic "already processed": not the other's bytes, but
					// an answer about the other's request, and no transfer of
					// this customer's was made.
					msg = fmt.Sprintf("customer %s was answered %d %s for key %q: an answer about customer %s's request under that key, while %s's own transfer was never made",
						a.Customer, a.Status, compact(a.Response), a.Key, other, a.Customer)
					msgKo = fmt.Sprintf("%s 고객이 %q 키로 응답(%d %s)을 받았습니다. 그 키로 온 %s 고객의 요청에 대한 답이며, %s 고객 자신의 송금은 이루어지지 않았습니다",
						a.Customer, a.Key, a.Status, compact(a.Response), other, a.Customer)
				}
				vs = append(vs, c.violation(rule, a.Intent, msg, msgKo, j, i))
			}
		}
		// A customer's own request refused (a 409, a 422), never paid,
		// under a key another customer had sent first: another customer's
		// key must never stop it (the grader's other-customer check).
		// Judged only where the history orders arrivals (Attempt.Arrived).
		for i, a := range c.h.Attempts {
			if a.Key == "" || a.Arrived == 0 || !a.Delivered || !Refusal(a.Status) || a.Status >= 500 || c.transfers[a.Intent] > 0 {
				continue
			}
			for j, f := range c.h.Attempts {
				// A request that named no customer is nobody's (refused 401):
				// what it left under the key is rule 2's story, not this one.
				if j == i || f.Customer == a.Customer || f.Customer == "" || f.Key != a.Key || f.Arrived == 0 || f.Arrived >= a.Arrived {
					continue
				}
				// Refused alike, the other customer's request decided
				// nothing: the endpoint refuses everyone so (a 409 to every
				// request), which is not about whose key it is.
				if f.Delivered && f.Status == a.Status && bytes.Equal(f.Response, a.Response) {
					continue
				}
				vs = append(vs, c.violation(rule, a.Intent, fmt.Sprintf("customer %s's own request under key %q was refused %d %s and never paid, after customer %s had sent that key: another customer's key must never stop a customer's own request",
					a.Customer, a.Key, a.Status, compact(a.Response), f.Customer),
					fmt.Sprintf("%s 고객이 %q 키로 보낸 요청이 응답(%d %s)으로 거절되어 처리되지 않았습니다. %s 고객이 먼저 그 키를 보냈기 때문입니다: 다른 고객의 키가 고객 자신의 요청을 막아서는 안 됩니다",
						a.Customer, a.Key, a.Status, compact(a.Response), f.Customer), j, i))
				break
			}
		}
	case RuleConservation:
		start, end := total(c.h.StartBalances), total(c.h.EndBalances)
		if start != end {
			vs = append(vs, Violation{Rule: rule, Message: fmt.Sprintf("balances summed to %d won before and %d after", start, end),
				MessageKo: fmt.Sprintf("잔액 합계가 처음에는 %d원, 나중에는 %d원입니다", start, end)})
		}
		for acct, v := range c.h.EndBalances {
			if v < 0 {
				vs = append(vs, Violation{Rule: rule, Message: fmt.Sprintf("account %s ended at %d won", acct, v),
					MessageKo: fmt.Sprintf("계좌 %s의 잔액이 %d원으로 끝났습니다", acct, v)})
			}
		}
		if c.h.Ledger != nil && len(c.h.StartBalances) > 0 {
			want := map[string]int64{}
			for k, v := range c.h.StartBalances {
				want[k] = v
			}
			for _, t := range c.h.Ledger {
				want[t.From] -= t.Amount
				want[t.To] += t.Amount
			}
			for acct, v := range c.h.EndBalances {
				if want[acct] != v {
					vs = append(vs, Violation{Rule: rule, Message: fmt.Sprintf("account %s holds %s won, but its ledger says %s", acct, GroupDigits(v), GroupDigits(want[acct])),
						MessageKo: fmt.Sprintf("계좌 %s에는 %s원이 있지만, 원장대로라면 %s원이어야 합니다", acct, GroupDigits(v), GroupDigits(want[acct]))})
				}
			}
		}
		sort.Slice(vs, func(i, j int) bool { return vs[i].Message < vs[j].Message })
	case RuleRetention:
		if r := c.h.Retention; RetentionTooShort(r, c.h.RetryHorizon) {
			vs = append(vs, Violation{Rule: rule, Message: fmt.Sprintf("keys are kept %s, but clients retry for up to %s, and the retention must be longer: a late retry becomes a new transfer",
				r, c.h.RetryHorizon),
				MessageKo: fmt.Sprintf("키는 %s 동안 보존되지만 클라이언트는 최대 %s 동안 재시도합니다. 보존 기간이 더 길어야 합니다: 늦은 재시도는 새 송금이 됩니다",
					r, c.h.RetryHorizon)})
		}
	}
	return vs
}

// RetentionTooShort reports whether a published retention (0: forever)
// breaks rule 7 against a retry horizon. The retention must be longer than
// the horizon, not equal to it: a retry at the very end of the horizon, sent
// by a client whose clock runs a little ahead of the server's, must still
// find its key.
func RetentionTooShort(retention, horizon time.Duration) bool {
	return retention > 0 && retention <= horizon
}

// firstFinal is the attempt under k with the same request whose final
// answer came first: by the answers' order where the history tells it
// (Attempt.Answered, the browser lab's clock), else the first to be sent.
// Two attempts racing may answer in the other order than they arrived.
func (c *checker) firstFinal(k keyID, body []byte) int {
	first := -1
	for _, i := range c.byKey[k] {
		a := c.h.Attempts[i]
		if !final(a.Status) || !SameRequest(a.Body, body) {
			continue
		}
		if first < 0 {
			first = i
			continue
		}
		if f := c.h.Attempts[first]; a.Answered > 0 && f.Answered > 0 && a.Answered < f.Answered {
			first = i
		}
	}
	return first
}

// ownsKey reports whether a's answer can be about its own intent: its key
// was first used by its own intent.
func (c *checker) ownsKey(a Attempt) bool {
	if a.Key == "" {
		return true
	}
	return c.keyIntent[keyID{a.Customer, a.Key}] == a.Intent
}

// answeredFromOthers reports whether attempt i was given an answer that
// belongs to another customer: a transfer of theirs, or a replay of a key
// they used first when this customer's intent has no transfer.
// namesTransfer reports whether an answer names a transfer (its
// transfer_id), as a transfer's own answer does.
func namesTransfer(body []byte) bool {
	var got struct {
		TransferID string `json:"transfer_id"`
	}
	return json.Unmarshal(body, &got) == nil && got.TransferID != ""
}

func (c *checker) answeredFromOthers(i int) (string, int) {
	a := c.h.Attempts[i]
	var got struct {
		TransferID string `json:"transfer_id"`
	}
	if json.Unmarshal(a.Response, &got) == nil && got.TransferID != "" {
		if t, ok := c.byTransferID[got.TransferID]; ok && t.Customer != "" && t.Customer != a.Customer {
			return t.Customer, c.firstAttemptOf(t.Customer, a.Key, i)
		}
		if c.h.Ledger != nil {
			return "", 0
		}
	}
	if c.transfers[a.Intent] > 0 {
		return "", 0
	}
	// Without a ledger, an answer naming a transfer is another customer's
	// only if it is byte for byte what that customer was answered; an
	// answer naming no transfer at all (a generic "already processed") is
	// about the other customer's key.
	for _, j := range c.byKeyString[a.Key] {
		if j >= i {
			break
		}
		b := c.h.Attempts[j]
		if b.Customer != a.Customer && final(b.Status) && (got.TransferID == "" || bytes.Equal(b.Response, a.Response)) {
			return b.Customer, j
		}
	}
	return "", 0
}

func (c *checker) firstAttemptOf(customer, key string, fallback int) int {
	if j, ok := c.firstByKey[keyID{customer, key}]; ok {
		return j
	}
	return fallback
}

// total is the won held in all the accounts of balances.
func total(balances map[string]int64) int64 {
	var n int64
	for _, v := range balances {
		n += v
	}
	return n
}
