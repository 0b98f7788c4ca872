package grade

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"sort"
	"strings"
	"time"

	"idemlab/lab"
)

// RetryHorizon is how long the grader's clients (and the day's) keep
// retrying; a published retention that is not longer than this breaks
// rule 7.
const RetryHorizon = time.Hour

// Options configure a grading run. Every field may be zero.
type Options struct {
	// Seed fixes the amounts, the keys' shapes and the day; 0 picks one,
	// which the report names so the run can be repeated. Account ids,
	// customers and keys always carry a fresh run prefix, so the same seed
	// can grade the same endpoint twice.
	Seed int64
	// Timeout bounds each request; DefaultTimeout when zero.
	Timeout time.Duration
	// Day is the day replayed at the end; DayParams(DefaultDayIntents)
	// when zero. Its seed and prefix are set by the grader.
	Day lab.DayParams
	// Concurrency of the day's replay; DefaultConcurrency when zero.
	Concurrency int
	// Replicas are further base URLs of the same endpoint: other processes
	// over the same database, as a load balancer would reach them. Every
	// check's traffic is spread over the base URL and these: each retry
	// reaches another replica than its first attempt, simultaneous retries
	// are split between them, the day goes round-robin. None: one process,
	// every request to the base URL.
	Replicas []string
	// Progress, when set, is told where the run is: as each check starts,
	// and as the day's attempts are answered. It is called from many
	// goroutines at once during the day and must be safe for concurrent use.
	Progress func(Progress)
}

// Progress is where a grading run is, for a progress line.
type Progress struct {
	// Check is the check running; N its number, from 1, of Of (the day
	// included).
	Check string
	N, Of int
	// Done and Total count the day's attempts answered and to send; both
	// are 0 outside the day.
	Done, Total int
}

// grader holds one run's state.
type grader struct {
	// c is the first replica, which opens and reads the accounts; cs are
	// all of them, c first, and rt routes each attempt to one.
	c  *Client
	cs []*Client
	rt *router
	// servers is the replica (from 1) of each attempt, by check and lane,
	// when there are several (replicas.go).
	servers map[string]int
	run     string
	r       *mrand.Rand
	rep     *Report
}

// Grade judges the endpoint at base. It returns an error only when the
// endpoint cannot be graded at all (a bad URL, nothing listening); broken
// rules are in the report.
func Grade(ctx context.Context, base string, o Options) (Report, error) {
	start := time.Now()
	cs, err := newClients(append([]string{base}, o.Replicas...), o.Timeout)
	if err != nil {
		return Report{}, err
	}
	defer closeClients(cs)
	c := cs[0]
	if o.Seed == 0 {
		o.Seed = randomSeed()
	}
	g := &grader{c: c, cs: cs, rt: newRouter(len(cs)), run: lab.RandomPrefix("g"), r: mrand.New(mrand.NewPCG(uint64(o.Seed), 0x9a7e)),
		rep: &Report{Target: c.Base(), Seed: o.Seed, RetryHorizonSeconds: int64(RetryHorizon / time.Second),
			Failures: []Failure{}, Notes: []Note{}}}
	g.rep.Run = strings.TrimSuffix(g.run, "-")
	if len(cs) > 1 {
		for _, c := range cs {
			g.rep.Replicas = append(g.rep.Replicas, c.Base())
		}
	}
	for _, c := range cs {
		if rep := c.Do(ctx, Request{Method: "GET", Path: "/accounts/" + g.run + "probe"}); rep.Err != nil {
			return Report{}, fmt.Errorf("grade: %s cannot be reached: %w", c.Base(), rep.Err)
		}
	}
	retention, known := c.Retention(ctx)
	if known {
		secs := int64(retention / time.Second)
		g.rep.RetentionSeconds = &secs
	}
	of := len(checks) + 1
	for n, ch := range checks {
		if ctx.Err() != nil {
			return Report{}, ctx.Err()
		}
		if o.Progress != nil {
			o.Progress(Progress{Check: ch.name, N: n + 1, Of: of})
		}
		g.runCheck(ctx, ch, retention)
	}
	if o.Progress != nil {
		o.Progress(Progress{Check: "day", N: of, Of: of})
	}
	g.runDay(ctx, o, of)
	g.confirmInProcess(ctx, o, retention)
	if ctx.Err() != nil {
		return Report{}, ctx.Err()
	}
	g.verdicts(known, retention)
	g.rep.ElapsedMS = time.Since(start).Milliseconds()
	return *g.rep, nil
}

