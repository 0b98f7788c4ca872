package lab

// causes.go is what the grader and the browser's lab say when a rule
// broke: the cause the evidence shows, in words, and the fix for that
// cause; without one, the rule's usual fix.

// Cause is one diagnosis: what the evidence shows went wrong, and the fix
// for that cause (not for the rule in general).
type Cause struct {
	ID   string `json:"id"`
	Says string `json:"says"`
	Fix  string `json:"fix"`
}

// The causes the evidence can tell apart, by ID.
const (
	CauseKeyOptional       = "key-optional"
	CauseGlobalKeys        = "global-keys"
	CauseRawBytes          = "raw-bytes-fingerprint"
	CauseOrderSensitive    = "order-sensitive-fingerprint"
	CauseNoFingerprint     = "no-fingerprint"
	CauseCompletedFirst    = "completed-before-paid"
	CauseGenericReplay     = "generic-replay"
	CauseRecomputed        = "recomputed-replay"
	CauseReplayStatus      = "replay-status"
	CauseRefusalNotStored  = "refusal-not-stored"
	CauseRefusalRerendered = "refusal-rerendered"
	CauseStoredRefusal     = "stored-validation-refusal"
	CauseInProcessLock     = "in-process-lock"
	CauseShortRetention    = "short-retention"
)

// CauseOf returns the cause with that ID (a copy), and whether there is one.
func CauseOf(id string) (Cause, bool) {
	c, ok := causes[id]
	return c, ok
}

// RuleFix is what a student's endpoint must do to keep the rule named
// name when the evidence does not tell the cause.
func RuleFix(name string) string { return ruleFixes[name] }

var causes = map[string]Cause{
	CauseKeyOptional: {CauseKeyOptional,
		"a transfer without Idempotency-Key was executed, so the client's retry of it was executed again",
		"answer 400 to a transfer without a valid Idempotency-Key, before anything is claimed or moved: without a key no retry can be recognised"},
	CauseGlobalKeys: {CauseGlobalKeys,
		"keys are global: another customer's earlier use of the same key string decided this customer's request",
		"scope keys by customer: make the key table's primary key (customer, endpoint, key), so that each customer's new request under a key string someone else used is executed as the new request it is"},
	CauseRawBytes: {CauseRawBytes,
		"the fingerprint compares the body's raw bytes: the same request with other spacing was taken for a different request",
		"fingerprint the canonical JSON of the body (RFC 8785: members sorted by name, no insignificant whitespace), so that re-spaced and reordered bodies are the same request"},
	CauseOrderSensitive: {CauseOrderSensitive,
		"the fingerprint ignores whitespace but not the order of the members (a body parsed and written again without sorting, as JSON.stringify or json.dumps without sort_keys do)",
		"sort the members by name before hashing (RFC 8785; in Python json.dumps(..., sort_keys=True, separators=(\",\", \":\")), in Node a stringify that sorts keys), so that a client library that orders fields differently sends the same request"},
	CauseNoFingerprint: {CauseNoFingerprint,
		"the key alone decides: a different request under a used key was taken for a retry",
		"store a fingerprint of the request (SHA-256 of method, route and canonical JSON body) with the key; a different request under a used key gets 422 and moves nothing"},
	CauseCompletedFirst: {CauseCompletedFirst,
		"the key reads as done while its transfer is still running: a retry that arrived meanwhile was answered as if the work were finished",
		"keep the key in_progress while the transfer runs and answer 409 with Retry-After: 1 to a retry that arrives meanwhile; mark it completed, with the answer stored, in the transfer's own transaction"},
	CauseGenericReplay: {CauseGenericReplay,
		"a retry was answered with a generic answer, not with the first answer",
		"store the first answer (status, body, the allowed headers) with the key and send those bytes again on every retry, with Idempotent-Replayed: true"},
	CauseRecomputed: {CauseRecomputed,
		"the retry's answer was rebuilt from the ledger as it is now, so its balance or time differ from the first answer's",
		"store the first answer's bytes with the key when the transfer commits, and send those bytes again; never render a replay anew"},
	CauseReplayStatus: {CauseReplayStatus,
		"the retry got the first answer's body with another status",
		"store the status with the body and replay both: a 201 is replayed as 201, not as a fixed 200"},
	CauseRefusalNotStored: {CauseRefusalNotStored,
		"a business refusal (402 or 404) was not stored under its key, so the retry, once the money or the account was there, was executed as a new request",
		"a refusal is an answer: store a 402 or 404 under its key like a success and replay it; release the claim (delete the key) only when the request failed with an exception and was never answered"},
	CauseRefusalRerendered: {CauseRefusalRerendered,
		"the stored refusal was rendered again (through an error handler) instead of replayed: the same status, other bytes",
		"store the refusal's status and body bytes with the key and send exactly those bytes again, as for a success"},
	CauseStoredRefusal: {CauseStoredRefusal,
		"a request refused 400 (bad body) or 401 (no customer) was stored under its key, so the repaired request under the same key got that refusal (or a 422) instead of being executed",
		"validate the headers and the body (401, then 400) before the key is claimed, and store nothing for them: only a request that passed validation claims its key; a middleware that stores every answer must skip 400 and 401"},
	CauseInProcessLock: {CauseInProcessLock,
		"the attempts under one key reached different replicas, while the same traffic sent to one replica kept the rule: what guards a key (a lock, or a cache of keys) lives in one process's memory, and the other replica has its own, so a retry there pays again",
		"claim the key in the shared database: one INSERT into a key table whose primary key (customer, endpoint, key) is a UNIQUE constraint, the constraint error being the verdict; a lock must be in the database too (the INSERT itself, or SELECT … FOR UPDATE on PostgreSQL), never a mutex, a dict or a cache in the server's memory"},
	CauseShortRetention: {CauseShortRetention,
		"the published retention is not longer than the clients' retry horizon",
		"keep keys for longer than the clients retry: more than 3600 s for the lab (idemlab's scoped keeps 86400), and publish it at GET {base} as {\"retention_seconds\": N}"},
}

