package classroom

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync"
	"time"

	"idemlab/engine"
	"idemlab/internal/clip"
)

// stormMsg announces a storm to every screen.
type stormMsg struct {
	Type     string    `json:"type"`
	Run      int       `json:"run"`
	Spec     StormSpec `json:"spec"`
	Requests int       `json:"requests"`
	// Policy is the storm's level as the engine runs it, so that a screen
	// names the key row's states from its first event.
	Policy engine.Policy `json:"policy"`
}

// resultMsg is what a phone's transfer got, as the phone saw it: nothing
// when the answer was lost.
type resultMsg struct {
	Type      string `json:"type"`
	Lane      string `json:"lane"`
	Intent    string `json:"intent"`
	Key       string `json:"key"`
	Attempt   int    `json:"attempt"`
	Retry     bool   `json:"retry"`
	Delivered bool   `json:"delivered"`
	Replayed  bool   `json:"replayed"`
	Retrying  bool   `json:"retrying"`
	Level     string `json:"level"`
	Status    int    `json:"status,omitempty"`
	Body      string `json:"body,omitempty"`
}

// startStorm opens a fresh ledger at the storm's level and fires it in a
// goroutine of the room. One storm runs at a time per room; the vote, if
// one is open, is locked as the storm begins. It runs on the room's
// goroutine.
func (r *Room) startStorm(c *conn, spec StormSpec) {
	if r.storming {
		r.tell(c, errorMsg("busy", "a storm is already running"))
		return
	}
	// A vote asked since the last storm is about this one: it is locked
	// now and judged by this storm's verdict. One that an earlier storm
	// judged is cleared: its results are not this storm's.
	forThis := r.vote.Question != "" && r.vote.Run == 0
	if !forThis {
		r.clearVote()
	}
	r.vote.Open = false
	r.dirtyView = true
	nr, err := r.newRun(spec.Level, &spec)
	if err != nil {
		r.cl.cfg.Logger.Warn("classroom storm", "room", r.code, "err", err)
		r.tell(c, errorMsg("internal", "could not open a fresh ledger"))
		return
	}
	if forThis {
		r.vote.Run = nr.id
	}
	sm := stormMsg{Type: "storm", Run: nr.id, Spec: spec, Requests: spec.Clients * spec.Attempts, Policy: nr.policy}
	r.recordAndBroadcast(nr.id, keepStorm, sm, sm)
	r.storming = r.spawn(func() { r.runStorm(nr, spec) })
}

// runStorm fires the storm: every client waits at one gate, then they all
// send at once, each its attempts one after the other. A late-retry storm
// sends every first attempt (its answer lost), moves the ledger's clock
// past the retention of the levels below scoped, then sends the retries.
func (r *Room) runStorm(run *run, spec StormSpec) {
	ctx := r.ctx
	begin := time.Now()
	var fault engine.Fault
	switch spec.Fault {
	case FaultClientTimeout:
		fault = engine.FaultClientTimeout
	case FaultLoseResponse, FaultLateRetry:
		fault = engine.FaultLoseResponse
	case FaultCrash:
		fault = engine.FaultCrash
	}
	var abandoned sync.WaitGroup // attempts whose client gave up, still running
	stage := func(from, to int) {
		gate := make(chan struct{})
		var clients sync.WaitGroup
		for c := 1; c <= spec.Clients; c++ {
			k := (c-1)%spec.Keys + 1
			clients.Add(1)
			go func() {
				defer clients.Done()
				<-gate
				for a := from; a <= to && ctx.Err() == nil; a++ {
					w := wish{lane: "c" + strconv.Itoa(c) + "." + strconv.Itoa(a), intent: "i" + strconv.Itoa(k),
						customer: "shop-" + strconv.Itoa((k-1)%4+1), key: "storm-" + strconv.Itoa(run.id) + "-" + strconv.Itoa(k), amount: amount}
					if spec.ChangeAmount && a > 1 {
						w.amount = correctedAmount
					}
					var lc *laneCtl
					if a == 1 && fault != engine.FaultNone {
						lc = &laneCtl{fault: fault, phase: spec.Phase}
						if fault == engine.FaultClientTimeout {
							lc.gaveUp = make(chan struct{})
						}
					}
					_, done := run.send(ctx, w, lc)
					abandoned.Add(1)
					go func() { <-done; abandoned.Done() }()
				}
			}()
		}
		close(gate)
		clients.Wait()
	}
	if spec.Fault == FaultLateRetry {
		stage(1, 1)
		abandoned.Wait()
		run.clock.Advance(r.cl.cfg.LateRetryAfter)
		if spec.Attempts > 1 {
			stage(2, spec.Attempts)
		}
	} else {
		stage(1, spec.Attempts)
	}
	abandoned.Wait()
	info := &stormInfo{Spec: spec, Requests: spec.Clients * spec.Attempts, DurationMS: time.Since(begin).Milliseconds()}
	// The report goes out before the state that says the storm is over, so
	// that screens see the verdict first and the controls come back after.
	r.sendReport(run, info)
	r.do(func() {
		r.storming = false
		r.dirtyView = true
		r.dirtyRun = false
	})
}

// studentSend is a press of a phone's "Send transfer" button. After an
// answer that settled the wish, it is a new wish with a new key; after a
// lost answer (the basement) or a 409, it is a retry with the same key, as
// a careful client would send it. The naive level ignores the key, so
// there the retry is simply a new request.
//
// It runs on the room's goroutine; the transfer runs in a goroutine of the
// room, which hands its outcome back as a command. Phones that press
// together before any ledger exists all send to the one the first press
// opened.
func (r *Room) studentSend(c *conn, basement bool) {
	st := c.student
	switch {
	case st == nil:
		r.tell(c, errorMsg("not-joined", "join the room first"))
		return
	case st.inFlight:
		r.tell(c, errorMsg("wait", "your last transfer is still on its way"))
		return
	case !st.sends.Allow(time.Now()):
		r.tell(c, errorMsg("rate-limited", "one transfer a second, please"))
		return
	}
	run := r.run
	if run == nil {
		var err error
		if run, err = r.newRun(r.level, nil); err != nil {
			r.tell(c, errorMsg("internal", "could not open a ledger"))
			return
		}
	}
	if !st.open {
		var b [8]byte
		rand.Read(b[:])
		st.attempts = 0
		st.intent = st.id + "-" + hex.EncodeToString(b[:2])
		st.key = "phone-" + hex.EncodeToString(b[:])
	}
	st.attempts++
	st.lanes++
	w := wish{lane: st.id + "." + strconv.Itoa(st.lanes), intent: st.intent, customer: "phone-" + st.id, key: st.key, amount: amount}
	attempt := st.attempts

	var lc *laneCtl
	if basement {
		lc = &laneCtl{fault: engine.FaultLoseResponse}
	}
	// The transfer's own command, which clears inFlight, runs after this one.
	st.inFlight = r.spawn(func() {
		res, _ := run.send(r.ctx, w, lc)
		status := res.Response.Status
		settled := res.Delivered && status != 409 && status != 0
		r.do(func() {
			st.inFlight = false
			st.open = !settled
			r.dirtyRun = true
		})
		out := resultMsg{Type: "result", Lane: w.lane, Intent: w.intent, Key: w.key, Attempt: attempt, Retry: attempt > 1,
			Delivered: res.Delivered, Replayed: res.Replayed, Retrying: !settled, Level: run.level}
		if res.Delivered {
			out.Status = status
			out.Body = clip.String(string(res.Response.Body), 400)
		}
		r.tell(c, out)
	})
}
