package web_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/lab/scenario"
	"idemlab/lessons"
	"idemlab/store/sqlite"
)

// raceRun is one scenario played to the end under one policy: the state
// the bench draws, as the page receives it.
type raceRun struct {
	Name  string          `json:"name"`
	Claim string          `json:"claim"`
	State json.RawMessage `json:"state"`
}

// lessonRuns plays every lesson's scenarios (the ones of lanes; a day is
// drawn from its picture) under the scenario's own policy, each goal's and
// every level's preset: every claim and in-progress mode a student meets,
// so every kind of event the engine traces for the race view. The tests of
// this file share one playing.
var lessonRuns = sync.OnceValues(func() ([]raceRun, error) {
	set, err := lessons.Embedded()
	if err != nil {
		return nil, err
	}
	var runs []raceRun
	for _, l := range set.All() {
		if l.Lang != lessons.DefaultLang {
			continue
		}
		for _, spec := range l.Scenarios {
			if len(spec.Lanes) == 0 {
				continue
			}
			base, err := spec.BasePolicy()
			if err != nil {
				return nil, err
			}
			policies := map[string]engine.Policy{"own": base}
			for _, g := range spec.Goals {
				if policies["goal "+g.ID], err = spec.GoalPolicy(g); err != nil {
					return nil, err
				}
			}
			for _, level := range engine.Levels() {
				policies["level "+level] = engine.MustPreset(level)
			}
			seen := map[engine.Policy]bool{}
			for name, p := range policies {
				same := p
				if same.Level = ""; seen[same] {
					continue
				}
				seen[same] = true
				run, err := play(spec, p)
				if err != nil {
					return nil, fmt.Errorf("%s %s, %s: %w", l.ID, spec.ID, name, err)
				}
				run.Name = l.ID + " " + spec.ID + ", " + name
				runs = append(runs, run)
			}
		}
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("no lesson has a scenario of lanes")
	}
	return runs, nil
})

// play runs spec to the end under p, on SQLite in memory as the page does.
func play(spec scenario.Spec, p engine.Policy) (raceRun, error) {
	s, err := scenario.New(spec, p, func() (scenario.Store, error) { return sqlite.OpenMemory() })
	if err != nil {
		return raceRun{}, err
	}
	defer s.Close()
	st, err := s.Run()
	if err != nil {
		return raceRun{}, err
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return raceRun{}, err
	}
	claim, err := p.Claim.MarshalText()
	return raceRun{Claim: string(claim), State: raw}, err
}

func playLessons(t *testing.T) []raceRun {
	t.Helper()
	runs, err := lessonRuns()
	require.NoError(t, err)
	return runs
}

// wireEvent is the part of a trace event in JSON these tests read: the
// typed fields are read as raw JSON, so that a field left out is told from
// a zero.
type wireEvent struct {
	Phase      string          `json:"phase"`
	Outcome    string          `json:"outcome"`
	Note       string          `json:"note"`
	Amount     json.RawMessage `json:"amount"`
	TransferID string          `json:"transfer_id"`
	Rows       json.RawMessage `json:"rows"`
	KeyState   string          `json:"key_state"`
	ChargeID   string          `json:"charge_id"`
	Charge     string          `json:"charge"`
	ReplayFrom string          `json:"replay_from"`
}

type wireState struct {
	Lanes []struct {
		ID       string      `json:"id"`
		Events   []wireEvent `json:"events"`
		Response *struct {
			Header []engine.Header `json:"header"`
			Body   string          `json:"body"`
		} `json:"response"`
	} `json:"lanes"`
	Transfers []struct {
		ID     string `json:"transfer_id"`
		Amount int64  `json:"amount"`
	} `json:"transfers"`
	Charges []struct {
		ID     string `json:"charge_id"`
		Amount int64  `json:"amount"`
	} `json:"charges"`
	Report *struct {
		Rules []struct {
			Rule struct {
				Name string `json:"name"`
			} `json:"rule"`
			Violations []json.RawMessage `json:"violations"`
		} `json:"rules"`
	} `json:"report"`
}

