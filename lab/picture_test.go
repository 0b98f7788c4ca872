package lab_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/lab"
	"idemlab/store/sqlite"
)

// pic is a hand-built history: one intent of 10,000 won from alice to bob,
// attempts a few milliseconds apart.
type pic struct {
	h  lab.History
	ms int
}

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func newPic() *pic {
	return &pic{h: lab.History{
		Intents:       []lab.Intent{{ID: "i1", Customer: "c1", From: "alice", To: "bob", Amount: 10_000}},
		StartBalances: map[string]int64{"alice": 100_000, "bob": 0},
	}}
}

func transferBody(amount int64) []byte {
	return fmt.Appendf(nil, `{"from":"alice","to":"bob","amount":%d}`, amount)
}

func created(id string, amount int64) []byte {
	return fmt.Appendf(nil, `{"transfer_id":%q,"from":"alice","to":"bob","amount":%d}`, id, amount)
}

// send records one attempt of intent i1 under key k1 (or key, if given).
func (p *pic) send(lane string, status int, response []byte, delivered, replayed bool, opts ...func(*lab.Attempt)) *pic {
	a := lab.Attempt{Lane: lane, Intent: "i1", Customer: "c1", Key: "k1", Body: transferBody(10_000), Status: status,
		Response: response, Delivered: delivered, Replayed: replayed, SentAt: t0.Add(time.Duration(p.ms) * time.Millisecond)}
	for _, o := range opts {
		o(&a)
	}
	p.h.Attempts = append(p.h.Attempts, a)
	p.ms += 7
	return p
}

// ledger records the transfers under key k1 and the balances they leave.
func (p *pic) ledger(ids ...string) *pic {
	p.h.Ledger = []lab.LedgerTransfer{}
	p.h.EndBalances = map[string]int64{"alice": 100_000, "bob": 0}
	for _, id := range ids {
		p.h.Ledger = append(p.h.Ledger, lab.LedgerTransfer{ID: id, Customer: "c1", Key: "k1", From: "alice", To: "bob", Amount: 10_000})
		p.h.EndBalances["alice"] -= 10_000
		p.h.EndBalances["bob"] += 10_000
	}
	return p
}

// blackBox says how many transfers the intent caused, as the grader infers
// from balances.
func (p *pic) blackBox(n int) *pic {
	p.h.Ledger, p.h.TransfersPerIntent = nil, map[string]int{"i1": n}
	p.h.EndBalances = map[string]int64{"alice": 100_000 - int64(n)*10_000, "bob": int64(n) * 10_000}
	return p
}

func outcomesOf(p lab.Picture) []lab.Outcome {
	var out []lab.Outcome
	for _, b := range p.Buckets {
		for _, a := range b.Sample {
			out = append(out, a.Outcome)
		}
	}
	return out
}

// requireAgreesWithSummary checks the picture's totals against the
// checker's summary wherever both count the same thing.
func requireAgreesWithSummary(t testing.TB, h lab.History, p lab.Picture) {
	t.Helper()
	s := p.Summary
	require.Equal(t, lab.Check(h).Summary, s, "the picture carries the report's summary")
	assert.Equal(t, s.Attempts, p.Totals.Sum(), "every attempt has one outcome")
	assert.Equal(t, s.PaidTwice, p.PaidTwice, "the money line ends at the summary's paid twice")
	assert.Equal(t, s.Lost, p.Unanswered, "unanswered is the summary's lost responses")
	if p.Unattributed == 0 {
		assert.Equal(t, s.Transfers, p.Totals.PaidOnce+p.Totals.PaidAgain, "every transfer is an attempt's")
		assert.Equal(t, s.Duplicates, p.Totals.PaidAgain, "paid again is the summary's duplicates")
	}
	// The summary counts every 409, 422 and replay; the picture those whose
	// answer reached the client (a lost one is lost).
	var lost409, lost422, readReplays int
	for _, a := range h.Attempts {
		switch {
		case !a.Delivered && a.Status == 409:
			lost409++
		case !a.Delivered && a.Status == 422:
			lost422++
		case a.Delivered && a.Replayed:
			readReplays++
		}
	}
	assert.Equal(t, s.Conflicts, p.Totals.Conflict+lost409)
	assert.Equal(t, s.Mismatches, p.Totals.Mismatch+lost422)
	assert.LessOrEqual(t, readReplays, p.Totals.Replayed, "a replay the client read is replayed")

	var sum lab.OutcomeCounts
	attempts, unanswered := 0, 0
	var money int64
	for i, b := range p.Buckets {
		assert.Equal(t, i, b.N)
		assert.Equal(t, int64(i)*p.StepMS, b.FromMS, "buckets are contiguous")
		assert.Equal(t, b.FromMS+p.StepMS, b.ToMS)
		assert.Equal(t, b.Attempts, b.Counts.Sum())
		assert.LessOrEqual(t, len(b.Sample), min(b.Attempts, p.Samples))
		assert.GreaterOrEqual(t, b.PaidTwice, money, "the money paid twice only grows")
		money = b.PaidTwice
		attempts += b.Attempts
		unanswered += b.Unanswered
		for _, o := range lab.Outcomes {
			sum = addCount(sum, o, b.Counts.Of(o))
		}
		for _, a := range b.Sample {
			assert.GreaterOrEqual(t, a.SentMS, b.FromMS, "attempt %s is in its bucket", a.Lane)
			assert.Less(t, a.SentMS, b.ToMS, "attempt %s is in its bucket", a.Lane)
		}
	}
	assert.Equal(t, p.Totals, sum, "the buckets add up to the totals")
	assert.Equal(t, s.Attempts, attempts)
	assert.Equal(t, p.Unanswered, unanswered)
	assert.Equal(t, p.PaidTwice, money)
	assert.Equal(t, p.StepMS*int64(len(p.Buckets)), p.SpanMS)
}

