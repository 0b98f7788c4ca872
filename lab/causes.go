package lab

import "slices"

// causes.go is what the grader and the browser's lab say when a rule
// broke: the cause the evidence shows, in words, and the fix for that
// cause; without one, the rule's usual fix.

// Cause is one diagnosis: what the evidence shows went wrong, and the fix
// for that cause (not for the rule in general).
type Cause struct {
	ID   string `json:"id"`
	Says string `json:"says"`
	Fix  string `json:"fix"`
	// SaysKo and FixKo are Says and Fix in Korean, for the Korean pages.
	SaysKo string `json:"says_ko"`
	FixKo  string `json:"fix_ko"`
}

// The causes the evidence can tell apart, by ID.
const (
	CauseKeyOptional       = "key-optional"
	CauseGlobalKeys        = "global-keys"
	CauseRawBytes          = "raw-bytes-fingerprint"
	CauseOrderSensitive    = "order-sensitive-fingerprint"
	CauseNoFingerprint     = "no-fingerprint"
	CauseKeyIgnored        = "key-ignored"
	CauseCompletedFirst    = "completed-before-paid"
	CauseGenericReplay     = "generic-replay"
	CauseRecomputed        = "recomputed-replay"
	CauseReplayStatus      = "replay-status"
	CauseReplayHeaders     = "replay-headers"
	CauseRefusalNotStored  = "refusal-not-stored"
	CauseRefusalRerendered = "refusal-rerendered"
	CauseStoredRefusal     = "stored-validation-refusal"
	CauseInProcessLock     = "in-process-lock"
	CauseShortRetention    = "short-retention"
	// CauseNeverSettled is the browser lab's alone: a claim left by an
	// attempt that crashed still refuses the client's retry long after.
	// The grader cannot crash an endpoint, so it never sees it.
	CauseNeverSettled = "claim-never-settled"
	// CausePaidUnclaimed is the browser lab's alone too: the grader cannot
	// see the payment network's calls.
	CausePaidUnclaimed = "paid-without-claim"
	// CauseNetworkKeyShared is the browser lab's alone too: the key a
	// handler passed to the payment network was one customer's key as
	// sent, and another customer's payment met it there.
	CauseNetworkKeyShared = "network-key-shared"
	// CauseCompletedApart is the browser lab's alone as well: only a crash
	// between the transfer's commit and the key's completion shows it.
	CauseCompletedApart = "completed-apart"
	// CauseReplayUnmarked and CauseNoRetryAfter are the causes of two of
	// the contract's notes (the grader notes them too, without a cause):
	// the page counts them against the rung that asks for them.
	CauseReplayUnmarked = "replay-unmarked"
	CauseNoRetryAfter   = "conflict-without-retry-after"
	// CauseHandlerFailed is a run whose handler answered 500 (it threw, or
	// said so): nothing the rules judge happened, and no rung is done.
	CauseHandlerFailed = "handler-failed"
	// CauseReorderedRefused: the same request with its members in another
	// order was refused as a different one, and no re-spaced copy was sent
	// to tell raw bytes from an unsorted parse (the browser's scenarios
	// send one reordered retry; the grader sends both).
	CauseReorderedRefused = "reordered-refused"
	// CauseKeyPurgedEarly is the browser lab's alone: only the lab sees
	// the handler's own key table, where a purge took a key away before
	// the retention the handler publishes had run out.
	CauseKeyPurgedEarly = "key-purged-early"
	// CauseClaimIgnored is the browser lab's alone as well: only the lab's
	// database sees that the key's INSERT was one its conflict clause
	// (OR IGNORE, ON CONFLICT … DO NOTHING) turned into nothing.
	CauseClaimIgnored = "claim-ignored"
	// CauseTakeoverUnchecked is the browser lab's alone: two retries of a
	// crashed attempt each took its claim over (only the lab sees the
	// handler's key table change hands) and each moved the money.
	CauseTakeoverUnchecked = "takeover-unchecked"
	// CauseCustomerOptional is the cause of a contract's note the grader
	// makes too (its missing-key check): a transfer without X-Customer-ID
	// answered with success. Every rung asks for the 401.
	CauseCustomerOptional = "customer-optional"
	// CauseLeaseTooShort is the browser lab's alone: only its database
	// sees an attempt update the row of a claim whose attempt is still
	// running (a lease shorter than a transfer takes). Nothing may break
	// (an owner check throws the first attempt's work away), but every
	// slow transfer is then done twice over.
	CauseLeaseTooShort = "lease-too-short"
	// CauseKeyUnchecked and CauseLongestKeyRefused are the causes of two
	// more of the contract's notes, which the grader makes too (its
	// malformed-keys and longest-key checks): a key the contract refuses
	// was answered otherwise than 400, or a valid key of 255 characters was
	// refused. The unique rung, where the key first decides, asks for both.
	CauseKeyUnchecked      = "key-unchecked"
	CauseLongestKeyRefused = "longest-key-refused"
	// CauseNotAwaited, CauseLeftOpen and CauseRowsDropped are the browser
	// lab's alone: slips in the handler's JavaScript that only its runner
	// sees (a call never awaited, an answer before COMMIT, a SELECT given
	// to db.run). Every rung asks that they be gone.
	CauseNotAwaited  = "call-not-awaited"
	CauseLeftOpen    = "transaction-left-open"
	CauseRowsDropped = "rows-dropped"
	// CausePaidInTx is the browser lab's alone too: a call to the payment
	// network made with the attempt's transaction open.
	CausePaidInTx = "pay-in-transaction"
	// CauseStateBeforeFingerprint: a different request told 409 (wait)
	// where 422 was owed, while another request held its key. The
	// browser's lab names it; the grader's correction check notes the same
	// answer without a cause, as it notes the contract's other answers.
	CauseStateBeforeFingerprint = "state-before-fingerprint"
	// CauseClaimReplaced is the browser lab's alone: only its database
	// sees the key's INSERT OR REPLACE replace another attempt's row
	// instead of failing on it.
	CauseClaimReplaced = "claim-replaced"
	// CauseTakeoverUnfingerprinted is the browser lab's alone too: only its
	// database sees a different request take over the claim a crashed
	// attempt left.
	CauseTakeoverUnfingerprinted = "takeover-unfingerprinted"
	// CauseNetworkKeyMissing, CauseClaimNotReleased, CauseFailureStored
	// and CauseTransferUnpaid are the browser lab's alone: only its
	// scenarios make the payment network fail (its answer lost after it
	// charged, or not reached at all), which the grader cannot. The retry
	// charged again (no key, or another one, given to pay); the retry was
	// told to wait for a claim the failed attempt kept; the retry was
	// handed the failure itself, stored as the key's answer; a transfer
	// was made that the network never charged.
	CauseNetworkKeyMissing = "network-key-missing"
	CauseClaimNotReleased  = "claim-not-released"
	CauseFailureStored     = "failure-stored"
	CauseTransferUnpaid    = "transfer-unpaid"
	// CauseFailureCompleted is the browser lab's too: the network failed
	// an attempt's pay, and the attempt answered it as a final answer (a
	// 402, say) and completed its key, so that a retry was told the key
	// was done with no transfer behind it.
	CauseFailureCompleted = "failure-completed"
	// CauseCompletedKeyReleased is the browser lab's too: an attempt whose
	// transfer had committed threw afterwards, and a retry of its request
	// moved the money again: its error path deleted a key that was no
	// longer a claim in progress.
	CauseCompletedKeyReleased = "completed-key-released"
	// CauseRetryAfterLong is the browser lab's: a 409 whose Retry-After
	// asks the client to wait more than a minute (milliseconds taken for
	// seconds, most often) for a transfer that ends in a moment.
	CauseRetryAfterLong = "retry-after-too-long"
	// CauseSuccessNotJSON is the browser lab's: a success went out without
	// a JSON Content-Type, where the contract's transfers are
	// application/json.
	CauseSuccessNotJSON = "success-not-json"
	// CauseTransferIDWrong is the browser lab's: an attempt made a
	// transfer and answered 2xx with a transfer_id that names another one,
	// or none ("tr_undefined": a column read by a name the row does not
	// have).
	CauseTransferIDWrong = "transfer-id-wrong"
	// CauseWhereMissing and CauseWriteRead are slips the browser's lab
	// watches for: an UPDATE or a DELETE with no WHERE (every row of its
	// table), and a write given to db.get or db.all without RETURNING
	// (it answers no row, whatever it changed).
	CauseWhereMissing = "where-missing"
	// CauseKeyNotUnique is the browser lab's: the handler's tables hold no
	// PRIMARY KEY or UNIQUE beyond a rowid, so every claim's INSERT
	// succeeded.
	CauseKeyNotUnique = "key-not-unique"
	// CauseTakeoverKeptOwner is the browser lab's: a retry updated the
	// row a crashed attempt left (a takeover ran) and was still told to
	// wait, for the takeover left the claim the dead attempt's.
	CauseTakeoverKeptOwner = "takeover-kept-owner"
	// CauseBalanceAfterWrong is the browser lab's: a success whose
	// balance_after is not the payer's balance after its transfer.
	CauseBalanceAfterWrong = "balance-after-wrong"
	CauseWriteRead         = "write-given-to-get"
	// CausePaidTwice is the browser lab's alone too: one attempt that the
	// network charged twice (it called pay again without the key).
	CausePaidTwice = "paid-twice"
	// CauseWaitForNobody is the browser lab's: every attempt of a request
	// was told to wait (409) though none of them, nor any other attempt
	// under its key, was working on it. The grader's stories end at the
	// first answer, so it does not ask.
	CauseWaitForNobody = "wait-for-nobody"
	// CauseClaimLeft is the browser lab's too: an attempt answered (a
	// refusal, most often) and left its claim in progress, so a retry
	// sent after that answer was told to wait by a claim no attempt was
	// working on.
	CauseClaimLeft = "claim-left-by-answer"
	// CauseFingerprintUnstable is the browser lab's: a retry that sent the
	// very bytes of its customer's first request under the same key was
	// refused 422, so the fingerprint is not a function of the request
	// alone (it holds req.attempt, the time, a random value).
	CauseFingerprintUnstable = "fingerprint-unstable"
	// CauseInProgressNot409 is the browser lab's: a request whose key was
	// still in progress was answered 429 (or 425), where the contract
	// says 409.
	CauseInProgressNot409 = "in-progress-not-409"
	// CauseReleasedAnother is the browser lab's: an attempt deleted the
	// row another attempt had written under its own key (a release of a
	// claim that was not its own, on a refusal's path, say), and a retry
	// then found no key.
	CauseReleasedAnother = "released-another-claim"
	// CauseRefusalNotProblem is the browser lab's: a refusal (4xx) was
	// delivered with no body, or not as application/problem+json.
	CauseRefusalNotProblem = "refusal-not-problem-json"
	// CauseAnswerUnreturned is the browser lab's slip too: a refusal built
	// with lab.problem and not returned, the attempt answering success.
	CauseAnswerUnreturned = "answer-not-returned"
)

