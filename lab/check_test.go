package lab_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/lab"
	"idemlab/store/sqlite"
)

// runStory plays a small story in-process and checks it: a transfer whose
// response is lost, then three simultaneous retries, then a corrected amount
// under the same key, then another customer reusing the key.
func runStory(t *testing.T, p engine.Policy) lab.Report {
	t.Helper()
	db, err := sqlite.OpenMemory()
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	for id, bal := range map[string]int64{"alice": 1_000_000, "bob": 0, "carol": 100_000} {
		_, err := db.PutAccount(ctx, id, bal)
		require.NoError(t, err)
	}
	snap, err := db.Snapshot(ctx)
	require.NoError(t, err)
	start := lab.BalancesOf(snap.Accounts)
	hook := func(ctx context.Context, s engine.Step) engine.Fault {
		if s.Lane == "a1" && s.Phase == engine.PhaseRespond {
			return engine.FaultLoseResponse
		}
		return engine.FaultNone
	}
	eng := engine.New(db, p, engine.Options{Hook: hook, PaymentLatency: 2 * time.Millisecond})
	var mu sync.Mutex
	var h lab.History
	send := func(lane, intent, customer, key, body string) {
		req := engine.Request{Method: "POST", Path: "/transfers", Customer: customer, HasCustomer: true,
			Key: []string{`"` + key + `"`}, Body: []byte(body), Lane: lane, Intent: intent}
		res := eng.Handle(ctx, req)
		mu.Lock()
		h.Attempts = append(h.Attempts, lab.AttemptOf(req, res, time.Now()))
		mu.Unlock()
	}
	h.Intents = []lab.Intent{{ID: "i1", Customer: "c1", From: "alice", To: "bob", Amount: 200_000},
		{ID: "i2", Customer: "c1", From: "alice", To: "bob", Amount: 300_000},
		{ID: "i3", Customer: "c2", From: "carol", To: "bob", Amount: 1_000}}
	body := `{"from":"alice","to":"bob","amount":200000}`
	send("a1", "i1", "c1", "k1", body)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); send(fmt.Sprintf("a%d", i+2), "i1", "c1", "k1", body) }()
	}
	wg.Wait()
	send("a5", "i2", "c1", "k1", `{"from":"alice","to":"bob","amount":300000}`)
	send("a6", "i3", "c2", "k1", `{"from":"carol","to":"bob","amount":1000}`)
	snap, err = db.Snapshot(ctx)
	require.NoError(t, err)
	h.Ledger, h.StartBalances, h.EndBalances = lab.LedgerOf(snap.Transfers), start, lab.BalancesOf(snap.Accounts)
	h.Charges = lab.ChargesOf(snap.Charges)
	h.Retention, h.RetryHorizon = p.Retention.D(), time.Hour
	h.Keyless = !p.Keyed()
	return lab.Check(h)
}

func TestCheckerOnTheLadder(t *testing.T) {
	want := map[string][]string{
		engine.LevelNaive:       {"one-transfer-per-intent", "replay-is-byte-identical", "one-charge-per-intent"},
		engine.LevelUnique:      {"different-request-never-succeeds", "replay-is-byte-identical", "completion-has-its-transfer", "customers-see-own-responses", "retention-outlasts-retries"},
		engine.LevelFingerprint: {"replay-is-byte-identical", "retention-outlasts-retries"},
		engine.LevelInProgress:  {"replay-is-byte-identical", "retention-outlasts-retries"},
		engine.LevelReplay:      {"retention-outlasts-retries"},
		engine.LevelScoped:      nil,
	}
	for _, level := range engine.Levels() {
		t.Run(level, func(t *testing.T) {
			rep := runStory(t, engine.MustPreset(level))
			assert.ElementsMatch(t, want[level], rep.Broken(), "%+v", rep.Rules)
			assert.Equal(t, len(want[level]) == 0, rep.OK)
			// Every violation is said in Korean too, for the Korean pages.
			hangul := regexp.MustCompile(`[\x{AC00}-\x{D7A3}]`)
			for _, r := range rep.Rules {
				for _, v := range r.Violations {
					assert.Regexp(t, hangul, v.MessageKo, "%s: %s", r.Rule.Name, v.Message)
				}
			}
		})
	}
}