func addCount(c lab.OutcomeCounts, o lab.Outcome, n int) lab.OutcomeCounts {
	b, _ := json.Marshal(c)
	var m map[lab.Outcome]int
	_ = json.Unmarshal(b, &m)
	m[o] += n
	b, _ = json.Marshal(m)
	var out lab.OutcomeCounts
	_ = json.Unmarshal(b, &out)
	return out
}

func TestPictureClassifiesEveryAttempt(t *testing.T) {
	const paid, again = lab.OutcomePaidOnce, lab.OutcomePaidAgain
	otherKey := func(a *lab.Attempt) { a.Body = transferBody(12_000) }
	noKey := func(a *lab.Attempt) { a.Key = "" }
	cases := []struct {
		name         string
		h            lab.History
		want         []lab.Outcome
		paidTwice    int64
		unanswered   int
		unattributed int
	}{
		{"a naive double payment: the lost answer paid, and so did its retry",
			newPic().send("a1", 201, created("tr_000001", 10_000), false, false).
				send("a2", 201, created("tr_000002", 10_000), true, false).ledger("tr_000001", "tr_000002").h,
			[]lab.Outcome{paid, again}, 10_000, 1, 0},
		{"the later commit is the duplicate, whoever was sent first",
			newPic().send("a1", 201, created("tr_000002", 10_000), true, false).
				send("a2", 201, created("tr_000001", 10_000), true, false).ledger("tr_000001", "tr_000002").h,
			[]lab.Outcome{again, paid}, 10_000, 0, 0},
		{"a retry while the first is in progress gets 409",
			newPic().send("a1", 201, created("tr_000001", 10_000), true, false).
				send("a2", 409, []byte(`{"status":409}`), true, false).ledger("tr_000001").h,
			[]lab.Outcome{paid, lab.OutcomeConflict}, 0, 0, 0},
		{"a corrected amount under the same key gets 422",
			newPic().send("a1", 201, created("tr_000001", 10_000), true, false).
				send("a2", 422, []byte(`{"status":422}`), true, false, otherKey).ledger("tr_000001").h,
			[]lab.Outcome{paid, lab.OutcomeMismatch}, 0, 0, 0},
		{"a retry after a lost answer is replayed",
			newPic().send("a1", 201, created("tr_000001", 10_000), false, false).
				send("a2", 201, created("tr_000001", 10_000), true, true).ledger("tr_000001").h,
			[]lab.Outcome{paid, lab.OutcomeReplayed}, 0, 1, 0},
		{"an answer lost before anything moved is lost",
			newPic().send("a1", 0, nil, false, false).
				send("a2", 201, created("tr_000001", 10_000), true, false).ledger("tr_000001").h,
			[]lab.Outcome{lab.OutcomeLost, paid}, 0, 1, 0},
		{"a lost 409 is lost: the client never read it",
			newPic().send("a1", 201, created("tr_000001", 10_000), true, false).
				send("a2", 409, []byte(`{"status":409}`), false, false).ledger("tr_000001").h,
			[]lab.Outcome{paid, lab.OutcomeLost}, 0, 1, 0},
		{"a crash after the commit: the transfer is the attempt's that got no answer",
			newPic().send("a1", 0, nil, false, false).
				send("a2", 201, created("tr_000001", 10_000), true, true).ledger("tr_000001").h,
			[]lab.Outcome{paid, lab.OutcomeReplayed}, 0, 1, 0},
		{"refusals and server errors",
			newPic().send("a1", 400, []byte(`{}`), true, false, noKey).
				send("a2", 402, []byte(`{}`), true, false).
				send("a3", 503, []byte(`{}`), true, false).ledger().h,
			[]lab.Outcome{lab.OutcomeRefused, lab.OutcomeRefused, lab.OutcomeOther}, 0, 0, 0},
		{"a black box without a ledger: the cut attempt paid first, its retry again",
			newPic().send("a1", 0, nil, false, false).
				send("a2", 201, created("x", 10_000), true, false).
				send("a3", 201, created("x", 10_000), true, true).blackBox(2).h,
			[]lab.Outcome{paid, again, lab.OutcomeReplayed}, 10_000, 1, 0},
		{"a black box: a success is the payment before an attempt that got no answer",
			newPic().send("a1", 0, nil, false, false).
				send("a2", 201, created("x", 10_000), true, false).blackBox(1).h,
			[]lab.Outcome{lab.OutcomeLost, paid}, 0, 1, 0},
		{"a black box: a success that moved no money and does not say it is a replay",
			newPic().send("a1", 201, created("x", 10_000), true, false).
				send("a2", 201, created("x", 10_000), true, false).blackBox(1).h,
			[]lab.Outcome{paid, lab.OutcomeReplayed}, 0, 0, 0},
		{"a black box that paid more often than it was asked",
			newPic().send("a1", 201, created("x", 10_000), true, false).blackBox(3).h,
			[]lab.Outcome{paid}, 20_000, 0, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := lab.NewPicture(tc.h, lab.Check(tc.h), lab.PictureOptions{})
			assert.Equal(t, tc.want, outcomesOf(p))
			assert.Equal(t, tc.paidTwice, p.PaidTwice)
			assert.Equal(t, tc.unanswered, p.Unanswered)
			assert.Equal(t, tc.unattributed, p.Unattributed)
			requireAgreesWithSummary(t, tc.h, p)
		})
	}
}

