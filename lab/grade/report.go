package grade

import (
	"fmt"
	"io"
	"strings"

	"idemlab/lab"
)

// Verdicts of a rule.
const (
	Holds   = "holds"
	Broken  = "broken"
	Unknown = "unknown"
	// NotJudged is rule 8's verdict on every endpoint: the processor an
	// endpoint charges is a foreign party whose records the grader cannot
	// read, and an endpoint's own account of its charges would be a claim,
	// not evidence.
	NotJudged = "not-judged"
)

// Verdicts of a check. A check is ok only when its promise holds: no rule
// broke and the endpoint answered as the contract says. It warns when no
// rule broke but the endpoint departed from the contract (a note says how),
// and fails when it broke a rule or could not finish.
const (
	CheckOK   = "ok"
	CheckWarn = "warn"
	CheckFail = "fail"
)

// Report is a grading run's verdict, for people (WriteText) and machines
// (JSON).
type Report struct {
	Target string `json:"target"`
	// Replicas are the base URLs of the endpoint's replicas, Target first,
	// when it was graded over several.
	Replicas []string `json:"replicas,omitempty"`
	Seed     int64    `json:"seed"`
	Run      string   `json:"run"`
	// RetentionSeconds is what the endpoint publishes, nil when nothing.
	RetentionSeconds    *int64 `json:"retention_seconds"`
	RetryHorizonSeconds int64  `json:"retry_horizon_seconds"`
	// OK is true only when every rule holds (rule 7 judged) and every
	// check is ok: the endpoint keeps every promise the grader checks.
	OK       bool          `json:"ok"`
	Rules    []RuleVerdict `json:"rules"`
	Checks   []CheckResult `json:"checks"`
	Failures []Failure     `json:"failures"`
	Notes    []Note        `json:"notes"`
	Day      *DaySummary   `json:"day,omitempty"`
	// Since compares this run with the endpoint's last one (see Compare);
	// nil when the history is off.
	Since *Since `json:"since,omitempty"`
	// ElapsedMS is how long the run took.
	ElapsedMS int64 `json:"elapsed_ms"`
}

// DaySummary is the day's tally as the report shows it: the checker's
// counts, the answers by status and the wishes never paid.
type DaySummary struct {
	lab.Summary
	// Statuses counts the answers by HTTP status ("0": the grader cut the
	// connection, or no answer came).
	Statuses map[int]int `json:"statuses"`
	// ForeignKeyRefusals counts the intents never paid because their
	// requests were refused after another customer had used the same key
	// string (rule 5).
	ForeignKeyRefusals int `json:"foreign_key_refusals"`
	// UnpaidIntents names the first intents never paid (at most ten);
	// Summary.Unpaid counts them all.
	UnpaidIntents []string `json:"unpaid_intent_ids,omitempty"`
	// Conflicts409WithoutRetryAfter counts 409s sent without a valid
	// Retry-After header.
	Conflicts409WithoutRetryAfter int `json:"conflicts_409_without_retry_after"`
}

// RuleVerdict is one rule's verdict over the whole run.
type RuleVerdict struct {
	N       int    `json:"n"`
	Name    string `json:"name"`
	Title   string `json:"title"`
	Verdict string `json:"verdict"`
	// Fix says what to change when the rule is broken or unknown: the fix
	// for the cause the grader diagnosed first, or the rule's usual fix.
	Fix string `json:"fix,omitempty"`
	// Causes lists the causes diagnosed, in the order found; each failure
	// carries its own, with its fix.
	Causes []string `json:"causes,omitempty"`
}

// CheckResult is one check's outcome.
type CheckResult struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	// Verdict is CheckOK, CheckWarn or CheckFail; OK is Verdict == CheckOK.
	Verdict string   `json:"verdict"`
	OK      bool     `json:"ok"`
	Broken  []string `json:"broken,omitempty"`
	// Notes counts the check's notes: its departures from the contract.
	Notes int `json:"notes,omitempty"`
	// Error is set when the check could not run (the endpoint refused to
	// open an account, or could not be reached).
	Error     string `json:"error,omitempty"`
	ElapsedMS int64  `json:"elapsed_ms"`
}

// Failure is one broken rule, shown by the shortest request sequence the
// grader found.
type Failure struct {
	Check   string `json:"check"`
	Rule    string `json:"rule"`
	RuleN   int    `json:"rule_n"`
	Message string `json:"message"`
	// Cause names what the evidence says went wrong (see Causes), when the
	// grader could tell; Diagnosis says it in words and Fix what to change.
	// Without a cause, Fix is the rule's usual fix.
	Cause     string   `json:"cause,omitempty"`
	Diagnosis string   `json:"diagnosis,omitempty"`
	Fix       string   `json:"fix"`
	Lanes     []string `json:"lanes,omitempty"`
	// Curl is the sequence as shell lines a student can paste; lines that
	// start with '#' say what the grader did that curl alone does not.
	Curl []string `json:"curl,omitempty"`
}

