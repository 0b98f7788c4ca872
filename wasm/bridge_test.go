package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/lab"
)

const doubleTap = `{
  "id": "s1", "level": "unique", "policy": {"claim": "check-then-insert"},
  "accounts": {"seoyeon": 300000, "gym": 0},
  "lanes": [
    {"id": "A1", "intent": "m", "customer": "seoyeon", "key": "gym-1", "body": {"from": "seoyeon", "to": "gym", "amount": 45000}},
    {"id": "A2", "intent": "m", "customer": "seoyeon", "key": "gym-1", "body": {"from": "seoyeon", "to": "gym", "amount": 45000}}
  ],
  "schedule": ["A1@claim", "A2@claim", "A1", "A2"],
  "goals": [{"id": "g1", "text": "Cause a double transfer", "expect": "break", "rule": "one-transfer-per-intent"}]
}`

// state is the part of a State JSON these tests read.
type state struct {
	Error     string `json:"error"`
	Step      int    `json:"step"`
	Done      bool   `json:"done"`
	Next      string `json:"next"`
	Policy    struct{ Level, Claim string }
	Transfers []json.RawMessage `json:"transfers"`
	Lanes     []struct {
		ID, State, Verdict string
		NextPhase          string `json:"next_phase"`
	} `json:"lanes"`
	Last  *struct{ SQL, Note, Outcome string } `json:"last"`
	Goals []struct {
		ID  string
		Met bool
	} `json:"goals"`
}

func decode(t testing.TB, s string) state {
	t.Helper()
	var st state
	require.NoError(t, json.Unmarshal([]byte(s), &st), s)
	return st
}

