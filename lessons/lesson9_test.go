package lessons_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/lab"
	"idemlab/lab/scenario"
)

// TestProcessorLessonChargesWhatItSays plays lesson 9 in every language it
// is written in and checks more than its goals: the slow worker really
// called the processor before its lease ran out, the retry's takeover
// really charged a second time while the ledger holds one transfer, and
// with the key passed downstream the retry's call is answered with the
// first charge; the sandbox's crash after the call charges twice, and once
// with the key.
func TestProcessorLessonChargesWhatItSays(t *testing.T) {
	inEveryLanguage(t, "09-processor", func(t *testing.T, specs map[string]scenario.Spec, play playFunc) {
		// called is the lane's payment call: what the processor did and
		// the charge it named.
		called := func(t *testing.T, st scenario.State, lane string) engine.Event {
			t.Helper()
			for _, ls := range st.Lanes {
				if ls.ID != lane {
					continue
				}
				for _, e := range ls.Events {
					if e.Phase == engine.PhaseExecute && e.Outcome == engine.OutcomeExecuted {
						return e
					}
				}
			}
			t.Fatalf("%s never called the processor", lane)
			return engine.Event{}
		}
		status := func(st scenario.State, lane string) int {
			for _, ls := range st.Lanes {
				if ls.ID == lane && ls.Response != nil {
					return ls.Response.Status
				}
			}
			return 0
		}

		t.Run("no key downstream: the takeover charges twice", func(t *testing.T) {
			st := play(t, "s1", nil)
			assert.Equal(t, engine.DownstreamOff, st.Policy.DownstreamKey)
			assert.Len(t, st.Transfers, 1, "the slow worker's ledger transaction rolled back")
			require.Len(t, st.Charges, 2, "but its charge stands")
			a1, a2 := called(t, st, "A1"), called(t, st, "A2")
			assert.Equal(t, engine.ChargeNew, a1.Charge)
			assert.Equal(t, engine.ChargeNew, a2.Charge)
			assert.NotEqual(t, a1.ChargeID, a2.ChargeID)
			assert.Empty(t, a1.DownstreamKey)
			assert.Less(t, a1.Seq, a2.Seq, "A1 called before A2 took its claim over")
			assert.Equal(t, 409, status(st, "A1"), "the slow worker lost its claim")
			assert.Equal(t, 201, status(st, "A2"))
			assert.True(t, st.Report.Rule(lab.RuleOneTransfer).OK)
			v := st.Report.Rule(lab.RuleOneCharge).Violations
			require.Len(t, v, 1)
			assert.Equal(t, "room", v[0].Intent)
			assert.Equal(t, []string{lab.RuleOneCharge.Name}, st.Report.Broken(), "every other rule holds")
		})
		t.Run("key downstream: the processor answers with its first charge", func(t *testing.T) {
			st := play(t, "s2", nil)
			assert.Equal(t, engine.DownstreamOn, st.Policy.DownstreamKey, "the scoped rung passes the key")
			assert.Len(t, st.Transfers, 1)
			require.Len(t, st.Charges, 1)
			a1, a2 := called(t, st, "A1"), called(t, st, "A2")
			assert.Equal(t, engine.ChargeNew, a1.Charge)
			assert.Equal(t, engine.ChargeReplayed, a2.Charge)
			assert.Equal(t, a1.ChargeID, a2.ChargeID)
			assert.Equal(t, "seoyeon:hotel-0907", a2.DownstreamKey)
			assert.Equal(t, 409, status(st, "A1"))
			assert.True(t, st.Report.OK, "%v", st.Report.Broken())
		})
		t.Run("recovery points: the takeover carries on from charge_made", func(t *testing.T) {
			st := play(t, "s3", nil)
			assert.Equal(t, engine.DownstreamOff, st.Policy.DownstreamKey)
			assert.Equal(t, engine.RecoveryPoints, st.Policy.RecoveryPoints)
			assert.Len(t, st.Transfers, 1)
			require.Len(t, st.Charges, 1, "one call: the retry did not call again")
			a1 := called(t, st, "A1")
			assert.Equal(t, engine.RecoveryChargeStarted, a1.Recovery)
			var made, carried bool
			for _, ls := range st.Lanes {
				for _, e := range ls.Events {
					if e.Phase != engine.PhaseExecute {
						continue
					}
					switch {
					case ls.ID == "A1" && e.Recovery == engine.RecoveryChargeMade:
						made = e.ChargeID == a1.ChargeID
					case ls.ID == "A2":
						assert.NotEqual(t, engine.OutcomeExecuted, e.Outcome, "A2 never calls the processor")
						if e.Charge == engine.ChargeRecovered {
							carried = e.ChargeID == a1.ChargeID
						}
					}
				}
			}
			assert.True(t, made, "A1 recorded charge_made with its charge")
			assert.True(t, carried, "A2 carried on from A1's charge")
			assert.Equal(t, 201, status(st, "A2"))
			assert.True(t, st.Report.OK, "%v", st.Report.Broken())
		})
		t.Run("sandbox: a crash between the call and charge_made", func(t *testing.T) {
			spec := specs["s4"]
			require.True(t, spec.Sandbox)
			for _, g := range spec.Goals {
				p, err := spec.GoalPolicy(g)
				require.NoError(t, err)
				assert.Equal(t, engine.RecoveryPoints, p.RecoveryPoints, "the recovery points are on and do not help")
				st := play(t, "s4", &p)
				want := map[string]int{scenario.ExpectBreak: 2, scenario.ExpectHold: 1}[g.Expect]
				assert.Len(t, st.Charges, want, "%s under %s", g.ID, policyJSON(p))
				assert.Len(t, st.Transfers, 1, "%s: the retry's transfer, once", g.ID)
			}
		})
	})
}