// Note is a departure from the contract that breaks no rule by itself.
type Note struct {
	Check   string   `json:"check"`
	Message string   `json:"message"`
	Curl    []string `json:"curl,omitempty"`
	// attempts are the check's attempts the note names, for its lines to
	// be written again once a group sent together is complete.
	attempts []int
}

// settle sets the check's verdict from what it found.
func (c *CheckResult) settle() {
	switch {
	case len(c.Broken) > 0 || c.Error != "":
		c.Verdict = CheckFail
	case c.Notes > 0:
		c.Verdict = CheckWarn
	default:
		c.Verdict = CheckOK
	}
	c.OK = c.Verdict == CheckOK
}

// Broken lists the names of the broken rules.
func (r Report) Broken() []string {
	var out []string
	for _, v := range r.Rules {
		if v.Verdict == Broken {
			out = append(out, v.Name)
		}
	}
	return out
}

// Warned lists the names of the checks that warn: no rule broke, but the
// endpoint departed from the contract.
func (r Report) Warned() []string {
	var out []string
	for _, c := range r.Checks {
		if c.Verdict == CheckWarn {
			out = append(out, c.Name)
		}
	}
	return out
}

// Check returns the result of the named check, and false when there is
// none.
func (r Report) Check(name string) (CheckResult, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return CheckResult{}, false
}

// maxShown caps the failures printed per rule, cause and check, and the
// notes per check; --json has them all.
const maxShown = 2

// marks are the check verdicts as printed, all of one width.
var marks = map[string]string{CheckOK: "ok  ", CheckWarn: "warn", CheckFail: "FAIL"}

