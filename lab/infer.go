package lab

import (
	"encoding/json"
	"sort"
)

// InferTransfers counts each intent's transfers from balances alone, for an
// endpoint whose ledger cannot be read (the grader's black box). It relies
// on how the lab lays out its traffic: every wish pays its own payee
// account, which starts at a known balance, so the payee's growth divided
// by the amount is the number of transfers. Where an intent sent two
// amounts (a teller's correction), the two are told apart by their last
// digits: corrections end in tens of won, ordinary amounts in hundreds.
//
// When several intents share a payee (a new-key press repeating a wish,
// another customer sending the same body), each intent that may have been
// executed (it got a success, or an answer that was never read) is given
// one transfer in order (those whose receipt was read first), and any
// surplus goes to the first: the total is exact, the split is the most
// charitable reading.
func InferTransfers(intents []Intent, attempts []Attempt, start, end map[string]int64) map[string]int {
	byIntent := map[string][]Attempt{}
	for _, a := range attempts {
		byIntent[a.Intent] = append(byIntent[a.Intent], a)
	}
	payees := map[string][]Intent{}
	var order []string
	for _, in := range intents {
		if _, ok := payees[in.To]; !ok {
			order = append(order, in.To)
		}
		payees[in.To] = append(payees[in.To], in)
	}
	out := map[string]int{}
	for _, to := range order {
		ins := payees[to]
		amounts := map[int64]int{} // amount → attempts that asked for it
		for _, in := range ins {
			for _, a := range byIntent[in.ID] {
				amounts[amountOf(a.Body, in.Amount)]++
			}
			if len(byIntent[in.ID]) == 0 {
				amounts[in.Amount]++
			}
		}
		n := countTransfers(end[to]-start[to], amounts)
		// An intent whose receipt (a delivered answer naming its transfer)
		// was read is given its transfer before those whose answer was
		// never read: an unread attempt may have been refused.
		var paid, maybe []string
		for _, in := range ins {
			switch {
			case receiptRead(byIntent[in.ID]):
				paid = append(paid, in.ID)
			case mayHaveRun(byIntent[in.ID]):
				maybe = append(maybe, in.ID)
			}
		}
		maybe = append(paid, maybe...)
		if len(maybe) == 0 && n > 0 {
			maybe = []string{ins[0].ID}
		}
		for _, id := range maybe {
			if n == 0 {
				break
			}
			out[id]++
			n--
		}
		if n > 0 {
			out[maybe[0]] += n
		}
	}
	return out
}

// countTransfers finds how many transfers of the given amounts add up to
// delta, using each amount at most as often as it was asked for (and
// ordinary amounts once more, in case a server paid more often than asked).
func countTransfers(delta int64, amounts map[int64]int) int {
	if delta <= 0 {
		return 0
	}
	list := make([]int64, 0, len(amounts))
	for a := range amounts {
		if a > 0 {
			list = append(list, a)
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i] < list[j] })
	switch len(list) {
	case 0:
		return 0
	case 1:
		return int(delta / list[0])
	}
	// Two or more amounts: search small combinations, fewest transfers first.
	best := -1
	var try func(i int, left int64, used int)
	try = func(i int, left int64, used int) {
		if left == 0 {
			if best < 0 || used < best {
				best = used
			}
			return
		}
		if i == len(list) || left < 0 {
			return
		}
		for k := 0; k <= amounts[list[i]]+1 && int64(k)*list[i] <= left; k++ {
			try(i+1, left-int64(k)*list[i], used+k)
		}
	}
	try(0, delta, 0)
	if best < 0 {
		return int(delta / list[0])
	}
	return best
}

func amountOf(body []byte, fallback int64) int64 {
	var t struct {
		Amount json.Number `json:"amount"`
	}
	if json.Unmarshal(body, &t) != nil {
		return fallback
	}
	n, err := t.Amount.Int64()
	if err != nil || n <= 0 {
		return fallback
	}
	return n
}

// mayHaveRun reports whether any attempt may have moved money: it got a
// success, or its answer was never read.
// receiptRead says whether one of the attempts was answered with a success
// naming its transfer, and the client read it.
func receiptRead(as []Attempt) bool {
	for _, a := range as {
		if a.Delivered && Success(a.Status) && TransferID(a.Response) != "" {
			return true
		}
	}
	return false
}

func mayHaveRun(as []Attempt) bool {
	for _, a := range as {
		if !a.Delivered || a.Status == 0 || Success(a.Status) {
			return true
		}
	}
	return false
}

// TransferID reads the transfer_id of a transfer's JSON answer, "" when it
// has none. An id that is not a string (a student's endpoint may number its
// transfers) is given as its JSON text.
func TransferID(body []byte) string {
	var t struct {
		TransferID any `json:"transfer_id"`
	}
	if json.Unmarshal(body, &t) != nil || t.TransferID == nil {
		return ""
	}
	if s, ok := t.TransferID.(string); ok {
		return s
	}
	b, _ := json.Marshal(t.TransferID)
	return string(b)
}
