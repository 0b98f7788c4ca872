package engine

import (
	"context"
	"slices"
)

// Phase names one step of a request's path through the engine:
// receive → validate → fingerprint → claim → (compare | execute → commit →
// store-response) → respond.
type Phase string

const (
	PhaseReceive       Phase = "receive"
	PhaseValidate      Phase = "validate"
	PhaseFingerprint   Phase = "fingerprint"
	PhaseClaim         Phase = "claim"
	PhaseCompare       Phase = "compare"
	PhaseExecute       Phase = "execute"
	PhaseCommit        Phase = "commit"
	PhaseStoreResponse Phase = "store-response"
	PhaseRespond       Phase = "respond"
)

// Phases returns every phase in path order, a fresh copy for each caller.
func Phases() []Phase { return slices.Clone(phases) }

var phases = []Phase{PhaseReceive, PhaseValidate, PhaseFingerprint, PhaseClaim, PhaseCompare,
	PhaseExecute, PhaseCommit, PhaseStoreResponse, PhaseRespond}

// Step is what the hook is told before a phase runs.
type Step struct {
	Lane     string `json:"lane"`
	Intent   string `json:"intent"`
	Customer string `json:"customer"`
	Key      string `json:"key"`
	Phase    Phase  `json:"phase"`
	// Part names a sub-step when one phase runs in two scheduled parts
	// (check-then-insert's "check" and "insert").
	Part string `json:"part,omitempty"`
}

// Fault is what a hook can do to a request at a phase.
type Fault int

const (
	// FaultNone lets the phase run.
	FaultNone Fault = iota
	// FaultCrash abandons the request before the phase runs, as a process
	// that died would: what is committed stays, nothing else happens.
	FaultCrash
	// FaultLoseResponse lets the server finish, but the response never
	// reaches the client (a load balancer cut the connection).
	FaultLoseResponse
	// FaultClientTimeout makes the client give up waiting at this phase;
	// the server carries on to the end and its answer goes nowhere.
	FaultClientTimeout
)

var faultNames = []string{"none", "crash", "lose-response", "client-timeout"}

func (f Fault) String() string { return nameOf(faultNames, int(f)) }

// MarshalText writes the fault's name.
func (f Fault) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText reads a fault's name.
func (f *Fault) UnmarshalText(b []byte) error {
	for i, n := range faultNames {
		if n == string(b) {
			*f = Fault(i)
			return nil
		}
	}
	return errorf("unknown fault %q (one of %v)", b, faultNames)
}

// Hook is called before every phase. It may block (a learner scheduling
// lanes), sleep (slow motion) or return a fault. It is called from the
// request's goroutine; a hook shared by concurrent requests must be safe for
// concurrent use. A hook should return promptly when ctx is done.
type Hook func(ctx context.Context, s Step) Fault

// Event is one trace record: one phase of one client attempt. The browser,
// the websocket and the grader's report all use this shape.
//
// Note is for people: its words may change at any time. What a view draws
// it reads from the typed fields (Status, Amount, TransferID, Rows,
// KeyState), never out of Note.
type Event struct {
	Seq      int64  `json:"seq"`
	AtMS     int64  `json:"at_ms"`
	Lane     string `json:"lane"`
	Intent   string `json:"intent,omitempty"`
	Customer string `json:"customer,omitempty"`
	Key      string `json:"key,omitempty"`
	Phase    Phase  `json:"phase"`
	SQL      string `json:"sql,omitempty"`
	Outcome  string `json:"outcome"`
	// Status is the HTTP status of the answer the phase decided on (a 409
	// at claim or compare, a replay's status, the commit's 201 or 402, a
	// rejection's 4xx) and, at respond, the status sent or lost; 0 when the
	// phase decided no answer.
	Status int    `json:"status,omitempty"`
	Note   string `json:"note,omitempty"`
	// Server names the app server that ran the phase, when several engines
	// share one database (Options.Server).
	Server string `json:"server,omitempty"`

	// Amount is the won a commit moved (outcome committed) or the
	// processor's charge was for (outcome executed); 0 on every other
	// event.
	Amount int64 `json:"amount,omitempty"`
	// ChargeID is the processor's charge the payment call got back
	// (outcome executed): a new one, or, when the call carried a key the
	// processor had seen, its first charge.
	ChargeID string `json:"charge_id,omitempty"`
	// Charge says what the processor did with the call: ChargeNew (it
	// charged the customer), ChargeReplayed (it recognised the key and
	// charged nothing), ChargeDeclined or ChargeRecovered (no call: a
	// recovery point named the charge). Empty on every event but the
	// payment call's.
	Charge string `json:"charge,omitempty"`
	// DownstreamKey is the idempotency key the payment call carried to the
	// processor; empty when it carried none.
	DownstreamKey string `json:"downstream_key,omitempty"`
	// Recovery is the recovery point the phase committed (charge_started,
	// charge_made) or, on a call skipped, the one it read.
	Recovery string `json:"recovery,omitempty"`
	// ReplayFrom says where a replayed answer came from, on the event
	// whose outcome is OutcomeReplayed: ReplayFromStored (the first
	// answer, stored with the key, byte for byte), ReplayFromRecomputed
	// (built again from the ledger now) or ReplayFromGeneric (a generic
	// "already processed": nothing was stored to send again).
	ReplayFrom string `json:"replay_from,omitempty"`
	// TransferID is the ledger's transfer this event is about: the one a
	// commit made, the one a stored response records on the key, or the
	// one the key named when its answer was replayed.
	TransferID string `json:"transfer_id,omitempty"`
	// Rows is how many key rows the phase's INSERT or UPDATE wrote: 1 for
	// a claim that took the key, 0 for an INSERT OR IGNORE that inserted
	// nothing or an INSERT the constraint refused. Nil (absent in JSON)
	// when the phase wrote no key row or the engine cannot say.
	Rows *int `json:"rows,omitempty"`
	// KeyState is the key's row as the engine knows it after the phase:
	// KeyAbsent, StateInProgress or StateCompleted (under server-cache,
	// this server's copy). Empty when the phase neither read nor wrote the
	// row, or when the engine cannot know it (an INSERT OR IGNORE that
	// inserted nothing does not read the row it hit).
	KeyState string `json:"key_state,omitempty"`
}