func TestPictureNamesTheCausesOfLoss(t *testing.T) {
	h := newPic().send("a1", 201, created("tr_000001", 10_000), false, false).
		send("a2", 201, created("tr_000002", 10_000), true, false).
		send("a3", 201, created("tr_000002", 12_000), true, true, func(a *lab.Attempt) { a.Body = transferBody(12_000) }).
		ledger("tr_000001", "tr_000002").h
	p := lab.NewPicture(h, lab.Check(h), lab.PictureOptions{})
	var got []string
	for _, c := range p.Causes {
		got = append(got, fmt.Sprintf("%d %s ×%d %d %v", c.Rule.N, c.Rule.Title, c.Violations, c.Won, c.WonKnown))
	}
	assert.Equal(t, []string{
		"1 at most one transfer per intent ×1 10000 true",
		"2 a request that differs from the keyed one is never answered with success ×1 12000 true",
		"3 a replay is byte-identical to the first response ×1 0 false",
	}, got)

	clean := newPic().send("a1", 201, created("tr_000001", 10_000), true, false).ledger("tr_000001").h
	assert.Empty(t, lab.NewPicture(clean, lab.Check(clean), lab.PictureOptions{}).Causes)
}

// TestPictureCountsEveryViolation gives rule 1 more violations than the
// report keeps as examples: the picture counts them all.
func TestPictureCountsEveryViolation(t *testing.T) {
	var h lab.History
	h.StartBalances = map[string]int64{"alice": 1_000_000, "bob": 0}
	h.EndBalances = map[string]int64{"alice": 1_000_000, "bob": 0}
	h.Ledger = []lab.LedgerTransfer{}
	for i := range 9 {
		in := fmt.Sprintf("i%d", i)
		key := fmt.Sprintf("k%d", i)
		h.Intents = append(h.Intents, lab.Intent{ID: in, Customer: "c1", From: "alice", To: "bob", Amount: 1000})
		for try := range 2 {
			id := fmt.Sprintf("tr_%06d", 2*i+try+1)
			h.Attempts = append(h.Attempts, lab.Attempt{Lane: fmt.Sprintf("%s.%d", in, try+1), Intent: in, Customer: "c1", Key: key,
				Body: transferBody(1000), Status: 201, Response: created(id, 1000), Delivered: true, SentAt: t0.Add(time.Duration(len(h.Attempts)) * time.Second)})
			h.Ledger = append(h.Ledger, lab.LedgerTransfer{ID: id, Customer: "c1", Key: key, From: "alice", To: "bob", Amount: 1000})
			h.EndBalances["alice"] -= 1000
			h.EndBalances["bob"] += 1000
		}
	}
	rep := lab.Check(h)
	require.Len(t, rep.Rule(lab.RuleOneTransfer).Violations, 5, "the report keeps five examples")
	p := lab.NewPicture(h, rep, lab.PictureOptions{})
	require.NotEmpty(t, p.Causes)
	require.Equal(t, lab.RuleOneTransfer, p.Causes[0].Rule)
	assert.Equal(t, 9, p.Causes[0].Violations)
	assert.Equal(t, int64(9_000), p.Causes[0].Won)
	requireAgreesWithSummary(t, h, p)
}

