package lab

import (
	"bufio"
	"bytes"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"idemlab/engine"
)

// DayParams are the knobs of a day of traffic. The same params, seed
// included, always give the same day, byte for byte.
type DayParams struct {
	Seed      int64 `json:"seed"`
	Customers int   `json:"customers"`
	Intents   int   `json:"intents"`
	// Prefix starts every customer id, account id and key, so that one day
	// can run against the same endpoint twice without meeting itself.
	Prefix string `json:"prefix,omitempty"`
	// DaySeconds is how long the day lasts; first attempts spread over it.
	DaySeconds int `json:"day_seconds"`
	// LossRate is the share of attempts whose response never reaches the
	// client; RetryLossRate the same for retries.
	LossRate      float64 `json:"loss_rate"`
	RetryLossRate float64 `json:"retry_loss_rate"`
	// OverlapRate is the share of automatic retries sent while the attempt
	// they retry is still being processed (the gateway gave up early).
	OverlapRate float64 `json:"overlap_rate"`
	// TellerRate is the share of intents where a teller corrects the amount
	// and sends again under the same key.
	TellerRate float64 `json:"teller_rate"`
	// SequenceKeyRate is the share of customers whose client makes keys from
	// a counter ("order-1", "order-2", …), so that their keys collide with
	// other such customers' keys when keys are global.
	SequenceKeyRate float64 `json:"sequence_key_rate"`
	// RestyleRate is the share of retries whose client library writes the
	// same JSON with other field order or whitespace.
	RestyleRate float64 `json:"restyle_rate"`
	// Mix weighs the clients' retry policies.
	Mix RetryMix `json:"mix"`
	// RetryHorizonSeconds is how long after its first attempt any client
	// may still retry. Generated days never retry later than this.
	RetryHorizonSeconds int `json:"retry_horizon_seconds"`
	// MaxAmount bounds a transfer's amount in won.
	MaxAmount int64 `json:"max_amount"`
}

// RetryMix weighs the retry policies of the day's clients. The weights
// need not sum to one.
type RetryMix struct {
	None             float64 `json:"none"`
	Fixed            float64 `json:"fixed"`
	Backoff          float64 `json:"backoff"`
	ImpatientSameKey float64 `json:"impatient_same_key"`
	ImpatientNewKey  float64 `json:"impatient_new_key"`
}

// Retry policies, as they appear in a day file.
const (
	// PolicyNone gives up after a lost response.
	PolicyNone = "none"
	// PolicyFixed retries every two seconds, up to three times.
	PolicyFixed = "fixed"
	// PolicyBackoff retries after exponentially growing delays with full
	// jitter, up to five times; a phone back from a basement retries when
	// its signal returns, minutes later.
	PolicyBackoff = "backoff"
	// PolicyImpatientSameKey is a person who presses "send" again while the
	// first press is still running; the app reuses the key.
	PolicyImpatientSameKey = "impatient-same-key"
	// PolicyImpatientNewKey is the same person on a badly written app that
	// makes a new key for every press. No server can tell the presses apart.
	PolicyImpatientNewKey = "impatient-new-key"
)

// Causes of a lost response.
const (
	LossNone = "none"
	// LossGatewayTimeout: the gateway's timeout is shorter than the
	// server's processing; the client hears a timeout while the server goes
	// on and commits.
	LossGatewayTimeout = "gateway-timeout"
	// LossLBCut: the server answered, and a load balancer cut the
	// connection before the answer got through.
	LossLBCut = "lb-cut"
	// LossBasement: the phone lost its signal while the server worked.
	LossBasement = "basement"
)

// Body styles: the same JSON object written the way different client
// libraries write it.
const (
	StyleCompact   = "compact"   // {"from":"a","to":"b","amount":1}
	StyleReordered = "reordered" // {"amount":1,"from":"a","to":"b"}
	StyleSpaced    = "spaced"    // { "from": "a", "to": "b", "amount": 1 }
	StylePretty    = "pretty"    // one field per line, two-space indent
)

var bodyStyles = []string{StyleCompact, StyleReordered, StyleSpaced, StylePretty}