// What the processor did with a payment call (Event.Charge).
const (
	ChargeNew      = "charged"  // a new charge: the customer paid
	ChargeReplayed = "replayed" // the key was known: the first charge, nothing new
	ChargeDeclined = "declined" // refused: unknown account or short of funds, nothing charged
	// ChargeRecovered: no call; the recovery point the previous owner of
	// the claim committed says the charge was made, and names it.
	ChargeRecovered = "recovered"
)

// KeyAbsent is an Event's KeyState when there is no row for the key, or
// only one whose retention ran out, which counts as none.
const KeyAbsent = "absent"

// rowsIf is an Event's Rows for statements that wrote one key row or none.
func rowsIf(wrote bool) *int {
	n := 0
	if wrote {
		n = 1
	}
	return &n
}

// keyStateOf is an Event's KeyState for a key row the engine read or
// wrote: a row written without a state column is completed by the table's
// default.
func keyStateOf(rec *KeyRecord) string {
	if rec.State == "" {
		return StateCompleted
	}
	return rec.State
}

// Where a replayed answer came from (Event.ReplayFrom).
const (
	ReplayFromStored     = "stored"
	ReplayFromRecomputed = "recomputed"
	ReplayFromGeneric    = "generic"
)

// Outcomes a trace event can report.
const (
	OutcomeOK        = "ok"        // the phase did its work
	OutcomeSkipped   = "skipped"   // the policy has nothing to do here
	OutcomeRejected  = "rejected"  // bad input, answered with 4xx, nothing stored
	OutcomeClaimed   = "claimed"   // this attempt owns the key
	OutcomeDuplicate = "duplicate" // the key was already there
	OutcomeTakenOver = "taken-over"
	OutcomeMismatch  = "mismatch"  // same key, different request: 422
	OutcomeConflict  = "conflict"  // still in progress: 409
	OutcomeReplayed  = "replayed"  // answered as a retry (Event.ReplayFrom says with what)
	OutcomeExecuted  = "executed"  // the payment processor was called (Event.Charge says what it did)
	OutcomeCommitted = "committed" // the ledger moved money
	OutcomeDeclined  = "declined"  // a business outcome: 402 or 404, recorded
	OutcomeStored    = "stored"
	OutcomeCrashed   = "crashed"
	OutcomeLost      = "lost"      // the response never reached the client
	OutcomeTimedOut  = "timed-out" // the client stopped waiting; the server went on
	OutcomeDelivered = "delivered"
	OutcomeError     = "error"
	OutcomeLocked    = "locked"  // took the engine's in-memory lock on the key
	OutcomeWaiting   = "waiting" // another attempt on this engine holds that lock
)

// Tracer receives trace events. It is called synchronously from the
// request's goroutine and must be safe for concurrent use when requests run
// concurrently.
type Tracer func(Event)
