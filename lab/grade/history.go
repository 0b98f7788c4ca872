package grade

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"idemlab/lab"
)

// Since is what changed between an earlier report of the same endpoint and
// this one: the checks and rules that got fixed and those that newly broke,
// and the day's tally, before and after. A student who changed one thing
// reads here whether it worked, before any check line.
type Since struct {
	// First is true when there is no earlier run to compare with; the other
	// fields are then empty.
	First bool `json:"first"`
	// Run, Seed and Target name the earlier run.
	Run    string `json:"run,omitempty"`
	Seed   int64  `json:"seed,omitempty"`
	Target string `json:"target,omitempty"`
	// Fixed and Broke list the changes for the better and for the worse, in
	// report order: checks first, then rules.
	Fixed []Change `json:"fixed"`
	Broke []Change `json:"newly_broken"`
	// Day lists the day's counts that changed; nil when either run has no
	// day.
	Day []DayChange `json:"day,omitempty"`
}

// Change is one check's or one rule's verdict, before and after.
type Change struct {
	// Kind is "check", "rule" or "cause" (a cause of a rule that is broken
	// in both runs, found in one only).
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	Title string `json:"title,omitempty"`
	// Was and Now are the verdicts ("" when the check or rule is absent
	// from that run).
	Was string `json:"was"`
	Now string `json:"now"`
	// Findings, for a check whose verdict stayed the same (not ok), are
	// its failures and notes counted in each run: fewer is progress.
	WasFindings int `json:"was_findings,omitempty"`
	NowFindings int `json:"now_findings,omitempty"`
	// Rule names the rule a cause belongs to; N is the rule's number, for
	// a rule and a cause.
	Rule string `json:"rule,omitempty"`
	N    int    `json:"n,omitempty"`
}

// DayChange is one count of the day's tally, before and after.
type DayChange struct {
	Name string `json:"name"`
	Was  int64  `json:"was"`
	Now  int64  `json:"now"`
}

// Compare says what changed from prev to cur. A nil prev is the first run.
func Compare(prev *Report, cur Report) *Since {
	if prev == nil {
		return &Since{First: true, Fixed: []Change{}, Broke: []Change{}}
	}
	s := &Since{Run: prev.Run, Seed: prev.Seed, Target: prev.Target, Fixed: []Change{}, Broke: []Change{}}
	was := map[string]CheckResult{}
	for _, c := range prev.Checks {
		was[c.Name] = c
	}
	wasFound, nowFound := prev.findings(), cur.findings()
	for _, c := range cur.Checks {
		p, ok := was[c.Name]
		ch := Change{Kind: "check", Name: c.Name, Title: c.Title, Was: p.Verdict, Now: c.Verdict}
		same := ok && p.Verdict == c.Verdict && c.Verdict != CheckOK
		if same {
			ch.WasFindings, ch.NowFindings = wasFound[c.Name], nowFound[c.Name]
		}
		switch {
		case same && ch.NowFindings < ch.WasFindings:
			s.Fixed = append(s.Fixed, ch)
		case same && ch.NowFindings > ch.WasFindings:
			s.Broke = append(s.Broke, ch)
		case !ok && c.Verdict != CheckOK:
			s.Broke = append(s.Broke, ch)
		case ok && checkRank[c.Verdict] < checkRank[p.Verdict]:
			s.Fixed = append(s.Fixed, ch)
		case ok && checkRank[c.Verdict] > checkRank[p.Verdict]:
			s.Broke = append(s.Broke, ch)
		}
	}
	wasRule := map[string]RuleVerdict{}
	for _, v := range prev.Rules {
		wasRule[v.Name] = v
	}
	for _, v := range cur.Rules {
		p, ok := wasRule[v.Name]
		ch := Change{Kind: "rule", Name: v.Name, N: v.N, Title: v.Title, Was: p.Verdict, Now: v.Verdict}
		switch {
		case !ok:
			if v.Verdict != Holds {
				s.Broke = append(s.Broke, ch)
			}
		case p.Verdict != Holds && v.Verdict == Holds:
			s.Fixed = append(s.Fixed, ch)
		case p.Verdict != Broken && v.Verdict == Broken, p.Verdict == Holds && v.Verdict == Unknown:
			// Unknown after holds: the retention is no longer published.
			s.Broke = append(s.Broke, ch)
		case p.Verdict == Broken && v.Verdict == Broken:
			// Still broken: a cause gone is progress, a new one is news.
			for _, c := range p.Causes {
				if !contains(v.Causes, c) {
					s.Fixed = append(s.Fixed, Change{Kind: "cause", Name: c, Title: prev.diagnosis(c), Rule: v.Name, N: v.N, Was: Broken, Now: ""})
				}
			}
			for _, c := range v.Causes {
				if !contains(p.Causes, c) {
					s.Broke = append(s.Broke, Change{Kind: "cause", Name: c, Title: cur.diagnosis(c), Rule: v.Name, N: v.N, Was: "", Now: Broken})
				}
			}
		}
	}
	if prev.Day != nil && cur.Day != nil {
		for _, f := range dayCounts {
			if a, b := f.get(prev.Day), f.get(cur.Day); a != b {
				s.Day = append(s.Day, DayChange{Name: f.name, Was: a, Now: b})
			}
		}
	}
	return s
}

