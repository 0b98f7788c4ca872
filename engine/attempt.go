package engine

// attempt.go is one transfer request on its way through the phases: the
// claim each ClaimStrategy makes, the comparison with a used key, the
// ledger transaction and the stored answer.

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// attempt is one transfer request on its way through the phases.
type attempt struct {
	e        *Engine
	ctx      context.Context
	pending  Pending // the claim, while its commit rides a later write's
	req      Request
	customer string
	key      string
	scope    string
	fp       string
	body     TransferBody
	owner    string
	table    KeyTable
	result   Result
	unlock   func() // lets go of the in-memory lock (LockMemory); nil when none is held
	charge   string // the processor's charge this attempt's payment call got; "" before the call
	// tookFrom is the owner whose claim this attempt took over when its
	// lease ran out: the one whose recovery point it may trust.
	tookFrom string
}

// crashed is returned by step when the hook crashed the attempt.
type crashed struct{}

func (e *Engine) transfer(ctx context.Context, req Request) (res Result) {
	a := &attempt{e: e, ctx: ctx, req: req, table: e.keyTable()}
	a.result.Delivered = true
	defer func() {
		if a.unlock != nil {
			a.unlock() // a crash loses the process's memory, its locks with it
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crashed); !ok {
				panic(r)
			}
			res = a.result
		}
	}()
	resp := a.run()
	if a.pending != nil {
		// Nothing is answered before the claim is committed. The attempt's
		// later writes committed after it, so this rarely waits.
		if err := a.pending.Wait(); err != nil && resp.Status < 400 {
			resp = a.fail(PhaseRespond, "", err)
		}
	}
	a.step(PhaseRespond, "")
	a.result.Response = resp
	switch {
	case a.result.Fault == FaultLoseResponse:
		a.emit(PhaseRespond, "", OutcomeLost, resp.Status, "the response was lost on the way: the client does not know what happened")
	case a.result.Fault == FaultClientTimeout:
		a.emit(PhaseRespond, "", OutcomeTimedOut, resp.Status, "the client had already given up at "+string(a.result.Phase)+"; this answer goes nowhere")
	default:
		a.emit(PhaseRespond, "", OutcomeDelivered, resp.Status, "")
	}
	return a.result
}

// step runs the hook before a phase. A crash unwinds the attempt at once.
func (a *attempt) step(p Phase, part string) {
	if a.e.hook == nil {
		return
	}
	f := a.e.hook(a.ctx, Step{Lane: a.req.Lane, Intent: a.req.Intent, Customer: a.customer, Key: a.key, Phase: p, Part: part})
	switch f {
	case FaultNone:
	case FaultCrash:
		a.result = Result{Delivered: false, Fault: FaultCrash, Phase: p}
		a.emit(p, "", OutcomeCrashed, 0, "the server died before "+string(p)+"; what it had committed stays")
		panic(crashed{})
	default:
		if a.result.Fault == FaultNone {
			a.result.Fault, a.result.Phase, a.result.Delivered = f, p, false
		}
	}
}

// emit records a phase that has none of Event's typed fields to set.
func (a *attempt) emit(p Phase, sql, outcome string, status int, note string) {
	a.record(Event{Phase: p, SQL: sql, Outcome: outcome, Status: status, Note: note})
}

// record traces e, a phase with its typed fields set, as this attempt's:
// it fills in the sequence, the time and who asked.
func (a *attempt) record(e Event) {
	if a.e.trace == nil {
		return
	}
	e.Seq, e.AtMS = a.e.seq.Add(1), a.e.clock.Now().Sub(a.e.start).Milliseconds()
	e.Lane, e.Intent, e.Customer, e.Key, e.Server = a.req.Lane, a.req.Intent, a.customer, a.key, a.e.server
	a.e.trace(e)
}

func (a *attempt) reject(p Phase, prob *Problem) Response {
	a.emit(p, "", OutcomeRejected, prob.Status, prob.Detail)
	return prob.Response()
}

