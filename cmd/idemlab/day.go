package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"idemlab/engine"
	"idemlab/lab"
	"idemlab/lab/grade"
	"idemlab/store/sqlite"
)

const dayUsage = `Usage:
  idemlab day generate [--seed S] [--customers N] [--intents M] [...] [-o day.jsonl]
  idemlab day replay day.jsonl [--level L | --policy JSON | --target URL [--replica URL …]] [--db FILE] [--json] [--svg OUT.svg [--lang ko]]

Run 'idemlab day generate -h' or 'idemlab day replay -h' for the flags.
The file format is described in docs/lab-contract.md (idemlab lab contract prints it).
`

func runDay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, dayUsage)
		if len(args) == 0 {
			return errors.New("day: say generate or replay")
		}
		return nil
	}
	switch args[0] {
	case "generate":
		return dayGenerate(args[1:], stdout, stderr)
	case "replay":
		return dayReplay(ctx, args[1:], stdout, stderr)
	}
	fmt.Fprint(stderr, dayUsage)
	return fmt.Errorf("day: unknown subcommand %q", args[0])
}

func dayGenerate(args []string, stdout, stderr io.Writer) error {
	p := lab.DefaultDayParams()
	fs := flag.NewFlagSet("day generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Int64Var(&p.Seed, "seed", p.Seed, "seed: the same params and seed give the same file, byte for byte")
	fs.IntVar(&p.Customers, "customers", p.Customers, "number of customers")
	fs.IntVar(&p.Intents, "intents", p.Intents, "number of intents (wishes); each has one or more attempts")
	fs.StringVar(&p.Prefix, "prefix", p.Prefix, "prefix of every customer, account and key id (letters, digits, '-')")
	fs.Float64Var(&p.LossRate, "loss-rate", p.LossRate, "share of first attempts whose answer is lost")
	fs.Float64Var(&p.RetryLossRate, "retry-loss-rate", p.RetryLossRate, "share of retries whose answer is lost")
	fs.Float64Var(&p.OverlapRate, "overlap-rate", p.OverlapRate, "share of retries after a gateway timeout that arrive while the first is still running")
	fs.Float64Var(&p.TellerRate, "teller-rate", p.TellerRate, "share of intents where a teller corrects the amount under the same key")
	fs.Float64Var(&p.SequenceKeyRate, "sequence-key-rate", p.SequenceKeyRate, "share of customers whose keys come from a counter (order-1, order-2, ...)")
	fs.Float64Var(&p.RestyleRate, "restyle-rate", p.RestyleRate, "share of retries written with other JSON field order or spacing")
	fs.Int64Var(&p.MaxAmount, "max-amount", p.MaxAmount, "largest amount in won")
	horizon := fs.Duration("horizon", time.Duration(p.RetryHorizonSeconds)*time.Second, "how long clients keep retrying")
	day := fs.Duration("day", time.Duration(p.DaySeconds)*time.Second, "how long the day lasts")
	mix := fs.String("mix", formatMix(p.Mix), "weights of the retry policies")
	size := fs.Int("attempts", 0, "generate at least this many attempts instead (the intents grow to fit; --intents is ignored)")
	out := fs.String("o", "-", "output file ('-': standard output)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("day generate: unexpected argument %q", fs.Arg(0))
	}
	p.RetryHorizonSeconds, p.DaySeconds = int(*horizon/time.Second), int(*day/time.Second)
	m, err := parseMix(*mix)
	if err != nil {
		return err
	}
	p.Mix = m
	if err := p.Validate(); err != nil {
		return err
	}
	d := lab.GenerateDay(p)
	if *size > 0 {
		d = lab.GenerateDayOfSize(p, *size)
	}
	w := stdout
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			return fmt.Errorf("day generate: %w", err)
		}
		defer f.Close()
		w = f
	}
	if err := d.WriteJSONL(w); err != nil {
		return err
	}
	if *out != "-" {
		fmt.Fprintf(stderr, "wrote %s: %d intents, %d attempts\n", *out, len(d.Intents), len(d.Attempts))
	}
	return nil
}

func formatMix(m lab.RetryMix) string {
	return fmt.Sprintf("none=%g,fixed=%g,backoff=%g,impatient-same-key=%g,impatient-new-key=%g",
		m.None, m.Fixed, m.Backoff, m.ImpatientSameKey, m.ImpatientNewKey)
}

func parseMix(s string) (lab.RetryMix, error) {
	var m lab.RetryMix
	fields := map[string]*float64{lab.PolicyNone: &m.None, lab.PolicyFixed: &m.Fixed, lab.PolicyBackoff: &m.Backoff,
		lab.PolicyImpatientSameKey: &m.ImpatientSameKey, lab.PolicyImpatientNewKey: &m.ImpatientNewKey}
	for _, part := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		f, known := fields[name]
		if !ok || !known {
			return m, fmt.Errorf("--mix: %q is not policy=weight with a policy among none, fixed, backoff, impatient-same-key, impatient-new-key", part)
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return m, fmt.Errorf("--mix: weight of %s: %w", name, err)
		}
		*f = v
	}
	return m, nil
}

