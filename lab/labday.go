package lab

// A day for the browser lab: a small generated day (GenerateDay) laid out
// as the lab runner's scenario, so that a student's own handler meets the
// grader's kind of traffic, not only its short stories.

// LabDayAccount is an account the day opens, with its opening balance.
type LabDayAccount struct {
	ID      string `json:"id"`
	Balance int64  `json:"balance"`
}

// LabDayAttempt is one attempt as the lab runner takes it
// (web/lab/runner.js, scenarios): its Idempotency-Key header as sent, its
// body, when it was sent (ms since the epoch), whether its answer is
// lost, and the attempt it waits for (a retry is sent once the client gave
// up on the attempt before it; one the day sends while that one is still
// being processed, After empty, races it).
type LabDayAttempt struct {
	ID       string `json:"id"`
	Intent   string `json:"intent"`
	Customer string `json:"customer"`
	Key      string `json:"key"`
	Body     string `json:"body"`
	Now      int64  `json:"now"`
	Lose     bool   `json:"lose"`
	After    string `json:"after,omitempty"`
}

// LabDay is the day the browser lab plays.
type LabDay struct {
	Accounts []LabDayAccount `json:"accounts"`
	Attempts []LabDayAttempt `json:"attempts"`
}

// Sizes of the lab's day: a few customers and intents, so that a few dozen
// random schedules of it run in about a second in the browser.
const (
	labDayCustomers = 3
	labDayIntents   = 8
)

// NewLabDay generates the lab's day from seed, starting at startMS.
func NewLabDay(seed, startMS int64) LabDay {
	p := DefaultDayParams()
	p.Seed, p.Customers, p.Intents = seed, labDayCustomers, labDayIntents
	d := GenerateDay(p)
	out := LabDay{Accounts: make([]LabDayAccount, 0, len(d.Accounts)), Attempts: make([]LabDayAttempt, 0, len(d.Attempts))}
	for _, a := range d.Accounts {
		out.Accounts = append(out.Accounts, LabDayAccount{ID: a.ID, Balance: a.Balance})
	}
	last := map[string]string{}
	for _, a := range d.Attempts {
		at := LabDayAttempt{ID: a.Lane, Intent: a.Intent, Customer: a.Customer, Body: a.Body, Now: startMS + a.AtMS, Lose: a.Lost()}
		if a.Key != "" {
			at.Key = QuoteKey(a.Key)
		}
		// A teller's corrected amount under the same key is another wish
		// (the corrected-amount story's), which the contract refuses 422:
		// not a retry that must get the first answer.
		if a.Correction {
			at.Intent = a.Intent + "-corrected"
		}
		if prev, ok := last[a.Intent]; ok && a.Overlaps == "" {
			at.After = prev
		}
		last[a.Intent] = a.Lane
		out.Attempts = append(out.Attempts, at)
	}
	return out
}
