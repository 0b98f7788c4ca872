package lab

import (
	"sort"
	"time"
)

// Outcome is what became of one attempt, as a day's picture counts it.
// Every attempt has exactly one; see NewPicture for how it is decided.
type Outcome string

// The outcomes of an attempt, in the order a picture stacks them (bottom
// first): the money first, then what the client was told.
const (
	// OutcomePaidOnce is the attempt whose transfer first paid its intent.
	OutcomePaidOnce Outcome = "paid-once"
	// OutcomePaidAgain is an attempt whose transfer paid an intent that was
	// already paid: a duplicate.
	OutcomePaidAgain Outcome = "paid-again"
	// OutcomeConflict is a 409: the key was still in progress.
	OutcomeConflict Outcome = "409"
	// OutcomeMismatch is a 422: the key was used for another request.
	OutcomeMismatch Outcome = "422"
	// OutcomeReplayed is an answer from what the server remembered: a
	// replay, or a success that moved no money.
	OutcomeReplayed Outcome = "replayed"
	// OutcomeLost is an attempt whose answer never reached the client and
	// that moved no money.
	OutcomeLost Outcome = "lost"
	// OutcomeRefused is any other 4xx: 400, 401, 402, 404.
	OutcomeRefused Outcome = "refused"
	// OutcomeOther is a 5xx or anything else.
	OutcomeOther Outcome = "other"
)

// Outcomes lists every outcome in stacking order, bottom first.
var Outcomes = []Outcome{OutcomePaidOnce, OutcomePaidAgain, OutcomeConflict, OutcomeMismatch,
	OutcomeReplayed, OutcomeLost, OutcomeRefused, OutcomeOther}

// OutcomeCounts counts attempts by outcome. Its JSON names are the
// outcomes' own, and every one is present, zero or not.
type OutcomeCounts struct {
	PaidOnce  int `json:"paid-once"`
	PaidAgain int `json:"paid-again"`
	Conflict  int `json:"409"`
	Mismatch  int `json:"422"`
	Replayed  int `json:"replayed"`
	Lost      int `json:"lost"`
	Refused   int `json:"refused"`
	Other     int `json:"other"`
}

// Of returns the count of one outcome (0 for an unknown one).
func (c OutcomeCounts) Of(o Outcome) int {
	if p := c.field(o); p != nil {
		return *p
	}
	return 0
}

// Sum counts every attempt.
func (c OutcomeCounts) Sum() int {
	return c.PaidOnce + c.PaidAgain + c.Conflict + c.Mismatch + c.Replayed + c.Lost + c.Refused + c.Other
}

func (c *OutcomeCounts) field(o Outcome) *int {
	switch o {
	case OutcomePaidOnce:
		return &c.PaidOnce
	case OutcomePaidAgain:
		return &c.PaidAgain
	case OutcomeConflict:
		return &c.Conflict
	case OutcomeMismatch:
		return &c.Mismatch
	case OutcomeReplayed:
		return &c.Replayed
	case OutcomeLost:
		return &c.Lost
	case OutcomeRefused:
		return &c.Refused
	case OutcomeOther:
		return &c.Other
	}
	return nil
}

func (c *OutcomeCounts) add(o Outcome) {
	if p := c.field(o); p != nil {
		*p++
	}
}

