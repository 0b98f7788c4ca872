package lab_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/lab"
)

// handlerRunCase builds a run of a student's handler by hand: two
// attempts of one intent (alice sends bob 500) unless a case changes it.
type handlerRunCase struct {
	name   string
	change func(r *lab.HandlerRun)
	broken []string
}

const (
	body500  = `{"from":"alice","to":"bob","amount":500}`
	answer   = `{"transfer_id":"tr_1","from":"alice","to":"bob","amount":500,"balance_after":999500,"created_at":1}`
	answerTr = `{"transfer_id":"tr_2","from":"alice","to":"bob","amount":500,"balance_after":999000,"created_at":1}`
)

// keptRun is a run that keeps every rule: the first attempt paid and
// answered 201, the retry was answered the same, replayed.
func keptRun() lab.HandlerRun {
	week := 604800.0
	return lab.HandlerRun{
		Intents: []lab.Intent{{ID: "i1", Customer: "cust-1", From: "alice", To: "bob", Amount: 500}},
		Attempts: []lab.HandlerAttempt{
			{ID: "a1", Intent: "i1", Customer: "cust-1", Key: `"k-1"`, Body: body500, Answered: true, Delivered: false, Status: 201,
				Headers: map[string]string{"Content-Type": "application/json"}, Response: answer},
			{ID: "a2", Intent: "i1", Customer: "cust-1", Key: `"k-1"`, Body: body500, Answered: true, Delivered: true, Status: 201,
				Headers: map[string]string{"Content-Type": "application/json", "Idempotent-Replayed": "true"}, Response: answer},
		},
		Transfers:        []lab.HandlerTransfer{{ID: 1, From: "alice", To: "bob", Amount: 500, Attempt: "a1"}},
		Charges:          []lab.HandlerCharge{{ID: "ch_1", Attempt: "a1", Amount: 500}},
		StartBalances:    map[string]int64{"alice": 1000000, "bob": 0},
		EndBalances:      map[string]int64{"alice": 999500, "bob": 500},
		RetentionSeconds: &week,
	}
}

// refuse makes the retry a refusal.
func refuse(r *lab.HandlerRun, status int) {
	r.Attempts[1].Status, r.Attempts[1].Response = status, `{"title":"Conflict","status":`+strconv.Itoa(status)+`}`
	r.Attempts[1].Headers = map[string]string{"Content-Type": "application/problem+json"}
}

// otherCustomer makes the retry cust-2's own transfer, refused 422.
func otherCustomer(r *lab.HandlerRun) {
	r.Intents = append(r.Intents, lab.Intent{ID: "i2", Customer: "cust-2", From: "alice", To: "bob", Amount: 500})
	r.Attempts[1].Intent, r.Attempts[1].Customer = "i2", "cust-2"
	refuse(r, 422)
}

func TestJudgeHandlerRun(t *testing.T) {
	cases := []handlerRunCase{
		{name: "kept", change: func(*lab.HandlerRun) {}},
		{name: "a crash before anything moved keeps the rules", change: func(r *lab.HandlerRun) {
			r.Attempts[0].Answered, r.Attempts[0].Status, r.Attempts[0].Response = false, 0, ""
		}},
		{name: "two transfers and two charges", change: func(r *lab.HandlerRun) {
			r.Transfers = append(r.Transfers, lab.HandlerTransfer{ID: 2, From: "alice", To: "bob", Amount: 500, Attempt: "a2"})
			r.Charges = append(r.Charges, lab.HandlerCharge{ID: "ch_2", Attempt: "a2", Amount: 500})
			r.EndBalances = map[string]int64{"alice": 999000, "bob": 1000}
			r.Attempts[1].Response, r.Attempts[1].Headers = answerTr, nil
		}, broken: []string{lab.RuleOneTransfer.Name, lab.RuleByteReplay.Name, lab.RuleOneCharge.Name}},
		{name: "a corrected amount answered 201", change: func(r *lab.HandlerRun) {
			r.Attempts[1].Body = `{"from":"alice","to":"bob","amount":700}`
		}, broken: []string{lab.RuleNoSilentWrong.Name}},
		{name: "a replay rendered again", change: func(r *lab.HandlerRun) {
			r.Attempts[1].Response = `{"transfer_id":"tr_1","from":"alice","to":"bob","amount":500,"balance_after":999500,"created_at":2}`
		}, broken: []string{lab.RuleByteReplay.Name}},
		{name: "completed without its transfer", change: func(r *lab.HandlerRun) {
			r.Transfers, r.Charges = nil, nil
			r.EndBalances = r.StartBalances
		}, broken: []string{lab.RuleNothingLost.Name}},
		{name: "another customer's answer", change: func(r *lab.HandlerRun) {
			r.Intents = append(r.Intents, lab.Intent{ID: "i2", Customer: "cust-2", From: "carol", To: "bob", Amount: 500})
			r.Attempts[1].Intent, r.Attempts[1].Customer = "i2", "cust-2"
			r.Attempts[1].Body = `{"from":"carol","to":"bob","amount":500}`
		}, broken: []string{lab.RuleNothingLost.Name, lab.RuleOwnResponses.Name}},
		{name: "money appears", change: func(r *lab.HandlerRun) {
			r.EndBalances = map[string]int64{"alice": 1000000, "bob": 500}
		}, broken: []string{lab.RuleConservation.Name}},
		{name: "an hour's retention", change: func(r *lab.HandlerRun) {
			hour := 3600.0
			r.RetentionSeconds = &hour
		}, broken: []string{lab.RuleRetention.Name}},
		{name: "no retention published is not judged", change: func(r *lab.HandlerRun) {
			r.RetentionSeconds = nil
		}},
		{name: "the network charged twice, the ledger once", change: func(r *lab.HandlerRun) {
			r.Charges = append(r.Charges, lab.HandlerCharge{ID: "ch_2", Attempt: "a2", Amount: 500})
		}, broken: []string{lab.RuleOneCharge.Name}},
		{name: "a replayed charge is one charge", change: func(r *lab.HandlerRun) {
			r.Charges[0].NetworkKey = "cust-1:k-1"
		}}, // A retry refused 409 or 422: after the first answered 201 it is a
		// rule-3 break; while the first was still running (a simultaneous
		// retry) it is right; and a history that orders nothing is not
		// judged so.
		{name: "a retry refused after the first answered 2xx", change: func(r *lab.HandlerRun) {
			refuse(r, 409)
			r.Attempts[0].Arrived, r.Attempts[0].AnsweredAt, r.Attempts[1].Arrived, r.Attempts[1].AnsweredAt = 1, 2, 3, 4
		}, broken: []string{lab.RuleByteReplay.Name}},
		{name: "a reordered retry refused 422 after the first answered", change: func(r *lab.HandlerRun) {
			refuse(r, 422)
			r.Attempts[1].Body = `{"amount":500,"to":"bob","from":"alice"}`
			r.Attempts[0].Arrived, r.Attempts[0].AnsweredAt, r.Attempts[1].Arrived, r.Attempts[1].AnsweredAt = 1, 2, 3, 4
		}, broken: []string{lab.RuleByteReplay.Name}},
		{name: "a simultaneous retry refused 409", change: func(r *lab.HandlerRun) {
			refuse(r, 409)
			r.Attempts[0].Arrived, r.Attempts[1].Arrived, r.Attempts[1].AnsweredAt, r.Attempts[0].AnsweredAt = 1, 2, 3, 4
		}},
		{name: "a refused retry with no clock is not judged", change: func(r *lab.HandlerRun) { refuse(r, 409) }}, // Another customer's own request under the same key string, refused
		// 422 and never paid, is a rule-5 break; with no clock, not judged.
		{name: "another customer's request refused for the key", change: func(r *lab.HandlerRun) {
			otherCustomer(r)
			r.Attempts[0].Arrived, r.Attempts[0].AnsweredAt, r.Attempts[1].Arrived, r.Attempts[1].AnsweredAt = 1, 2, 3, 4
		}, broken: []string{lab.RuleOwnResponses.Name}},
		{name: "another customer's refusal with no clock is not judged", change: otherCustomer},
		// Both customers refused alike: the endpoint refuses everyone so,
		// whose key it was decided nothing (rule 5 holds; the wait for
		// no one is a note's).
		{name: "both customers refused alike", change: func(r *lab.HandlerRun) {
			otherCustomer(r)
			refuse(r, 409)
			r.Attempts[0].Status, r.Attempts[0].Response, r.Attempts[0].Headers = r.Attempts[1].Status, r.Attempts[1].Response, r.Attempts[1].Headers
			r.Attempts[0].Delivered = true
			r.Transfers, r.Charges, r.EndBalances = nil, nil, r.StartBalances
			r.Attempts[0].Arrived, r.Attempts[0].AnsweredAt, r.Attempts[1].Arrived, r.Attempts[1].AnsweredAt = 1, 2, 3, 4
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := keptRun()
			c.change(&r)
			rep := lab.JudgeHandlerRun(r)
			assert.ElementsMatch(t, c.broken, rep.Broken(), "%+v", rep.Rules)
			assert.Equal(t, len(c.broken) == 0, rep.OK)
		})
	}
}

// TestJudgeHandlerRunSaysTheCause holds the judge of a student's handler
// to the grader's diagnosis (lab.Diagnose, lab.CauseOf): each broken rule
// carries the cause the evidence shows, in English and Korean, with its
// fix, or the rule's usual fix where the evidence does not tell.
func TestJudgeHandlerRunSaysTheCause(t *testing.T) {
	clocked := func(r *lab.HandlerRun) {
		r.Attempts[0].Arrived, r.Attempts[0].AnsweredAt, r.Attempts[1].Arrived, r.Attempts[1].AnsweredAt = 1, 2, 3, 4
	}
	cases := []struct {
		name     string
		scenario string
		change   func(r *lab.HandlerRun)
		rule     lab.Rule
		cause    string
	}{
		{"a corrected amount answered 201", "corrected-amount", func(r *lab.HandlerRun) {
			r.Attempts[1].Body = `{"from":"alice","to":"bob","amount":700}`
		}, lab.RuleNoSilentWrong, lab.CauseNoFingerprint},
		// naive: the corrected request is a transfer of its own, tr_2.
		{"a corrected amount executed anew", "corrected-amount", func(r *lab.HandlerRun) {
			r.Attempts[1].Body = `{"from":"alice","to":"bob","amount":700}`
			r.Attempts[1].Response = `{"transfer_id":"tr_2","from":"alice","to":"bob","amount":700,"balance_after":998800,"created_at":1}`
			r.Transfers = append(r.Transfers, lab.HandlerTransfer{ID: 2, From: "alice", To: "bob", Amount: 700, Attempt: "a2"})
			r.EndBalances = map[string]int64{"alice": 998800, "bob": 1200}
		}, lab.RuleNoSilentWrong, lab.CauseKeyIgnored},
		{"a replay rendered again", "retry-after-lost-answer", func(r *lab.HandlerRun) {
			r.Attempts[1].Response = `{"transfer_id":"tr_1","from":"alice","to":"bob","amount":500,"balance_after":999500,"created_at":2}`
		}, lab.RuleByteReplay, lab.CauseRecomputed},
		{"a replay with another status", "retry-after-lost-answer", func(r *lab.HandlerRun) {
			r.Attempts[1].Status = 200
		}, lab.RuleByteReplay, lab.CauseReplayStatus},
		{"a generic answer to a retry after the first was answered", "retry-after-lost-answer", func(r *lab.HandlerRun) {
			clocked(r)
			r.Attempts[1].Response = `{"status":"already processed"}`
		}, lab.RuleByteReplay, lab.CauseGenericReplay},
		{"a generic answer while the first still ran", "simultaneous-retries", func(r *lab.HandlerRun) {
			r.Attempts[0].Arrived, r.Attempts[1].Arrived, r.Attempts[1].AnsweredAt, r.Attempts[0].AnsweredAt = 1, 2, 3, 4
			r.Attempts[1].Response = `{"status":"already processed"}`
		}, lab.RuleByteReplay, lab.CauseCompletedFirst},
		{"another customer's request refused for the key", "another-customers-key", func(r *lab.HandlerRun) {
			otherCustomer(r)
			clocked(r)
		}, lab.RuleOwnResponses, lab.CauseGlobalKeys},
		{"a refusal not stored, paid on the retry", "refusal-then-top-up", func(r *lab.HandlerRun) {
			r.Attempts[0].Status, r.Attempts[0].Response = 402, `{"title":"Insufficient funds","status":402}`
			r.Attempts[0].Delivered = true
			r.Attempts[1].Headers = map[string]string{"Content-Type": "application/json"}
		}, lab.RuleByteReplay, lab.CauseRefusalNotStored},
		{"a request without a key, paid twice on its retry", "missing-key", func(r *lab.HandlerRun) {
			r.Attempts[0].Key, r.Attempts[1].Key = "", ""
			r.Attempts[1].Headers, r.Attempts[1].Response = nil, answerTr
			r.Transfers = append(r.Transfers, lab.HandlerTransfer{ID: 2, From: "alice", To: "bob", Amount: 500, Attempt: "a2"})
			r.Charges = append(r.Charges, lab.HandlerCharge{ID: "ch_2", Attempt: "a2", Amount: 500})
			r.EndBalances = map[string]int64{"alice": 999000, "bob": 1000}
		}, lab.RuleOneTransfer, lab.CauseKeyOptional},
		{"money appears: no cause, the rule's fix", "simultaneous-retries", func(r *lab.HandlerRun) {
			r.EndBalances = map[string]int64{"alice": 1000000, "bob": 500}
		}, lab.RuleConservation, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := keptRun()
			r.Scenario = c.scenario
			c.change(&r)
			rr := lab.JudgeHandlerRun(r).Rule(c.rule)
			if !assert.False(t, rr.OK, "rule %d broke", c.rule.N) || !assert.NotEmpty(t, rr.Violations) {
				return
			}
			v := rr.Violations[0]
			assert.Equal(t, c.cause, v.Cause, "%s", v.Message)
			if c.cause == "" {
				assert.Empty(t, v.Diagnosis)
				assert.Equal(t, lab.RuleFix(c.rule.Name), v.Fix)
				assert.Equal(t, lab.RuleFixKo(c.rule.Name), v.FixKo)
				return
			}
			want, ok := lab.CauseOf(c.cause)
			assert.True(t, ok)
			assert.Equal(t, []string{want.Says, want.SaysKo, want.Fix, want.FixKo}, []string{v.Diagnosis, v.DiagnosisKo, v.Fix, v.FixKo})
		})
	}
}

// TestJudgeHandlerRunRepairedRequest holds the browser's judge to the
// grader's repaired check: a request refused 400 and repaired under the
// same key must be executed; refused again (the 400 kept under the key)
// it breaks rule 2, stored-validation-refusal; executed, it breaks none.
func TestJudgeHandlerRunRepairedRequest(t *testing.T) {
	t.Run("body", func(t *testing.T) {
		judgeRepaired(t, "repaired-body", 400, `{"title":"Bad Request","status":400}`, func(a *lab.HandlerAttempt) {
			a.Body = `{"from":"alice","to":"bob","amount":"500"}`
		})
	})
	// The 401 half: the first request named no customer; its repair is
	// the same transfer with one.
	t.Run("auth", func(t *testing.T) {
		judgeRepaired(t, "repaired-auth", 401, `{"title":"Unauthorized","status":401}`, func(a *lab.HandlerAttempt) { a.Customer = "" })
	})
}

func judgeRepaired(t *testing.T, scenario string, refused int, refusal string, bad func(*lab.HandlerAttempt)) {
	repaired := func(status int, response string, paid bool) lab.HandlerRun {
		r := keptRun()
		r.Scenario = scenario
		bad(&r.Attempts[0])
		r.Attempts[0].Status = refused
		r.Attempts[0].Response, r.Attempts[0].Delivered = refusal, true
		r.Attempts[0].Arrived, r.Attempts[0].AnsweredAt, r.Attempts[1].Arrived, r.Attempts[1].AnsweredAt = 1, 2, 3, 4
		r.Attempts[1].Status, r.Attempts[1].Response, r.Attempts[1].Headers = status, response, nil
		r.Transfers[0].Attempt, r.Charges[0].Attempt = "a2", "a2"
		if !paid {
			r.Transfers, r.Charges, r.EndBalances = nil, nil, r.StartBalances
		}
		return r
	}
	ok := lab.JudgeHandlerRun(repaired(201, answer, true))
	assert.True(t, ok.OK, "%+v", ok.Rules)

	for _, c := range []struct {
		status   int
		response string
	}{{refused, refusal}, {422, `{"title":"Unprocessable","status":422}`}} {
		rep := lab.JudgeHandlerRun(repaired(c.status, c.response, false))
		assert.Equal(t, []string{lab.RuleNoSilentWrong.Name}, rep.Broken(), "repaired request answered %d", c.status)
		rr := rep.Rule(lab.RuleNoSilentWrong)
		if assert.Len(t, rr.Violations, 1) {
			v := rr.Violations[0]
			assert.Equal(t, lab.CauseStoredRefusal, v.Cause)
			assert.Equal(t, []string{"a1", "a2"}, v.Lanes)
			assert.Contains(t, v.Message, "the refusal was kept under the key")
			assert.Contains(t, v.MessageKo, "거절이 키에 저장되어")
		}
	}
	// Without the run's clock nothing says the repaired request came
	// after the refusal's answer: not judged.
	r := repaired(refused, refusal, false)
	r.Attempts[1].Arrived = 0
	assert.True(t, lab.JudgeHandlerRun(r).OK)
	// The very same bad request sent again is refused again, rightly.
	r = repaired(refused, refusal, false)
	bad(&r.Attempts[1])
	assert.True(t, lab.JudgeHandlerRun(r).OK, "%v", lab.JudgeHandlerRun(r).Broken())
}