// fail answers with err as a problem and keeps err in the result for the
// server's log; the trace and the client see only the problem's detail.
func (a *attempt) fail(p Phase, sql string, err error) Response {
	prob := AsProblem(err)
	a.result.Err = err
	keyState := ""
	if a.owner != "" && a.e.policy.InProgress == InProgressTwoPhase {
		// Release the claim so that the client's retry starts afresh instead
		// of waiting out the lease: nothing moved in the ledger. (A charge
		// the processor made stays; with the key passed downstream the
		// retry gets that same charge back.)
		rel, _ := a.e.store.ReleaseKey(a.ctx, a.table, a.scope, a.key, a.owner)
		sql = joinSQL(sql, rel.SQL)
		if rel.Changed {
			keyState = KeyAbsent
		}
	}
	a.record(Event{Phase: p, SQL: sql, Outcome: OutcomeError, Status: prob.Status, Note: prob.Detail, KeyState: keyState})
	return prob.Response()
}

func (a *attempt) nowMS() int64 { return a.e.clock.Now().UnixMilli() }

func (a *attempt) run() Response {
	e, p := a.e, a.e.policy
	a.customer = a.req.Customer
	a.step(PhaseReceive, "")
	a.emit(PhaseReceive, "", OutcomeOK, 0, a.req.Method+" "+a.req.Path)

	a.step(PhaseValidate, "")
	customer, prob := ParseCustomer(a.req.Customer, a.req.HasCustomer)
	if prob != nil {
		return a.reject(PhaseValidate, prob)
	}
	a.customer = customer
	if p.Keyed() {
		if a.key, prob = ParseKey(a.req.Key); prob != nil {
			return a.reject(PhaseValidate, prob)
		}
	} else {
		// The naive level ignores the key, but the ledger still notes it, so
		// the checker can tell which wish each duplicate served.
		a.key, _ = ParseKey(a.req.Key)
	}
	if prob = CheckContentType(a.req.ContentType); prob != nil {
		return a.reject(PhaseValidate, prob)
	}
	if a.body, prob = ParseTransfer(a.req.Body); prob != nil {
		return a.reject(PhaseValidate, prob)
	}
	a.emit(PhaseValidate, "", OutcomeOK, 0, "transfer "+GroupDigits(a.body.Amount)+" won from "+a.body.From+" to "+a.body.To)

	if !p.Keyed() {
		return a.execute()
	}
	if p.Fingerprint != FingerprintNone {
		a.step(PhaseFingerprint, "")
		a.fp = Fingerprint(p.Fingerprint, "POST", TransfersRoute, a.req.Body, a.body)
		a.emit(PhaseFingerprint, "", OutcomeOK, 0, p.Fingerprint.String()+" sha256 "+a.fp[:16]+"…")
	}
	a.scope = e.keyScope(a.customer)

	if p.InProgress == InProgressExecuteFirst {
		// The key is written only after the work: look first, then pay.
		if resp, done := a.claimStep("check"); done {
			return resp
		}
		look, err := e.store.LookupKey(a.ctx, a.table, a.scope, a.key)
		if err != nil {
			return a.fail(PhaseClaim, look.SQL, err)
		}
		if rec := look.Record; rec != nil && !a.expired(rec) {
			a.record(Event{Phase: PhaseClaim, SQL: look.SQL, Outcome: OutcomeDuplicate, Note: "the key is already recorded",
				KeyState: keyStateOf(rec)})
			return a.compare(rec)
		}
		a.record(Event{Phase: PhaseClaim, SQL: look.SQL, Outcome: OutcomeOK, Note: "the key is not recorded yet: pay first, record the key after",
			KeyState: KeyAbsent})
		return a.execute()
	}
	if resp, done := a.claim(); done {
		return resp
	}
	return a.execute()
}

func (a *attempt) expired(rec *KeyRecord) bool {
	return rec.ExpiresAt > 0 && rec.ExpiresAt <= a.nowMS()
}

func (a *attempt) leaseRanOut(rec *KeyRecord) bool {
	return rec.State == StateInProgress && rec.LeaseUntil > 0 && rec.LeaseUntil <= a.nowMS()
}

