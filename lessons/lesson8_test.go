package lessons_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/lab"
	"idemlab/lab/scenario"
)

// TestTwoServersTeachesTheVerdictInTheDatabase plays lesson 8 in every
// language it is written in and checks more than its goals: on one server
// the in-memory lock really makes the retry wait; on two it never does and
// the checker lays the double payment at the lock's (or the cache's)
// door; the scoped rung's constraint stops the second INSERT whichever
// server sent it.
func TestTwoServersTeachesTheVerdictInTheDatabase(t *testing.T) {
	inEveryLanguage(t, "08-two-servers", func(t *testing.T, specs map[string]scenario.Spec, play playFunc) {
		outcomes := func(st scenario.State, lane string) []string {
			var out []string
			for _, ls := range st.Lanes {
				if ls.ID == lane {
					for _, e := range ls.Events {
						out = append(out, e.Outcome+" "+e.Note)
					}
				}
			}
			return out
		}
		hasOutcome := func(list []string, outcome string) bool {
			for _, o := range list {
				if strings.HasPrefix(o, outcome+" ") {
					return true
				}
			}
			return false
		}

		t.Run("one server: the lock makes the retry wait", func(t *testing.T) {
			st := play(t, "s1", nil)
			assert.Len(t, st.Transfers, 1)
			assert.True(t, hasOutcome(outcomes(st, "A2"), engine.OutcomeWaiting), "%v", outcomes(st, "A2"))
			assert.True(t, st.Report.Rule(lab.RuleOneTransfer).OK)
		})
		t.Run("two servers: the lock pays twice", func(t *testing.T) {
			st := play(t, "s2", nil)
			assert.Len(t, st.Transfers, 2)
			assert.False(t, hasOutcome(outcomes(st, "A2"), engine.OutcomeWaiting))
			assert.True(t, hasOutcome(outcomes(st, "A2"), engine.OutcomeLocked))
			v := st.Report.Rule(lab.RuleOneTransfer).Violations
			require.Len(t, v, 1)
			assert.Equal(t, lab.MemoryGuardLock, v[0].Cause)
			assert.Equal(t, []int{1, 2}, []int{st.Lanes[0].Server, st.Lanes[1].Server})
		})
		t.Run("two servers: the cache pays twice", func(t *testing.T) {
			st := play(t, "s3", nil)
			assert.Len(t, st.Transfers, 2)
			v := st.Report.Rule(lab.RuleOneTransfer).Violations
			require.Len(t, v, 1)
			assert.Equal(t, lab.MemoryGuardCache, v[0].Cause)
			assert.Empty(t, st.Keys)
			assert.True(t, hasOutcome(outcomes(st, "A3"), engine.OutcomeDuplicate), "A3 is a cache hit on server 1")
			assert.True(t, hasOutcome(outcomes(st, "A3"), engine.OutcomeReplayed), "and gets the stored answer")
			assert.False(t, hasOutcome(outcomes(st, "A2"), engine.OutcomeDuplicate), "A2 is a cache miss on server 2")
		})
		t.Run("two servers: the constraint holds", func(t *testing.T) {
			st := play(t, "s4", nil)
			assert.Len(t, st.Transfers, 1)
			assert.True(t, st.Report.OK, "%v", st.Report.Broken())
			a2 := outcomes(st, "A2")
			assert.True(t, hasOutcome(a2, engine.OutcomeDuplicate), "%v", a2)
			assert.Contains(t, strings.Join(a2, "\n"), "UNIQUE constraint failed")
			status := map[string]int{}
			for _, ls := range st.Lanes {
				if ls.Response != nil {
					status[ls.ID] = ls.Response.Status
				}
			}
			assert.Equal(t, 409, status["A2"], "A2 hears that the first attempt is still running")
			assert.True(t, hasOutcome(outcomes(st, "A3"), engine.OutcomeReplayed), "A3 gets A1's stored answer")
		})
		t.Run("sandbox: flipping the claim to the constraint holds", func(t *testing.T) {
			spec := specs["s5"]
			require.True(t, spec.Sandbox)
			for _, g := range spec.Goals {
				p, err := spec.GoalPolicy(g)
				require.NoError(t, err)
				st := play(t, "s5", &p)
				want := map[string]int{scenario.ExpectBreak: 2, scenario.ExpectHold: 1}[g.Expect]
				assert.Len(t, st.Transfers, want, "%s under %s", g.ID, policyJSON(p))
			}
		})
	})
}