// Every cause and every rule's fix is said in both languages.
func TestCausesSpeakKorean(t *testing.T) {
	hangul := func(s string) bool {
		for _, r := range s {
			if r >= 0xAC00 && r <= 0xD7A3 {
				return true
			}
		}
		return false
	}
	for _, id := range []string{lab.CauseKeyOptional, lab.CauseGlobalKeys, lab.CauseRawBytes, lab.CauseOrderSensitive,
		lab.CauseNoFingerprint, lab.CauseKeyIgnored, lab.CauseCompletedFirst, lab.CauseGenericReplay, lab.CauseRecomputed, lab.CauseReplayStatus,
		lab.CauseRefusalNotStored, lab.CauseRefusalRerendered, lab.CauseStoredRefusal, lab.CauseInProcessLock, lab.CauseShortRetention, lab.CauseNeverSettled, lab.CausePaidUnclaimed, lab.CauseCompletedApart, lab.CauseReplayUnmarked, lab.CauseNoRetryAfter, lab.CauseHandlerFailed, lab.CauseNetworkKeyShared, lab.CauseReorderedRefused, lab.CauseKeyPurgedEarly, lab.CauseClaimIgnored,
		lab.CauseTakeoverUnchecked, lab.CauseCustomerOptional, lab.CauseNotAwaited, lab.CauseLeftOpen, lab.CauseRowsDropped,
		lab.CauseFailureCompleted, lab.CauseCompletedKeyReleased, lab.CauseRetryAfterLong, lab.CauseSuccessNotJSON, lab.CauseTransferIDWrong, lab.CauseWhereMissing, lab.CauseWriteRead, lab.CauseKeyNotUnique, lab.CauseTakeoverKeptOwner, lab.CauseBalanceAfterWrong} {
		c, ok := lab.CauseOf(id)
		if assert.True(t, ok, id) {
			assert.Equal(t, id, c.ID)
			assert.NotEmpty(t, c.Says, id)
			assert.NotEmpty(t, c.Fix, id)
			assert.True(t, hangul(c.SaysKo) && hangul(c.FixKo), "%s in Korean: %q / %q", id, c.SaysKo, c.FixKo)
		}
	}
	for _, r := range lab.Rules() {
		assert.NotEmpty(t, lab.RuleFix(r.Name), r.Name)
		assert.True(t, hangul(lab.RuleFixKo(r.Name)), "rule %s's fix in Korean", r.Name)
	}
}

// The judge ties a transfer to the intent of the attempt that inserted it
// by the attempt's customer and parsed key, and marks a replay by the
// answer's header, whatever its case.
func TestHandlerRunHistory(t *testing.T) {
	r := keptRun()
	r.Attempts[1].Headers = map[string]string{"idempotent-replayed": "true"}
	h := r.History()
	assert.Equal(t, "k-1", h.Attempts[0].Key)
	assert.True(t, h.Attempts[1].Replayed)
	assert.False(t, h.Attempts[0].Delivered)
	// The transfer names the intent of the attempt that inserted it.
	assert.Equal(t, []lab.LedgerTransfer{{ID: "tr_1", Customer: "cust-1", Key: "k-1", From: "alice", To: "bob", Amount: 500, Intent: "i1"}}, h.Ledger)
	assert.Equal(t, lab.LabRetryHorizon, h.RetryHorizon)
}

func TestHandlerHelpers(t *testing.T) {
	cases := []struct {
		name, helper, arg string
		want              any
	}{
		{"a key", "parseKey", `"k-1"`, "k-1"},
		{"a bare key", "parseKey", `k-1`, nil},
		{"two keys", "parseKey", `"a", "b"`, nil},
		{"a transfer", "parseTransfer", `{"to":"bob","from":"alice","amount":5}`, engine.TransferBody{From: "alice", To: "bob", Amount: 5}},
		{"to oneself", "parseTransfer", `{"to":"bob","from":"bob","amount":5}`, nil},
		{"canonical", "canonical", `{ "to":"bob", "from":"alice","amount":5}`, `{"amount":5,"from":"alice","to":"bob"}`},
		{"canonical of another body", "canonical", `{"b":1,"a":[true]}`, `{"a":[true],"b":1}`},
		{"canonical of no JSON", "canonical", `{`, nil},
		{"sha256", "sha256", "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, ok := lab.HandlerHelper(c.helper, c.arg)
			assert.True(t, ok)
			assert.Equal(t, c.want, v)
		})
	}
	_, ok := lab.HandlerHelper("fetch", "")
	assert.False(t, ok)
}

// TestJudgeHandlerRunContractNotes holds the browser's judge to the
// grader's malformed-keys and longest-key checks: answers that break no
// rule but are not the contract's are noted, in both languages, and the
// contract's own answers are not.
func TestJudgeHandlerRunContractNotes(t *testing.T) {
	malformed := func(status int) lab.HandlerRun {
		r := keptRun()
		r.Scenario = "malformed-keys"
		r.Attempts = r.Attempts[:1]
		r.Attempts[0].Key, r.Attempts[0].Delivered, r.Attempts[0].Status = "k-1", true, status
		if status == 400 {
			r.Attempts[0].Response, r.Transfers, r.Charges, r.EndBalances = `{"status":400}`, nil, nil, r.StartBalances
			r.Attempts[0].Headers = map[string]string{"Content-Type": "application/problem+json"}
		}
		return r
	}
	rep := lab.JudgeHandlerRun(malformed(201))
	if assert.Len(t, rep.Notes, 1) {
		n := rep.Notes[0]
		assert.Equal(t, []string{"a1"}, n.Lanes)
		assert.Contains(t, n.Message, "the key k-1 (a1) was answered 201, and money may have moved; the contract says 400")
		assert.Contains(t, n.MessageKo, "계약은 400입니다")
		assert.Equal(t, lab.CauseKeyUnchecked, n.Cause, "the unique rung asks for it")
		assert.Contains(t, n.Fix, "lab.parseKey")
	}
	assert.Empty(t, lab.JudgeHandlerRun(malformed(400)).Notes, "400 is the contract's answer")
	long := malformed(201)
	long.Attempts[0].Key = `"` + strings.Repeat("k", 256) + `"`
	if notes := lab.JudgeHandlerRun(long).Notes; assert.Len(t, notes, 1) {
		assert.Contains(t, notes[0].Message, `the key "kkkkkkkkkkkkkkkkkkk…kkk" (258 bytes) (a1)`, "its start, its closing quote and its length")
	}

	longest := keptRun()
	longest.Scenario = "longest-key"
	longest.Attempts[0].Delivered = true
	assert.Empty(t, lab.JudgeHandlerRun(longest).Notes, "accepted, then replayed with its header")
	longest.Attempts[1].Headers = map[string]string{"Content-Type": "application/json"}
	rep = lab.JudgeHandlerRun(longest)
	if assert.Len(t, rep.Notes, 1) {
		assert.Equal(t, "the replay a2 is right but lacks the header Idempotent-Replayed: true", rep.Notes[0].Message)
		assert.Equal(t, lab.CauseReplayUnmarked, rep.Notes[0].Cause, "the replay rung asks for the header")
	}
	longest.Attempts[0].Status, longest.Attempts[0].Response = 400, `{"status":400}`
	longest.Attempts[0].Headers = map[string]string{"Content-Type": "application/problem+json"}
	rep = lab.JudgeHandlerRun(longest)
	if assert.Len(t, rep.Notes, 1) {
		assert.Contains(t, rep.Notes[0].Message, "a valid key of exactly 255 characters (a1) was answered 400")
		assert.Equal(t, lab.CauseLongestKeyRefused, rep.Notes[0].Cause)
	}
	// A 500 is the handler's failure, said once, not a refusal of the key.
	longest.Attempts[0].Status, longest.Attempts[0].Response = 500, `{"status":500}`
	longest.Attempts[1].Status, longest.Attempts[1].Response = 500, `{"status":500}`
	for _, n := range lab.JudgeHandlerRun(longest).Notes {
		assert.NotEqual(t, lab.CauseLongestKeyRefused, n.Cause, n.Message)
	}
	// Another scenario says nothing of keys.
	other := malformed(201)
	other.Scenario = "simultaneous-retries"
	assert.Empty(t, lab.JudgeHandlerRun(other).Notes)
}

// TestJudgeHandlerRunNotesAClaimNeverSettled: a1 crashed (never answered)
// and the same request sent ten minutes later was told to wait (409): the
// claim the crash left is never settled, a note with its cause and fix.
// Told to wait a second after the crash, or answered at all ten minutes
// later, nothing is noted.
func TestJudgeHandlerRunNotesAClaimNeverSettled(t *testing.T) {
	stuck := func(late int64, status int) lab.HandlerRun {
		r := keptRun()
		r.Scenario = "crash-then-late-retry"
		r.Attempts[0].Answered, r.Attempts[0].Status, r.Attempts[0].Response, r.Attempts[0].Now = false, 0, "", 1000
		r.Attempts[1].Now = 1000 + late
		refuse(&r, status)
		r.Attempts[1].Headers["Retry-After"] = "1"
		r.Transfers, r.Charges, r.EndBalances = nil, nil, r.StartBalances
		return r
	}
	rep := lab.JudgeHandlerRun(stuck(10*60*1000, 409))
	assert.True(t, rep.OK, "no rule breaks: nothing moved, nothing was said wrong")
	if assert.Len(t, rep.Notes, 1) {
		n := rep.Notes[0]
		assert.Equal(t, []string{"a1", "a2"}, n.Lanes)
		assert.Equal(t, "a1 crashed and never answered; the retry a2, sent 10 minutes later, was answered 409: the claim a1 left is still in progress, and no retry will ever settle this intent", n.Message)
		assert.Contains(t, n.MessageKo, "10분 뒤에 보낸 재시도(a2)가 409 응답을")
		c, _ := lab.CauseOf(lab.CauseNeverSettled)
		assert.Equal(t, lab.CauseNeverSettled, n.Cause)
		assert.Equal(t, c.Fix, n.Fix)
		assert.Equal(t, c.SaysKo, n.DiagnosisKo)
	}
	assert.Empty(t, lab.JudgeHandlerRun(stuck(1000, 409)).Notes, "a second after the crash, the claim is rightly still held")
	settled := stuck(10*60*1000, 409)
	settled.Attempts[1].Status, settled.Attempts[1].Response = 201, answerTr
	assert.Empty(t, lab.JudgeHandlerRun(settled).Notes, "the late retry took the claim over and was answered")
	// Two retries together ten minutes later: both told to wait is the
	// same claim never settled; one told to wait while the other took the
	// claim over and got the answer is right.
	two := stuck(10*60*1000, 409)
	two.Scenario = "crash-then-two-late-retries"
	a3 := two.Attempts[1]
	a3.ID = "a3"
	a3.Headers = map[string]string{"Content-Type": "application/problem+json", "Retry-After": "1"}
	two.Attempts = append(two.Attempts, a3)
	if notes := lab.JudgeHandlerRun(two).Notes; assert.Len(t, notes, 1, "%v", notes) {
		assert.Equal(t, lab.CauseNeverSettled, notes[0].Cause)
		assert.Equal(t, []string{"a1", "a2"}, notes[0].Lanes)
	}
	two.Attempts[1].Status, two.Attempts[1].Response = 201, answerTr
	two.Attempts[1].Headers = map[string]string{"Content-Type": "application/json"}
	for _, n := range lab.JudgeHandlerRun(two).Notes {
		assert.NotEqual(t, lab.CauseNeverSettled, n.Cause, "a2 took the claim over and was answered; a3's 409 came while it ran")
	}
	// a1's transfer had committed: the money moved, and the key was left
	// in progress by a completion apart from it.
	paid := stuck(10*60*1000, 409)
	paid.Transfers = []lab.HandlerTransfer{{ID: 1, From: "alice", To: "bob", Amount: 500, Attempt: "a1"}}
	paid.Charges = []lab.HandlerCharge{{ID: "ch_1", Attempt: "a1", Amount: 500}}
	paid.EndBalances = map[string]int64{"alice": 999500, "bob": 500}
	if notes := lab.JudgeHandlerRun(paid).Notes; assert.Len(t, notes, 1) {
		assert.Equal(t, lab.CauseCompletedApart, notes[0].Cause)
		assert.Contains(t, notes[0].Message, "a1 crashed after its transfer committed, with its key still in progress")
		assert.Contains(t, notes[0].Message, "the money moved, and no retry will ever be told so")
		assert.NotContains(t, notes[0].Diagnosis+notes[0].Message, "never moves")
	}
	// Taken over, the retry paid again: rule 1, for the same cause.
	paid.Attempts[1].Status, paid.Attempts[1].Response = 201, answerTr
	paid.Attempts[1].Headers = map[string]string{"Content-Type": "application/json"}
	paid.Transfers = append(paid.Transfers, lab.HandlerTransfer{ID: 2, From: "alice", To: "bob", Amount: 500, Attempt: "a2"})
	paid.EndBalances = map[string]int64{"alice": 999000, "bob": 1000}
	if rr := lab.JudgeHandlerRun(paid).Rule(lab.RuleOneTransfer); assert.False(t, rr.OK) {
		assert.Equal(t, lab.CauseCompletedApart, rr.Violations[0].Cause)
	}
	// Where the lab read the tables: a1 wrote its key's row, so the crash
	// left a key to complete. With no row holding the key written by any
	// attempt (the naive handler), there was nothing to complete: the
	// second payment is the missing claim's (the unique rung's).
	paid.KeysRead, paid.Claims = true, []string{"a1", "a2"}
	if rr := lab.JudgeHandlerRun(paid).Rule(lab.RuleOneTransfer); assert.False(t, rr.OK) {
		assert.Equal(t, lab.CauseCompletedApart, rr.Violations[0].Cause, "a1 claimed")
	}
	paid.Claims = nil
	if rr := lab.JudgeHandlerRun(paid).Rule(lab.RuleOneTransfer); assert.False(t, rr.OK) {
		assert.Equal(t, lab.CausePaidUnclaimed, rr.Violations[0].Cause, "no claim at all")
	}
	other := stuck(10*60*1000, 409)
	other.Scenario = "crash-at-every-step"
	assert.Empty(t, lab.JudgeHandlerRun(other).Notes, "only the late retry's scenario is judged so")
}

// TestJudgeHandlerRunSaysWhatHappened: the rules' sentences say what this
// run did. A request that arrived before the first was answered is not
// called a retry of that answer; a second charge is blamed on a rollback
// only when the ledger holds fewer transfers than the network charges.
func TestJudgeHandlerRunSaysWhatHappened(t *testing.T) {
	r := keptRun()
	r.Scenario = "simultaneous-retries"
	r.Attempts[0].Arrived, r.Attempts[1].Arrived, r.Attempts[0].AnsweredAt, r.Attempts[1].AnsweredAt = 1, 2, 3, 4
	r.Attempts[1].Status, r.Attempts[1].Response = 200, `{"status":"already_processed"}`
	r.Attempts[1].Headers = map[string]string{"Content-Type": "application/json"}
	rr := lab.JudgeHandlerRun(r).Rule(lab.RuleByteReplay)
	require.False(t, rr.OK)
	assert.Contains(t, rr.Violations[0].Message, `the same request sent at the same time under key "k-1" (a2) got 200`)
	assert.Contains(t, rr.Violations[0].MessageKo, `"k-1" 키로 동시에 보낸 같은 요청(a2)이 응답(200`)
	r.Attempts[1].Arrived = 3
	rr = lab.JudgeHandlerRun(r).Rule(lab.RuleByteReplay)
	assert.Contains(t, rr.Violations[0].Message, `a retry under key "k-1" got 200`, "sent once a1 was answered, it is a retry")

	twice := keptRun()
	twice.Charges = append(twice.Charges, lab.HandlerCharge{ID: "ch_2", Attempt: "a2", Amount: 500})
	rr = lab.JudgeHandlerRun(twice).Rule(lab.RuleOneCharge)
	require.False(t, rr.OK)
	assert.Contains(t, rr.Violations[0].Message, "while the ledger shows 1 transfer: a charge stands even where the ledger's work was rolled back or never done")
	twice.Transfers = append(twice.Transfers, lab.HandlerTransfer{ID: 2, From: "alice", To: "bob", Amount: 500, Attempt: "a2"})
	rr = lab.JudgeHandlerRun(twice).Rule(lab.RuleOneCharge)
	assert.Contains(t, rr.Violations[0].Message, "while the ledger shows 2 transfers: each attempt that paid called the processor on its own")
	assert.NotContains(t, rr.Violations[0].Message, "rolled back", "nothing rolled back")
	assert.Equal(t, lab.CausePaidUnclaimed, rr.Violations[0].Cause, "two live attempts both paid: the claim did not stop the second")
	twice.Attempts[1].Answered = false
	rr = lab.JudgeHandlerRun(twice).Rule(lab.RuleOneCharge)
	assert.Empty(t, rr.Violations[0].Cause, "a crashed attempt's charge is a takeover's business: the rule's fix")
	assert.Equal(t, lab.RuleFix(lab.RuleOneCharge.Name), rr.Violations[0].Fix)
}