// TestRetentionMustBeLongerThanTheHorizon: the contract asks for a
// retention longer than the clients' retry horizon, so exactly the horizon
// breaks rule 7 (a retry at its very end, from a clock a little ahead, finds
// no key), one second more holds, and 0 (forever) holds.
func TestRetentionMustBeLongerThanTheHorizon(t *testing.T) {
	cases := []struct {
		retention time.Duration
		broken    bool
	}{
		{0, false},
		{time.Hour - time.Second, true},
		{time.Hour, true},
		{time.Hour + time.Second, false},
		{24 * time.Hour, false},
	}
	for _, c := range cases {
		t.Run(c.retention.String(), func(t *testing.T) {
			assert.Equal(t, c.broken, lab.RetentionTooShort(c.retention, time.Hour))
			rep := lab.Check(lab.History{Retention: c.retention, RetryHorizon: time.Hour})
			assert.Equal(t, c.broken, !rep.Rule(lab.RuleRetention).OK)
		})
	}
}

func TestAnswerDifferenceSaysItOutright(t *testing.T) {
	first := []byte(`{"transfer_id":"t1","amount":100,"balance_after":900}`)
	cases := map[string]struct {
		status int
		body   string
		want   string
	}{
		"status only": {200, string(first), "status 200 against the first answer's 201"},
		"a member":    {201, `{"transfer_id":"t1","amount":100,"balance_after":800}`, `"balance_after" is 800 against the first answer's 900`},
		"generic":     {200, `{"status":"already_processed"}`, `status 200 against the first answer's 201; "amount" is missing`},
		"other bytes": {201, `{"amount":100,"transfer_id":"t1","balance_after":900}`, "the same JSON members written with other bytes"},
		"not json":    {201, "done", "the bodies part at byte 0"},
		"same answer": {201, string(first), "no difference"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Contains(t, lab.AnswerDifference(201, first, c.status, []byte(c.body)), c.want)
		})
	}
}

// TestExtraPaymentsCountsThePaymentsAfterTheFirst: the one sentence for
// money moved more than once counts the transfers after each wish's first,
// never "twice" when it was forty times, in English and in Korean.
func TestExtraPaymentsCountsThePaymentsAfterTheFirst(t *testing.T) {
	cases := []struct {
		name string
		n    int
		won  int64
		lang string
		want string
	}{
		{"none", 0, 0, "en", "no extra transfers"},
		{"one", 1, 10_000, "en", "1 extra transfer: 10,000 won moved more than once"},
		{"a naive storm of forty", 39, 390_000, "en", "39 extra transfers: 390,000 won moved more than once"},
		{"thousands", 1_234, 12_340_000, "en", "1,234 extra transfers: 12,340,000 won moved more than once"},
		{"none in Korean", 0, 0, "ko", "추가 송금 없음"},
		{"one in Korean", 1, 10_000, "ko", "추가 송금 1건: 10,000원이 중복 송금됨"},
		{"forty in Korean", 39, 390_000, "ko", "추가 송금 39건: 390,000원이 중복 송금됨"},
		{"an unknown language is English", 2, 20_000, "fr", "2 extra transfers: 20,000 won moved more than once"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, lab.ExtraPayments(tc.n, tc.won, tc.lang))
		})
	}
}

// TestRuleOneSaysTheTallysWords: a wish paid forty times breaks rule 1 in
// the tally's own words and numbers (39 extra transfers, 390,000 won), and
// never says "twice".
func TestRuleOneSaysTheTallysWords(t *testing.T) {
	h := lab.History{
		Intents:       []lab.Intent{{ID: "i0", Customer: "c", From: "alice", To: "bob", Amount: 10_000}},
		StartBalances: map[string]int64{"alice": 1_000_000, "bob": 0},
		EndBalances:   map[string]int64{"alice": 600_000, "bob": 400_000},
		Keyless:       true,
	}
	for i := range 40 {
		h.Attempts = append(h.Attempts, lab.Attempt{Lane: fmt.Sprintf("c%d.1", i), Intent: "i0", Customer: "c", Key: "k",
			Body: []byte(`{"from":"alice","to":"bob","amount":10000}`), Status: 201, Delivered: true})
		h.Ledger = append(h.Ledger, lab.LedgerTransfer{ID: fmt.Sprintf("tr_%d", i), Customer: "c", Key: "k", From: "alice", To: "bob", Amount: 10_000})
	}
	rep := lab.Check(h)
	require.Equal(t, 39, rep.Summary.Duplicates)
	require.Equal(t, int64(390_000), rep.Summary.PaidTwice)
	rr := rep.Rule(lab.RuleOneTransfer)
	require.False(t, rr.OK)
	v := rr.Violations[0]
	assert.Equal(t, "39 extra transfers: 390,000 won moved more than once (intent i0: 10,000 won sent 40 times from alice to bob)", v.Message)
	assert.Equal(t, "추가 송금 39건: 390,000원이 중복 송금됨 (의도 i0: alice 계좌에서 bob 계좌로 10,000원이 40번 지급됨)", v.MessageKo)
	for _, m := range []string{v.Message, v.MessageKo} {
		assert.True(t, strings.HasPrefix(m, lab.ExtraPayments(rep.Summary.Duplicates, rep.Summary.PaidTwice, map[bool]string{true: "ko", false: "en"}[m == v.MessageKo])),
			"the rule opens with the tally's sentence: %s", m)
		assert.NotContains(t, m, "twice")
		assert.NotContains(t, m, "두 번")
	}
}

