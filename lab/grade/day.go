package grade

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"idemlab/lab"
)

// DayOptions tune a day's replay over HTTP.
type DayOptions struct {
	// Concurrency is how many groups of attempts are in flight at once;
	// attempts that share a key are never in flight together unless the
	// day says they overlap. DefaultConcurrency when zero.
	Concurrency int
	// Timeout bounds each request; DefaultTimeout when zero.
	Timeout time.Duration
	// Replicas are further base URLs of the same endpoint (other processes
	// over its database): the day's first attempts go round-robin over the
	// base and these, each retry to another replica than its first attempt.
	Replicas []string
	// Progress, when set, is called as attempts finish, from many
	// goroutines at once; it must be safe for concurrent use.
	Progress func(done, total int)
}

// DefaultConcurrency is how many groups of a day's attempts are in flight
// at once when no concurrency is given.
const DefaultConcurrency = 16

// DayRun is a day replayed over HTTP: the tally and the requests sent, in
// the day's order, for a report that prints them.
type DayRun struct {
	Tally    lab.Tally
	Requests []Request
	// Errors counts attempts that got no answer although none was cut.
	Errors int
	// NoRetryAfter counts 409 answers without a valid Retry-After header;
	// FirstNoRetryAfter is the index of the first such attempt in the day.
	NoRetryAfter      int
	FirstNoRetryAfter int
	// Answered is when each attempt's answer arrived (or it was cut), in
	// the day's order; the history's attempts say when each was sent.
	Answered []time.Time
	// Targets is the base URL each attempt was sent to, in the day's
	// order, when the day went over several replicas.
	Targets []string
}

// ReplayDayHTTP runs a day against the endpoint at base, which follows the
// lab contract. It opens the day's accounts with PUT, sends every attempt
// (those the day says are lost are cut before their answer is read; those
// that overlap an attempt are sent while it is in flight), reads every
// balance back with GET and judges the history. The day's clock is
// compressed: a day runs as fast as the endpoint answers, so keys never
// age out during the run, and rule 7 is judged on the retention the
// endpoint publishes at GET {base}.
func ReplayDayHTTP(ctx context.Context, d lab.Day, base string, o DayOptions) (DayRun, error) {
	start := time.Now()
	cs, err := newClients(append([]string{base}, o.Replicas...), o.Timeout)
	if err != nil {
		return DayRun{}, err
	}
	defer closeClients(cs)
	c := cs[0]
	// The routes are drawn in the day's order, so that each retry knows
	// where its first attempt went.
	rt := newRouter(len(cs))
	route := make([]int, len(d.Attempts))
	for i, a := range d.Attempts {
		route[i] = rt.pick(a.Customer, a.Key)
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	retention, known := c.Retention(ctx)
	if err := forEach(ctx, o.Concurrency, len(d.Accounts), func(i int) error {
		_, err := c.PutAccount(ctx, d.Accounts[i].ID, d.Accounts[i].Balance)
		return err
	}); err != nil {
		return DayRun{}, fmt.Errorf("replay day: open accounts: %w", err)
	}
	run := DayRun{Requests: make([]Request, len(d.Attempts)), Answered: make([]time.Time, len(d.Attempts))}
	if len(cs) > 1 {
		run.Targets = make([]string, len(d.Attempts))
		for i := range run.Targets {
			run.Targets[i] = cs[route[i]].Base()
		}
	}
	attempts := make([]lab.Attempt, len(d.Attempts))
	var done, failed atomic.Int64
	var mu sync.Mutex // guards the Retry-After counts
	run.FirstNoRetryAfter = -1
	send := func(i int, written chan<- struct{}) {
		a := d.Attempts[i]
		r := dayRequest(a)
		run.Requests[i] = r
		signal := func() {}
		if written != nil {
			signal = sync.OnceFunc(func() { close(written) })
			defer signal() // even when the connection failed
		}
		sentAt := time.Now()
		c := cs[route[i]]
		var rep Reply
		if written == nil {
			rep = c.Do(ctx, r)
		} else if p, err := c.prepare(ctx, r); err != nil {
			rep = Reply{Err: fmt.Errorf("connect: %w", err)}
		} else {
			// The attempts that overlap this one go once it is on the wire,
			// so it gets a connection of its own to know when that is.
			rep = c.finish(p, signal)
		}
		at := lab.Attempt{Lane: a.Lane, Intent: a.Intent, Customer: a.Customer, Key: a.Key, Body: []byte(a.Body),
			Status: rep.Status, Response: rep.Body, ContentType: rep.Header.Get("Content-Type"), Replayed: rep.Replayed(), Delivered: !r.Cut && rep.Err == nil, SentAt: sentAt,
			Server: server(route[i], len(cs))}
		if rep.Err != nil {
			at.Status, at.Response, at.ContentType = 0, nil, ""
			failed.Add(1)
		}
		if rep.Err == nil && rep.Status == 409 && !validRetryAfter(rep.Header) {
			mu.Lock()
			run.NoRetryAfter++
			if run.FirstNoRetryAfter < 0 || i < run.FirstNoRetryAfter {
				run.FirstNoRetryAfter = i
			}
			mu.Unlock()
		}
		attempts[i] = at
		run.Answered[i] = rep.At
		if rep.At.IsZero() {
			run.Answered[i] = sentAt
		}
		n := done.Add(1)
		if o.Progress != nil {
			o.Progress(int(n), len(d.Attempts))
		}
	}
	var runTree func(i int, kids map[int][]int)
	runTree = func(i int, kids map[int][]int) {
		if len(kids[i]) == 0 {
			send(i, nil)
			return
		}
		written := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { send(i, written) })
		<-written
		for _, k := range kids[i] {
			wg.Go(func() { runTree(k, kids) })
		}
		wg.Wait()
	}
	if err := dispatch(ctx, d, o.Concurrency, func(g lab.DayGroup) { runTree(g.Root, g.Children) }); err != nil {
		return DayRun{}, fmt.Errorf("replay day: %w", err)
	}
	run.Errors = int(failed.Load())
	if run.Errors == len(d.Attempts) && len(d.Attempts) > 0 {
		return DayRun{}, errors.New("replay day: no attempt got through; is the endpoint running?")
	}
	end := make([]int64, len(d.Accounts))
	if err := forEach(ctx, o.Concurrency, len(d.Accounts), func(i int) error {
		b, err := c.GetBalance(ctx, d.Accounts[i].ID)
		end[i] = b
		return err
	}); err != nil {
		return DayRun{}, fmt.Errorf("replay day: read balances: %w", err)
	}
	endBal := make(map[string]int64, len(end))
	for i, a := range d.Accounts {
		endBal[a.ID] = end[i]
	}
	h := lab.History{Intents: d.HistoryIntents(), Attempts: attempts, StartBalances: d.StartBalances(), EndBalances: endBal,
		Retention: retention, RetryHorizon: d.RetryHorizon()}
	h.TransfersPerIntent = lab.InferTransfers(h.Intents, h.Attempts, h.StartBalances, h.EndBalances)
	run.Tally = lab.NewTally(d, h, h.TransfersPerIntent)
	run.Tally.Target, run.Tally.RetentionKnown, run.Tally.Elapsed = c.Base(), known, time.Since(start)
	if len(cs) > 1 {
		// The tally says where the day went: every replica, in order.
		bases := make([]string, len(cs))
		for i, r := range cs {
			bases[i] = r.Base()
		}
		run.Tally.Target = strings.Join(bases, " and ")
	}
	return run, nil
}

