// The day check: a generated day replayed against the endpoint, judged by
// the checker, with the refusals another customer's key caused.

package grade

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"idemlab/lab"
)

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
	// p.Intents counts the wishes; each new-key press is an intent of its
	// own, so the day holds more intents than that, and the tally counts
	// them all. The title names the count the tally will show.
	res := CheckResult{Name: "day", Title: fmt.Sprintf("a day of %d intents (%d wishes and their new-key presses) and their retries replays with zero duplicates, and every wish is paid", len(d.Intents), p.Intents)}
	began := time.Now()
	defer func() { g.rep.Checks[len(g.rep.Checks)-1].ElapsedMS = time.Since(began).Milliseconds() }()
	do := DayOptions{Concurrency: o.Concurrency, Timeout: o.Timeout}
	for _, c := range g.cs[1:] {
		do.Replicas = append(do.Replicas, c.Base())
	}
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
	for _, a := range h.Attempts {
		g.noteServer("day", a)
	}
	refused := foreignRefusals(d, h)
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
					a.Customer, a.Key, a.Status, snippet(a.Response), h.Attempts[fr.other].Customer, len(refused), lab.Plural(len(refused), "was", "were")),
				Lanes: lanes([]int{fr.other, fr.attempt}), Curl: dayCurl(g.c.Base(), d, run, []int{fr.other, fr.attempt})}
			setCause(&f, lab.CauseGlobalKeys)
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

// foreignRefusal is a wish never paid whose request was refused because
// another customer had used its key string.
type foreignRefusal struct{ attempt, other int }

// foreignRefusals finds, in a day's history, the intents never paid and
// never told success whose first answered request under their key was
// refused because of another customer's use of the key string
// (lab.FirstRefusals tells that cause from the customer's own: a 409 of
// its own overlapping retry, a 422 of its own correction): one refusal per
// intent.
func foreignRefusals(d lab.Day, h lab.History) []foreignRefusal {
	told := map[string]bool{} // intents answered with a success at least once
	for _, a := range h.Attempts {
		if a.Delivered && lab.Success(a.Status) {
			told[a.Intent] = true
		}
	}
	done := map[string]bool{}
	var out []foreignRefusal
	for _, r := range lab.FirstRefusals(d, h) {
		in := h.Attempts[r.Attempt].Intent
		if r.Cause != lab.RefusedOtherCustomersKey || done[in] || told[in] || h.TransfersPerIntent[in] > 0 {
			continue
		}
		done[in] = true
		out = append(out, foreignRefusal{attempt: r.Attempt, other: r.Other})
	}
	return out
}