// TestKeylessLevelSpeaksOfTheSameRequest: at naive the server keeps no key
// table, so the rules it breaks say "the same request sent again", never
// "a retry under key k1"; a level with a key table still names the key.
func TestKeylessLevelSpeaksOfTheSameRequest(t *testing.T) {
	naive := runStory(t, engine.MustPreset(engine.LevelNaive))
	rr := naive.Rule(lab.RuleByteReplay)
	require.False(t, rr.OK)
	for _, v := range rr.Violations {
		assert.True(t, strings.HasPrefix(v.Message, "the same request sent again got "), v.Message)
		assert.True(t, strings.HasPrefix(v.MessageKo, "다시 보낸 같은 요청이 "), v.MessageKo)
	}
	for _, r := range naive.Rules {
		for _, v := range r.Violations {
			assert.NotContains(t, v.Message, `key "`, "rule %d at naive names no key", r.Rule.N)
			assert.NotContains(t, v.MessageKo, `" 키`, "rule %d at naive names no key", r.Rule.N)
			assert.NotContains(t, v.MessageKo, `키 "`, "rule %d at naive names no key", r.Rule.N)
		}
	}

	unique := runStory(t, engine.MustPreset(engine.LevelUnique))
	rr = unique.Rule(lab.RuleByteReplay)
	require.False(t, rr.OK)
	assert.Contains(t, rr.Violations[0].Message, `a retry under key "k1" got `)
	assert.Contains(t, rr.Violations[0].MessageKo, `"k1" 키로 보낸 재시도가 `)
}

// TestKeylessRulesTwoAndFive: the rules that name a key say it in a keyless
// server's terms too (a black-box run of such a server could break them).
func TestKeylessRulesTwoAndFive(t *testing.T) {
	h := lab.History{
		Intents: []lab.Intent{{ID: "i1", Customer: "c1", From: "alice", To: "bob", Amount: 200_000},
			{ID: "i2", Customer: "c1", From: "alice", To: "bob", Amount: 300_000}},
		Attempts: []lab.Attempt{
			{Lane: "A1", Intent: "i1", Customer: "c1", Key: "k1", Body: []byte(`{"from":"alice","to":"bob","amount":200000}`), Status: 201, Response: []byte(`{"transfer_id":"tr_1"}`), Delivered: true},
			{Lane: "A2", Intent: "i2", Customer: "c1", Key: "k1", Body: []byte(`{"from":"alice","to":"bob","amount":300000}`), Status: 201, Response: []byte(`{"transfer_id":"tr_2"}`), Delivered: true},
			{Lane: "B1", Intent: "i3", Customer: "c2", Key: "k1", Body: []byte(`{"from":"carol","to":"bob","amount":1000}`), Status: 201, Response: []byte(`{"transfer_id":"tr_2"}`), Delivered: true},
		},
		Ledger: []lab.LedgerTransfer{{ID: "tr_1", Customer: "c1", Key: "k1", From: "alice", To: "bob", Amount: 200_000},
			{ID: "tr_2", Customer: "c1", Key: "k1", From: "alice", To: "bob", Amount: 300_000}},
	}
	keyed := lab.Check(h)
	h.Keyless = true
	keyless := lab.Check(h)
	for _, rule := range []lab.Rule{lab.RuleNoSilentWrong, lab.RuleOwnResponses} {
		require.False(t, keyed.Rule(rule).OK, "rule %d", rule.N)
		require.False(t, keyless.Rule(rule).OK, "rule %d", rule.N)
		assert.Contains(t, keyed.Rule(rule).Violations[0].Message, `key "k1"`)
		v := keyless.Rule(rule).Violations[0]
		assert.NotContains(t, v.Message, `key "k1"`)
		assert.NotContains(t, v.MessageKo, `키 "k1"`)
	}
	assert.Equal(t, `a request sent as {"from":"alice","to":"bob","amount":200000} was sent again as {"from":"alice","to":"bob","amount":300000} and answered 201 instead of 422: the server keeps no key table, so nothing compared the two`,
		keyless.Rule(lab.RuleNoSilentWrong).Violations[0].Message)
}