// broke says whether the run's checker found the rule named broken.
func (st wireState) broke(rule string) bool {
	if st.Report == nil {
		return false
	}
	for _, r := range st.Report.Rules {
		if r.Rule.Name == rule && len(r.Violations) > 0 {
			return true
		}
	}
	return false
}

// TestTraceJSONCarriesWhatTheRaceDraws reads the events of every lesson
// played at every level as the page gets them, in JSON, and checks that
// each commit says the amount and the transfer it moved, each payment
// call the processor's charge and what the processor did with it, and
// each claim that wrote or tried to write a key row how many rows it
// wrote.
func TestTraceJSONCarriesWhatTheRaceDraws(t *testing.T) {
	runs := playLessons(t)
	kinds := map[string]int{}
	for _, r := range runs {
		var st wireState
		require.NoError(t, json.Unmarshal(r.State, &st))
		amounts := map[string]int64{}
		for _, tr := range st.Transfers {
			amounts[tr.ID] = tr.Amount
		}
		charges := map[string]int64{}
		for _, ch := range st.Charges {
			charges[ch.ID] = ch.Amount
		}
		committed, charged := 0, 0
		for _, l := range st.Lanes {
			for _, e := range l.Events {
				where := fmt.Sprintf("%s: %s %s %s (%s)", r.Name, l.ID, e.Phase, e.Outcome, e.Note)
				switch {
				case e.Phase == "commit" && e.Outcome == engine.OutcomeCommitted:
					committed++
					kinds["commit"]++
					require.Contains(t, amounts, e.TransferID, where)
					assert.JSONEq(t, fmt.Sprint(amounts[e.TransferID]), string(e.Amount), where)
				case e.Phase == "execute" && e.Charge == engine.ChargeRecovered:
					// No call: the charge a recovery point named.
					kinds["charge recovered"]++
					require.Contains(t, charges, e.ChargeID, where)
					assert.JSONEq(t, fmt.Sprint(charges[e.ChargeID]), string(e.Amount), where)
				case e.Phase == "execute" && e.Outcome == engine.OutcomeExecuted && e.Charge == engine.ChargeDeclined:
					kinds["charge declined"]++
					assert.Empty(t, e.ChargeID, where)
					assert.Nil(t, e.Amount, where)
				case e.Phase == "execute" && e.Outcome == engine.OutcomeExecuted:
					kinds["charge "+e.Charge]++
					require.Contains(t, charges, e.ChargeID, where)
					assert.JSONEq(t, fmt.Sprint(charges[e.ChargeID]), string(e.Amount), where)
					switch e.Charge {
					case engine.ChargeNew:
						charged++
					case engine.ChargeReplayed:
					default:
						t.Errorf("%s: charge %q", where, e.Charge)
					}
				case e.Outcome == engine.OutcomeReplayed:
					// A replay says what it sent, and the lane's answer is
					// that: the stored answer marked as a replay, or the
					// generic "already processed" (the race view draws the
					// two apart).
					kinds["replay "+e.ReplayFrom]++
					require.NotNil(t, l.Response, where)
					switch e.ReplayFrom {
					case engine.ReplayFromStored:
						assert.Contains(t, l.Response.Header, engine.Header{Name: "Idempotent-Replayed", Value: "true"}, where)
					case engine.ReplayFromGeneric:
						assert.Contains(t, l.Response.Body, `"already_processed"`, where)
					case engine.ReplayFromRecomputed:
					default:
						t.Errorf("%s: replay_from %q", where, e.ReplayFrom)
					}
				case e.Phase == "claim" && (e.Outcome == engine.OutcomeClaimed || e.Outcome == engine.OutcomeTakenOver):
					kinds["claim "+r.Claim]++
					require.NotNil(t, e.Rows, where)
					if string(e.Rows) == "0" {
						kinds["claim that inserted nothing"]++
						assert.Equal(t, "insert-or-ignore", r.Claim, where)
					} else {
						assert.Equal(t, "1", string(e.Rows), where)
						assert.NotEmpty(t, e.KeyState, where)
					}
				default:
					assert.Nil(t, e.Amount, where)
				}
			}
		}
		assert.Equal(t, len(st.Transfers), committed, "%s: every transfer has its commit event", r.Name)
		assert.Equal(t, len(st.Charges), charged, "%s: every charge has its payment call", r.Name)
	}
	for _, k := range []string{"commit", "charge charged", "charge replayed", "charge declined", "charge recovered", "claim check-then-insert", "claim insert-or-ignore", "claim constraint", "claim server-cache", "claim that inserted nothing", "replay stored", "replay generic"} {
		assert.Positive(t, kinds[k], "the lessons trace at least one %s", k)
	}
}