// Picture is a judged history drawn over its clock: the attempts of each
// moment by outcome, the money moved more than once as it piles up, and the broken
// rules that caused the loss. It is plain data, the same in Go, in the
// browser (as JSON) and in the classroom's report; SVG draws it.
type Picture struct {
	// Origin is the clock's zero: every _ms field counts from it.
	Origin time.Time `json:"origin"`
	// StepMS is how much of the clock one bucket covers; SpanMS is all the
	// buckets together.
	StepMS int64 `json:"step_ms"`
	SpanMS int64 `json:"span_ms"`
	// Outcomes lists the outcomes in stacking order, bottom first.
	Outcomes []Outcome       `json:"outcomes"`
	Buckets  []PictureBucket `json:"buckets"`
	// Totals counts every attempt by outcome; Totals.Sum() is the
	// summary's attempts.
	Totals OutcomeCounts `json:"totals"`
	// Unanswered counts the attempts whose answer never reached the client,
	// whatever their outcome (the summary's lost_responses): an attempt
	// that paid and whose answer was lost is paid-once or paid-again, and
	// still unanswered.
	Unanswered int `json:"unanswered"`
	// PaidTwice is the won of every transfer that paid an intent already
	// paid, counted at the intent's amount as the checker does: the
	// summary's paid_twice, and the money line's end.
	PaidTwice int64 `json:"paid_twice"`
	// Unattributed counts transfers that no attempt could be tied to (a
	// server that paid more often than it was asked, or a transfer whose
	// answer was lost without a word): they count in PaidTwice, at the
	// last attempt of their intent, but in no attempt's outcome.
	Unattributed int `json:"unattributed"`
	// Causes lists the broken rules, in the rules' order.
	Causes []PictureCause `json:"causes"`
	// Samples is the most attempts a bucket lists.
	Samples int     `json:"samples"`
	Summary Summary `json:"summary"`
}

// PictureBucket is one stretch of the clock, [FromMS, ToMS).
type PictureBucket struct {
	N      int   `json:"n"`
	FromMS int64 `json:"from_ms"`
	ToMS   int64 `json:"to_ms"`
	// Attempts counts the attempts sent in this stretch, Counts the same by
	// outcome, Unanswered those whose answer never reached the client.
	Attempts   int           `json:"attempts"`
	Counts     OutcomeCounts `json:"counts"`
	Unanswered int           `json:"unanswered"`
	// PaidTwice is the money moved more than once from the start of the clock to
	// the end of this bucket, in won.
	PaidTwice int64 `json:"paid_twice"`
	// Sample lists at most Picture.Samples of the bucket's attempts in the
	// order they were sent; when there are more, the duplicates and the
	// first payments are kept before the rest.
	Sample []PictureAttempt `json:"sample"`
}

// PictureAttempt is one attempt as a bucket lists it, enough for a page to
// open "the attempts at this moment" in a race view.
type PictureAttempt struct {
	// Index is the attempt's place in History.Attempts.
	Index     int     `json:"index"`
	Lane      string  `json:"lane"`
	Intent    string  `json:"intent"`
	Customer  string  `json:"customer"`
	Key       string  `json:"key"`
	Status    int     `json:"status"`
	Outcome   Outcome `json:"outcome"`
	SentMS    int64   `json:"sent_ms"`
	Replayed  bool    `json:"replayed"`
	Delivered bool    `json:"delivered"`
}

// PictureCause is one broken rule and what it cost.
type PictureCause struct {
	Rule Rule `json:"rule"`
	// Violations counts every violation of the rule, not only the examples
	// the report keeps.
	Violations int `json:"violations"`
	// Won is the money involved where the rule says what it is (WonKnown):
	// paid twice (rule 1), answered as sent but never sent (rules 2, 4 and
	// 5: the amounts of the wrongly answered requests), created or
	// destroyed (rule 6). Rules 3 and 7 involve no sum of their own.
	Won      int64 `json:"won"`
	WonKnown bool  `json:"won_known"`
}

// PictureOptions shape a picture's clock and lists. The zero value draws
// the history's own span with the default bounds.
type PictureOptions struct {
	// Origin is the clock's zero; the zero time means the first attempt's
	// SentAt.
	Origin time.Time
	// Span is the least stretch of clock the picture shows from Origin (a
	// day shows all of itself even if its evening was quiet); the last
	// attempt always fits.
	Span time.Duration
	// Samples bounds the attempts each bucket lists; 0 means
	// DefaultPictureSamples.
	Samples int
}

// Bounds on a picture.
const (
	// MaxPictureBuckets and MinPictureBuckets bound the columns: the
	// bucket's length is the shortest round length that fits the span in
	// MaxPictureBuckets, and the ladder of lengths never more than
	// doubles, so a span of 48 ms or more gets 48 to 96 buckets. A
	// shorter one gets MinPictureBuckets buckets of 1 ms.
	MaxPictureBuckets = 96
	MinPictureBuckets = 48
	// DefaultPictureSamples is how many attempts a bucket lists by default.
	DefaultPictureSamples = 50
)