// CauseOf returns the cause with that ID (a copy), and whether there is one.
func CauseOf(id string) (Cause, bool) {
	c, ok := causes[id]
	return c, ok
}

// CauseIDs returns the ID of every cause, sorted.
func CauseIDs() []string {
	ids := make([]string, 0, len(causes))
	for id := range causes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// RuleFix is what a student's endpoint must do to keep the rule named
// name when the evidence does not tell the cause.
func RuleFix(name string) string { return ruleFixes[name] }

// RuleFixKo is RuleFix in Korean.
func RuleFixKo(name string) string { return ruleFixesKo[name] }

// constraintIsVerdict, with its Korean, ends the fix of a 500 whose
// handler threw a ConstraintError: the claim's refusal is the verdict, not
// a failure. Said only there (the fourteenth simulated student read it
// under a failed ROLLBACK and a string status).
const (
	constraintIsVerdict   = "A ConstraintError from your key's INSERT is not a failure: it is the verdict that another attempt claimed the key first, to catch and answer from that key"
	constraintIsVerdictKo = "키를 넣는 INSERT에서 나온 ConstraintError는 실패가 아닙니다. 다른 시도가 먼저 키를 선점했다는 판정이니, 잡아서 그 키로 답하세요."
)

var causes = map[string]Cause{
	CauseHandlerFailed: {CauseHandlerFailed,
		"the handler answered 5xx: it threw, or said so itself, so the client learned nothing, and the rules had nothing to judge",
		"find the error at its line (play the order on the bench, ▶: the attempt's card and the list under the editor then show it; an error with no line, such as an answer the lab cannot send, names what your transfer returned) and answer every request the contract serves: 201 for a transfer, its 4xx for a refusal; check that your tables exist (the tables box is kept for each rung)",
		"핸들러가 5xx로 답했습니다. 예외를 던졌거나 스스로 5xx를 보냈으니, 클라이언트는 아무것도 알 수 없고 규칙도 판정할 것이 없었습니다.",
		"오류가 난 줄을 찾으세요. 그 순서를 벤치에서 돌려 보면(▶) 시도의 카드와 편집기 아래 목록에 줄이 나오고, 보낼 수 없는 응답처럼 줄이 없는 오류는 transfer가 돌려준 값을 알려 줍니다. 그리고 계약이 처리하는 모든 요청에 답하세요. 송금에는 201, 거절에는 그 4xx입니다. 테이블이 있는지도 확인하세요(테이블 상자는 단계마다 따로 보관됩니다)."},
	CauseNotAwaited: {CauseNotAwaited,
		"a call into db or pay was made without await: the code after it went on as if it knew the answer. A call still waiting when the attempt ended never ran at all; one that ran was never checked, so its error (a network that failed) went unseen",
		"put await before every call into db and into pay (const row = await db.get(…)): each call is a step the attempt waits for, and what it answers is known only once it has run",
		"db나 pay 호출을 await 없이 해서, 뒤의 코드가 결과를 아는 것처럼 계속했습니다. 시도가 끝날 때까지 기다리던 호출은 아예 실행되지 않았고, 실행된 호출도 결과를 확인하지 않아 그 오류(결제망 장애 등)를 아무도 보지 못했습니다.",
		"db와 pay의 모든 호출 앞에 await를 붙이세요(const row = await db.get(…)). 호출 하나하나가 시도가 기다리는 스텝이고, 그 결과는 실행된 뒤에야 알 수 있습니다."},
	CauseLeftOpen: {CauseLeftOpen,
		"the handler answered with its transaction still open: the lab rolls back an open transaction when an attempt answers (a real server's connection would go back to the pool mid-transaction), so the transfer or key it wrote was never kept, though the client was told it was",
		"end every BEGIN with a COMMIT (or a ROLLBACK on the way out) before you return: after the catch of a ConstraintError too, and on every early return",
		"핸들러가 트랜잭션을 연 채로 응답했습니다. 랩은 시도가 응답할 때 열린 트랜잭션을 롤백합니다(실제 서버라면 트랜잭션 중인 연결이 풀로 돌아갑니다). 그래서 쓴 송금이나 키는 남지 않았는데 클라이언트는 남았다고 들었습니다.",
		"return하기 전에 모든 BEGIN을 COMMIT으로(나가는 길에는 ROLLBACK으로) 끝내세요. ConstraintError를 잡은 뒤에도, 일찍 return하는 모든 곳에서도 마찬가지입니다."},
	CauseRowsDropped: {CauseRowsDropped,
		"a SELECT was given to db.run, which answers only {changes, lastInsertRowid}: the rows it read were thrown away, and a test such as if (row) is true whether the key was found or not",
		"read one row with db.get (it answers the row, or undefined when there is none) and several with db.all (an array); keep db.run for INSERT, UPDATE and DELETE",
		"SELECT를 db.run에 넘겼습니다. run은 {changes, lastInsertRowid}만 돌려주므로 읽은 행은 버려지고, if (row) 같은 검사는 키를 찾았든 못 찾았든 참이 됩니다.",
		"한 행은 db.get으로 읽고(행이 없으면 undefined), 여러 행은 db.all로 읽으세요(배열). db.run은 INSERT, UPDATE, DELETE에만 쓰세요."},
	CauseReplayUnmarked: {CauseReplayUnmarked,
		"a replay came back with the first answer's bytes but without Idempotent-Replayed: true, so the client cannot tell that nothing was done again",
		"send Idempotent-Replayed: true with every replayed answer, beside its stored status, headers and body",
		"재생이 첫 응답의 바이트 그대로 왔지만 Idempotent-Replayed: true가 없어서, 클라이언트는 아무것도 다시 실행되지 않았다는 것을 알 수 없습니다.",
		"재생하는 모든 응답에 저장한 상태, 헤더, 본문과 함께 Idempotent-Replayed: true를 보내세요."},
	CauseNoRetryAfter: {CauseNoRetryAfter,
		"a 409 came without a valid Retry-After, so the client does not know when to come back",
		"answer 409 with Retry-After: 1 (a number of seconds) while the key is in progress",
		"409 응답에 올바른 Retry-After가 없어서 클라이언트는 언제 다시 와야 할지 모릅니다.",
		"키가 처리 중인 동안에는 Retry-After: 1(초 단위 숫자)과 함께 409로 답하세요."},
	CauseRetryAfterLong: {CauseRetryAfterLong,
		"a 409 told the client to wait more than a minute before it comes back, for a transfer that ends in a moment: Retry-After counts seconds, not milliseconds",
		"answer 409 with Retry-After: 1 (a number of seconds) while the key is in progress",
		"409 응답이 클라이언트에게 1분 넘게 기다렸다 다시 오라고 했습니다. 송금은 금방 끝나는데도요. Retry-After는 밀리초가 아니라 초를 셉니다.",
		"키가 처리 중인 동안에는 Retry-After: 1(초 단위 숫자)과 함께 409로 답하세요."},
	CauseSuccessNotJSON: {CauseSuccessNotJSON,
		"a success went out without Content-Type: application/json, so a client cannot tell that its body is the transfer's JSON",
		"answer a transfer with lab.json(201, {…}), which sets Content-Type: application/json, or set that header yourself beside the JSON body",
		"성공 응답이 Content-Type: application/json 없이 나가서, 클라이언트는 본문이 송금의 JSON이라는 것을 알 수 없습니다.",
		"송금에는 Content-Type: application/json을 넣어 주는 lab.json(201, {…})으로 답하거나, JSON 본문과 함께 그 헤더를 직접 넣으세요."},
	CauseBalanceAfterWrong: {CauseBalanceAfterWrong,
		"the answer's balance_after is not the payer's balance after the transfer: it was read before the debit, or from another row, so the client's receipt says a balance the account never had then",
		"read the payer's balance after the debit, inside the transfer's transaction (SELECT balance FROM accounts WHERE id = ? after the UPDATE, before COMMIT), and answer with that",
		"응답의 balance_after가 송금 뒤 보내는 계좌의 잔액이 아닙니다. 출금 전에 읽었거나 다른 행에서 읽어서, 클라이언트가 받은 영수증이 그때 계좌에 없던 잔액을 말합니다.",
		"보내는 계좌의 잔액은 출금한 뒤에, 송금의 트랜잭션 안에서(UPDATE 뒤, COMMIT 전에 SELECT balance FROM accounts WHERE id = ?) 읽어서 답하세요."},
	CauseTakeoverKeptOwner: {CauseTakeoverKeptOwner,
		"the retry took over the claim a crashed attempt left, but the takeover left it the dead attempt's (its owner unchanged), so the retry's own completion, WHERE owner = its attempt, found nothing, and every retry is told to wait for ever",
		"make the claim the retry's in the takeover itself: UPDATE … SET owner = ?, claimed_at = ? WHERE … AND state = 'in_progress' AND claimed_at < ?, with req.attempt and req.now, and go on only when its changes is 1",
		"재시도가 죽은 시도가 남긴 선점을 넘겨받았지만, 넘겨받기가 선점을 여전히 죽은 시도의 것으로 두었습니다(owner가 그대로). 그래서 재시도가 WHERE owner = 자기 시도로 키를 완료할 때 자기 것을 찾지 못했고, 모든 재시도가 영영 기다리라는 답을 받습니다.",
		"넘겨받는 쿼리에서 선점을 재시도의 것으로 만드세요. UPDATE … SET owner = ?, claimed_at = ? WHERE … AND state = 'in_progress' AND claimed_at < ?에 req.attempt와 req.now를 넣고, changes가 1일 때만 계속하세요."},
	CauseKeyNotUnique: {CauseKeyNotUnique,
		"your key table has no PRIMARY KEY or UNIQUE on the key: the INSERT of a key already used succeeds, so no ConstraintError ever says the key was taken, and every attempt went on as if it were the first",
		"make the key the table's PRIMARY KEY (or UNIQUE) in the tables box: PRIMARY KEY (customer, endpoint, idem_key), or idem_key TEXT PRIMARY KEY on the first rungs (an INTEGER PRIMARY KEY id numbers rows and does not make the key unique); then claim with the INSERT itself, its ConstraintError the verdict, not with a SELECT first: two attempts both find the key absent",
		"키 테이블의 키에 PRIMARY KEY나 UNIQUE가 없습니다. 이미 쓴 키를 INSERT해도 성공하므로 키가 이미 있다고 알리는 ConstraintError가 한 번도 나지 않았고, 모든 시도가 자기가 처음인 것처럼 계속했습니다.",
		"테이블 상자에서 키를 테이블의 PRIMARY KEY(또는 UNIQUE)로 만드세요. PRIMARY KEY (customer, endpoint, idem_key)이고, 처음 단계들에서는 idem_key TEXT PRIMARY KEY입니다. INTEGER PRIMARY KEY인 id 열은 행에 번호를 붙일 뿐 키를 유일하게 만들지 않습니다. 그다음 SELECT로 먼저 찾지 말고 INSERT 자체로 선점하고, 그 ConstraintError를 판정으로 삼으세요. 먼저 찾으면 두 시도가 모두 키가 없다고 봅니다."},
	CauseWhereMissing: {CauseWhereMissing,
		"an UPDATE or a DELETE had no WHERE, so it changed every row of its table: every key's row (other requests', other customers') or every account, not the one the attempt meant",
		"name the row: UPDATE … SET … WHERE customer = ? AND idem_key = ? (and, for a claim, AND owner = ?), and read its changes to know whether it was found",
		"UPDATE나 DELETE에 WHERE가 없어서 테이블의 모든 행이 바뀌었습니다. 시도가 뜻한 행 하나가 아니라 모든 키의 행(다른 요청, 다른 고객의 것)이나 모든 계좌가 바뀐 것입니다.",
		"바꿀 행을 지정하세요. UPDATE … SET … WHERE customer = ? AND idem_key = ?(선점이라면 AND owner = ?까지) 식으로 쓰고, changes를 읽어 그 행을 찾았는지 확인하세요."},
	CauseWriteRead: {CauseWriteRead,
		"a statement that writes (UPDATE, INSERT, DELETE) was given to db.get or db.all without RETURNING: it ran, but it answers no row (undefined, or []), so what it changed cannot be read from its answer",
		"give a write to db.run, which answers {changes, lastInsertRowid}, and read changes; or add RETURNING to read the rows it wrote",
		"쓰기 쿼리(UPDATE, INSERT, DELETE)를 RETURNING 없이 db.get이나 db.all에 넘겼습니다. 쿼리는 실행되었지만 행을 돌려주지 않으므로(undefined나 []) 그 답에서는 무엇이 바뀌었는지 읽을 수 없습니다.",
		"쓰기는 {changes, lastInsertRowid}를 돌려주는 db.run에 넘기고 changes를 읽으세요. 쓴 행을 읽으려면 RETURNING을 붙이세요."},
	CauseTransferIDWrong: {CauseTransferIDWrong,
		"the answer's transfer_id does not name the transfer the attempt made: the client's receipt points at nothing (a value read by a name the row or the result does not have comes out as undefined)",
		"name the row you inserted: db.run answers {changes, lastInsertRowid}, so 'tr_' + result.lastInsertRowid; an INSERT … RETURNING id given to db.all answers rows, so 'tr_' + rows[0].id",
		"응답의 transfer_id가 그 시도가 만든 송금을 가리키지 않습니다. 클라이언트가 받은 영수증이 아무것도 가리키지 않습니다(행이나 결과에 없는 이름으로 읽은 값은 undefined가 됩니다).",
		"넣은 행을 가리키세요. db.run은 {changes, lastInsertRowid}를 돌려주므로 'tr_' + result.lastInsertRowid이고, db.all에 준 INSERT … RETURNING id는 행 목록을 돌려주므로 'tr_' + rows[0].id입니다."},
	CauseReleasedAnother: {CauseReleasedAnother,
		"an attempt deleted the key row another attempt had written under the same key, as if it released a claim of its own: the key was gone, so a retry of the first request found nothing to stop it or to replay, and ran as a new request",
		"delete only your own claim, and only while it is in progress: DELETE … WHERE the key AND owner = ? AND state = 'in_progress' (owner: a column your claim fills with req.attempt; add one if your table has none); an attempt refused 422 (another request's key) or 409 claimed nothing, so it has nothing to release",
		"어떤 시도가 같은 키로 다른 시도가 쓴 키 행을 자기 선점을 푸는 것처럼 지웠습니다. 키가 사라져서 첫 요청의 재시도는 막을 것도 재생할 것도 찾지 못하고 새 요청처럼 실행되었습니다.",
		"지우는 것은 자기 선점뿐이고, 처리 중일 때만입니다: DELETE … WHERE 그 키 AND owner = ? AND state = 'in_progress'. owner는 선점할 때 req.attempt를 넣어 두는 열이며, 테이블에 없으면 추가하세요. 422(다른 요청의 키)나 409를 받은 시도는 선점한 것이 없으니 풀 것도 없습니다."},
	CauseRefusalNotProblem: {CauseRefusalNotProblem,
		"a refusal (4xx) went out with no body, or not as application/problem+json: the contract's errors are problem details (RFC 9457), so that a client, and a person reading its log, learns what was wrong",
		"build every refusal with lab.problem(status, title, detail): it writes the application/problem+json body and its Content-Type",
		"거절 응답(4xx)이 본문 없이, 또는 application/problem+json이 아닌 형식으로 나갔습니다. 계약의 오류는 문제 상세(RFC 9457) 형식이라야 클라이언트도, 그 로그를 읽는 사람도 무엇이 잘못됐는지 압니다.",
		"모든 거절은 lab.problem(status, title, detail)으로 만드세요. application/problem+json 본문과 그 Content-Type을 함께 씁니다."},
	CauseInProgressNot409: {CauseInProgressNot409,
		"a retry that came while its request was still being processed was answered 429 (Too Many Requests) or 425, not 409: a client reads 429 as a rate limit, of its own sending, and may back off for long or give up",
		"answer 409 Conflict with Retry-After: 1 while the key is in progress, as the contract and the IETF draft say: a request with this key is still being processed",
		"요청이 아직 처리 중일 때 온 재시도가 409가 아니라 429(Too Many Requests)나 425 응답을 받았습니다. 클라이언트는 429를 자기가 너무 많이 보냈다는 속도 제한으로 읽고, 오래 기다리거나 포기할 수 있습니다.",
		"키가 처리 중인 동안에는 계약과 IETF 초안대로 Retry-After: 1과 함께 409 Conflict로 답하세요. 이 키의 요청은 아직 처리 중이라는 뜻입니다."},
	CauseCompletedApart: {CauseCompletedApart,
		"an attempt crashed after its transfer committed but before its key was completed: the key still said in progress, so a retry was told to wait for ever, or took the claim over and moved the money again (and, without the network's key, paid again)",
		"complete the key in the transaction that moves the money: the UPDATE that marks it completed (with the answer) goes between BEGIN and the COMMIT of the transfer, so that the money and the completion commit together or not at all",
		"시도가 송금을 커밋한 뒤, 키를 완료로 바꾸기 전에 죽었습니다. 키는 여전히 처리 중이라 재시도는 끝없이 기다리라는 답을 받거나, 선점을 넘겨받아 돈을 다시 옮겼습니다(결제망에 키를 넘기지 않았다면 다시 결제도 했습니다).",
		"돈을 옮기는 트랜잭션 안에서 키를 완료하세요. 키를 완료로 바꾸는(응답과 함께) UPDATE를 송금의 BEGIN과 COMMIT 사이에 두면, 돈과 완료가 함께 커밋되거나 함께 취소됩니다."},
	CausePaidUnclaimed: {CausePaidUnclaimed,
		"two attempts of one intent each paid, and nothing stopped the second before it paid: there was no claim of the key, or the second went on past it",
		"claim the key before you call pay: one plain INSERT into a key table whose key column is UNIQUE, its ConstraintError the verdict that another attempt has the key; call pay only in the attempt whose INSERT claimed it: a retry that finds the key taken answers from it (409 while it is in progress) and never pays. Passing the key to pay({from, to, amount, key}) is a second guard, for a takeover after a crash",
		"한 의도의 두 시도가 각각 결제했고, 두 번째 시도가 결제하기 전에 막은 것이 없습니다. 키를 선점하지 않았거나, 두 번째 시도가 선점을 무시하고 계속했습니다.",
		"pay를 부르기 전에 키를 선점하세요. 키 열이 UNIQUE인 키 테이블에 평범한 INSERT를 한 번 하고, 그 ConstraintError를 다른 시도가 키를 가졌다는 판정으로 삼습니다. INSERT로 선점한 시도에서만 pay를 부르세요. 키가 이미 선점된 것을 본 재시도는 그 키로 답하고(처리 중이면 409) 결제하지 않습니다. pay({from, to, amount, key})에 키를 넘기는 것은 죽은 시도를 넘겨받을 때를 위한 두 번째 방어입니다."},
	CauseNetworkKeyShared: {CauseNetworkKeyShared,
		"the key passed to pay was the client's key as sent: the payment network has one key space for all of our customers, so two customers who chose the same key meet there, and the second is answered with the first one's charge (never charged at all) or refused as another payment",
		"give the network a key made from the same scope as your key table, for example JSON.stringify([req.customer, 'POST /transfers', key]) (joined with a separator instead, a customer id that holds the separator could make two scopes one), so that two customers' keys never meet at the network",
		"pay에 넘긴 키가 클라이언트가 보낸 키 그대로였습니다. 결제망에는 우리 고객 모두가 쓰는 키 공간이 하나뿐이라서, 같은 키를 고른 두 고객이 거기서 만납니다. 두 번째 고객은 첫 고객의 청구로 답을 받거나(한 번도 청구되지 않음) 다른 결제라며 거절당합니다.",
		"키 테이블과 같은 범위로 만든 키를 결제망에 넘기세요. 예를 들어 JSON.stringify([req.customer, 'POST /transfers', key])처럼요(구분자로 이어 붙이면 구분자가 든 고객 ID가 두 범위를 하나로 만들 수 있습니다). 그래야 두 고객의 키가 결제망에서 만나지 않습니다."},
	CauseNeverSettled: {CauseNeverSettled,
		"an attempt crashed holding the claim, and the client's retry long after was still told to wait: a claim whose attempt died is never settled, so this intent never gets its answer and its transfer is never made (a charge the network already made for it stays without one)",
		"give each claim a lease: add columns to your key table for its state, who claimed it and when (say state, owner and claimed_at, filled from req.attempt and req.now), and let a retry of the same request that finds an in_progress claim older than the lease take it over with one UPDATE … SET owner = ?, claimed_at = ? WHERE … AND state = 'in_progress' AND claimed_at < ? (req.now minus the lease); complete only where owner is still yours. A takeover after the payment pays again unless the network was given the key. If you have a lease already, check its clock: every time in it must be req.now, the request's time on the lab's clock (Date.now() is another clock, and the lab's retries come minutes later on req.now's)",
		"선점을 쥔 시도가 죽었고, 한참 뒤에 온 클라이언트의 재시도도 여전히 기다리라는 답을 받았습니다. 죽은 시도의 선점은 끝내 정리되지 않아 이 의도는 영영 답을 받지 못하고 송금도 이루어지지 않습니다(결제망이 이미 청구했다면 그 청구는 송금 없이 남습니다).",
		"선점마다 리스(lease)를 두세요. 키 테이블에 상태, 선점한 시도, 선점한 시각을 담을 열을 더하고(예: state, owner, claimed_at. req.attempt와 req.now로 채웁니다), 같은 요청의 재시도가 리스보다 오래된 in_progress 선점을 만나면 UPDATE … SET owner = ?, claimed_at = ? WHERE … AND state = 'in_progress' AND claimed_at < ?(req.now에서 리스를 뺀 값) 쿼리 하나로 넘겨받게 하세요. 완료는 owner가 아직 그 시도일 때만 합니다. 결제망에 키를 넘기지 않았다면 결제 뒤의 넘겨받기는 다시 결제합니다. 이미 리스가 있다면 그 시계를 확인하세요. 리스의 모든 시각은 req.now, 실습의 시계로 잰 요청의 시각이어야 합니다(Date.now()는 다른 시계이고, 실습의 재시도는 req.now의 시계로 몇 분 뒤에 옵니다)."},
	CauseTakeoverUnchecked: {CauseTakeoverUnchecked,
		"two attempts each made the same claim their own (a retry taking over the claim of an attempt that crashed or stalled, and that attempt, or another retry, writing over it after), and each went on to move the money: nothing made the second write to the claim fail",
		"let the UPDATE that takes the claim over decide, not a row read before it: UPDATE … SET owner = ?, claimed_at = ? WHERE … AND state = 'in_progress' AND claimed_at < ? (req.now minus the lease), and go on only when its changes is 1, since another retry may have taken the claim a moment before; complete the key WHERE … AND owner = ? (the attempt's own) in the transfer's own transaction, before its COMMIT, and go on only when that changes 1 row, rolling the transfer back otherwise (after COMMIT there is nothing left to roll back)",
		"두 시도가 같은 선점을 각각 자기 것으로 만들었고(죽거나 멈춘 시도의 선점을 재시도가 넘겨받은 뒤, 그 시도나 다른 재시도가 그 위에 다시 썼습니다), 둘 다 이어서 돈을 옮겼습니다. 선점에 두 번째로 쓰는 것을 실패하게 하는 것이 없었습니다.",
		"넘겨받기는 미리 읽어 둔 행이 아니라 넘겨받는 UPDATE가 판정하게 하세요. UPDATE … SET owner = ?, claimed_at = ? WHERE … AND state = 'in_progress' AND claimed_at < ?(req.now에서 리스를 뺀 값)를 실행하고 changes가 1일 때만 계속합니다. 바로 앞서 다른 재시도가 선점을 넘겨받았을 수 있기 때문입니다. 키를 완료할 때도 송금의 트랜잭션 안에서 COMMIT 전에 WHERE … AND owner = ?(자기 시도)로 하고 1행이 바뀌었을 때만 계속하며, 그렇지 않으면 송금을 롤백하세요(COMMIT 뒤에는 롤백할 것이 남지 않습니다)."},
	CauseCustomerOptional: {CauseCustomerOptional,
		"a transfer without X-Customer-ID was not refused 401: without its customer a key belongs to no one, so neither the key's scope nor the transfer's owner is known",
		"answer 401 to a transfer without X-Customer-ID, before anything is claimed or moved, as the lab's starting handler does",
		"X-Customer-ID 없는 송금을 401로 거절하지 않았습니다. 고객이 없으면 키가 누구의 것인지 알 수 없어서, 키의 범위도 송금의 주인도 알 수 없습니다.",
		"X-Customer-ID 없는 송금에는 아무것도 선점하거나 옮기기 전에 401로 답하세요. 랩의 시작 핸들러가 그렇게 합니다."},
	CauseKeyOptional: {CauseKeyOptional,
		"a transfer without Idempotency-Key was executed, so the client's retry of it was executed again",
		"answer 400 to a transfer without a valid Idempotency-Key, before anything is claimed or moved: without a key no retry can be recognised",
		"Idempotency-Key 없이 온 송금을 실행했습니다. 그래서 클라이언트가 같은 요청을 다시 보냈을 때 한 번 더 실행되었습니다.",
		"유효한 Idempotency-Key가 없는 송금에는 아무것도 선점하거나 옮기기 전에 400으로 답하세요. 키가 없으면 재시도를 알아볼 방법이 없습니다."},
	CauseGlobalKeys: {CauseGlobalKeys,
		"keys are global: another customer's earlier use of the same key string decided this customer's request",
		"scope keys by customer: make the key table's primary key (customer, endpoint, key), and fill its customer from the request's X-Customer-ID (req.customer in the lab) in every statement that claims, reads or completes a key, so that each customer's new request under a key string someone else used is executed as the new request it is",
		"키가 고객별로 나뉘어 있지 않습니다. 다른 고객이 먼저 쓴 같은 키 문자열이 이 고객의 요청을 결정했습니다.",
		"키를 고객별로 나누세요. 키 테이블의 기본 키를 (customer, endpoint, key)로 두고, 키를 선점하거나 읽거나 완료하는 모든 SQL 문에서 customer를 요청의 X-Customer-ID(실습에서는 req.customer)로 채우세요. 그러면 다른 사람이 쓴 키 문자열로 온 이 고객의 새 요청도 새 요청으로 실행됩니다."},
	CauseRawBytes: {CauseRawBytes,
		"the fingerprint compares the body's raw bytes: the same request with other spacing was taken for a different request",
		"fingerprint the canonical JSON of the body (RFC 8785: members sorted by name, no insignificant whitespace), so that re-spaced and reordered bodies are the same request",
		"지문이 본문의 바이트를 그대로 비교합니다. 공백만 다른 같은 요청을 다른 요청으로 보았습니다.",
		"본문을 정규화한 JSON으로 지문을 만드세요(RFC 8785: 멤버를 이름순으로 정렬하고 의미 없는 공백을 뺍니다). 그러면 공백이나 순서만 다른 본문도 같은 요청이 됩니다."},
	CauseFingerprintUnstable: {CauseFingerprintUnstable,
		"a retry that sent the very bytes of the first request, under the same key and from the same customer, was refused 422 as a different request: the comparison found the two fingerprints different, so either the fingerprint is made of more than the request (the attempt, the time, a random value) or what it is compared with is not the stored fingerprint",
		"make the fingerprint from the request alone: the method, the route and the canonical body (lab.canonical(req.body)), and nothing that differs between attempts of one request (not req.attempt, not req.now, not a random value); then compare the stored one with the one this request makes, string with string: row.fingerprint !== fingerprint",
		"첫 요청과 바이트까지 같은 재시도가 같은 키, 같은 고객으로 왔는데 다른 요청이라며 422로 거절되었습니다. 비교에서 두 지문이 다르게 나왔으니, 지문을 요청이 아닌 것(시도, 시각, 난수)까지 넣어 만들었거나, 저장한 지문이 아닌 다른 값과 비교한 것입니다.",
		"지문은 요청만으로 만드세요. 메서드, 경로, 정규화한 본문(lab.canonical(req.body))으로 만들고, 한 요청의 시도마다 달라지는 것(req.attempt, req.now, 난수)은 넣지 마세요. 그리고 저장한 지문을 이 요청이 만든 지문과 문자열끼리 비교하세요: row.fingerprint !== fingerprint"},
	CauseReorderedRefused: {CauseReorderedRefused,
		"the same request with its members in another order was refused as a different request (422): the fingerprint depends on the order of the members, either because it compares the body's raw bytes or because it writes the parsed body again without sorting",
		"fingerprint the canonical JSON of the body (RFC 8785: members sorted by name, no insignificant whitespace), so that a client library that orders fields differently sends the same request",
		"멤버 순서만 다른 같은 요청을 다른 요청으로 보고 거절했습니다(422). 지문이 멤버의 순서에 따라 달라집니다. 본문의 바이트를 그대로 비교하거나, 파싱한 본문을 정렬하지 않고 다시 쓰기 때문입니다.",
		"본문을 정규화한 JSON으로 지문을 만드세요(RFC 8785: 멤버를 이름순으로 정렬하고 의미 없는 공백을 뺍니다). 그러면 필드 순서가 다른 클라이언트 라이브러리가 보낸 요청도 같은 요청이 됩니다."},
	CauseOrderSensitive: {CauseOrderSensitive,
		"the fingerprint ignores whitespace but not the order of the members (a body parsed and written again without sorting, as JSON.stringify or json.dumps without sort_keys do)",
		"sort the members by name before hashing (RFC 8785; in Python json.dumps(..., sort_keys=True, separators=(\",\", \":\")), in Node a stringify that sorts keys), so that a client library that orders fields differently sends the same request",
		"지문이 공백은 무시하지만 멤버의 순서는 따집니다. 본문을 파싱한 뒤 정렬하지 않고 다시 썼습니다(sort_keys 없는 JSON.stringify나 json.dumps가 이렇게 합니다).",
		"해시하기 전에 멤버를 이름순으로 정렬하세요(RFC 8785. Python에서는 json.dumps(..., sort_keys=True, separators=(\",\", \":\")), Node에서는 키를 정렬하는 stringify). 그러면 필드 순서가 다른 클라이언트 라이브러리가 보낸 요청도 같은 요청이 됩니다."},
	CauseNoFingerprint: {CauseNoFingerprint,
		"the key alone decides, or a fingerprint that leaves out the part of the request that changed: a different request under a used key was taken for a retry",
		"store a fingerprint of the request (SHA-256 of method, route and canonical JSON body) with the key, and compare it with the new request's on every use of the key, before anything else is done: a different request under a used key gets 422 and moves nothing (a fingerprint stored but never compared is no fingerprint, and one of some members only, the amount without the payee say, lets a request that changed another member through)",
		"키만 보고 판단하거나, 지문이 요청에서 바뀐 부분을 담지 않습니다. 이미 쓴 키로 온 다른 요청을 재시도로 보았습니다.",
		"요청의 지문(메서드, 경로, 정규화한 JSON 본문의 SHA-256)을 키와 함께 저장하고, 키가 다시 쓰일 때마다 무엇보다 먼저 새 요청의 지문과 비교하세요. 이미 쓴 키로 다른 요청이 오면 422로 답하고 아무것도 옮기지 않습니다(저장만 하고 비교하지 않는 지문은 지문이 아니고, 받는 계좌 없이 금액만 담는 식으로 일부 필드만 담은 지문은 다른 필드가 바뀐 요청을 통과시킵니다)."},
	CauseKeyIgnored: {CauseKeyIgnored,
		"the key is not looked at: a different request under a used key was executed as a transfer of its own, as a retry of the same request would be",
		"claim the key before anything moves: one INSERT into a key table whose key column is UNIQUE, the constraint error being the verdict that the key was used (not an upsert, INSERT … ON CONFLICT … DO UPDATE, which raises no error and answers with a row whether the key was new or taken); then store a fingerprint of the request with it, so that a different request under a used key gets 422 and moves nothing",
		"키를 보지 않습니다. 이미 쓴 키로 온 다른 요청이 별개의 송금으로 실행되었고, 같은 요청을 다시 보내도 그렇게 됩니다.",
		"무엇이든 옮기기 전에 키를 선점하세요. 키 열이 UNIQUE인 키 테이블에 INSERT를 한 번 하고, 그 제약 오류를 키가 이미 쓰였다는 판정으로 삼습니다(INSERT … ON CONFLICT … DO UPDATE 같은 업서트는 안 됩니다. 오류 없이, 키가 새것이든 이미 있든 행을 돌려줍니다). 그다음 요청의 지문을 키와 함께 저장하면, 이미 쓴 키로 온 다른 요청은 422를 받고 아무것도 옮기지 않습니다."},
	CauseCompletedFirst: {CauseCompletedFirst,
		"the key reads as done while its transfer is still running: a retry that arrived meanwhile was answered as if the work were finished",
		"keep the key in_progress while the transfer runs and answer 409 with Retry-After: 1 to a retry that arrives meanwhile; mark it completed, with the answer stored, in the transfer's own transaction",
		"송금이 아직 진행 중인데 키는 이미 완료로 보입니다. 그사이 도착한 재시도가 일이 끝난 것처럼 답을 받았습니다.",
		"송금이 진행되는 동안 키를 in_progress로 두고, 그사이 온 재시도에는 Retry-After: 1과 함께 409로 답하세요. 답을 저장하며 키를 completed로 바꾸는 일은 송금과 같은 트랜잭션에서 하세요."},
	CauseGenericReplay: {CauseGenericReplay,
		"a retry was answered with a generic answer, not with the first answer",
		"store the first answer (status, body, the allowed headers) with the key and send those bytes again on every retry, with Idempotent-Replayed: true",
		"재시도가 첫 번째 답이 아니라 어느 요청에나 똑같이 주는 답을 받았습니다.",
		"첫 번째 답(상태 코드, 본문, 허용된 헤더)을 키와 함께 저장하고, 재시도마다 그 바이트를 Idempotent-Replayed: true와 함께 다시 보내세요."},
	CauseRecomputed: {CauseRecomputed,
		"the retry's answer was built again instead of sent from the stored bytes: rendered from the ledger as it is now (another balance or time), or the same members written in another order or spacing, it is not the first answer byte for byte",
		"store the first answer's bytes with the key when the transfer commits, and send those bytes again; never render a replay anew",
		"재시도의 답을 저장된 바이트로 보내지 않고 새로 만들었습니다. 지금의 원장으로 렌더링했든(잔액이나 시각이 달라짐), 같은 멤버를 다른 순서나 공백으로 썼든, 첫 번째 답과 바이트가 같지 않습니다.",
		"송금을 커밋할 때 첫 번째 답의 바이트를 키와 함께 저장하고 그 바이트를 다시 보내세요. 재생할 답을 새로 렌더링하지 마세요."},
	CauseReplayStatus: {CauseReplayStatus,
		"the retry got the first answer's body with another status",
		"store the status with the body and replay both: a 201 is replayed as 201, not as a fixed 200",
		"재시도가 첫 번째 답의 본문을 받았지만 상태 코드가 다릅니다.",
		"상태 코드도 본문과 함께 저장해 둘 다 다시 보내세요. 201은 고정된 200이 아니라 201로 재생됩니다."},
	CausePaidInTx: {CausePaidInTx,
		"the payment network was called inside the database transaction: its charge is not undone by a ROLLBACK, and the transaction's lock is held while the network answers, so every other request waits on it",
		"call pay before db.begin() (after the claim), and open the transaction only to move the money and complete the key",
		"데이터베이스 트랜잭션 안에서 결제망을 불렀습니다. 결제망의 청구는 ROLLBACK으로 되돌려지지 않고, 결제망이 답하는 동안 트랜잭션의 잠금이 잡혀 있어 다른 요청이 모두 기다립니다.",
		"pay는 (선점한 뒤) db.begin() 전에 부르고, 트랜잭션은 돈을 옮기고 키를 완료할 때만 여세요."},
	CauseKeyUnchecked: {CauseKeyUnchecked,
		"a key that is not one Structured Field string of 1 to 255 printable characters in double quotes was taken as a key (or as none) instead of refused: two clients' different keys may meet as one, and a request the client meant to refuse may move money",
		"parse the Idempotency-Key header with lab.parseKey (or a Structured Field parser) and answer 400 before anything is claimed or moved when it gives no key",
		"큰따옴표 안의 인쇄 가능한 문자 1~255자로 된 Structured Field 문자열이 아닌 키를 거절하지 않고 키로(또는 키 없음으로) 받아들였습니다. 두 클라이언트의 서로 다른 키가 하나로 만날 수 있고, 거절되어야 할 요청이 돈을 옮길 수 있습니다.",
		"Idempotency-Key 헤더를 lab.parseKey(또는 Structured Field 파서)로 읽고, 키가 나오지 않으면 아무것도 선점하거나 옮기기 전에 400으로 답하세요."},
	CauseLongestKeyRefused: {CauseLongestKeyRefused,
		"a valid key of exactly 255 characters was refused: the length limit counted the quotes or the header's bytes, not the key",
		"count the 1 to 255 characters between the quotes, after parsing; the quotes and escapes are not part of the key",
		"정확히 255자인 올바른 키를 거절했습니다. 길이 제한이 키가 아니라 따옴표나 헤더의 바이트까지 셌습니다.",
		"파싱한 뒤 따옴표 사이의 1~255자를 세세요. 따옴표와 이스케이프는 키에 들어가지 않습니다."},
	CauseLeaseTooShort: {CauseLeaseTooShort,
		"a retry took over the claim of an attempt that was still running: the lease (how long a claim counts as alive) is shorter than a transfer can take, or is measured from another moment than the claim's (the key's created_at), so a slow attempt's claim goes to its retry, and the first attempt's work is thrown away (or, without an owner check, both move the money)",
		"make the lease longer than any transfer can take, tens of seconds or more rather than a few milliseconds (req.now counts milliseconds), and measure it from the claim, on one clock, the request's: claimed_at = req.now, written at the claim and again at each takeover (not created_at, which a stalled attempt's claim keeps from long ago), and a takeover WHERE claimed_at < req.now minus the lease (with >, the other way round, the live claims are taken and the dead ones never are; Date.now() is another clock than req.now, so a lease read against it expires at once or never): only a claim whose attempt died should ever be taken over",
		"재시도가 아직 실행 중인 시도의 선점을 가져갔습니다. 리스(선점이 살아 있다고 보는 시간)가 송금에 걸릴 수 있는 시간보다 짧거나, 선점한 때가 아닌 다른 시각(키의 created_at)부터 재고 있어서, 느린 시도의 선점이 재시도에게 넘어가고 첫 시도의 작업은 버려집니다(주인 확인이 없으면 둘 다 돈을 옮깁니다).",
		"리스는 어떤 송금보다도 길게, 몇 밀리초가 아니라 수십 초 이상으로 잡고(req.now는 밀리초입니다), 선점한 때부터 요청의 시계 하나로 재세요. 선점할 때와 넘겨받을 때마다 claimed_at = req.now로 쓰고(멈췄던 시도의 선점은 created_at이 오래전이므로 created_at으로 재면 안 됩니다), 넘겨받을 때는 WHERE claimed_at < (req.now에서 리스를 뺀 값)으로 비교합니다(>로 거꾸로 비교하면 살아 있는 선점을 가져가고 죽은 선점은 끝내 가져가지 않습니다. Date.now()는 req.now와 다른 시계라서, 그것으로 잰 리스는 곧바로 끝나거나 영영 끝나지 않습니다). 넘겨받아도 되는 것은 시도가 죽은 선점뿐입니다."},
	CauseClaimReplaced: {CauseClaimReplaced,
		"the key's INSERT found another attempt's claim and replaced it (INSERT OR REPLACE) instead of failing: no error came, so the attempt went on as if the key were its own, and the other attempt's claim was gone",
		"let the claim fail loudly: a plain INSERT, whose ConstraintError is the verdict that another attempt has the key (catch it and answer from that key: its stored answer, 422 for a different request, or 409 while it is in progress); never OR REPLACE for the claim (an ON CONFLICT … DO UPDATE takes a claim over only with the lease in its WHERE)",
		"키를 넣는 INSERT가 다른 시도의 선점을 만났는데 실패하지 않고 그 행을 바꿔 썼습니다(INSERT OR REPLACE). 오류가 나지 않으니 시도는 키가 자기 것인 양 계속했고, 다른 시도의 선점은 사라졌습니다.",
		"선점이 실패를 드러내게 하세요. 평범한 INSERT를 쓰면 그 ConstraintError가 다른 시도가 키를 가졌다는 판정입니다(잡아서 그 키로 답하세요. 저장된 답, 다른 요청이면 422, 처리 중이면 409). 선점에는 OR REPLACE를 쓰지 마세요(ON CONFLICT … DO UPDATE로 넘겨받으려면 WHERE에 리스 조건이 있어야 합니다)."},
	CauseStateBeforeFingerprint: {CauseStateBeforeFingerprint,
		"the key's state was read before its fingerprint: a different request under a key still in progress was told 409 (come back in a second), though no retry of it can ever succeed; the contract tells it 422 at once",
		"when the key's INSERT fails, compare the fingerprint first (422 for a different request, whatever the key's state), and only then the state: 409 while the first request is in progress, its stored answer once it is completed",
		"키의 상태를 지문보다 먼저 읽었습니다. 아직 처리 중인 키로 다른 요청이 오자 409(잠시 뒤 다시 오라)를 받았지만, 그 요청은 몇 번을 다시 보내도 성공할 수 없습니다. 계약은 곧바로 422로 답합니다.",
		"키의 INSERT가 실패하면 지문부터 비교하세요(다른 요청이면 키의 상태와 상관없이 422). 상태는 그다음입니다. 첫 요청이 처리 중이면 409, 완료되었으면 저장한 답을 보냅니다."},
	CausePaidTwice: {CausePaidTwice,
		"one attempt called pay twice for one request, and the network, given no key (or another one the second time), charged twice",
		"call pay once an attempt; if you retry the call (it threw, or took too long), give it the same key each time, made from the customer and the request's Idempotency-Key, so that the network answers the second call with its first charge",
		"한 시도가 한 요청에 pay를 두 번 불렀고, 키를 받지 못한(또는 두 번째에 다른 키를 받은) 결제망은 두 번 청구했습니다.",
		"pay는 시도마다 한 번 부르세요. 호출을 다시 해야 한다면(예외가 났거나 너무 오래 걸렸다면) 매번 같은 키를 주세요. 고객과 요청의 Idempotency-Key로 만든 키입니다. 그러면 결제망이 두 번째 호출에 첫 청구로 답합니다."},
	CauseNetworkKeyMissing: {CauseNetworkKeyMissing,
		"two attempts of one request each paid under a claim of their own (the first's answer from the network lost, or its claim taken over), and the network, given no key or not the same one each time, charged the second again",
		"give pay a key that is the same for every attempt of one request, made from the customer and the request's Idempotency-Key (never from the attempt or the time): the network then answers the retry's call with its first charge (replayed: true) and charges nothing",
		"한 요청의 두 시도가 각자 자기 선점 아래에서 결제했습니다(첫 시도가 받을 결제망의 답이 사라졌거나, 그 선점을 다른 시도가 넘겨받았습니다). 키를 받지 못한(또는 매번 다른 키를 받은) 결제망은 두 번째에도 청구했습니다.",
		"한 요청의 모든 시도에 같은 키를 pay에 주세요. 고객과 요청의 Idempotency-Key로 만들고, 시도나 시각으로 만들지 마세요. 그러면 결제망은 재시도의 호출에 첫 청구로 답하고(replayed: true) 새로 청구하지 않습니다."},
	CauseClaimNotReleased: {CauseClaimNotReleased,
		"the payment network failed the first attempt, which answered with an error but kept its claim in progress: the client's retry was told 409 (come back later), and will be until the claim is taken over, while the request is neither done nor undone",
		"when the work fails before the transfer commits (pay threw, or any error), roll back what is open and delete your own claim (DELETE … WHERE the key AND owner = ? AND state = 'in_progress', owner being a column your claim fills with req.attempt) before you answer 5xx: the retry then claims the key afresh and, with the same key given to pay, gets the first charge back if there was one",
		"결제망이 첫 시도를 실패시켰고, 그 시도는 오류로 답했지만 선점은 처리 중인 채로 남겼습니다. 클라이언트의 재시도는 409(나중에 다시 오라)를 받았고, 선점을 누가 넘겨받을 때까지 계속 그럴 것입니다. 요청은 끝나지도 취소되지도 않았습니다.",
		"송금이 커밋되기 전에 일이 실패하면(pay가 예외를 던졌거나 다른 오류), 열린 것을 롤백하고 자기 선점을 지운 뒤(DELETE … WHERE 그 키 AND owner = ? AND state = 'in_progress'. owner는 선점할 때 req.attempt를 넣어 두는 열입니다) 5xx로 답하세요. 그러면 재시도가 키를 새로 선점하고, pay에 같은 키를 주므로 첫 청구가 있었다면 그것을 돌려받습니다."},
	CauseFailureStored: {CauseFailureStored,
		"the first attempt's failure (the payment network did not answer) was stored as the key's answer and handed to the retry: the request can never succeed under its key, though the failure was the network's, not the request's",
		"store only the request's own answers (201, and refusals of the request itself: 402, 404); a failure of the work (pay threw: answer 5xx, never a 402 or a 404, which say the request itself is refused) says nothing about the request: release the claim instead, so that the retry runs it again",
		"첫 시도의 실패(결제망이 답하지 않음)가 키의 답으로 저장되어 재시도에게 전해졌습니다. 실패는 요청이 아니라 결제망의 것이었는데, 이제 그 키로는 요청이 영영 성공할 수 없습니다.",
		"요청 자체의 답만 저장하세요(201, 그리고 요청을 거절하는 402, 404). 일의 실패(pay가 예외를 던진 경우: 5xx로 답하고, 요청 자체를 거절한다는 뜻인 402나 404로 답하지 마세요)는 요청에 대해 아무것도 말하지 않습니다. 대신 선점을 풀어서 재시도가 요청을 다시 실행하게 하세요."},
	CauseFailureCompleted: {CauseFailureCompleted,
		"the payment network failed (pay threw) and the attempt answered as if the request were settled (a 4xx such as 402) and completed its key: its retry was then told the key was done, though no transfer was ever made",
		"when pay throws, the request is neither done nor refused: roll back what is open, delete your own claim and answer 5xx (503), so that the retry runs it again; a 402 says the customer lacks the money, and a completed key keeps that answer for ever",
		"결제망이 실패했는데(pay가 예외를 던짐) 시도가 요청이 끝난 것처럼(402 같은 4xx로) 답하고 키를 완료했습니다. 그래서 재시도는 송금이 한 번도 없었는데도 키가 끝났다는 답을 받았습니다.",
		"pay가 예외를 던지면 요청은 끝난 것도 거절된 것도 아닙니다. 열린 것을 롤백하고 자기 선점을 지운 뒤 5xx(503)로 답해서 재시도가 요청을 다시 실행하게 하세요. 402는 고객의 잔액이 모자란다는 뜻이고, 완료된 키는 그 답을 영영 간직합니다."},
	CauseCompletedKeyReleased: {CauseCompletedKeyReleased,
		"an attempt threw after its transfer had committed, and its retry moved the money again: the error path deleted the key (a DELETE without AND state = 'in_progress'), though the transfer it guarded was already done, so the retry found the key free",
		"release only a claim still in progress (DELETE … WHERE the key AND owner = ? AND state = 'in_progress'): once the transfer and the completed key have committed, an error after them has nothing to undo; find the error at its line, and answer from what was committed",
		"한 시도가 송금을 커밋한 뒤에 예외를 던졌고, 그 재시도가 돈을 다시 옮겼습니다. 오류 처리 경로가 키를 지웠기 때문입니다(AND state = 'in_progress' 없는 DELETE). 키가 지키던 송금은 이미 끝났는데도 재시도는 키가 비어 있다고 보았습니다.",
		"처리 중인 선점만 푸세요(DELETE … WHERE 그 키 AND owner = ? AND state = 'in_progress'). 송금과 완료된 키가 커밋된 뒤의 오류는 되돌릴 것이 없습니다. 오류가 난 줄을 찾고, 커밋된 것으로 답하세요."},
	CauseTransferUnpaid: {CauseTransferUnpaid,
		"a transfer was made that the payment network never charged: the money moved in the bank, and the network never paid it (pay threw and the handler went on, or pay was called without await so that its error was never seen, or pay came after COMMIT and never ran, or not at all)",
		"move the money only once pay has answered: call await pay(…) before db.begin(), and let its error end the attempt (roll back, release your claim, answer 5xx) instead of catching it and going on; never pay after COMMIT",
		"결제망이 한 번도 청구하지 않은 송금이 만들어졌습니다. 은행 안에서는 돈이 옮겨졌는데 결제망은 지급하지 않았습니다(pay가 예외를 던졌는데 핸들러가 계속했거나, pay를 await 없이 불러 그 오류를 보지 못했거나, pay를 COMMIT 뒤에 불러 실행되지 못했거나, 아예 부르지 않았습니다).",
		"pay가 답한 뒤에만 돈을 옮기세요. await pay(…)는 db.begin() 전에 부르고, 그 오류를 잡아서 계속하지 말고 시도를 끝내세요(롤백, 선점 해제, 5xx 응답). COMMIT 뒤에 pay를 부르지 마세요."},
	CauseAnswerUnreturned: {CauseAnswerUnreturned,
		"a refusal was built with lab.problem but never returned: the code went on past it as if the request were fine, and answered with success",
		"return the refusal where you build it: return lab.problem(…); a lab.problem that is not returned does nothing",
		"lab.problem으로 거절 응답을 만들었지만 돌려주지 않았습니다. 코드는 요청에 문제가 없는 것처럼 그 거절을 지나쳐 계속했고 성공으로 답했습니다.",
		"거절은 만든 자리에서 돌려주세요: return lab.problem(…). 돌려주지 않은 lab.problem은 아무 일도 하지 않습니다."},
	CauseWaitForNobody: {CauseWaitForNobody,
		"every attempt of a request was told to come back later (409, or another such status) while no attempt was working on it: the request is never served, however long its client retries, and its transfer is never made",
		"answer 409 only when the key's row shows another attempt still working on it (state 'in_progress'); in the catch around your key's INSERT, go on only when e.name is 'ConstraintError', and let every other error end the attempt so that you see it (a missing table or column, a misspelt name, a row your SELECT did not find)",
		"요청의 모든 시도가 나중에 다시 오라는 답(409 등)을 받았는데, 그 요청을 처리하던 시도는 하나도 없었습니다. 클라이언트가 아무리 재시도해도 요청은 처리되지 않고 송금도 이루어지지 않습니다.",
		"409는 키의 행이 다른 시도가 아직 처리 중(state 'in_progress')이라고 할 때만 보내세요. 키를 넣는 INSERT를 감싼 catch에서는 e.name이 'ConstraintError'일 때만 계속하고, 다른 오류는 시도를 끝내게 두어 눈에 보이게 하세요. 테이블이나 열이 없거나, 이름에 오타가 있거나, SELECT가 행을 찾지 못한 경우입니다."},
	CauseClaimLeft: {CauseClaimLeft,
		"an attempt answered (a refusal, or a success) and left its claim in progress: a retry sent after that answer was told 409 (come back later) by a claim no attempt was working on, and will be until the claim is taken over",
		"settle the claim on every path that answers: complete the key with the answer in the same transaction (a 402 or a 404 is an answer too: stored and replayed), or delete your own claim before you answer what you do not store; a return between the claim and the completion leaves the claim in progress",
		"어떤 시도가 답을 보내면서(거절이든 성공이든) 자기 선점을 처리 중인 채로 남겼습니다. 그 답 뒤에 온 재시도는 아무도 처리하지 않는 선점 때문에 409(나중에 다시 오라)를 받았고, 누가 선점을 넘겨받을 때까지 계속 그럴 것입니다.",
		"답하는 모든 경로에서 선점을 마무리하세요. 같은 트랜잭션에서 답과 함께 키를 완료하거나(402나 404도 답이므로 저장하고 재생합니다), 저장하지 않는 답이라면 답하기 전에 자기 선점을 지우세요. 선점과 완료 사이에서 return하면 선점이 처리 중으로 남습니다."},
	CauseTakeoverUnfingerprinted: {CauseTakeoverUnfingerprinted,
		"a different request took over the claim a crashed attempt left, once its lease ran out, and was executed: the takeover did not compare the fingerprint, so the key now answers for a request it was never claimed for, and the first request's own retry is refused",
		"take an expired claim over only for the same request: put AND fingerprint = ? in the WHERE of the UPDATE that takes it over, and when it changes no row, read the key and answer 422 to a different request",
		"죽은 시도가 남긴 선점을 리스가 끝난 뒤 다른 요청이 넘겨받아 실행되었습니다. 넘겨받을 때 지문을 비교하지 않아서, 키가 선점된 적 없는 요청의 답을 하게 되었고 첫 요청의 재시도는 거절당합니다.",
		"만료된 선점은 같은 요청일 때만 넘겨받으세요. 넘겨받는 UPDATE의 WHERE에 AND fingerprint = ?를 넣고, 바뀐 행이 없으면 키를 읽어 다른 요청에는 422로 답합니다."},
	CauseReplayHeaders: {CauseReplayHeaders,
		"the retry got the first answer's status and body with another Content-Type (or none): the answer's headers were not stored with its bytes, or not sent again with them",
		"store the answer's Content-Type with its status and body, and send it again on every replay: a 402 stored as application/problem+json is replayed as application/problem+json",
		"재시도가 첫 번째 답과 같은 상태 코드와 본문을 받았지만 Content-Type이 다릅니다(또는 없습니다). 답의 헤더를 바이트와 함께 저장하지 않았거나, 재생할 때 함께 보내지 않았습니다.",
		"답의 Content-Type도 상태 코드, 본문과 함께 저장해 재생할 때마다 다시 보내세요. application/problem+json으로 저장한 402는 application/problem+json으로 재생됩니다."},
	CauseRefusalNotStored: {CauseRefusalNotStored,
		"a business refusal (402 or 404) was not stored under its key, so the retry, once the money or the account was there, was executed as a new request",
		"a refusal is an answer: store a 402 or 404 under its key like a success and replay it; release the claim (delete the key) only when the request failed with an exception and was never answered",
		"업무상 거절(402 또는 404)을 키에 저장하지 않았습니다. 그래서 돈이나 계좌가 생긴 뒤 온 재시도가 새 요청으로 실행되었습니다.",
		"거절도 답입니다. 402나 404도 성공처럼 키에 저장하고 다시 보내세요. 선점을 풀어 키를 지우는 것은 요청이 예외로 실패해 답하지 못했을 때뿐입니다."},
	CauseRefusalRerendered: {CauseRefusalRerendered,
		"the stored refusal was built again instead of replayed (rendered by an error handler, or re-encoded in another member order or spacing): the same status, other bytes",
		"store the refusal's status and body bytes with the key and send exactly those bytes again, as for a success",
		"저장한 거절을 그대로 다시 보내지 않고 새로 만들었습니다. 오류 처리기를 거쳐 다시 렌더링했거나, 멤버 순서나 공백을 바꿔 다시 인코딩했습니다. 상태 코드는 같지만 바이트가 다릅니다.",
		"성공과 마찬가지로 거절의 상태 코드와 본문 바이트를 키와 함께 저장하고, 정확히 그 바이트를 다시 보내세요."},
	CauseStoredRefusal: {CauseStoredRefusal,
		"a request refused 400 (bad body) or 401 (no customer) was stored under its key, so the repaired request under the same key got that refusal (or a 422) instead of being executed",
		"validate the headers and the body (401, then 400) before the key is claimed, and store nothing for them: only a request that passed validation claims its key; a middleware that stores every answer must skip 400 and 401",
		"400(잘못된 본문)이나 401(고객 없음)으로 거절한 요청을 키에 저장했습니다. 그래서 같은 키로 고쳐 보낸 요청이 실행되지 않고 그 거절(또는 422)을 받았습니다.",
		"키를 선점하기 전에 헤더와 본문을 검증하고(401, 그다음 400) 그 결과는 저장하지 마세요. 검증을 통과한 요청만 키를 선점합니다. 모든 답을 저장하는 미들웨어라면 400과 401은 건너뛰어야 합니다."},
	CauseInProcessLock: {CauseInProcessLock,
		"the attempts under one key reached different replicas, while the same traffic sent to one replica kept the rule: what guards a key (a lock, or a cache of keys) lives in one process's memory, and the other replica has its own, so a retry there pays again",
		"claim the key in the shared database: one INSERT into a key table whose primary key (customer, endpoint, key) is a UNIQUE constraint, the constraint error being the verdict; a lock must be in the database too (the INSERT itself, or SELECT … FOR UPDATE on PostgreSQL), never a mutex, a dict or a cache in the server's memory",
		"같은 키의 시도들이 서로 다른 복제 서버에 닿았고, 같은 요청을 한 서버에만 보냈을 때는 규칙이 지켜졌습니다. 키를 지키는 것(잠금이나 키 캐시)이 한 프로세스의 메모리에 있어서, 다른 서버는 자기 것을 따로 가지므로 그쪽으로 간 재시도가 다시 결제합니다.",
		"공유 데이터베이스에서 키를 선점하세요. 기본 키 (customer, endpoint, key)가 UNIQUE 제약인 키 테이블에 INSERT를 한 번 하고, 그 제약 오류를 판정으로 삼습니다. 잠금도 데이터베이스 안에 있어야 합니다(INSERT 자체, 또는 PostgreSQL의 SELECT … FOR UPDATE). 서버 메모리의 뮤텍스, 딕셔너리, 캐시로는 안 됩니다."},
	CauseKeyPurgedEarly: {CauseKeyPurgedEarly,
		"the key's row was deleted before the retention the handler publishes had run out: a retry that came within that time found no key and was executed again as a new request",
		"delete a key only once it is older than the retention you publish (const retentionSeconds): compare the time stored with it to req.now; a purge that also deletes newer keys breaks the promise the published retention makes to every client",
		"핸들러가 공개한 보존 기간이 끝나기 전에 키의 행을 지웠습니다. 그 기간 안에 온 재시도는 키를 찾지 못해 새 요청으로 다시 실행되었습니다.",
		"공개한 보존 기간(const retentionSeconds)보다 오래된 키만 지우세요. 키와 함께 저장한 시각을 req.now와 비교합니다. 그보다 나중에 만든 키까지 지우면, 공개한 보존 기간이 모든 클라이언트에게 한 약속을 어기게 됩니다."},
	CauseClaimIgnored: {CauseClaimIgnored,
		"the key's INSERT found the key taken, but its conflict clause (OR IGNORE, or ON CONFLICT … DO NOTHING) made it change no row instead of failing, and the attempt went on as if the key were its own: the verdict was thrown away",
		"let the claim fail loudly: a plain INSERT, whose ConstraintError is the verdict that another attempt has the key (catch it and answer from that key: its stored answer, or 409 while it is in progress); or, if you keep OR IGNORE, read what db.run returns and go on only when changes is 1",
		"키를 넣는 INSERT가 키가 이미 있는 것을 만났지만, 충돌 절(OR IGNORE나 ON CONFLICT … DO NOTHING) 때문에 실패하지 않고 행을 하나도 바꾸지 않은 채 끝났습니다. 시도는 키가 자기 것인 양 계속했습니다. 판정을 버린 것입니다.",
		"선점이 실패를 드러내게 하세요. 평범한 INSERT를 쓰면 그 ConstraintError가 다른 시도가 키를 가졌다는 판정입니다(잡아서 그 키로 답하세요. 저장된 답을 보내거나, 처리 중이면 409). OR IGNORE를 남긴다면 db.run이 돌려주는 값을 읽어 changes가 1일 때만 계속하세요."},
	CauseShortRetention: {CauseShortRetention,
		"the published retention is not longer than the clients' retry horizon",
		"keep keys for longer than the clients retry: more than 3600 s for the lab (idemlab's scoped keeps 86400), and publish it at GET {base} as {\"retention_seconds\": N}",
		"공개한 보존 기간이 클라이언트가 재시도하는 기간보다 길지 않습니다.",
		"클라이언트가 재시도하는 기간보다 오래 키를 보존하세요. 실습에서는 3600초보다 길게(idemlab의 scoped는 86400초) 보존하고, GET {base}에서 {\"retention_seconds\": N}으로 공개하세요."},
}

// ruleFixes say, per rule, what a student's endpoint must do when the
// evidence does not tell the cause.
var ruleFixes = map[string]string{
	RuleOneTransfer.Name:   "claim the key before paying: one plain INSERT into a key table whose key column is UNIQUE, the constraint error being the verdict (not a SELECT first: two attempts both find the key absent; not INSERT OR IGNORE with its changed-rows count unread, nor OR REPLACE: they raise no error); an attempt whose INSERT fails moves nothing and pays nothing",
	RuleNoSilentWrong.Name: "store a fingerprint of the request (SHA-256 of the canonical JSON body) with the key; a different request under a used key gets 422 and moves nothing",
	RuleByteReplay.Name:    "store the first answer (status, headers, body) with the key and send those bytes again on every retry, with Idempotent-Replayed: true",
	RuleNothingLost.Name:   "never answer success for a key whose transfer does not exist: complete the key in the same transaction as the transfer",
	RuleOwnResponses.Name:  "scope keys by customer: the key table's primary key is (customer, endpoint, key), so one customer's key never meets another's",
	RuleConservation.Name:  "debit and credit in one transaction, and let the debit itself check the balance (UPDATE accounts SET balance = balance - ? WHERE id = ? AND balance >= ?, then read its changes: none means the money is not there): a balance read earlier is stale once another transfer commits, and a balance written as a number read before overwrites that transfer's debit; never create or destroy money",
	RuleOneCharge.Name:     "pass the idempotency key, scoped by customer, to the payment processor with every charge (in the lab's handler: pay({from, to, amount, key})), so that a repeated call (a retry after a crash, a takeover of a claim) gets the first charge back instead of charging again",
	RuleRetention.Name:     "keep keys longer than clients retry (the lab's retry for up to an hour, so more than 3600 s) and publish it: GET {base} answers {\"retention_seconds\": N}",
}

var ruleFixesKo = map[string]string{
	RuleOneTransfer.Name:   "돈을 옮기기 전에 키를 선점하세요. 키 열이 UNIQUE인 키 테이블에 평범한 INSERT를 한 번 하고, 그 제약 오류를 판정으로 삼습니다(SELECT로 먼저 확인하면 두 시도가 모두 키가 없다고 봅니다. INSERT OR IGNORE는 변경된 행 수를 읽지 않으면, OR REPLACE는 언제나 오류를 내지 않습니다). INSERT가 실패한 시도는 아무것도 옮기지 않고 결제하지 않습니다.",
	RuleNoSilentWrong.Name: "요청의 지문(정규화한 JSON 본문의 SHA-256)을 키와 함께 저장하세요. 이미 쓴 키로 다른 요청이 오면 422로 답하고 아무것도 옮기지 않습니다.",
	RuleByteReplay.Name:    "첫 번째 답(상태 코드, 헤더, 본문)을 키와 함께 저장하고, 재시도마다 그 바이트를 Idempotent-Replayed: true와 함께 다시 보내세요.",
	RuleNothingLost.Name:   "송금이 없는 키에 성공으로 답하지 마세요. 키의 완료는 송금과 같은 트랜잭션에서 하세요.",
	RuleOwnResponses.Name:  "키를 고객별로 나누세요. 키 테이블의 기본 키가 (customer, endpoint, key)이면 한 고객의 키가 다른 고객의 키와 만나지 않습니다.",
	RuleConservation.Name:  "출금과 입금을 한 트랜잭션에서 하고, 잔액 확인은 출금하는 SQL 문 자체에 맡기세요(UPDATE accounts SET balance = balance - ? WHERE id = ? AND balance >= ? 다음에 changes를 읽습니다. 0이면 돈이 없는 것입니다). 먼저 읽어 둔 잔액은 다른 송금이 커밋하면 낡은 값이 되고, 읽어 둔 숫자로 잔액을 덮어쓰면 그 송금의 출금이 사라집니다. 돈을 만들거나 없애지 마세요.",
	RuleOneCharge.Name:     "결제할 때마다 고객별로 나눈 멱등성 키를 결제 대행사에 넘기세요(실습의 핸들러에서는 pay({from, to, amount, key})). 그러면 같은 키로 다시 온 호출(죽은 시도 뒤의 재시도, 선점을 넘겨받은 재시도)은 다시 청구되지 않고 첫 번째 청구를 돌려받습니다.",
	RuleRetention.Name:     "클라이언트가 재시도하는 기간보다 오래 키를 보존하고(랩의 클라이언트는 최대 한 시간 재시도하므로 3600초보다 길게) 그 기간을 공개하세요. GET {base}가 {\"retention_seconds\": N}으로 답합니다.",
}

// Diagnose tells the cause of a rule broken from the evidence: the check
// (or scenario) that broke it ("other-customer", "missing-key",
// "refusals", or another), the attempts of the run, the indexes of the
// ones that show the failure, and busy, which says whether attempt i was
// answered while another attempt under its key that carried the transfer
// was still in flight. "" when the evidence does not tell.
func Diagnose(check string, rule Rule, attempts []Attempt, idx []int, busy func(i int) bool) string {
	switch {
	case rule.N == RuleRetention.N:
		// A retention too short is its own cause, whatever the run.
		return CauseShortRetention
	case check == "other-customer":
		return CauseGlobalKeys
	case rule.N == RuleOwnResponses.N && !usedByOthers(attempts, idx):
		// Someone else's answer, where no other customer used the key:
		// the same customer's other request under it was taken for a
		// retry and handed its answer.
		return CauseNoFingerprint
	case rule.N == RuleOwnResponses.N:
		return CauseGlobalKeys
	case rule.N == RuleNothingLost.N && usedByOthers(attempts, idx):
		return CauseGlobalKeys
	case check == "missing-key" && rule.N == RuleOneTransfer.N && anyKeyless(attempts, idx):
		return CauseKeyOptional
	case check == "repaired" && rule.N == RuleNoSilentWrong.N:
		return CauseStoredRefusal
	case rule.N == RuleNoSilentWrong.N && len(idx) == 2 && keyIgnored(attempts[idx[0]], attempts[idx[1]]):
		return CauseKeyIgnored
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

// keyIgnored reports whether a different request under a used key was
// executed as a transfer of its own: both answers are successes that name
// transfers, and not the same one. A server that claimed the key would have
// answered the second with the first's transfer (no fingerprint) or 422.
func keyIgnored(first, other Attempt) bool {
	a, b := TransferID(first.Response), TransferID(other.Response)
	return Success(first.Status) && Success(other.Status) && a != "" && b != "" && a != b
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
	case retry.Status == first.Status && string(retry.Response) == string(first.Response):
		// The same status and bytes: rule 3 broke on the Content-Type.
		return CauseReplayHeaders
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