// TestJudgeHandlerRunBlamesAShortRetention: a1 crashed after it paid, and
// its retry ten minutes later found the key past a retention of 300 s and
// paid again. Rules 1 and 8 break, and the cause is the retention, no
// longer than the clients retry: a retention past their hour would have
// kept the key. With that retention, the same evidence names no such cause.
func TestJudgeHandlerRunBlamesAShortRetention(t *testing.T) {
	run := func(retention float64) lab.HandlerRun {
		r := keptRun()
		r.Scenario = "crash-then-late-retry"
		r.RetentionSeconds = &retention
		r.Attempts[0].Answered, r.Attempts[0].Status, r.Attempts[0].Response, r.Attempts[0].Now = false, 0, "", 1000
		r.Attempts[1].Now = 1000 + 10*60*1000
		r.Attempts[1].Headers, r.Attempts[1].Response = map[string]string{"Content-Type": "application/json"}, answerTr
		r.Transfers = append(r.Transfers, lab.HandlerTransfer{ID: 2, From: "alice", To: "bob", Amount: 500, Attempt: "a2"})
		r.Charges = append(r.Charges, lab.HandlerCharge{ID: "ch_2", Attempt: "a2", Amount: 500})
		r.EndBalances = map[string]int64{"alice": 999000, "bob": 1000}
		return r
	}
	rep := lab.JudgeHandlerRun(run(300))
	for _, rule := range []lab.Rule{lab.RuleOneTransfer, lab.RuleOneCharge} {
		rr := rep.Rule(rule)
		if assert.False(t, rr.OK, rule.Name) {
			assert.Equal(t, lab.CauseShortRetention, rr.Violations[0].Cause, rule.Name)
		}
	}
	for _, rule := range []lab.Rule{lab.RuleOneTransfer, lab.RuleOneCharge} {
		v := rep.Rule(rule).Violations[0]
		assert.NotContains(t, v.Fix+v.FixKo, "{base}", "the browser's lab publishes in the file, not at GET {base}")
		assert.Contains(t, v.Fix, "in your file as const retentionSeconds = N")
		assert.Contains(t, v.FixKo, "파일에서 const retentionSeconds = N으로 공개하세요")
	}
	// a1 answered (its answer lost), and the retry ten minutes later paid
	// again: two attempts that each paid and answered, but the key was
	// gone, not unclaimed.
	answered := run(300)
	answered.Attempts[0].Answered, answered.Attempts[0].Status, answered.Attempts[0].Response = true, 201, answer
	if rr := lab.JudgeHandlerRun(answered).Rule(lab.RuleOneCharge); assert.False(t, rr.OK) {
		assert.Equal(t, lab.CauseShortRetention, rr.Violations[0].Cause)
	}
	rep = lab.JudgeHandlerRun(run(86400))
	for _, rule := range []lab.Rule{lab.RuleOneTransfer, lab.RuleOneCharge} {
		rr := rep.Rule(rule)
		if assert.False(t, rr.OK, rule.Name) {
			assert.NotEqual(t, lab.CauseShortRetention, rr.Violations[0].Cause, rule.Name)
		}
	}
}

// TestJudgeHandlerRunNamesAnEarlyPurge: a handler that publishes a day's
// retention but purged the key five minutes after its claim; the retry
// an hour later paid again. Without the purge that is what a missing
// claim looks like; with it, the cause is the purge. A purge after the
// published retention, or of another key, is not the cause.
func TestJudgeHandlerRunNamesAnEarlyPurge(t *testing.T) {
	const minute = 60 * 1000
	run := func(purges ...lab.HandlerPurge) lab.HandlerRun {
		r := keptRun()
		day := 86400.0
		r.Scenario, r.RetentionSeconds, r.Purges = "retry-after-retention", &day, purges
		r.Attempts[0].Now, r.Attempts[1].Now = 1000, 1000+59*minute
		r.Attempts[1].Headers, r.Attempts[1].Response = map[string]string{"Content-Type": "application/json"}, answerTr
		r.Transfers = append(r.Transfers, lab.HandlerTransfer{ID: 2, From: "alice", To: "bob", Amount: 500, Attempt: "a2"})
		r.Charges = append(r.Charges, lab.HandlerCharge{ID: "ch_2", Attempt: "a2", Amount: 500})
		r.EndBalances = map[string]int64{"alice": 999000, "bob": 1000}
		return r
	}
	causes := func(r lab.HandlerRun) []string {
		var out []string
		for _, rule := range []lab.Rule{lab.RuleOneTransfer, lab.RuleOneCharge} {
			if rr := lab.JudgeHandlerRun(r).Rule(rule); assert.False(t, rr.OK, rule.Name) {
				out = append(out, rr.Violations[0].Cause)
			}
		}
		return out
	}
	purge := lab.HandlerPurge{Attempt: "a2", Key: `"k-1"`, Now: 1000 + 59*minute, Rows: 1}
	assert.Equal(t, []string{lab.CauseKeyPurgedEarly, lab.CauseKeyPurgedEarly}, causes(run(purge)))
	for _, c := range causes(run()) {
		assert.NotEqual(t, lab.CauseKeyPurgedEarly, c, "no purge")
	}
	other := purge
	other.Key = `"k-2"`
	for _, c := range causes(run(other)) {
		assert.NotEqual(t, lab.CauseKeyPurgedEarly, c, "another key's purge")
	}
	// Published an hour's retention less a minute: the retry came after
	// it, so the key was not promised any more.
	late := run(purge)
	short := 58 * 60.0
	late.RetentionSeconds = &short
	for _, c := range causes(late) {
		assert.NotEqual(t, lab.CauseKeyPurgedEarly, c, "purged after the published retention")
	}
	// On the run's clock: a purge by a request sent after the retry, but
	// run before it (a day runs its requests in any order).
	clocked := run(lab.HandlerPurge{Attempt: "a3", Key: `"k-1"`, Now: 1000 + 70*minute, Rows: 1, Clock: 3})
	assert.NotContains(t, causes(clocked), lab.CauseKeyPurgedEarly, "by the times alone, after the retry")
	clocked.Attempts[0].Arrived, clocked.Attempts[0].AnsweredAt, clocked.Attempts[1].Arrived, clocked.Attempts[1].AnsweredAt = 1, 2, 4, 5
	assert.Equal(t, []string{lab.CauseKeyPurgedEarly, lab.CauseKeyPurgedEarly}, causes(clocked), "on the run's clock, between them")
	v := lab.JudgeHandlerRun(run(purge)).Rule(lab.RuleOneTransfer).Violations[0]
	assert.Contains(t, v.Fix, "req.now")
	assert.Contains(t, v.FixKo, "req.now")

	// Deleted by a corrected request refused 422 under the key (the
	// thirteenth simulated student's DELETE on the 422 path): a release
	// of a claim that was not its own, not a purge of old keys.
	released := run(purge)
	released.Attempts = append(released.Attempts, lab.HandlerAttempt{ID: "a3", Intent: "i2", Customer: "cust-1", Key: `"k-1"`,
		Body: `{"from":"alice","to":"bob","amount":700}`, Answered: true, Delivered: true, Status: 422,
		Headers: map[string]string{"Content-Type": "application/problem+json"}, Response: `{"status":422}`})
	released.Intents = append(released.Intents, lab.Intent{ID: "i2", Customer: "cust-1", From: "alice", To: "bob", Amount: 700})
	released.Purges[0].Attempt = "a3"
	assert.Equal(t, []string{lab.CauseReleasedAnother, lab.CauseReleasedAnother}, causes(released))
}

// TestJudgeHandlerRunNamesAnIgnoredClaim: an attempt whose key INSERT its
// conflict clause turned into nothing went on as if the key were its own.
// Two live attempts that each paid, or a retry refused 409 after the first
// answer, are then the ignored verdict's doing. Without the evidence, or
// when the ignored attempt is not the one that paid, or when the other
// payer died (a takeover after a crash), it is not named.
func TestJudgeHandlerRunNamesAnIgnoredClaim(t *testing.T) {
	ignoredBy := func(a string) []lab.HandlerIgnored {
		return []lab.HandlerIgnored{{Attempt: a, Table: "idem_keys", SQL: "INSERT OR IGNORE INTO idem_keys VALUES (?, ?)"}}
	}
	paidTwice := func(ignored []lab.HandlerIgnored) lab.HandlerRun {
		r := keptRun()
		r.Scenario, r.Ignored = "simultaneous-retries", ignored
		r.Attempts[1].Headers, r.Attempts[1].Response = map[string]string{"Content-Type": "application/json"}, answerTr
		r.Transfers = append(r.Transfers, lab.HandlerTransfer{ID: 2, From: "alice", To: "bob", Amount: 500, Attempt: "a2"})
		r.Charges = append(r.Charges, lab.HandlerCharge{ID: "ch_2", Attempt: "a2", Amount: 500})
		r.EndBalances = map[string]int64{"alice": 999000, "bob": 1000}
		return r
	}
	causes := func(r lab.HandlerRun, rules ...lab.Rule) []string {
		var out []string
		for _, rule := range rules {
			if rr := lab.JudgeHandlerRun(r).Rule(rule); assert.False(t, rr.OK, rule.Name) {
				out = append(out, rr.Violations[0].Cause)
			}
		}
		return out
	}
	both := []lab.Rule{lab.RuleOneTransfer, lab.RuleOneCharge}
	assert.Equal(t, []string{lab.CauseClaimIgnored, lab.CauseClaimIgnored}, causes(paidTwice(ignoredBy("a2")), both...))
	assert.NotContains(t, causes(paidTwice(nil), both...), lab.CauseClaimIgnored, "no insert was ignored")
	other := ignoredBy("a9")
	assert.NotContains(t, causes(paidTwice(other), both...), lab.CauseClaimIgnored, "another attempt's insert")
	crashed := paidTwice(ignoredBy("a2"))
	crashed.Attempts[0].Answered, crashed.Attempts[0].Status, crashed.Attempts[0].Response = false, 0, ""
	assert.NotContains(t, causes(crashed, both...), lab.CauseClaimIgnored, "a takeover after a crash")

	// The retry's INSERT was ignored, and it answered 409 after the first
	// answer instead of replaying it (rule 3).
	refused := func(ignored []lab.HandlerIgnored) lab.HandlerRun {
		r := keptRun()
		r.Scenario, r.Ignored = "reordered-after-answer", ignored
		r.Attempts[0].Arrived, r.Attempts[0].AnsweredAt, r.Attempts[1].Arrived, r.Attempts[1].AnsweredAt = 1, 2, 3, 4
		refuse(&r, 409)
		r.Attempts[1].Headers["Retry-After"] = "1"
		return r
	}
	assert.Equal(t, []string{lab.CauseClaimIgnored}, causes(refused(ignoredBy("a2")), lab.RuleByteReplay))
	assert.Equal(t, []string{""}, causes(refused(nil), lab.RuleByteReplay), "the answer alone tells no cause")
	v := lab.JudgeHandlerRun(refused(ignoredBy("a2"))).Rule(lab.RuleByteReplay).Violations[0]
	assert.Contains(t, v.Fix, "changes")
	assert.Contains(t, v.FixKo, "changes")
}

// TestJudgeHandlerRunNotesATransferWithoutACustomer: a request without
// X-Customer-ID answered 201 is noted, with its cause; answered 401, it
// is not.
func TestJudgeHandlerRunNotesATransferWithoutACustomer(t *testing.T) {
	r := keptRun()
	r.Attempts[0].Customer = ""
	var got []string
	for _, n := range lab.JudgeHandlerRun(r).Notes {
		got = append(got, n.Cause)
	}
	assert.Contains(t, got, lab.CauseCustomerOptional)
	// Answered 409 (a key without its customer met a claim), it is noted
	// too: the contract says 401 (the twelfth simulated student's handler
	// without the check passed the rung so).
	r.Attempts[0].Status, r.Attempts[0].Response = 409, `{"title":"Conflict","status":409}`
	assert.Contains(t, noteCausesOf(lab.JudgeHandlerRun(r)), lab.CauseCustomerOptional)
	r.Attempts[0].Status, r.Attempts[0].Response = 401, `{"title":"Unauthorized","status":401}`
	for _, n := range lab.JudgeHandlerRun(r).Notes {
		assert.NotEqual(t, lab.CauseCustomerOptional, n.Cause, n.Message)
	}
}

// TestJudgeHandlerRunNamesATakeoverTakenTwice: a1 crashed once charged,
// holding the claim; its two retries ten minutes later each took the
// claim over (a SELECT's row, not the UPDATE, decided) and each made a
// transfer. The cause is the takeover's, the scoped rung's, not the
// unique rung's claim: both retries' INSERTs had failed on the key. One
// takeover, or takeovers the lab did not read, name something else.
func TestJudgeHandlerRunNamesATakeoverTakenTwice(t *testing.T) {
	run := func(takeovers []lab.HandlerTakeover, keysRead bool) lab.HandlerRun {
		r := keptRun()
		r.Scenario = "crash-then-two-late-retries"
		r.Attempts[0].Answered, r.Attempts[0].Status, r.Attempts[0].Response, r.Attempts[0].Headers = false, 0, "", nil
		r.Attempts[1].Headers, r.Attempts[1].Response = map[string]string{"Content-Type": "application/json"}, answer
		a3 := r.Attempts[1]
		a3.ID, a3.Response = "a3", answerTr
		r.Attempts = append(r.Attempts, a3)
		r.Transfers = []lab.HandlerTransfer{{ID: 1, From: "alice", To: "bob", Amount: 500, Attempt: "a2"}, {ID: 2, From: "alice", To: "bob", Amount: 500, Attempt: "a3"}}
		r.EndBalances = map[string]int64{"alice": 999000, "bob": 1000}
		r.KeysRead, r.Claims, r.Takeovers = keysRead, []string{"a1", "a2", "a3"}, takeovers
		return r
	}
	twice := []lab.HandlerTakeover{{Attempt: "a2", Key: `"k-1"`, From: "a1"}, {Attempt: "a3", Key: `"k-1"`, From: "a2"}}
	rr := lab.JudgeHandlerRun(run(twice, true)).Rule(lab.RuleOneTransfer)
	require.False(t, rr.OK)
	v := rr.Violations[0]
	assert.Equal(t, lab.CauseTakeoverUnchecked, v.Cause)
	assert.Contains(t, v.Fix, "changes is 1")
	assert.Contains(t, v.Fix, "owner = ?")
	for name, r := range map[string]lab.HandlerRun{
		"one takeover":          run(twice[:1], true),
		"the tables not read":   run(twice, false),
		"another intent's keys": run([]lab.HandlerTakeover{{Attempt: "a9", From: "a1"}, {Attempt: "a8", From: "a9"}}, true),
	} {
		rr := lab.JudgeHandlerRun(r).Rule(lab.RuleOneTransfer)
		if assert.False(t, rr.OK, name) {
			assert.NotEqual(t, lab.CauseTakeoverUnchecked, rr.Violations[0].Cause, name)
		}
	}
}

// TestJudgeHandlerRunTellsAGenericAnswerAfterATakeover: a1 crashed; of
// its two retries ten minutes later, a3 took the claim over and answered
// the transfer, and a2 got a generic "already processed". Answered after
// a3's transfer, a2's answer is a generic replay (the replay rung's), not
// a key marked done mid-transfer; answered before it, it is that.
func TestJudgeHandlerRunTellsAGenericAnswerAfterATakeover(t *testing.T) {
	run := func(a2At int64) lab.HandlerRun {
		r := keptRun()
		r.Scenario = "crash-then-two-late-retries"
		r.Attempts[0].Answered, r.Attempts[0].Status, r.Attempts[0].Response, r.Attempts[0].Arrived = false, 0, "", 1
		r.Attempts[1].Status, r.Attempts[1].Response, r.Attempts[1].Arrived, r.Attempts[1].AnsweredAt = 200, `{"status":"already_processed"}`, 2, a2At
		r.Attempts[1].Headers = map[string]string{"Content-Type": "application/json"}
		r.Attempts = append(r.Attempts, lab.HandlerAttempt{ID: "a3", Intent: "i1", Customer: "cust-1", Key: `"k-1"`, Body: body500,
			Answered: true, Delivered: true, Status: 201, Headers: map[string]string{"Content-Type": "application/json"}, Response: answerTr, Arrived: 3, AnsweredAt: 5})
		r.Transfers[0].Attempt = "a3"
		r.Charges = append(r.Charges, lab.HandlerCharge{ID: "ch_2", Attempt: "a3", Amount: 500})
		return r
	}
	cause := func(r lab.HandlerRun) string {
		rr := lab.JudgeHandlerRun(r).Rule(lab.RuleByteReplay)
		require.False(t, rr.OK)
		return rr.Violations[0].Cause
	}
	assert.Equal(t, lab.CauseGenericReplay, cause(run(6)), "after a3's transfer was answered")
	assert.Equal(t, lab.CauseCompletedFirst, cause(run(4)), "while a3's transfer ran")
}

// TestJudgeHandlerRunNotesA409WithoutRetryAfter: in any scenario, as the
// grader notes it in any check, a 409 must say when to come back; noted
// once a run, with its cause (the in-progress rung's). A valid one, in
// seconds or as an HTTP date, is not noted.
func TestJudgeHandlerRunNotesA409WithoutRetryAfter(t *testing.T) {
	r := keptRun()
	r.Scenario = "simultaneous-retries"
	refuse(&r, 409)
	notes := lab.JudgeHandlerRun(r).Notes
	if assert.Len(t, notes, 1) {
		assert.Equal(t, lab.CauseNoRetryAfter, notes[0].Cause)
		assert.Equal(t, []string{"a2"}, notes[0].Lanes)
		assert.Contains(t, notes[0].Message, "a2 was answered 409 without a valid Retry-After")
	}
	for _, v := range []string{"1", "Wed, 21 Oct 2026 07:28:00 GMT"} {
		r.Attempts[1].Headers["retry-after"] = v
		assert.Empty(t, lab.JudgeHandlerRun(r).Notes, "Retry-After: %s", v)
	}
	r.Attempts[1].Headers["retry-after"] = "soon"
	assert.Len(t, lab.JudgeHandlerRun(r).Notes, 1, "neither seconds nor a date")
}

