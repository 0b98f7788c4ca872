package engine_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
)

// typedFields writes an event's typed fields, the ones a view draws, on
// one line; transfer ids are named by ledger order (T1, T2), so the line
// does not depend on how the store numbers them.
func typedFields(e engine.Event, ids map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", e.Phase, e.Outcome)
	if e.Status != 0 {
		fmt.Fprintf(&b, " status=%d", e.Status)
	}
	if e.Amount != 0 {
		fmt.Fprintf(&b, " amount=%d", e.Amount)
	}
	if e.TransferID != "" {
		id, ok := ids[e.TransferID]
		if !ok {
			id = "unknown:" + e.TransferID
		}
		fmt.Fprintf(&b, " transfer=%s", id)
	}
	if e.ChargeID != "" {
		id, ok := ids[e.ChargeID]
		if !ok {
			id = "unknown:" + e.ChargeID
		}
		fmt.Fprintf(&b, " charge=%s %s", id, e.Charge)
	}
	if e.DownstreamKey != "" {
		fmt.Fprintf(&b, " downstream=%s", e.DownstreamKey)
	}
	if e.Rows != nil {
		fmt.Fprintf(&b, " rows=%d", *e.Rows)
	}
	if e.KeyState != "" {
		fmt.Fprintf(&b, " key=%s", e.KeyState)
	}
	return b.String()
}

// TestTraceCarriesTypedFields sends a transfer and its plain retry at
// every level, and at the claims and in-progress modes no preset uses, and
// checks the typed fields of the phases that touch the key or the ledger:
// the amount and transfer a commit moved, the rows each claim wrote, the
// key's state after it. A view draws these; the notes beside them are
// words for people and may change.
func TestTraceCarriesTypedFields(t *testing.T) {
	unique := engine.MustPreset(engine.LevelUnique)
	with := func(p engine.Policy, change func(*engine.Policy)) engine.Policy {
		change(&p)
		return p
	}
	cases := []struct {
		name         string
		policy       engine.Policy
		first, retry []string
	}{
		{"naive", engine.MustPreset(engine.LevelNaive),
			[]string{"execute executed amount=200000 charge=C1 charged", "commit committed status=201 amount=200000 transfer=T1"},
			[]string{"execute executed amount=200000 charge=C2 charged", "commit committed status=201 amount=200000 transfer=T2"}},
		{"unique", unique,
			[]string{"claim claimed rows=1 key=completed", "execute executed amount=200000 charge=C1 charged", "commit committed status=201 amount=200000 transfer=T1",
				"store-response stored transfer=T1 rows=1 key=completed"},
			[]string{"claim duplicate rows=0 key=completed", "compare replayed status=200 transfer=T1 key=completed"}},
		{"unique, insert-or-ignore", with(unique, func(p *engine.Policy) { p.Claim = engine.ClaimInsertOrIgnore }),
			[]string{"claim claimed rows=1 key=completed", "execute executed amount=200000 charge=C1 charged", "commit committed status=201 amount=200000 transfer=T1",
				"store-response stored transfer=T1 rows=1 key=completed"},
			// 0 rows, and the claim carries on: the second payment.
			[]string{"claim claimed rows=0", "execute executed amount=200000 charge=C2 charged", "commit committed status=201 amount=200000 transfer=T2", "store-response skipped rows=0"}},
		{"unique, check-then-insert", with(unique, func(p *engine.Policy) { p.Claim = engine.ClaimCheckThenInsert }),
			[]string{"claim ok key=absent", "claim claimed rows=1 key=completed", "execute executed amount=200000 charge=C1 charged", "commit committed status=201 amount=200000 transfer=T1",
				"store-response stored transfer=T1 rows=1 key=completed"},
			[]string{"claim duplicate key=completed", "compare replayed status=200 transfer=T1 key=completed"}},
		{"unique, no state column", with(unique, func(p *engine.Policy) { p.InProgress = engine.InProgressNone }),
			[]string{"claim claimed rows=1 key=completed", "execute executed amount=200000 charge=C1 charged", "commit committed status=201 amount=200000 transfer=T1",
				"store-response stored transfer=T1 rows=1 key=completed"},
			[]string{"claim duplicate rows=0 key=completed", "compare replayed status=200 transfer=T1 key=completed"}},
		{"unique, execute-first", with(unique, func(p *engine.Policy) { p.InProgress = engine.InProgressExecuteFirst }),
			[]string{"claim ok key=absent", "execute executed amount=200000 charge=C1 charged", "commit committed status=201 amount=200000 transfer=T1",
				"store-response stored transfer=T1 rows=1 key=completed"},
			[]string{"claim duplicate key=completed", "compare replayed status=200 transfer=T1 key=completed"}},
		{"fingerprint", engine.MustPreset(engine.LevelFingerprint),
			[]string{"claim claimed rows=1 key=completed", "execute executed amount=200000 charge=C1 charged", "commit committed status=201 amount=200000 transfer=T1",
				"store-response stored transfer=T1 rows=1 key=completed"},
			[]string{"claim duplicate rows=0 key=completed", "compare replayed status=200 transfer=T1 key=completed"}},
		{"in-progress", engine.MustPreset(engine.LevelInProgress),
			[]string{"claim claimed rows=1 key=in_progress", "execute executed amount=200000 charge=C1 charged", "commit committed status=201 amount=200000 transfer=T1 key=completed"},
			[]string{"claim duplicate rows=0 key=completed", "compare replayed status=200 transfer=T1 key=completed"}},
		{"replay", engine.MustPreset(engine.LevelReplay),
			[]string{"claim claimed rows=1 key=in_progress", "execute executed amount=200000 charge=C1 charged", "commit committed status=201 amount=200000 transfer=T1 key=completed"},
			[]string{"claim duplicate rows=0 key=completed", "compare replayed status=201 transfer=T1 key=completed"}},
		{"scoped", engine.MustPreset(engine.LevelScoped),
			[]string{"claim claimed rows=1 key=in_progress", "execute executed amount=200000 charge=C1 charged downstream=c1:k1", "commit committed status=201 amount=200000 transfer=T1 key=completed"},
			[]string{"claim duplicate rows=0 key=completed", "compare replayed status=201 transfer=T1 key=completed"}},
		{"scoped, server-cache", with(engine.MustPreset(engine.LevelScoped), func(p *engine.Policy) { p.Claim = engine.ClaimServerCache }),
			[]string{"claim claimed rows=1 key=in_progress", "execute executed amount=200000 charge=C1 charged downstream=c1:k1", "commit committed status=201 amount=200000 transfer=T1 key=completed"},
			[]string{"claim duplicate rows=0 key=completed", "compare replayed status=201 transfer=T1 key=completed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var events []engine.Event
			tr := func(e engine.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }
			b := newBank(t, c.policy, engine.Options{Trace: tr})
			play := func() []engine.Event {
				events = nil
				res := b.do(t, transferReq("c1", "k1", body200k))
				require.Less(t, res.Response.Status, 300, "%s", res.Response.Body)
				return events
			}
			first, retry := play(), play()
			ids := map[string]string{}
			snap := b.snapshot(t)
			for i, tr := range snap.Transfers {
				ids[tr.ID] = fmt.Sprintf("T%d", i+1)
			}
			for i, ch := range snap.Charges {
				ids[ch.ID] = fmt.Sprintf("C%d", i+1)
			}
			lines := func(evs []engine.Event) []string {
				var out []string
				for _, e := range evs {
					switch e.Phase {
					case engine.PhaseClaim, engine.PhaseCompare, engine.PhaseExecute, engine.PhaseCommit, engine.PhaseStoreResponse:
						out = append(out, typedFields(e, ids))
					default:
						assert.Zero(t, e.Amount, "%s", e.Phase)
						assert.Nil(t, e.Rows, "%s", e.Phase)
						assert.Empty(t, e.KeyState, "%s", e.Phase)
					}
				}
				return out
			}
			assert.Equal(t, c.first, lines(first), "the first request")
			assert.Equal(t, c.retry, lines(retry), "its retry")
		})
	}
}