// WriteText writes the report for a student: one line per check, the day's
// tally, the verdict on every rule, then each broken rule with the causes
// the grader found, what to fix for each and the requests that show it, as
// curl lines; then the notes, with theirs.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Grading %s (seed %d, run %s, %.1f s)\n", r.Target, r.Seed, r.Run, float64(r.ElapsedMS)/1000)
	if len(r.Replicas) > 1 {
		fmt.Fprintf(&b, "Over %d replicas (%s): each retry went to another replica than its first attempt, simultaneous retries were split between them, the day went round-robin.\n",
			len(r.Replicas), strings.Join(r.Replicas, ", "))
	}
	if r.Since != nil {
		r.Since.writeText(&b)
	}
	switch {
	case r.RetentionSeconds != nil && *r.RetentionSeconds == 0:
		b.WriteString("Published retention: 0, which the lab reads as \"keys never expire\".\n")
	case r.RetentionSeconds != nil:
		fmt.Fprintf(&b, "Published retention: %d s; the lab's clients retry for up to %d s, so it must be longer.\n", *r.RetentionSeconds, r.RetryHorizonSeconds)
	default:
		b.WriteString("Published retention: none (GET on the base URL has no retention_seconds).\n")
	}
	b.WriteString("\nChecks (ok: the promise holds; warn: no rule broke, but the answers depart from the contract; FAIL: a rule broke):\n")
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "  %s  %-15s %s", marks[c.Verdict], c.Name, c.Title)
		switch {
		case c.Error != "":
			fmt.Fprintf(&b, " — could not finish: %s", c.Error)
		case len(c.Broken) > 0:
			fmt.Fprintf(&b, " — breaks %s", strings.Join(c.Broken, ", "))
		case c.Verdict == CheckWarn:
			fmt.Fprintf(&b, " — no rule broke, but %d %s below", c.Notes, lab.Plural(c.Notes, "departure from the contract is noted", "departures from the contract are noted"))
		}
		b.WriteString("\n")
	}
	if d := r.Day; d != nil {
		// Replays are counted by their header: a replay without it is
		// counted as none, so the line says what it counts.
		fmt.Fprintf(&b, "\nThe day: %d intents, %d attempts, %d transfers, %s, %d %s never paid, %d×409, %d×422, %d answers marked Idempotent-Replayed.\n",
			d.Intents, d.Attempts, d.Transfers, lab.ExtraPayments(d.Duplicates, d.PaidTwice, "en"), d.Unpaid, lab.Plural(d.Unpaid, "intent", "intents"), d.Conflicts, d.Mismatches, d.Replays)
		fmt.Fprintf(&b, "  answers by status: %s\n", lab.StatusList(d.Statuses))
		if d.Unpaid > 0 {
			fmt.Fprintf(&b, "  never paid: %s", strings.Join(d.UnpaidIntents, ", "))
			if d.Unpaid > len(d.UnpaidIntents) {
				fmt.Fprintf(&b, " and %d more", d.Unpaid-len(d.UnpaidIntents))
			}
			b.WriteString("\n")
		}
		if d.ForeignKeyRefusals > 0 {
			fmt.Fprintf(&b, "  never paid because another customer had used the key: %d\n", d.ForeignKeyRefusals)
		}
		if d.Conflicts409WithoutRetryAfter > 0 {
			fmt.Fprintf(&b, "  409 without Retry-After: %d\n", d.Conflicts409WithoutRetryAfter)
		}
	}
	b.WriteString("\nRules:\n")
	for _, v := range r.Rules {
		verdict := "holds"
		switch v.Verdict {
		case Broken:
			verdict = "BROKEN"
		case Unknown:
			verdict = "UNKNOWN (not published)"
		case NotJudged:
			verdict = "NOT JUDGED (the processor is out of the grader's sight)"
		}
		fmt.Fprintf(&b, "  %d. %-34s %s\n", v.N, v.Name, verdict)
	}
	for _, v := range r.Rules {
		if v.Verdict == Holds || v.Verdict == NotJudged {
			continue
		}
		fmt.Fprintf(&b, "\nRule %d, %s: %s.\n", v.N, v.Name, v.Title)
		if v.Verdict == Unknown {
			fmt.Fprintf(&b, "  Fix: %s.\n", v.Fix)
			continue
		}
		r.writeCauses(&b, v)
	}
	if len(r.Notes) > 0 {
		b.WriteString("\nNotes: departures from the contract (no rule is broken by these alone, but each makes its check warn):\n")
		shown := map[string]int{}
		for _, n := range r.Notes {
			shown[n.Check]++
			if shown[n.Check] > maxShown {
				if shown[n.Check] == maxShown+1 {
					more := 0
					for _, m := range r.Notes {
						if m.Check == n.Check {
							more++
						}
					}
					fmt.Fprintf(&b, "  - [%s] %d more in --json\n", n.Check, more-maxShown)
				}
				continue
			}
			fmt.Fprintf(&b, "  - [%s] %s\n", n.Check, n.Message)
			writeCurl(&b, n.Curl)
		}
	}
	b.WriteString(notJudgedOverHTTP)
	broken, warned := r.Broken(), r.Warned()
	switch {
	case r.OK:
		b.WriteString("\nVerdict: every rule holds, and every check keeps the contract's promise.\n")
	case len(broken) > 0:
		fmt.Fprintf(&b, "\nVerdict: %d of %d rules broken: %s.", len(broken), len(r.Rules), strings.Join(broken, ", "))
		if len(warned) > 0 {
			fmt.Fprintf(&b, " Besides, %d %s: %s.", len(warned), lab.Plural(len(warned), "check warns", "checks warn"), strings.Join(warned, ", "))
		}
		b.WriteString("\n")
	case len(warned) > 0:
		fmt.Fprintf(&b, "\nVerdict: no rule is broken, but %d %s (the endpoint departs from the contract): %s.\n",
			len(warned), lab.Plural(len(warned), "check warns", "checks warn"), strings.Join(warned, ", "))
	default:
		b.WriteString("\nVerdict: no rule is broken, but not every rule could be judged or every check finished (see above).\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// notJudgedOverHTTP says, in every report, what no request can show: the
// grader cannot crash the endpoint's process, so a verdict of "every rule
// holds" says nothing of a crash between two of its writes. The lab page's
// explorer crashes each attempt at every step (docs/lab-contract.md,
// "Causes only the page names").
const notJudgedOverHTTP = `
Not judged over HTTP: what a crash of the endpoint's process leaves behind. The grader cannot
crash it, so it cannot see a key marked completed apart from its transfer's commit (a crash
between the two leaves the key in progress, and a retry after it pays again), nor a claim that a
crash left and nothing ever settles. The lab page's explorer crashes each attempt at every step:
run idemlab serve, open /lab.html, and open your handler file there.
`

// writeCauses writes a broken rule's failures grouped by the cause the
// grader diagnosed: each cause once, with its fix, then its examples.
func (r Report) writeCauses(b *strings.Builder, v RuleVerdict) {
	var order []string
	byCause := map[string][]Failure{}
	for _, f := range r.Failures {
		if f.Rule != v.Name {
			continue
		}
		if _, ok := byCause[f.Cause]; !ok {
			order = append(order, f.Cause)
		}
		byCause[f.Cause] = append(byCause[f.Cause], f)
	}
	for _, c := range order {
		fs := byCause[c]
		if c == "" {
			fmt.Fprintf(b, "  Fix: %s.\n", fs[0].Fix)
		} else {
			fmt.Fprintf(b, "  Diagnosis (%s): %s.\n", c, fs[0].Diagnosis)
			fmt.Fprintf(b, "  Fix: %s.\n", fs[0].Fix)
		}
		perCheck, hidden := map[string]int{}, 0
		for _, f := range fs {
			if perCheck[f.Check]++; perCheck[f.Check] > maxShown {
				hidden++
				continue
			}
			fmt.Fprintf(b, "  In check %q: %s\n", f.Check, f.Message)
			if len(f.Lanes) > 0 {
				fmt.Fprintf(b, "    lanes: %s\n", strings.Join(f.Lanes, " "))
			}
			writeCurl(b, f.Curl)
		}
		if hidden > 0 {
			fmt.Fprintf(b, "  (%d more in --json)\n", hidden)
		}
	}
}

func writeCurl(b *strings.Builder, lines []string) {
	if len(lines) == 0 {
		return
	}
	b.WriteString("    to see it yourself:\n")
	for _, l := range lines {
		fmt.Fprintf(b, "      %s\n", l)
	}
}