// diagnosis is what the report's first failure of this cause says of it.
func (r *Report) diagnosis(cause string) string {
	for _, f := range r.Failures {
		if f.Cause == cause {
			return f.Diagnosis
		}
	}
	return ""
}

// findings counts each check's failures and notes.
func (r *Report) findings() map[string]int {
	n := map[string]int{}
	for _, f := range r.Failures {
		n[f.Check]++
	}
	for _, x := range r.Notes {
		n[x.Check]++
	}
	return n
}

// checkRank orders the check verdicts from best to worst; an absent check
// ranks with ok.
var checkRank = map[string]int{"": 0, CheckOK: 0, CheckWarn: 1, CheckFail: 2}

// dayCounts are the day's counts a comparison follows, in the order the
// tally prints them.
var dayCounts = []struct {
	name string
	get  func(*DaySummary) int64
}{
	{"extra transfers", func(d *DaySummary) int64 { return int64(d.Duplicates) }},
	{"won moved more than once", func(d *DaySummary) int64 { return d.PaidTwice }},
	{"never paid", func(d *DaySummary) int64 { return int64(d.Unpaid) }},
	{"409 answers", func(d *DaySummary) int64 { return int64(d.Conflicts) }},
	{"422 answers", func(d *DaySummary) int64 { return int64(d.Mismatches) }},
	{"replays", func(d *DaySummary) int64 { return int64(d.Replays) }},
	{"refused for another customer's key", func(d *DaySummary) int64 { return int64(d.ForeignKeyRefusals) }},
	{"409 without Retry-After", func(d *DaySummary) int64 { return int64(d.Conflicts409WithoutRetryAfter) }},
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// writeText writes the comparison with the earlier run, first in the
// report: a student who changed one thing reads first whether it worked.
func (s *Since) writeText(b *strings.Builder) {
	defer b.WriteString("\n")
	if s.First {
		b.WriteString("Since the last run: there is no earlier run of this endpoint to compare with.\n")
		return
	}
	fmt.Fprintf(b, "Since the last run (run %s, seed %d", s.Run, s.Seed)
	if s.Target != "" {
		fmt.Fprintf(b, ", %s", s.Target)
	}
	b.WriteString("):\n")
	writeChanges(b, "fixed", s.Fixed)
	writeChanges(b, "newly broken", s.Broke)
	if len(s.Day) == 0 {
		b.WriteString("  day: the same counts\n")
		return
	}
	parts := make([]string, len(s.Day))
	for i, d := range s.Day {
		parts[i] = fmt.Sprintf("%s %s → %s", d.Name, lab.GroupDigits(d.Was), lab.GroupDigits(d.Now))
	}
	fmt.Fprintf(b, "  day: %s\n", strings.Join(parts, ", "))
}

// writeChanges writes one list of changes: "none" on the heading's line,
// or one change per line under it.
func writeChanges(b *strings.Builder, heading string, cs []Change) {
	if len(cs) == 0 {
		fmt.Fprintf(b, "  %s: none\n", heading)
		return
	}
	fmt.Fprintf(b, "  %s:\n", heading)
	for _, c := range cs {
		switch c.Kind {
		case "check":
			was := strings.TrimSpace(marks[c.Was])
			if c.Was == "" {
				was = "new check"
			}
			if c.Was == c.Now {
				fmt.Fprintf(b, "    check %s: still %s, %d → %d %s (%s)\n", c.Name, strings.TrimSpace(marks[c.Now]), c.WasFindings, c.NowFindings,
					lab.Plural(c.NowFindings, "finding", "findings"), c.Title)
				continue
			}
			fmt.Fprintf(b, "    check %s: %s → %s (%s)\n", c.Name, was, strings.TrimSpace(marks[c.Now]), c.Title)
		case "rule":
			fmt.Fprintf(b, "    rule %d, %s: %s → %s\n", c.N, c.Name, orNew(c.Was), c.Now)
		default:
			if c.Now == "" {
				fmt.Fprintf(b, "    cause %s of rule %d, %s: no longer seen, though the rule is still broken", c.Name, c.N, c.Rule)
			} else {
				fmt.Fprintf(b, "    cause %s of rule %d, %s: new", c.Name, c.N, c.Rule)
			}
			if c.Title != "" {
				fmt.Fprintf(b, " (%s)", c.Title)
			}
			b.WriteString("\n")
		}
	}
}

func orNew(v string) string {
	if v == "" {
		return "new"
	}
	return v
}

// History keeps the last report of each endpoint, one JSON file per key,
// in Dir. Its methods are safe for concurrent use by separate processes
// only in that a reader sees either the old file or the new one.
type History struct {
	Dir string
}

// DefaultHistory is the history in the user's cache folder
// (os.UserCacheDir()/idemlab/grade).
func DefaultHistory() (History, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return History{}, fmt.Errorf("grade: no cache folder for the history: %w", err)
	}
	return History{Dir: filepath.Join(dir, "idemlab", "grade")}, nil
}