// newRecord is the row this attempt writes for its key.
func (a *attempt) newRecord(state string) KeyRecord {
	p, now := a.e.policy, a.nowMS()
	rec := KeyRecord{Scope: a.scope, Key: a.key, Customer: a.customer, Fingerprint: a.fp, State: state,
		Owner: a.e.ownerID + "-" + strconv.FormatInt(a.e.owners.Add(1), 10), CreatedAt: now}
	if p.Retention > 0 {
		rec.ExpiresAt = now + p.Retention.D().Milliseconds()
	}
	if state == StateInProgress && p.Lease > 0 {
		rec.LeaseUntil = now + p.Lease.D().Milliseconds()
	}
	return rec
}

// claimStep runs the hook before the claim (or its first part) and, under
// LockMemory, takes this engine's lock on the key. done is true when the
// attempt has its answer already (its context ended while it waited).
func (a *attempt) claimStep(part string) (resp Response, done bool) {
	a.step(PhaseClaim, part)
	if a.e.policy.Lock != LockMemory {
		return Response{}, false
	}
	if err := a.lockKey(); err != nil {
		return a.fail(PhaseClaim, "", err), true
	}
	return Response{}, false
}

// insertKey runs the claim INSERT. A claim the store has not committed yet
// (InsertResult.Pending) rides the commit of the attempt's next write: the
// attempt's later calls carry it, and transfer waits on it before it
// answers. That is safe because the payment network this engine calls is
// the store's own (Store.Charge): its charge commits in the store's order,
// after the claim. A payment call that left the store, as a real network's
// does, would have to Wait for the claim before it is made.
func (a *attempt) insertKey(mode InsertMode, rec KeyRecord) (InsertResult, error) {
	ins, err := a.e.store.InsertKey(a.ctx, a.table, mode, rec)
	if err == nil && ins.Pending != nil {
		a.pending = ins.Pending
		a.ctx = WithPending(a.ctx, ins.Pending)
	}
	return ins, err
}

