package grade

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"idemlab/lab"
)

// checkRun is one run of a check: the accounts it opened, the intents and
// requests it sent, the answers it recorded and what it noted. The checks
// (checks.go) drive it; judge hands the history to the checker.
type checkRun struct {
	g    *grader
	ctx  context.Context
	name string
	// start is each account's balance as the checker counts it: the
	// opening balance, or the balance a top-up set before any transfer
	// could touch it. opening is what the curl lines open the account
	// with; an account opened later in the story has none.
	start    map[string]int64
	opening  map[string]int64
	accounts []string
	intents  []lab.Intent
	attempts []lab.Attempt
	reqs     []Request
	replies  []Reply
	// sent and answered are when each attempt went out and its answer
	// arrived.
	sent, answered []time.Time
	together       map[int]int // attempt → its group of simultaneous sends (from 1)
	groups         int
	extra          []Failure // the grader's own observations
	notes          []Note
	// interludes are the requests the grader sent between attempts (a
	// top-up, an account opened late), shown in the curl lines in place.
	interludes []interlude
	// afterJudge runs once the transfers per intent are known.
	afterJudge []func(transfers map[string]int)
	// retryAfterNoted is set once a 409 without Retry-After was noted.
	retryAfterNoted bool
}

// interlude is a request the grader sent before attempt `before`.
type interlude struct {
	before  int
	account string
	comment string
	req     Request
}

func newCheckRun(g *grader, ctx context.Context, name string) *checkRun {
	return &checkRun{g: g, ctx: ctx, name: name, start: map[string]int64{}, opening: map[string]int64{}, together: map[int]int{}}
}

func (cr *checkRun) id(name string) string { return cr.g.run + cr.name + "-" + name }

// payerAndShop opens the two accounts most checks need: a payer with
// 5,000,000 won and an empty shop.
func (cr *checkRun) payerAndShop() (payer, shop string, err error) {
	if payer, err = cr.account("payer", 5_000_000); err != nil {
		return "", "", err
	}
	shop, err = cr.account("shop", 0)
	return payer, shop, err
}

// account opens an account with a balance.
func (cr *checkRun) account(name string, balance int64) (string, error) {
	id := cr.id(name)
	if _, err := cr.g.c.PutAccount(cr.ctx, id, balance); err != nil {
		return "", fmt.Errorf("open account: %w", err)
	}
	cr.start[id], cr.opening[id] = balance, balance
	cr.accounts = append(cr.accounts, id)
	return id, nil
}

// setBalance sets an account's balance with PUT between two attempts (a
// top-up, or an account that did not exist until now), and shows it in the
// curl lines at that place. The checker counts the new balance as the
// account's start, so money stays conserved.
func (cr *checkRun) setBalance(id string, balance int64, comment string) error {
	r, err := cr.g.c.PutAccount(cr.ctx, id, balance)
	if err != nil {
		return fmt.Errorf("set balance: %w", err)
	}
	if _, ok := cr.start[id]; !ok {
		cr.accounts = append(cr.accounts, id)
	}
	cr.start[id] = balance
	cr.interludes = append(cr.interludes, interlude{before: len(cr.attempts), account: id, comment: comment, req: r})
	return nil
}

// amount draws an amount in whole hundreds of won.
func (cr *checkRun) amount() int64 { return (100 + cr.g.r.Int64N(4900)) * 100 }

