package grade_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/lab"
	"idemlab/lab/grade"
	"idemlab/store/sqlite"
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
// outside what that bug can break (allowed); where it is set, also the
// check that fails or warns, the cause diagnosed and what the report says
// (more).
func TestGradeNamesEachPlantedBug(t *testing.T) {
	cases := []struct {
		name    string
		base    func(t *testing.T) string
		target  []string
		allowed []string
		more    verdict
	}{{
		name: "check-then-insert",
		base: func(t *testing.T) string {
			p := scoped.With(func(p *engine.Policy) { p.Claim = engine.ClaimCheckThenInsert })
			return engineServer(t, p, engine.Options{Hook: slowAt(engine.PhaseClaim, "insert", 20*time.Millisecond)}, nil)
		},
		target: []string{"one-transfer-per-intent"},
		// A corrected amount sent with the first request may see no key
		// either, and be paid too.
		allowed: []string{"one-transfer-per-intent", "replay-is-byte-identical", "different-request-never-succeeds"},
	}, {
		name: "no in-progress state: pay first, write the key after",
		base: func(t *testing.T) string {
			p := scoped.With(func(p *engine.Policy) { p.InProgress = engine.InProgressExecuteFirst })
			return engineServer(t, p, engine.Options{PaymentLatency: 20 * time.Millisecond}, nil)
		},
		target: []string{"one-transfer-per-intent"},
		// A corrected amount sent with the first request is paid too.
		allowed: []string{"one-transfer-per-intent", "replay-is-byte-identical", "different-request-never-succeeds"},
	}, {
		name: "key-only: no fingerprint",
		base: func(t *testing.T) string {
			return engineServer(t, scoped.With(func(p *engine.Policy) { p.Fingerprint = engine.FingerprintNone }), engine.Options{}, nil)
		},
		target: []string{"different-request-never-succeeds"},
		more:   verdict{fail: []string{"correction"}, causes: []string{"no-fingerprint"}},
	}, {
		name: "raw-bytes fingerprint",
		base: func(t *testing.T) string {
			return engineServer(t, scoped.With(func(p *engine.Policy) { p.Fingerprint = engine.FingerprintRaw }), engine.Options{}, nil)
		},
		target: []string{"replay-is-byte-identical"},
		more: verdict{fail: []string{"reordered"}, causes: []string{"raw-bytes-fingerprint"},
			report: []string{"re-spaced in the same order (reordered.2) got 422"}},
	}, {
		name: "recomputed replays",
		base: func(t *testing.T) string {
			return engineServer(t, scoped.With(func(p *engine.Policy) { p.Replay = engine.ReplayRecompute }), engine.Options{}, nil)
		},
		target: []string{"replay-is-byte-identical"},
		// A refusal names no transfer to recompute, so its retry gets the
		// generic "already processed": a success without a transfer.
		allowed: []string{"replay-is-byte-identical", "completion-has-its-transfer"},
		more:    verdict{fail: []string{"retry"}, causes: []string{"recomputed-replay"}, report: []string{`"balance_after" is`}},
	}, {
		name: "global keys",
		base: func(t *testing.T) string {
			return engineServer(t, scoped.With(func(p *engine.Policy) { p.Scope = engine.ScopeGlobal }), engine.Options{}, nil)
		},
		target: []string{"completion-has-its-transfer", "customers-see-own-responses"},
		more:   verdict{fail: []string{"other-customer"}, causes: []string{"global-keys"}},
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
	}, {
		// The contract asks for longer than the horizon: a retry at its very
		// end must still find its key.
		name: "retention of exactly the retry horizon",
		base: func(t *testing.T) string {
			return engineServer(t, scoped.With(func(p *engine.Policy) { p.Retention = engine.Duration(time.Hour) }), engine.Options{}, nil)
		},
		target: []string{"retention-outlasts-retries"},
		more:   verdict{fail: []string{"retention"}, causes: []string{"short-retention"}},
	}, {
		// Global keys whose refusal is 417, not 422: customer B's and C's
		// own transfers under A's key string are never paid.
		name: "global keys refused with 417",
		base: func(t *testing.T) string {
			return engineServer(t, scoped.With(func(p *engine.Policy) { p.Scope = engine.ScopeGlobal }), engine.Options{}, statusFor(422, 417))
		},
		target:  []string{"customers-see-own-responses"},
		allowed: []string{"customers-see-own-responses", "completion-has-its-transfer"},
		more: verdict{fail: []string{"other-customer"}, warn: []string{"correction"}, causes: []string{"global-keys"},
			report: []string{"was answered 417", "never paid, because customer"}},
	}, {
		name:   "a key missing is no reason to refuse",
		base:   func(t *testing.T) string { return engineServer(t, scoped, engine.Options{}, inventKeys(false)) },
		target: []string{"one-transfer-per-intent"},
		more: verdict{fail: []string{"missing-key"}, causes: []string{"key-optional"},
			report: []string{"answer 400 to a transfer without a valid Idempotency-Key"}},
	}, {
		name: "a lenient key parser",
		base: func(t *testing.T) string { return engineServer(t, scoped, engine.Options{}, inventKeys(true)) },
		more: verdict{warn: []string{"malformed-keys"}, report: []string{"and money may have moved"}},
	}, {
		name: "replays hard-coded to 200",
		base: func(t *testing.T) string {
			return engineServer(t, scoped, engine.Options{}, replayedAs(200))
		},
		target: []string{"replay-is-byte-identical"},
		// A refusal replayed as 200 is a success without a transfer.
		allowed: []string{"replay-is-byte-identical", "completion-has-its-transfer"},
		more: verdict{fail: []string{"retry"}, causes: []string{"replay-status"},
			report: []string{"status 200 against the first answer's 201"}},
	}, {
		// A key table that keeps the status and the body but not the
		// headers: the replay goes out with whatever the server adds
		// (Go's sniffed text/plain).
		name: "replays without their Content-Type",
		base: func(t *testing.T) string {
			return engineServer(t, scoped, engine.Options{}, replayedWithoutType)
		},
		target: []string{"replay-is-byte-identical"},
		more: verdict{fail: []string{"retry"}, causes: []string{"replay-headers"},
			report: []string{`Content-Type "text/plain; charset=utf-8" against the first answer's "application/json"`}},
	}, {
		// A middleware that keeps every answer under its key keeps the 400
		// of a bad body and the 401 of a missing customer too: the
		// customer's repaired request gets the refusal again.
		name:   "refusals of bad requests stored under the key",
		base:   func(t *testing.T) string { return engineServer(t, scoped, engine.Options{}, storesRefusals) },
		target: []string{"different-request-never-succeeds"},
		more: verdict{fail: []string{"repaired"}, causes: []string{"stored-validation-refusal"},
			report: []string{"a body whose amount is a JSON string", "a transfer without X-Customer-ID", "validate the headers and the body"}},
	}, {
		name: "409 without Retry-After",
		base: func(t *testing.T) string {
			return engineServer(t, scoped, engine.Options{PaymentLatency: 20 * time.Millisecond}, withoutHeader("Retry-After"))
		},
		more: verdict{warn: []string{"together"}, report: []string{"without a Retry-After header"}},
	}, {
		// The key is marked completed before the transfer: simultaneous
		// retries are told "already processed" while it runs. The fix is
		// the in-progress state, and the report must say so for this check.
		name: "completed before the transfer",
		base: func(t *testing.T) string {
			p := scoped.With(func(p *engine.Policy) { p.InProgress = engine.InProgressCompletedFirst })
			return engineServer(t, p, engine.Options{PaymentLatency: 20 * time.Millisecond}, nil)
		},
		target:  []string{"replay-is-byte-identical"},
		allowed: []string{"replay-is-byte-identical", "completion-has-its-transfer"},
		more: verdict{fail: []string{"together"}, causes: []string{"completed-before-paid"},
			report: []string{"the attempt that answered first", "answer 409 with Retry-After: 1"}},
	}, {
		// The fingerprint holds the amount alone: the same amount to
		// another payee under a used key is taken for a retry.
		name:   "a fingerprint of the amount alone",
		base:   func(t *testing.T) string { return engineServer(t, scoped, engine.Options{}, amountOnlyFingerprint) },
		target: []string{"different-request-never-succeeds"},
		// The payee's answer names the first payee: rule 5 reads it as
		// someone else's answer.
		allowed: []string{"different-request-never-succeeds", "customers-see-own-responses"},
		more:    verdict{fail: []string{"correction"}, causes: []string{"no-fingerprint"}},
	}, {
		// The key's state is read before its fingerprint: a corrected
		// amount sent while the first request runs is told to wait.
		name: "the state read before the fingerprint",
		base: func(t *testing.T) string {
			return engineServer(t, scoped, engine.Options{PaymentLatency: 20 * time.Millisecond}, stateBeforeFingerprint)
		},
		more: verdict{warn: []string{"correction"}, report: []string{"was answered 409, to wait; the contract says 422"}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := grade.Grade(context.Background(), c.base(t), gradeOpts())
			require.NoError(t, err)
			want := c.more
			want.target, want.allowed = c.target, c.allowed
			if want.allowed == nil {
				want.allowed = c.target
			}
			assertVerdict(t, rep, want)
			for _, f := range rep.Failures {
				assert.NotEmpty(t, f.Message)
				if f.Rule != "money-conserved" {
					assert.NotEmpty(t, f.Curl, "%s: a student can replay it", f.Rule)
				}
			}
		})
	}
}