// parseInterspersed parses flags that may come before or after the
// positional arguments, and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func dayReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("day replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	level := fs.String("level", engine.LevelScoped, "level to replay in-process: "+strings.Join(engine.Levels(), ", ")+", or 'ladder' for every level, one line each")
	policy := fs.String("policy", "", `in-process: knobs over the level's preset as JSON, e.g. '{"claim":"check-then-insert"}'`)
	dbPath := fs.String("db", "", "in-process: SQLite file to use (default: a fresh file in a temporary folder, removed after)")
	latency := fs.Duration("payment-latency", 0, "in-process: how long each payment-network call takes")
	target := fs.String("target", "", "replay over HTTP against this base URL instead (any endpoint of the lab contract)")
	var replicas urlList
	fs.Var(&replicas, "replica", "over HTTP: base URL of another replica of the --target endpoint, on the same database (repeatable); each retry goes to another replica than its first attempt")
	prefix := fs.String("prefix", "fresh", "over HTTP: prefix for every id and key so the day never meets an earlier run ('fresh': a random one, '': none)")
	concurrency := fs.Int("concurrency", grade.DefaultConcurrency, "over HTTP: groups of attempts in flight at once")
	asJSON := fs.Bool("json", false, "print the tally as JSON")
	svgPath := fs.String("svg", "", "also draw the day as a picture into this SVG file: attempts over the day's clock by outcome, the money moved more than once, the causes of loss")
	lang := fs.String("lang", "en", "language of the picture's words: en or ko")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("day replay: name one day file ('-' for standard input)")
	}
	if *lang != "en" && *lang != "ko" {
		return fmt.Errorf("day replay: --lang %q: say en or ko", *lang)
	}
	if *level == "ladder" {
		if *target != "" || *policy != "" || *dbPath != "" || len(replicas) > 0 {
			return errors.New("day replay: --level ladder runs in-process on fresh databases; drop --target, --replica, --policy and --db")
		}
		if *svgPath != "" {
			return errors.New("day replay: --svg draws one replay; name a level instead of ladder")
		}
		d, err := readDayFile(pos[0])
		if err != nil {
			return err
		}
		return replayLadder(ctx, d, *latency, stdout, *asJSON)
	}
	pol, ok := engine.Preset(*level)
	if !ok {
		return fmt.Errorf("day replay: unknown level %q (one of %s, ladder)", *level, strings.Join(engine.Levels(), ", "))
	}
	if *policy != "" {
		if err := json.Unmarshal([]byte(*policy), &pol); err != nil {
			return fmt.Errorf("day replay: --policy: %w", err)
		}
	}
	d, err := readDayFile(pos[0])
	if err != nil {
		return err
	}
	if len(replicas) > 0 && *target == "" {
		return errors.New("day replay: --replica names another replica of the --target endpoint; name --target too")
	}
	bar := newProgressBar(stdout)
	var tally lab.Tally
	if *target != "" {
		p := *prefix
		if p == "fresh" {
			p = lab.RandomPrefix("r")
		}
		run, err := grade.ReplayDayHTTP(ctx, d.WithPrefix(p), *target, grade.DayOptions{Concurrency: *concurrency, Progress: bar.update, Replicas: replicas})
		bar.done()
		if err != nil {
			return err
		}
		tally = run.Tally
		if run.Errors > 0 {
			fmt.Fprintf(stderr, "warning: %d requests got no answer although none was cut\n", run.Errors)
		}
	} else {
		tally, err = replayInProcess(ctx, d, pol, *dbPath, *latency, bar.update)
		bar.done()
		if err != nil {
			return err
		}
	}
	if *svgPath != "" {
		if err := writePicture(*svgPath, d, tally, *lang); err != nil {
			return err
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(tally)
	}
	return tally.WriteText(stdout)
}

// writePicture draws the replayed day on its own clock (over HTTP too,
// where the replay squeezed it into a minute) into an SVG file.
func writePicture(path string, d lab.Day, t lab.Tally, lang string) error {
	p := lab.NewPicture(d.OnDayClock(t.History), t.Report, lab.DayPictureOptions(d.Params))
	if err := os.WriteFile(path, p.SVG(lang), 0o644); err != nil {
		return fmt.Errorf("day replay: --svg: %w", err)
	}
	return nil
}

// replayLadder replays the day at every level, each on a fresh database.
func replayLadder(ctx context.Context, d lab.Day, latency time.Duration, stdout io.Writer, asJSON bool) error {
	var tallies []lab.Tally
	for _, level := range engine.Levels() {
		bar := newProgressBar(stdout)
		t, err := replayInProcess(ctx, d, engine.MustPreset(level), "", latency, bar.update)
		bar.done()
		if err != nil {
			return fmt.Errorf("day replay at %s: %w", level, err)
		}
		tallies = append(tallies, t)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(tallies)
	}
	fmt.Fprintf(stdout, "The day (%d intents, %d attempts) at every level:\n\n", tallies[0].Intents, tallies[0].Attempts)
	return lab.WriteLadder(stdout, tallies)
}

func readDayFile(name string) (lab.Day, error) {
	r := io.Reader(os.Stdin)
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return lab.Day{}, fmt.Errorf("day replay: %w", err)
		}
		defer f.Close()
		r = f
	}
	return lab.ReadDay(r)
}

func replayInProcess(ctx context.Context, d lab.Day, p engine.Policy, path string, latency time.Duration, progress func(int, int)) (lab.Tally, error) {
	if path == "" {
		dir, err := os.MkdirTemp("", "idemlab-day-")
		if err != nil {
			return lab.Tally{}, fmt.Errorf("day replay: %w", err)
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "day.db")
	}
	db, err := sqlite.OpenFile(path)
	if err != nil {
		return lab.Tally{}, err
	}
	defer db.Close()
	return lab.ReplayDay(ctx, d, db, p, lab.ReplayOptions{PaymentLatency: latency, Progress: progress})
}