// DefaultDayParams returns a day of 2,000 intents from 40 customers with the
// loss, overlap and correction rates the lessons use.
func DefaultDayParams() DayParams {
	return DayParams{
		Seed: 1, Customers: 40, Intents: 2000,
		DaySeconds: 86400, LossRate: 0.15, RetryLossRate: 0.1, OverlapRate: 0.25,
		TellerRate: 0.01, SequenceKeyRate: 0.1, RestyleRate: 0.2,
		Mix:                 RetryMix{None: 0.15, Fixed: 0.25, Backoff: 0.35, ImpatientSameKey: 0.18, ImpatientNewKey: 0.07},
		RetryHorizonSeconds: 3600, MaxAmount: 500_000,
	}
}

// Limits on DayParams, so that a typo cannot ask for a day that fills the
// disk.
const (
	MaxDayCustomers = 100_000
	MaxDayIntents   = 2_000_000
)

// MaxTaughtDayIntents bounds a day played in the browser or a lesson test
// (lab/scenario's RunDay): a day's worth of teaching, not a load test.
const MaxTaughtDayIntents = 20_000

// WithDefaults returns p with its zero fields set from DefaultDayParams (a
// nil p gives the defaults): a day scenario or the browser names only the
// params it changes. The other fields stay as they are, for Validate to
// judge.
func (p *DayParams) WithDefaults() DayParams {
	d := DefaultDayParams()
	if p == nil {
		return d
	}
	out := *p
	if out.Seed == 0 {
		out.Seed = d.Seed
	}
	if out.Customers == 0 {
		out.Customers = d.Customers
	}
	if out.Intents == 0 {
		out.Intents = d.Intents
	}
	if out.DaySeconds == 0 {
		out.DaySeconds = d.DaySeconds
	}
	if out.RetryHorizonSeconds == 0 {
		out.RetryHorizonSeconds = d.RetryHorizonSeconds
	}
	if out.Mix == (RetryMix{}) {
		out.Mix = d.Mix
	}
	if out.MaxAmount == 0 {
		out.MaxAmount = d.MaxAmount
	}
	return out
}

// Validate reports the first param that makes no sense.
func (p DayParams) Validate() error {
	switch {
	case p.Customers < 2 || p.Customers > MaxDayCustomers:
		return fmt.Errorf("lab: customers must be 2 to %d, got %d", MaxDayCustomers, p.Customers)
	case p.Intents < 1 || p.Intents > MaxDayIntents:
		return fmt.Errorf("lab: intents must be 1 to %d, got %d", MaxDayIntents, p.Intents)
	case p.DaySeconds < 1:
		return fmt.Errorf("lab: day_seconds must be positive")
	case p.RetryHorizonSeconds < 60:
		return fmt.Errorf("lab: retry_horizon_seconds must be at least 60")
	case p.MaxAmount < 1000 || p.MaxAmount > 1_000_000_000:
		return fmt.Errorf("lab: max_amount must be 1000 to 1000000000")
	case len(p.Prefix) > 16 || !validPrefix(p.Prefix):
		return fmt.Errorf("lab: prefix must be at most 16 letters, digits or '-'")
	}
	for name, r := range map[string]float64{"loss_rate": p.LossRate, "retry_loss_rate": p.RetryLossRate,
		"overlap_rate": p.OverlapRate, "teller_rate": p.TellerRate, "sequence_key_rate": p.SequenceKeyRate,
		"restyle_rate": p.RestyleRate} {
		if !(r >= 0 && r <= 1) {
			return fmt.Errorf("lab: %s must be between 0 and 1, got %v", name, r)
		}
	}
	m := p.Mix
	ws := []float64{m.None, m.Fixed, m.Backoff, m.ImpatientSameKey, m.ImpatientNewKey}
	sum := 0.0
	for _, w := range ws {
		if !(w >= 0 && w <= 1000) {
			return fmt.Errorf("lab: retry mix weights must be between 0 and 1000")
		}
		sum += w
	}
	if sum == 0 {
		return fmt.Errorf("lab: the retry mix needs at least one positive weight")
	}
	return nil
}