// respond runs bank and hands its recorded answer to edit before writing
// it: the way an endpoint's own layer between the client and its
// idempotency plants a bug.
func respond(bank http.Handler, w http.ResponseWriter, r *http.Request, edit func(rec *httptest.ResponseRecorder)) {
	rec := httptest.NewRecorder()
	bank.ServeHTTP(rec, r)
	edit(rec)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

// statusFor answers one status as another (422 as 417, as an endpoint
// that picked another status for a used key).
func statusFor(from, to int) func(http.Handler, *sqlite.DB) http.Handler {
	return func(bank http.Handler, _ *sqlite.DB) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			respond(bank, w, r, func(rec *httptest.ResponseRecorder) {
				if rec.Code == from {
					rec.Code = to
				}
			})
		})
	}
}

// replayedAs answers every replay with a fixed status, the stored body
// unchanged.
func replayedAs(status int) func(http.Handler, *sqlite.DB) http.Handler {
	return func(bank http.Handler, _ *sqlite.DB) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			respond(bank, w, r, func(rec *httptest.ResponseRecorder) {
				if rec.Header().Get("Idempotent-Replayed") == "true" {
					rec.Code = status
				}
			})
		})
	}
}

// replayedWithoutType sends replays without their Content-Type header.
func replayedWithoutType(bank http.Handler, _ *sqlite.DB) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		respond(bank, w, r, func(rec *httptest.ResponseRecorder) {
			if rec.Header().Get("Idempotent-Replayed") == "true" {
				rec.Header().Del("Content-Type")
			}
		})
	})
}

