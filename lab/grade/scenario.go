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

// scenario is one check's accounts, intents and requests.
type scenario struct {
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

func newScenario(g *grader, ctx context.Context, name string) *scenario {
	return &scenario{g: g, ctx: ctx, name: name, start: map[string]int64{}, opening: map[string]int64{}, together: map[int]int{}}
}

func (s *scenario) id(name string) string { return s.g.run + s.name + "-" + name }

// payerAndShop opens the two accounts most checks need: a payer with
// 5,000,000 won and an empty shop.
func (s *scenario) payerAndShop() (payer, shop string, err error) {
	if payer, err = s.account("payer", 5_000_000); err != nil {
		return "", "", err
	}
	shop, err = s.account("shop", 0)
	return payer, shop, err
}

// account opens an account with a balance.
func (s *scenario) account(name string, balance int64) (string, error) {
	id := s.id(name)
	if _, err := s.g.c.PutAccount(s.ctx, id, balance); err != nil {
		return "", fmt.Errorf("open account: %w", err)
	}
	s.start[id], s.opening[id] = balance, balance
	s.accounts = append(s.accounts, id)
	return id, nil
}

// setBalance sets an account's balance with PUT between two attempts (a
// top-up, or an account that did not exist until now), and shows it in the
// curl lines at that place. The checker counts the new balance as the
// account's start, so money stays conserved.
func (s *scenario) setBalance(id string, balance int64, comment string) error {
	r, err := s.g.c.PutAccount(s.ctx, id, balance)
	if err != nil {
		return fmt.Errorf("set balance: %w", err)
	}
	if _, ok := s.start[id]; !ok {
		s.accounts = append(s.accounts, id)
	}
	s.start[id] = balance
	s.interludes = append(s.interludes, interlude{before: len(s.attempts), account: id, comment: comment, req: r})
	return nil
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
	sent := time.Now()
	return s.record(in, r, s.g.c.Do(s.ctx, r), sent)
}

// sendTogether sends attempts at the same moment; ins[i] is the intent
// rs[i] serves. They are recorded in the order their answers arrived, so
// that "the first answer" under a key is the answer of the attempt that
// answered first, not of the one written first.
func (s *scenario) sendTogether(ins []lab.Intent, rs []Request) []int {
	sent := time.Now()
	replies := s.g.c.Together(s.ctx, rs)
	s.groups++
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
	for _, i := range order {
		out[i] = s.record(ins[i], rs[i], replies[i], sent)
		s.together[out[i]] = s.groups
	}
	return out
}

func (s *scenario) record(in lab.Intent, r Request, rep Reply, sent time.Time) int {
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
		Status: rep.Status, Response: rep.Body, Replayed: rep.Replayed(), Delivered: !r.Cut && rep.Err == nil, SentAt: sent}
	if rep.Err != nil {
		a.Status, a.Response = 0, nil
		if !r.Cut {
			s.notes = append(s.notes, Note{Check: s.name, Message: fmt.Sprintf("%s got no answer: %v", a.Lane, rep.Err), Curl: []string{Curl(s.g.c.Base(), r)}})
		}
	}
	s.attempts = append(s.attempts, a)
	s.reqs = append(s.reqs, r)
	s.replies = append(s.replies, rep)
	answered := rep.At
	if answered.IsZero() {
		answered = sent
	}
	s.sent, s.answered = append(s.sent, sent), append(s.answered, answered)
	if rep.Err == nil && rep.Status == 409 && !validRetryAfter(rep.Header) && !s.retryAfterNoted {
		s.retryAfterNoted = true
		s.note(fmt.Sprintf("%s was answered 409 %s; the contract says 409 with Retry-After: 1, so that a client knows when to come back instead of hammering the endpoint or giving up",
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
func (s *scenario) fail(rule lab.Rule, c *cause, msg string, attempts ...int) {
	f := Failure{Check: s.name, Rule: rule.Name, RuleN: rule.N, Message: msg, Curl: s.curl(attempts)}
	for _, i := range attempts {
		f.Lanes = append(f.Lanes, s.attempts[i].Lane)
	}
	setCause(&f, c)
	s.extra = append(s.extra, f)
}

// note records a departure from the contract.
func (s *scenario) note(msg string, attempts ...int) {
	s.notes = append(s.notes, Note{Check: s.name, Message: msg, Curl: s.curl(attempts)})
}

// curl renders the scenario's accounts and the given attempts (every
// attempt when none is given) as paste-able lines: the accounts to open,
// the requests in order (with the grader's own requests between them,
// such as a top-up), then the balances to read.
func (s *scenario) curl(attempts []int) []string {
	base := s.g.c.Base()
	if len(attempts) == 0 {
		for i := range s.attempts {
			attempts = append(attempts, i)
		}
	}
	attempts = withFirstUses(attempts, func(i int) string { return s.attempts[i].Key })
	named := func(id string) bool {
		for _, i := range attempts {
			if strings.Contains(s.reqs[i].Body, strconv.Quote(id)) {
				return true
			}
		}
		return false
	}
	// Only the accounts the shown requests name, so the sequence stays short.
	var accounts []string
	for _, id := range s.accounts {
		if named(id) {
			accounts = append(accounts, id)
		}
	}
	var lines []string
	for _, id := range accounts {
		if b, ok := s.opening[id]; ok {
			lines = append(lines, Curl(base, putRequest(id, b)))
		}
	}
	groupSize := func(g int, among []int) int {
		n := 0
		for _, j := range among {
			if s.together[j] == g {
				n++
			}
		}
		return n
	}
	all := make([]int, len(s.attempts))
	for i := range all {
		all[i] = i
	}
	shownInter := map[int]bool{}
	group := 0 // the group of simultaneous requests being written, 0 when none
	endGroup := func() {
		if group != 0 {
			lines = append(lines, "wait")
			group = 0
		}
	}
	for _, i := range attempts {
		for k, in := range s.interludes {
			if !shownInter[k] && in.before <= i && named(in.account) {
				endGroup()
				shownInter[k] = true
				lines = append(lines, "# "+in.comment, Curl(base, in.req))
			}
		}
		g := s.together[i]
		if g != group {
			endGroup()
		}
		if g != 0 {
			if n := groupSize(g, attempts); n >= 2 {
				if group != g {
					lines = append(lines, fmt.Sprintf("# the next %d requests arrived at the same moment: end each line with & and run them together", n))
					group = g
				}
			} else {
				lines = append(lines, fmt.Sprintf("# the next request was one of %d sent at the same moment", groupSize(g, all)))
			}
		}
		if s.reqs[i].Cut {
			lines = append(lines, "# the grader cut the next connection as its answer arrived, without reading it")
		}
		line := Curl(base, s.reqs[i])
		if group != 0 {
			line += " &"
		}
		lines = append(lines, line)
	}
	endGroup()
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
	for _, f := range s.afterJudge {
		f(h.TransfersPerIntent)
	}
	tm := timing{sent: s.sent, answered: s.answered}
	var out []Failure
	for _, rr := range lab.Check(h).Rules {
		for _, v := range rr.Violations {
			f := Failure{Check: s.name, Rule: rr.Rule.Name, RuleN: rr.Rule.N, Message: v.Message, Lanes: v.Lanes, Curl: s.curl(v.Attempts)}
			diagnose(&f, s.name, s.attempts, v.Attempts, tm)
			out = append(out, f)
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
			s.fail(lab.RuleOwnResponses, causeGlobalKeys, fmt.Sprintf("%s asked to send %d won from %s to %s and was answered with a transfer from %s to %s: someone else's answer",
				a.Lane, sent.Amount, sent.From, sent.To, got.From, got.To), i)
		}
	}
}