// bucketSteps are the round lengths a bucket may have, in ms: each at most
// twice the one before, so that the number of buckets stays within a
// factor of two.
var bucketSteps = func() []int64 {
	const s, m, h = 1000, 60 * 1000, 60 * 60 * 1000
	steps := []int64{1, 2, 3, 5, 10, 20, 25, 50, 100, 200, 250, 500,
		s, 2 * s, 3 * s, 5 * s, 10 * s, 15 * s, 20 * s, 30 * s,
		m, 2 * m, 3 * m, 5 * m, 10 * m, 15 * m, 20 * m, 30 * m,
		h, 2 * h, 3 * h, 4 * h, 6 * h, 8 * h, 12 * h, 24 * h}
	for d := int64(48 * h); d <= 10_000*24*h; d *= 2 {
		steps = append(steps, d)
	}
	return steps
}()

// bucketStep is the shortest round length that fits spanMS into
// MaxPictureBuckets buckets.
func bucketStep(spanMS int64) int64 {
	for _, s := range bucketSteps {
		if (spanMS+s-1)/s <= MaxPictureBuckets {
			return s
		}
	}
	return bucketSteps[len(bucketSteps)-1]
}

// NewPicture draws a judged history; rep must be Check(h). It reads the
// history as the checker does (the same intents, the same transfers per
// intent), so that the picture's totals are the report's.
//
// Every attempt gets exactly one outcome, decided in this order:
//
//  1. Money first. An attempt that made a transfer is paid-once when that
//     transfer was its intent's first, paid-again otherwise, whatever the
//     client heard: a retry's money is what the picture is about. With a
//     ledger (in-process), a transfer is made by the first attempt that was
//     answered, not from the key table, with a success naming its
//     transfer_id; a transfer that no answer names is given to the first
//     attempt under its key that got no answer at all (a crash after the
//     commit). Transfers count for an intent, and in ledger order, as the
//     checker counts them. Without a ledger (a black-box endpoint),
//     History.TransfersPerIntent says how many transfers each intent
//     caused; they are given to the intent's attempts answered with a
//     success that was not a replay, then to those that got no answer at
//     all (they may have run), and ordered by when they were sent.
//  2. lost: the answer never reached the client (Delivered false or
//     status 0).
//  3. replayed: the answer came from the key table (Attempt.Replayed), or
//     was a success that moved no money, which only a remembered answer
//     can be.
//  4. 409, then 422, then refused (any other 4xx), then other.
//
// So, with Unattributed zero, Totals.PaidOnce + Totals.PaidAgain is the
// summary's transfers and Totals.PaidAgain its duplicates; PaidTwice is
// always the summary's paid_twice, Unanswered its lost_responses and
// Totals.Sum() its attempts. 409, 422 and replayed count only the answers
// the client read (the summary counts all).
func NewPicture(h History, rep Report, o PictureOptions) Picture {
	c := newChecker(h)
	samples := o.Samples
	if samples <= 0 {
		samples = DefaultPictureSamples
	}
	origin := o.Origin
	if origin.IsZero() {
		for i, a := range h.Attempts {
			if i == 0 || a.SentAt.Before(origin) {
				origin = a.SentAt
			}
		}
	}
	offset := func(a Attempt) int64 { return max(0, a.SentAt.Sub(origin).Milliseconds()) }
	spanMS := max(int64(1), o.Span.Milliseconds())
	for _, a := range h.Attempts {
		spanMS = max(spanMS, offset(a)+1)
	}
	step := bucketStep(spanMS)
	n := int((spanMS + step - 1) / step)
	if step == 1 {
		n = max(n, MinPictureBuckets)
	}
	p := Picture{Origin: origin, StepMS: step, SpanMS: step * int64(n), Outcomes: Outcomes,
		Buckets: make([]PictureBucket, n), Samples: samples, Summary: rep.Summary, Causes: []PictureCause{}}
	for i := range p.Buckets {
		p.Buckets[i] = PictureBucket{N: i, FromMS: int64(i) * step, ToMS: int64(i+1) * step, Sample: []PictureAttempt{}}
	}
	bucketOf := func(i int) int { return min(n-1, int(offset(h.Attempts[i])/step)) }

	paid, money := c.payments()
	outcomes := make([]Outcome, len(h.Attempts))
	byBucket := make([][]int, n)
	for i, a := range h.Attempts {
		out := paid[i]
		if out == "" {
			out = classify(a)
		}
		outcomes[i] = out
		b := &p.Buckets[bucketOf(i)]
		b.Attempts++
		b.Counts.add(out)
		p.Totals.add(out)
		if !a.Delivered {
			b.Unanswered++
			p.Unanswered++
		}
		byBucket[b.N] = append(byBucket[b.N], i)
	}
	again := make([]int64, n)
	for _, m := range money {
		if m.attempt < 0 {
			p.Unattributed++
		}
		if m.won > 0 && m.at >= 0 {
			again[bucketOf(m.at)] += m.won
		}
	}
	var total int64
	for i := range p.Buckets {
		total += again[i]
		p.Buckets[i].PaidTwice = total
		p.Buckets[i].Sample = sampleOf(h, byBucket[i], outcomes, samples, offset)
	}
	p.PaidTwice = total
	p.Causes = c.causes(rep)
	return p
}

