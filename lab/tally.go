package lab

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"idemlab/engine"
)

// Tally is the end of a day's replay: what was sent, what the bank did and
// the checker's verdict on every rule.
type Tally struct {
	// Level is the engine's level in-process; Target the URL over HTTP.
	Level  string `json:"level,omitempty"`
	Target string `json:"target,omitempty"`
	Report Report `json:"report"`
	// Intents counts the server-visible intents (a new-key press is one of
	// its own); Attempts every request sent.
	Intents  int `json:"intents"`
	Attempts int `json:"attempts"`
	// Statuses counts the answers by HTTP status (0: no answer was read).
	Statuses map[int]int `json:"statuses"`
	// ClientDuplicates counts transfers made by impatient presses under a
	// new key after the same wish had already been paid, and
	// ClientPaidTwice the won they moved. No server can see these: the
	// client sent two different requests. They are not in Report's
	// duplicates, which count what the server should have caught.
	ClientDuplicates int   `json:"client_duplicates"`
	ClientPaidTwice  int64 `json:"client_paid_twice"`
	// FirstRefusals counts, by cause (RefusedOtherCustomersKey, …), the
	// customers' first answered requests under a key that were refused:
	// see FirstRefusals.
	FirstRefusals map[string]int `json:"first_refusals,omitempty"`
	// ForeignKeyRefusals counts those whose cause was another customer's
	// use of the key string: what global keys do to clients that number
	// their keys alike. No money moves twice, but a customer's legitimate
	// transfer never happens.
	ForeignKeyRefusals int `json:"foreign_key_refusals"`
	// RetentionKnown is false when a black-box endpoint did not publish
	// its retention, so rule 7 could not be judged.
	RetentionKnown bool `json:"retention_known"`
	// ChargesKnown is true when the checker read the payment processor's
	// charges (an in-process replay); a black-box endpoint's processor is
	// out of sight, and rule 8 is not judged.
	ChargesKnown bool          `json:"charges_known,omitempty"`
	Elapsed      time.Duration `json:"elapsed_ns"`
	// History is what the checker judged, for a caller that wants to show
	// the requests behind a violation.
	History History `json:"-"`
}

// AttemptsPerSecond is the replay's throughput.
func (t Tally) AttemptsPerSecond() float64 {
	if t.Elapsed <= 0 {
		return 0
	}
	return float64(t.Attempts) / t.Elapsed.Seconds()
}

// NewTally judges a replayed day's history. perIntent counts the transfers
// of every intent (from the ledger in-process, from the balances over
// HTTP); it is used for the client-side duplicates only, the checker counts
// its own.
func NewTally(d Day, h History, perIntent map[string]int) Tally {
	t := Tally{Report: Check(h), Intents: len(d.Intents), Attempts: len(h.Attempts), Statuses: map[int]int{}, History: h}
	for _, a := range h.Attempts {
		if a.Delivered {
			t.Statuses[a.Status]++
		} else {
			t.Statuses[0]++
		}
	}
	t.FirstRefusals = map[string]int{}
	for _, r := range FirstRefusals(d, h) {
		t.FirstRefusals[r.Cause]++
		if r.Cause == RefusedOtherCustomersKey {
			t.ForeignKeyRefusals++
		}
	}
	// A wish is an intent and its new-key repeats; each paid intent after
	// the first is a duplicate the client made.
	paid := map[string]int{}
	amount := map[string]int64{}
	for _, in := range d.Intents {
		wish := in.ID
		if in.RepeatOf != "" {
			wish = in.RepeatOf
		}
		amount[wish] = in.Amount
		if perIntent[in.ID] > 0 {
			paid[wish]++
		}
	}
	for wish, n := range paid {
		if n > 1 {
			t.ClientDuplicates += n - 1
			t.ClientPaidTwice += int64(n-1) * amount[wish]
		}
	}
	return t
}

// Causes of a refused first request (FirstRefusal.Cause). A refusal none
// of them explains is counted by its status: "status-429".
const (
	RefusedOtherCustomersKey  = "other-customers-key"
	RefusedOwnRetryInProgress = "own-retry-in-progress"
	RefusedOwnCorrection      = "own-correction"
)

// FirstRefusal is a customer's first answered request under a key that was
// refused (see Refusal), with its cause.
type FirstRefusal struct {
	// Attempt indexes History.Attempts. Other is the other customer's
	// earlier attempt under the key string whose use explains the refusal
	// (cause RefusedOtherCustomersKey), else -1.
	Attempt, Other int
	Cause          string
}