func TestPictureBucketsFitTheSpan(t *testing.T) {
	cases := []struct {
		name   string
		last   time.Duration // the last attempt, after the first at zero
		span   time.Duration // PictureOptions.Span
		stepMS int64
		n      int
	}{
		{"everything at once", 0, 0, 1, 48},
		{"a storm of 0.5 s", 499 * time.Millisecond, 0, 10, 50},
		{"a storm of 0.4 s", 400 * time.Millisecond, 0, 5, 81},
		{"seven seconds", 7 * time.Second, 0, 100, 71},
		{"an hour", time.Hour, 0, 60_000, 61},
		{"a day shown whole", 3 * time.Hour, 24 * time.Hour, 15 * 60_000, 96},
		{"a day and its late retries", 25 * time.Hour, 24 * time.Hour, 20 * 60_000, 76},
		{"three days", 72 * time.Hour, 0, 60 * 60_000, 73},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newPic().send("a1", 409, nil, true, false).h
			a := h.Attempts[0]
			a.Lane, a.SentAt = "a2", a.SentAt.Add(tc.last)
			h.Attempts = append(h.Attempts, a)
			p := lab.NewPicture(h, lab.Check(h), lab.PictureOptions{Origin: t0, Span: tc.span})
			assert.Equal(t, tc.stepMS, p.StepMS)
			assert.Len(t, p.Buckets, tc.n)
			last := int(tc.last.Milliseconds() / tc.stepMS)
			if last == 0 {
				assert.Equal(t, 2, p.Buckets[0].Attempts)
			} else {
				assert.Equal(t, 1, p.Buckets[0].Attempts, "the first attempt opens the clock")
				assert.Equal(t, 1, p.Buckets[last].Attempts, "the last attempt fits")
			}
			requireAgreesWithSummary(t, h, p)
		})
	}
}

// TestPictureSamplesKeepTheMoney fills one bucket with more attempts than
// it lists: the duplicates stay in the list.
func TestPictureSamplesKeepTheMoney(t *testing.T) {
	p := newPic()
	for i := range 30 {
		p.send(fmt.Sprintf("c%d", i), 409, nil, true, false)
	}
	p.send("dup", 201, created("tr_000002", 10_000), true, false)
	p.send("first", 201, created("tr_000001", 10_000), true, false)
	p.ledger("tr_000001", "tr_000002")
	pic := lab.NewPicture(p.h, lab.Check(p.h), lab.PictureOptions{Samples: 5, Span: time.Hour})
	b := pic.Buckets[0]
	require.Equal(t, 32, b.Attempts)
	require.Len(t, b.Sample, 5)
	assert.Equal(t, "c0", b.Sample[0].Lane, "the list is in the order sent")
	assert.Equal(t, []string{"dup", "first"}, []string{b.Sample[3].Lane, b.Sample[4].Lane})
	assert.Equal(t, lab.OutcomePaidAgain, b.Sample[3].Outcome, "the later commit paid again")
	assert.Equal(t, 30, b.Sample[3].Index)
}