// TestRuleEightSeesTheChargeTheLedgerRolledBack plays a slow worker whose
// lease runs out after it called the processor, and the retry that takes
// its claim over: the ledger holds one transfer either way, and rule 8 is
// what tells the two apart. Without the processor's records it is not
// judged.
func TestRuleEightSeesTheChargeTheLedgerRolledBack(t *testing.T) {
	for _, c := range []struct {
		name       string
		downstream engine.DownstreamMode
		broken     []string
	}{
		{"no key downstream", engine.DownstreamOff, []string{"one-charge-per-intent"}},
		{"key passed downstream", engine.DownstreamOn, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, err := sqlite.OpenMemory()
			require.NoError(t, err)
			defer db.Close()
			ctx := context.Background()
			for id, bal := range map[string]int64{"jiho": 200_000, "cafe": 0} {
				_, err := db.PutAccount(ctx, id, bal)
				require.NoError(t, err)
			}
			clock := engine.NewManualClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
			called := make(chan struct{})
			resume := make(chan struct{})
			hook := func(ctx context.Context, s engine.Step) engine.Fault {
				if s.Lane == "A1" && s.Phase == engine.PhaseCommit {
					close(called)
					<-resume
				}
				return engine.FaultNone
			}
			p := engine.MustPreset(engine.LevelScoped).With(func(p *engine.Policy) { p.DownstreamKey = c.downstream })
			eng := engine.New(db, p, engine.Options{Hook: hook, Clock: clock})
			h := lab.History{Intents: []lab.Intent{{ID: "coffee", Customer: "jiho", From: "jiho", To: "cafe", Amount: 30_000}},
				StartBalances: map[string]int64{"jiho": 200_000, "cafe": 0}, Retention: p.Retention.D(), RetryHorizon: time.Hour}
			req := func(lane string) engine.Request {
				return engine.Request{Method: "POST", Path: "/transfers", Customer: "jiho", HasCustomer: true, Lane: lane, Intent: "coffee",
					Key: []string{`"coffee-0412"`}, Body: []byte(`{"from":"jiho","to":"cafe","amount":30000}`), ContentType: "application/json"}
			}
			slow := make(chan engine.Result)
			go func() { slow <- eng.Handle(ctx, req("A1")) }()
			<-called
			clock.Advance(engine.ScopedLease + time.Second)
			a2 := eng.Handle(ctx, req("A2"))
			require.Equal(t, 201, a2.Response.Status)
			close(resume)
			a1 := <-slow
			assert.Equal(t, 409, a1.Response.Status, "the slow worker lost its claim")
			h.Attempts = []lab.Attempt{lab.AttemptOf(req("A1"), a1, clock.Now()), lab.AttemptOf(req("A2"), a2, clock.Now())}
			snap, err := db.Snapshot(ctx)
			require.NoError(t, err)
			h.Ledger, h.EndBalances = lab.LedgerOf(snap.Transfers), lab.BalancesOf(snap.Accounts)
			require.Len(t, h.Ledger, 1, "the ledger pays once either way")

			blind := lab.Check(h)
			assert.True(t, blind.OK, "without the processor's records rule 8 is not judged: %v", blind.Broken())

			h.Charges = lab.ChargesOf(snap.Charges)
			rep := lab.Check(h)
			assert.ElementsMatch(t, c.broken, rep.Broken())
			if c.broken != nil {
				v := rep.Rule(lab.RuleOneCharge).Violations[0]
				assert.Equal(t, "coffee", v.Intent)
				assert.Contains(t, v.Message, "charged intent coffee 2 times")
				assert.Contains(t, v.Message, "the ledger shows 1 transfer")
				assert.Contains(t, v.MessageKo, "2번 청구했습니다")
				assert.Equal(t, []string{"A1", "A2"}, v.Lanes)
			}
		})
	}
}