// FirstRefusals finds, for every customer and key, the first request whose
// answer was read, when that answer refused it, and tells the refusal's
// cause from the evidence. A refusal is laid at another customer's key only
// when nothing of the customer's own explains it, because a correctly
// scoped endpoint refuses a first request too, for reasons of the
// customer's own:
//
//   - a 409 while an attempt of the customer's own under the key was sent
//     before it or overlaps it (the day's overlaps: an impatient press, a
//     retry after a gateway timeout that got there first) is
//     RefusedOwnRetryInProgress;
//   - a refusal while such an own attempt carried another request (a
//     teller's correction) is RefusedOwnCorrection;
//   - otherwise, when another customer used the key string before, a 409,
//     a 422 or another 4xx that the contract gives no other meaning to
//     (417, 403, …), or an answer byte for byte what that customer got
//     under the key (their stored answer), is RefusedOtherCustomersKey;
//   - anything else (a 429, a 500) is counted by its status.
//
// h's attempts are d's, in the day's order, as both replays record them.
func FirstRefusals(d Day, h History) []FirstRefusal {
	group := make(map[string]string, len(d.Attempts)) // lane → the lane its overlap group starts with
	for _, a := range d.Attempts {
		group[a.Lane] = a.Lane
		if root, ok := group[a.Overlaps]; ok && a.Overlaps != "" {
			group[a.Lane] = root
		}
	}
	together := func(a, b Attempt) bool {
		ga, ok := group[a.Lane]
		return ok && ga == group[b.Lane]
	}
	byKey := map[keyID][]int{}
	byKeyString := map[string][]int{}
	for i, a := range h.Attempts {
		if a.Key != "" {
			byKey[keyID{a.Customer, a.Key}] = append(byKey[keyID{a.Customer, a.Key}], i)
			byKeyString[a.Key] = append(byKeyString[a.Key], i)
		}
	}
	answered := map[keyID]bool{}
	var out []FirstRefusal
	for i, a := range h.Attempts {
		k := keyID{a.Customer, a.Key}
		if a.Key == "" || !a.Delivered || answered[k] {
			continue
		}
		answered[k] = true
		if !Refusal(a.Status) {
			continue
		}
		r := FirstRefusal{Attempt: i, Other: -1, Cause: fmt.Sprintf("status-%d", a.Status)}
		own, ownOther := false, false
		for _, j := range byKey[k] {
			if b := h.Attempts[j]; j != i && (j < i || together(a, b)) {
				own = true
				ownOther = ownOther || !SameRequest(b.Body, a.Body)
			}
		}
		switch {
		case ownOther:
			r.Cause = RefusedOwnCorrection
		case own && a.Status == 409:
			r.Cause = RefusedOwnRetryInProgress
		default:
			if j := foreignCause(h, byKeyString[a.Key], i); j >= 0 {
				r.Cause, r.Other = RefusedOtherCustomersKey, j
			}
		}
		out = append(out, r)
	}
	return out
}

// foreignCause returns the attempt of another customer, sent before
// attempt i under the same key string (sameKey lists them all), whose use
// of the key explains i's refusal; -1 when none does. A stored answer of
// theirs, byte for byte, explains any refusal but one nobody stores (a
// 429, a 5xx, whose bodies repeat for everyone); an answer the contract
// gives to a used key (409, 422, and any 4xx it gives no other meaning)
// is explained by their first use.
func foreignCause(h History, sameKey []int, i int) int {
	a := h.Attempts[i]
	first := -1
	for _, j := range sameKey {
		b := h.Attempts[j]
		if j >= i {
			break
		}
		if b.Customer == a.Customer {
			continue
		}
		if first < 0 {
			first = j
		}
		if b.Status == a.Status && bytes.Equal(b.Response, a.Response) && a.Status != 429 && a.Status < 500 {
			return j
		}
	}
	switch {
	case first < 0 || a.Status < 400 || a.Status >= 500:
		return -1
	case a.Status == 400, a.Status == 401, a.Status == 413, a.Status == 429:
		return -1 // the contract's answers to the request itself, or to its rate
	}
	return first
}

// refusalCauses writes the refused first requests whose cause was not
// another customer's key, "24 while the customer's own retry under the key
// was in flight (409), 2 answered 429"; "" when there are none.
func refusalCauses(causes map[string]int) string {
	var parts []string
	if n := causes[RefusedOwnRetryInProgress]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d while the customer's own retry under the key was in flight (409)", n))
	}
	if n := causes[RefusedOwnCorrection]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d because the customer had sent another request under the key (a teller's correction gets 422)", n))
	}
	var statuses []string
	for c := range causes {
		if strings.HasPrefix(c, "status-") {
			statuses = append(statuses, c)
		}
	}
	sort.Strings(statuses)
	for _, c := range statuses {
		parts = append(parts, fmt.Sprintf("%d answered %s", causes[c], strings.TrimPrefix(c, "status-")))
	}
	return strings.Join(parts, ", ")
}