// TestJudgeHandlerRunNotesAFailingHandler: a handler that answered 500
// (it threw) broke no rule, since nothing happened; it is noted, once a
// run, with a cause every rung asks about.
func TestJudgeHandlerRunNotesAFailingHandler(t *testing.T) {
	r := keptRun()
	r.Scenario = "simultaneous-retries"
	for i := range r.Attempts {
		r.Attempts[i].Status, r.Attempts[i].Response, r.Attempts[i].Headers, r.Attempts[i].Delivered = 500, "", map[string]string{}, true
	}
	r.Transfers, r.Charges, r.EndBalances = nil, nil, r.StartBalances
	rep := lab.JudgeHandlerRun(r)
	assert.True(t, rep.OK, "no rule can judge what never happened")
	if assert.Len(t, rep.Notes, 1) {
		assert.Equal(t, lab.CauseHandlerFailed, rep.Notes[0].Cause)
		assert.Equal(t, "a1 was answered 500: the handler threw or failed, and nothing the contract serves was done", rep.Notes[0].Message)
	}
	// What it threw is said, as the bench shows it.
	r.Attempts[0].Threw = "ConstraintError at line 12: UNIQUE constraint failed: idem_keys.idem_key"
	if notes := lab.JudgeHandlerRun(r).Notes; assert.Len(t, notes, 1) {
		assert.Equal(t, "a1 was answered 500: the handler threw ConstraintError at line 12: UNIQUE constraint failed: idem_keys.idem_key", notes[0].Message)
		assert.Contains(t, notes[0].MessageKo, "ConstraintError(12번째 줄)")
	}
}

// TestJudgeHandlerRunNotesTheSlipsNoRuleSees: a call never awaited, an
// answer before COMMIT and a SELECT given to db.run break no rule in a
// run that kept them all; each is noted once a run, at the first attempt
// that made it, with its line and a cause every rung asks about.
func TestJudgeHandlerRunNotesTheSlipsNoRuleSees(t *testing.T) {
	r := keptRun()
	r.Scenario = "simultaneous-retries"
	require.Empty(t, lab.JudgeHandlerRun(r).Notes)
	r.Attempts[1].Unawaited = []lab.HandlerCall{{Op: "run", Line: 7}}
	r.Attempts[0].LeftOpen = true
	r.Attempts[0].Dropped = []lab.HandlerCall{{Op: "run", Line: 3}}
	r.Attempts[1].Dropped = []lab.HandlerCall{{Op: "run"}}
	rep := lab.JudgeHandlerRun(r)
	assert.True(t, rep.OK)
	causes := map[string]lab.Note{}
	for _, n := range rep.Notes {
		causes[n.Cause] = n
	}
	assert.Len(t, rep.Notes, 3, "each kind once")
	assert.Equal(t, "a2 ended while its db.run at line 7 was still waiting to run, so that statement never ran", causes[lab.CauseNotAwaited].Message)
	assert.Contains(t, causes[lab.CauseNotAwaited].MessageKo, "7번째 줄의 db.run")
	assert.Equal(t, []string{"a1"}, causes[lab.CauseLeftOpen].Lanes)
	assert.Contains(t, causes[lab.CauseLeftOpen].Message, "a1 answered 201 with its transaction still open")
	assert.Contains(t, causes[lab.CauseRowsDropped].Message, "a1 gave a SELECT to db.run at line 3:")
	assert.NotEmpty(t, causes[lab.CauseRowsDropped].Fix)

	// A call that ran with nothing waiting for its answer is said as such.
	r.Attempts[1].Unawaited = []lab.HandlerCall{{Op: "pay", Line: 22, Ran: true}}
	notes := lab.JudgeHandlerRun(r).Notes
	i := slices.IndexFunc(notes, func(n lab.Note) bool { return n.Cause == lab.CauseNotAwaited })
	require.GreaterOrEqual(t, i, 0, "%v", notes)
	assert.Equal(t, "a2 called pay at line 22 without await: the call ran, but nothing waited for its answer, so the code after it went on without knowing how it ended, and an error from it (a network that failed) would never be seen", notes[i].Message)
	assert.Contains(t, notes[i].MessageKo, "22번째 줄의 pay 호출을 await 없이")

	// One whose error no one saw is the one said.
	r.Attempts[1].Unawaited = append(r.Attempts[1].Unawaited, lab.HandlerCall{Op: "run", Line: 21, Ran: true, Failed: "ConstraintError"})
	notes = lab.JudgeHandlerRun(r).Notes
	i = slices.IndexFunc(notes, func(n lab.Note) bool { return n.Cause == lab.CauseNotAwaited })
	require.GreaterOrEqual(t, i, 0, "%v", notes)
	assert.Equal(t, "a2 called db.run at line 21 without await: the call failed with ConstraintError, and nothing saw it, so the code after it went on as if it had succeeded", notes[i].Message)
}

// TestJudgeHandlerRunBlamesAPurgeForA500: a day in which a purge deleted
// a key ten minutes after its first request, though a day's retention is
// published; a different request under that key, which the key's row
// would have refused 422, reached the network, which refused the key
// used for another payment: the handler threw, and the purge is the
// cause. A purge after that request, or of another key, is not.
func TestJudgeHandlerRunBlamesAPurgeForA500(t *testing.T) {
	const minute = 60 * 1000
	r := keptRun()
	day := 86400.0
	r.Scenario, r.RetentionSeconds = "day", &day
	r.Attempts[0].Now, r.Attempts[1].Now = 1000, 1000+20*minute
	r.Attempts[1].Status, r.Attempts[1].Response, r.Attempts[1].Headers = 500, "", map[string]string{}
	r.Attempts[1].Threw = `PaymentError at line 42: key "k-1" was first used for another payment`
	cause := func(purges ...lab.HandlerPurge) string {
		r.Purges = purges
		for _, n := range lab.JudgeHandlerRun(r).Notes {
			if slices.Contains(n.Lanes, "a2") {
				return n.Cause
			}
		}
		return ""
	}
	purge := lab.HandlerPurge{Attempt: "a2", Key: `"k-1"`, Now: 1000 + 20*minute, Rows: 1}
	assert.Equal(t, lab.CauseKeyPurgedEarly, cause(purge))
	assert.Equal(t, lab.CauseHandlerFailed, cause())
	later := purge
	later.Now += minute
	assert.Equal(t, lab.CauseHandlerFailed, cause(later), "a purge after the request")
	// On the run's clock: a purge by a later request while a2 still ran
	// (the row a2's claim met, gone before a2 read it), and one after a2
	// answered.
	r.Attempts[1].Arrived, r.Attempts[1].AnsweredAt = 3, 6
	during := later
	during.Clock = 4
	assert.Equal(t, lab.CauseKeyPurgedEarly, cause(during), "a purge while a2 ran")
	during.Clock = 7
	assert.Equal(t, lab.CauseHandlerFailed, cause(during), "a purge after a2 answered")
	other := purge
	other.Key = `"k-2"`
	assert.Equal(t, lab.CauseHandlerFailed, cause(other), "another key's purge")
}

// TestJudgeHandlerRunNotesAnUnmarkedReplay: in any scenario, a retry
// answered with the first success's bytes but without Idempotent-Replayed:
// true is noted, as the grader notes it of the longest key's retry.
func TestJudgeHandlerRunNotesAnUnmarkedReplay(t *testing.T) {
	r := keptRun()
	r.Scenario = "retry-after-lost-answer"
	r.Attempts[0].Arrived, r.Attempts[0].AnsweredAt, r.Attempts[1].Arrived, r.Attempts[1].AnsweredAt = 1, 2, 3, 4
	assert.Empty(t, lab.JudgeHandlerRun(r).Notes, "marked")
	r.Attempts[1].Headers = map[string]string{"Content-Type": "application/json"}
	notes := lab.JudgeHandlerRun(r).Notes
	if assert.Len(t, notes, 1) {
		assert.Equal(t, lab.CauseReplayUnmarked, notes[0].Cause)
		assert.Equal(t, []string{"a1", "a2"}, notes[0].Lanes)
	}
	// A stored refusal replayed without the header: a1 refused 402 (and
	// its answer lost), a2 given the same bytes. The grader notes it in
	// its refusals check; so does the page.
	refused := keptRun()
	refused.Scenario = "refusal-then-top-up"
	refused.Transfers, refused.Charges, refused.EndBalances = nil, nil, refused.StartBalances
	for k := range refused.Attempts {
		refused.Attempts[k].Arrived, refused.Attempts[k].AnsweredAt = int64(2*k+1), int64(2*k+2)
		refused.Attempts[k].Status, refused.Attempts[k].Response = 402, `{"title":"Insufficient funds","status":402}`
		refused.Attempts[k].Headers = map[string]string{"Content-Type": "application/problem+json"}
	}
	notes = lab.JudgeHandlerRun(refused).Notes
	if assert.Len(t, notes, 1, "%v", notes) {
		assert.Equal(t, lab.CauseReplayUnmarked, notes[0].Cause)
		assert.Equal(t, []string{"a1", "a2"}, notes[0].Lanes)
	}
	refused.Attempts[1].Headers["Idempotent-Replayed"] = "true"
	assert.Empty(t, lab.JudgeHandlerRun(refused).Notes, "marked")
	// a2 and a3 both told a generic "already processed" while a1, which
	// made the transfer, had not answered yet: the same bytes twice,
	// neither the first answer's, so no replay.
	generic := keptRun()
	generic.Scenario = "retry-after-lost-answer"
	third := generic.Attempts[1]
	third.ID = "a3"
	generic.Attempts = append(generic.Attempts, third)
	for i := range generic.Attempts {
		generic.Attempts[i].Arrived, generic.Attempts[i].AnsweredAt = int64(10*i+1), int64(10*i+2)
	}
	generic.Attempts[0].AnsweredAt = 100
	for _, k := range []int{1, 2} {
		generic.Attempts[k].Status, generic.Attempts[k].Response = 200, `{"status":"already processed"}`
		generic.Attempts[k].Headers = map[string]string{"Content-Type": "application/json"}
	}
	for _, n := range lab.JudgeHandlerRun(generic).Notes {
		assert.NotEqual(t, lab.CauseReplayUnmarked, n.Cause, "%s: a generic answer is not a replay", n.Message)
	}
}

// TestJudgeHandlerRunTellsTheFingerprint holds the browser's judge to the
// grader's reordered check: of an answered request sent again re-spaced
// and reordered, a refused re-spaced retry names a fingerprint of the raw
// bytes; only reordered ones refused, one that keeps the members' order.
func TestJudgeHandlerRunTellsTheFingerprint(t *testing.T) {
	run := func(spacedRefused bool) lab.HandlerRun {
		r := keptRun()
		r.Scenario = "retry-three-ways"
		r.Attempts[0].Delivered = true
		spaced := r.Attempts[1]
		spaced.Body = `{ "from": "alice", "to": "bob", "amount": 500 }`
		reordered := r.Attempts[1]
		reordered.ID, reordered.Body = "a3", `{"amount":500,"from":"alice","to":"bob"}`
		refused := func(a *lab.HandlerAttempt) {
			a.Status, a.Response, a.Headers = 422, `{"title":"Unprocessable","status":422}`, map[string]string{"Content-Type": "application/problem+json"}
		}
		refused(&reordered)
		if spacedRefused {
			refused(&spaced)
		}
		r.Attempts = []lab.HandlerAttempt{r.Attempts[0], spaced, reordered}
		for i := range r.Attempts {
			r.Attempts[i].Arrived, r.Attempts[i].AnsweredAt = int64(10*i+1), int64(10*i+2)
		}
		return r
	}
	for _, c := range []struct {
		spacedRefused bool
		cause         string
	}{{true, lab.CauseRawBytes}, {false, lab.CauseOrderSensitive}} {
		rr := lab.JudgeHandlerRun(run(c.spacedRefused)).Rule(lab.RuleByteReplay)
		if assert.False(t, rr.OK) && assert.NotEmpty(t, rr.Violations) {
			for _, v := range rr.Violations {
				assert.Equal(t, c.cause, v.Cause, "%s", v.Message)
			}
		}
	}
	// A handler that answers every repeat 409 (no fingerprint yet) is
	// not told it has one.
	r409 := run(true)
	for i := 1; i < len(r409.Attempts); i++ {
		r409.Attempts[i].Status = 409
	}
	for _, v := range lab.JudgeHandlerRun(r409).Rule(lab.RuleByteReplay).Violations {
		assert.NotEqual(t, lab.CauseRawBytes, v.Cause, "%s", v.Message)
		assert.NotEqual(t, lab.CauseOrderSensitive, v.Cause, "%s", v.Message)
	}
	// Without a re-spaced retry nothing tells the two apart.
	r := run(false)
	r.Attempts = []lab.HandlerAttempt{r.Attempts[0], r.Attempts[2]}
	for _, v := range lab.JudgeHandlerRun(r).Rule(lab.RuleByteReplay).Violations {
		assert.NotEqual(t, lab.CauseOrderSensitive, v.Cause)
		assert.NotEqual(t, lab.CauseRawBytes, v.Cause)
	}
}

// The replay header is read in any case, as HTTP header names are.
func TestJudgeHandlerRunReadsTheReplayHeaderInAnyCase(t *testing.T) {
	r := keptRun()
	r.Scenario = "longest-key"
	r.Attempts[0].Delivered = true
	r.Attempts[1].Headers = map[string]string{"content-type": "application/json", "idempotent-replayed": "true"}
	assert.Empty(t, lab.JudgeHandlerRun(r).Notes)
}

// TestJudgeHandlerRunComparesWithTheFirstAnswer: two attempts racing may
// answer in the other order than they arrived. The retry's answer is
// compared with the answer given first, and the sentence names that
// attempt: a2 answered 200 before a1's 201, so a1 is the one that differs.
func TestJudgeHandlerRunComparesWithTheFirstAnswer(t *testing.T) {
	r := keptRun()
	r.Attempts[1].Status, r.Attempts[1].Response = 200, `{"status":"already_processed"}`
	r.Attempts[0].Arrived, r.Attempts[1].Arrived, r.Attempts[1].AnsweredAt, r.Attempts[0].AnsweredAt = 1, 2, 3, 4
	rep := lab.JudgeHandlerRun(r)
	rr := rep.Rule(lab.RuleByteReplay)
	if assert.False(t, rr.OK) && assert.NotEmpty(t, rr.Violations) {
		v := rr.Violations[0]
		assert.Contains(t, v.Message, "the attempt that answered first (a2)")
		assert.Contains(t, v.Message, "a1 got the transfer's own answer 201 ")
		assert.Contains(t, v.MessageKo, "서버가 먼저 답한 시도(a2)")
	}
	// Without the answers' clock, the first sent is taken as the first.
	r.Attempts[0].AnsweredAt, r.Attempts[1].AnsweredAt = 0, 0
	rr = lab.JudgeHandlerRun(r).Rule(lab.RuleByteReplay)
	if assert.NotEmpty(t, rr.Violations) {
		assert.Contains(t, rr.Violations[0].Message, "the attempt that answered first (a1)")
	}
}

// TestJudgeHandlerRunRetentionUnknown: a handler that publishes no
// retention breaks no rule, but rule 7 is unknown, said in words, as
// idemlab grade marks it; a published one is judged.
func TestJudgeHandlerRunRetentionUnknown(t *testing.T) {
	r := keptRun()
	r.RetentionSeconds = nil
	rr := lab.JudgeHandlerRun(r).Rule(lab.RuleRetention)
	assert.True(t, rr.Unknown)
	assert.Contains(t, rr.Why, "retentionSeconds")
	assert.Contains(t, rr.WhyKo, "retentionSeconds")
	rr = lab.JudgeHandlerRun(keptRun()).Rule(lab.RuleRetention)
	assert.False(t, rr.Unknown)
	assert.True(t, rr.OK)
	assert.Empty(t, rr.Why)
}

