package grade

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"idemlab/lab"
)

// RetryHorizon is how long the grader's clients (and the day's) keep
// retrying; a published retention shorter than this breaks rule 7.
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
	// Progress, when set, is told the name of each check as it starts.
	Progress func(check string)
}

// Verdicts of a rule.
const (
	Holds   = "holds"
	Broken  = "broken"
	Unknown = "unknown"
)

// Report is a grading run's verdict, for people (WriteText) and machines
// (JSON).
type Report struct {
	Target string `json:"target"`
	Seed   int64  `json:"seed"`
	Run    string `json:"run"`
	// RetentionSeconds is what the endpoint publishes, nil when nothing.
	RetentionSeconds    *int64        `json:"retention_seconds"`
	RetryHorizonSeconds int64         `json:"retry_horizon_seconds"`
	OK                  bool          `json:"ok"`
	Rules               []RuleVerdict `json:"rules"`
	Checks              []CheckResult `json:"checks"`
	Failures            []Failure     `json:"failures"`
	Notes               []Note        `json:"notes"`
	Day                 *lab.Summary  `json:"day,omitempty"`
	ElapsedMS           int64         `json:"elapsed_ms"`
}

// RuleVerdict is one rule's verdict over the whole run.
type RuleVerdict struct {
	N       int    `json:"n"`
	Name    string `json:"name"`
	Title   string `json:"title"`
	Verdict string `json:"verdict"`
	// Fix says what to change when the rule is broken or unknown.
	Fix string `json:"fix,omitempty"`
}

// CheckResult is one check's outcome.
type CheckResult struct {
	Name   string   `json:"name"`
	Title  string   `json:"title"`
	OK     bool     `json:"ok"`
	Broken []string `json:"broken,omitempty"`
	// Error is set when the check could not run (the endpoint refused to
	// open an account, or could not be reached).
	Error     string `json:"error,omitempty"`
	ElapsedMS int64  `json:"elapsed_ms"`
}