// claim takes the key according to the claim strategy. done is true when
// the attempt has its answer already (a duplicate or an error).
func (a *attempt) claim() (resp Response, done bool) {
	e, p := a.e, a.e.policy
	state := StateCompleted
	if p.InProgress == InProgressTwoPhase {
		state = StateInProgress
	}
	rec := a.newRecord(state)
	if p.InProgress == InProgressNone {
		rec.State = "" // no state column is written; the table's default says completed
	}
	switch p.Claim {
	case ClaimCheckThenInsert:
		if resp, done := a.claimStep("check"); done {
			return resp, true
		}
		look, err := e.store.LookupKey(a.ctx, a.table, a.scope, a.key)
		if err != nil {
			return a.fail(PhaseClaim, look.SQL, err), true
		}
		if old := look.Record; old != nil && !a.expired(old) {
			a.record(Event{Phase: PhaseClaim, SQL: look.SQL, Outcome: OutcomeDuplicate, Note: "SELECT found the key",
				KeyState: keyStateOf(old)})
			return a.compare(old), true
		}
		a.record(Event{Phase: PhaseClaim, SQL: look.SQL, Outcome: OutcomeOK, Note: "SELECT found no row: the key looks free",
			KeyState: KeyAbsent})
		a.step(PhaseClaim, "insert")
		ins, err := a.insertKey(InsertPlain, rec)
		if err != nil {
			return a.fail(PhaseClaim, ins.SQL, err), true
		}
		a.owner = rec.Owner
		a.record(Event{Phase: PhaseClaim, SQL: ins.SQL, Outcome: OutcomeClaimed, Note: "INSERT wrote a row; nothing stops a second one with the same key",
			Rows: rowsIf(ins.Inserted), KeyState: keyStateOf(&rec)})
		return Response{}, false
	case ClaimInsertOrIgnore:
		if resp, done := a.claimStep(""); done {
			return resp, true
		}
		ins, err := a.insertKey(InsertOrIgnore, rec)
		if err != nil {
			return a.fail(PhaseClaim, ins.SQL, err), true
		}
		a.owner = rec.Owner
		// The row it hit is not read, so after 0 rows the key's state is not
		// known here.
		ev := Event{Phase: PhaseClaim, SQL: ins.SQL, Outcome: OutcomeClaimed, Note: "1 row inserted",
			Rows: rowsIf(true), KeyState: keyStateOf(&rec)}
		if !ins.Inserted {
			ev.Note = "0 rows inserted, no error: this code does not read the changed-rows count, so it takes a retry for a new request and carries on"
			ev.Rows, ev.KeyState = rowsIf(false), ""
		}
		a.record(ev)
		return Response{}, false
	}
	if resp, done := a.claimStep(""); done {
		return resp, true
	}
	ins, err := a.insertKey(InsertPlain, rec)
	if err != nil {
		return a.fail(PhaseClaim, ins.SQL, err), true
	}
	cached := p.Claim == ClaimServerCache
	if ins.Inserted {
		a.owner = rec.Owner
		note := "INSERT succeeded: this attempt owns the key"
		if cached {
			note = "cache miss on " + e.serverName() + ": the key is remembered in its memory now, and in no other server's"
		}
		a.record(Event{Phase: PhaseClaim, SQL: ins.SQL, Outcome: OutcomeClaimed, Note: note,
			Rows: rowsIf(true), KeyState: keyStateOf(&rec)})
		return Response{}, false
	}
	if cached {
		ins.ConstraintError = "cache hit on " + e.serverName() + ": this server has seen the key"
	}
	old := ins.Existing
	takeOver, leaseOf := "", ""
	switch {
	case old == nil:
		// The row vanished between the failed INSERT and the read (reaped);
		// answer 409 so the client retries into a clean claim.
		a.record(Event{Phase: PhaseClaim, SQL: ins.SQL, Outcome: OutcomeConflict, Status: 409, Note: ins.ConstraintError,
			Rows: rowsIf(false), KeyState: KeyAbsent})
		return a.conflict("the key changed hands; retry in a moment"), true
	case a.expired(old):
		takeOver = "the old key expired (retention), so it counts as absent"
	case a.leaseRanOut(old) && (p.Fingerprint == FingerprintNone || old.Fingerprint == a.fp):
		takeOver, leaseOf = "the earlier attempt's lease ran out, so its claim is taken over", old.Owner
	}
	if takeOver != "" {
		took, err := e.store.TakeOverKey(a.ctx, a.table, rec, a.nowMS())
		sql := joinSQL(ins.SQL, took.SQL)
		if err != nil {
			return a.fail(PhaseClaim, sql, err), true
		}
		if took.Changed {
			a.owner, a.tookFrom = rec.Owner, leaseOf
			a.record(Event{Phase: PhaseClaim, SQL: sql, Outcome: OutcomeTakenOver, Note: ins.ConstraintError + "; " + takeOver,
				Rows: rowsIf(true), KeyState: keyStateOf(&rec)})
			return Response{}, false
		}
		// Whose the row is now, and in what state, the UPDATE does not say.
		a.record(Event{Phase: PhaseClaim, SQL: sql, Outcome: OutcomeConflict, Status: 409, Note: "another retry took the key over first",
			Rows: rowsIf(false)})
		return a.conflict("another attempt took this key over a moment ago"), true
	}
	a.record(Event{Phase: PhaseClaim, SQL: ins.SQL, Outcome: OutcomeDuplicate, Note: ins.ConstraintError,
		Rows: rowsIf(false), KeyState: keyStateOf(old)})
	return a.compare(old), true
}

func (a *attempt) conflict(detail string) Response {
	prob := CauseKeyInProgress.Problem(detail)
	prob.RetryAfter = 1
	return prob.Response()
}

