// Package engine is the system idemlab teaches: an idempotency engine for a
// money-transfer API. It owns the Policy (the six-rung ladder of presets and
// the knobs a learner can flip alone), the transfer flow split into named
// phases with a step hook and a trace event each, Idempotency-Key parsing,
// the canonical request fingerprint and the problem+json bodies.
//
// The engine speaks in plain values (Request in, Result out) and defines the
// Store it needs; package store implements it on SQLite. It imports no
// net/http, so the same code runs in the browser's WebAssembly module.
package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// ClaimStrategy says how a request takes its key.
type ClaimStrategy int

const (
	// ClaimNone keeps no key table: every request executes.
	ClaimNone ClaimStrategy = iota
	// ClaimCheckThenInsert looks the key up with a SELECT and, if absent,
	// INSERTs it into a table without a UNIQUE constraint. Two simultaneous
	// retries can both see "absent" between the two statements.
	ClaimCheckThenInsert
	// ClaimInsertOrIgnore runs INSERT OR IGNORE against the constrained
	// table and proceeds whatever happened: the statement succeeds for a
	// retry as it does for a new request, and only the changed-rows count
	// (0, not 1) tells them apart, a count this code never reads.
	ClaimInsertOrIgnore
	// ClaimConstraint runs one plain INSERT against the table whose primary
	// key is (scope, key); SQLite's constraint error is the verdict.
	ClaimConstraint
	// ClaimServerCache keeps the keys in the engine's own memory instead of
	// a table: a map from (scope, key) to the record, checked and set under
	// one mutex. On one server that is as safe as the constraint; but every
	// Engine is one server with its own cache, so a retry that the load
	// balancer sends to another server is a cache miss there and pays again.
	ClaimServerCache
)

// LockMode says whether the engine serialises the attempts of one key in
// its own memory before it claims the key.
type LockMode int

const (
	// LockNone takes no lock of its own: the claim strategy alone decides.
	LockNone LockMode = iota
	// LockMemory takes a per-key mutex held in the Engine's memory from the
	// claim until the answer is sent. The attempts of one key on one engine
	// run one after the other, which makes even check-then-insert safe on
	// one server; a second Engine (a second server behind the same load
	// balancer) has mutexes of its own, and nothing stops its attempt.
	LockMemory
)

// FingerprintMode says what the engine remembers of the request beside its key.
type FingerprintMode int

const (
	// FingerprintNone compares keys only: a different request under a used
	// key is taken for a retry.
	FingerprintNone FingerprintMode = iota
	// FingerprintRaw hashes the body bytes as sent: reordered fields or
	// other whitespace make the same request look different.
	FingerprintRaw
	// FingerprintCanonical hashes method, route and the RFC 8785 canonical
	// form of the body.
	FingerprintCanonical
)

// InProgressMode says how claiming a key and finishing the work are recorded.
type InProgressMode int

const (
	// InProgressNone records no state: a key row, once written, means done.
	// It is what a key table without a state column does.
	InProgressNone InProgressMode = iota
	// InProgressCompletedFirst writes the key as completed before the work
	// runs. A crash in between leaves a key that says "done" and no transfer.
	InProgressCompletedFirst
	// InProgressExecuteFirst does the work first and writes the key after.
	// Two overlapping retries, or a crash in between, pay twice.
	InProgressExecuteFirst
	// InProgressTwoPhase claims the key as in_progress, then commits the
	// transfer and the completed key in one transaction. A retry that
	// arrives in between gets 409.
	InProgressTwoPhase
)

// ReplayMode says what a retry of a completed request is answered with.
type ReplayMode int

const (
	// ReplayGeneric answers every retry with a generic "already processed".
	ReplayGeneric ReplayMode = iota
	// ReplayRecompute rebuilds the answer from the ledger now: the balance
	// and the time differ from what the first response said.
	ReplayRecompute
	// ReplayStored returns the stored status, headers and body byte for byte.
	ReplayStored
)

// ScopeMode says which keys can collide.
type ScopeMode int

const (
	// ScopeGlobal puts every customer's keys in one namespace.
	ScopeGlobal ScopeMode = iota
	// ScopeCustomerEndpoint keys the table by (customer, endpoint, key).
	ScopeCustomerEndpoint
)

// DownstreamMode says whether the engine's call to the payment processor
// carries the idempotency key.
type DownstreamMode int

const (
	// DownstreamOff calls the processor without a key: every call is a new
	// charge to the processor, so a retry that calls again after an attempt
	// that already called (a lease takeover of a slow worker, a crash after
	// the call) charges the customer a second time, whatever the ledger
	// says.
	DownstreamOff DownstreamMode = iota
	// DownstreamOn passes a key derived from the request's own key with the
	// call (the customer and the key), so the processor answers a repeated
	// key with its first charge and charges nothing new.
	DownstreamOn
)

