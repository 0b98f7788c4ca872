package lab

import (
	"time"

	"idemlab/engine"
)

// AttemptOf records what an in-process attempt sent and got. The response
// is recorded even when the client never read it (Delivered false): the
// checker judges what the server did as well as what the client saw.
func AttemptOf(req engine.Request, res engine.Result, sentAt time.Time) Attempt {
	key := ""
	if len(req.Key) > 0 {
		key, _ = engine.ParseKey(req.Key)
	}
	a := Attempt{Lane: req.Lane, Intent: req.Intent, Customer: req.Customer, Key: key, Body: req.Body,
		Replayed: res.Replayed, Delivered: res.Delivered, SentAt: sentAt}
	if res.Fault != engine.FaultCrash {
		a.Status, a.Response = res.Response.Status, res.Response.Body
	}
	return a
}

// LedgerOf converts the store's transfers for the checker.
func LedgerOf(ts []engine.Transfer) []LedgerTransfer {
	out := make([]LedgerTransfer, 0, len(ts))
	for _, t := range ts {
		out = append(out, LedgerTransfer{ID: t.ID, Customer: t.Customer, Key: t.Key, From: t.From, To: t.To, Amount: t.Amount})
	}
	return out
}

// BalancesOf converts accounts to a balance map.
func BalancesOf(as []engine.Account) map[string]int64 {
	out := make(map[string]int64, len(as))
	for _, a := range as {
		out[a.ID] = a.Balance
	}
	return out
}