// compare answers a request whose key is already recorded.
func (a *attempt) compare(old *KeyRecord) Response {
	p := a.e.policy
	a.step(PhaseCompare, "")
	if p.Fingerprint != FingerprintNone && old.Fingerprint != a.fp {
		prob := CauseKeyReused.Problem("this key was first used with a different request; use a new key for a new request")
		a.record(Event{Phase: PhaseCompare, Outcome: OutcomeMismatch, Status: prob.Status,
			Note: "fingerprints differ: " + short(old.Fingerprint) + " ≠ " + short(a.fp), KeyState: keyStateOf(old)})
		return prob.Response()
	}
	if old.State == StateInProgress {
		a.record(Event{Phase: PhaseCompare, Outcome: OutcomeConflict, Status: 409, Note: "the first attempt is still in progress",
			KeyState: StateInProgress})
		return a.conflict("the first request with this key is still being processed; retry after the Retry-After seconds")
	}
	switch p.Replay {
	case ReplayStored:
		if old.Response != nil {
			r := *old.Response
			r.Header = append(append([]Header(nil), r.Header...), Header{"Idempotent-Replayed", "true"})
			a.result.Replayed = true
			a.record(Event{Phase: PhaseCompare, Outcome: OutcomeReplayed, Status: r.Status, Note: "the stored response, byte for byte",
				ReplayFrom: ReplayFromStored, TransferID: old.TransferID, KeyState: keyStateOf(old)})
			return r
		}
	case ReplayRecompute:
		if old.TransferID != "" {
			ledger, err := a.e.store.TransferByID(a.ctx, old.TransferID)
			if err == nil {
				t := ledger.Transfer
				t.BalanceAfter = ledger.Balance
				t.CreatedAt = a.nowMS()
				r := RenderTransfer(t)
				a.result.Replayed = true
				a.record(Event{Phase: PhaseCompare, SQL: ledger.SQL, Outcome: OutcomeReplayed, Status: r.Status,
					Note: "recomputed from the ledger now: today's balance and today's time", ReplayFrom: ReplayFromRecomputed, TransferID: old.TransferID, KeyState: keyStateOf(old)})
				return r
			}
		}
	}
	r := jsonResponse(200, map[string]string{"status": "already_processed", "detail": "a request with this key was already processed"})
	a.result.Replayed = true
	a.record(Event{Phase: PhaseCompare, Outcome: OutcomeReplayed, Status: 200, Note: "a generic \"already processed\", whatever the request was",
		ReplayFrom: ReplayFromGeneric, TransferID: old.TransferID, KeyState: keyStateOf(old)})
	return r
}

func short(fp string) string {
	if len(fp) > 12 {
		return fp[:12] + "…"
	}
	if fp == "" {
		return "(none)"
	}
	return fp
}

// PartRecord is the Step.Part of the step between the payment call and
// the recovery point recorded after it (Policy.RecoveryPoints): a crash
// there leaves only charge_started behind.
const PartRecord = "record"

// downstreamKey is the key a payment call carries to the processor: the
// request's key under its customer, since the processor sees every
// customer's calls from this one merchant and two customers may pick the
// same key.
func downstreamKey(customer, key string) string { return customer + ":" + key }

func joinSQL(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + ";\n" + b
}

// execute calls the payment processor, commits the ledger and records the
// key according to the in-progress mode.
func (a *attempt) execute() Response {
	e := a.e
	a.step(PhaseExecute, "")
	if e.latency > 0 {
		t := time.NewTimer(e.latency)
		select {
		case <-t.C:
		case <-a.ctx.Done():
			t.Stop()
		}
	}
	if resp, done := a.pay(); done {
		return resp
	}
	return a.commit()
}

