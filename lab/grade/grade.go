package grade

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"sort"
	"strconv"
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
	// Timeout bounds each request; 10 s when zero.
	Timeout time.Duration
	// Day is the day replayed at the end; a small day (120 intents, 8
	// customers) when zero. Its seed and prefix are set by the grader.
	Day lab.DayParams
	// Concurrency of the day's replay; 16 when zero.
	Concurrency int
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

// Verdicts of a rule.
const (
	Holds   = "holds"
	Broken  = "broken"
	Unknown = "unknown"
)

// Verdicts of a check. A check is ok only when its promise holds: no rule
// broke and the endpoint answered as the contract says. It warns when no
// rule broke but the endpoint departed from the contract (a note says how),
// and fails when it broke a rule or could not finish.
const (
	CheckOK   = "ok"
	CheckWarn = "warn"
	CheckFail = "fail"
)

// Report is a grading run's verdict, for people (WriteText) and machines
// (JSON).
type Report struct {
	Target string `json:"target"`
	Seed   int64  `json:"seed"`
	Run    string `json:"run"`
	// RetentionSeconds is what the endpoint publishes, nil when nothing.
	RetentionSeconds    *int64 `json:"retention_seconds"`
	RetryHorizonSeconds int64  `json:"retry_horizon_seconds"`
	// OK is true only when every rule holds (rule 7 judged) and every
	// check is ok: the endpoint keeps every promise the grader checks.
	OK       bool          `json:"ok"`
	Rules    []RuleVerdict `json:"rules"`
	Checks   []CheckResult `json:"checks"`
	Failures []Failure     `json:"failures"`
	Notes    []Note        `json:"notes"`
	Day      *DaySummary   `json:"day,omitempty"`
	// ElapsedMS is how long the run took.
	ElapsedMS int64 `json:"elapsed_ms"`
}

// DaySummary is the day's tally as the report shows it: the checker's
// counts, the answers by status and the wishes never paid.
type DaySummary struct {
	lab.Summary
	// Statuses counts the answers by HTTP status ("0": the grader cut the
	// connection, or no answer came).
	Statuses map[int]int `json:"statuses"`
	// ForeignKeyRefusals counts the intents never paid because their
	// requests were refused after another customer had used the same key
	// string (rule 5).
	ForeignKeyRefusals int `json:"foreign_key_refusals"`
	// UnpaidIntents names the first intents never paid (at most ten);
	// Summary.Unpaid counts them all.
	UnpaidIntents []string `json:"unpaid_intent_ids,omitempty"`
	// Conflicts409WithoutRetryAfter counts 409s sent without a valid
	// Retry-After header.
	Conflicts409WithoutRetryAfter int `json:"conflicts_409_without_retry_after"`
}

// RuleVerdict is one rule's verdict over the whole run.
type RuleVerdict struct {
	N       int    `json:"n"`
	Name    string `json:"name"`
	Title   string `json:"title"`
	Verdict string `json:"verdict"`
	// Fix says what to change when the rule is broken or unknown: the fix
	// for the cause the grader diagnosed first, or the rule's usual fix.
	Fix string `json:"fix,omitempty"`
	// Causes lists the causes diagnosed, in the order found; each failure
	// carries its own, with its fix.
	Causes []string `json:"causes,omitempty"`
}

// CheckResult is one check's outcome.
type CheckResult struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	// Verdict is CheckOK, CheckWarn or CheckFail; OK is Verdict == CheckOK.
	Verdict string   `json:"verdict"`
	OK      bool     `json:"ok"`
	Broken  []string `json:"broken,omitempty"`
	// Notes counts the check's notes: its departures from the contract.
	Notes int `json:"notes,omitempty"`
	// Error is set when the check could not run (the endpoint refused to
	// open an account, or could not be reached).
	Error     string `json:"error,omitempty"`
	ElapsedMS int64  `json:"elapsed_ms"`
}

