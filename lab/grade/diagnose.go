package grade

import (
	"time"

	"idemlab/lab"
)

// ruleFixes say, per rule, what a student's endpoint must do when the grader
// could not tell the cause from the evidence.
var ruleFixes = map[string]string{
	lab.RuleOneTransfer.Name:   "claim the key before paying with one INSERT into a table whose primary key is (customer, endpoint, key), let the constraint error be the verdict, and keep an in_progress state so a simultaneous retry gets 409",
	lab.RuleNoSilentWrong.Name: "store a fingerprint of the request (SHA-256 of the canonical JSON body) with the key; a different request under a used key gets 422 and moves nothing",
	lab.RuleByteReplay.Name:    "store the first answer (status, headers, body) with the key and send those bytes again on every retry, with Idempotent-Replayed: true",
	lab.RuleNothingLost.Name:   "never answer success for a key whose transfer does not exist: complete the key in the same transaction as the transfer",
	lab.RuleOwnResponses.Name:  "scope keys by customer: the key table's primary key is (customer, endpoint, key), so one customer's key never meets another's",
	lab.RuleConservation.Name:  "debit and credit in one transaction; never create or destroy money",
	lab.RuleOneCharge.Name:     "pass the idempotency key (scoped by customer) to the payment processor with every charge, and record a recovery point before and after the call, so that a retry that takes a claim over gets the first charge back instead of charging again",
	lab.RuleRetention.Name:     "keep keys longer than clients retry (the lab's retry for up to an hour, so more than 3600 s) and publish it: GET {base} answers {\"retention_seconds\": N}",
}

// cause is one diagnosis: what the evidence shows went wrong, and the fix
// for that cause (not for the rule in general).
type cause struct {
	ID, Says, Fix string
}

// The causes the grader can tell apart from outside.
var (
	causeKeyOptional = &cause{"key-optional",
		"a transfer without Idempotency-Key was executed, so the client's retry of it was executed again",
		"answer 400 to a transfer without a valid Idempotency-Key, before anything is claimed or moved: without a key no retry can be recognised"}
	causeGlobalKeys = &cause{"global-keys",
		"keys are global: another customer's earlier use of the same key string decided this customer's request",
		"scope keys by customer: make the key table's primary key (customer, endpoint, key), so that each customer's new request under a key string someone else used is executed as the new request it is"}
	causeRawBytes = &cause{"raw-bytes-fingerprint",
		"the fingerprint compares the body's raw bytes: the same request with other spacing was taken for a different request",
		"fingerprint the canonical JSON of the body (RFC 8785: members sorted by name, no insignificant whitespace), so that re-spaced and reordered bodies are the same request"}
	causeOrderSensitive = &cause{"order-sensitive-fingerprint",
		"the fingerprint ignores whitespace but not the order of the members (a body parsed and written again without sorting, as JSON.stringify or json.dumps without sort_keys do)",
		"sort the members by name before hashing (RFC 8785; in Python json.dumps(..., sort_keys=True, separators=(\",\", \":\")), in Node a stringify that sorts keys), so that a client library that orders fields differently sends the same request"}
	causeNoFingerprint = &cause{"no-fingerprint",
		"the key alone decides: a different request under a used key was taken for a retry",
		"store a fingerprint of the request (SHA-256 of method, route and canonical JSON body) with the key; a different request under a used key gets 422 and moves nothing"}
	causeCompletedFirst = &cause{"completed-before-paid",
		"the key reads as done while its transfer is still running: a retry that arrived meanwhile was answered as if the work were finished",
		"keep the key in_progress while the transfer runs and answer 409 with Retry-After: 1 to a retry that arrives meanwhile; mark it completed, with the answer stored, in the transfer's own transaction"}
	causeGenericReplay = &cause{"generic-replay",
		"a retry was answered with a generic answer, not with the first answer",
		"store the first answer (status, body, the allowed headers) with the key and send those bytes again on every retry, with Idempotent-Replayed: true"}
	causeRecomputed = &cause{"recomputed-replay",
		"the retry's answer was rebuilt from the ledger as it is now, so its balance or time differ from the first answer's",
		"store the first answer's bytes with the key when the transfer commits, and send those bytes again; never render a replay anew"}
	causeReplayStatus = &cause{"replay-status",
		"the retry got the first answer's body with another status",
		"store the status with the body and replay both: a 201 is replayed as 201, not as a fixed 200"}
	causeRefusalNotStored = &cause{"refusal-not-stored",
		"a business refusal (402 or 404) was not stored under its key, so the retry, once the money or the account was there, was executed as a new request",
		"a refusal is an answer: store a 402 or 404 under its key like a success and replay it; release the claim (delete the key) only when the request failed with an exception and was never answered"}
	causeRefusalRerendered = &cause{"refusal-rerendered",
		"the stored refusal was rendered again (through an error handler) instead of replayed: the same status, other bytes",
		"store the refusal's status and body bytes with the key and send exactly those bytes again, as for a success"}
	causeStoredRefusal = &cause{"stored-validation-refusal",
		"a request refused 400 (bad body) or 401 (no customer) was stored under its key, so the repaired request under the same key got that refusal (or a 422) instead of being executed",
		"validate the headers and the body (401, then 400) before the key is claimed, and store nothing for them: only a request that passed validation claims its key; a middleware that stores every answer must skip 400 and 401"}
	causeInProcessLock = &cause{"in-process-lock",
		"the attempts under one key reached different replicas, while the same traffic sent to one replica kept the rule: what guards a key (a lock, or a cache of keys) lives in one process's memory, and the other replica has its own, so a retry there pays again",
		"claim the key in the shared database: one INSERT into a key table whose primary key (customer, endpoint, key) is a UNIQUE constraint, the constraint error being the verdict; a lock must be in the database too (the INSERT itself, or SELECT … FOR UPDATE on PostgreSQL), never a mutex, a dict or a cache in the server's memory"}
	causeShortRetention = &cause{"short-retention",
		"the published retention is not longer than the clients' retry horizon",
		"keep keys for longer than the clients retry: more than 3600 s for the lab (idemlab's scoped keeps 86400), and publish it at GET {base} as {\"retention_seconds\": N}"}
)

