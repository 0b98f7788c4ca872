package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/store/sqlite"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

type bank struct {
	eng   *engine.Engine
	db    *sqlite.DB
	clock *engine.ManualClock
}

func newBank(t testing.TB, p engine.Policy, o engine.Options) *bank {
	t.Helper()
	db, err := sqlite.OpenMemory()
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	clock := engine.NewManualClock(t0)
	if o.Clock == nil {
		o.Clock = clock
	}
	b := &bank{eng: engine.New(db, p, o), db: db, clock: clock}
	ctx := context.Background()
	for id, bal := range map[string]int64{"alice": 1_000_000, "bob": 0, "carol": 500_000} {
		_, err := db.PutAccount(ctx, id, bal)
		require.NoError(t, err)
	}
	return b
}

func transferReq(customer, key, body string) engine.Request {
	r := engine.Request{Method: "POST", Path: "/transfers", Customer: customer, HasCustomer: customer != "",
		Body: []byte(body), ContentType: "application/json"}
	if key != "" {
		r.Key = []string{`"` + key + `"`}
	}
	return r
}

const body200k = `{"from":"alice","to":"bob","amount":200000}`

func (b *bank) do(t testing.TB, r engine.Request) engine.Result {
	t.Helper()
	return b.eng.Handle(context.Background(), r)
}

func (b *bank) snapshot(t testing.TB) engine.Snapshot {
	t.Helper()
	s, err := b.db.Snapshot(context.Background())
	require.NoError(t, err)
	return s
}

func (b *bank) balance(t testing.TB, id string) int64 {
	t.Helper()
	a, err := b.db.GetAccount(context.Background(), id)
	require.NoError(t, err)
	return a.Balance
}

func problemType(t testing.TB, r engine.Response) string {
	t.Helper()
	var p struct{ Type string }
	require.NoError(t, json.Unmarshal(r.Body, &p), "body %s", r.Body)
	return p.Type
}

// TestLadderSequential runs the same request stories at every level and
// checks what each rung answers: the broken rungs really break, the fixed
// ones hold.
func TestLadderSequential(t *testing.T) {
	type want struct {
		retryStatus     int // a plain retry after completion
		transfers       int // transfers after original + retry
		reorderedStatus int // the same request with fields reordered
		correctedStatus int // same key, amount corrected to 300,000
		otherCustomer   int // another customer, same key, their own request
	}
	cases := map[string]want{
		engine.LevelNaive:       {201, 2, 201, 201, 201},
		engine.LevelUnique:      {200, 1, 200, 200, 200},
		engine.LevelFingerprint: {200, 1, 200, 422, 422},
		engine.LevelInProgress:  {200, 1, 200, 422, 422},
		engine.LevelReplay:      {201, 1, 201, 422, 422},
		engine.LevelScoped:      {201, 1, 201, 422, 201},
	}
	for _, level := range engine.Levels() {
		w := cases[level]
		t.Run(level, func(t *testing.T) {
			b := newBank(t, engine.MustPreset(level), engine.Options{})
			first := b.do(t, transferReq("c1", "k1", body200k))
			require.Equal(t, 201, first.Response.Status, "%s", first.Response.Body)
			retry := b.do(t, transferReq("c1", "k1", body200k))
			assert.Equal(t, w.retryStatus, retry.Response.Status, "%s", retry.Response.Body)
			assert.Len(t, b.snapshot(t).Transfers, w.transfers)
			if level == engine.LevelReplay || level == engine.LevelScoped {
				assert.Equal(t, first.Response.Body, retry.Response.Body, "replay must be byte-identical")
				assert.Equal(t, "true", retry.Response.Get("Idempotent-Replayed"))
			}
			reordered := b.do(t, transferReq("c1", "k1", "{ \"amount\": 200000,\n \"to\": \"bob\", \"from\": \"alice\" }"))
			assert.Equal(t, w.reorderedStatus, reordered.Response.Status, "%s", reordered.Response.Body)
			before := b.balance(t, "alice")
			corrected := b.do(t, transferReq("c1", "k1", `{"from":"alice","to":"bob","amount":300000}`))
			assert.Equal(t, w.correctedStatus, corrected.Response.Status, "%s", corrected.Response.Body)
			if level != engine.LevelNaive {
				assert.Equal(t, before, b.balance(t, "alice"), "a corrected request under a used key must move nothing")
			}
			other := b.do(t, transferReq("c2", "k1", `{"from":"carol","to":"bob","amount":1000}`))
			assert.Equal(t, w.otherCustomer, other.Response.Status, "%s", other.Response.Body)
		})
	}
}