// TestTraceJSONTellsZeroRowsFromNone checks the typed fields' JSON: a
// statement that wrote 0 rows says "rows":0, a phase that wrote none has
// no "rows" at all, and the other typed fields are left out when unset.
func TestTraceJSONTellsZeroRowsFromNone(t *testing.T) {
	var events []engine.Event
	p := engine.MustPreset(engine.LevelUnique)
	p.Claim = engine.ClaimInsertOrIgnore
	b := newBank(t, p, engine.Options{Trace: func(e engine.Event) { events = append(events, e) }})
	for range 2 {
		b.do(t, transferReq("c1", "k1", body200k))
	}
	byPhase := map[string][]map[string]any{}
	for _, e := range events {
		raw, err := json.Marshal(e)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(raw, &m))
		byPhase[string(e.Phase)] = append(byPhase[string(e.Phase)], m)
	}
	require.Len(t, byPhase["claim"], 2)
	assert.Equal(t, 1.0, byPhase["claim"][0]["rows"])
	assert.Equal(t, "completed", byPhase["claim"][0]["key_state"])
	assert.Equal(t, 0.0, byPhase["claim"][1]["rows"], "INSERT OR IGNORE that inserted nothing")
	assert.NotContains(t, byPhase["claim"][1], "key_state", "the row it hit is not read")
	for _, m := range byPhase["commit"] {
		assert.Equal(t, 200000.0, m["amount"])
		assert.NotEmpty(t, m["transfer_id"])
		assert.NotContains(t, m, "rows")
	}
	for _, m := range byPhase["receive"] {
		for _, f := range []string{"amount", "transfer_id", "rows", "key_state"} {
			assert.NotContains(t, m, f)
		}
	}
}
