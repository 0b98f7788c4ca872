package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"idemlab/docs"
)

// exampleBugs says in a line what each of the example's planted bugs
// does; a bug the example gains without a line here is listed by name.
var exampleBugs = map[string]string{
	"key-only":          "the fingerprint is never compared: a corrected amount under a used key gets the first answer (rule 2)",
	"check-then-insert": "looks for the key first and inserts after: simultaneous retries both pay (rule 1)",
	"raw-bytes":         "fingerprints the raw body bytes: a re-spaced or reordered retry is refused 422 (rule 3)",
	"no-in-progress":    "the key reads as completed before the transfer runs: a retry meanwhile gets a generic success (rule 3)",
	"recompute":         "renders a replay anew, with the balance and time of now (rule 3)",
	"global-keys":       "keys are not scoped by customer: another customer's key decides this one's request (rule 5)",
	"memory-lock":       "check-then-insert under a lock in the process's memory: right on one replica, pays twice over two (rule 1)",
	"memory-cache":      "keeps the keys in the process's memory: a second replica knows none of them and pays again (rule 1)",
}

func runLab(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	usage := func(w io.Writer) {
		fmt.Fprint(w, "Usage: idemlab lab contract          print the lab contract (Markdown) that idemlab grade judges\n"+
			"       idemlab lab example [flags]   write the example endpoint (Python, standard library only)\n\n"+
			"Both are built into this binary: nothing else needs downloading.\n")
	}
	if len(args) == 0 {
		usage(stderr)
		return errors.New("lab: name contract or example")
	}
	switch args[0] {
	case "contract":
		fs := flag.NewFlagSet("lab contract", flag.ContinueOnError)
		fs.SetOutput(stderr)
		fs.Usage = func() {
			fmt.Fprint(stderr, "Usage: idemlab lab contract > lab-contract.md\n\nPrints the lab contract: the endpoints, the key, the rules, what the grader sends.\n")
		}
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			fs.Usage()
			return errors.New("lab contract: takes no arguments")
		}
		_, err := stdout.Write(docs.Contract)
		return err
	case "example":
		return labExample(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return nil
	}
	usage(stderr)
	return fmt.Errorf("lab: unknown subcommand %q", args[0])
}

func labExample(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lab example", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		var b strings.Builder
		b.WriteString("Usage: idemlab lab example [--bug NAME] [-o FILE] [--force]\n\n" +
			"Writes the example endpoint of the lab contract: Python's http.server and sqlite3, the key\n" +
			"table, the failed INSERT as the verdict, stored answers replayed byte for byte. Run it and\n" +
			"grade it:\n\n" +
			"  python3 bank.py --port 8090 --db /tmp/bank.db --payment-latency-ms 20\n" +
			"  idemlab grade http://127.0.0.1:8090\n\n" +
			"--bug NAME writes it with one bug planted (it runs with that bug unless given --bug ''):\n")
		for _, name := range docs.ExampleBugs() {
			fmt.Fprintf(&b, "  %-18s %s\n", name, exampleBugs[name])
		}
		b.WriteString("\n")
		fmt.Fprint(stderr, b.String())
		fs.PrintDefaults()
	}
	bug := fs.String("bug", "", "plant this bug (the names are listed above)")
	out := fs.String("o", "bank.py", "the file to write; - for standard output")
	force := fs.Bool("force", false, "replace the file if it exists")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return errors.New("lab example: takes no arguments; name the file with -o")
	}
	src, err := docs.ExampleWithBug(*bug)
	if err != nil {
		return fmt.Errorf("lab example: %w", err)
	}
	if *out == "-" {
		_, err := stdout.Write(src)
		return err
	}
	mode := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if *force {
		mode = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(*out, mode, 0o755)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("lab example: %s exists; pass --force to replace it, or -o another file", *out)
	}
	if err != nil {
		return fmt.Errorf("lab example: %w", err)
	}
	if _, err := f.Write(src); err != nil {
		f.Close()
		return fmt.Errorf("lab example: write %s: %w", *out, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("lab example: write %s: %w", *out, err)
	}
	what := "the example endpoint"
	if *bug != "" {
		what = "the example endpoint with the bug " + *bug
	}
	fmt.Fprintf(stdout, "Wrote %s to %s. Run it and grade it:\n  python3 %s --port 8090 --db /tmp/bank.db --payment-latency-ms 20\n  idemlab grade http://127.0.0.1:8090\n", what, *out, *out)
	return nil
}