// pay calls the payment processor, between recovery points when the policy
// records them. done is true when the attempt has its answer already (an
// error).
func (a *attempt) pay() (resp Response, done bool) {
	e, p := a.e, a.e.policy
	charge := ChargeArgs{From: a.body.From, To: a.body.To, Amount: a.body.Amount, At: a.nowMS(),
		Customer: a.customer, Key: a.key}
	if p.DownstreamKey == DownstreamOn && a.key != "" {
		charge.IdempotencyKey = downstreamKey(a.customer, a.key)
	}
	points := p.RecoveryPoints == RecoveryPoints && p.Keyed() && a.owner != ""
	before := ""
	if points {
		if a.tookFrom != "" {
			look, err := e.store.LookupRecoveryPoint(a.ctx, a.scope, a.key)
			if err != nil {
				return a.fail(PhaseExecute, look.SQL, err), true
			}
			if rp := look.Point; rp != nil && rp.Owner == a.tookFrom && rp.Point == RecoveryChargeMade && rp.ChargeID != "" {
				// The worker this attempt took over from got the charge and
				// recorded it: carry on from there, without a call.
				saved, err := e.store.SaveRecoveryPoint(a.ctx, RecoveryPoint{Scope: a.scope, Key: a.key, Owner: a.owner,
					Point: RecoveryChargeMade, ChargeID: rp.ChargeID, At: a.nowMS()})
				sql := joinSQL(look.SQL, saved.SQL)
				if err != nil {
					return a.fail(PhaseExecute, sql, err), true
				}
				a.charge = rp.ChargeID
				a.record(Event{Phase: PhaseExecute, SQL: sql, Outcome: OutcomeSkipped, Amount: a.body.Amount, ChargeID: rp.ChargeID,
					Charge: ChargeRecovered, Recovery: RecoveryChargeMade,
					Note: "the recovery point of the claim taken over says charge_made, " + rp.ChargeID + ": no call; carry on from there"})
				return Response{}, false
			}
			before = look.SQL
		}
		saved, err := e.store.SaveRecoveryPoint(a.ctx, RecoveryPoint{Scope: a.scope, Key: a.key, Owner: a.owner,
			Point: RecoveryChargeStarted, At: a.nowMS()})
		before = joinSQL(before, saved.SQL)
		if err != nil {
			return a.fail(PhaseExecute, before, err), true
		}
	}
	// The processor's charge is committed on its own, before the ledger's
	// transaction begins: whatever happens to this attempt from here on,
	// a rollback of ours cannot take it back.
	ch, err := e.store.Charge(a.ctx, charge)
	if err != nil {
		return a.fail(PhaseExecute, joinSQL(before, ch.SQL), err), true
	}
	called := Event{Phase: PhaseExecute, SQL: joinSQL(before, ch.SQL), Outcome: OutcomeExecuted, Amount: ch.Charge.Amount,
		ChargeID: ch.Charge.ID, Charge: ChargeNew, DownstreamKey: charge.IdempotencyKey,
		Note: "payment processor called without a key: it charged " + GroupDigits(ch.Charge.Amount) + " won as " + ch.Charge.ID}
	switch {
	case ch.Declined:
		called.Charge, called.ChargeID, called.Amount = ChargeDeclined, "", 0
		called.Note = "the processor declined the call (an unknown account, or too little money): nothing was charged"
	case ch.Replayed:
		called.Charge = ChargeReplayed
		called.Note = "the processor knew the key and answered with its first charge, " + ch.Charge.ID + "; nothing new was charged"
	case charge.IdempotencyKey != "":
		called.Note = "payment processor called with the key: it charged " + GroupDigits(ch.Charge.Amount) + " won as " + ch.Charge.ID
	}
	if points {
		called.Recovery = RecoveryChargeStarted
	}
	a.charge = ch.Charge.ID
	a.record(called)
	if points && !ch.Declined {
		// A crash here leaves charge_started: whoever takes the claim over
		// cannot tell whether the charge was made, and calls again.
		a.step(PhaseExecute, PartRecord)
		saved, err := e.store.SaveRecoveryPoint(a.ctx, RecoveryPoint{Scope: a.scope, Key: a.key, Owner: a.owner,
			Point: RecoveryChargeMade, ChargeID: ch.Charge.ID, At: a.nowMS()})
		if err != nil {
			return a.fail(PhaseExecute, saved.SQL, err), true
		}
		a.record(Event{Phase: PhaseExecute, SQL: saved.SQL, Outcome: OutcomeStored, ChargeID: ch.Charge.ID, Recovery: RecoveryChargeMade,
			Note: "recovery point charge_made recorded with " + ch.Charge.ID})
	}
	return Response{}, false
}