// TestJudgeHandlerRunNotesASharedNetworkKey: two customers chose the same
// key; the handler's key table is scoped (cust-2 claimed its own key and
// reached pay), but it passed the network the key as sent. The network
// answered cust-2's payment with cust-1's charge: cust-2's transfer moved
// and was never charged, which no answer shows. Refused instead (the
// handler answered 422), rule 5's break is said to be the network's key,
// not global keys.
func TestJudgeHandlerRunNotesASharedNetworkKey(t *testing.T) {
	r := keptRun()
	r.Scenario = "same-key-other-customer"
	r.Intents = append(r.Intents, lab.Intent{ID: "i2", Customer: "cust-2", From: "alice", To: "bob", Amount: 500})
	r.Attempts[0].Delivered = true
	r.Attempts[1].Intent, r.Attempts[1].Customer = "i2", "cust-2"
	r.Attempts[1].Headers = map[string]string{"Content-Type": "application/json"}
	r.Attempts[0].Pays = []lab.HandlerPay{{NetworkKey: "k-1", Outcome: "charged", Charge: "ch_1"}}
	r.Charges[0].NetworkKey = "k-1"
	r.Transfers = append(r.Transfers, lab.HandlerTransfer{ID: 2, From: "alice", To: "bob", Amount: 500, Attempt: "a2"})
	r.Attempts[1].Response = answerTr // a2's own transfer, and alice's balance after it
	r.EndBalances = map[string]int64{"alice": 999000, "bob": 1000}
	for i := range r.Attempts {
		r.Attempts[i].Arrived, r.Attempts[i].AnsweredAt = int64(10*i+1), int64(10*i+2)
	}
	r.Attempts[1].Pays = []lab.HandlerPay{{NetworkKey: `["cust-2","k-1"]`, Outcome: "charged", Charge: "ch_2"}}
	r.Charges = append(r.Charges, lab.HandlerCharge{ID: "ch_2", Attempt: "a2", Amount: 500, NetworkKey: `["cust-2","k-1"]`})
	assert.Empty(t, lab.JudgeHandlerRun(r).Notes, "cust-2 under its own key at the network")

	r.Charges = r.Charges[:1]
	r.Attempts[1].Pays = []lab.HandlerPay{{NetworkKey: "k-1", Outcome: "replayed", Charge: "ch_1"}}
	rep := lab.JudgeHandlerRun(r)
	if assert.Len(t, rep.Notes, 1) {
		n := rep.Notes[0]
		assert.Equal(t, lab.CauseNetworkKeyShared, n.Cause)
		assert.Equal(t, []string{"a1", "a2"}, n.Lanes)
		assert.Equal(t, `cust-2's payment (a2) went to the network under the key "k-1", which cust-1's payment (a1) had used first: the network answered it with cust-1's charge ch_1, so cust-2 was never charged`, n.Message)
		assert.Contains(t, n.MessageKo, "한 번도 청구하지 않았습니다")
	}

	refused := r
	refused.Attempts = slices.Clone(r.Attempts)
	otherCustomer(&refused)
	refused.Attempts[1].Pays = []lab.HandlerPay{{NetworkKey: "k-1", Outcome: "refused"}}
	refused.Transfers = refused.Transfers[:1]
	refused.EndBalances = map[string]int64{"alice": 999500, "bob": 500}
	rep = lab.JudgeHandlerRun(refused)
	require.Len(t, rep.Notes, 1)
	assert.Contains(t, rep.Notes[0].Message, "refused it as another payment")
	broken := 0
	for _, rr := range rep.Rules {
		for _, v := range rr.Violations {
			broken++
			assert.Equal(t, lab.CauseNetworkKeyShared, v.Cause, "rule %d: the network's key, not the key table's", rr.Rule.N)
		}
	}
	assert.NotZero(t, broken, "cust-2's own transfer refused breaks a rule")

	// The handler let the network's PaymentError out (a 500): the network
	// key's note says why, and the generic advice on a throw, which the
	// eleventh simulated student read first, is not said beside it.
	thrown := refused
	thrown.Attempts = slices.Clone(refused.Attempts)
	thrown.Attempts[1].Status, thrown.Attempts[1].Response = 500, `{"title":"Internal Server Error","status":500}`
	thrown.Attempts[1].Threw = `PaymentError at line 49: key "k-1" was first used for another payment (500 won from alice to bob)`
	causes := noteCausesOf(lab.JudgeHandlerRun(thrown))
	assert.Contains(t, causes, lab.CauseNetworkKeyShared)
	assert.NotContains(t, causes, lab.CauseHandlerFailed)
}

// TestJudgeHandlerRunNamesAReorderedRefusal: a fingerprint of the raw
// bytes refuses the same request with its members reordered (422). Sent
// after the first was answered, rule 3 breaks, and the cause is the
// fingerprint's, not the stored answer's. Sent while the first was still
// running, no rule judges it, and a note says the 422 was wrong (409 is
// owed); a re-spaced copy refused so names the raw bytes.
func TestJudgeHandlerRunNamesAReorderedRefusal(t *testing.T) {
	run := func(after bool, body string) lab.HandlerRun {
		r := keptRun()
		r.Scenario = "reordered-after-answer"
		r.Attempts[0].Delivered = true
		r.Attempts[1].Body = body
		r.Attempts[1].Status, r.Attempts[1].Response = 422, `{"title":"Unprocessable","status":422}`
		r.Attempts[1].Headers = map[string]string{"Content-Type": "application/problem+json"}
		r.Attempts[0].Arrived, r.Attempts[0].AnsweredAt, r.Attempts[1].Arrived, r.Attempts[1].AnsweredAt = 1, 2, 3, 4
		if !after {
			r.Scenario = "reordered-json"
			r.Attempts[0].AnsweredAt = 5
		}
		return r
	}
	reordered := `{"amount":500,"to":"bob","from":"alice"}`
	rr := lab.JudgeHandlerRun(run(true, reordered)).Rule(lab.RuleByteReplay)
	if assert.False(t, rr.OK) {
		assert.Equal(t, lab.CauseReorderedRefused, rr.Violations[0].Cause)
	}
	rep := lab.JudgeHandlerRun(run(false, reordered))
	assert.True(t, rep.Rule(lab.RuleByteReplay).OK, "sent while a1 ran, no rule judges it")
	if assert.Len(t, rep.Notes, 1) {
		assert.Equal(t, lab.CauseReorderedRefused, rep.Notes[0].Cause)
		assert.Contains(t, rep.Notes[0].Message, "a2 was refused 422 as a different request, though it is a1's request")
	}
	rep = lab.JudgeHandlerRun(run(false, `{ "from": "alice", "to": "bob", "amount": 500 }`))
	if assert.Len(t, rep.Notes, 1) {
		assert.Equal(t, lab.CauseRawBytes, rep.Notes[0].Cause, "re-spaced only: the raw bytes")
	}
	different := run(false, `{"from":"alice","to":"bob","amount":700}`)
	assert.Empty(t, lab.JudgeHandlerRun(different).Notes, "a different request refused 422 is right")
}

// TestJudgeHandlerRunSaysAGenericAnswerToAnotherCustomer: keys shared by
// customers, and cust-2's own request under cust-1's key answered with a
// generic "already processed": not cust-1's bytes, but an answer about
// cust-1's request, and cust-2's transfer never made. Rule 5 says so in
// those words, not as if cust-1's answer had been sent.
func TestJudgeHandlerRunSaysAGenericAnswerToAnotherCustomer(t *testing.T) {
	r := keptRun()
	r.Intents = append(r.Intents, lab.Intent{ID: "i2", Customer: "cust-2", From: "carol", To: "bob", Amount: 500})
	r.Attempts[1].Intent, r.Attempts[1].Customer = "i2", "cust-2"
	r.Attempts[1].Body = `{"from":"carol","to":"bob","amount":500}`
	r.Attempts[1].Status, r.Attempts[1].Response = 200, `{"status":"already_processed"}`
	r.Attempts[1].Headers = map[string]string{"Content-Type": "application/json"}
	rr := lab.JudgeHandlerRun(r).Rule(lab.RuleOwnResponses)
	if assert.False(t, rr.OK) {
		assert.Contains(t, rr.Violations[0].Message, `an answer about customer cust-1's request under that key, while cust-2's own transfer was never made`)
		assert.NotContains(t, rr.Violations[0].Message, "belongs to")
	}
}

// TestJudgeHandlerRunComparesTheReplaysContentType: a replay with the
// first answer's status and bytes but without its Content-Type breaks
// rule 3, and the cause says the headers were not stored; the same type
// in another case is the same type.
func TestJudgeHandlerRunComparesTheReplaysContentType(t *testing.T) {
	ruleOf := func(v lab.Report, n int) lab.RuleResult {
		for _, rr := range v.Rules {
			if rr.Rule.N == n {
				return rr
			}
		}
		t.Fatalf("no rule %d", n)
		return lab.RuleResult{}
	}
	r := keptRun()
	require.True(t, ruleOf(lab.JudgeHandlerRun(r), 3).OK, "kept")

	r.Attempts[1].Headers = map[string]string{"content-type": "Application/JSON", "Idempotent-Replayed": "true"}
	assert.True(t, ruleOf(lab.JudgeHandlerRun(r), 3).OK, "the same media type, another case")

	r.Attempts[1].Headers = map[string]string{"Idempotent-Replayed": "true"}
	rr := ruleOf(lab.JudgeHandlerRun(r), 3)
	require.False(t, rr.OK, "a replay without its Content-Type")
	require.Len(t, rr.Violations, 1)
	v := rr.Violations[0]
	assert.Equal(t, lab.CauseReplayHeaders, v.Cause)
	assert.Contains(t, v.Message, `no Content-Type, where the first answer had "application/json"`)
	assert.Contains(t, v.MessageKo, `Content-Type이 없습니다(첫 응답: "application/json")`)
	assert.NotEmpty(t, v.Fix)

	r.Attempts[1].Headers = map[string]string{"Content-Type": "text/plain", "Idempotent-Replayed": "true"}
	v = ruleOf(lab.JudgeHandlerRun(r), 3).Violations[0]
	assert.Contains(t, v.Message, `Content-Type "text/plain" against the first answer's "application/json"`)
	assert.Empty(t, lab.JudgeHandlerRun(r).Notes, "a wrong replay is not noted as a right one unmarked")
}

// TestJudgeHandlerRunNotesALiveClaimTaken: a2 updated the key row a1 had
// written while a1 still ran (the lab's database saw it): no rule need
// break, but the lease is shorter than a transfer takes, a note with its
// cause, once a run.
func TestJudgeHandlerRunNotesALiveClaimTaken(t *testing.T) {
	r := keptRun()
	assert.Empty(t, lab.JudgeHandlerRun(r).Notes)
	r.TakenLive = []lab.HandlerTakenLive{{Attempt: "a2", From: "a1", Table: "idem_keys"}, {Attempt: "a2", From: "a1", Table: "idem_keys"}}
	rep := lab.JudgeHandlerRun(r)
	assert.True(t, rep.OK, "no rule broke")
	if assert.Len(t, rep.Notes, 1) {
		n := rep.Notes[0]
		assert.Equal(t, lab.CauseLeaseTooShort, n.Cause)
		assert.Equal(t, []string{"a1", "a2"}, n.Lanes)
		assert.Equal(t, "a2 took over the row a1 had written in your table idem_keys while a1 was still running: a lease shorter than a transfer takes hands a live attempt's claim to its retry", n.Message)
		assert.Contains(t, n.MessageKo, "idem_keys 테이블에서 a1 시도가 쓴 행을")
		assert.Contains(t, n.Fix, "make the lease longer than any transfer can take")
	}
	// Sent two minutes after a1, a2 took over the claim of an attempt
	// stalled that long: what a lease is for.
	r.Attempts[1].Now = r.Attempts[0].Now + 2*60*1000
	assert.Empty(t, lab.JudgeHandlerRun(r).Notes)
}

// TestJudgeHandlerRunBlamesTheSlip: a1 answered 201 with its transaction
// still open, so the lab rolled its transfer back, and a2 got the same
// 201 replayed. Rule 4 breaks (a success with no transfer), and its cause
// is the answer before COMMIT, not what the answers resemble.
func TestJudgeHandlerRunBlamesTheSlip(t *testing.T) {
	r := keptRun()
	r.Transfers, r.Charges, r.EndBalances = nil, nil, r.StartBalances
	rr := lab.JudgeHandlerRun(r).Rule(lab.RuleNothingLost)
	require.False(t, rr.OK)
	assert.NotEqual(t, lab.CauseLeftOpen, rr.Violations[0].Cause, "no slip, no slip's cause")
	// A call that ran in its turn with no await on it changed nothing the
	// attempt did: not the rule's cause. One that never ran is.
	r.Attempts[0].Unawaited = []lab.HandlerCall{{Op: "pay", Ran: true}}
	rr = lab.JudgeHandlerRun(r).Rule(lab.RuleNothingLost)
	require.False(t, rr.OK)
	assert.NotEqual(t, lab.CauseNotAwaited, rr.Violations[0].Cause, "a call that ran is no rule's cause")
	r.Attempts[0].Unawaited = []lab.HandlerCall{{Op: "run", Ran: true, Failed: "ConstraintError"}}
	rr = lab.JudgeHandlerRun(r).Rule(lab.RuleNothingLost)
	require.False(t, rr.OK)
	assert.Equal(t, lab.CauseNotAwaited, rr.Violations[0].Cause, "an error no one saw is the cause")
	r.Attempts[0].Unawaited = []lab.HandlerCall{{Op: "commit"}}
	rr = lab.JudgeHandlerRun(r).Rule(lab.RuleNothingLost)
	require.False(t, rr.OK)
	assert.Equal(t, lab.CauseNotAwaited, rr.Violations[0].Cause)
	r.Attempts[0].LeftOpen = true
	rr = lab.JudgeHandlerRun(r).Rule(lab.RuleNothingLost)
	require.False(t, rr.OK)
	assert.Equal(t, lab.CauseLeftOpen, rr.Violations[0].Cause)
}

// TestJudgeHandlerRunNotesAPaymentInATransaction: a1 called the network
// with its transaction open. No rule breaks; the slip is noted once, at
// its line, with a cause every rung asks for.
func TestJudgeHandlerRunNotesAPaymentInATransaction(t *testing.T) {
	r := keptRun()
	assert.Empty(t, lab.JudgeHandlerRun(r).Notes)
	r.Attempts[0].PaidInTx = []lab.HandlerCall{{Op: "pay", Line: 12}}
	r.Attempts[1].PaidInTx = []lab.HandlerCall{{Op: "pay", Line: 12}}
	rep := lab.JudgeHandlerRun(r)
	assert.True(t, rep.OK)
	if assert.Len(t, rep.Notes, 1) {
		assert.Equal(t, lab.CausePaidInTx, rep.Notes[0].Cause)
		assert.Equal(t, "a1 called pay at line 12 with its transaction open: the network's charge is made in another system, where no ROLLBACK reaches, and the transaction's lock was held while the network answered, so any other attempt that wanted to write had to wait", rep.Notes[0].Message)
		assert.Contains(t, rep.Notes[0].Fix, "call pay before db.begin()")
	}
}

// twoRequestsOneKey is a run of two different requests under one key
// (alice sends bob 500, then 700, both cust-1's "k-1"), sent together: a2
// claimed the key and paid, a1 was answered status after it had arrived
// first, on the run's clock.
func twoRequestsOneKey(status int) lab.HandlerRun {
	r := keptRun()
	r.Intents = append(r.Intents, lab.Intent{ID: "i2", Customer: "cust-1", From: "alice", To: "bob", Amount: 700})
	r.Attempts[0].Status, r.Attempts[0].Delivered = status, true
	r.Attempts[0].Response = `{"title":"no","status":` + strconv.Itoa(status) + `}`
	r.Attempts[0].Headers = map[string]string{"Content-Type": "application/problem+json", "Retry-After": "1"}
	r.Attempts[0].Arrived, r.Attempts[0].AnsweredAt = 1, 3
	r.Attempts[1].Intent, r.Attempts[1].Body = "i2", `{"from":"alice","to":"bob","amount":700}`
	r.Attempts[1].Response = strings.Replace(answer, `"amount":500,"balance_after":999500`, `"amount":700,"balance_after":999300`, 1)
	r.Attempts[1].Headers = map[string]string{"Content-Type": "application/json"}
	r.Attempts[1].Arrived, r.Attempts[1].AnsweredAt = 2, 4
	r.Transfers = []lab.HandlerTransfer{{ID: 1, From: "alice", To: "bob", Amount: 700, Attempt: "a2"}}
	r.Charges = []lab.HandlerCharge{{ID: "ch_1", Attempt: "a2", Amount: 700}}
	r.EndBalances = map[string]int64{"alice": 999300, "bob": 700}
	return r
}

// TestJudgeHandlerRunKeysTheRequestThatClaimed: two different requests
// sent together under one key may claim it in either order. The one that
// claimed and paid is the keyed request, though the other arrived first
// and was refused 422: no rule breaks. Refused 409 while a2 still ran,
// a1 was told to wait for a request that is not its own: noted, with the
// in-progress rung's cause; told 409 after a2 had answered, it was not
// waiting on a running request, and nothing is noted.
func TestJudgeHandlerRunKeysTheRequestThatClaimed(t *testing.T) {
	rep := lab.JudgeHandlerRun(twoRequestsOneKey(422))
	assert.True(t, rep.OK, "%+v", rep.Broken())
	assert.Empty(t, rep.Notes)

	rep = lab.JudgeHandlerRun(twoRequestsOneKey(409))
	assert.True(t, rep.OK, "%+v", rep.Broken())
	if assert.Len(t, rep.Notes, 1) {
		n := rep.Notes[0]
		assert.Equal(t, lab.CauseStateBeforeFingerprint, n.Cause)
		assert.Equal(t, []string{"a2", "a1"}, n.Lanes)
		assert.Equal(t, `a1 was answered 409 (come back later) while a2 held its key, though a1's request is not a2's ({"from":"alice","to":"bob","amount":500} against {"from":"alice","to":"bob","amount":700}): no retry of it can ever succeed under that key, and the contract answers it 422 at once`, n.Message)
		assert.Contains(t, n.Fix, "compare the fingerprint first")
		assert.Contains(t, n.MessageKo, "409(나중에 다시 오라)")
	}

	late := twoRequestsOneKey(409)
	late.Attempts[0].AnsweredAt = 5
	assert.Empty(t, lab.JudgeHandlerRun(late).Notes, "a2 had answered: a1 waited on nothing running")

	same := twoRequestsOneKey(409)
	same.Attempts[1].Body = body500
	assert.Empty(t, lab.JudgeHandlerRun(same).Notes, "the same request told to wait: right")

	// a1's retry told to wait while a1 ran was right, though a corrected
	// amount, itself refused 422, was being processed at that moment: the
	// correction held nothing.
	retry := keptRun()
	refuse(&retry, 409)
	retry.Attempts[1].Headers["Retry-After"] = "1"
	retry.Attempts[0].Arrived, retry.Attempts[0].AnsweredAt = 1, 6
	retry.Attempts[1].Arrived, retry.Attempts[1].AnsweredAt = 2, 4
	retry.Intents = append(retry.Intents, lab.Intent{ID: "i2", Customer: "cust-1", From: "alice", To: "bob", Amount: 700})
	retry.Attempts = append(retry.Attempts, lab.HandlerAttempt{ID: "a3", Intent: "i2", Customer: "cust-1", Key: `"k-1"`,
		Body: `{"from":"alice","to":"bob","amount":700}`, Answered: true, Delivered: true, Status: 422,
		Headers: map[string]string{"Content-Type": "application/problem+json"}, Response: `{"status":422}`, Arrived: 3, AnsweredAt: 5})
	assert.Empty(t, lab.JudgeHandlerRun(retry).Notes, "a3 refused 422 held no key")
}