func validPrefix(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// DayIntent is one wish of the day and how its client behaves.
type DayIntent struct {
	Intent
	Policy string `json:"policy"`
	// RepeatOf names the intent whose press this one repeats with a new
	// key (impatient-new-key). The server sees a new request; the person
	// wanted one transfer.
	RepeatOf string `json:"repeat_of,omitempty"`
}

// DayAttempt is one request of the day, as its client sent it.
type DayAttempt struct {
	// AtMS is when it is sent, in milliseconds from the start of the day.
	AtMS     int64  `json:"at_ms"`
	Lane     string `json:"lane"`
	Intent   string `json:"intent"`
	Customer string `json:"customer"`
	Key      string `json:"key"`
	// Body is the request body exactly as sent; Style says how it was
	// written. From, To and Amount are what it says.
	Body   string `json:"body"`
	Style  string `json:"style"`
	From   string `json:"from"`
	To     string `json:"to"`
	Amount int64  `json:"amount"`
	// Try counts the intent's attempts from 1.
	Try    int    `json:"try"`
	Policy string `json:"policy"`
	// Loss is why the client never sees this attempt's response, or "none".
	Loss string `json:"loss"`
	// Overlaps is the lane of an earlier attempt still being processed when
	// this one arrives; empty when the earlier ones had finished.
	Overlaps string `json:"overlaps,omitempty"`
	// Correction marks a teller's corrected amount under the same key.
	Correction bool `json:"correction,omitempty"`
}

// Lost reports whether the attempt's response never reaches the client.
func (a DayAttempt) Lost() bool { return a.Loss != "" && a.Loss != LossNone }

// Day is a day of traffic: opening balances, the intents and every attempt
// in the order they are sent.
type Day struct {
	Params   DayParams        `json:"params"`
	Accounts []engine.Account `json:"accounts"` // opening balances
	Intents  []DayIntent      `json:"intents"`
	Attempts []DayAttempt     `json:"attempts"`
}

// RetryHorizon is how long the day's clients keep retrying.
func (d Day) RetryHorizon() time.Duration {
	return time.Duration(d.Params.RetryHorizonSeconds) * time.Second
}

// HistoryIntents returns the day's intents as the checker takes them.
func (d Day) HistoryIntents() []Intent {
	out := make([]Intent, len(d.Intents))
	for i, in := range d.Intents {
		out[i] = in.Intent
	}
	return out
}

// StartBalances returns the opening balances as a map.
func (d Day) StartBalances() map[string]int64 {
	out := make(map[string]int64, len(d.Accounts))
	for _, a := range d.Accounts {
		out[a.ID] = a.Balance
	}
	return out
}

// dayGen holds the generator's state.
type dayGen struct {
	p        DayParams
	r        *rand.Rand
	seqKeys  map[string]bool // customers whose keys come from a counter
	counters map[string]int
	day      Day
}

// GenerateDay builds the day the params describe. It is a pure function of
// p: the same params give the same day. Invalid params are replaced by
// their defaults field by field where zero, and clamped otherwise; call
// Validate first to refuse them instead.
func GenerateDay(p DayParams) Day {
	p = p.sane()
	g := &dayGen{p: p, r: rand.New(rand.NewPCG(uint64(p.Seed), 0x1de3_1ab0_da75)),
		seqKeys: map[string]bool{}, counters: map[string]int{}}
	g.day.Params = p
	customers := make([]string, p.Customers)
	for i := range customers {
		customers[i] = fmt.Sprintf("%sc%04d", p.Prefix, i+1)
		if g.r.Float64() < p.SequenceKeyRate {
			g.seqKeys[customers[i]] = true
		}
	}
	type wish struct {
		at       int64
		customer string
	}
	wishes := make([]wish, p.Intents)
	dayMS := int64(p.DaySeconds) * 1000
	for i := range wishes {
		wishes[i] = wish{at: g.dayTime(dayMS), customer: customers[g.r.IntN(len(customers))]}
	}
	// Intents are numbered in the order they happen, so a day reads like a log.
	sort.SliceStable(wishes, func(i, j int) bool { return wishes[i].at < wishes[j].at })
	spent := map[string]int64{}
	for i, w := range wishes {
		g.intent(i+1, w.at, w.customer, spent)
	}
	sort.SliceStable(g.day.Attempts, func(i, j int) bool { return g.day.Attempts[i].AtMS < g.day.Attempts[j].AtMS })
	// Opening balances cover even a bank that pays every attempt, so the day
	// is about duplicates, never about refusals.
	for _, c := range customers {
		g.day.Accounts = append(g.day.Accounts, engine.Account{ID: accountOf(c), Balance: spent[accountOf(c)] + 1_000_000})
	}
	for _, in := range g.day.Intents {
		if in.RepeatOf == "" {
			g.day.Accounts = append(g.day.Accounts, engine.Account{ID: in.To, Balance: 0})
		}
	}
	return g.day
}

func accountOf(customer string) string { return customer + "-acct" }

// dayTime draws a moment of the day, busier in the late morning and the
// evening than at night.
func (g *dayGen) dayTime(dayMS int64) int64 {
	for {
		t := g.r.Int64N(dayMS)
		hour := float64(t) / float64(dayMS) * 24
		busy := 0.15
		if hour >= 8 && hour < 22 {
			busy = 0.6
		}
		if hour >= 11 && hour < 13 || hour >= 18 && hour < 21 {
			busy = 1
		}
		if g.r.Float64() < busy {
			return t
		}
	}
}

// sane is what GenerateDay plays for p: each field that makes no sense
// (zero included, but a zero Seed is a seed) replaced by its default, and
// the rest clamped to the limits.
func (p DayParams) sane() DayParams {
	d := DefaultDayParams()
	if p.Customers < 2 {
		p.Customers = d.Customers
	}
	p.Customers = min(p.Customers, MaxDayCustomers)
	if p.Intents < 1 {
		p.Intents = d.Intents
	}
	p.Intents = min(p.Intents, MaxDayIntents)
	if p.DaySeconds < 1 {
		p.DaySeconds = d.DaySeconds
	}
	if p.RetryHorizonSeconds < 60 {
		p.RetryHorizonSeconds = d.RetryHorizonSeconds
	}
	if p.MaxAmount < 1000 {
		p.MaxAmount = d.MaxAmount
	}
	p.MaxAmount = min(p.MaxAmount, 1_000_000_000)
	if p.Mix == (RetryMix{}) {
		p.Mix = d.Mix
	}
	if !validPrefix(p.Prefix) || len(p.Prefix) > 16 {
		p.Prefix = ""
	}
	for _, r := range []*float64{&p.LossRate, &p.RetryLossRate, &p.OverlapRate, &p.TellerRate, &p.SequenceKeyRate, &p.RestyleRate} {
		*r = max(0, min(1, *r))
	}
	return p
}

func (g *dayGen) policy() string {
	m := g.p.Mix
	ws := []float64{m.None, m.Fixed, m.Backoff, m.ImpatientSameKey, m.ImpatientNewKey}
	names := []string{PolicyNone, PolicyFixed, PolicyBackoff, PolicyImpatientSameKey, PolicyImpatientNewKey}
	sum := 0.0
	for _, w := range ws {
		sum += max(w, 0)
	}
	x := g.r.Float64() * sum
	for i, w := range ws {
		if x < max(w, 0) {
			return names[i]
		}
		x -= max(w, 0)
	}
	return PolicyBackoff
}

func (g *dayGen) key(customer string) string {
	if g.seqKeys[customer] {
		g.counters[customer]++
		return g.p.Prefix + "order-" + strconv.Itoa(g.counters[customer])
	}
	var b [16]byte
	for i := range b {
		b[i] = byte(g.r.Uint32())
	}
	b[6] = b[6]&0x0f | 0x40 // a version-4 UUID, as most clients make
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%s%x-%x-%x-%x-%x", g.p.Prefix, b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (g *dayGen) amount() int64 {
	// Whole hundreds of won, most of them small.
	hundreds := g.p.MaxAmount / 100
	x := g.r.Float64()
	return max(10, int64(x*x*float64(hundreds))) * 100
}

func (g *dayGen) loss(rate float64) string {
	if g.r.Float64() >= rate {
		return LossNone
	}
	switch g.r.IntN(3) {
	case 0:
		return LossGatewayTimeout
	case 1:
		return LossLBCut
	}
	return LossBasement
}

func (g *dayGen) style() string { return bodyStyles[g.r.IntN(len(bodyStyles))] }

// intent generates one wish and every attempt that serves it.
func (g *dayGen) intent(n int, at int64, customer string, spent map[string]int64) {
	p := g.p
	id := fmt.Sprintf("%si%06d", p.Prefix, n)
	from := accountOf(customer)
	in := DayIntent{Intent: Intent{ID: id, Customer: customer, From: from, To: fmt.Sprintf("%sinv-%06d", p.Prefix, n),
		Amount: g.amount()}, Policy: g.policy()}
	teller := g.r.Float64() < p.TellerRate
	if teller {
		in.Policy = PolicyNone
	}
	g.day.Intents = append(g.day.Intents, in)
	horizon := int64(p.RetryHorizonSeconds) * 1000
	key := g.key(customer)
	try := 0
	style := g.style()
	add := func(at int64, key, loss, overlaps string) *DayAttempt {
		try++
		if try > 1 && g.r.Float64() < p.RestyleRate {
			style = g.style()
		}
		a := DayAttempt{AtMS: at, Lane: fmt.Sprintf("%s.%d", id, try), Intent: id, Customer: customer, Key: key,
			From: in.From, To: in.To, Amount: in.Amount, Style: style, Try: try, Policy: in.Policy, Loss: loss, Overlaps: overlaps}
		a.Body = RenderBody(style, a.From, a.To, a.Amount)
		g.day.Attempts = append(g.day.Attempts, a)
		spent[from] += a.Amount
		return &g.day.Attempts[len(g.day.Attempts)-1]
	}
	first := add(at, key, g.loss(p.LossRate), "")
	last := *first

	switch {
	case teller:
		// The teller's screen timed out; she corrects the amount she typed
		// and sends again from the same screen, which keeps the key.
		first.Loss = LossGatewayTimeout
		// The correction ends in tens of won (312,470 for 212,400), which
		// ordinary amounts never do, so a black-box grader can still tell
		// from the payee's balance which of the two went out, and how often.
		corrected := in.Amount + (1+g.r.Int64N(5))*100_000 + []int64{10, 30, 70, 90}[g.r.IntN(4)]
		a := add(at+10_000+g.r.Int64N(80_000), key, LossNone, "")
		a.Amount, a.Correction = corrected, true
		a.Body = RenderBody(a.Style, a.From, a.To, a.Amount)
		spent[from] += corrected - in.Amount
	case in.Policy == PolicyImpatientSameKey || in.Policy == PolicyImpatientNewKey:
		// The person presses again once or twice while the first press is
		// still spinning, then once more later if nothing came back.
		presses := 1 + g.r.IntN(2)
		t := at
		origin := last.Lane
		for press := range presses {
			t += 300 + g.r.Int64N(1500)
			if in.Policy == PolicyImpatientNewKey {
				g.repeat(in, press+2, t, customer, spent, origin)
				continue
			}
			add(t, key, g.loss(p.RetryLossRate), origin)
		}
		if last.Lost() && in.Policy == PolicyImpatientSameKey {
			add(t+5_000+g.r.Int64N(25_000), key, LossNone, "")
		}
	case in.Policy == PolicyFixed || in.Policy == PolicyBackoff:
		t := at
		prev := last
		for retry := 1; prev.Lost(); retry++ {
			if in.Policy == PolicyFixed && retry > 3 || retry > 5 {
				break
			}
			overlaps := ""
			var wait int64
			switch {
			case prev.Loss == LossBasement && in.Policy == PolicyBackoff:
				// The app keeps the request until the signal returns.
				wait = 60_000 + g.r.Int64N(45*60_000)
			case in.Policy == PolicyFixed:
				wait = 2_000
			default:
				wait = g.r.Int64N(1000 << retry) // full jitter
			}
			if prev.Loss == LossGatewayTimeout && g.r.Float64() < p.OverlapRate {
				// The gateway gave up long before the server did: the
				// retry arrives while the first is still being processed.
				wait, overlaps = 50+g.r.Int64N(500), prev.Lane
			}
			if t+wait-at > horizon {
				break
			}
			t += wait
			prev = *add(t, key, g.loss(p.RetryLossRate), overlaps)
		}
	}
}

// repeat adds an impatient press with a new key: a new intent to the
// server (named after the original and the press), the same wish to the
// person.
func (g *dayGen) repeat(orig DayIntent, press int, at int64, customer string, spent map[string]int64, overlaps string) {
	id := fmt.Sprintf("%s+%d", orig.ID, press)
	in := DayIntent{Intent: orig.Intent, Policy: PolicyImpatientNewKey, RepeatOf: orig.ID}
	in.ID = id
	g.day.Intents = append(g.day.Intents, in)
	a := DayAttempt{AtMS: at, Lane: id + ".1", Intent: id, Customer: customer, Key: g.key(customer),
		From: in.From, To: in.To, Amount: in.Amount, Style: g.style(), Try: 1, Policy: PolicyImpatientNewKey,
		Loss: g.loss(g.p.RetryLossRate), Overlaps: overlaps}
	a.Body = RenderBody(a.Style, a.From, a.To, a.Amount)
	g.day.Attempts = append(g.day.Attempts, a)
	spent[in.From] += in.Amount
}

// RenderBody writes a transfer body in one of the styles. Every style is
// the same request once canonicalized (RFC 8785).
func RenderBody(style, from, to string, amount int64) string {
	f, t := strconv.Quote(from), strconv.Quote(to)
	a := strconv.FormatInt(amount, 10)
	switch style {
	case StyleReordered:
		return `{"amount":` + a + `,"from":` + f + `,"to":` + t + `}`
	case StyleSpaced:
		return `{ "from": ` + f + `, "to": ` + t + `, "amount": ` + a + ` }`
	case StylePretty:
		return "{\n  \"to\": " + t + ",\n  \"amount\": " + a + ",\n  \"from\": " + f + "\n}"
	}
	return `{"from":` + f + `,"to":` + t + `,"amount":` + a + `}`
}

// dayLine is one line of a day file. Kind says which field is set.
type dayLine struct {
	Kind    string          `json:"kind"`
	Params  *DayParams      `json:"params,omitempty"`
	Account *engine.Account `json:"account,omitempty"`
	Intent  *DayIntent      `json:"intent,omitempty"`
	Attempt *DayAttempt     `json:"attempt,omitempty"`
}

// Line kinds of a day file.
const (
	lineParams  = "params"
	lineAccount = "account"
	lineIntent  = "intent"
	lineAttempt = "attempt"
)

// WriteJSONL writes the day as JSON Lines: one params line, then one line
// per opening account, per intent and per attempt (docs/lab-contract.md).
func (d Day) WriteJSONL(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	write := func(l dayLine) error {
		if err := enc.Encode(l); err != nil {
			return fmt.Errorf("write day: %w", err)
		}
		return nil
	}
	p := d.Params
	if err := write(dayLine{Kind: lineParams, Params: &p}); err != nil {
		return err
	}
	for i := range d.Accounts {
		if err := write(dayLine{Kind: lineAccount, Account: &d.Accounts[i]}); err != nil {
			return err
		}
	}
	for i := range d.Intents {
		if err := write(dayLine{Kind: lineIntent, Intent: &d.Intents[i]}); err != nil {
			return err
		}
	}
	for i := range d.Attempts {
		if err := write(dayLine{Kind: lineAttempt, Attempt: &d.Attempts[i]}); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write day: %w", err)
	}
	return nil
}

// MaxDayLine is the longest line ReadDay accepts.
const MaxDayLine = 64 << 10

// ReadDay reads a day written by WriteJSONL (or by hand, following
// docs/lab-contract.md). It checks that every attempt names a known intent
// and that attempts are in time order.
func ReadDay(r io.Reader) (Day, error) {
	var d Day
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxDayLine)
	intents := map[string]bool{}
	n := 0
	seenParams := false
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var l dayLine
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return d, fmt.Errorf("read day: line %d: %w", n, err)
		}
		switch {
		case l.Kind == lineParams && l.Params != nil:
			d.Params, seenParams = *l.Params, true
		case l.Kind == lineAccount && l.Account != nil:
			d.Accounts = append(d.Accounts, *l.Account)
		case l.Kind == lineIntent && l.Intent != nil:
			intents[l.Intent.ID] = true
			d.Intents = append(d.Intents, *l.Intent)
		case l.Kind == lineAttempt && l.Attempt != nil:
			a := *l.Attempt
			if !intents[a.Intent] {
				return d, fmt.Errorf("read day: line %d: attempt %s names intent %q before its intent line", n, a.Lane, a.Intent)
			}
			if k := len(d.Attempts); k > 0 && d.Attempts[k-1].AtMS > a.AtMS {
				return d, fmt.Errorf("read day: line %d: attempt %s is earlier than the line before it", n, a.Lane)
			}
			if a.Loss == "" {
				a.Loss = LossNone
			}
			d.Attempts = append(d.Attempts, a)
		default:
			return d, fmt.Errorf("read day: line %d: unknown kind %q or missing %q field", n, l.Kind, l.Kind)
		}
		if len(d.Attempts) > 4*MaxDayIntents {
			return d, errors.New("read day: too many attempts")
		}
	}
	if err := sc.Err(); err != nil {
		return d, fmt.Errorf("read day: line %d: %w", n+1, err)
	}
	if !seenParams {
		return d, errors.New("read day: no params line")
	}
	lanes := make(map[string]bool, len(d.Attempts))
	for _, a := range d.Attempts {
		if lanes[a.Lane] {
			return d, fmt.Errorf("read day: lane %s appears twice", a.Lane)
		}
		lanes[a.Lane] = true
	}
	for _, a := range d.Attempts {
		if a.Overlaps != "" && !lanes[a.Overlaps] {
			return d, fmt.Errorf("read day: attempt %s overlaps unknown lane %s", a.Lane, a.Overlaps)
		}
	}
	return d, nil
}