func TestRawFingerprintRejectsReorderedBody(t *testing.T) {
	p := engine.MustPreset(engine.LevelFingerprint)
	p.Fingerprint = engine.FingerprintRaw
	b := newBank(t, p, engine.Options{})
	require.Equal(t, 201, b.do(t, transferReq("c1", "k1", body200k)).Response.Status)
	r := b.do(t, transferReq("c1", "k1", `{"amount":200000,"from":"alice","to":"bob"}`))
	assert.Equal(t, 422, r.Response.Status, "raw bytes see a reordered body as a different request")
	r = b.do(t, transferReq("c1", "k1", body200k))
	assert.Equal(t, 200, r.Response.Status, "the identical bytes are a retry")
}

func TestRecomputedReplayDiffers(t *testing.T) {
	p := engine.MustPreset(engine.LevelReplay)
	p.Replay = engine.ReplayRecompute
	b := newBank(t, p, engine.Options{})
	first := b.do(t, transferReq("c1", "k1", body200k))
	require.Equal(t, 201, first.Response.Status)
	b.clock.Advance(90 * time.Second)
	require.Equal(t, 201, b.do(t, transferReq("c1", "k2", `{"from":"alice","to":"bob","amount":50000}`)).Response.Status)
	again := b.do(t, transferReq("c1", "k1", body200k))
	require.Equal(t, 201, again.Response.Status)
	assert.NotEqual(t, string(first.Response.Body), string(again.Response.Body), "recomputing shows today's balance and time")
	assert.Contains(t, string(again.Response.Body), `"balance_after":750000`)
	assert.Len(t, b.snapshot(t).Transfers, 2, "recomputing does not pay again")
}