// setCause fills a failure's diagnosis and fix; without a cause, the fix is
// the rule's usual one.
func setCause(f *Failure, c *cause) {
	if c == nil {
		f.Cause, f.Diagnosis, f.Fix = "", "", ruleFixes[f.Rule]
		return
	}
	f.Cause, f.Diagnosis, f.Fix = c.ID, c.Says, c.Fix
}

// timing is when each attempt of a history was sent and when its answer
// arrived (or the grader cut it).
type timing struct{ sent, answered []time.Time }

// midTransfer reports whether attempt g was answered while another attempt
// under its key, one that carried the transfer (or whose answer was never
// read), was still in flight: a "done" given then was given before the work
// was.
func (tm timing) midTransfer(attempts []lab.Attempt, g int) bool {
	a := attempts[g]
	for x, b := range attempts {
		if x == g || b.Key != a.Key || b.Customer != a.Customer || b.Delivered && lab.TransferID(b.Response) == "" {
			continue
		}
		if tm.sent[x].Before(tm.answered[g]) && tm.answered[g].Before(tm.answered[x]) {
			return true
		}
	}
	return false
}

// diagnose sets the cause of a rule broken in a check from the evidence:
// the check that broke it, the attempts that show it (their indexes in
// attempts) and when each attempt was sent and answered.
func diagnose(f *Failure, check string, attempts []lab.Attempt, idx []int, tm timing) {
	busy := func(i int) bool { return tm.midTransfer(attempts, i) }
	var c *cause
	switch {
	case check == "other-customer" || f.RuleN == lab.RuleOwnResponses.N:
		c = causeGlobalKeys
	case f.RuleN == lab.RuleNothingLost.N && usedByOthers(attempts, idx):
		c = causeGlobalKeys
	case check == "missing-key" && f.RuleN == lab.RuleOneTransfer.N && anyKeyless(attempts, idx):
		c = causeKeyOptional
	case f.RuleN == lab.RuleNoSilentWrong.N:
		c = causeNoFingerprint
	case f.RuleN == lab.RuleByteReplay.N && len(idx) == 2:
		c = replayCause(attempts[idx[0]], attempts[idx[1]], busy(idx[0]), busy(idx[1]))
	case f.RuleN == lab.RuleNothingLost.N && check == "refusals" && len(idx) >= 2:
		// A refusal's retry was told success: which success says why.
		for _, i := range idx[1:] {
			if lab.Success(attempts[i].Status) {
				c = replayCause(attempts[idx[0]], attempts[i], busy(idx[0]), busy(i))
				break
			}
		}
	}
	setCause(f, c)
}

// usedByOthers reports whether another customer used the key of one of
// the attempts before it.
func usedByOthers(attempts []lab.Attempt, idx []int) bool {
	for _, i := range idx {
		for j := 0; j < i; j++ {
			if k := attempts[i].Key; k != "" && attempts[j].Key == k && attempts[j].Customer != attempts[i].Customer {
				return true
			}
		}
	}
	return false
}

func anyKeyless(attempts []lab.Attempt, idx []int) bool {
	for _, i := range idx {
		if attempts[i].Key == "" && lab.Success(attempts[i].Status) {
			return true
		}
	}
	return false
}

// replayCause tells why a retry's answer differs from the first one;
// firstBusy and retryBusy say whether each was answered while an attempt
// under the key that carried the transfer was still in flight.
func replayCause(first, retry lab.Attempt, firstBusy, retryBusy bool) *cause {
	firstID, retryID := lab.TransferID(first.Response), lab.TransferID(retry.Response)
	switch {
	case retry.Status != first.Status && string(retry.Response) == string(first.Response):
		return causeReplayStatus
	case first.Status == 402 || first.Status == 404:
		if retry.Status == first.Status {
			return causeRefusalRerendered
		}
		if lab.Success(retry.Status) && retryID != "" {
			return causeRefusalNotStored
		}
		return causeGenericReplay
	case lab.Success(retry.Status) && retryID == "" && firstID != "" ||
		lab.Success(first.Status) && firstID == "" && retryID != "":
		// A success that names no transfer: a generic "already processed".
		// Given while another attempt under the key was running, it says
		// the key was marked done before the work; given later, that
		// replays are generic.
		if firstID == "" && firstBusy || retryID == "" && retryBusy {
			return causeCompletedFirst
		}
		return causeGenericReplay
	case firstID != "" && retryID == firstID:
		return causeRecomputed
	}
	return nil
}