// randomSeed picks a seed for a run that names none: from 1 to 2^53−1, so
// that it survives a JSON number in the report.
func randomSeed() int64 { return 1 + mrand.Int64N(1<<53-1) }

func (g *grader) runCheck(ctx context.Context, ch check, retention time.Duration) {
	cr := newCheckRun(g, ctx, ch.name)
	res := CheckResult{Name: ch.name, Title: ch.title}
	began := time.Now()
	defer func() { g.rep.Checks[len(g.rep.Checks)-1].ElapsedMS = time.Since(began).Milliseconds() }()
	if err := ch.run(cr); err != nil {
		res.Error = err.Error()
		res.Notes = len(cr.notes)
		res.settle()
		g.rep.Checks = append(g.rep.Checks, res)
		g.rep.Notes = append(g.rep.Notes, cr.notes...)
		return
	}
	fails, err := cr.judge(retention)
	if err != nil {
		res.Error = err.Error()
	}
	seen := map[string]bool{}
	for _, f := range fails {
		if !seen[f.Rule] {
			seen[f.Rule] = true
			res.Broken = append(res.Broken, f.Rule)
		}
	}
	res.Notes = len(cr.notes)
	res.settle()
	g.rep.Checks = append(g.rep.Checks, res)
	g.rep.Failures = append(g.rep.Failures, fails...)
	g.rep.Notes = append(g.rep.Notes, cr.notes...)
}

// verdicts folds the failures into one verdict per rule, and judges the
// published retention (rule 7) as a check of its own.
func (g *grader) verdicts(known bool, retention time.Duration) {
	ret := CheckResult{Name: "retention", Title: fmt.Sprintf("the published retention is longer than the clients' retry horizon (%s)", RetryHorizon)}
	if !known {
		ret.Notes = 1
		g.rep.Notes = append(g.rep.Notes, Note{Check: "retention", Message: "GET " + g.c.Base() +
			" publishes no retention_seconds, so rule 7 cannot be judged; publish {\"retention_seconds\": N}",
			Curl: []string{Curl(g.c.Base(), Request{Method: "GET"})}})
	} else if lab.RetentionTooShort(retention, RetryHorizon) {
		f := Failure{Check: "retention", Rule: lab.RuleRetention.Name, RuleN: lab.RuleRetention.N,
			Message: fmt.Sprintf("keys are kept %s, but clients retry for up to %s, and the retention must be longer: a retry at the very end of the horizon (or from a clock a little ahead) finds no key and becomes a second transfer", retention, RetryHorizon),
			Curl:    []string{Curl(g.c.Base(), Request{Method: "GET"})}}
		setCause(&f, lab.CauseShortRetention)
		g.rep.Failures = append(g.rep.Failures, f)
		ret.Broken = []string{lab.RuleRetention.Name}
	}
	ret.settle()
	g.rep.Checks = append(g.rep.Checks, ret)
	broken := map[string]bool{}
	for _, f := range g.rep.Failures {
		broken[f.Rule] = true
	}
	sort.SliceStable(g.rep.Failures, func(i, j int) bool { return g.rep.Failures[i].RuleN < g.rep.Failures[j].RuleN })
	g.rep.OK = known
	for _, r := range lab.Rules() {
		v := RuleVerdict{N: r.N, Name: r.Name, Title: r.Title, Verdict: Holds}
		switch {
		case broken[r.Name]:
			v.Verdict, v.Fix = Broken, lab.RuleFix(r.Name)
			g.rep.OK = false
			seen := map[string]bool{}
			for _, f := range g.rep.Failures {
				if f.Rule != r.Name || f.Cause == "" || seen[f.Cause] {
					continue
				}
				if len(v.Causes) == 0 {
					v.Fix = f.Fix
				}
				seen[f.Cause] = true
				v.Causes = append(v.Causes, f.Cause)
			}
		case r == lab.RuleRetention && !known:
			v.Verdict, v.Fix = Unknown, lab.RuleFix(r.Name)
		case r == lab.RuleOneCharge:
			// The grader sees the endpoint's answers and balances, never the
			// processor behind it (docs/lab-contract.md).
			v.Verdict, v.Fix = NotJudged, lab.RuleFix(r.Name)
		}
		g.rep.Rules = append(g.rep.Rules, v)
	}
	for _, c := range g.rep.Checks {
		if c.Verdict != CheckOK {
			g.rep.OK = false
		}
	}
}
