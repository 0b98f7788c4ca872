// What the picture asks of the checker: which attempt made each transfer,
// and every broken rule counted in full.

package lab

import (
	"sort"
)

// payment is one transfer: the attempt that made it (-1: none could be
// tied to it), the attempt whose moment places it (-1: nowhere), and the
// won it paid twice (0 for an intent's first transfer).
type payment struct {
	attempt, at int
	won         int64
}

// payments ties the transfers to the attempts that made them. It returns
// each paying attempt's outcome (indexed like the attempts, "" for the
// others) and every transfer.
func (c *checker) payments() ([]Outcome, []payment) {
	h := c.h
	paid := make([]Outcome, len(h.Attempts))
	var out []payment
	count := map[string]int{} // transfers per intent so far
	record := func(intent string, attempt, at int) {
		p := payment{attempt: attempt, at: at}
		count[intent]++
		outcome := OutcomePaidOnce
		if count[intent] > 1 {
			outcome, p.won = OutcomePaidAgain, c.intents[intent].Amount
		}
		if attempt >= 0 {
			paid[attempt] = outcome
		}
		out = append(out, p)
	}
	last := func(idx []int) int {
		if len(idx) == 0 {
			return -1
		}
		return idx[len(idx)-1]
	}
	if h.Ledger != nil {
		maker := map[string]int{} // transfer id → the attempt that made it
		for i, a := range h.Attempts {
			if a.Replayed || !Success(a.Status) {
				continue
			}
			id := TransferID(a.Response)
			if _, known := c.byTransferID[id]; !known {
				continue
			}
			if _, taken := maker[id]; !taken {
				maker[id] = i
			}
		}
		used := map[int]bool{}
		for _, i := range maker {
			used[i] = true
		}
		for _, t := range h.Ledger {
			k := keyID{t.Customer, t.Key}
			i, ok := maker[t.ID]
			if !ok {
				i = -1
				for _, j := range c.byKey[k] {
					if !used[j] && h.Attempts[j].Status == 0 {
						i, used[j] = j, true
						break
					}
				}
			}
			intent, known := c.keyIntent[k]
			if !known {
				// A transfer under no key the attempts used: the checker
				// ties it to no intent, so it is no one's duplicate.
				intent = "\x00" + t.ID
			}
			at := i
			if at < 0 {
				at = last(c.byKey[k])
			}
			record(intent, i, at)
		}
		return paid, out
	}
	for _, id := range c.order {
		n := c.transfers[id]
		if n <= 0 {
			continue
		}
		var payers []int
		for _, pass := range []func(Attempt) bool{
			func(a Attempt) bool { return !a.Replayed && Success(a.Status) },
			func(a Attempt) bool { return a.Status == 0 },
		} {
			for _, i := range c.byIntent[id] {
				if len(payers) < n && pass(h.Attempts[i]) {
					payers = append(payers, i)
				}
			}
		}
		sort.Ints(payers)
		for k := range n {
			if k < len(payers) {
				record(id, payers[k], payers[k])
			} else {
				record(id, -1, last(c.byIntent[id]))
			}
		}
	}
	return paid, out
}

// causes lists the broken rules of rep with every violation counted: the
// report keeps a few examples per rule, so a rule that has as many as it
// keeps is checked again in full.
func (c *checker) causes(rep Report) []PictureCause {
	out := []PictureCause{}
	for _, rr := range rep.Rules {
		if rr.OK {
			continue
		}
		vs := rr.Violations
		if len(vs) >= maxViolations {
			vs = c.check(rr.Rule)
		}
		cause := PictureCause{Rule: rr.Rule, Violations: len(vs)}
		switch rr.Rule {
		case RuleOneTransfer:
			cause.WonKnown = true
			for _, v := range vs {
				cause.Won += int64(max(0, c.transfers[v.Intent]-1)) * c.intents[v.Intent].Amount
			}
		case RuleNoSilentWrong, RuleOwnResponses:
			// The violation's own attempt (the later one of its intent) was
			// answered wrongly: its amount was promised and not sent.
			cause.WonKnown = true
			for _, v := range vs {
				for k := len(v.Attempts) - 1; k >= 0; k-- {
					if a := c.h.Attempts[v.Attempts[k]]; a.Intent == v.Intent {
						cause.Won += amountOf(a.Body, c.intents[a.Intent].Amount)
						break
					}
				}
			}
		case RuleNothingLost:
			cause.WonKnown = true
			for _, v := range vs {
				cause.Won += c.intents[v.Intent].Amount
			}
		case RuleConservation:
			start, end := total(c.h.StartBalances), total(c.h.EndBalances)
			if start != end {
				cause.Won, cause.WonKnown = max(start-end, end-start), true
			}
		}
		out = append(out, cause)
	}
	return out
}