// RecoveryMode says whether the engine records recovery points around
// the payment call.
type RecoveryMode int

const (
	// RecoveryOff records nothing around the call: a retry that takes a
	// claim over calls the processor again, whatever the first worker did.
	RecoveryOff RecoveryMode = iota
	// RecoveryPoints commits a recovery point in this database before the
	// payment call (charge_started) and another after it with the charge's
	// id (charge_made). A retry that takes a claim over reads the point its
	// predecessor left: after charge_made it carries on from the recorded
	// charge without calling; after charge_started it cannot know whether
	// the call arrived, and calls again (safe only with the key passed
	// downstream).
	RecoveryPoints
)

// Policy is one setting of every knob the engine has. Each level of the
// ladder is a preset Policy; the sandbox flips one knob at a time. A Policy
// is a plain value and safe to copy.
type Policy struct {
	Level       string          `json:"level,omitempty"`
	Claim       ClaimStrategy   `json:"claim"`
	Fingerprint FingerprintMode `json:"fingerprint"`
	InProgress  InProgressMode  `json:"in_progress"`
	Replay      ReplayMode      `json:"replay"`
	Scope       ScopeMode       `json:"scope"`
	// Lock is the scale-out mistake of guarding the claim with a mutex in
	// the server's memory; LockNone in every preset.
	Lock LockMode `json:"lock"`
	// Retention is how long a key is remembered after its claim. Zero keeps
	// keys forever.
	Retention Duration `json:"retention"`
	// Lease is how long an in_progress claim protects its key. When it has
	// run out, a retry may take the claim over. Zero means a claim never
	// runs out, so a worker that died wedges its key forever.
	Lease Duration `json:"lease"`
	// DownstreamKey says whether the payment call carries the key to the
	// processor, whose charges no rollback of the ledger undoes. Off below
	// the scoped rung; on in the full engine.
	DownstreamKey DownstreamMode `json:"downstream_key"`
	// RecoveryPoints says whether the engine commits recovery points around
	// the payment call, atomic phases' way; off in every preset (lesson 9
	// turns it on).
	RecoveryPoints RecoveryMode `json:"recovery_points"`
}

// Level names, in ladder order.
const (
	LevelNaive       = "naive"
	LevelUnique      = "unique"
	LevelFingerprint = "fingerprint"
	LevelInProgress  = "in-progress"
	LevelReplay      = "replay"
	LevelScoped      = "scoped"
)

// Published retention and lease of the full engine. The retention is far
// longer than any client's retry horizon (the lab's clients give up within
// an hour); the lease is longer than any transfer takes.
const (
	ScopedRetention = 24 * time.Hour
	ScopedLease     = 30 * time.Second
	// ShortRetention is what the rungs below scoped keep keys for: shorter
	// than a patient client's retry horizon, which is the failure the last
	// rung fixes.
	ShortRetention = 5 * time.Minute
)

// Levels returns the ladder in order, a fresh copy for each caller.
func Levels() []string { return slices.Clone(levels) }

var levels = []string{LevelNaive, LevelUnique, LevelFingerprint, LevelInProgress, LevelReplay, LevelScoped}

// Preset returns the Policy of a level of the ladder. Each preset is the
// one before it plus one fix.
func Preset(level string) (Policy, bool) {
	p := Policy{Level: LevelNaive}
	for _, l := range levels {
		switch l {
		case LevelUnique:
			p.Claim, p.InProgress, p.Retention = ClaimConstraint, InProgressCompletedFirst, Duration(ShortRetention)
		case LevelFingerprint:
			p.Fingerprint = FingerprintCanonical
		case LevelInProgress:
			p.InProgress = InProgressTwoPhase
		case LevelReplay:
			p.Replay = ReplayStored
		case LevelScoped:
			p.Scope, p.Retention, p.Lease = ScopeCustomerEndpoint, Duration(ScopedRetention), Duration(ScopedLease)
			p.DownstreamKey = DownstreamOn
		}
		p.Level = l
		if l == level {
			return p, true
		}
	}
	return Policy{}, false
}

// MustPreset is Preset for names known at compile time.
func MustPreset(level string) Policy {
	p, ok := Preset(level)
	if !ok {
		panic("engine: unknown level " + level)
	}
	return p
}

// Keyed reports whether the policy keeps a key table at all.
func (p Policy) Keyed() bool { return p.Claim != ClaimNone }

// Duration is a time.Duration that reads and writes JSON as a Go duration
// string ("24h0m0s") or a number of seconds.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalJSON writes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a duration string or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("engine: duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("engine: duration must be a string like \"24h\" or seconds")
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