func TestValidationStoresNothing(t *testing.T) {
	b := newBank(t, engine.MustPreset(engine.LevelScoped), engine.Options{})
	cases := []struct {
		name   string
		req    engine.Request
		status int
		typ    string
	}{
		{"no customer", transferReq("", "k", body200k), 401, "/problems/customer-missing"},
		{"no key", transferReq("c1", "", body200k), 400, "/problems/idempotency-key-missing"},
		{"bare token key", func() engine.Request { r := transferReq("c1", "", body200k); r.Key = []string{"abc"}; return r }(), 400, "/problems/idempotency-key-malformed"},
		{"empty key", func() engine.Request { r := transferReq("c1", "", body200k); r.Key = []string{`""`}; return r }(), 400, "/problems/idempotency-key-malformed"},
		{"two key headers", func() engine.Request { r := transferReq("c1", "", body200k); r.Key = []string{`"a"`, `"b"`}; return r }(), 400, "/problems/idempotency-key-malformed"},
		{"not json", transferReq("c1", "k", `from=alice`), 400, "/problems/body-invalid"},
		{"array", transferReq("c1", "k", `[1]`), 400, "/problems/body-invalid"},
		{"amount string", transferReq("c1", "k", `{"from":"alice","to":"bob","amount":"5"}`), 400, "/problems/amount-invalid"},
		{"amount fraction", transferReq("c1", "k", `{"from":"alice","to":"bob","amount":5.5}`), 400, "/problems/amount-invalid"},
		{"amount exponent", transferReq("c1", "k", `{"from":"alice","to":"bob","amount":1e5}`), 400, "/problems/amount-invalid"},
		{"amount zero", transferReq("c1", "k", `{"from":"alice","to":"bob","amount":0}`), 400, "/problems/amount-invalid"},
		{"amount negative", transferReq("c1", "k", `{"from":"alice","to":"bob","amount":-5}`), 400, "/problems/amount-invalid"},
		{"amount huge", transferReq("c1", "k", `{"from":"alice","to":"bob","amount":99999999999999999999}`), 400, "/problems/amount-invalid"},
		{"missing to", transferReq("c1", "k", `{"from":"alice","amount":5}`), 400, "/problems/field-invalid"},
		{"unknown field", transferReq("c1", "k", `{"from":"alice","to":"bob","amount":5,"memo":"x"}`), 400, "/problems/field-invalid"},
		{"duplicate field", transferReq("c1", "k", `{"from":"alice","to":"bob","amount":5,"amount":500000}`), 400, "/problems/body-invalid"},
		{"nested", transferReq("c1", "k", `{"from":{"a":1},"to":"bob","amount":5}`), 400, "/problems/field-invalid"},
		{"invalid utf8", transferReq("c1", "k", "{\"from\":\"al\xffice\",\"to\":\"bob\",\"amount\":5}"), 400, "/problems/body-invalid"},
		{"trailing data", transferReq("c1", "k", body200k+`{}`), 400, "/problems/body-invalid"},
		{"same account", transferReq("c1", "k", `{"from":"alice","to":"alice","amount":5}`), 400, "/problems/same-account"},
		{"bad account id", transferReq("c1", "k", `{"from":"al ice","to":"bob","amount":5}`), 400, "/problems/account-id-invalid"},
		{"wrong content type", func() engine.Request { r := transferReq("c1", "k", body200k); r.ContentType = "text/plain"; return r }(), 415, "/problems/unsupported-media-type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := b.do(t, c.req)
			assert.Equal(t, c.status, r.Response.Status, "%s", r.Response.Body)
			assert.Equal(t, "application/problem+json", r.Response.Get("Content-Type"))
			assert.Equal(t, c.typ, problemType(t, r.Response))
		})
	}
	snap := b.snapshot(t)
	assert.Empty(t, snap.Keys, "a rejected request stores no key")
	assert.Empty(t, snap.Transfers)
	// The key "k" is still free for a valid request.
	assert.Equal(t, 201, b.do(t, transferReq("c1", "k", body200k)).Response.Status)
}

func TestBusinessOutcomesAreReplayed(t *testing.T) {
	b := newBank(t, engine.MustPreset(engine.LevelScoped), engine.Options{})
	r := b.do(t, transferReq("c1", "k1", `{"from":"bob","to":"alice","amount":10}`))
	require.Equal(t, 402, r.Response.Status)
	// bob gets money, but the retry of the declined request replays 402.
	require.Equal(t, 201, b.do(t, transferReq("c1", "k2", body200k)).Response.Status)
	again := b.do(t, transferReq("c1", "k1", `{"from":"bob","to":"alice","amount":10}`))
	assert.Equal(t, 402, again.Response.Status)
	assert.Equal(t, r.Response.Body, again.Response.Body)
	assert.Equal(t, "true", again.Response.Get("Idempotent-Replayed"))
	missing := b.do(t, transferReq("c1", "k3", `{"from":"alice","to":"nobody","amount":10}`))
	assert.Equal(t, 404, missing.Response.Status)
	assert.Equal(t, "/problems/account-not-found", problemType(t, missing.Response))
}

