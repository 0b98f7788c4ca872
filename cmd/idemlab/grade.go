package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"idemlab/lab/grade"
)

func runGrade(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("grade", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: idemlab grade URL [URL2 …] [--replica URL] [--seed S] [--json] [--compare report.json | --no-history]\n\n"+
			"URL is the base of the bank API, e.g. http://127.0.0.1:8000 or http://127.0.0.1:8080/bank/scoped.\n"+
			"Several URLs (or --replica URL, repeated) are replicas of one endpoint over one database: every check's\n"+
			"traffic is spread over them, each retry to another replica than its first attempt, so that a lock or a\n"+
			"key cache in one process's memory is found. One URL sends everything to it.\n"+
			"The contract is docs/lab-contract.md; idemlab lab contract prints it. Checks: "+strings.Join(grade.Checks(), ", ")+".\n"+
			"Every check ends ok, warn (no rule broke, but the answers depart from the contract) or FAIL.\n"+
			"Exit status: 0 when every rule holds, the published retention included, and every check is ok;\n"+
			"1 when a rule is broken; 3 when no rule is broken but a check warns or a rule could not be judged;\n"+
			"2 when there is no grade: bad arguments, or the endpoint cannot be reached.\n"+
			"On a terminal, a progress line on stderr says where the grader is.\n"+
			"The report starts with what got fixed and what newly broke since the endpoint's last run, kept in\n"+
			"the user's cache folder (idemlab/grade) per URL; --compare names another report instead.\n\n")
		fs.PrintDefaults()
	}
	seed := fs.Int64("seed", 0, "seed for amounts, key shapes and the day (default: a random one, printed in the report)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	timeout := fs.Duration("timeout", grade.DefaultTimeout, "limit on each request")
	intents := fs.Int("intents", grade.DefaultDayIntents, "wishes in the day replayed at the end; each new-key press adds an intent of its own, so the day's tally counts a few more intents")
	compare := fs.String("compare", "", "compare with this report (written by grade --json) instead of the endpoint's last run")
	noHistory := fs.Bool("no-history", false, "neither compare with the last run nor keep this one")
	var replicas urlList
	fs.Var(&replicas, "replica", "base URL of another replica of the same endpoint (repeatable)")
	// noGrade: the grade could not run (exit status 2).
	noGrade := func(err error) error { return exitError{2, err} }
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return noGrade(err)
	}
	urls := append(pos, replicas...)
	if len(urls) == 0 {
		fs.Usage()
		return noGrade(errors.New("grade: name the endpoint's URL"))
	}
	day := grade.DayParams(*intents)
	if err := day.Validate(); err != nil {
		return noGrade(err)
	}
	if *compare != "" && *noHistory {
		return noGrade(errors.New("grade: --compare and --no-history exclude each other"))
	}
	var prev *grade.Report
	var history grade.History
	key := grade.HistoryKey(urls...)
	if *compare != "" {
		// Read before grading: a wrong path should not cost a whole run.
		if prev, err = grade.ReadReport(*compare); err != nil {
			return noGrade(fmt.Errorf("grade: --compare: %w", err))
		}
	}
	if !*noHistory {
		if history, err = grade.DefaultHistory(); err != nil {
			fmt.Fprintf(stderr, "idemlab: %v; this run is not compared or kept\n", err)
			*noHistory = true
		} else if *compare == "" {
			if prev, err = history.Last(key); err != nil {
				// A damaged cache file must not stop the grading; say so and
				// go on as if it were the first run.
				fmt.Fprintf(stderr, "idemlab: the last run cannot be read (%v); comparing with none\n", err)
				prev = nil
			}
		}
	}
	o := grade.Options{Seed: *seed, Timeout: *timeout, Day: day, Replicas: urls[1:]}
	if isTerminal(stderr) {
		p := newProgressLine(stderr)
		o.Progress = p.show
		defer p.clear()
	}
	rep, err := grade.Grade(ctx, urls[0], o)
	if err != nil {
		return noGrade(err)
	}
	if *compare != "" || !*noHistory {
		rep.Since = grade.Compare(prev, rep)
	}
	if !*noHistory {
		if err := history.Keep(key, rep); err != nil {
			fmt.Fprintf(stderr, "idemlab: %v; the next run cannot compare with this one\n", err)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else if err := rep.WriteText(stdout); err != nil {
		return err
	}
	if !rep.OK {
		if broken := rep.Broken(); len(broken) > 0 {
			return fmt.Errorf("grade: %d rule(s) broken: %s", len(broken), strings.Join(broken, ", "))
		}
		if warned := rep.Warned(); len(warned) > 0 {
			return exitError{3, fmt.Errorf("grade: no rule broken, but %d check(s) depart from the contract: %s", len(warned), strings.Join(warned, ", "))}
		}
		return exitError{3, errors.New("grade: no rule broken, but not every rule could be judged")}
	}
	return nil
}

// urlList is a repeatable flag's values, in order.
type urlList []string

func (l *urlList) String() string { return strings.Join(*l, " ") }

func (l *urlList) Set(v string) error {
	*l = append(*l, v)
	return nil
}