// Failure is one broken rule, shown by the shortest request sequence the
// grader found.
type Failure struct {
	Check   string   `json:"check"`
	Rule    string   `json:"rule"`
	RuleN   int      `json:"rule_n"`
	Message string   `json:"message"`
	Lanes   []string `json:"lanes,omitempty"`
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

// Fixes say, per rule, what a student's endpoint must do.
var Fixes = map[string]string{
	lab.RuleOneTransfer.Name:   "claim the key before paying with one INSERT into a table whose primary key is (customer, endpoint, key), let the constraint error be the verdict, and keep an in_progress state so a simultaneous retry gets 409",
	lab.RuleNoSilentWrong.Name: "store a fingerprint of the request (SHA-256 of the canonical JSON body) with the key; a different request under a used key gets 422 and moves nothing",
	lab.RuleByteReplay.Name:    "store the first answer (status, headers, body) with the key and send those bytes again on every retry, with Idempotent-Replayed: true; compare canonical JSON (RFC 8785), not raw bytes, so reordered fields are the same request",
	lab.RuleNothingLost.Name:   "never answer success for a key whose transfer does not exist: complete the key in the same transaction as the transfer",
	lab.RuleOwnResponses.Name:  "scope keys by customer: the key table's primary key is (customer, endpoint, key), so one customer's key never meets another's",
	lab.RuleConservation.Name:  "debit and credit in one transaction; never create or destroy money",
	lab.RuleRetention.Name:     "keep keys longer than clients retry (the lab's retry for up to an hour) and publish it: GET {base} answers {\"retention_seconds\": N}",
}

// check is one named scenario.
type check struct {
	name, title string
	run         func(s *scenario) error
}

var checks = []check{
	{"retry", "a retry after the answer arrived gets that answer again, byte for byte", checkRetry},
	{"cut", "a retry after a cut connection gets the answer the client never read, and no second transfer", checkCut},
	{"reordered", "the same request with its fields reordered and re-spaced is a retry, not a new request", checkReordered},
	{"correction", "a corrected amount under a used key gets 422 and moves nothing", checkCorrection},
	{"missing-key", "a transfer without Idempotency-Key gets 400 and moves nothing", checkMissingKey},
	{"malformed-keys", "keys that are not an RFC 8941 string of 1 to 255 printable characters get 400", checkMalformedKeys},
	{"other-customer", "another customer's key is that customer's alone", checkOtherCustomer},
	{"together", "identical retries that arrive at the same moment make one transfer, then a retry gets the first answer", checkTogether},
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
	g := &grader{c: c, run: runPrefix(), r: mrand.New(mrand.NewPCG(uint64(o.Seed), 0x9a7e)),
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
	for _, ch := range checks {
		if ctx.Err() != nil {
			return Report{}, ctx.Err()
		}
		if o.Progress != nil {
			o.Progress(ch.name)
		}
		g.runCheck(ctx, ch, retention)
	}
	if o.Progress != nil {
		o.Progress("day")
	}
	g.runDay(ctx, o)
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

func runPrefix() string {
	var b [3]byte
	rand.Read(b[:])
	return "g" + hex.EncodeToString(b[:]) + "-"
}

func (g *grader) runCheck(ctx context.Context, ch check, retention time.Duration) {
	s := &scenario{g: g, ctx: ctx, name: ch.name, start: map[string]int64{}, together: map[int]int{}}
	res := CheckResult{Name: ch.name, Title: ch.title}
	began := time.Now()
	defer func() { g.rep.Checks[len(g.rep.Checks)-1].ElapsedMS = time.Since(began).Milliseconds() }()
	if err := ch.run(s); err != nil {
		res.Error = err.Error()
		g.rep.Checks = append(g.rep.Checks, res)
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
	res.OK = len(res.Broken) == 0 && res.Error == ""
	g.rep.Checks = append(g.rep.Checks, res)
	g.rep.Failures = append(g.rep.Failures, fails...)
	g.rep.Notes = append(g.rep.Notes, s.notes...)
}

func (g *grader) runDay(ctx context.Context, o Options) {
	p := o.Day
	if p.Customers == 0 && p.Intents == 0 {
		p = lab.DefaultDayParams()
		p.Customers, p.Intents = 8, 120
		p.TellerRate, p.SequenceKeyRate = 0.03, 0.3
	}
	p.Seed = o.Seed
	d := lab.GenerateDay(p).WithPrefix(g.run + "day-")
	res := CheckResult{Name: "day", Title: fmt.Sprintf("a day of %d intents and their retries replays with zero duplicates", p.Intents)}
	began := time.Now()
	defer func() { g.rep.Checks[len(g.rep.Checks)-1].ElapsedMS = time.Since(began).Milliseconds() }()
	run, err := ReplayDayHTTP(ctx, d, g.c.Base(), DayOptions{Concurrency: o.Concurrency, Timeout: o.Timeout})
	if err != nil {
		res.Error = err.Error()
		g.rep.Checks = append(g.rep.Checks, res)
		return
	}
	sum := run.Tally.Report.Summary
	g.rep.Day = &sum
	for _, rr := range run.Tally.Report.Rules {
		if rr.OK || rr.Rule == lab.RuleRetention {
			continue // rule 7 is judged once, on the published retention
		}
		res.Broken = append(res.Broken, rr.Rule.Name)
		for _, v := range rr.Violations[:min(2, len(rr.Violations))] {
			g.rep.Failures = append(g.rep.Failures, Failure{Check: "day", Rule: rr.Rule.Name, RuleN: rr.Rule.N,
				Message: v.Message, Lanes: v.Lanes, Curl: dayCurl(g.c.Base(), d, run, v.Attempts)})
		}
	}
	if run.Errors > 0 {
		g.rep.Notes = append(g.rep.Notes, Note{Check: "day", Message: fmt.Sprintf("%d of the day's requests got no answer (connection refused, reset or timed out) although the grader did not cut them", run.Errors)})
	}
	res.OK = len(res.Broken) == 0
	g.rep.Checks = append(g.rep.Checks, res)
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

// verdicts folds the failures into one verdict per rule.
func (g *grader) verdicts(known bool, retention time.Duration) {
	broken := map[string]bool{}
	for _, f := range g.rep.Failures {
		broken[f.Rule] = true
	}
	if !known {
		g.rep.Notes = append(g.rep.Notes, Note{Check: "retention", Message: "GET " + g.c.Base() +
			" publishes no retention_seconds, so rule 7 cannot be judged; publish {\"retention_seconds\": N}"})
	} else if retention > 0 && retention < RetryHorizon {
		broken[lab.RuleRetention.Name] = true
		g.rep.Failures = append(g.rep.Failures, Failure{Check: "retention", Rule: lab.RuleRetention.Name, RuleN: lab.RuleRetention.N,
			Message: fmt.Sprintf("keys are kept %s, but clients retry for up to %s: a late retry becomes a second transfer", retention, RetryHorizon),
			Curl:    []string{Curl(g.c.Base(), Request{Method: "GET"})}})
	}
	g.rep.OK = known
	for _, r := range lab.Rules {
		v := RuleVerdict{N: r.N, Name: r.Name, Title: r.Title, Verdict: Holds}
		switch {
		case broken[r.Name]:
			v.Verdict, v.Fix = Broken, Fixes[r.Name]
			g.rep.OK = false
		case r == lab.RuleRetention && !known:
			v.Verdict, v.Fix = Unknown, Fixes[r.Name]
		}
		g.rep.Rules = append(g.rep.Rules, v)
	}
	for _, c := range g.rep.Checks {
		if c.Error != "" {
			g.rep.OK = false
		}
	}
	sort.SliceStable(g.rep.Failures, func(i, j int) bool { return g.rep.Failures[i].RuleN < g.rep.Failures[j].RuleN })
}

// scenario is one check's accounts, intents and requests.
type scenario struct {
	g        *grader
	ctx      context.Context
	name     string
	start    map[string]int64
	accounts []string
	intents  []lab.Intent
	attempts []lab.Attempt
	reqs     []Request
	replies  []Reply
	together map[int]int // attempt → its group of simultaneous sends (from 1)
	groups   int
	extra    []Failure // the grader's own observations
	notes    []Note
}

func (s *scenario) id(name string) string { return s.g.run + s.name + "-" + name }

// account opens an account with a balance.
// payerAndShop opens the two accounts most checks need: a payer with
// 5,000,000 won and an empty shop.
func (s *scenario) payerAndShop() (payer, shop string, err error) {
	if payer, err = s.account("payer", 5_000_000); err != nil {
		return "", "", err
	}
	shop, err = s.account("shop", 0)
	return payer, shop, err
}

func (s *scenario) account(name string, balance int64) (string, error) {
	id := s.id(name)
	if _, err := s.g.c.PutAccount(s.ctx, id, balance); err != nil {
		return "", fmt.Errorf("open account: %w", err)
	}
	s.start[id] = balance
	s.accounts = append(s.accounts, id)
	return id, nil
}

// amount draws an amount in whole hundreds of won.
func (s *scenario) amount() int64 { return (100 + s.g.r.Int64N(4900)) * 100 }

func (s *scenario) key() string {
	var b [16]byte
	for i := range b {
		b[i] = byte(s.g.r.Uint32())
	}
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%s%x-%x-%x-%x-%x", s.g.run, b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (s *scenario) customer(name string) string { return s.g.run + name }

func (s *scenario) intent(customer, from, to string, amount int64) lab.Intent {
	in := lab.Intent{ID: fmt.Sprintf("%s.i%d", s.name, len(s.intents)+1), Customer: customer, From: from, To: to, Amount: amount}
	s.intents = append(s.intents, in)
	return in
}

// post describes a transfer request. keyHeader holds the raw
// Idempotency-Key header lines (none: no header); customer "" sends no
// X-Customer-ID.
func post(customer string, keyHeader []string, body string) Request {
	r := Request{Method: "POST", Path: "/transfers", Header: [][2]string{{"Content-Type", "application/json"}}, Body: body}
	if customer != "" {
		r.Header = append(r.Header, [2]string{"X-Customer-ID", customer})
	}
	for _, k := range keyHeader {
		r.Header = append(r.Header, [2]string{"Idempotency-Key", k})
	}
	return r
}

func keyed(customer, key, body string) Request {
	return post(customer, []string{lab.QuoteKey(key)}, body)
}

// send sends one attempt of an intent and records it.
func (s *scenario) send(in lab.Intent, r Request) int {
	return s.record(in, r, s.g.c.Do(s.ctx, r))
}

// sendTogether sends attempts at the same moment; ins[i] is the intent
// rs[i] serves.
func (s *scenario) sendTogether(ins []lab.Intent, rs []Request) []int {
	replies := s.g.c.Together(s.ctx, rs)
	s.groups++
	out := make([]int, len(rs))
	for i := range rs {
		out[i] = s.record(ins[i], rs[i], replies[i])
		s.together[out[i]] = s.groups
	}
	return out
}

func (s *scenario) record(in lab.Intent, r Request, rep Reply) int {
	i := len(s.attempts)
	key := ""
	for _, h := range r.Header {
		if h[0] == "Idempotency-Key" {
			if k, err := strconv.Unquote(h[1]); err == nil && key == "" {
				key = k
			}
		}
	}
	customer := ""
	for _, h := range r.Header {
		if h[0] == "X-Customer-ID" {
			customer = h[1]
		}
	}
	a := lab.Attempt{Lane: fmt.Sprintf("%s.%d", s.name, i+1), Intent: in.ID, Customer: customer, Key: key, Body: []byte(r.Body),
		Status: rep.Status, Response: rep.Body, Replayed: rep.Replayed(), Delivered: !r.Cut && rep.Err == nil, SentAt: time.Now()}
	if rep.Err != nil {
		a.Status, a.Response = 0, nil
		if !r.Cut {
			s.notes = append(s.notes, Note{Check: s.name, Message: fmt.Sprintf("%s got no answer: %v", a.Lane, rep.Err), Curl: []string{Curl(s.g.c.Base(), r)}})
		}
	}
	s.attempts = append(s.attempts, a)
	s.reqs = append(s.reqs, r)
	s.replies = append(s.replies, rep)
	return i
}

// fail records a broken rule the grader saw itself.
func (s *scenario) fail(rule lab.Rule, msg string, attempts ...int) {
	f := Failure{Check: s.name, Rule: rule.Name, RuleN: rule.N, Message: msg, Curl: s.curl(attempts)}
	for _, i := range attempts {
		f.Lanes = append(f.Lanes, s.attempts[i].Lane)
	}
	s.extra = append(s.extra, f)
}

// note records a departure from the contract.
func (s *scenario) note(msg string, attempts ...int) {
	s.notes = append(s.notes, Note{Check: s.name, Message: msg, Curl: s.curl(attempts)})
}

// curl renders the scenario's accounts and the given attempts (every
// attempt when none is given) as paste-able lines.
func (s *scenario) curl(attempts []int) []string {
	base := s.g.c.Base()
	if len(attempts) == 0 {
		for i := range s.attempts {
			attempts = append(attempts, i)
		}
	}
	attempts = withFirstUses(attempts, func(i int) string { return s.attempts[i].Key })
	// Only the accounts the shown requests name, so the sequence stays short.
	var accounts []string
	for _, id := range s.accounts {
		for _, i := range attempts {
			if strings.Contains(s.reqs[i].Body, strconv.Quote(id)) {
				accounts = append(accounts, id)
				break
			}
		}
	}
	var lines []string
	for _, id := range accounts {
		lines = append(lines, Curl(base, putRequest(id, s.start[id])))
	}
	group := 0
	for _, i := range attempts {
		if g := s.together[i]; g != 0 && g != group {
			n := 0
			for _, j := range attempts {
				if s.together[j] == g {
					n++
				}
			}
			lines = append(lines, fmt.Sprintf("# the next %d requests arrived at the same moment: end each line with & and run them together", n))
			group = g
		}
		if s.reqs[i].Cut {
			lines = append(lines, "# the grader cut the next connection as its answer arrived, without reading it")
		}
		line := Curl(base, s.reqs[i])
		if s.together[i] != 0 {
			line += " &"
		}
		lines = append(lines, line)
	}
	if group != 0 {
		lines = append(lines, "wait")
	}
	for _, id := range accounts {
		lines = append(lines, Curl(base, Request{Method: "GET", Path: "/accounts/" + id}))
	}
	return lines
}

// judge reads every account back, counts each intent's transfers from the
// payees' balances (lab.InferTransfers) and runs the checker over the
// scenario.
func (s *scenario) judge(retention time.Duration) ([]Failure, error) {
	end := map[string]int64{}
	for _, id := range s.accounts {
		b, err := s.g.c.GetBalance(s.ctx, id)
		if err != nil {
			return s.extra, fmt.Errorf("read balances: %w", err)
		}
		end[id] = b
	}
	h := lab.History{Intents: s.intents, Attempts: s.attempts, StartBalances: s.start, EndBalances: end,
		RetryHorizon: RetryHorizon}
	h.TransfersPerIntent = lab.InferTransfers(h.Intents, h.Attempts, h.StartBalances, h.EndBalances)
	s.crossCheck()
	var out []Failure
	for _, rr := range lab.Check(h).Rules {
		for _, v := range rr.Violations {
			out = append(out, Failure{Check: s.name, Rule: rr.Rule.Name, RuleN: rr.Rule.N, Message: v.Message, Lanes: v.Lanes, Curl: s.curl(v.Attempts)})
		}
	}
	return append(out, s.extra...), nil
}

// crossCheck compares every transfer the endpoint answered with the
// request it answers: a transfer between other accounts is someone else's
// answer. (The balances are cross-checked by the checker itself: a
// success whose payee never received the money breaks rule 4, money that
// appears or vanishes breaks rule 6.)
func (s *scenario) crossCheck() {
	for i, a := range s.attempts {
		if !a.Delivered || a.Status < 200 || a.Status > 299 || a.Status == 200 && !strings.Contains(string(a.Response), "transfer_id") {
			continue
		}
		var got struct {
			From   string `json:"from"`
			To     string `json:"to"`
			Amount int64  `json:"amount"`
		}
		if json.Unmarshal(a.Response, &got) != nil {
			s.note(fmt.Sprintf("%s was answered %d with a body that is not the transfer JSON: %s", a.Lane, a.Status, snippet(a.Response)), i)
			continue
		}
		var sent struct {
			From   string `json:"from"`
			To     string `json:"to"`
			Amount int64  `json:"amount"`
		}
		json.Unmarshal(a.Body, &sent)
		if got.From != sent.From || got.To != sent.To {
			s.fail(lab.RuleOwnResponses, fmt.Sprintf("%s asked to send %d won from %s to %s and was answered with a transfer from %s to %s: someone else's answer",
				a.Lane, sent.Amount, sent.From, sent.To, got.From, got.To), i)
		}
	}
}

// Each check below is a short story against fresh accounts; the checker
// judges it afterwards, and the check adds what only it can see.

func checkRetry(s *scenario) error {
	payer, shop, err := s.payerAndShop()
	if err != nil {
		return err
	}
	cafe, err := s.account("cafe", 0)
	if err != nil {
		return err
	}
	cust := s.customer("shop-1")
	in := s.intent(cust, payer, shop, s.amount())
	k := s.key()
	body := lab.RenderBody(lab.StyleCompact, payer, shop, in.Amount)
	first := s.send(in, keyed(cust, k, body))
	// Another transfer from the same payer in between, so that a replay
	// rebuilt from today's ledger shows today's balance.
	other := s.intent(cust, payer, cafe, s.amount())
	s.send(other, keyed(cust, s.key(), lab.RenderBody(lab.StyleCompact, payer, cafe, other.Amount)))
	time.Sleep(5 * time.Millisecond) // and a later time
	retry := s.send(in, keyed(cust, k, body))
	a, b := s.attempts[first], s.attempts[retry]
	if success(a.Status) && a.Status == b.Status && string(a.Response) == string(b.Response) && !s.replies[retry].Replayed() {
		s.note("the replay is right but lacks the header Idempotent-Replayed: true", first, retry)
	}
	return nil
}

func checkCut(s *scenario) error {
	payer, shop, err := s.payerAndShop()
	if err != nil {
		return err
	}
	cust := s.customer("shop-1")
	in := s.intent(cust, payer, shop, s.amount())
	k := s.key()
	r := keyed(cust, k, lab.RenderBody(lab.StyleCompact, payer, shop, in.Amount))
	cut := r
	cut.Cut = true
	s.send(in, cut)
	s.send(in, r)
	s.send(in, r)
	return nil
}

func checkReordered(s *scenario) error {
	payer, shop, err := s.payerAndShop()
	if err != nil {
		return err
	}
	cust := s.customer("shop-1")
	in := s.intent(cust, payer, shop, s.amount())
	k := s.key()
	first := s.send(in, keyed(cust, k, lab.RenderBody(lab.StyleCompact, payer, shop, in.Amount)))
	for _, style := range []string{lab.StyleReordered, lab.StylePretty} {
		i := s.send(in, keyed(cust, k, lab.RenderBody(style, payer, shop, in.Amount)))
		if a := s.attempts[i]; a.Status == 422 && success(s.attempts[first].Status) {
			s.fail(lab.RuleByteReplay, fmt.Sprintf("a retry of the same request, written %s, was refused 422 instead of getting the first answer: the fingerprint compares raw bytes, so a client library that orders or spaces JSON differently is told it changed the request",
				style), first, i)
		}
	}
	return nil
}

func checkCorrection(s *scenario) error {
	payer, shop, err := s.payerAndShop()
	if err != nil {
		return err
	}
	cust := s.customer("teller-1")
	in := s.intent(cust, payer, shop, s.amount())
	k := s.key()
	first := s.send(in, keyed(cust, k, lab.RenderBody(lab.StyleCompact, payer, shop, in.Amount)))
	// The teller corrects the amount on the same screen, which keeps the
	// key. The correction ends in tens of won, so the balances tell which
	// amount went out.
	corrected := in.Amount + 100_030
	i := s.send(in, keyed(cust, k, lab.RenderBody(lab.StyleCompact, payer, shop, corrected)))
	if a := s.attempts[i]; a.Delivered && a.Status != 422 && !success(a.Status) {
		s.note(fmt.Sprintf("a different request under a used key was answered %d; the contract says 422", a.Status), first, i)
	}
	return nil
}

func checkMissingKey(s *scenario) error {
	payer, shop, err := s.payerAndShop()
	if err != nil {
		return err
	}
	cust := s.customer("shop-1")
	in := s.intent(cust, payer, shop, s.amount())
	body := lab.RenderBody(lab.StyleCompact, payer, shop, in.Amount)
	a1 := s.send(in, post(cust, nil, body))
	a2 := s.send(in, post(cust, nil, body)) // the client retries, still without a key
	for _, i := range []int{a1, a2} {
		if a := s.attempts[i]; a.Delivered && a.Status != 400 {
			s.note(fmt.Sprintf("a transfer without Idempotency-Key was answered %d; the contract says 400, because without a key no retry can be safe", a.Status), i)
			break
		}
	}
	noCustomer := s.intent("", payer, shop, s.amount())
	i := s.send(noCustomer, post("", []string{lab.QuoteKey(s.key())}, lab.RenderBody(lab.StyleCompact, payer, shop, noCustomer.Amount)))
	if a := s.attempts[i]; a.Delivered && a.Status != 401 {
		s.note(fmt.Sprintf("a transfer without X-Customer-ID was answered %d; the contract says 401", a.Status), i)
	}
	return nil
}

func checkMalformedKeys(s *scenario) error {
	payer, err := s.account("payer", 5_000_000)
	if err != nil {
		return err
	}
	cust := s.customer("shop-1")
	bad := []struct {
		name, why string
		header    []string
	}{
		{"token", "a bare token, not in double quotes", []string{s.key()}},
		{"empty", "an empty string", []string{`""`}},
		{"long", "256 characters, over the limit of 255", []string{`"` + strings.Repeat("k", 256) + `"`}},
		{"non-ascii", "characters outside printable ASCII", []string{"\"cl\u00e9-" + s.key() + "\""}},
		{"list", "two keys on one line", []string{lab.QuoteKey(s.key()) + ", " + lab.QuoteKey(s.key())}},
		{"two-lines", "two Idempotency-Key header lines", []string{lab.QuoteKey(s.key()), lab.QuoteKey(s.key())}},
		{"integer", "a number, not a string", []string{"42"}},
		{"parameter", "a string with a parameter", []string{lab.QuoteKey(s.key()) + ";v=1"}},
	}
	for _, b := range bad {
		shop, err := s.account("shop-"+b.name, 0)
		if err != nil {
			return err
		}
		in := s.intent(cust, payer, shop, s.amount())
		i := s.send(in, post(cust, b.header, lab.RenderBody(lab.StyleCompact, payer, shop, in.Amount)))
		if a := s.attempts[i]; a.Delivered && a.Status != 400 {
			s.note(fmt.Sprintf("a key that is %s was answered %d; the contract says 400 (RFC 8941 string of 1 to 255 printable ASCII characters)", b.why, a.Status), i)
		}
	}
	return nil
}

func checkOtherCustomer(s *scenario) error {
	payerA, err := s.account("payer-a", 5_000_000)
	if err != nil {
		return err
	}
	shopA, err := s.account("shop-a", 0)
	if err != nil {
		return err
	}
	payerB, err := s.account("payer-b", 5_000_000)
	if err != nil {
		return err
	}
	shopB, err := s.account("shop-b", 0)
	if err != nil {
		return err
	}
	ca, cb, cc := s.customer("shop-a"), s.customer("shop-b"), s.customer("shop-c")
	// Two clients that number their keys the same way: the same key string,
	// each customer's own request.
	k := s.g.run + "order-1"
	inA := s.intent(ca, payerA, shopA, s.amount())
	first := s.send(inA, keyed(ca, k, lab.RenderBody(lab.StyleCompact, payerA, shopA, inA.Amount)))
	inB := s.intent(cb, payerB, shopB, s.amount())
	i := s.send(inB, keyed(cb, k, lab.RenderBody(lab.StyleCompact, payerB, shopB, inB.Amount)))
	if a := s.attempts[i]; a.Status == 422 {
		s.fail(lab.RuleOwnResponses, fmt.Sprintf("customer %s's first request under key %q was refused 422 because customer %s had used that key: keys are global, so one customer's answer reached another", cb, k, ca), first, i)
	}
	// A third customer sends exactly the first customer's body under the
	// same key: its own new transfer, never the first customer's answer.
	inC := s.intent(cc, payerA, shopA, inA.Amount)
	j := s.send(inC, keyed(cc, k, lab.RenderBody(lab.StyleCompact, payerA, shopA, inA.Amount)))
	if a := s.attempts[j]; a.Status == 422 {
		s.fail(lab.RuleOwnResponses, fmt.Sprintf("customer %s's first request under key %q was refused 422 because customer %s had used that key", cc, k, ca), first, j)
	}
	return nil
}

func checkTogether(s *scenario) error {
	payer, err := s.account("payer", 50_000_000)
	if err != nil {
		return err
	}
	cust := s.customer("app-1")
	// Each round sends the same request eight times and, in the same
	// instant, a crowd of other transfers from the same app: a busy moment,
	// in which the first of the eight takes longest to finish, so that the
	// others arrive while it is still in progress.
	const rounds, width, crowd = 4, 8, 8
	for round := range rounds {
		shop, err := s.account(fmt.Sprintf("shop-%d", round+1), 0)
		if err != nil {
			return err
		}
		in := s.intent(cust, payer, shop, s.amount())
		r := keyed(cust, s.key(), lab.RenderBody(lab.StyleCompact, payer, shop, in.Amount))
		var ins []lab.Intent
		var rs []Request
		for range width {
			ins, rs = append(ins, in), append(rs, r)
		}
		// The crowd pays one account the same amount, each under its own
		// key: its balance still counts the crowd's transfers.
		other, err := s.account(fmt.Sprintf("crowd-%d", round+1), 0)
		if err != nil {
			return err
		}
		amount := s.amount()
		for range crowd {
			o := s.intent(cust, payer, other, amount)
			ins = append(ins, o)
			rs = append(rs, keyed(cust, s.key(), lab.RenderBody(lab.StyleCompact, payer, other, o.Amount)))
		}
		s.sendTogether(ins, rs)
		// One more, after they all finished: it must get the first answer.
		s.send(in, r)
	}
	return nil
}

func success(status int) bool { return status >= 200 && status < 300 }