// HistoryKey is the key of the endpoint graded at these base URLs: one
// URL, or the replicas of one endpoint, in any order.
func HistoryKey(targets ...string) string {
	ts := append([]string(nil), targets...)
	for i, t := range ts {
		ts[i] = strings.TrimRight(t, "/")
	}
	sort.Strings(ts)
	return strings.Join(ts, " ")
}

// Path is the file that keeps the last report under key.
func (h History) Path(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(h.Dir, hex.EncodeToString(sum[:12])+".json")
}

// Last returns the last report kept under key, nil when there is none.
func (h History) Last(key string) (*Report, error) {
	rep, err := ReadReport(h.Path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return rep, err
}

// Keep writes rep as the last report under key, without its own
// comparison, replacing the file at once so a reader never sees half.
func (h History) Keep(key string, rep Report) error {
	rep.Since = nil
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(h.Dir, 0o700); err != nil {
		return fmt.Errorf("keep report: %w", err)
	}
	tmp, err := os.CreateTemp(h.Dir, ".report-*")
	if err != nil {
		return fmt.Errorf("keep report: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("keep report: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("keep report: %w", err)
	}
	if err := os.Rename(tmp.Name(), h.Path(key)); err != nil {
		return fmt.Errorf("keep report: %w", err)
	}
	return nil
}

// ReadReport reads a report written by `idemlab grade --json`. A file that
// is not such a report is an error, not an empty report: a comparison with
// nothing would call every check fixed.
func ReadReport(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("read report %s: %w", path, err)
	}
	if rep.Run == "" || len(rep.Rules) != len(lab.Rules()) || len(rep.Checks) == 0 {
		return nil, fmt.Errorf("read report %s: not a report of idemlab grade --json (no run, rules or checks)", path)
	}
	return &rep, nil
}