// WriteText writes the tally for a person: the counts, then every rule
// with its verdict and, for a broken rule, its first example.
func (t Tally) WriteText(w io.Writer) error {
	s := t.Report.Summary
	var b strings.Builder
	where := t.Level
	if t.Target != "" {
		where = t.Target
	}
	fmt.Fprintf(&b, "Day replayed against %s in %s (%.0f attempts/s)\n\n", where, t.Elapsed.Round(time.Millisecond), t.AttemptsPerSecond())
	row := func(label string, v any) { fmt.Fprintf(&b, "  %-34s %v\n", label, v) }
	row("intents", t.Intents)
	row("attempts", t.Attempts)
	row("responses lost on the way", s.Lost)
	row("transfers", s.Transfers)
	row("extra transfers", s.Duplicates)
	row("won moved more than once", GroupDigits(s.PaidTwice))
	row("409 still in progress", s.Conflicts)
	row("422 key reused for another request", s.Mismatches)
	row("replays", s.Replays)
	row("intents never paid", s.Unpaid)
	if t.ForeignKeyRefusals > 0 {
		row("refused: another customer's key", fmt.Sprintf("%d first %s refused because another customer had used the key (keys are global)",
			t.ForeignKeyRefusals, Plural(t.ForeignKeyRefusals, "request was", "requests were")))
	}
	if other := refusalCauses(t.FirstRefusals); other != "" {
		row("first requests refused, other causes", other)
	}
	if t.ClientDuplicates > 0 {
		row("new-key presses paid again", fmt.Sprintf("%d (%s won; the client's bug, invisible to any server)", t.ClientDuplicates, GroupDigits(t.ClientPaidTwice)))
	}
	row("answers by status", StatusList(t.Statuses))
	b.WriteString("\nRules:\n")
	for _, rr := range t.Report.Rules {
		verdict := "holds"
		switch {
		case rr.Rule == RuleRetention && !t.RetentionKnown:
			verdict = "UNKNOWN (the endpoint publishes no retention_seconds)"
		case rr.Rule == RuleOneCharge && !t.ChargesKnown:
			verdict = "NOT JUDGED (the endpoint's processor is out of sight)"
		case !rr.OK:
			verdict = "BROKEN"
		}
		fmt.Fprintf(&b, "  %d. %-34s %s\n", rr.Rule.N, rr.Rule.Name, verdict)
		if !rr.OK && len(rr.Violations) > 0 {
			v := rr.Violations[0]
			fmt.Fprintf(&b, "     %s\n", v.Message)
			if len(v.Lanes) > 0 {
				fmt.Fprintf(&b, "     lanes: %s\n", strings.Join(v.Lanes, " "))
			}
		}
	}
	if t.OK() {
		b.WriteString("\nEvery rule holds: zero duplicates for the whole day.\n")
	} else {
		fmt.Fprintf(&b, "\nBroken: %s\n", strings.Join(t.Report.Broken(), ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Success reports whether a status is a success (2xx).
func Success(status int) bool { return status >= 200 && status < 300 }

// Refusal reports whether a status refuses a request without deciding
// it: neither a success nor a business answer (402, 404), and not "no
// answer" (0). A 409, a 422, a 417 or a 500 all leave the wish unpaid.
func Refusal(status int) bool { return status != 0 && !final(status) }

// Plural returns one when n is 1, else many: "1 request was", "2 requests
// were".
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// OK reports whether every rule holds and the retention was known.
func (t Tally) OK() bool { return t.Report.OK && t.RetentionKnown }

// StatusList writes answers counted by HTTP status in order of status,
// "unread×20 201×140 409×3" (0, unread: no answer was read).
func StatusList(statuses map[int]int) string {
	codes := make([]int, 0, len(statuses))
	for c := range statuses {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	parts := make([]string, 0, len(codes))
	for _, c := range codes {
		label := fmt.Sprint(c)
		if c == 0 {
			label = "unread"
		}
		parts = append(parts, fmt.Sprintf("%s×%d", label, statuses[c]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// GroupDigits writes won with a comma every three digits: 1,250,000.
func GroupDigits(n int64) string { return engine.GroupDigits(n) }

// WriteLadder writes one line per tally, for a day replayed at every level:
// the extra transfers and the won they moved fall rung by rung, and the
// broken rules with them.
func WriteLadder(w io.Writer, tallies []Tally) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %9s %15s %25s %7s %7s %8s  %s\n", "level", "transfers", "extra transfers", "won moved more than once", "409", "422", "replays", "broken rules")
	for _, t := range tallies {
		s := t.Report.Summary
		var broken []string
		for _, rr := range t.Report.Rules {
			if !rr.OK {
				broken = append(broken, fmt.Sprint(rr.Rule.N))
			}
		}
		rules := strings.Join(broken, " ")
		if rules == "" {
			rules = "none"
		}
		fmt.Fprintf(&b, "%-12s %9d %15d %25s %7d %7d %8d  %s\n", t.Level, s.Transfers, s.Duplicates, GroupDigits(s.PaidTwice),
			s.Conflicts, s.Mismatches, s.Replays, rules)
	}
	b.WriteString("\nRules: ")
	for i, r := range rules {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d %s", r.N, r.Name)
	}
	b.WriteString(".\n")
	_, err := io.WriteString(w, b.String())
	return err
}
