package engine

import (
	"context"
	"errors"
)

// Sentinel errors a Store returns.
var (
	// ErrNotFound: the account or transfer does not exist.
	ErrNotFound = errors.New("engine: not found")
	// ErrBusy: the database stayed locked past the busy timeout. Nothing was
	// changed; the client may retry.
	ErrBusy = errors.New("engine: store busy")
	// ErrUnavailable: the database could not be reached, refused the
	// connection, or lost it. What was committed stays; the client may
	// retry with the same key.
	ErrUnavailable = errors.New("engine: store unavailable")
)

// KeyTable names one of the two key tables. The constrained table's primary
// key is (scope, key); the loose table has the same columns and only a plain
// index, which is what check-then-insert code usually runs against.
type KeyTable int

const (
	TableConstrained KeyTable = iota
	TableLoose
)

// InsertMode is the conflict clause of the claim INSERT.
type InsertMode int

const (
	// InsertPlain is "INSERT INTO": a duplicate fails with SQLite's
	// constraint error, the verdict.
	InsertPlain InsertMode = iota
	// InsertOrIgnore is "INSERT OR IGNORE INTO": a duplicate is skipped
	// without an error.
	InsertOrIgnore
)

// Key states.
const (
	StateInProgress = "in_progress"
	StateCompleted  = "completed"
)

// KeyRecord is one row of a key table. Times are Unix milliseconds; zero
// ExpiresAt means never, zero LeaseUntil means the claim never runs out.
type KeyRecord struct {
	Scope       string    `json:"scope"`
	Key         string    `json:"key"`
	Customer    string    `json:"customer"`
	Fingerprint string    `json:"fingerprint"`
	State       string    `json:"state"`
	Owner       string    `json:"owner,omitempty"`
	LeaseUntil  int64     `json:"lease_until"`
	CreatedAt   int64     `json:"created_at"`
	ExpiresAt   int64     `json:"expires_at"`
	Response    *Response `json:"response,omitempty"`
	TransferID  string    `json:"transfer_id,omitempty"`
}

// Every Store method that runs SQL a lesson shows returns a result with the
// statements it ran in SQL (joined with ";\n"), also when it fails.

// LookupResult is what one look-up of a key read.
type LookupResult struct {
	// Record is the newest row for the key, or nil when there is none.
	Record *KeyRecord
	SQL    string
}

// WriteResult is what one conditional UPDATE or DELETE of a key did.
type WriteResult struct {
	// Changed is true when the statement changed the row: the take-over
	// won, the response was stored, the claim was released.
	Changed bool
	SQL     string
}

// TransferByIDResult is a transfer read back from the ledger.
type TransferByIDResult struct {
	Transfer Transfer
	// Balance is the payer's balance now.
	Balance int64
	SQL     string
}

// InsertResult is what one claim INSERT did.
type InsertResult struct {
	// Inserted is true when the statement wrote the row.
	Inserted bool
	// Existing is the row that blocked a plain INSERT, read after SQLite's
	// constraint error said there was one.
	Existing *KeyRecord
	// ConstraintError is SQLite's own error text, for the lesson to show.
	ConstraintError string
	SQL             string
	// Pending is set when the claim was written but not yet committed: an
	// in_progress claim on a file with group commit rides the commit of
	// the attempt's next write instead of waiting for one of its own. The
	// engine carries it in the context of its next calls (WithPending), so
	// that the store runs nothing after a claim that a failed commit took
	// back, and waits on it before it answers. Nil when the claim was
	// committed before InsertKey returned.
	Pending Pending
}

// Pending is a write that a store ran and will commit with later ones.
// The writes of one connection commit in the order they ran, so once a
// later write of the attempt has committed, so has this one.
type Pending interface {
	// Failed says, without waiting, whether the write's commit failed.
	Failed() error
	// Wait waits for the write's commit and says whether it failed.
	Wait() error
}

type pendingKey struct{}

// WithPending returns ctx carrying p, the claim the attempt's next store
// calls follow.
func WithPending(ctx context.Context, p Pending) context.Context {
	return context.WithValue(ctx, pendingKey{}, p)
}

// PendingOf is the claim the calls under ctx follow, if it is not
// committed yet; nil otherwise.
func PendingOf(ctx context.Context) Pending {
	p, _ := ctx.Value(pendingKey{}).(Pending)
	return p
}

// Account is one ledger account.
type Account struct {
	ID      string `json:"id"`
	Balance int64  `json:"balance"`
}

// Transfer is one row of the ledger.
type Transfer struct {
	ID           string `json:"transfer_id"`
	From         string `json:"from"`
	To           string `json:"to"`
	Amount       int64  `json:"amount"`
	BalanceAfter int64  `json:"balance_after"`
	CreatedAt    int64  `json:"created_at_ms"`
	Customer     string `json:"customer,omitempty"`
	Key          string `json:"key,omitempty"`
}

// TransferOutcome says whether the ledger moved money.
type TransferOutcome int

const (
	TransferDone TransferOutcome = iota
	TransferUnknownAccount
	TransferInsufficientFunds
)

// TransferArgs asks the store to move money in one transaction, and, when
// Complete is set, to complete the key in the same transaction.
type TransferArgs struct {
	From, To string
	Amount   int64
	At       int64 // Unix ms
	Customer string
	Key      string
	Complete *Completion
}

// Completion completes an in_progress key in the ledger's transaction,
// guarded by the owner token: if another attempt took the claim over, the
// whole transaction rolls back and nothing moves.
type Completion struct {
	Table      KeyTable
	Scope, Key string
	Owner      string
	// Render builds the response to store from the ledger's outcome.
	Render func(TransferResult) Response
}

