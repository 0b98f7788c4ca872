package classroom

import (
	"context"
	"strconv"
	"time"

	"idemlab/engine"
	"idemlab/lab"
)

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
