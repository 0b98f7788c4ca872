package lab

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestInferGivesTheTransferToTheReceiptRead is the day an endpoint built on
// a real idempotency middleware produced: a wish's first attempt under a key
// another customer had used was refused, but the grader cut it and never
// read the answer; the customer's new-key press was paid and its 201 named
// the transfer. The payee grew by one transfer, and it is the press's.
func TestInferGivesTheTransferToTheReceiptRead(t *testing.T) {
	body := []byte(`{"from":"c5-acct","to":"inv-5","amount":139100}`)
	intents := []Intent{
		{ID: "i5", Customer: "c5", From: "c5-acct", To: "inv-5", Amount: 139100},
		{ID: "i5+2", Customer: "c5", From: "c5-acct", To: "inv-5", Amount: 139100},
	}
	attempts := []Attempt{
		{Lane: "i5.1", Intent: "i5", Customer: "c5", Key: "order-1", Body: body},
		{Lane: "i5+2.1", Intent: "i5+2", Customer: "c5", Key: "order-2", Body: body, Status: 201, Delivered: true,
			Response: []byte(`{"transfer_id":"t9","from":"c5-acct","to":"inv-5","amount":139100}`)},
	}
	got := InferTransfers(intents, attempts, map[string]int64{"inv-5": 0}, map[string]int64{"inv-5": 139100})
	assert.Equal(t, map[string]int{"i5+2": 1}, got)

	// Paid twice: both get one, whatever their order.
	got = InferTransfers(intents, attempts, map[string]int64{"inv-5": 0}, map[string]int64{"inv-5": 2 * 139100})
	assert.Equal(t, map[string]int{"i5": 1, "i5+2": 1}, got)
}
