package grade_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/lab/grade"
	"idemlab/store"
)

var scoped = engine.MustPreset(engine.LevelScoped)

// slowAt is a hook that makes every request pause before one phase (and
// part), which is how a slow server looks from outside: it widens the race
// window of a planted bug so that simultaneous retries fall into it every
// time.
func slowAt(phase engine.Phase, part string, d time.Duration) engine.Hook {
	return func(ctx context.Context, s engine.Step) engine.Fault {
		if s.Phase == phase && s.Part == part {
			select {
			case <-time.After(d):
			case <-ctx.Done():
			}
		}
		return engine.FaultNone
	}
}

// TestGradeNamesEachPlantedBug grades endpoints with one bug each and checks
// that the grader names the rule the bug breaks (target), and nothing
// outside what that bug can break (allowed).
func TestGradeNamesEachPlantedBug(t *testing.T) {
	cases := []struct {
		name    string
		base    func(t *testing.T) string
		target  []string
		allowed []string
	}{{
		name: "check-then-insert",
		base: func(t *testing.T) string {
			p := scoped.With(func(p *engine.Policy) { p.Claim = engine.ClaimCheckThenInsert })
			return engineServer(t, p, engine.Options{Hook: slowAt(engine.PhaseClaim, "insert", 20*time.Millisecond)}, nil)
		},
		target:  []string{"one-transfer-per-intent"},
		allowed: []string{"one-transfer-per-intent", "replay-is-byte-identical"},
	}, {
		name: "no in-progress state: pay first, write the key after",
		base: func(t *testing.T) string {
			p := scoped.With(func(p *engine.Policy) { p.InProgress = engine.InProgressExecuteFirst })
			return engineServer(t, p, engine.Options{PaymentLatency: 20 * time.Millisecond}, nil)
		},
		target:  []string{"one-transfer-per-intent"},
		allowed: []string{"one-transfer-per-intent", "replay-is-byte-identical"},
	}, {
		name: "key-only: no fingerprint",
		base: func(t *testing.T) string {
			return engineServer(t, scoped.With(func(p *engine.Policy) { p.Fingerprint = engine.FingerprintNone }), engine.Options{}, nil)
		},
		target: []string{"different-request-never-succeeds"},
	}, {
		name: "raw-bytes fingerprint",
		base: func(t *testing.T) string {
			return engineServer(t, scoped.With(func(p *engine.Policy) { p.Fingerprint = engine.FingerprintRaw }), engine.Options{}, nil)
		},
		target: []string{"replay-is-byte-identical"},
	}, {
		name: "recomputed replays",
		base: func(t *testing.T) string {
			return engineServer(t, scoped.With(func(p *engine.Policy) { p.Replay = engine.ReplayRecompute }), engine.Options{}, nil)
		},
		target: []string{"replay-is-byte-identical"},
		// A refusal names no transfer to recompute, so its retry gets the
		// generic "already processed": a success without a transfer.
		allowed: []string{"replay-is-byte-identical", "completion-has-its-transfer"},
	}, {
		name: "global keys",
		base: func(t *testing.T) string {
			return engineServer(t, scoped.With(func(p *engine.Policy) { p.Scope = engine.ScopeGlobal }), engine.Options{}, nil)
		},
		target: []string{"completion-has-its-transfer", "customers-see-own-responses"},
	}, {
		name:   "answers 201 without paying",
		base:   func(t *testing.T) string { return fakeBank(t) },
		target: []string{"completion-has-its-transfer"},
	}, {
		name: "a fee that goes nowhere",
		base: func(t *testing.T) string {
			return engineServer(t, scoped, engine.Options{}, leakyFee)
		},
		target: []string{"money-conserved"},
	}, {
		name: "retention shorter than the retries",
		base: func(t *testing.T) string {
			return engineServer(t, scoped.With(func(p *engine.Policy) { p.Retention = engine.Duration(10 * time.Minute) }), engine.Options{}, nil)
		},
		target: []string{"retention-outlasts-retries"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := grade.Grade(context.Background(), c.base(t), gradeOpts())
			require.NoError(t, err)
			var b strings.Builder
			require.NoError(t, rep.WriteText(&b))
			t.Log("\n" + b.String())
			assert.False(t, rep.OK)
			for _, r := range c.target {
				assert.Contains(t, rep.Broken(), r)
			}
			allowed := c.allowed
			if allowed == nil {
				allowed = c.target
			}
			assert.Subset(t, allowed, rep.Broken())
			for _, f := range rep.Failures {
				assert.NotEmpty(t, f.Message)
				if f.Rule != "money-conserved" {
					assert.NotEmpty(t, f.Curl, "%s: a student can replay it", f.Rule)
				}
			}
			for _, c := range rep.Checks {
				assert.Empty(t, c.Error, c.Name)
			}
		})
	}
}