// storesRefusals is a middleware in front of the bank that keeps, under
// the Idempotency-Key header's value, every 400 and 401 the bank answered
// and answers it again to any later request under that header: the way a
// widely used idempotency middleware stores the answer of a bad request
// before the bank's own key table ever sees it.
func storesRefusals(bank http.Handler, _ *sqlite.DB) http.Handler {
	var mu sync.Mutex
	stored := map[string]*httptest.ResponseRecorder{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		if r.Method != "POST" || key == "" {
			bank.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		old := stored[key]
		mu.Unlock()
		if old != nil { // answered from the store: the bank never sees it
			for k, v := range old.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(old.Code)
			w.Write(old.Body.Bytes())
			return
		}
		respond(bank, w, r, func(rec *httptest.ResponseRecorder) {
			if rec.Code == 400 || rec.Code == 401 {
				mu.Lock()
				stored[key] = rec
				mu.Unlock()
			}
		})
	})
}

// stateBeforeFingerprint is a middleware in front of the bank that
// answers 409 to a request whose key (its customer's) another request
// holds, still running, before the bank compares their fingerprints: an
// endpoint that reads the key's state first.
func stateBeforeFingerprint(bank http.Handler, _ *sqlite.DB) http.Handler {
	var mu sync.Mutex
	running := map[string]string{} // customer and key → the body being processed
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("X-Customer-ID") + "\x00" + r.Header.Get("Idempotency-Key")
		if r.Method != "POST" || r.Header.Get("Idempotency-Key") == "" {
			bank.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		mu.Lock()
		held, busy := running[key]
		if !busy {
			running[key] = string(body)
		}
		mu.Unlock()
		if busy && held != string(body) {
			w.Header().Set("Content-Type", "application/problem+json")
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"type":"about:blank","title":"A request with this key is still being processed","status":409}`))
			return
		}
		if !busy {
			defer func() {
				mu.Lock()
				delete(running, key)
				mu.Unlock()
			}()
		}
		bank.ServeHTTP(w, r)
	})
}

// amountOnlyFingerprint is a middleware in front of the bank that makes
// it fingerprint a request by its amount alone: a later request under a
// key (its customer's) with the first one's amount reaches the bank as
// the first request's body, so that the bank takes it for a retry.
func amountOnlyFingerprint(bank http.Handler, _ *sqlite.DB) http.Handler {
	var mu sync.Mutex
	first := map[string][]byte{} // customer and key → the first body
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || r.Header.Get("Idempotency-Key") == "" {
			bank.ServeHTTP(w, r)
			return
		}
		key := r.Header.Get("X-Customer-ID") + "\x00" + r.Header.Get("Idempotency-Key")
		body, _ := io.ReadAll(r.Body)
		var now, was struct{ Amount json.Number }
		mu.Lock()
		old, seen := first[key]
		mu.Unlock()
		if seen && json.Unmarshal(body, &now) == nil && json.Unmarshal(old, &was) == nil && now.Amount == was.Amount {
			body = old
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		respond(bank, w, r, func(rec *httptest.ResponseRecorder) {
			// The key's first request is the one the bank kept: not one
			// it refused before claiming anything (400, 401).
			if !seen && rec.Code != 400 && rec.Code != 401 {
				mu.Lock()
				if _, ok := first[key]; !ok {
					first[key] = body
				}
				mu.Unlock()
			}
		})
	})
}

// withoutHeader drops a header from every answer.
func withoutHeader(name string) func(http.Handler, *sqlite.DB) http.Handler {
	return func(bank http.Handler, _ *sqlite.DB) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			respond(bank, w, r, func(rec *httptest.ResponseRecorder) { rec.Header().Del(name) })
		})
	}
}

// inventKeys makes up a key where the client sent none (a transfer without
// a key is executed, as middleware that skips requests without the header
// does) or, when lenient, also where the key is not a valid one: its first
// line, stripped of quotes, lists and parameters, or a fresh key when
// nothing printable is left.
func inventKeys(lenient bool) func(http.Handler, *sqlite.DB) http.Handler {
	var n atomic.Int64
	fresh := func() string { return fmt.Sprintf(`"invented-%d-%d"`, time.Now().UnixNano(), n.Add(1)) }
	return func(bank http.Handler, _ *sqlite.DB) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == "POST" {
				lines := r.Header.Values("Idempotency-Key")
				switch {
				case len(lines) == 0 && !lenient:
					r.Header.Set("Idempotency-Key", fresh())
				case len(lines) > 0 && lenient:
					if _, prob := engine.ParseKey(lines); prob != nil {
						k := strings.Trim(strings.SplitN(strings.SplitN(lines[0], ",", 2)[0], ";", 2)[0], `" `)
						if k == "" || strings.ContainsFunc(k, func(c rune) bool { return c < 0x20 || c > 0x7e || c == '"' || c == '\\' }) {
							r.Header.Set("Idempotency-Key", fresh())
						} else {
							r.Header.Set("Idempotency-Key", `"`+k[:min(len(k), 255)]+`"`)
						}
					}
				}
			}
			bank.ServeHTTP(w, r)
		})
	}
}

func TestGradeScopedEngineWithPublishedRetentionPasses(t *testing.T) {
	rep, err := grade.Grade(context.Background(), engineServer(t, scoped, engine.Options{}, nil), gradeOpts())
	require.NoError(t, err)
	assert.True(t, rep.OK, "%v", rep.Broken())
	assert.Empty(t, rep.Notes)
	// Rule 8 is about the endpoint's processor, which the grader never
	// sees: it says so, and the run passes without it.
	require.Len(t, rep.Rules, len(lab.Rules()))
	last := rep.Rules[len(rep.Rules)-1]
	assert.Equal(t, lab.RuleOneCharge.Name, last.Name)
	assert.Equal(t, grade.NotJudged, last.Verdict)
	var b strings.Builder
	require.NoError(t, rep.WriteText(&b))
	assert.Contains(t, b.String(), "8. one-charge-per-intent")
	assert.Contains(t, b.String(), "NOT JUDGED (the processor is out of the grader's sight)")
}

func TestGradeWithoutPublishedRetentionIsUnknown(t *testing.T) {
	db, err := sqlite.OpenMemory()
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
func leakyFee(bank http.Handler, db *sqlite.DB) http.Handler {
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