// RandomPrefix returns a fresh prefix for WithPrefix: letter, six random
// hex digits and '-', so that a run never meets an earlier one's ids and
// keys.
func RandomPrefix(letter string) string {
	var b [3]byte
	crand.Read(b[:])
	return letter + hex.EncodeToString(b[:]) + "-"
}

// WithPrefix returns a copy of the day whose customers, accounts, intents,
// lanes and keys all start with p, so that the same day can run again
// against an endpoint that remembers the last run. Bodies keep their bytes
// except for the account ids in them.
func (d Day) WithPrefix(p string) Day {
	if p == "" {
		return d
	}
	out := Day{Params: d.Params}
	out.Params.Prefix = p + d.Params.Prefix
	out.Accounts = make([]engine.Account, len(d.Accounts))
	for i, a := range d.Accounts {
		out.Accounts[i] = engine.Account{ID: p + a.ID, Balance: a.Balance}
	}
	out.Intents = make([]DayIntent, len(d.Intents))
	for i, in := range d.Intents {
		in.ID, in.Customer, in.From, in.To = p+in.ID, p+in.Customer, p+in.From, p+in.To
		if in.RepeatOf != "" {
			in.RepeatOf = p + in.RepeatOf
		}
		out.Intents[i] = in
	}
	out.Attempts = make([]DayAttempt, len(d.Attempts))
	for i, a := range d.Attempts {
		body := strings.Replace(a.Body, strconv.Quote(a.From), strconv.Quote(p+a.From), 1)
		a.Body = strings.Replace(body, strconv.Quote(a.To), strconv.Quote(p+a.To), 1)
		a.Lane, a.Intent, a.Customer, a.Key, a.From, a.To = p+a.Lane, p+a.Intent, p+a.Customer, p+a.Key, p+a.From, p+a.To
		if a.Overlaps != "" {
			a.Overlaps = p + a.Overlaps
		}
		out.Attempts[i] = a
	}
	return out
}

// GenerateDayOfSize generates a day like p with at least attempts attempts
// (and only a few more): a small day measures attempts per intent, then
// the number of intents grows until the day is big enough. p.Intents is
// ignored.
func GenerateDayOfSize(p DayParams, attempts int) Day {
	attempts = max(1, min(attempts, 2*MaxDayIntents))
	probe := p
	probe.Intents = 5000
	ratio := float64(len(GenerateDay(probe).Attempts)) / float64(probe.Intents)
	p.Intents = max(1, int(float64(attempts)/ratio))
	for {
		d := GenerateDay(p)
		if len(d.Attempts) >= attempts || p.Intents >= MaxDayIntents {
			return d
		}
		p.Intents += int(float64(attempts-len(d.Attempts))/ratio) + 1
	}
}