func openSession(t testing.TB, b *bridge, src, policy string) (string, state) {
	t.Helper()
	var out struct {
		Session string          `json:"session"`
		State   json.RawMessage `json:"state"`
		Error   string          `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(b.open(src, policy)), &out))
	require.Empty(t, out.Error)
	require.NotEmpty(t, out.Session)
	return out.Session, decode(t, string(out.State))
}

func TestBridgePlaysAScenario(t *testing.T) {
	b := newBridge()
	id, st := openSession(t, b, doubleTap, "")
	assert.Equal(t, 0, st.Step)
	assert.Equal(t, "A1", st.Next)
	assert.Equal(t, "check-then-insert", st.Policy.Claim)
	for _, lane := range []string{"A1", "A1", "A2", "A2", "A1", "A2"} {
		st = decode(t, b.step(id, lane))
		require.Empty(t, st.Error)
	}
	assert.Contains(t, st.Last.SQL, "SELECT", "both lanes have looked; neither has inserted")
	before := b.step(id, "A1")
	st = decode(t, b.back(id))
	assert.Equal(t, 6, st.Step)
	again := b.step(id, "A1")
	assert.JSONEq(t, before, again, "back, then the same step, gives the same state")
	st = decode(t, b.run(id))
	assert.True(t, st.Done)
	assert.Len(t, st.Transfers, 2)
	assert.True(t, st.Goals[0].Met)

	st = decode(t, b.setPolicy(id, `{"claim":"constraint"}`))
	assert.Equal(t, 0, st.Step)
	assert.Equal(t, "constraint", st.Policy.Claim)
	st = decode(t, b.run(id))
	assert.Len(t, st.Transfers, 1)
	assert.False(t, st.Goals[0].Met)

	st = decode(t, b.reset(id))
	assert.Equal(t, 0, st.Step)
	assert.Equal(t, "constraint", st.Policy.Claim, "reset keeps the policy")
	st = decode(t, b.inject(id, "A1", "crash"))
	assert.Equal(t, "crashed", st.Lanes[0].State)
	st = decode(t, b.inject(id, "A2", `"lose-response"`))
	assert.Equal(t, "running", st.Lanes[1].State)

	assert.JSONEq(t, `{"closed":true}`, b.close(id))
	assert.Contains(t, b.step(id, "A1"), "no open session")
}

func TestBridgeAnswersErrorsAsJSON(t *testing.T) {
	b := newBridge()
	id, _ := openSession(t, b, doubleTap, `{"level":"scoped","claim":"constraint","fingerprint":"canonical","in_progress":"two-phase","replay":"stored","scope":"customer-endpoint","retention":"24h","lease":"30s"}`)
	cases := map[string]string{
		"bad scenario":   b.open(`{"id":`, ""),
		"bad level":      b.open(strings.Replace(doubleTap, `"unique"`, `"gold"`, 1), ""),
		"bad policy":     b.open(doubleTap, `{"claim":"maybe"}`),
		"unknown knob":   b.open(doubleTap, `{"speed":"fast"}`),
		"no session":     b.step("s-999", "A1"),
		"no lane":        b.step(id, "Z9"),
		"bad fault":      b.inject(id, "A1", "explode"),
		"no fault":       b.inject(id, "A1", "none"),
		"empty policy":   b.setPolicy(id, ""),
		"bad day":        b.day(`{"level":"naive"}`, nil),
		"huge day":       b.day(`{"level":"naive","day":{"intents":1000000}}`, nil),
		"close twice":    func() string { b.close(id); return b.close(id) }(),
		"back on closed": b.back(id),
	}
	for name, got := range cases {
		t.Run(name, func(t *testing.T) {
			var e struct{ Error string }
			require.NoError(t, json.Unmarshal([]byte(got), &e), got)
			assert.NotEmpty(t, e.Error, got)
		})
	}
}

func TestBridgeVersionListsKnobs(t *testing.T) {
	var v struct {
		Version string
		Levels  []string
		Knobs   map[string][]string
		Faults  []string
		Presets map[string]json.RawMessage
	}
	require.NoError(t, json.Unmarshal([]byte(newBridge().version()), &v))
	assert.Equal(t, []string{"naive", "unique", "fingerprint", "in-progress", "replay", "scoped"}, v.Levels)
	assert.Equal(t, []string{"none", "check-then-insert", "insert-or-ignore", "constraint", "server-cache"}, v.Knobs["claim"])
	assert.Equal(t, []string{"none", "memory"}, v.Knobs["lock"])
	assert.Equal(t, []string{"global", "customer-endpoint"}, v.Knobs["scope"])
	assert.Equal(t, []string{"crash", "lose-response", "client-timeout"}, v.Faults)
	assert.Len(t, v.Presets, 6)
}

func TestBridgeDayReportsProgress(t *testing.T) {
	b := newBridge()
	var calls, lastDone, lastTotal int
	out := b.day(`{"level":"naive","day":{"seed":3,"customers":6,"intents":60}}`, func(done, total int) {
		calls++
		lastDone, lastTotal = done, total
	})
	var tally struct {
		Error    string
		Attempts int
		Report   struct {
			OK      bool
			Summary struct{ Duplicates int }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &tally), out)
	require.Empty(t, tally.Error)
	assert.Positive(t, calls)
	assert.Equal(t, lastTotal, lastDone)
	assert.Equal(t, tally.Attempts, lastTotal)
	assert.False(t, tally.Report.OK, "the naive bank pays retries twice")
	assert.Positive(t, tally.Report.Summary.Duplicates)
}

// TestBridgeDayStops checks that a day given a run name stops when asked,
// between two groups of retries, and answers how far it got instead of a
// verdict on half a day.
func TestBridgeDayStops(t *testing.T) {
	b := newBridge()
	assert.JSONEq(t, `{"stopping":false}`, b.stopDay("d1"), "no day runs yet")
	var stoppedAt int
	out := b.day(`{"run":"d1","level":"naive","day":{"seed":3,"customers":6,"intents":400}}`, func(done, total int) {
		if stoppedAt == 0 {
			stoppedAt = done
			assert.JSONEq(t, `{"stopping":true}`, b.stopDay("d1"))
		}
	})
	var got struct {
		Stopped     bool
		Done, Total int
		Report      json.RawMessage
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.True(t, got.Stopped, out)
	assert.Equal(t, stoppedAt, got.Done, "no group runs after the stop")
	assert.Less(t, got.Done, got.Total)
	assert.Nil(t, got.Report, "a day cut short is not judged")
	assert.JSONEq(t, `{"stopping":false}`, b.stopDay("d1"), "the finished day's name is free again")

	// A name in use is refused; a day without a name still runs to the end.
	b.days["busy"] = func() {}
	assert.Contains(t, b.day(`{"run":"busy","level":"naive","day":{"seed":3,"customers":6,"intents":20}}`, nil), "already running")
	assert.Contains(t, b.day(`{"level":"naive","day":{"seed":3,"customers":6,"intents":20}}`, nil), `"report"`)
}

// TestBridgeDayDrawsThePicture checks that day answers the day's picture,
// as data that agrees with its tally and as an SVG document in the words
// asked for.
func TestBridgeDayDrawsThePicture(t *testing.T) {
	b := newBridge()
	cases := []struct {
		lang, words string
	}{
		{"", "moved more than once: "},
		{"ko", "더 나간 돈: "},
	}
	for _, tc := range cases {
		t.Run("lang="+tc.lang, func(t *testing.T) {
			out := b.day(`{"level":"naive","lang":"`+tc.lang+`","day":{"seed":3,"customers":4,"intents":20}}`, nil)
			var day struct {
				Error   string
				Report  struct{ Summary lab.Summary }
				Picture struct {
					StepMS    int64 `json:"step_ms"`
					PaidTwice int64 `json:"paid_twice"`
					Totals    map[string]int
					Buckets   []struct {
						FromMS   int64 `json:"from_ms"`
						Attempts int
						Sample   []struct{ Lane, Outcome string }
					}
					Causes []struct{ Rule struct{ Name string } }
				}
				PictureSVG string `json:"picture_svg"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &day), out)
			require.Empty(t, day.Error)
			pic, s := day.Picture, day.Report.Summary
			assert.Equal(t, int64(15*60_000), pic.StepMS, "a day in columns of 15 minutes")
			assert.Len(t, pic.Buckets, 96)
			assert.Equal(t, s.PaidTwice, pic.PaidTwice)
			assert.Positive(t, pic.PaidTwice, "naive pays retries again")
			assert.Equal(t, s.Duplicates, pic.Totals["paid-again"])
			sum := 0
			for _, n := range pic.Totals {
				sum += n
			}
			assert.Equal(t, s.Attempts, sum)
			require.NotEmpty(t, pic.Causes)
			assert.Equal(t, "one-transfer-per-intent", pic.Causes[0].Rule.Name)
			assert.True(t, strings.HasPrefix(day.PictureSVG, `<svg xmlns="http://www.w3.org/2000/svg"`), day.PictureSVG)
			assert.Contains(t, day.PictureSVG, tc.words)
			assert.Contains(t, day.PictureSVG, `data-outcome="paid-again"`)
		})
	}
}

