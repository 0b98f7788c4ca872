package lab_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/lab"
)

// The answers idemlab's unique level gave: a generic "already processed"
// whose body has a member called status, the in-progress problem and a
// transfer's receipt.
const (
	genericDone = `{"detail":"a request with this key was already processed","status":"already_processed"}`
	inProgress  = `{"type":"/problems/idempotency-key-in-progress","title":"A request with this key is still being processed","status":409,"detail":"the first request with this key is still being processed; retry after the Retry-After seconds"}`
	receipt     = `{"transfer_id":"tr_000007","from":"g1-together-payer","to":"g1-together-shop-1","amount":370300,"balance_after":49629700,"created_at":"2026-12-02T01:00:59.332Z"}`
)

// TestAnswerDifferenceTellsTheBodyMemberStatusFromTheStatus: a body member
// called "status" is named as a body member, so that "status 409, first
// answer 200" and the member's values never read as one thing.
func TestAnswerDifferenceTellsTheBodyMemberStatusFromTheStatus(t *testing.T) {
	d := lab.AnswerDifference(200, []byte(genericDone), 409, []byte(inProgress))
	assert.Contains(t, d, "status 409 against the first answer's 200; ")
	assert.Contains(t, d, `the body member "status" is 409 against the first answer's "already_processed"`)
	assert.NotContains(t, d, `; "status" is`)
	assert.NotContains(t, d, `, "status" is`)
	d = lab.AnswerDifference(200, []byte(genericDone), 201, []byte(receipt))
	assert.Contains(t, d, `the body member "status" is missing, the first answer had "already_processed"`)
	assert.Contains(t, d, `"transfer_id" is "tr_000007", absent from the first answer`, "other members keep their plain names")
}

// TestByteReplayNamesTheAnswerThatDeparts: in `together`, the generic
// "already processed" answered first while the transfer was running and
// the transfer's own receipt came later; the generic one departs, and the
// message must not name the receipt as the deviant ("got 201 …, status
// 201 against the first answer's 200").
func TestByteReplayNamesTheAnswerThatDeparts(t *testing.T) {
	body := []byte(`{"from":"g1-together-payer","to":"g1-together-shop-1","amount":370300}`)
	h := lab.History{
		Intents: []lab.Intent{{ID: "together.i1", Customer: "app-1", From: "g1-together-payer", To: "g1-together-shop-1", Amount: 370300}},
		Attempts: []lab.Attempt{
			{Lane: "together.2", Intent: "together.i1", Customer: "app-1", Key: "k1", Body: body, Status: 200, Response: []byte(genericDone), Delivered: true},
			{Lane: "together.1", Intent: "together.i1", Customer: "app-1", Key: "k1", Body: body, Status: 201, Response: []byte(receipt), Delivered: true},
		},
		TransfersPerIntent: map[string]int{"together.i1": 1},
	}
	rr := lab.Check(h).Rule(lab.RuleByteReplay)
	require.Len(t, rr.Violations, 1)
	m := rr.Violations[0].Message
	assert.Contains(t, m, "the attempt that answered first (together.2) got 200")
	assert.Contains(t, m, "an answer that names no transfer, while together.1 got the transfer's own answer 201")
	assert.NotContains(t, m, "the first answer's 200")
	assert.Equal(t, []string{"together.2", "together.1"}, rr.Violations[0].Lanes)

	// The other way round, the later answer departs, as before.
	h.Attempts[0], h.Attempts[1] = h.Attempts[1], h.Attempts[0]
	rr = lab.Check(h).Rule(lab.RuleByteReplay)
	require.Len(t, rr.Violations, 1)
	assert.Contains(t, rr.Violations[0].Message, "got 200")
	assert.Contains(t, rr.Violations[0].Message, "status 200 against the first answer's 201")
}
