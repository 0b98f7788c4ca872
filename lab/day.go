package lab

import (
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
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
