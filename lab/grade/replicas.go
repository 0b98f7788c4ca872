// Several replicas: an endpoint that runs as several processes over one
// database is graded with its traffic spread over them, as a load balancer
// spreads it, because a lock or a key cache in one process's memory holds
// on one replica and protects nothing across two.

package grade

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"idemlab/lab"
)

// router picks the replica of each request: a request under a key not
// seen before (or under no key) goes to the next replica in turn; every
// later attempt under the same customer's key goes to a replica other than
// the one its first attempt reached (the others in turn, with three or
// more); and simultaneous attempts (split) are spread over all replicas.
// With one replica every request goes to it. It is safe for concurrent
// use, but the order of its calls decides the routes: call it in the order
// the attempts are meant to happen.
type router struct {
	mu   sync.Mutex
	n    int
	next int
	keys map[string]*route // customer and key → where its attempts went
}

// route is where a key's attempts went: its first attempt's replica and
// how many retries followed.
type route struct{ first, retries int }

func newRouter(n int) *router { return &router{n: n, keys: map[string]*route{}} }

// pick returns the replica, from 0, of an attempt under key (its raw
// Idempotency-Key header lines, "" when none) sent by customer.
func (rt *router) pick(customer, key string) int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.pickLocked(customer, key)
}

func (rt *router) pickLocked(customer, key string) int {
	if rt.n <= 1 {
		return 0
	}
	id := customer + "\x00" + key
	if r := rt.keys[id]; r != nil && key != "" {
		r.retries++
		return (r.first + 1 + (r.retries-1)%(rt.n-1)) % rt.n
	}
	first := rt.next
	rt.next = (rt.next + 1) % rt.n
	if key != "" {
		rt.keys[id] = &route{first: first}
	}
	return first
}

// split routes attempts sent at the same moment: those under one key are
// spread over every replica in turn, from the replica pick chooses for the
// first of them, so that a lock in one process's memory meets attempts it
// does not see.
func (rt *router) split(rs []Request) []int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	out := make([]int, len(rs))
	start := map[string]int{}
	count := map[string]int{}
	for i, r := range rs {
		customer, key := requestKey(r)
		id := customer + "\x00" + key
		if s, ok := start[id]; ok && key != "" {
			count[id]++
			out[i] = (s + count[id]) % max(rt.n, 1)
			continue
		}
		out[i] = rt.pickLocked(customer, key)
		start[id] = out[i]
	}
	return out
}

// pickRequest routes a check's request by its customer and its key lines.
func (rt *router) pickRequest(r Request) int { return rt.pick(requestKey(r)) }

// requestKey is a request's customer and its raw Idempotency-Key lines.
func requestKey(r Request) (customer, key string) {
	var keys []string
	for _, h := range r.Header {
		switch h[0] {
		case "X-Customer-ID":
			customer = h[1]
		case "Idempotency-Key":
			keys = append(keys, h[1])
		}
	}
	return customer, strings.Join(keys, "\n")
}