func TestGradeScopedEngineWithPublishedRetentionPasses(t *testing.T) {
	rep, err := grade.Grade(context.Background(), engineServer(t, scoped, engine.Options{}, nil), gradeOpts())
	require.NoError(t, err)
	assert.True(t, rep.OK, "%v", rep.Broken())
	assert.Empty(t, rep.Notes)
}

func TestGradeWithoutPublishedRetentionIsUnknown(t *testing.T) {
	db, err := store.OpenMemory()
	require.NoError(t, err)
	defer db.Close()
	bank := httpapiFor(engine.New(db, scoped, engine.Options{}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" { // an endpoint that publishes nothing
			http.NotFound(w, r)
			return
		}
		bank.ServeHTTP(w, r)
	}))
	defer srv.Close()
	rep, err := grade.Grade(context.Background(), srv.URL, gradeOpts())
	require.NoError(t, err)
	assert.False(t, rep.OK, "rule 7 was not judged, so the run cannot pass")
	assert.Empty(t, rep.Broken())
	assert.Equal(t, grade.Unknown, rep.Rules[6].Verdict)
	assert.Nil(t, rep.RetentionSeconds)
}

func TestGradeRefusesWhatCannotBeGraded(t *testing.T) {
	for _, base := range []string{"ftp://x", "http://", "not a url", "http://127.0.0.1:1/x?y=1"} {
		_, err := grade.Grade(context.Background(), base, gradeOpts())
		assert.Error(t, err, base)
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := grade.Grade(context.Background(), url, gradeOpts())
	assert.ErrorContains(t, err, "cannot be reached")
}

// leakyFee takes one won from the payer of every new transfer and puts it
// nowhere.
func leakyFee(bank http.Handler, db *store.DB) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		bank.ServeHTTP(rec, r)
		if rec.Code == 201 && rec.Header().Get("Idempotent-Replayed") == "" {
			var t struct{ From string }
			if json.Unmarshal(rec.Body.Bytes(), &t) == nil {
				if a, err := db.GetAccount(r.Context(), t.From); err == nil {
					db.PutAccount(r.Context(), t.From, a.Balance-1)
				}
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
}

// fakeBank keeps accounts and keys properly, fingerprints and replays, but
// never moves money: every new transfer is answered 201 and forgotten.
func fakeBank(t testing.TB) string {
	var (
		mu       sync.Mutex
		balances = map[string]int64{}
		keys     = map[string][2]string{} // customer+key → body, answer
		n        int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		var body struct {
			Balance  int64
			From, To string
			Amount   int64
		}
		json.NewDecoder(r.Body).Decode(&body)
		id := strings.TrimPrefix(r.URL.Path, "/accounts/")
		switch {
		case r.Method == "GET" && r.URL.Path == "/":
			fmt.Fprint(w, `{"retention_seconds": 86400}`)
		case r.Method == "PUT":
			balances[id] = body.Balance
			fmt.Fprintf(w, `{"id":%q,"balance":%d}`, id, body.Balance)
		case r.Method == "GET":
			b, ok := balances[id]
			if !ok {
				w.WriteHeader(404)
				return
			}
			fmt.Fprintf(w, `{"id":%q,"balance":%d}`, id, b)
		case r.Method == "POST":
			key, prob := engine.ParseKey(r.Header.Values("Idempotency-Key"))
			if prob != nil || r.Header.Get("X-Customer-ID") == "" {
				w.WriteHeader(400)
				return
			}
			req := fmt.Sprintf("%s>%s:%d", body.From, body.To, body.Amount)
			k := r.Header.Get("X-Customer-ID") + "\x00" + key
			if old, ok := keys[k]; ok {
				if old[0] != req {
					w.WriteHeader(422)
					return
				}
				w.Header().Set("Idempotent-Replayed", "true")
				w.WriteHeader(201)
				fmt.Fprint(w, old[1])
				return
			}
			n++
			answer := fmt.Sprintf(`{"transfer_id":"t%d","from":%q,"to":%q,"amount":%d,"balance_after":%d,"created_at":"2026-03-02T00:00:00.000Z"}`,
				n, body.From, body.To, body.Amount, balances[body.From])
			keys[k] = [2]string{req, answer}
			w.WriteHeader(201)
			fmt.Fprint(w, answer)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