// classify is the outcome of an attempt that made no transfer.
func classify(a Attempt) Outcome {
	switch {
	case !a.Delivered || a.Status == 0:
		return OutcomeLost
	case a.Replayed || Success(a.Status):
		return OutcomeReplayed
	case a.Status == 409:
		return OutcomeConflict
	case a.Status == 422:
		return OutcomeMismatch
	case a.Status >= 400 && a.Status < 500:
		return OutcomeRefused
	}
	return OutcomeOther
}

// samplePriority orders what a full bucket keeps: the money first.
var samplePriority = map[Outcome]int{OutcomePaidAgain: 0, OutcomePaidOnce: 1, OutcomeMismatch: 2, OutcomeConflict: 3,
	OutcomeLost: 4, OutcomeRefused: 5, OutcomeOther: 6, OutcomeReplayed: 7}

func sampleOf(h History, idx []int, outcomes []Outcome, limit int, offset func(Attempt) int64) []PictureAttempt {
	keep := idx
	if len(idx) > limit {
		keep = append([]int(nil), idx...)
		sort.SliceStable(keep, func(i, j int) bool {
			return samplePriority[outcomes[keep[i]]] < samplePriority[outcomes[keep[j]]]
		})
		keep = keep[:limit]
		sort.Ints(keep)
	}
	out := make([]PictureAttempt, 0, len(keep))
	for _, i := range keep {
		a := h.Attempts[i]
		out = append(out, PictureAttempt{Index: i, Lane: a.Lane, Intent: a.Intent, Customer: a.Customer, Key: a.Key,
			Status: a.Status, Outcome: outcomes[i], SentMS: offset(a), Replayed: a.Replayed, Delivered: a.Delivered})
	}
	return out
}

// DayPictureOptions draws a day on its own clock: from DayStart, the day's
// midnight, through its last second (or its last retry, if later).
func DayPictureOptions(p DayParams) PictureOptions {
	return PictureOptions{Origin: DayStart, Span: time.Duration(p.DaySeconds) * time.Second}
}

// OnDayClock returns h with every attempt dated when the day sends it,
// DayStart plus its AtMS. ReplayDay dates attempts so already; a replay
// over HTTP dates them by the wall clock, which squeezes a day into the
// minute it took to send, so its picture is drawn on the day's clock
// instead. h must hold d's attempts index for index (as both replays
// record them); otherwise h is returned as it is.
func (d Day) OnDayClock(h History) History {
	if len(h.Attempts) != len(d.Attempts) {
		return h
	}
	attempts := make([]Attempt, len(h.Attempts))
	for i, a := range h.Attempts {
		a.SentAt = DayStart.Add(time.Duration(d.Attempts[i].AtMS) * time.Millisecond)
		attempts[i] = a
	}
	h.Attempts = attempts
	return h
}