// newClients opens a client for each replica's base URL.
func newClients(bases []string, timeout time.Duration) ([]*Client, error) {
	var cs []*Client
	for _, b := range bases {
		c, err := NewClient(b, timeout)
		if err != nil {
			closeClients(cs)
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

func closeClients(cs []*Client) {
	for _, c := range cs {
		c.Close()
	}
}

// server is how an attempt records the replica r (from 0) it reached:
// lab.Attempt.Server counts from 1, and stays 0 with one replica.
func server(r, replicas int) int {
	if replicas < 2 {
		return 0
	}
	return r + 1
}

// baseOf is the base URL attempt i was sent to.
func (cr *checkRun) baseOf(i int) string {
	if s := cr.attempts[i].Server; s > 0 && s <= len(cr.g.cs) {
		return cr.g.cs[s-1].Base()
	}
	return cr.g.c.Base()
}

// reached records the replica attempt i reached.
func (cr *checkRun) reached(i, replica int) {
	cr.attempts[i].Server = server(replica, len(cr.g.cs))
	cr.g.noteServer(cr.name, cr.attempts[i])
}

// noteServer remembers which replica a check's attempt reached, so that a
// failure, which names its attempts by lane, can be traced to replicas.
func (g *grader) noteServer(check string, a lab.Attempt) {
	if a.Server == 0 {
		return
	}
	if g.servers == nil {
		g.servers = map[string]int{}
	}
	g.servers[check+"\x00"+a.Lane] = a.Server
}

// serversOf lists, in order, the replicas (from 1) a failure's attempts
// reached.
func (g *grader) serversOf(f Failure) []int {
	var out []int
	for _, l := range f.Lanes {
		if s := g.servers[f.Check+"\x00"+l]; s > 0 && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// baseOf is the base URL a day's attempt was sent to; base when the day
// ran against one replica.
func (run DayRun) baseOf(i int, base string) string {
	if i < len(run.Targets) && run.Targets[i] != "" {
		return run.Targets[i]
	}
	return base
}

// confirmInProcess diagnoses what only several replicas break. For every
// check (or the day) with a failure whose attempts reached different
// replicas, it sends the same check again to the first replica alone; each
// such failure of a rule that holds there is laid at a guard in each
// process's memory (a lock, or a key cache: a retry on the other replica
// is a miss there), with that cause and its fix.
func (g *grader) confirmInProcess(ctx context.Context, o Options, retention time.Duration) {
	if len(g.cs) < 2 {
		return
	}
	spread := map[string]bool{}
	for _, f := range g.rep.Failures {
		if len(g.serversOf(f)) > 1 {
			spread[f.Check] = true
		}
	}
	for _, name := range Checks() {
		if !spread[name] || ctx.Err() != nil {
			continue
		}
		broken, ok := g.solo(ctx, name, o, retention)
		if !ok {
			continue
		}
		what := "check"
		if name == "day" {
			what = "day"
		}
		for i := range g.rep.Failures {
			f := &g.rep.Failures[i]
			servers := g.serversOf(*f)
			if f.Check != name || len(servers) < 2 || broken[f.Rule] {
				continue // one replica breaks it too: the cause is not the replicas
			}
			setCause(f, lab.CauseInProcessLock)
			var said []string
			for _, s := range servers {
				said = append(said, fmt.Sprintf("%d (%s)", s, g.cs[s-1].Base()))
			}
			kept := "kept this rule"
			if f.Rule == lab.RuleOneTransfer.Name {
				kept = "made one transfer per intent"
			}
			f.Message += fmt.Sprintf("; its attempts reached replicas %s, and the same %s sent to replica 1 alone %s",
				strings.Join(said, " and "), what, kept)
		}
	}
}

// solo runs check name (or the day) again, under a fresh prefix, with all
// its traffic to the first replica, and returns the rules it broke there;
// ok is false when it could not finish.
func (g *grader) solo(ctx context.Context, name string, o Options, retention time.Duration) (broken map[string]bool, ok bool) {
	s := &grader{c: g.cs[0], cs: g.cs[:1], rt: newRouter(1), run: g.run + "solo-",
		r: mrand.New(mrand.NewPCG(uint64(o.Seed), 0x9a7e)), rep: &Report{Failures: []Failure{}, Notes: []Note{}}}
	o.Progress = nil
	if name == "day" {
		s.runDay(ctx, o, 0)
	} else {
		for _, ch := range checks {
			if ch.name == name {
				s.runCheck(ctx, ch, retention)
			}
		}
	}
	if len(s.rep.Checks) == 0 || s.rep.Checks[0].Error != "" || ctx.Err() != nil {
		return nil, false
	}
	broken = map[string]bool{}
	for _, r := range s.rep.Checks[0].Broken {
		broken[r] = true
	}
	return broken, true
}