// raceModelScript builds the race view's model (race-model.js, in Node)
// from each run's state as the bench does, once with the engine's notes
// and once for each rewording of them, and prints what the picture is
// made of: the rows and their marks, each key's row in the database, the
// relations drawn between attempts, the ledger with the amounts and
// balances, for the step clock and the trace's clock.
const raceModelScript = `
import { readFileSync } from 'node:fs';
import { buildRace } from './race-model.js';

const runs = JSON.parse(readFileSync(process.argv[2], 'utf8'));

const rewordings = {
  reversed: (n) => [...n].reverse().join(''),
  deleted: () => undefined,
  // Words that a reader of notes would take for facts.
  decoy: () => '0 rows inserted; moved 1 won as t-decoy',
};

function input(st, reword, clock) {
  const lanes = st.lanes.map((l) => Object.assign({}, l, { events: (l.events || []).map(reword) }));
  const events = lanes.flatMap((l) => l.events);
  const violations = [];
  for (const r of (st.report && st.report.rules) || []) for (const v of r.violations || []) violations.push(Object.assign({ rule: r.rule }, v));
  return { events, lanes, violations, policy: st.policy, transfers: st.transfers, accounts: st.accounts, clock, servers: st.servers };
}

const markOf = (m) => m && { i: m.i, lane: m.lane, kind: m.kind };
const rowOf = (s) => s && { x0: s.x0, state: s.state, owner: s.owner, status: s.status, i: s.i };

function picture(model) {
  return {
    span: model.span, xs: model.xs, breaks: model.breaks, servers: model.servers, opening: model.opening,
    attempts: [...model.attempts.values()].map((a) => ({
      id: a.id, label: a.label, group: a.group && a.group.id, signature: a.signature, answer: a.answer, paidAgain: a.paidAgain,
      marks: a.marks.map((m) => ({ i: m.i, x: m.x, x0: m.x0, kind: m.kind, icon: m.icon, amount: m.amount, row: rowOf(m.dbSegment) })),
    })),
    groups: model.groups.map((g) => ({ id: g.id, winner: g.winner, claim: markOf(g.claimMark), stored: markOf(g.storedMark), rows: g.db.map(rowOf) })),
    arrows: model.arrows.map((a) => ({ kind: a.kind, i: a.i, from: markOf(a.from), to: a.to && (a.to.db ? { db: true, lane: a.to.lane, x: a.to.x } : markOf(a.to)), toLane: a.toLane, toDb: a.toDb })),
    ledger: model.ledger,
    processor: model.processor, show_processor: model.showProcessor,
    violations: model.violations.map((v) => ({ n: v.n, rule: v.rule.name, lanes: v.lanes })),
  };
}

const out = [];
for (const [run, r] of runs.entries()) {
  for (const clock of ['step', 'time']) {
    const asTraced = picture(buildRace(input(r.state, (e) => e, clock)));
    const reworded = {};
    for (const [name, f] of Object.entries(rewordings)) {
      reworded[name] = picture(buildRace(input(r.state, (e) => Object.assign({}, e, { note: f(e.note || '') }), clock)));
    }
    out.push({ run, clock, as_traced: asTraced, reworded });
  }
}
process.stdout.write(JSON.stringify(out));
`

// racePictures is what raceModelScript prints for one run and clock.
type racePictures struct {
	Run      int                        `json:"run"`
	Clock    string                     `json:"clock"`
	AsTraced json.RawMessage            `json:"as_traced"`
	Reworded map[string]json.RawMessage `json:"reworded"`
}