// Failure is one broken rule, shown by the shortest request sequence the
// grader found.
type Failure struct {
	Check   string `json:"check"`
	Rule    string `json:"rule"`
	RuleN   int    `json:"rule_n"`
	Message string `json:"message"`
	// Cause names what the evidence says went wrong (see Causes), when the
	// grader could tell; Diagnosis says it in words and Fix what to change.
	// Without a cause, Fix is the rule's usual fix.
	Cause     string   `json:"cause,omitempty"`
	Diagnosis string   `json:"diagnosis,omitempty"`
	Fix       string   `json:"fix"`
	Lanes     []string `json:"lanes,omitempty"`
	// Curl is the sequence as shell lines a student can paste; lines that
	// start with '#' say what the grader did that curl alone does not.
	Curl []string `json:"curl,omitempty"`
}

// Note is a departure from the contract that breaks no rule by itself.
type Note struct {
	Check   string   `json:"check"`
	Message string   `json:"message"`
	Curl    []string `json:"curl,omitempty"`
}

// check is one named scenario.
type check struct {
	name, title string
	run         func(s *scenario) error
}

var checks = []check{
	{"retry", "a retry after the answer arrived gets that answer again, byte for byte", checkRetry},
	{"cut", "a retry after a cut connection gets the answer the client never read, and no second transfer", checkCut},
	{"reordered", "the same request re-spaced, reordered, or both is a retry, not a new request", checkReordered},
	{"correction", "a corrected amount under a used key gets 422 and moves nothing", checkCorrection},
	{"refusals", "a 402 or 404 is stored under its key: after a top-up, or once the account exists, the retry still gets it byte for byte", checkRefusals},
	{"missing-key", "a transfer without Idempotency-Key gets 400, without X-Customer-ID 401, and nothing moves", checkMissingKey},
	{"malformed-keys", "keys that are not an RFC 8941 string of 1 to 255 printable characters get 400 and move nothing", checkMalformedKeys},
	{"longest-key", "a valid key of exactly 255 characters is accepted, pays once and is replayed", checkLongestKey},
	{"other-customer", "another customer's key is that customer's alone: each customer's own request under it gets its own transfer", checkOtherCustomer},
	{"together", "identical retries that arrive at the same moment make one transfer, a 409 says Retry-After, then a retry gets the first answer", checkTogether},
}

// Checks lists the names of the grader's checks, the day's replay last.
func Checks() []string {
	out := make([]string, 0, len(checks)+1)
	for _, c := range checks {
		out = append(out, c.name)
	}
	return append(out, "day")
}

// grader holds one run's state.
type grader struct {
	c   *Client
	run string
	r   *mrand.Rand
	rep *Report
}