// TestJudgeHandlerRunJudgesATakeoverByItsRequest: a1 crashed without an
// answer; a2, a different request under its key, paid and answered 201.
// Whether a1's claim was ever committed its answers cannot tell: where a2
// took no row of a1's over, a2's INSERT found the key free, and rule 2
// holds. Where a2 took over the row a1 had written (the lab's database
// saw it), the takeover let a different request through: rule 2 breaks,
// and the cause is the takeover's missing fingerprint; unless a2 came
// after the published retention.
func TestJudgeHandlerRunJudgesATakeoverByItsRequest(t *testing.T) {
	r := twoRequestsOneKey(0)
	r.Attempts[0].Answered, r.Attempts[0].Delivered, r.Attempts[0].AnsweredAt = false, false, 0
	r.Attempts[0].Response, r.Attempts[0].Headers = "", nil
	r.Attempts[1].Arrived, r.Attempts[1].AnsweredAt = 3, 4
	rep := lab.JudgeHandlerRun(r)
	assert.True(t, rep.OK, "%+v", rep.Broken())

	r.TakenEnded = []lab.HandlerTakenLive{{Attempt: "a2", From: "a1", Table: "idem_keys"}}
	rr := lab.JudgeHandlerRun(r).Rule(lab.RuleNoSilentWrong)
	require.False(t, rr.OK)
	require.Len(t, rr.Violations, 1)
	assert.Equal(t, lab.CauseTakeoverUnfingerprinted, rr.Violations[0].Cause)
	assert.Contains(t, rr.Violations[0].Fix, "AND fingerprint = ?")
	assert.Equal(t, []string{"a1", "a2"}, rr.Violations[0].Lanes)

	// Ten minutes later, past a published retention of five: the key was
	// anyone's to claim again, and the takeover was the handler's to make.
	five := 300.0
	r.RetentionSeconds = &five
	r.Attempts[0].Now, r.Attempts[1].Now = 0, 10*60*1000
	assert.True(t, lab.JudgeHandlerRun(r).Rule(lab.RuleNoSilentWrong).OK)
}

// TestJudgeHandlerRunBlamesNoFingerprintForARace: two different requests
// under one key, both executed. Sent one after the other, the key alone
// decided (no-fingerprint); sent together, the claim did not stop the
// second (a key looked up before it is inserted), which no fingerprint
// would have changed: no cause is named, and the rule's fix is given.
func TestJudgeHandlerRunBlamesNoFingerprintForARace(t *testing.T) {
	r := twoRequestsOneKey(201)
	r.Attempts[0].Response, r.Attempts[0].Headers = answer, map[string]string{"Content-Type": "application/json"}
	r.Transfers = append(r.Transfers, lab.HandlerTransfer{ID: 2, From: "alice", To: "bob", Amount: 500, Attempt: "a1"})
	r.Charges = append(r.Charges, lab.HandlerCharge{ID: "ch_2", Attempt: "a1", Amount: 500})
	r.EndBalances = map[string]int64{"alice": 998800, "bob": 1200}
	rr := lab.JudgeHandlerRun(r).Rule(lab.RuleNoSilentWrong)
	require.Len(t, rr.Violations, 1)
	assert.Empty(t, rr.Violations[0].Cause, "sent together")
	assert.Contains(t, rr.Violations[0].Fix, "store a fingerprint")

	r.Attempts[1].Arrived = 3
	rr = lab.JudgeHandlerRun(r).Rule(lab.RuleNoSilentWrong)
	require.Len(t, rr.Violations, 1)
	assert.Equal(t, lab.CauseNoFingerprint, rr.Violations[0].Cause, "one after the other")
}

// TestJudgeHandlerRunKeysNoFailedRequest: the first request threw (500)
// and released its claim; the corrected amount under the same key was
// then executed. A failure binds the key to nothing: no rule breaks.
func TestJudgeHandlerRunKeysNoFailedRequest(t *testing.T) {
	rep := lab.JudgeHandlerRun(twoRequestsOneKey(500))
	assert.True(t, rep.Rule(lab.RuleNoSilentWrong).OK, "%+v", rep.Rule(lab.RuleNoSilentWrong).Violations)
}

// TestJudgeHandlerRunBlamesTheTakeoverForWhatFollows: after a2, another
// request, took over the claim crashed a1 had left, a3 (a1's own retry)
// was handed a2's answer: rule 4 breaks too (a success without a transfer
// of its intent), and its cause is the takeover, not the in-progress
// state.
func TestJudgeHandlerRunBlamesTheTakeoverForWhatFollows(t *testing.T) {
	r := twoRequestsOneKey(0)
	r.Attempts[0].Answered, r.Attempts[0].Delivered, r.Attempts[0].AnsweredAt = false, false, 0
	r.Attempts[0].Response, r.Attempts[0].Headers = "", nil
	r.Attempts[1].Arrived, r.Attempts[1].AnsweredAt = 3, 4
	a3 := r.Attempts[1]
	a3.ID, a3.Intent, a3.Body, a3.Arrived, a3.AnsweredAt = "a3", "i1", body500, 5, 6
	a3.Headers = map[string]string{"Content-Type": "application/json", "Idempotent-Replayed": "true"}
	r.Attempts = append(r.Attempts, a3)
	r.TakenEnded = []lab.HandlerTakenLive{{Attempt: "a2", From: "a1", Table: "idem_keys"}}
	rep := lab.JudgeHandlerRun(r)
	for _, rule := range []lab.Rule{lab.RuleNoSilentWrong, lab.RuleNothingLost} {
		rr := rep.Rule(rule)
		require.False(t, rr.OK, "rule %d", rule.N)
		for _, v := range rr.Violations {
			assert.Equal(t, lab.CauseTakeoverUnfingerprinted, v.Cause, "rule %d: %s", rule.N, v.Message)
		}
	}
}

// TestJudgeHandlerRunSaysWhyThePaymentWasRefused: a handler threw the
// network's refusal of a key it had seen with another payment. The 500's
// note says what the refusal means, not only where it was thrown.
func TestJudgeHandlerRunSaysWhyThePaymentWasRefused(t *testing.T) {
	r := twoRequestsOneKey(500)
	r.Attempts[0].Threw = `PaymentError at line 72: key "[\"cust-1\",\"k-1\"]" was first used for another payment (700 won from alice to bob)`
	notes := lab.JudgeHandlerRun(r).Notes
	require.NotEmpty(t, notes)
	assert.Equal(t, lab.CauseHandlerFailed, notes[0].Cause)
	assert.Contains(t, notes[0].Message, "the network had seen the key passed to pay with another payment")
	assert.Contains(t, notes[0].MessageKo, "결제망은 pay에 넘긴 키를")
}

// TestJudgeHandlerRunNamesAReplacedClaim: a2's INSERT OR REPLACE made a1's
// claim its own and a2 paid again (rule 1). The lab saw the row change
// hands by an INSERT: the cause is the replaced claim, not a takeover.
func TestJudgeHandlerRunNamesAReplacedClaim(t *testing.T) {
	r := keptRun()
	r.Attempts[1].Response, r.Attempts[1].Headers = answerTr, map[string]string{"Content-Type": "application/json"}
	r.Transfers = append(r.Transfers, lab.HandlerTransfer{ID: 2, From: "alice", To: "bob", Amount: 500, Attempt: "a2"})
	r.Charges = append(r.Charges, lab.HandlerCharge{ID: "ch_2", Attempt: "a2", Amount: 500})
	r.EndBalances = map[string]int64{"alice": 999000, "bob": 1000}
	r.KeysRead = true
	r.Takeovers = []lab.HandlerTakeover{{Attempt: "a2", Key: `"k-1"`, From: "a1", Insert: true}}
	rr := lab.JudgeHandlerRun(r).Rule(lab.RuleOneTransfer)
	require.False(t, rr.OK)
	assert.Equal(t, lab.CauseClaimReplaced, rr.Violations[0].Cause)
	assert.Contains(t, rr.Violations[0].Fix, "never OR REPLACE")

	r.Takeovers[0].Insert = false
	assert.NotEqual(t, lab.CauseClaimReplaced, lab.JudgeHandlerRun(r).Rule(lab.RuleOneTransfer).Violations[0].Cause)
}

// networkRun is the network scenarios' run as a handler that keeps the
// contract plays it: a1's pay fails (fault) and a1 answers 500 with its
// claim released; a2, the retry, claims afresh, pays with the request's
// key and answers 201. Where the network charged a1 (lost), a2's call
// is answered with that charge.
func networkRun(fault string) lab.HandlerRun {
	r := keptRun()
	r.Scenario = "network-" + map[string]string{"lost": "answer-lost", "down": "down"}[fault]
	a1 := &r.Attempts[0]
	a1.PayFault, a1.Delivered, a1.Status, a1.Arrived, a1.AnsweredAt = fault, true, 500, 1, 3
	a1.Threw, a1.Response = "NetworkError: the payment network did not answer in time", ""
	a1.Headers = map[string]string{}
	a2 := &r.Attempts[1]
	a2.Arrived, a2.AnsweredAt = 4, 9
	a2.Headers = map[string]string{"Content-Type": "application/json"}
	r.Transfers[0].Attempt = "a2"
	r.Charges[0].Attempt, r.Charges[0].NetworkKey = "a2", `["cust-1","k-1"]`
	if fault == "lost" {
		r.Charges[0].Attempt = "a1"
	}
	return r
}

// noteCausesOf lists the causes of a report's notes.
func noteCausesOf(rep lab.Report) []string {
	var out []string
	for _, n := range rep.Notes {
		out = append(out, n.Cause)
	}
	return out
}

// TestJudgeHandlerRunHoldsARetryAfterTheNetworkFailed: the handler that
// keeps the contract is neither noted nor broken when the network fails
// its first call: a1's 500 is the answer to that, not a handler failure.
func TestJudgeHandlerRunHoldsARetryAfterTheNetworkFailed(t *testing.T) {
	for _, fault := range []string{"lost", "down"} {
		rep := lab.JudgeHandlerRun(networkRun(fault))
		assert.True(t, rep.OK, "%s: %v", fault, rep.Broken())
		assert.Empty(t, noteCausesOf(rep), fault)
	}
	// The network's words thrown on in a string of the handler's own are
	// the network's failure still (the sixteenth simulated student's).
	r := networkRun("down")
	r.Attempts[0].Threw = "Error: transfer failed: the payment network did not answer in time: it may or may not have charged"
	assert.Empty(t, noteCausesOf(lab.JudgeHandlerRun(r)))
	// Another error thrown after the network's is the handler's own.
	r = networkRun("down")
	r.Attempts[0].Threw = "TypeError at line 12: row is undefined"
	assert.Equal(t, []string{lab.CauseHandlerFailed}, noteCausesOf(lab.JudgeHandlerRun(r)))
}

// TestJudgeHandlerRunNamesTheNetworksKeyAfterALostAnswer: the retry that
// paid again after the network's answer to a1 was lost breaks rule 8, for
// want of the key given to pay, not of a claim (both attempts answered);
// so do two attempts that each paid under a claim of their own with keys
// that differ; one attempt charged twice is named as such.
func TestJudgeHandlerRunNamesTheNetworksKeyAfterALostAnswer(t *testing.T) {
	r := networkRun("lost")
	r.Charges = []lab.HandlerCharge{{ID: "ch_1", Attempt: "a1", Amount: 500}, {ID: "ch_2", Attempt: "a2", Amount: 500}}
	rr := lab.JudgeHandlerRun(r).Rule(lab.RuleOneCharge)
	require.False(t, rr.OK)
	assert.Equal(t, lab.CauseNetworkKeyMissing, rr.Violations[0].Cause)
	assert.Contains(t, rr.Violations[0].Fix, "the same for every attempt of one request")
	// Without the lost answer, two live attempts that both paid: the claim,
	// unless the page saw each pay under a claim of its own.
	r.Attempts[0].PayFault = ""
	assert.Equal(t, lab.CausePaidUnclaimed, lab.JudgeHandlerRun(r).Rule(lab.RuleOneCharge).Violations[0].Cause)
	r.KeysRead, r.Claims = true, []string{"a1", "a2"}
	r.Charges[0].NetworkKey, r.Charges[1].NetworkKey = "a1", "a2"
	assert.Equal(t, lab.CauseNetworkKeyMissing, lab.JudgeHandlerRun(r).Rule(lab.RuleOneCharge).Violations[0].Cause)
	// One key for both: the network's key did its part (it cannot have
	// charged twice under it); whatever else happened, not this cause.
	r.Charges[1].NetworkKey = "a1"
	assert.NotEqual(t, lab.CauseNetworkKeyMissing, lab.JudgeHandlerRun(r).Rule(lab.RuleOneCharge).Violations[0].Cause)
	// One attempt charged twice.
	r.Charges[1].Attempt, r.Charges[1].NetworkKey = "a1", ""
	rr = lab.JudgeHandlerRun(r).Rule(lab.RuleOneCharge)
	require.False(t, rr.OK)
	assert.Equal(t, lab.CausePaidTwice, rr.Violations[0].Cause)
	assert.Contains(t, rr.Violations[0].Diagnosis, "one attempt called pay twice")
}

// TestJudgeHandlerRunSaysWhatBecameOfAFailedPayment: after the network
// failed a1's pay, the retry told 409 by the claim a1 kept, the retry
// handed a1's failure again, and a transfer the network never charged,
// each named; a crashed a1 is the lease's business.
func TestJudgeHandlerRunSaysWhatBecameOfAFailedPayment(t *testing.T) {
	kept := func(fault string) lab.HandlerRun {
		r := networkRun(fault)
		r.Transfers, r.EndBalances = nil, map[string]int64{"alice": 1000000, "bob": 0}
		r.Charges = r.Charges[:0]
		if fault == "lost" {
			r.Charges = []lab.HandlerCharge{{ID: "ch_1", Attempt: "a1", Amount: 500}}
		}
		return r
	}
	r := kept("lost")
	refuse(&r, 409)
	r.Attempts[1].Headers["Retry-After"] = "1"
	rep := lab.JudgeHandlerRun(r)
	require.Equal(t, []string{lab.CauseClaimNotReleased}, noteCausesOf(rep))
	assert.Contains(t, rep.Notes[0].Message, "a2 was told 409 (come back later) by a claim no one is working on; the network has charged for it, and no transfer was made")

	r = kept("down")
	r.Attempts[0].Response = `{"title":"Bad Gateway","status":502}`
	r.Attempts[0].Status, r.Attempts[0].Threw = 502, ""
	r.Attempts[1].Status, r.Attempts[1].Response = 502, r.Attempts[0].Response
	rep = lab.JudgeHandlerRun(r)
	require.Equal(t, []string{lab.CauseFailureStored}, noteCausesOf(rep))
	assert.Contains(t, rep.Notes[0].Message, "the network could not be reached and charged nothing when a1 called pay; a1 answered 502, and its retry a2 was handed the same 502 again")
	assert.NotContains(t, rep.Notes[0].Message, "has charged")

	// The transfer made though pay failed, replayed to the retry.
	r = networkRun("down")
	r.Transfers[0].Attempt, r.Charges = "a1", nil
	r.Attempts[0].Status, r.Attempts[0].Threw, r.Attempts[0].Response = 201, "", answer
	r.Attempts[0].Headers = map[string]string{"Content-Type": "application/json"}
	r.Attempts[1].Headers["Idempotent-Replayed"] = "true"
	rep = lab.JudgeHandlerRun(r)
	require.Equal(t, []string{lab.CauseTransferUnpaid}, noteCausesOf(rep))
	assert.Contains(t, rep.Notes[0].Message, "the network could not be reached and charged nothing when a1 called pay, yet a1 made transfer tr_1 (500 won from alice to bob), and the network was never charged for its request")
	// A pay left without its await fails unseen in the same way: the
	// cause's words name it beside a swallowed error.
	assert.Contains(t, rep.Notes[0].Diagnosis, "pay was called without await so that its error was never seen")
	assert.Contains(t, rep.Notes[0].DiagnosisKo, "pay를 await 없이 불러 그 오류를 보지 못했거나")
	assert.Contains(t, rep.Notes[0].Fix, "call await pay(…) before db.begin()")
	// Paid after COMMIT, and crashed between the two: no network failure.
	r = keptRun()
	r.Charges = nil
	r.Attempts[0].Answered, r.Attempts[0].Status = false, 0
	rep = lab.JudgeHandlerRun(r)
	require.Equal(t, []string{lab.CauseTransferUnpaid}, noteCausesOf(rep))
	assert.True(t, strings.HasPrefix(rep.Notes[0].Message, "a1 made transfer tr_1"), rep.Notes[0].Message)
	// Answered with another customer's charge under a shared network key:
	// the network answered the call, and network-key-shared says the rest.
	r = keptRun()
	r.Charges = nil
	r.Attempts[0].Pays = []lab.HandlerPay{{NetworkKey: "k-1", Outcome: "replayed", Charge: "ch_9"}}
	assert.NotContains(t, noteCausesOf(lab.JudgeHandlerRun(r)), lab.CauseTransferUnpaid)

	// a1 crashed: no note (its claim is the lease's to settle).
	r = kept("lost")
	refuse(&r, 409)
	r.Attempts[1].Headers["Retry-After"] = "1"
	r.Attempts[0].Answered, r.Attempts[0].Status = false, 0
	assert.Empty(t, noteCausesOf(lab.JudgeHandlerRun(r)))
}

