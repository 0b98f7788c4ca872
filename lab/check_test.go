package lab_test

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/lab"
	"idemlab/store"
)

// runStory plays a small story in-process and checks it: a transfer whose
// response is lost, then three simultaneous retries, then a corrected amount
// under the same key, then another customer reusing the key.
func runStory(t *testing.T, p engine.Policy) lab.Report {
	t.Helper()
	db, err := store.OpenMemory()
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
	h.Retention, h.RetryHorizon = p.Retention.D(), time.Hour
	return lab.Check(h)
}

func TestCheckerOnTheLadder(t *testing.T) {
	want := map[string][]string{
		engine.LevelNaive:       {"one-transfer-per-intent", "replay-is-byte-identical"},
		engine.LevelUnique:      {"different-request-never-succeeds", "replay-is-byte-identical", "completion-has-its-transfer", "customers-see-own-responses", "retention-outlasts-retries"},
		engine.LevelFingerprint: {"replay-is-byte-identical", "retention-outlasts-retries"},
		engine.LevelInProgress:  {"replay-is-byte-identical", "retention-outlasts-retries"},
		engine.LevelReplay:      {"retention-outlasts-retries"},
		engine.LevelScoped:      nil,
	}
	for _, level := range engine.Levels {
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
		"status only": {200, string(first), "status 200, first answer 201"},
		"a member":    {201, `{"transfer_id":"t1","amount":100,"balance_after":800}`, `"balance_after" is 800, first answer 900`},
		"generic":     {200, `{"status":"already_processed"}`, `status 200, first answer 201; "amount" is missing`},
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
