package lab

import (
	"time"

	"idemlab/engine"
)

// Intent is one wish of a user ("send bob 200,000 won"), which one or more
// attempts serve.
type Intent struct {
	ID       string `json:"id"`
	Customer string `json:"customer"`
	From     string `json:"from"`
	To       string `json:"to"`
	Amount   int64  `json:"amount"`
}

// Attempt is one request a client sent and what came back.
type Attempt struct {
	Lane     string `json:"lane"`
	Intent   string `json:"intent"`
	Customer string `json:"customer"`
	Key      string `json:"key,omitempty"`
	// Body is the request body as sent.
	Body []byte `json:"body"`
	// Status and Response are what the server answered; Status is 0 when the
	// attempt got no answer at all (a crash, a cut connection).
	Status   int    `json:"status"`
	Response []byte `json:"response,omitempty"`
	// ContentType is the answer's Content-Type header, "" when it had
	// none: a replay sends it again with the body (rule 3).
	ContentType string `json:"content_type,omitempty"`
	Replayed    bool   `json:"replayed,omitempty"`
	// Delivered is false when the client never read the answer, even if the
	// server produced one.
	Delivered bool      `json:"delivered"`
	SentAt    time.Time `json:"sent_at"`
	// Server is the app server the attempt reached when several share one
	// database (from 1); zero when unknown or only one.
	Server int `json:"server,omitempty"`
	// Arrived and Answered order the attempt's arrival at the server and
	// its answer on one clock of the run (the browser's lab counts them):
	// an attempt that arrived after another had answered has Arrived
	// greater than that one's Answered. Zero when unknown (the engine's
	// runs, whose attempts the rule-3 refusal check below then skips) or,
	// for Answered, when it never answered.
	Arrived  int64 `json:"arrived,omitempty"`
	Answered int64 `json:"answered,omitempty"`
}

// LedgerTransfer is a transfer the server recorded, when the checker can see
// the ledger (in-process runs). Customer and Key tie it to an intent.
type LedgerTransfer struct {
	ID       string `json:"transfer_id"`
	Customer string `json:"customer"`
	Key      string `json:"key"`
	From     string `json:"from"`
	To       string `json:"to"`
	Amount   int64  `json:"amount"`
	// Intent is the intent of the attempt that made it, where the run
	// knows (the browser's lab records which attempt inserted each row):
	// it ties a transfer made without a key to its intent. "" ties it by
	// Customer and Key.
	Intent string `json:"intent,omitempty"`
}

// ProcessorCharge is a charge the payment processor recorded, when the
// checker can see the processor (in-process runs, where it is the store's
// processor_charges table). Customer and Key, the merchant's reference on
// the charge, tie it to an intent.
type ProcessorCharge struct {
	ID       string `json:"charge_id"`
	Customer string `json:"customer"`
	Key      string `json:"key"`
	Amount   int64  `json:"amount"`
	// IdempotencyKey is the key the call carried downstream, if any.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// Intent is the intent of the attempt that made it, where the run
	// knows (as LedgerTransfer.Intent).
	Intent string `json:"intent,omitempty"`
}

// History is everything the checker judges.
type History struct {
	Intents  []Intent  `json:"intents"`
	Attempts []Attempt `json:"attempts"`
	// Ledger is the server's transfers when known. When it is nil (a
	// black-box endpoint), TransfersPerIntent must say how many transfers
	// each intent caused, as the grader infers from balances.
	Ledger             []LedgerTransfer `json:"ledger,omitempty"`
	TransfersPerIntent map[string]int   `json:"transfers_per_intent,omitempty"`
	// Charges are the payment processor's charges when known. Nil when
	// they are not (a black-box endpoint: its processor is a foreign party
	// the grader cannot read), and the eighth rule is then not judged.
	Charges       []ProcessorCharge `json:"charges,omitempty"`
	StartBalances map[string]int64  `json:"start_balances"`
	EndBalances   map[string]int64  `json:"end_balances"`
	// Retention is the server's published key retention (0: forever) and
	// RetryHorizon how long the clients keep retrying.
	Retention    time.Duration `json:"retention"`
	RetryHorizon time.Duration `json:"retry_horizon"`
	// MemoryGuard names what each server keeps in its own memory to guard
	// its keys (MemoryGuardLock, MemoryGuardCache), when known; a double
	// payment whose attempts reached different servers is laid at its door.
	MemoryGuard string `json:"memory_guard,omitempty"`
	// Keyless is true when the server keeps no key table (the naive level,
	// engine.ClaimNone): the key a client sends is never read, so the
	// checker says "the same request sent again", not "a retry under key
	// rent-2611". Unknown (a black-box endpoint) is false.
	Keyless bool `json:"keyless,omitempty"`
}

// What a server may keep in its own memory to guard keys: the mistakes a
// team makes when it scales out to several servers.
const (
	MemoryGuardLock  = "memory-lock"  // a per-key mutex in the server's memory
	MemoryGuardCache = "server-cache" // a key cache in the server's memory
)

// MemoryGuardOf says what a policy keeps in each server's memory to guard
// its keys: the cache when its claim lives there; the lock when it is what
// keeps the claim safe on one server (check-then-insert, or a lookup before
// the work), since under a claim that pays twice on one server anyway
// (none, INSERT OR IGNORE) the lock is not the cause; else "".
func MemoryGuardOf(p engine.Policy) string {
	switch {
	case p.Claim == engine.ClaimServerCache:
		return MemoryGuardCache
	case p.Lock == engine.LockMemory && p.Claim != engine.ClaimNone && p.Claim != engine.ClaimInsertOrIgnore:
		return MemoryGuardLock
	}
	return ""
}

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
		a.Status, a.Response, a.ContentType = res.Response.Status, res.Response.Body, res.Response.Get("Content-Type")
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

// ChargesOf converts the processor's charges for the checker. It never
// returns nil: an empty list is a processor that charged nothing.
func ChargesOf(cs []engine.Charge) []ProcessorCharge {
	out := make([]ProcessorCharge, 0, len(cs))
	for _, c := range cs {
		out = append(out, ProcessorCharge{ID: c.ID, Customer: c.Customer, Key: c.Key, Amount: c.Amount, IdempotencyKey: c.IdempotencyKey})
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