// TestJudgeHandlerRunSaysTheLookupForgotTheCustomer: cust-2's transfer
// under cust-1's key string, answered 201 and lost; its retry refused 422,
// where only cust-1's request under that key differs from it: the lookup
// read cust-1's row (keys global to the handler's reads), whatever the key
// table's primary key says. Refused where cust-2 itself had sent a
// different request under the key, the 422 is its own business.
func TestJudgeHandlerRunSaysTheLookupForgotTheCustomer(t *testing.T) {
	r := keptRun()
	body2 := `{"from":"carol","to":"bob","amount":500}`
	r.Intents = append(r.Intents, lab.Intent{ID: "i2", Customer: "cust-2", From: "carol", To: "bob", Amount: 500})
	r.StartBalances["carol"], r.EndBalances["carol"] = 1000, 500
	r.EndBalances["bob"] = 1000
	r.Attempts[0].Delivered = true
	r.Attempts[0].Headers = map[string]string{"Content-Type": "application/json"}
	a2 := lab.HandlerAttempt{ID: "a2", Intent: "i2", Customer: "cust-2", Key: `"k-1"`, Body: body2, Answered: true, Status: 201,
		Headers: map[string]string{"Content-Type": "application/json"}, Response: answerTr, Arrived: 3, AnsweredAt: 4}
	a3 := a2
	a3.ID, a3.Delivered, a3.Arrived, a3.AnsweredAt = "a3", true, 5, 6
	a3.Status, a3.Response = 422, `{"title":"This key was used for a different request","status":422}`
	a3.Headers = map[string]string{"Content-Type": "application/problem+json"}
	r.Attempts = []lab.HandlerAttempt{r.Attempts[0], a2, a3}
	r.Attempts[0].Arrived, r.Attempts[0].AnsweredAt = 1, 2
	r.Transfers = append(r.Transfers, lab.HandlerTransfer{ID: 2, From: "carol", To: "bob", Amount: 500, Attempt: "a2"})
	r.Charges = append(r.Charges, lab.HandlerCharge{ID: "ch_2", Attempt: "a2", Amount: 500})
	rr := lab.JudgeHandlerRun(r).Rule(lab.RuleByteReplay)
	require.False(t, rr.OK)
	assert.Equal(t, lab.CauseGlobalKeys, rr.Violations[0].Cause)

	// The same answers from a handler whose every statement on a key named
	// its customer (a traced run): the 422 came from cust-2's own row, a
	// fingerprint compared with something other than the stored one (the
	// sixteenth simulated student's), not from cust-1's.
	scoped := r
	scoped.KeysRead, scoped.KeysScoped = true, true
	rr = lab.JudgeHandlerRun(scoped).Rule(lab.RuleByteReplay)
	require.False(t, rr.OK)
	assert.Equal(t, lab.CauseFingerprintUnstable, rr.Violations[0].Cause)

	r.Attempts[0].Customer, r.Intents[0].Customer = "cust-2", "cust-2"
	rr = lab.JudgeHandlerRun(r).Rule(lab.RuleByteReplay)
	require.False(t, rr.OK)
	assert.NotEqual(t, lab.CauseGlobalKeys, rr.Violations[0].Cause)
}

// TestJudgeHandlerRunSaysWhereMoneyWentWrong: a debit written as a number
// read before (balance = ?) loses another transfer's debit. The rule's
// sentence writes the won as every other sentence does (1,000,000), and
// its fix names the guarded debit, not only the one transaction the
// student may already have.
func TestJudgeHandlerRunSaysWhereMoneyWentWrong(t *testing.T) {
	r := keptRun()
	r.EndBalances = map[string]int64{"alice": 1000000, "bob": 500}
	rep := lab.JudgeHandlerRun(r)
	var got *lab.Violation
	for _, rr := range rep.Rules {
		if rr.Rule.Name == lab.RuleConservation.Name && len(rr.Violations) > 0 {
			got = &rr.Violations[0]
		}
	}
	require.NotNil(t, got, "%+v", rep.Rules)
	assert.Equal(t, "account alice holds 1,000,000 won, but its ledger says 999,500", got.Message)
	assert.Equal(t, "계좌 alice에는 1,000,000원이 있지만, 원장대로라면 999,500원이어야 합니다", got.MessageKo)
	assert.Contains(t, got.Fix, "AND balance >= ?")
	assert.Contains(t, got.FixKo, "AND balance >= ?")
}

// TestJudgeHandlerRunNotesAWaitForNobody: every attempt of a request told
// 409 while none was working on it (a catch-all around the key's INSERT
// answering 409 to a table that was never made) breaks no rule, since
// nothing moved and nothing was said wrong; the request is never served,
// and that is noted. A 409 beside an attempt that did the work, or one
// that crashed holding the claim, is no such wait.
func TestJudgeHandlerRunNotesAWaitForNobody(t *testing.T) {
	never := func() lab.HandlerRun {
		r := keptRun()
		refuse(&r, 409)
		r.Attempts[0].Status, r.Attempts[0].Response, r.Attempts[0].Headers = r.Attempts[1].Status, r.Attempts[1].Response, r.Attempts[1].Headers
		r.Transfers, r.Charges, r.EndBalances = nil, nil, r.StartBalances
		return r
	}
	rep := lab.JudgeHandlerRun(never())
	assert.True(t, rep.OK, "no rule breaks")
	i := slices.IndexFunc(rep.Notes, func(n lab.Note) bool { return n.Cause == lab.CauseWaitForNobody })
	require.GreaterOrEqual(t, i, 0, "%v", rep.Notes)
	assert.Equal(t, []string{"a1", "a2"}, rep.Notes[i].Lanes)
	assert.Equal(t, "every attempt of i1 was told to come back later (a1 409, a2 409), and none of them, nor any other attempt under its key, was working on it: the request is never served, however long its client retries", rep.Notes[i].Message)
	assert.Contains(t, rep.Notes[i].MessageKo, "i1의 모든 시도가")
	assert.Contains(t, rep.Notes[i].Fix, "e.name is 'ConstraintError'")

	// The error the catch went on past is said, at its line.
	r := never()
	r.Attempts[0].Failed = []lab.HandlerCall{{Op: "rollback", Failed: "SQLError", Message: "no transaction is active"},
		{Op: "run", Line: 20, Failed: "SQLError", Message: "table idem_keys has no column named lease_untill"}}
	rep = lab.JudgeHandlerRun(r)
	i = slices.IndexFunc(rep.Notes, func(n lab.Note) bool { return n.Cause == lab.CauseWaitForNobody })
	require.GreaterOrEqual(t, i, 0, "%v", rep.Notes)
	assert.True(t, strings.HasSuffix(rep.Notes[i].Message, "; a1's db.run at line 20 failed with SQLError (table idem_keys has no column named lease_untill), and the handler went on past it"), rep.Notes[i].Message)
	assert.Contains(t, rep.Notes[i].MessageKo, "20번째 줄의 db.run 호출이 SQLError 오류")

	for name, change := range map[string]func(*lab.HandlerRun){
		"a1 did the work": func(r *lab.HandlerRun) {
			k := keptRun()
			r.Attempts[0], r.Transfers, r.Charges, r.EndBalances = k.Attempts[0], k.Transfers, k.Charges, k.EndBalances
		},
		"a1 crashed holding the claim": func(r *lab.HandlerRun) {
			r.Attempts[0].Answered, r.Attempts[0].Status, r.Attempts[0].Response = false, 0, ""
		},
	} {
		r := never()
		change(&r)
		assert.NotContains(t, noteCausesOf(lab.JudgeHandlerRun(r)), lab.CauseWaitForNobody, name)
	}
}

// TestJudgeHandlerRunBlamesAClaimLostAndUsed: a2 took over the claim of a
// stalled a1, and a1, resuming, completed and moved the money all the
// same (its completion's changes never read): rule 1 breaks, and the
// cause is the takeover's check, not a claim never made.
func TestJudgeHandlerRunBlamesAClaimLostAndUsed(t *testing.T) {
	r := keptRun()
	r.Transfers = append(r.Transfers, lab.HandlerTransfer{ID: 2, From: "alice", To: "bob", Amount: 500, Attempt: "a2"})
	r.EndBalances = map[string]int64{"alice": 999000, "bob": 1000}
	r.KeysRead = true
	rr := lab.JudgeHandlerRun(r).Rule(lab.RuleOneTransfer)
	require.False(t, rr.OK)
	assert.NotEqual(t, lab.CauseTakeoverUnchecked, rr.Violations[0].Cause, "no takeover, no takeover's cause")
	r.Takeovers = []lab.HandlerTakeover{{Attempt: "a2", From: "a1", Key: `"k-1"`}}
	rr = lab.JudgeHandlerRun(r).Rule(lab.RuleOneTransfer)
	require.False(t, rr.OK)
	assert.NotEqual(t, lab.CauseTakeoverUnchecked, rr.Violations[0].Cause, "taken once a1 had ended: a purge's or a crash's story")
	r.TakenLive = []lab.HandlerTakenLive{{Attempt: "a2", From: "a1", Table: "idem_keys"}}
	rr = lab.JudgeHandlerRun(r).Rule(lab.RuleOneTransfer)
	require.False(t, rr.OK)
	assert.Equal(t, lab.CauseTakeoverUnchecked, rr.Violations[0].Cause)
}

// TestJudgeHandlerRunNotesARefusalNotReturned: a refusal built with
// lab.problem and dropped, a success answered: noted at its line, and the
// cause of the rule it broke.
func TestJudgeHandlerRunNotesARefusalNotReturned(t *testing.T) {
	r := keptRun()
	r.Transfers, r.Charges, r.EndBalances = nil, nil, r.StartBalances
	r.Attempts[1].Unreturned = []lab.HandlerCall{{Op: "problem", Line: 26, Status: 422}}
	rep := lab.JudgeHandlerRun(r)
	i := slices.IndexFunc(rep.Notes, func(n lab.Note) bool { return n.Cause == lab.CauseAnswerUnreturned })
	require.GreaterOrEqual(t, i, 0, "%v", rep.Notes)
	assert.Equal(t, "a2 built the refusal lab.problem(422, …) at line 26 and never returned it: the code went on past it and answered 201", rep.Notes[i].Message)
	rr := rep.Rule(lab.RuleNothingLost)
	require.False(t, rr.OK)
	assert.Equal(t, lab.CauseAnswerUnreturned, rr.Violations[0].Cause)
}

// TestJudgeHandlerRunNotesAClaimLeftByAnAnswer: a1 answered 402 and left
// its claim in progress (a return before the key was completed); its
// retry a2, sent after that answer with no one else running, was told
// 409. No rule sees it; the note names both attempts.
func TestJudgeHandlerRunNotesAClaimLeftByAnAnswer(t *testing.T) {
	left := func() lab.HandlerRun {
		r := keptRun()
		r.Attempts[0].Status, r.Attempts[0].Response = 402, `{"title":"Insufficient funds","status":402}`
		r.Attempts[0].Headers = map[string]string{"Content-Type": "application/problem+json"}
		r.Attempts[0].Delivered = true
		refuse(&r, 409)
		r.Attempts[0].Arrived, r.Attempts[0].AnsweredAt = 1, 5
		r.Attempts[1].Arrived, r.Attempts[1].AnsweredAt = 10, 12
		r.Transfers, r.Charges, r.EndBalances = nil, nil, r.StartBalances
		return r
	}
	rep := lab.JudgeHandlerRun(left())
	assert.True(t, rep.OK, "no rule breaks: %v", rep.Broken())
	i := slices.IndexFunc(rep.Notes, func(n lab.Note) bool { return n.Cause == lab.CauseClaimLeft })
	require.GreaterOrEqual(t, i, 0, "%v", rep.Notes)
	assert.Equal(t, []string{"a1", "a2"}, rep.Notes[i].Lanes)
	assert.Equal(t, "a1 answered 402 and left its claim in progress: its retry a2, sent after that answer, was told 409 (come back later) by a claim no attempt was working on", rep.Notes[i].Message)
	assert.Contains(t, rep.Notes[i].MessageKo, "a1 시도는 402 응답을 보내면서")
	assert.Contains(t, rep.Notes[i].Fix, "settle the claim on every path that answers")
	assert.NotContains(t, noteCausesOf(rep), lab.CauseWaitForNobody, "a1 was not told to wait")

	for name, change := range map[string]func(*lab.HandlerRun){
		"a1 still running when a2 came": func(r *lab.HandlerRun) { r.Attempts[0].AnsweredAt = 11 },
		"a1 crashed holding the claim": func(r *lab.HandlerRun) {
			r.Attempts[0].Answered, r.Attempts[0].Status, r.Attempts[0].Response = false, 0, ""
		},
		"a1 failed with a 5xx": func(r *lab.HandlerRun) { r.Attempts[0].Status = 502 },
		"a2 another request":   func(r *lab.HandlerRun) { r.Attempts[1].Body = `{"from":"alice","to":"bob","amount":700}` },
		"a2 got the 402 again": func(r *lab.HandlerRun) {
			r.Attempts[1].Status, r.Attempts[1].Response, r.Attempts[1].Headers = 402, r.Attempts[0].Response, r.Attempts[0].Headers
		},
		"the clock not told": func(r *lab.HandlerRun) { r.Attempts[1].Arrived = 0 },
	} {
		r := left()
		change(&r)
		assert.NotContains(t, noteCausesOf(lab.JudgeHandlerRun(r)), lab.CauseClaimLeft, name)
	}
}

// refusedWhileRunning is keptRun with the retry a2, the very same request,
// arriving while a1 ran and refused with status before a1 answered.
func refusedWhileRunning(status int) lab.HandlerRun {
	r := keptRun()
	refuse(&r, status)
	r.Attempts[0].Arrived, r.Attempts[0].AnsweredAt = 1, 4
	r.Attempts[1].Arrived, r.Attempts[1].AnsweredAt = 2, 3
	return r
}

// noteIndex is the index of rep's first note of cause; the test stops
// when there is none.
func noteIndex(t *testing.T, rep lab.Report, cause string) int {
	t.Helper()
	i := slices.IndexFunc(rep.Notes, func(n lab.Note) bool { return n.Cause == cause })
	require.GreaterOrEqual(t, i, 0, "no note %s in %v", cause, rep.Notes)
	return i
}

// TestJudgeHandlerRunSaysAFingerprintChangesPerAttempt: the retry sent
// the very bytes of a1 under the same key and customer, and was refused
// 422 (the eleventh simulated student put req.attempt in the
// fingerprint). No rule judges a 422, which is no replay; a note names
// both attempts and the fingerprint, where the grade used to guess
// another customer's key or the body's spacing from other scenarios.
func TestJudgeHandlerRunSaysAFingerprintChangesPerAttempt(t *testing.T) {
	refused := func() lab.HandlerRun { return refusedWhileRunning(422) }
	rep := lab.JudgeHandlerRun(refused())
	i := noteIndex(t, rep, lab.CauseFingerprintUnstable)
	assert.Equal(t, []string{"a1", "a2"}, rep.Notes[i].Lanes)
	assert.Equal(t, "a2 sent the very bytes of a1's request, under the same key and from the same customer, and was refused 422 as a different request: the fingerprints of two attempts of one request compared as different", rep.Notes[i].Message)
	assert.Contains(t, rep.Notes[i].Fix, "not req.attempt, not req.now")
	assert.Contains(t, rep.Notes[i].Fix, "row.fingerprint !== fingerprint", "or the comparison (the twelfth simulated student compared with an object)")
	assert.Contains(t, rep.Notes[i].MessageKo, "바이트까지 같은 요청")

	for name, change := range map[string]func(*lab.HandlerRun){
		"re-spaced, another note's": func(r *lab.HandlerRun) {
			r.Attempts[1].Body = strings.Replace(r.Attempts[1].Body, ",", ", ", 1)
		},
		"another customer used the key string": func(r *lab.HandlerRun) {
			r.Attempts = append(r.Attempts, lab.HandlerAttempt{ID: "a3", Intent: "i2", Customer: "cust-2", Key: `"k-1"`,
				Body: `{"from":"carol","to":"bob","amount":500}`, Answered: true, Status: 201})
		},
		"the retry answered 201": func(r *lab.HandlerRun) { r.Attempts[1] = keptRun().Attempts[1] },
	} {
		r := refused()
		change(&r)
		assert.NotContains(t, noteCausesOf(lab.JudgeHandlerRun(r)), lab.CauseFingerprintUnstable, name)
	}
}

