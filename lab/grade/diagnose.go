package grade

import (
	"time"

	"idemlab/lab"
)

// setCause fills a failure's diagnosis and fix (lab.CauseOf); without a
// cause, the fix is the rule's usual one (lab.RuleFix).
func setCause(f *Failure, id string) {
	c, ok := lab.CauseOf(id)
	if !ok {
		f.Cause, f.Diagnosis, f.Fix = "", "", lab.RuleFix(f.Rule)
		return
	}
	f.Cause, f.Diagnosis, f.Fix = c.ID, c.Says, c.Fix
}

// timing is when each attempt of a history was sent and when its answer
// arrived (or the grader cut it).
type timing struct{ sent, answered []time.Time }

// midTransfer reports whether attempt g was answered while another attempt
// under its key, one that carried the transfer (or whose answer was never
// read), was still in flight: a "done" given then was given before the work
// was.
func (tm timing) midTransfer(attempts []lab.Attempt, g int) bool {
	a := attempts[g]
	for x, b := range attempts {
		if x == g || b.Key != a.Key || b.Customer != a.Customer || b.Delivered && lab.TransferID(b.Response) == "" {
			continue
		}
		if tm.sent[x].Before(tm.answered[g]) && tm.answered[g].Before(tm.answered[x]) {
			return true
		}
	}
	return false
}

// diagnose sets the cause of a rule broken in a check from the evidence
// (lab.Diagnose): the check that broke it, the attempts that show it
// (their indexes in attempts) and when each attempt was sent and answered.
func diagnose(f *Failure, check string, attempts []lab.Attempt, idx []int, tm timing) {
	rule := lab.Rule{N: f.RuleN, Name: f.Rule}
	setCause(f, lab.Diagnose(check, rule, attempts, idx, func(i int) bool { return tm.midTransfer(attempts, i) }))
}