// Grade judges the endpoint at base. It returns an error only when the
// endpoint cannot be graded at all (a bad URL, nothing listening); broken
// rules are in the report.
func Grade(ctx context.Context, base string, o Options) (Report, error) {
	start := time.Now()
	c, err := NewClient(base, o.Timeout)
	if err != nil {
		return Report{}, err
	}
	defer c.Close()
	if o.Seed == 0 {
		o.Seed = randomSeed()
	}
	g := &grader{c: c, run: lab.RandomPrefix("g"), r: mrand.New(mrand.NewPCG(uint64(o.Seed), 0x9a7e)),
		rep: &Report{Target: c.Base(), Seed: o.Seed, RetryHorizonSeconds: int64(RetryHorizon / time.Second),
			Failures: []Failure{}, Notes: []Note{}}}
	g.rep.Run = strings.TrimSuffix(g.run, "-")
	if rep := c.Do(ctx, Request{Method: "GET", Path: "/accounts/" + g.run + "probe"}); rep.Err != nil {
		return Report{}, fmt.Errorf("grade: %s cannot be reached: %w", c.Base(), rep.Err)
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
	if ctx.Err() != nil {
		return Report{}, ctx.Err()
	}
	g.verdicts(known, retention)
	g.rep.ElapsedMS = time.Since(start).Milliseconds()
	return *g.rep, nil
}

func randomSeed() int64 {
	var b [8]byte
	rand.Read(b[:])
	n := int64(uint64(b[0])<<56|uint64(b[1])<<48|uint64(b[2])<<40|uint64(b[3])<<32|uint64(b[4])<<24|uint64(b[5])<<16|uint64(b[6])<<8|uint64(b[7])) & (1<<53 - 1)
	if n == 0 {
		n = 1
	}
	return n
}

func (g *grader) runCheck(ctx context.Context, ch check, retention time.Duration) {
	s := newScenario(g, ctx, ch.name)
	res := CheckResult{Name: ch.name, Title: ch.title}
	began := time.Now()
	defer func() { g.rep.Checks[len(g.rep.Checks)-1].ElapsedMS = time.Since(began).Milliseconds() }()
	if err := ch.run(s); err != nil {
		res.Error = err.Error()
		res.Notes = len(s.notes)
		res.settle()
		g.rep.Checks = append(g.rep.Checks, res)
		g.rep.Notes = append(g.rep.Notes, s.notes...)
		return
	}
	fails, err := s.judge(retention)
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
	res.Notes = len(s.notes)
	res.settle()
	g.rep.Checks = append(g.rep.Checks, res)
	g.rep.Failures = append(g.rep.Failures, fails...)
	g.rep.Notes = append(g.rep.Notes, s.notes...)
}

// settle sets the check's verdict from what it found.
func (c *CheckResult) settle() {
	switch {
	case len(c.Broken) > 0 || c.Error != "":
		c.Verdict = CheckFail
	case c.Notes > 0:
		c.Verdict = CheckWarn
	default:
		c.Verdict = CheckOK
	}
	c.OK = c.Verdict == CheckOK
}

// DefaultDayIntents is the size of the day the grader replays at the end
// when Options.Day is zero.
const DefaultDayIntents = 120

// DayParams returns the grader's day of the given number of intents: eight
// customers, with more tellers' corrections and counter-made keys than the
// lab's default day, so a small day still holds every kind of trouble.
func DayParams(intents int) lab.DayParams {
	p := lab.DefaultDayParams()
	p.Customers, p.Intents = 8, intents
	p.TellerRate, p.SequenceKeyRate = 0.03, 0.3
	return p
}

func (g *grader) runDay(ctx context.Context, o Options, of int) {
	p := o.Day
	if p.Customers == 0 && p.Intents == 0 {
		p = DayParams(DefaultDayIntents)
	}
	p.Seed = o.Seed
	d := lab.GenerateDay(p).WithPrefix(g.run + "day-")
	res := CheckResult{Name: "day", Title: fmt.Sprintf("a day of %d intents and their retries replays with zero duplicates, and every wish is paid", p.Intents)}
	began := time.Now()
	defer func() { g.rep.Checks[len(g.rep.Checks)-1].ElapsedMS = time.Since(began).Milliseconds() }()
	do := DayOptions{Concurrency: o.Concurrency, Timeout: o.Timeout}
	if o.Progress != nil {
		do.Progress = func(done, total int) { o.Progress(Progress{Check: "day", N: of, Of: of, Done: done, Total: total}) }
	}
	run, err := ReplayDayHTTP(ctx, d, g.c.Base(), do)
	if err != nil {
		res.Error = err.Error()
		res.settle()
		g.rep.Checks = append(g.rep.Checks, res)
		return
	}
	h := run.Tally.History
	refused := foreignRefusals(h)
	sum := DaySummary{Summary: run.Tally.Report.Summary, Statuses: run.Tally.Statuses,
		ForeignKeyRefusals: len(refused), Conflicts409WithoutRetryAfter: run.NoRetryAfter}
	for _, in := range h.Intents {
		if h.TransfersPerIntent[in.ID] == 0 && len(sum.UnpaidIntents) < 10 {
			sum.UnpaidIntents = append(sum.UnpaidIntents, in.ID)
		}
	}
	g.rep.Day = &sum
	lanes := func(idx []int) []string {
		var out []string
		for _, i := range idx {
			out = append(out, d.Attempts[i].Lane)
		}
		return out
	}
	tm := timing{sent: make([]time.Time, len(h.Attempts)), answered: run.Answered}
	for i, a := range h.Attempts {
		tm.sent[i] = a.SentAt
	}
	var notes []Note
	for _, rr := range run.Tally.Report.Rules {
		if rr.OK || rr.Rule == lab.RuleRetention {
			continue // rule 7 is judged once, on the published retention
		}
		res.Broken = append(res.Broken, rr.Rule.Name)
		for _, v := range rr.Violations[:min(2, len(rr.Violations))] {
			f := Failure{Check: "day", Rule: rr.Rule.Name, RuleN: rr.Rule.N, Message: v.Message, Lanes: v.Lanes, Curl: dayCurl(g.c.Base(), d, run, v.Attempts)}
			diagnose(&f, "day", h.Attempts, v.Attempts, tm)
			g.rep.Failures = append(g.rep.Failures, f)
		}
	}
	// A wish refused because another customer had used its key is never
	// paid: the checker sees no rule broken (nothing moved twice), but
	// another customer's key decided this customer's request (rule 5).
	if len(refused) > 0 {
		if !slices.Contains(res.Broken, lab.RuleOwnResponses.Name) {
			res.Broken = append(res.Broken, lab.RuleOwnResponses.Name)
		}
		for _, fr := range refused[:min(2, len(refused))] {
			a := h.Attempts[fr.attempt]
			f := Failure{Check: "day", Rule: lab.RuleOwnResponses.Name, RuleN: lab.RuleOwnResponses.N,
				Message: fmt.Sprintf("customer %s's own new transfer under key %q was answered %d %s and never paid, because customer %s had used that key first (%d of the day's wishes %s stopped this way)",
					a.Customer, a.Key, a.Status, snippet(a.Response), h.Attempts[fr.other].Customer, len(refused), plural(len(refused), "was", "were")),
				Lanes: lanes([]int{fr.other, fr.attempt}), Curl: dayCurl(g.c.Base(), d, run, []int{fr.other, fr.attempt})}
			setCause(&f, causeGlobalKeys)
			g.rep.Failures = append(g.rep.Failures, f)
		}
	}
	if run.Errors > 0 {
		notes = append(notes, Note{Check: "day", Message: fmt.Sprintf("%d of the day's requests got no answer (connection refused, reset or timed out) although the grader did not cut them", run.Errors)})
	}
	if run.NoRetryAfter > 0 {
		i := run.FirstNoRetryAfter
		notes = append(notes, Note{Check: "day", Message: fmt.Sprintf("%d of the day's 409 answers came without a valid Retry-After header (first: %s); the contract says 409 with Retry-After: 1, so a client knows when to come back",
			run.NoRetryAfter, d.Attempts[i].Lane), Curl: dayCurl(g.c.Base(), d, run, []int{i})})
	}
	if unpaid := sum.Unpaid - len(refused); unpaid > 0 && len(res.Broken) == 0 {
		notes = append(notes, Note{Check: "day", Message: fmt.Sprintf("%d of the day's intents were never paid (among them %s); every account opens with enough money, so each wish should get its transfer (answers by status: %s)",
			unpaid, strings.Join(sum.UnpaidIntents[:min(3, len(sum.UnpaidIntents))], ", "), lab.StatusList(sum.Statuses))})
	}
	res.Notes = len(notes)
	g.rep.Notes = append(g.rep.Notes, notes...)
	res.settle()
	g.rep.Checks = append(g.rep.Checks, res)
}

// foreignRefusal is a wish never paid whose request was refused after
// another customer had used its key string.
type foreignRefusal struct{ attempt, other int }

// foreignRefusals finds, in a history, the intents never paid and never
// told success whose requests were refused (any status that is neither a
// success nor a business answer) under a key string another customer had
// used before: one refusal per intent, the first. A refusal of a request
// that differs from the customer's own earlier one under the key (a
// teller's correction) is the customer's own 422, not another's doing.
func foreignRefusals(h lab.History) []foreignRefusal {
	told := map[string]bool{} // intents answered with a success at least once
	for _, a := range h.Attempts {
		if a.Delivered && success(a.Status) {
			told[a.Intent] = true
		}
	}
	firstUse := map[string]int{}       // key string → its first attempt
	ownFirst := map[[2]string][]byte{} // (customer, key) → the body of the customer's first attempt
	done := map[string]bool{}
	var out []foreignRefusal
	for i, a := range h.Attempts {
		if a.Key == "" {
			continue
		}
		own := [2]string{a.Customer, a.Key}
		body, usedOwn := ownFirst[own]
		if !usedOwn {
			ownFirst[own] = a.Body
		}
		j, used := firstUse[a.Key]
		if !used {
			firstUse[a.Key] = i
			continue
		}
		if done[a.Intent] || told[a.Intent] || h.TransfersPerIntent[a.Intent] > 0 || h.Attempts[j].Customer == a.Customer ||
			!a.Delivered || !lab.Refusal(a.Status) || usedOwn && !sameTransfer(body, a.Body) {
			continue
		}
		done[a.Intent] = true
		out = append(out, foreignRefusal{attempt: i, other: j})
	}
	return out
}

// sameTransfer reports whether two transfer bodies ask for the same
// transfer, however they are written.
func sameTransfer(a, b []byte) bool {
	type transfer struct {
		From   string      `json:"from"`
		To     string      `json:"to"`
		Amount json.Number `json:"amount"`
	}
	var x, y transfer
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && x == y
}

// withFirstUses returns the attempts (indexes, in order) together with the
// first use of each one's key, when that came earlier: a request whose key
// someone used before it only misbehaves after that first use, so the
// lines must include it to reproduce the failure.
func withFirstUses(attempts []int, key func(int) string) []int {
	out := append([]int(nil), attempts...)
	shown := map[int]bool{}
	for _, i := range out {
		shown[i] = true
	}
	for _, i := range attempts {
		k := key(i)
		if k == "" {
			continue
		}
		for j := 0; j < i; j++ {
			if key(j) == k {
				if !shown[j] {
					shown[j] = true
					out = append(out, j)
				}
				break
			}
		}
	}
	sort.Ints(out)
	return out
}

// dayCurl shows a day's violation: the accounts its attempts touch, the
// attempts, then the balances.
func dayCurl(base string, d lab.Day, run DayRun, idx []int) []string {
	if len(idx) == 0 {
		return nil
	}
	idx = withFirstUses(idx, func(i int) string { return d.Attempts[i].Key })
	opening := d.StartBalances()
	var ids, lines []string
	seen := map[string]bool{}
	for _, i := range idx {
		for _, id := range []string{d.Attempts[i].From, d.Attempts[i].To} {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
				lines = append(lines, Curl(base, putRequest(id, opening[id])))
			}
		}
	}
	for _, i := range idx {
		if d.Attempts[i].Overlaps != "" {
			lines = append(lines, "# the next request was sent while "+d.Attempts[i].Overlaps+" was still being processed")
		}
		if run.Requests[i].Cut {
			lines = append(lines, "# the grader cut the next connection as its answer arrived, unread ("+d.Attempts[i].Loss+")")
		}
		lines = append(lines, Curl(base, run.Requests[i]))
	}
	for _, id := range ids {
		lines = append(lines, Curl(base, Request{Method: "GET", Path: "/accounts/" + id}))
	}
	return lines
}

func putRequest(id string, balance int64) Request {
	return Request{Method: "PUT", Path: "/accounts/" + id, Header: [][2]string{{"Content-Type", "application/json"}},
		Body: `{"balance":` + strconv.FormatInt(balance, 10) + `}`}
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
		setCause(&f, causeShortRetention)
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
	for _, r := range lab.Rules {
		v := RuleVerdict{N: r.N, Name: r.Name, Title: r.Title, Verdict: Holds}
		switch {
		case broken[r.Name]:
			v.Verdict, v.Fix = Broken, Fixes[r.Name]
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
			v.Verdict, v.Fix = Unknown, Fixes[r.Name]
		}
		g.rep.Rules = append(g.rep.Rules, v)
	}
	for _, c := range g.rep.Checks {
		if c.Verdict != CheckOK {
			g.rep.OK = false
		}
	}
}