// dayRequest is the HTTP request of a day's attempt.
func dayRequest(a lab.DayAttempt) Request {
	r := keyed(a.Customer, a.Key, a.Body)
	r.Cut = a.Lost()
	return r
}

// dispatch runs the day's groups in order, at most n at once, never two
// that share a key (in any customer's scope) at the same time, so that
// retries keep their order.
func dispatch(ctx context.Context, d lab.Day, n int, run func(lab.DayGroup)) error {
	var (
		mu     sync.Mutex
		cond   = sync.NewCond(&mu)
		busy   = map[string]bool{}
		active int
		wg     sync.WaitGroup
	)
	for _, g := range d.Groups() {
		if err := ctx.Err(); err != nil {
			break
		}
		keys := groupKeys(d, g)
		mu.Lock()
		for active >= n || anyBusy(busy, keys) {
			cond.Wait()
		}
		for _, k := range keys {
			busy[k] = true
		}
		active++
		mu.Unlock()
		wg.Go(func() {
			run(g)
			mu.Lock()
			for _, k := range keys {
				delete(busy, k)
			}
			active--
			cond.Broadcast()
			mu.Unlock()
		})
	}
	wg.Wait()
	return ctx.Err()
}

func groupKeys(d lab.Day, g lab.DayGroup) []string {
	keys := []string{d.Attempts[g.Root].Key}
	for _, kids := range g.Children {
		for _, k := range kids {
			keys = append(keys, d.Attempts[k].Key)
		}
	}
	return keys
}

func anyBusy(busy map[string]bool, keys []string) bool {
	for _, k := range keys {
		if busy[k] {
			return true
		}
	}
	return false
}

// forEach runs f for 0..n-1 on up to width goroutines and returns the
// first error.
func forEach(ctx context.Context, width, n int, f func(i int) error) error {
	var (
		next  atomic.Int64
		first error
		once  sync.Once
		wg    sync.WaitGroup
	)
	for range min(width, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}