func TestAccounts(t *testing.T) {
	b := newBank(t, engine.MustPreset(engine.LevelScoped), engine.Options{})
	put := func(id, body string) engine.Response {
		return b.do(t, engine.Request{Method: "PUT", Path: "/accounts/" + id, Body: []byte(body)}).Response
	}
	assert.Equal(t, 200, put("dave", `{"balance":5}`).Status)
	assert.Equal(t, 200, put("dave", `{"balance":0}`).Status)
	assert.Equal(t, 400, put("dave", `{"balance":-1}`).Status)
	assert.Equal(t, 400, put("da ve", `{"balance":1}`).Status)
	get := b.do(t, engine.Request{Method: "GET", Path: "/accounts/dave"}).Response
	assert.JSONEq(t, `{"id":"dave","balance":0}`, string(get.Body))
	assert.Equal(t, 404, b.do(t, engine.Request{Method: "GET", Path: "/accounts/zed"}).Response.Status)
	assert.Equal(t, 405, b.do(t, engine.Request{Method: "DELETE", Path: "/accounts/dave"}).Response.Status)
	assert.Equal(t, 405, b.do(t, engine.Request{Method: "GET", Path: "/transfers"}).Response.Status)
	assert.Equal(t, 404, b.do(t, engine.Request{Method: "GET", Path: "/nope"}).Response.Status)
}

func storm(t *testing.T, b *bank, n int, key string) []engine.Result {
	t.Helper()
	results := make([]engine.Result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := transferReq("c1", key, `{"from":"alice","to":"bob","amount":10000}`)
			r.Lane = fmt.Sprintf("lane-%d", i)
			results[i] = b.eng.Handle(context.Background(), r)
		}()
	}
	wg.Wait()
	return results
}

// The engine's behaviour under simultaneous retries, crashes before every
// phase, lease takeovers, retention and the reaper is proven against every
// store by the conformance suite, package store/storetest.

func TestLostResponseThenRetry(t *testing.T) {
	hook := func(ctx context.Context, s engine.Step) engine.Fault {
		if s.Lane == "first" && s.Phase == engine.PhaseRespond {
			return engine.FaultLoseResponse
		}
		return engine.FaultNone
	}
	b := newBank(t, engine.MustPreset(engine.LevelScoped), engine.Options{Hook: hook})
	first := transferReq("c1", "k1", body200k)
	first.Lane = "first"
	r := b.do(t, first)
	assert.False(t, r.Delivered)
	assert.Equal(t, 201, r.Response.Status, "the server committed")
	retry := b.do(t, transferReq("c1", "k1", body200k))
	assert.Equal(t, r.Response.Body, retry.Response.Body)
	assert.Len(t, b.snapshot(t).Transfers, 1)
}

func TestTraceHasEveryPhaseAndSQL(t *testing.T) {
	var mu sync.Mutex
	var events []engine.Event
	tr := func(e engine.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }
	b := newBank(t, engine.MustPreset(engine.LevelScoped), engine.Options{Trace: tr})
	r := transferReq("c1", "k1", body200k)
	r.Lane, r.Intent = "L1", "I1"
	b.do(t, r)
	var phases []engine.Phase
	for i, e := range events {
		phases = append(phases, e.Phase)
		assert.Equal(t, int64(i+1), e.Seq)
		assert.Equal(t, "L1", e.Lane)
	}
	assert.Equal(t, []engine.Phase{engine.PhaseReceive, engine.PhaseValidate, engine.PhaseFingerprint,
		engine.PhaseClaim, engine.PhaseExecute, engine.PhaseCommit, engine.PhaseRespond}, phases)
	assert.Contains(t, events[3].SQL, "INSERT INTO idem_keys")
	assert.Contains(t, events[4].SQL, "INSERT INTO processor_charges", "the processor's charge, apart from the ledger")
	assert.NotContains(t, events[5].SQL, "processor_charges")
	assert.Contains(t, events[5].SQL, "INSERT INTO transfers")
	assert.Contains(t, events[5].SQL, "UPDATE idem_keys SET state = 'completed'")

	events = nil
	b.do(t, r)
	assert.Equal(t, engine.OutcomeDuplicate, events[3].Outcome)
	assert.Contains(t, events[3].Note, "UNIQUE constraint failed", "SQLite's own error text is shown")
	assert.Equal(t, engine.OutcomeReplayed, events[4].Outcome)
}