// TestBridgeIsSafeForConcurrentCalls opens, steps and closes sessions from
// many goroutines at once, as overlapping Promises do.
func TestBridgeIsSafeForConcurrentCalls(t *testing.T) {
	b := newBridge()
	var wg sync.WaitGroup
	n := 8
	if runtime.GOOS == "js" {
		n = 2 // SQLite is interpreted under WebAssembly in Node; -race covers this natively
	}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, _ := openSession(t, b, doubleTap, "")
			st := decode(t, b.run(id))
			assert.Len(t, st.Transfers, 2, "session %d", i)
			assert.JSONEq(t, `{"closed":true}`, b.close(id))
		}()
	}
	wg.Wait()
	assert.Empty(t, b.sessions)
}

func TestBridgeLimitsOpenSessions(t *testing.T) {
	b := newBridge()
	defer b.closeAll()
	assert.Equal(t, MaxSessions, b.max)
	b.max = 3
	for i := 0; i < b.max; i++ {
		openSession(t, b, doubleTap, "")
	}
	assert.Contains(t, b.open(doubleTap, ""), "too many open sessions (3)")
	b.closeAll()
	assert.NotContains(t, b.open(doubleTap, ""), "error", fmt.Sprint("closing frees room"))
}

// twoServers is a retry that the load balancer sends to the other server,
// both guarded by a lock in each server's memory.
const twoServers = `{
  "id": "s2", "level": "scoped", "policy": {"claim": "check-then-insert", "lock": "memory"}, "servers": 2,
  "accounts": {"minji": 500000, "tickets": 0},
  "lanes": [
    {"id": "A1", "intent": "t", "customer": "minji", "key": "tkt-1", "server": 1, "body": {"from": "minji", "to": "tickets", "amount": 150000}},
    {"id": "A2", "intent": "t", "customer": "minji", "key": "tkt-1", "server": 2, "body": {"from": "minji", "to": "tickets", "amount": 150000}}
  ],
  "schedule": ["A1@claim", "A2@claim", "A1", "A2", "A1@end", "A2@end"]
}`

// The bridge carries the servers through: each lane says which it reached,
// the policy's lock round-trips by name, and flipping the claim to the
// constraint (as the sandbox does, with a whole policy) pays once.
func TestBridgePlaysTwoServers(t *testing.T) {
	b := newBridge()
	id, st := openSession(t, b, twoServers, "")
	var raw struct {
		Servers int `json:"servers"`
		Policy  struct {
			Lock string `json:"lock"`
		} `json:"policy"`
		Lanes []struct {
			ID     string `json:"id"`
			Server int    `json:"server"`
		} `json:"lanes"`
		Report struct {
			Rules []struct {
				OK         bool `json:"ok"`
				Violations []struct {
					Cause string `json:"cause"`
				} `json:"violations"`
			} `json:"rules"`
		} `json:"report"`
	}
	out := b.run(id)
	require.NoError(t, json.Unmarshal([]byte(out), &raw), out)
	assert.Equal(t, 2, raw.Servers)
	assert.Equal(t, "memory", raw.Policy.Lock)
	require.Len(t, raw.Lanes, 2)
	assert.Equal(t, 1, raw.Lanes[0].Server)
	assert.Equal(t, 2, raw.Lanes[1].Server)
	assert.Len(t, decode(t, out).Transfers, 2)
	require.False(t, raw.Report.Rules[0].OK)
	assert.Equal(t, "memory-lock", raw.Report.Rules[0].Violations[0].Cause)
	assert.Equal(t, "check-then-insert", st.Policy.Claim)

	fixed := decode(t, b.setPolicy(id, `{"level":"scoped","claim":"constraint","fingerprint":"canonical","in_progress":"two-phase","replay":"stored","scope":"customer-endpoint","lock":"memory","retention":"24h","lease":"30s"}`))
	require.Empty(t, fixed.Error)
	after := decode(t, b.run(id))
	assert.Len(t, after.Transfers, 1)
	assert.Equal(t, "constraint", after.Policy.Claim)
	assert.Contains(t, b.setPolicy(id, `{"lock":"mutex"}`), `unknown lock mode`)
	b.close(id)
}
