package classroom

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"idemlab/engine"
	"idemlab/lab"
)

// Accounts of every classroom ledger: the payer starts rich enough that no
// storm ever runs out of funds, so every refusal on the screen is about
// idempotency, not money.
const (
	payer        = "alice"
	payee        = "bob"
	startBalance = 100_000_000
	amount       = 10_000
	// correctedAmount is what a retry carries when the storm changes the
	// amount under the same key.
	correctedAmount = 12_000
)

// offsetClock is the wall clock plus an offset that a late-retry storm
// advances: "an hour later" in one call, while leases and latencies still
// run in real time.
type offsetClock struct{ offset atomic.Int64 }

func (c *offsetClock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

func (c *offsetClock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

// laneCtl is the fault planned for one lane (one attempt).
type laneCtl struct {
	fault engine.Fault
	phase engine.Phase
	fired atomic.Bool
	// gaveUp is closed when a client timeout strikes, which lets the
	// client move on to its retry while the server keeps working.
	gaveUp chan struct{}
}

// run is one ledger: a fresh SQLite database with one engine at one level,
// and the history of every attempt against it, for the checker.
type run struct {
	id     int
	level  string
	policy engine.Policy
	db     Ledger
	path   string
	eng    *engine.Engine
	clock  *offsetClock
	slow   time.Duration
	lanes  sync.Map // lane → *laneCtl
	// horizon is how long this run's clients keep retrying.
	horizon time.Duration

	// inflight counts requests still inside the engine, so the database is
	// closed only after the last one.
	inflight sync.WaitGroup

	mu       sync.Mutex
	intents  map[string]lab.Intent
	order    []string
	attempts []lab.Attempt
}

// ledgerPath is where a run's SQLite file lives: beside the bank API's
// database, one file per run, removed when the run is replaced.
func ledgerPath(db, code string, id int) string {
	ext := filepath.Ext(db)
	return strings.TrimSuffix(db, ext) + "-classroom-" + code + "-" + strconv.Itoa(id) + ext
}

// newRun opens a fresh ledger at level and makes it the room's current
// run. The previous run is closed once its last request has finished. It
// runs on the room's goroutine.
func (r *Room) newRun(level string, spec *StormSpec) (*run, error) {
	r.runSeq++
	id := r.runSeq

	p := engine.MustPreset(level)
	nr := &run{id: id, level: level, policy: p, clock: &offsetClock{}, horizon: r.cl.cfg.LateRetryAfter,
		intents: map[string]lab.Intent{}}
	var err error
	if r.cl.cfg.DB != "" {
		nr.path = ledgerPath(r.cl.cfg.DB, r.code, id)
		removeDB(nr.path) // a leftover from a crashed server is not this run's ledger
	}
	nr.db, err = r.cl.cfg.OpenLedger(nr.path)
	if err != nil {
		return nil, fmt.Errorf("open classroom ledger: %w", err)
	}
	ctx := r.ctx
	for _, a := range []struct {
		id  string
		bal int64
	}{{payer, startBalance}, {payee, 0}} {
		if _, err := nr.db.PutAccount(ctx, a.id, a.bal); err != nil {
			nr.close()
			return nil, fmt.Errorf("seed classroom ledger: %w", err)
		}
	}
	latency := r.cl.cfg.StudentLatency
	if spec != nil {
		latency = time.Duration(spec.LatencyMS) * time.Millisecond
		nr.slow = time.Duration(spec.SlowMS) * time.Millisecond
	}
	nr.eng = engine.New(nr.db, p, engine.Options{Clock: nr.clock, Hook: nr.hook, Trace: r.tracer(id, nr.clock), PaymentLatency: latency})

	r.flush() // the old ledger's events go out before the new record starts
	r.rec = &record{Run: id}
	old := r.run
	r.run, r.level, r.dirtyView = nr, level, true
	r.restoredRun, r.interrupted = 0, false
	for _, st := range r.byID {
		st.open = false // a fresh ledger: the next press is a new wish
	}
	if old != nil {
		if !r.spawn(func() { old.inflight.Wait(); old.close() }) {
			old.inflight.Wait()
			old.close()
		}
	}
	return nr, nil
}

func removeDB(path string) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
}

func (run *run) close() {
	run.db.Close()
	if run.path != "" {
		removeDB(run.path)
	}
}

// hook runs before every phase: slow motion first, then the lane's planned
// fault, if any, at its phase.
func (run *run) hook(ctx context.Context, s engine.Step) engine.Fault {
	if run.slow > 0 {
		t := time.NewTimer(run.slow)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	v, ok := run.lanes.Load(s.Lane)
	if !ok {
		return engine.FaultNone
	}
	lc := v.(*laneCtl)
	switch lc.fault {
	case engine.FaultLoseResponse:
		if s.Phase == engine.PhaseRespond {
			return engine.FaultLoseResponse
		}
	case engine.FaultCrash, engine.FaultClientTimeout:
		if s.Phase == lc.phase && lc.fired.CompareAndSwap(false, true) {
			if lc.gaveUp != nil {
				close(lc.gaveUp)
			}
			return lc.fault
		}
	}
	return engine.FaultNone
}

// wish is what one attempt asks for.
type wish struct {
	lane, intent, customer, key string
	amount                      int64
}

func (run *run) noteIntent(w wish) {
	run.mu.Lock()
	defer run.mu.Unlock()
	if _, ok := run.intents[w.intent]; !ok {
		run.intents[w.intent] = lab.Intent{ID: w.intent, Customer: w.customer, From: payer, To: payee, Amount: w.amount}
		run.order = append(run.order, w.intent)
	}
}

// send runs one attempt through the engine in its own goroutine and
// records it in the history. It returns when the client stops waiting:
// when the answer comes, or earlier when a client timeout strikes, in which
// case the server goes on and done is closed when it finishes.
func (run *run) send(ctx context.Context, w wish, lc *laneCtl) (res engine.Result, done <-chan struct{}) {
	body := `{"from":"` + payer + `","to":"` + payee + `","amount":` + strconv.FormatInt(w.amount, 10) + `}`
	req := engine.Request{Method: "POST", Path: engine.TransfersRoute, Customer: w.customer, HasCustomer: true,
		Key: []string{`"` + w.key + `"`}, Body: []byte(body), ContentType: "application/json", Lane: w.lane, Intent: w.intent}
	if lc != nil {
		run.lanes.Store(w.lane, lc)
	}
	run.noteIntent(w)
	finished := make(chan struct{})
	var out engine.Result
	sentAt := time.Now()
	run.inflight.Add(1)
	go func() {
		defer run.inflight.Done()
		defer close(finished)
		out = run.eng.Handle(ctx, req)
		a := lab.AttemptOf(req, out, sentAt)
		run.mu.Lock()
		run.attempts = append(run.attempts, a)
		run.mu.Unlock()
	}()
	var gaveUp chan struct{}
	if lc != nil {
		gaveUp = lc.gaveUp
	}
	select {
	case <-finished:
		return out, finished
	case <-gaveUp:
		return engine.Result{Delivered: false, Fault: engine.FaultClientTimeout, Phase: lc.phase}, finished
	}
}

// keyRow is the projector's summary of a key table's row
// (engine.KeyRecord, built by keyRowOf): the columns a room reads, and the
// stored response's status instead of the response.
type keyRow struct {
	Key      string `json:"key"`
	Customer string `json:"customer"`
	Scope    string `json:"scope"`
	State    string `json:"state"`
	Status   int    `json:"status,omitempty"`
	Transfer string `json:"transfer_id,omitempty"`
	Expires  int64  `json:"expires_at,omitempty"`
}

func keyRowOf(k engine.KeyRecord) keyRow {
	row := keyRow{Key: k.Key, Customer: k.Customer, Scope: k.Scope, State: k.State, Transfer: k.TransferID, Expires: k.ExpiresAt}
	if k.Response != nil {
		row.Status = k.Response.Status
	}
	return row
}

// maxKeyRows bounds the key table sent to screens; the count says the rest.
const maxKeyRows = 40

// reportMsg is the checker's verdict on a run, with the ledger's balances
// and key table, sent to every screen.
type reportMsg struct {
	Type      string           `json:"type"`
	Run       int              `json:"run"`
	Level     string           `json:"level"`
	Storm     *stormInfo       `json:"storm,omitempty"`
	Report    lab.Report       `json:"report"`
	Balances  map[string]int64 `json:"balances"`
	Keys      []keyRow         `json:"keys"`
	KeysTotal int              `json:"keys_total"`
	Vote      *vote            `json:"vote,omitempty"`
	// Picture draws a storm's history over its own clock (milliseconds
	// from its first request); only a storm's report has one. The phones'
	// copy lists no attempts (its buckets' samples are empty).
	Picture *lab.Picture `json:"picture,omitempty"`
	// PictureSVG is the picture drawn (lab.Picture.SVG), for the projector
	// only: the same drawing `idemlab day replay --svg` writes.
	PictureSVG string `json:"picture_svg,omitempty"`
	// PictureSVGKo is the same drawing in Korean, for a projector whose
	// pages speak it.
	PictureSVGKo string `json:"picture_svg_ko,omitempty"`
}

// stormInfo describes a finished storm.
type stormInfo struct {
	Spec       StormSpec `json:"spec"`
	Requests   int       `json:"requests"`
	DurationMS int64     `json:"duration_ms"`
}

// history gathers what the checker judges. The attempts are copied before
// the ledger is read: an attempt is recorded only once its request has
// finished, so every transfer of a recorded attempt is in the ledger read
// after it. (Read the other way round, an attempt that finished in between
// was judged against a ledger without its transfer: a report of two
// attempts and one transfer where there were two.) A transfer of a request
// still running may be in the ledger before its attempt is recorded, which
// is what happened.
func (run *run) history(ctx context.Context) (lab.History, engine.Snapshot, error) {
	run.mu.Lock()
	h := lab.History{
		Attempts:      append([]lab.Attempt(nil), run.attempts...),
		StartBalances: map[string]int64{payer: startBalance, payee: 0},
		Retention:     run.policy.Retention.D(),
		RetryHorizon:  run.horizon,
		Keyless:       !run.policy.Keyed(),
	}
	for _, id := range run.order {
		h.Intents = append(h.Intents, run.intents[id])
	}
	run.mu.Unlock()
	snap, err := run.db.Snapshot(ctx)
	if err != nil {
		return lab.History{}, snap, fmt.Errorf("snapshot run %d: %w", run.id, err)
	}
	h.Ledger = lab.LedgerOf(snap.Transfers)
	h.EndBalances = lab.BalancesOf(snap.Accounts)
	sort.SliceStable(h.Attempts, func(i, j int) bool { return h.Attempts[i].SentAt.Before(h.Attempts[j].SentAt) })
	return h, snap, nil
}

// secondRetry finds what the second request of the first intent got: the
// answer the room voted on.
func secondRetry(h lab.History, rep lab.Report) *actual {
	if len(h.Intents) == 0 {
		return nil
	}
	first := h.Intents[0].ID
	n := 0
	for _, a := range h.Attempts {
		if a.Intent != first {
			continue
		}
		if n++; n < 2 {
			continue
		}
		act := &actual{Status: a.Status, Lane: a.Lane}
		transfers := 0
		for _, t := range h.Ledger {
			if t.Customer == a.Customer && t.Key == a.Key {
				transfers++
			}
		}
		switch {
		case transfers > 1:
			act.Choice = ChoiceDouble
		case !a.Delivered:
			act.Choice = ChoiceNoAnswer
		case a.Status == 201:
			act.Choice = Choice201
		case a.Status == 200:
			act.Choice = Choice200
		case a.Status == 409:
			act.Choice = Choice409
		case a.Status == 422:
			act.Choice = Choice422
		}
		return act
	}
	return nil
}

// sendReport judges a run and broadcasts the verdict. Without a storm it
// runs on the room's goroutine. After a storm it runs on the storm's: the
// verdict and its picture are drawn there, and the room's goroutine
// reveals the vote with it and broadcasts it.
func (r *Room) sendReport(run *run, storm *stormInfo) {
	h, snap, err := run.history(context.WithoutCancel(r.ctx))
	if err != nil {
		r.cl.cfg.Logger.Warn("classroom report", "room", r.code, "err", err)
		return
	}
	rep := lab.Check(h)
	msg := reportMsg{Type: "report", Run: run.id, Level: run.level, Storm: storm, Report: rep,
		Balances: h.EndBalances, KeysTotal: len(snap.Keys) + len(snap.LooseKeys)}
	rows := append(append([]engine.KeyRecord(nil), snap.Keys...), snap.LooseKeys...)
	for i, k := range rows {
		if i == maxKeyRows {
			break
		}
		msg.Keys = append(msg.Keys, keyRowOf(k))
	}
	if msg.Keys == nil {
		msg.Keys = []keyRow{}
	}
	if storm == nil {
		r.recordAndBroadcast(run.id, keepReport, msg, msg)
		return
	}
	// The projector gets the picture with each moment's attempts, so that
	// a column opens them in the race view; the phones get it without
	// those lists: a storm of 5,000 requests lists thousands of attempts,
	// which three hundred phones on the room's wifi need not each receive.
	pic := lab.NewPicture(h, rep, lab.PictureOptions{})
	msg.Picture = &pic
	msg.PictureSVG = string(pic.SVG("en"))
	msg.PictureSVGKo = string(pic.SVG("ko"))
	bare := pic
	bare.Samples = 0
	bare.Buckets = make([]lab.PictureBucket, len(pic.Buckets))
	for i, b := range pic.Buckets {
		b.Sample = []lab.PictureAttempt{}
		bare.Buckets[i] = b
	}
	phones := msg
	phones.Picture = &bare
	phones.PictureSVG = ""
	phones.PictureSVGKo = ""
	second := secondRetry(h, rep)
	r.do(func() {
		if r.vote.Run == run.id {
			r.reveal(second)
		}
		if v := r.vote; v.Question != "" && v.Run == run.id {
			msg.Vote, phones.Vote = &v, &v
		}
		r.recordAndBroadcast(run.id, keepFinalReport, msg, phones)
	})
}