func TestPublication(t *testing.T) {
	b := newBank(t, engine.MustPreset(engine.LevelScoped), engine.Options{})
	for _, path := range []string{"", "/"} {
		r := b.do(t, engine.Request{Method: "GET", Path: path})
		require.Equal(t, 200, r.Response.Status)
		assert.JSONEq(t, `{"level":"scoped","scope":"(customer, endpoint, key)","retention_seconds":86400,"lease_seconds":30,
			"policy":{"level":"scoped","claim":"constraint","fingerprint":"canonical","in_progress":"two-phase","replay":"stored",
			"scope":"customer-endpoint","lock":"none","retention":"24h0m0s","lease":"30s","downstream_key":"on","recovery_points":"off"}}`, string(r.Response.Body))
	}
	assert.Equal(t, 405, b.do(t, engine.Request{Method: "POST", Path: "/"}).Response.Status)
}

// TestEveryKnobCombination runs a transfer, a plain retry, a corrected
// retry and two simultaneous retries under every combination of knobs the
// sandbox can reach: whatever a learner flips, the engine answers with a
// status of the contract, never 500, and money is conserved.
func TestEveryKnobCombination(t *testing.T) {
	var policies []engine.Policy
	knobs := engine.KnobValues()
	for claim := range len(knobs["claim"]) {
		for fp := range len(knobs["fingerprint"]) {
			for ip := range len(knobs["in_progress"]) {
				for rp := range len(knobs["replay"]) {
					for sc := range len(knobs["scope"]) {
						for lk := range len(knobs["lock"]) {
							p := engine.MustPreset(engine.LevelScoped)
							p.Level = ""
							p.Claim, p.Fingerprint, p.InProgress = engine.ClaimStrategy(claim), engine.FingerprintMode(fp), engine.InProgressMode(ip)
							p.Replay, p.Scope, p.Lock = engine.ReplayMode(rp), engine.ScopeMode(sc), engine.LockMode(lk)
							policies = append(policies, p)
						}
					}
				}
			}
		}
	}
	if runtime.GOOS == "js" {
		policies = policies[:0:0]
		for _, l := range engine.Levels() {
			policies = append(policies, engine.MustPreset(l))
		}
	}
	allowed := map[int]bool{200: true, 201: true, 409: true, 422: true}
	for _, p := range policies {
		name := fmt.Sprintf("%s/%s/%s/%s/%s/%s", p.Claim, p.Fingerprint, p.InProgress, p.Replay, p.Scope, p.Lock)
		t.Run(name, func(t *testing.T) {
			b := newBank(t, p, engine.Options{PaymentLatency: time.Millisecond})
			for _, body := range []string{body200k, body200k, `{"from":"alice","to":"bob","amount":300000}`} {
				r := b.do(t, transferReq("c1", "k1", body))
				assert.True(t, allowed[r.Response.Status], "%d %s", r.Response.Status, r.Response.Body)
			}
			for _, r := range storm(t, b, 2, "k2") {
				assert.True(t, allowed[r.Response.Status], "%d %s", r.Response.Status, r.Response.Body)
			}
			var total int64
			for _, a := range b.snapshot(t).Accounts {
				total += a.Balance
			}
			assert.Equal(t, int64(1_500_000), total, "money is conserved")
		})
	}
}

// Every value KnobValues names is a value of its knob: it reads into a
// Policy and is written back the same.
func TestKnobValuesAreTheKnobs(t *testing.T) {
	for knob, values := range engine.KnobValues() {
		for _, v := range values {
			var p engine.Policy
			require.NoError(t, json.Unmarshal([]byte(`{"`+knob+`":"`+v+`"}`), &p), "%s=%s", knob, v)
			out, err := json.Marshal(p)
			require.NoError(t, err)
			assert.Contains(t, string(out), `"`+knob+`":"`+v+`"`)
		}
	}
}