// TestPictureOfAReplayedDay draws a replayed day at three levels, in-process
// with its ledger and then as a black box sees it (transfers inferred from
// balances), and holds both to the checker's summary.
func TestPictureOfAReplayedDay(t *testing.T) {
	p := lab.DefaultDayParams()
	p.Seed, p.Customers, p.Intents = 11, 8, 150
	d := lab.GenerateDay(p)
	for _, level := range []string{engine.LevelNaive, engine.LevelUnique, engine.LevelScoped} {
		t.Run(level, func(t *testing.T) {
			db, err := sqlite.OpenMemory()
			require.NoError(t, err)
			defer db.Close()
			tally, err := lab.ReplayDay(context.Background(), d, db, engine.MustPreset(level), lab.ReplayOptions{})
			require.NoError(t, err)
			pic := lab.NewPicture(tally.History, tally.Report, lab.DayPictureOptions(d.Params))
			assert.Equal(t, lab.DayStart, pic.Origin, "a day's clock starts at its midnight")
			assert.Equal(t, int64(15*60_000), pic.StepMS)
			assert.Len(t, pic.Buckets, 96)
			assert.Zero(t, pic.Unattributed, "in-process, every transfer is an attempt's")
			requireAgreesWithSummary(t, tally.History, pic)
			assert.Equal(t, tally.Report.Summary.Replays, pic.Totals.Replayed+lostReplays(tally.History),
				"in-process, a success that moved no money is always marked as a replay")
			if level == engine.LevelNaive {
				assert.Positive(t, pic.Totals.PaidAgain)
				require.NotEmpty(t, pic.Causes)
				assert.Equal(t, lab.RuleOneTransfer, pic.Causes[0].Rule)
				assert.Equal(t, tally.Report.Summary.PaidTwice, pic.Causes[0].Won)
			}
			if level == engine.LevelScoped {
				assert.Zero(t, pic.Totals.PaidAgain)
				assert.Empty(t, pic.Causes)
			}

			bb := tally.History
			bb.Ledger = nil
			bb.TransfersPerIntent = lab.InferTransfers(bb.Intents, bb.Attempts, bb.StartBalances, bb.EndBalances)
			bpic := lab.NewPicture(bb, lab.Check(bb), lab.DayPictureOptions(d.Params))
			requireAgreesWithSummary(t, bb, bpic)
			assert.Equal(t, pic.PaidTwice, bpic.PaidTwice, "the black box sees the same money paid twice")
		})
	}
}

func lostReplays(h lab.History) int {
	n := 0
	for _, a := range h.Attempts {
		if a.Replayed && !a.Delivered {
			n++
		}
	}
	return n
}

func TestOnDayClockDatesAttemptsAsTheDaySendsThem(t *testing.T) {
	d := lab.GenerateDay(lab.DayParams{Seed: 2, Customers: 3, Intents: 10})
	h := lab.History{Attempts: make([]lab.Attempt, len(d.Attempts))}
	for i := range h.Attempts {
		h.Attempts[i].SentAt = t0 // a replay over HTTP: everything in the same second
	}
	got := d.OnDayClock(h)
	for i, a := range got.Attempts {
		assert.Equal(t, lab.DayStart.Add(time.Duration(d.Attempts[i].AtMS)*time.Millisecond), a.SentAt)
	}
	assert.Equal(t, t0, h.Attempts[0].SentAt, "the history given is left as it was")
	short := lab.History{Attempts: h.Attempts[:1]}
	assert.Equal(t, short, d.OnDayClock(short), "a history of another day is not redated")
}

func TestPictureJSONNamesEveryOutcome(t *testing.T) {
	h := stormHistory()
	b, err := json.Marshal(lab.NewPicture(h, lab.Check(h), lab.PictureOptions{}))
	require.NoError(t, err)
	var got struct {
		StepMS  int64 `json:"step_ms"`
		Totals  map[string]int
		Buckets []struct {
			Counts map[string]int
			Sample []map[string]any
		}
		Causes []struct {
			Rule       struct{ N int }
			Violations int
		}
		PaidTwice int64 `json:"paid_twice"`
	}
	require.NoError(t, json.Unmarshal(b, &got))
	for _, o := range lab.Outcomes {
		assert.Equal(t, 1, got.Totals[string(o)], "totals name %s", o)
		assert.Contains(t, got.Buckets[0].Counts, string(o), "every bucket names %s", o)
	}
	assert.Equal(t, int64(10_000), got.PaidTwice)
	require.NotEmpty(t, got.Buckets[0].Sample)
	for _, k := range []string{"index", "lane", "intent", "customer", "key", "status", "outcome", "sent_ms", "replayed", "delivered"} {
		assert.Contains(t, got.Buckets[0].Sample[0], k)
	}
}