// TestJudgeHandlerRunNotesA429ForAKeyInProgress: a2, the same request
// as a1 under its key, came while a1 ran and was answered 429 (the
// eleventh simulated student's handler passed the grade so): the contract
// answers 409.
func TestJudgeHandlerRunNotesA429ForAKeyInProgress(t *testing.T) {
	busy := func() lab.HandlerRun { return refusedWhileRunning(429) }
	rep := lab.JudgeHandlerRun(busy())
	i := noteIndex(t, rep, lab.CauseInProgressNot409)
	assert.Equal(t, "a2 was answered 429 while a1, the same request under its key, was still running: the contract answers 409 Conflict with Retry-After: 1 while a key is in progress", rep.Notes[i].Message)
	for name, change := range map[string]func(*lab.HandlerRun){
		"a1 had answered":  func(r *lab.HandlerRun) { r.Attempts[1].Arrived, r.Attempts[1].AnsweredAt = 5, 6 },
		"a 409":            func(r *lab.HandlerRun) { refuse(r, 409) },
		"another request":  func(r *lab.HandlerRun) { r.Attempts[1].Body = `{"from":"alice","to":"bob","amount":700}` },
		"the clock untold": func(r *lab.HandlerRun) { r.Attempts[1].AnsweredAt = 0 },
	} {
		r := busy()
		change(&r)
		assert.NotContains(t, noteCausesOf(lab.JudgeHandlerRun(r)), lab.CauseInProgressNot409, name)
	}
}

// TestJudgeHandlerRunNotesARefusalThatIsNoProblem: a 422 with no body and
// a 409 with no Content-Type passed the rung (the twelfth and thirteenth
// simulated students); the contract's errors are application/problem+json.
func TestJudgeHandlerRunNotesARefusalThatIsNoProblem(t *testing.T) {
	r := keptRun()
	otherCustomer(&r)
	r.Attempts[0].Delivered = true
	r.Transfers, r.Charges, r.EndBalances = r.Transfers[:1], r.Charges[:1], map[string]int64{"alice": 999500, "bob": 500}
	r.Attempts[1].Headers, r.Attempts[1].Response = map[string]string{}, ""
	i := slices.IndexFunc(lab.JudgeHandlerRun(r).Notes, func(n lab.Note) bool { return n.Cause == lab.CauseRefusalNotProblem })
	require.GreaterOrEqual(t, i, 0, "%v", lab.JudgeHandlerRun(r).Notes)
	assert.Equal(t, "a2 was refused 422 with no Content-Type and an empty body; the contract's errors are application/problem+json", lab.JudgeHandlerRun(r).Notes[i].Message)
	r.Attempts[1].Headers, r.Attempts[1].Response = map[string]string{"Content-Type": "application/problem+json; charset=utf-8"}, `{"status":422}`
	assert.NotContains(t, noteCausesOf(lab.JudgeHandlerRun(r)), lab.CauseRefusalNotProblem)
}

// TestJudgeHandlerRunSaysAnUnguardedDebit: a debit without AND balance >=
// threw the accounts table's CHECK after the network had charged (the
// thirteenth simulated student): the note says the guard and the charge
// with no transfer, where the fix's words alone pointed at the key's
// INSERT.
func TestJudgeHandlerRunSaysAnUnguardedDebit(t *testing.T) {
	r := keptRun()
	r.Attempts[0].Status, r.Attempts[0].Response, r.Attempts[0].Delivered = 500, "", true
	r.Attempts[0].Threw = "ConstraintError at line 41: CHECK constraint failed: balance >= 0"
	r.Attempts = r.Attempts[:1]
	r.Transfers, r.EndBalances = nil, r.StartBalances
	i := slices.IndexFunc(lab.JudgeHandlerRun(r).Notes, func(n lab.Note) bool { return n.Cause == lab.CauseHandlerFailed })
	require.GreaterOrEqual(t, i, 0)
	n := lab.JudgeHandlerRun(r).Notes[i]
	assert.Contains(t, n.Message, "guard the debit (UPDATE accounts SET balance = balance - ? WHERE id = ? AND balance >= ?)")
	assert.Contains(t, n.Message, "the network had charged it (ch_1), and no transfer was made")
	assert.Contains(t, n.MessageKo, "결제망은 이 시도에 청구했는데(ch_1)")
}

// TestAFailedAnswersFixSpeaksOfTheClaimOnlyForAConstraintError: a 500
// whose handler threw a ConstraintError is told that the claim's refusal
// is the verdict to catch; a 500 for another reason (a ROLLBACK with no
// transaction open, as the fourteenth simulated student's) is not.
func TestAFailedAnswersFixSpeaksOfTheClaimOnlyForAConstraintError(t *testing.T) {
	fixOf := func(threw string) string {
		r := lab.HandlerRun{
			Intents:       []lab.Intent{{ID: "i1", Customer: "cust-1", From: "alice", To: "bob", Amount: 200000}},
			StartBalances: map[string]int64{"alice": 1000000, "bob": 0},
			EndBalances:   map[string]int64{"alice": 1000000, "bob": 0},
			Attempts: []lab.HandlerAttempt{{ID: "a1", Intent: "i1", Customer: "cust-1", Key: `"k-1"`, Answered: true, Delivered: true,
				Status: 500, Threw: threw, Body: `{"from":"alice","to":"bob","amount":200000}`}},
		}
		for _, n := range lab.JudgeHandlerRun(r).Notes {
			if n.Cause == lab.CauseHandlerFailed {
				return n.Fix
			}
		}
		t.Fatalf("no note of a 500 for %q", threw)
		return ""
	}
	assert.Contains(t, fixOf("ConstraintError at line 30: UNIQUE constraint failed: idem_keys.idem_key"), "A ConstraintError from your key's INSERT is not a failure")
	assert.NotContains(t, fixOf("SQLError at line 56: cannot rollback - no transaction is active"), "ConstraintError")
}

// TestANetworkFailureAnsweredAsSettledIsNamed: the network failed a1's
// pay, a1 answered 402 and completed its key, and its retry a2 was told
// the key was done (200, no transfer): rule 4 is put down to the failure
// taken for the request's answer, not to a generic replay.
func TestANetworkFailureAnsweredAsSettledIsNamed(t *testing.T) {
	body := `{"from":"alice","to":"bob","amount":200000}`
	r := lab.HandlerRun{
		Intents:       []lab.Intent{{ID: "i1", Customer: "cust-1", From: "alice", To: "bob", Amount: 200000}},
		StartBalances: map[string]int64{"alice": 1000000, "bob": 0},
		EndBalances:   map[string]int64{"alice": 1000000, "bob": 0},
		Charges:       []lab.HandlerCharge{{ID: "ch_1", Attempt: "a1", Amount: 200000}},
		Attempts: []lab.HandlerAttempt{
			{ID: "a1", Intent: "i1", Customer: "cust-1", Key: `"k-1"`, Body: body, Answered: true, Delivered: true, PayFault: "lost",
				Status: 402, Headers: map[string]string{"Content-Type": "application/problem+json"}, Response: `{"type":"about:blank","title":"Payment failed","status":402}`,
				Pays: []lab.HandlerPay{{Outcome: "lost", Charge: "ch_1"}}, Arrived: 1, AnsweredAt: 2},
			{ID: "a2", Intent: "i1", Customer: "cust-1", Key: `"k-1"`, Body: body, Answered: true, Delivered: true,
				Status: 200, Headers: map[string]string{"Content-Type": "application/json"}, Response: `{"status":"already processed"}`, Arrived: 3, AnsweredAt: 4},
		},
	}
	rep := lab.JudgeHandlerRun(r)
	rr := rep.Rule(lab.RuleNothingLost)
	require.False(t, rr.OK, "a success with no transfer behind it")
	assert.Equal(t, lab.CauseFailureCompleted, rr.Violations[0].Cause)
}

// TestAThrowAfterCommitThatFreedTheKeyIsNamed: a1 moved the money, then
// threw (its error path deleted the key), and its retry a2 moved it
// again: rule 1 is put down to the key released after the commit, not to
// a claim never made (the fourteenth simulated student was told to claim
// the key with one plain INSERT, which it did).
func TestAThrowAfterCommitThatFreedTheKeyIsNamed(t *testing.T) {
	body := `{"from":"alice","to":"bob","amount":200000}`
	ok := `{"transfer_id":"tr_2"}`
	r := lab.HandlerRun{
		Intents:       []lab.Intent{{ID: "i1", Customer: "cust-1", From: "alice", To: "bob", Amount: 200000}},
		StartBalances: map[string]int64{"alice": 1000000, "bob": 0},
		EndBalances:   map[string]int64{"alice": 600000, "bob": 400000},
		Transfers:     []lab.HandlerTransfer{{ID: 1, From: "alice", To: "bob", Amount: 200000, Attempt: "a1"}, {ID: 2, From: "alice", To: "bob", Amount: 200000, Attempt: "a2"}},
		Attempts: []lab.HandlerAttempt{
			{ID: "a1", Intent: "i1", Customer: "cust-1", Key: `"k-1"`, Body: body, Answered: true, Delivered: true, Status: 500,
				Threw: "TypeError at line 56: Cannot read properties of undefined (reading 'toString')", Arrived: 1, AnsweredAt: 2},
			{ID: "a2", Intent: "i1", Customer: "cust-1", Key: `"k-1"`, Body: body, Answered: true, Delivered: true,
				Status: 201, Headers: map[string]string{"Content-Type": "application/json"}, Response: ok, Arrived: 3, AnsweredAt: 4},
		},
	}
	rr := lab.JudgeHandlerRun(r).Rule(lab.RuleOneTransfer)
	require.False(t, rr.OK)
	assert.Equal(t, lab.CauseCompletedKeyReleased, rr.Violations[0].Cause)

	// The same two transfers, a1 answered 201 without throwing: not this.
	r.Attempts[0].Threw, r.Attempts[0].Status = "", 201
	assert.NotEqual(t, lab.CauseCompletedKeyReleased, lab.JudgeHandlerRun(r).Rule(lab.RuleOneTransfer).Violations[0].Cause)
}

// TestAWaitOfMinutesAndASuccessWithoutJSONAreNoted: two answers no rule
// judges, which the fourteenth simulated student's handlers gave and the
// page passed: a 409 with Retry-After: 1000 (milliseconds meant), and a
// 201 whose headers were left empty. Retry-After: 1 and a JSON success
// are not noted.
func TestAWaitOfMinutesAndASuccessWithoutJSONAreNoted(t *testing.T) {
	body := `{"from":"alice","to":"bob","amount":200000}`
	run := func(retryAfter, contentType string) lab.HandlerRun {
		return lab.HandlerRun{
			Intents:       []lab.Intent{{ID: "i1", Customer: "cust-1", From: "alice", To: "bob", Amount: 200000}},
			StartBalances: map[string]int64{"alice": 1000000, "bob": 0},
			EndBalances:   map[string]int64{"alice": 800000, "bob": 200000},
			Transfers:     []lab.HandlerTransfer{{ID: 1, From: "alice", To: "bob", Amount: 200000, Attempt: "a1"}},
			Attempts: []lab.HandlerAttempt{
				{ID: "a1", Intent: "i1", Customer: "cust-1", Key: `"k-1"`, Body: body, Answered: true, Delivered: true, Status: 201,
					Headers: map[string]string{"Content-Type": contentType}, Response: `{"transfer_id":"tr_1"}`, Arrived: 1, AnsweredAt: 4},
				{ID: "a2", Intent: "i1", Customer: "cust-1", Key: `"k-1"`, Body: body, Answered: true, Delivered: true, Status: 409,
					Headers:  map[string]string{"Content-Type": "application/problem+json", "Retry-After": retryAfter},
					Response: `{"type":"about:blank","title":"In progress","status":409}`, Arrived: 2, AnsweredAt: 3},
			},
		}
	}
	rep := lab.JudgeHandlerRun(run("1000", ""))
	assert.Contains(t, noteCausesOf(rep), lab.CauseRetryAfterLong)
	assert.Contains(t, noteCausesOf(rep), lab.CauseSuccessNotJSON)
	i := slices.IndexFunc(rep.Notes, func(n lab.Note) bool { return n.Cause == lab.CauseRetryAfterLong })
	assert.Contains(t, rep.Notes[i].Message, "Retry-After: 1000, a wait of 1,000 s (about 17 minutes)")

	rep = lab.JudgeHandlerRun(run("1", "application/json; charset=utf-8"))
	assert.NotContains(t, noteCausesOf(rep), lab.CauseRetryAfterLong)
	assert.NotContains(t, noteCausesOf(rep), lab.CauseSuccessNotJSON)
}

// TestASuccessNamingNoTransferIsNoted: a1 made transfer 1 and answered
// 201 {"transfer_id":"tr_undefined"} (an INSERT … RETURNING id given to
// db.all, its rows read as one row): noted; "tr_1" and "1" are not.
func TestASuccessNamingNoTransferIsNoted(t *testing.T) {
	run := func(id string) lab.HandlerRun { return oneTransferRun(`{"transfer_id":` + id + `}`) }
	rep := lab.JudgeHandlerRun(run(`"tr_undefined"`))
	require.Contains(t, noteCausesOf(rep), lab.CauseTransferIDWrong)
	i := slices.IndexFunc(rep.Notes, func(n lab.Note) bool { return n.Cause == lab.CauseTransferIDWrong })
	assert.Equal(t, `a1 made transfer 1 (row 1 of transfers) and answered 201 with transfer_id "tr_undefined", which does not name it`, rep.Notes[i].Message)
	for _, ok := range []string{`"tr_1"`, `"1"`, `1`} {
		assert.NotContains(t, noteCausesOf(lab.JudgeHandlerRun(run(ok))), lab.CauseTransferIDWrong, ok)
	}
}

// TestAThrowIsSaidAtItsLineInKorean: the Korean note of a 500 says the
// line in Korean; the error's name and message stay as thrown.
func TestAThrowIsSaidAtItsLineInKorean(t *testing.T) {
	r := lab.HandlerRun{
		Intents:       []lab.Intent{{ID: "i1", Customer: "cust-1", From: "alice", To: "bob", Amount: 200000}},
		StartBalances: map[string]int64{"alice": 1000000, "bob": 0},
		EndBalances:   map[string]int64{"alice": 1000000, "bob": 0},
		Attempts: []lab.HandlerAttempt{{ID: "a1", Intent: "i1", Customer: "cust-1", Key: `"k-1"`, Answered: true, Delivered: true,
			Status: 500, Threw: "TypeError at line 46: Cannot read properties of undefined (reading 'changes')", Body: `{"from":"alice","to":"bob","amount":200000}`}},
	}
	i := slices.IndexFunc(lab.JudgeHandlerRun(r).Notes, func(n lab.Note) bool { return n.Cause == lab.CauseHandlerFailed })
	require.GreaterOrEqual(t, i, 0)
	n := lab.JudgeHandlerRun(r).Notes[i]
	assert.Contains(t, n.MessageKo, "TypeError(46번째 줄): Cannot read properties of undefined (reading 'changes')")
	assert.Contains(t, n.Message, "TypeError at line 46: ")
}

// TestABalanceAfterReadBeforeTheDebitIsNoted: a1 moved 200,000 won from
// alice (1,000,000) and answered balance_after 1000000, the balance read
// before its debit (the sixteenth simulated student's): noted; 800000 is
// not. A run whose balances the ledger does not explain (a top-up) is
// not judged.
func TestABalanceAfterReadBeforeTheDebitIsNoted(t *testing.T) {
	run := func(after string) lab.HandlerRun {
		return oneTransferRun(`{"transfer_id":"tr_1","from":"alice","to":"bob","amount":200000,"balance_after":` + after + `}`)
	}
	rep := lab.JudgeHandlerRun(run("1000000"))
	require.Contains(t, noteCausesOf(rep), lab.CauseBalanceAfterWrong)
	i := slices.IndexFunc(rep.Notes, func(n lab.Note) bool { return n.Cause == lab.CauseBalanceAfterWrong })
	assert.Equal(t, "a1 answered 201 with balance_after 1000000, but alice's balance after its transfer was 800,000 won", rep.Notes[i].Message)
	assert.NotContains(t, noteCausesOf(lab.JudgeHandlerRun(run("800000"))), lab.CauseBalanceAfterWrong)
	topped := run("1000000")
	topped.EndBalances["alice"] = 2800000
	assert.NotContains(t, noteCausesOf(lab.JudgeHandlerRun(topped)), lab.CauseBalanceAfterWrong)
}

// oneTransferRun is a run of one attempt that moved 200,000 won from alice
// (1,000,000) to bob as transfer 1 and answered 201 with response.
func oneTransferRun(response string) lab.HandlerRun {
	return lab.HandlerRun{
		Intents:       []lab.Intent{{ID: "i1", Customer: "cust-1", From: "alice", To: "bob", Amount: 200000}},
		StartBalances: map[string]int64{"alice": 1000000, "bob": 0},
		EndBalances:   map[string]int64{"alice": 800000, "bob": 200000},
		Transfers:     []lab.HandlerTransfer{{ID: 1, From: "alice", To: "bob", Amount: 200000, Attempt: "a1"}},
		Attempts: []lab.HandlerAttempt{{ID: "a1", Intent: "i1", Customer: "cust-1", Key: `"k-1"`, Body: `{"from":"alice","to":"bob","amount":200000}`,
			Answered: true, Delivered: true, Status: 201, Headers: map[string]string{"Content-Type": "application/json"}, Response: response}},
	}
}
