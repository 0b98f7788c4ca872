// The day generator: customers, their intents, and each intent's attempts
// (retries, lost answers, overlaps, tellers' corrections, restyled bodies),
// drawn from DayParams and its seed alone.

package lab

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"

	"idemlab/engine"
)

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