// commit runs the ledger's transaction and records the key according to
// the in-progress mode.
func (a *attempt) commit() Response {
	e, p := a.e, a.e.policy

	a.step(PhaseCommit, "")
	args := TransferArgs{From: a.body.From, To: a.body.To, Amount: a.body.Amount, At: a.nowMS(),
		Customer: a.customer, Key: a.key}
	twoPhase := p.Keyed() && p.InProgress == InProgressTwoPhase && a.owner != ""
	if twoPhase {
		args.Complete = &Completion{Table: a.table, Scope: a.scope, Key: a.key, Owner: a.owner, Render: renderOutcome}
	}
	tr, err := e.store.Transfer(a.ctx, args)
	if err != nil {
		return a.fail(PhaseCommit, tr.SQL, err)
	}
	if twoPhase && !tr.Completed {
		a.emit(PhaseCommit, tr.SQL, OutcomeConflict, 409, "this attempt lost its claim to a retry; its ledger transaction rolled back, but the processor's charge "+a.charge+" stands: no rollback of ours reaches it")
		return a.conflict("another attempt took this key over; retry to get its answer")
	}
	resp := renderOutcome(tr)
	done := Event{Phase: PhaseCommit, SQL: tr.SQL, Status: resp.Status}
	if twoPhase {
		done.KeyState = StateCompleted // in the ledger's transaction
	}
	if tr.Outcome == TransferDone {
		done.Outcome, done.Note = OutcomeCommitted, "moved "+GroupDigits(tr.Transfer.Amount)+" won as "+tr.Transfer.ID
		done.Amount, done.TransferID = tr.Transfer.Amount, tr.Transfer.ID
	} else {
		done.Outcome, done.Note = OutcomeDeclined, "declined; the answer is recorded like a success"
	}
	a.record(done)
	if !p.Keyed() || twoPhase {
		return resp
	}

	a.step(PhaseStoreResponse, "")
	if p.InProgress == InProgressExecuteFirst {
		rec := a.newRecord(StateCompleted)
		rec.Response, rec.TransferID = &resp, tr.Transfer.ID
		mode := InsertPlain
		if p.Claim == ClaimInsertOrIgnore {
			mode = InsertOrIgnore
		}
		ins, err := e.store.InsertKey(a.ctx, a.table, mode, rec)
		switch {
		case err != nil:
			a.emit(PhaseStoreResponse, ins.SQL, OutcomeError, 0, "the key was not recorded: "+err.Error())
		case !ins.Inserted:
			late := Event{Phase: PhaseStoreResponse, SQL: ins.SQL, Outcome: OutcomeDuplicate,
				Note: strings.TrimSpace(ins.ConstraintError + " — too late: the money already moved"), Rows: rowsIf(false)}
			if ins.Existing != nil {
				late.KeyState = keyStateOf(ins.Existing)
			}
			a.record(late)
		default:
			a.record(Event{Phase: PhaseStoreResponse, SQL: ins.SQL, Outcome: OutcomeStored, Note: "key recorded after the work",
				TransferID: rec.TransferID, Rows: rowsIf(true), KeyState: StateCompleted})
		}
		return resp
	}
	stored, err := e.store.StoreResponse(a.ctx, a.table, a.scope, a.key, a.owner, resp, tr.Transfer.ID)
	switch {
	case err != nil:
		a.emit(PhaseStoreResponse, stored.SQL, OutcomeError, 0, "the response was not stored: "+err.Error())
	case !stored.Changed:
		a.record(Event{Phase: PhaseStoreResponse, SQL: stored.SQL, Outcome: OutcomeSkipped, Note: "no row of ours to store the response on",
			Rows: rowsIf(false)})
	default:
		a.record(Event{Phase: PhaseStoreResponse, SQL: stored.SQL, Outcome: OutcomeStored, Note: "response stored on the key",
			TransferID: tr.Transfer.ID, Rows: rowsIf(true), KeyState: StateCompleted})
	}
	return resp
}