// TransferResult is what the ledger transaction did.
type TransferResult struct {
	Outcome TransferOutcome
	// Missing names the unknown account when Outcome is TransferUnknownAccount.
	Missing  string
	Balance  int64 // the payer's balance when funds were insufficient
	Transfer Transfer
	// Completed is false when Complete was set and the owner no longer held
	// the key; the transaction was rolled back.
	Completed bool
	Response  *Response
	SQL       string
}

// ChargeArgs is one call to the payment processor: a foreign party with its
// own record of charges.
type ChargeArgs struct {
	From, To string
	Amount   int64
	At       int64 // Unix ms
	// Customer and Key are the merchant's reference on the charge (whose
	// request, under which of its keys), which the processor stores and
	// does not read; the checker ties a charge to its intent by them.
	Customer, Key string
	// IdempotencyKey is the key the call carries downstream; empty when it
	// carries none (DownstreamOff), and then every call is a new charge.
	IdempotencyKey string
}

// Charge is one charge in the processor's records.
type Charge struct {
	ID             string `json:"charge_id"`
	From           string `json:"from"`
	To             string `json:"to"`
	Amount         int64  `json:"amount"`
	CreatedAt      int64  `json:"created_at_ms"`
	Customer       string `json:"customer,omitempty"`
	Key            string `json:"key,omitempty"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// ChargeResult is what the processor answered.
type ChargeResult struct {
	Charge Charge
	// Replayed is true when the call's idempotency key was one the
	// processor had seen: the answer is its first charge and nothing new
	// was charged.
	Replayed bool
	// Declined is true when the processor refused the call (the payer's
	// account is unknown or short of the amount, or the payee's unknown):
	// nothing was charged, and Charge is empty. The ledger then declines
	// the transfer for the same reason.
	Declined bool
	SQL      string
}

// Recovery points a request records around its payment call.
const (
	RecoveryChargeStarted = "charge_started" // about to call the processor
	RecoveryChargeMade    = "charge_made"    // the processor answered: ChargeID
)

// RecoveryPoint is how far the claim of (Scope, Key) held by Owner got
// with its payment call, recorded in this database, apart from the key's
// row. A worker that takes the claim over trusts it only when Owner is the
// claim's owner it took over from.
type RecoveryPoint struct {
	Scope    string `json:"scope"`
	Key      string `json:"key"`
	Owner    string `json:"owner"`
	Point    string `json:"point"`
	ChargeID string `json:"charge_id,omitempty"`
	At       int64  `json:"at"`
}

// RecoveryLookup is the recovery point read for a key, if any.
type RecoveryLookup struct {
	Point *RecoveryPoint
	SQL   string
}

// Store is what the engine needs from a database. Each method is one short
// unit of work; none holds a transaction open across a call, so a scheduler
// can pause a request between any two calls. Implementations must be safe
// for concurrent use.
type Store interface {
	PutAccount(ctx context.Context, id string, balance int64) (Account, error)
	GetAccount(ctx context.Context, id string) (Account, error)
	// LookupKey reads the newest row for (scope, key), if any.
	LookupKey(ctx context.Context, t KeyTable, scope, key string) (LookupResult, error)
	// InsertKey runs the claim INSERT. With InsertPlain on the constrained
	// table, a duplicate is reported by SQLite's constraint error and the
	// blocking row is returned in Existing.
	InsertKey(ctx context.Context, t KeyTable, mode InsertMode, rec KeyRecord) (InsertResult, error)
	// TakeOverKey replaces the row for rec's (scope, key) with rec if, at
	// nowMS, that row has expired or is an in_progress claim whose lease ran
	// out. It is one conditional UPDATE, so only one attempt can win.
	TakeOverKey(ctx context.Context, t KeyTable, rec KeyRecord, nowMS int64) (WriteResult, error)
	// Charge calls the simulated payment processor: it records the charge
	// in the processor's own table, committed on its own (never inside the
	// ledger's transaction), so that no rollback of the ledger undoes it, as
	// no rollback of ours undoes a real processor's charge. A call with an
	// IdempotencyKey the processor has already recorded charges nothing and
	// answers with the first charge. A call for a payer short of funds, or
	// between unknown accounts, is declined and charges nothing.
	Charge(ctx context.Context, a ChargeArgs) (ChargeResult, error)
	// SaveRecoveryPoint records rp for its (Scope, Key), replacing the one
	// there, in a transaction of its own.
	SaveRecoveryPoint(ctx context.Context, rp RecoveryPoint) (WriteResult, error)
	// LookupRecoveryPoint reads the recovery point of (scope, key), if any.
	LookupRecoveryPoint(ctx context.Context, scope, key string) (RecoveryLookup, error)
	// Transfer runs the ledger transaction.
	Transfer(ctx context.Context, a TransferArgs) (TransferResult, error)
	// StoreResponse saves the response on a key after the fact.
	StoreResponse(ctx context.Context, t KeyTable, scope, key, owner string, resp Response, transferID string) (WriteResult, error)
	// ReleaseKey deletes an in_progress claim held by owner, after an
	// internal failure, so a retry can start afresh.
	ReleaseKey(ctx context.Context, t KeyTable, scope, key, owner string) (WriteResult, error)
	// TransferByID reads a transfer and its payer's balance now.
	TransferByID(ctx context.Context, id string) (TransferByIDResult, error)
	// Reap is one step of a sweep over the stored keys: it looks at up to
	// batch keys, after those the last step looked at, deletes the ones
	// that expired at or before nowMS and says how many it deleted. swept
	// is true when the step reached the end; the next starts over.
	Reap(ctx context.Context, nowMS int64, batch int) (deleted int, swept bool, err error)
}