// raceModel runs raceModelScript over runs in Node, on copies of the
// modules it imports.
func raceModel(t *testing.T, runs []raceRun) []racePictures {
	t.Helper()
	var out []racePictures
	runInNode(t, "the race view's model is", raceModelScript, []string{"race-model.js", "dom.js"}, runs, &out)
	require.Len(t, out, 2*len(runs))
	return out
}

// TestRaceViewIgnoresNotes checks that the race view's model, from which
// the bench, the projector and the phones draw, is the same whatever the
// notes say: reversed, removed, or rewritten into words that look like the
// facts a view needs. A view reads the events' typed fields; notes are for
// people (STYLE.md 13). It also checks that the model's ledger is the
// store's: every transfer, its amount, the claims that inserted nothing.
func TestRaceViewIgnoresNotes(t *testing.T) {
	runs := playLessons(t)
	ignored := 0
	for _, m := range raceModel(t, runs) {
		r := runs[m.Run]
		t.Run(r.Name+" ("+m.Clock+" clock)", func(t *testing.T) {
			for name, p := range m.Reworded {
				assert.JSONEq(t, string(m.AsTraced), string(p), "notes %s", name)
			}
			var st wireState
			require.NoError(t, json.Unmarshal(r.State, &st))
			want := map[string]int64{}
			for _, tr := range st.Transfers {
				want[tr.ID] = tr.Amount
			}
			var pic struct {
				Attempts []struct {
					Marks []struct{ Kind string }
				}
				Ledger []struct {
					Transfer string
					Amount   int64
				}
				Processor []struct {
					Charge   string
					Amount   int64
					Again    bool
					Replayed bool
				}
				ShowProcessor bool `json:"show_processor"`
			}
			require.NoError(t, json.Unmarshal(m.AsTraced, &pic))
			// The processor's row is the processor's records: every new
			// charge once, the calls it answered from a known key marked
			// as such, and the row drawn when it tells more than the
			// ledger's (more charges than transfers, or a replayed call)
			// or, on a lesson's bench (the step clock), when the
			// processor's own rule is broken (its bracket names charges).
			charges := map[string]int64{}
			for _, ch := range st.Charges {
				charges[ch.ID] = ch.Amount
			}
			fresh, replayed := map[string]int64{}, 0
			for _, p := range pic.Processor {
				if p.Replayed {
					replayed++
					assert.Contains(t, charges, p.Charge)
					continue
				}
				fresh[p.Charge] = p.Amount
			}
			assert.Equal(t, charges, fresh, "the picture's processor is the store's")
			assert.Equal(t, replayed > 0 || len(st.Charges) > len(st.Transfers) || (m.Clock == "step" && len(st.Charges) > 0 && st.broke("one-charge-per-intent")), pic.ShowProcessor, "the processor's row is drawn when it tells more")
			got := map[string]int64{}
			for _, e := range pic.Ledger {
				got[e.Transfer] = e.Amount
			}
			assert.Len(t, pic.Ledger, len(st.Transfers), "one commit drawn per transfer")
			assert.Equal(t, want, got, "the picture's ledger is the store's")
			drawn := map[string]int{}
			for _, a := range pic.Attempts {
				for _, mk := range a.Marks {
					if mk.Kind == "claim-ignored" {
						ignored++
						assert.Equal(t, "insert-or-ignore", r.Claim)
					}
					drawn[mk.Kind]++
				}
			}
			// Each replay is drawn as what it sent: only the stored answer
			// is a "replayed the stored answer" mark.
			traced := map[string]int{}
			for _, l := range st.Lanes {
				for _, e := range l.Events {
					if e.Outcome == engine.OutcomeReplayed {
						traced[e.ReplayFrom]++
					}
				}
			}
			assert.Equal(t, traced[engine.ReplayFromStored], drawn["replay"], "stored answers replayed")
			assert.Equal(t, traced[engine.ReplayFromGeneric], drawn["replay-generic"], "generic answers")
			assert.Equal(t, traced[engine.ReplayFromRecomputed], drawn["replay-recomputed"], "answers built again")
		})
	}
	assert.Positive(t, ignored, "some lesson has an INSERT OR IGNORE that inserted nothing")
}