// ruleFixes say, per rule, what a student's endpoint must do when the
// evidence does not tell the cause.
var ruleFixes = map[string]string{
	RuleOneTransfer.Name:   "claim the key before paying with one INSERT into a table whose primary key is (customer, endpoint, key), let the constraint error be the verdict, and keep an in_progress state so a simultaneous retry gets 409",
	RuleNoSilentWrong.Name: "store a fingerprint of the request (SHA-256 of the canonical JSON body) with the key; a different request under a used key gets 422 and moves nothing",
	RuleByteReplay.Name:    "store the first answer (status, headers, body) with the key and send those bytes again on every retry, with Idempotent-Replayed: true",
	RuleNothingLost.Name:   "never answer success for a key whose transfer does not exist: complete the key in the same transaction as the transfer",
	RuleOwnResponses.Name:  "scope keys by customer: the key table's primary key is (customer, endpoint, key), so one customer's key never meets another's",
	RuleConservation.Name:  "debit and credit in one transaction; never create or destroy money",
	RuleOneCharge.Name:     "pass the idempotency key (scoped by customer) to the payment processor with every charge, and record a recovery point before and after the call, so that a retry that takes a claim over gets the first charge back instead of charging again",
	RuleRetention.Name:     "keep keys longer than clients retry (the lab's retry for up to an hour, so more than 3600 s) and publish it: GET {base} answers {\"retention_seconds\": N}",
}

// Diagnose tells the cause of a rule broken from the evidence: the check
// (or scenario) that broke it ("other-customer", "missing-key",
// "refusals", or another), the attempts of the run, the indexes of the
// ones that show the failure, and busy, which says whether attempt i was
// answered while another attempt under its key that carried the transfer
// was still in flight. "" when the evidence does not tell.
func Diagnose(check string, rule Rule, attempts []Attempt, idx []int, busy func(i int) bool) string {
	switch {
	case check == "other-customer" || rule.N == RuleOwnResponses.N:
		return CauseGlobalKeys
	case rule.N == RuleNothingLost.N && usedByOthers(attempts, idx):
		return CauseGlobalKeys
	case check == "missing-key" && rule.N == RuleOneTransfer.N && anyKeyless(attempts, idx):
		return CauseKeyOptional
	case rule.N == RuleNoSilentWrong.N:
		return CauseNoFingerprint
	case rule.N == RuleByteReplay.N && len(idx) == 2:
		return replayCause(attempts[idx[0]], attempts[idx[1]], busy(idx[0]), busy(idx[1]))
	case rule.N == RuleNothingLost.N && check == "refusals" && len(idx) >= 2:
		// A refusal's retry was told success: which success says why.
		for _, i := range idx[1:] {
			if Success(attempts[i].Status) {
				return replayCause(attempts[idx[0]], attempts[i], busy(idx[0]), busy(i))
			}
		}
	}
	return ""
}

// usedByOthers reports whether another customer used the key of one of
// the attempts before it.
func usedByOthers(attempts []Attempt, idx []int) bool {
	for _, i := range idx {
		for j := 0; j < i; j++ {
			if k := attempts[i].Key; k != "" && attempts[j].Key == k && attempts[j].Customer != attempts[i].Customer {
				return true
			}
		}
	}
	return false
}

func anyKeyless(attempts []Attempt, idx []int) bool {
	for _, i := range idx {
		if attempts[i].Key == "" && Success(attempts[i].Status) {
			return true
		}
	}
	return false
}

// replayCause tells why a retry's answer differs from the first one;
// firstBusy and retryBusy say whether each was answered while an attempt
// under the key that carried the transfer was still in flight.
func replayCause(first, retry Attempt, firstBusy, retryBusy bool) string {
	firstID, retryID := TransferID(first.Response), TransferID(retry.Response)
	switch {
	case retry.Status != first.Status && string(retry.Response) == string(first.Response):
		return CauseReplayStatus
	case first.Status == 402 || first.Status == 404:
		if retry.Status == first.Status {
			return CauseRefusalRerendered
		}
		if Success(retry.Status) && retryID != "" {
			return CauseRefusalNotStored
		}
		return CauseGenericReplay
	case Success(retry.Status) && retryID == "" && firstID != "" ||
		Success(first.Status) && firstID == "" && retryID != "":
		// A success that names no transfer: a generic "already processed".
		// Given while another attempt under the key was running, it says
		// the key was marked done before the work; given later, that
		// replays are generic.
		if firstID == "" && firstBusy || retryID == "" && retryBusy {
			return CauseCompletedFirst
		}
		return CauseGenericReplay
	case firstID != "" && retryID == firstID:
		return CauseRecomputed
	}
	return ""
}