// The knob names as they appear in JSON, URLs and the sandbox.
var (
	claimNames       = []string{"none", "check-then-insert", "insert-or-ignore", "constraint", "server-cache"}
	fingerprintNames = []string{"none", "raw", "canonical"}
	inProgressNames  = []string{"none", "completed-first", "execute-first", "two-phase"}
	replayNames      = []string{"generic", "recompute", "stored"}
	scopeNames       = []string{"global", "customer-endpoint"}
	lockNames        = []string{"none", "memory"}
	downstreamNames  = []string{"off", "on"}
	recoveryNames    = []string{"off", "on"}
)

// KnobValues returns, by each knob's JSON name, the values it can take, in
// the order of the Go constants (a knob's value is its index here). It is
// a fresh copy on every call.
func KnobValues() map[string][]string {
	return map[string][]string{
		"claim":           slices.Clone(claimNames),
		"fingerprint":     slices.Clone(fingerprintNames),
		"in_progress":     slices.Clone(inProgressNames),
		"replay":          slices.Clone(replayNames),
		"scope":           slices.Clone(scopeNames),
		"lock":            slices.Clone(lockNames),
		"downstream_key":  slices.Clone(downstreamNames),
		"recovery_points": slices.Clone(recoveryNames),
	}
}

func nameOf(names []string, v int) string {
	if v >= 0 && v < len(names) {
		return names[v]
	}
	return fmt.Sprintf("unknown(%d)", v)
}

func parseName(kind string, names []string, b []byte) (int, error) {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return 0, fmt.Errorf("engine: %s must be a string", kind)
	}
	for i, n := range names {
		if n == s {
			return i, nil
		}
	}
	return 0, fmt.Errorf("engine: unknown %s %q (one of %v)", kind, s, names)
}

func (v ClaimStrategy) String() string   { return nameOf(claimNames, int(v)) }
func (v FingerprintMode) String() string { return nameOf(fingerprintNames, int(v)) }
func (v InProgressMode) String() string  { return nameOf(inProgressNames, int(v)) }
func (v ReplayMode) String() string      { return nameOf(replayNames, int(v)) }
func (v ScopeMode) String() string       { return nameOf(scopeNames, int(v)) }
func (v LockMode) String() string        { return nameOf(lockNames, int(v)) }
func (v DownstreamMode) String() string  { return nameOf(downstreamNames, int(v)) }
func (v RecoveryMode) String() string    { return nameOf(recoveryNames, int(v)) }

func (v ClaimStrategy) MarshalText() ([]byte, error)   { return []byte(v.String()), nil }
func (v FingerprintMode) MarshalText() ([]byte, error) { return []byte(v.String()), nil }
func (v InProgressMode) MarshalText() ([]byte, error)  { return []byte(v.String()), nil }
func (v ReplayMode) MarshalText() ([]byte, error)      { return []byte(v.String()), nil }
func (v ScopeMode) MarshalText() ([]byte, error)       { return []byte(v.String()), nil }
func (v LockMode) MarshalText() ([]byte, error)        { return []byte(v.String()), nil }
func (v DownstreamMode) MarshalText() ([]byte, error)  { return []byte(v.String()), nil }
func (v RecoveryMode) MarshalText() ([]byte, error)    { return []byte(v.String()), nil }

func (v *ClaimStrategy) UnmarshalJSON(b []byte) error {
	n, err := parseName("claim strategy", claimNames, b)
	*v = ClaimStrategy(n)
	return err
}
func (v *FingerprintMode) UnmarshalJSON(b []byte) error {
	n, err := parseName("fingerprint mode", fingerprintNames, b)
	*v = FingerprintMode(n)
	return err
}
func (v *InProgressMode) UnmarshalJSON(b []byte) error {
	n, err := parseName("in-progress mode", inProgressNames, b)
	*v = InProgressMode(n)
	return err
}
func (v *ReplayMode) UnmarshalJSON(b []byte) error {
	n, err := parseName("replay mode", replayNames, b)
	*v = ReplayMode(n)
	return err
}
func (v *ScopeMode) UnmarshalJSON(b []byte) error {
	n, err := parseName("scope mode", scopeNames, b)
	*v = ScopeMode(n)
	return err
}

func (v *LockMode) UnmarshalJSON(b []byte) error {
	n, err := parseName("lock mode", lockNames, b)
	*v = LockMode(n)
	return err
}

func (v *DownstreamMode) UnmarshalJSON(b []byte) error {
	n, err := parseName("downstream key mode", downstreamNames, b)
	*v = DownstreamMode(n)
	return err
}

func (v *RecoveryMode) UnmarshalJSON(b []byte) error {
	n, err := parseName("recovery points mode", recoveryNames, b)
	*v = RecoveryMode(n)
	return err
}

// With returns a copy of p changed by f, for flipping one knob of a preset.
func (p Policy) With(f func(*Policy)) Policy {
	f(&p)
	return p
}
