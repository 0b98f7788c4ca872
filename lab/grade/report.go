package grade

import (
	"fmt"
	"io"
	"strings"
)

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

// maxShown caps the failures printed per rule; --json has them all.
const maxShown = 2

// WriteText writes the report for a student: the checks, the verdict on
// every rule, then each broken rule with what to fix and the requests that
// show it, as curl lines.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Grading %s (seed %d, run %s, %.1f s)\n", r.Target, r.Seed, r.Run, float64(r.ElapsedMS)/1000)
	switch {
	case r.RetentionSeconds != nil && *r.RetentionSeconds == 0:
		b.WriteString("Published retention: 0, which the lab reads as \"keys never expire\".\n")
	case r.RetentionSeconds != nil:
		fmt.Fprintf(&b, "Published retention: %d s; the lab's clients retry for up to %d s.\n", *r.RetentionSeconds, r.RetryHorizonSeconds)
	default:
		b.WriteString("Published retention: none (GET on the base URL has no retention_seconds).\n")
	}
	b.WriteString("\nChecks:\n")
	for _, c := range r.Checks {
		mark := "ok  "
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "  %s  %-15s %s\n", mark, c.Name, c.Title)
		if c.Error != "" {
			fmt.Fprintf(&b, "        could not finish: %s\n", c.Error)
		}
		if len(c.Broken) > 0 {
			fmt.Fprintf(&b, "        breaks: %s\n", strings.Join(c.Broken, ", "))
		}
	}
	if r.Day != nil {
		fmt.Fprintf(&b, "\nThe day: %d intents, %d attempts, %d transfers, %d duplicates (%d won paid twice), %d×409, %d×422, %d replays.\n",
			r.Day.Intents, r.Day.Attempts, r.Day.Transfers, r.Day.Duplicates, r.Day.PaidTwice, r.Day.Conflicts, r.Day.Mismatches, r.Day.Replays)
	}
	b.WriteString("\nRules:\n")
	for _, v := range r.Rules {
		verdict := "holds"
		switch v.Verdict {
		case Broken:
			verdict = "BROKEN"
		case Unknown:
			verdict = "UNKNOWN (not published)"
		}
		fmt.Fprintf(&b, "  %d. %-34s %s\n", v.N, v.Name, verdict)
	}
	for _, v := range r.Rules {
		if v.Verdict == Holds {
			continue
		}
		fmt.Fprintf(&b, "\nRule %d, %s: %s.\n", v.N, v.Name, v.Title)
		fmt.Fprintf(&b, "  Fix: %s.\n", v.Fix)
		shown := 0
		for _, f := range r.Failures {
			if f.Rule != v.Name {
				continue
			}
			if shown == maxShown {
				fmt.Fprintf(&b, "  (more in --json)\n")
				break
			}
			shown++
			fmt.Fprintf(&b, "  In check %q: %s\n", f.Check, f.Message)
			if len(f.Lanes) > 0 {
				fmt.Fprintf(&b, "    lanes: %s\n", strings.Join(f.Lanes, " "))
			}
			if len(f.Curl) > 0 {
				b.WriteString("    to see it yourself:\n")
				for _, l := range f.Curl {
					fmt.Fprintf(&b, "      %s\n", l)
				}
			}
		}
	}
	if len(r.Notes) > 0 {
		b.WriteString("\nNotes on the contract (no rule is broken by these alone):\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "  - [%s] %s\n", n.Check, n.Message)
		}
	}
	switch {
	case r.OK:
		b.WriteString("\nVerdict: every rule holds.\n")
	case len(r.Broken()) == 0:
		b.WriteString("\nVerdict: no rule is broken, but not every rule could be judged (see above).\n")
	default:
		fmt.Fprintf(&b, "\nVerdict: %d of %d rules broken: %s.\n", len(r.Broken()), len(r.Rules), strings.Join(r.Broken(), ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