func (cr *checkRun) key() string {
	var b [16]byte
	for i := range b {
		b[i] = byte(cr.g.r.Uint32())
	}
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%s%x-%x-%x-%x-%x", cr.g.run, b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (cr *checkRun) customer(name string) string { return cr.g.run + name }

func (cr *checkRun) intent(customer, from, to string, amount int64) lab.Intent {
	in := lab.Intent{ID: fmt.Sprintf("%s.i%d", cr.name, len(cr.intents)+1), Customer: customer, From: from, To: to, Amount: amount}
	cr.intents = append(cr.intents, in)
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

// keyed describes a transfer request under one well-formed key.
func keyed(customer, key, body string) Request {
	return post(customer, []string{lab.QuoteKey(key)}, body)
}

// intentRequest is the intent's transfer request under key, its body
// written compact.
func intentRequest(in lab.Intent, key string) Request {
	return keyed(in.Customer, key, lab.RenderBody(lab.StyleCompact, in.From, in.To, in.Amount))
}

// send sends one attempt of an intent and records it.
func (cr *checkRun) send(in lab.Intent, r Request) int {
	sent := time.Now()
	k := cr.g.rt.pickRequest(r)
	i := cr.record(in, r, cr.g.cs[k].Do(cr.ctx, r), sent)
	cr.reached(i, k)
	return i
}

// sendTogether sends attempts at the same moment; ins[i] is the intent
// rs[i] serves. They are recorded in the order their answers arrived, so
// that "the first answer" under a key is the answer of the attempt that
// answered first, not of the one written first.
func (cr *checkRun) sendTogether(ins []lab.Intent, rs []Request) []int {
	sent := time.Now()
	ks := cr.g.rt.split(rs)
	cs := make([]*Client, len(rs))
	for i, k := range ks {
		cs[i] = cr.g.cs[k]
	}
	replies := together(cr.ctx, cs, rs)
	cr.groups++
	order := make([]int, len(rs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ra, rb := replies[order[a]], replies[order[b]]
		if (ra.Err == nil) != (rb.Err == nil) {
			return ra.Err == nil
		}
		return ra.At.Before(rb.At)
	})
	out := make([]int, len(rs))
	noted := len(cr.notes)
	for _, i := range order {
		out[i] = cr.record(ins[i], rs[i], replies[i], sent)
		cr.reached(out[i], ks[i])
		cr.together[out[i]] = cr.groups
	}
	// A note made as one of the group was recorded (a 409 without
	// Retry-After) shows the whole group, now that it is known.
	for k := noted; k < len(cr.notes); k++ {
		if n := &cr.notes[k]; len(n.attempts) > 0 {
			n.Curl = cr.curl(cr.withGroups(n.attempts))
		}
	}
	return out
}

func (cr *checkRun) record(in lab.Intent, r Request, rep Reply, sent time.Time) int {
	i := len(cr.attempts)
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
	a := lab.Attempt{Lane: fmt.Sprintf("%s.%d", cr.name, i+1), Intent: in.ID, Customer: customer, Key: key, Body: []byte(r.Body),
		Status: rep.Status, Response: rep.Body, ContentType: rep.Header.Get("Content-Type"), Replayed: rep.Replayed(), Delivered: !r.Cut && rep.Err == nil, SentAt: sent}
	if rep.Err != nil {
		a.Status, a.Response, a.ContentType = 0, nil, ""
		if !r.Cut {
			cr.notes = append(cr.notes, Note{Check: cr.name, Message: fmt.Sprintf("%s got no answer: %v", a.Lane, rep.Err), Curl: []string{Curl(cr.g.c.Base(), r)}})
		}
	}
	cr.attempts = append(cr.attempts, a)
	cr.reqs = append(cr.reqs, r)
	cr.replies = append(cr.replies, rep)
	answered := rep.At
	if answered.IsZero() {
		answered = sent
	}
	cr.sent, cr.answered = append(cr.sent, sent), append(cr.answered, answered)
	if rep.Err == nil && rep.Status == 409 && !validRetryAfter(rep.Header) && !cr.retryAfterNoted {
		cr.retryAfterNoted = true
		cr.note(fmt.Sprintf("%s was answered 409 %s; the contract says 409 with Retry-After: 1, so that a client knows when to come back instead of hammering the endpoint or giving up",
			a.Lane, retryAfterSaid(rep.Header)), i)
	}
	return i
}

// validRetryAfter reports whether h has one Retry-After in a form RFC 9110
// §10.2.3 allows: delay-seconds or an HTTP-date.
func validRetryAfter(h http.Header) bool {
	v := h.Values("Retry-After")
	if len(v) != 1 {
		return false
	}
	t := strings.TrimSpace(v[0])
	if t == "" {
		return false
	}
	if strings.Trim(t, "0123456789") == "" {
		return true
	}
	_, err := http.ParseTime(t)
	return err == nil
}

func retryAfterSaid(h http.Header) string {
	switch v := h.Values("Retry-After"); len(v) {
	case 0:
		return "without a Retry-After header"
	case 1:
		return fmt.Sprintf("with Retry-After: %q, which is neither seconds nor an HTTP date", v[0])
	default:
		return fmt.Sprintf("with %d Retry-After headers", len(v))
	}
}

// fail records a broken rule the grader saw itself, with its cause when
// the check knows it.
func (cr *checkRun) fail(rule lab.Rule, cause string, msg string, attempts ...int) {
	f := Failure{Check: cr.name, Rule: rule.Name, RuleN: rule.N, Message: msg, Curl: cr.curl(attempts)}
	for _, i := range attempts {
		f.Lanes = append(f.Lanes, cr.attempts[i].Lane)
	}
	setCause(&f, cause)
	cr.extra = append(cr.extra, f)
}

// note records a departure from the contract. Its lines send every
// request sent at the same moment as one it names: a 409 owed to a
// request still running is answered only while that one runs, and one
// line alone would be answered 201.
func (cr *checkRun) note(msg string, attempts ...int) {
	cr.notes = append(cr.notes, Note{Check: cr.name, Message: msg, Curl: cr.curl(cr.withGroups(attempts)), attempts: attempts})
}

// withGroups returns the attempts (indexes, in order) with every attempt
// sent at the same moment as one of them.
func (cr *checkRun) withGroups(attempts []int) []int {
	out := append([]int(nil), attempts...)
	in := map[int]bool{}
	for _, i := range out {
		in[i] = true
	}
	for _, i := range attempts {
		g := cr.together[i]
		if g == 0 {
			continue
		}
		for j := range cr.attempts {
			if cr.together[j] == g && !in[j] {
				in[j] = true
				out = append(out, j)
			}
		}
	}
	sort.Ints(out)
	return out
}

// judge reads every account back, counts each intent's transfers from the
// payees' balances (lab.InferTransfers) and runs the checker over the
// run.
func (cr *checkRun) judge(retention time.Duration) ([]Failure, error) {
	end := map[string]int64{}
	for _, id := range cr.accounts {
		b, err := cr.g.c.GetBalance(cr.ctx, id)
		if err != nil {
			return cr.extra, fmt.Errorf("read balances: %w", err)
		}
		end[id] = b
	}
	h := lab.History{Intents: cr.intents, Attempts: cr.attempts, StartBalances: cr.start, EndBalances: end,
		RetryHorizon: RetryHorizon}
	h.TransfersPerIntent = lab.InferTransfers(h.Intents, h.Attempts, h.StartBalances, h.EndBalances)
	cr.crossCheck()
	for _, f := range cr.afterJudge {
		f(h.TransfersPerIntent)
	}
	tm := timing{sent: cr.sent, answered: cr.answered}
	var out []Failure
	for _, rr := range lab.Check(h).Rules {
		for _, v := range rr.Violations {
			f := Failure{Check: cr.name, Rule: rr.Rule.Name, RuleN: rr.Rule.N, Message: v.Message, Lanes: v.Lanes, Curl: cr.curl(v.Attempts)}
			diagnose(&f, cr.name, cr.attempts, v.Attempts, tm)
			out = append(out, f)
		}
	}
	return append(out, cr.extra...), nil
}

// crossCheck compares every transfer the endpoint answered with the
// request it answers: a transfer between other accounts is someone else's
// answer. (The balances are cross-checked by the checker itself: a
// success whose payee never received the money breaks rule 4, money that
// appears or vanishes breaks rule 6.)
func (cr *checkRun) crossCheck() {
	for i, a := range cr.attempts {
		if !a.Delivered || a.Status < 200 || a.Status > 299 || a.Status == 200 && !strings.Contains(string(a.Response), "transfer_id") {
			continue
		}
		var got struct {
			From   string `json:"from"`
			To     string `json:"to"`
			Amount int64  `json:"amount"`
		}
		if json.Unmarshal(a.Response, &got) != nil {
			cr.note(fmt.Sprintf("%s was answered %d with a body that is not the transfer JSON: %s", a.Lane, a.Status, snippet(a.Response)), i)
			continue
		}
		var sent struct {
			From   string `json:"from"`
			To     string `json:"to"`
			Amount int64  `json:"amount"`
		}
		json.Unmarshal(a.Body, &sent)
		if got.From != sent.From || got.To != sent.To {
			cr.fail(lab.RuleOwnResponses, lab.CauseGlobalKeys, fmt.Sprintf("%s asked to send %d won from %s to %s and was answered with a transfer from %s to %s: someone else's answer",
				a.Lane, sent.Amount, sent.From, sent.To, got.From, got.To), i)
		}
	}
}
