package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"idemlab/docs"
	"idemlab/lab/handlers"
	"idemlab/lab/jsrun"
	"idemlab/server"
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
		fmt.Fprint(w, "Usage: idemlab lab contract               print the lab contract (Markdown) that idemlab grade judges\n"+
			"       idemlab lab example [flags]        write the example endpoint (Python, standard library only)\n"+
			"       idemlab lab serve FILE.js [flags]  serve your JavaScript handler as an endpoint of the contract\n"+
			"       idemlab lab handler NAME [flags]   write a reference handler (one per rung) or a mistake one\n\n"+
			"All are built into this binary: nothing else needs downloading.\n")
	}
	if len(args) == 0 {
		usage(stderr)
		return errors.New("lab: name contract, example, serve or handler")
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
	case "serve":
		return labServe(ctx, args[1:], stdout, stderr)
	case "handler":
		return labHandler(args[1:], stdout, stderr)
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

func labServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lab serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: idemlab lab serve FILE.js [--db bank.db] [--port 8000 | --addr HOST:PORT] [flags]\n\n"+
			"Serves your handler file (async function transfer(req, db, pay), docs/lab-handler.md) as an\n"+
			"endpoint of the lab contract: GET /, PUT/GET /accounts/{id} and POST /transfers, on a SQLite\n"+
			"file, with the same db and pay the browser's lab gives it. Every request runs in its own\n"+
			"JavaScript runtime with its own database connection, so concurrent requests interleave for\n"+
			"real. Grade it:\n\n"+
			"  idemlab lab handler naive -o naive.js\n"+
			"  idemlab lab serve naive.js --db /tmp/bank.db --port 8000\n"+
			"  idemlab grade http://127.0.0.1:8000\n\n"+
			"The lab's tables and your schema are created when the database has no accounts table; a\n"+
			"changed schema needs a fresh --db file. The payment network keeps its charges in a file of\n"+
			"its own beside it (bank.db: bank.payments.db), out of reach of your SQL and your rollbacks.\n\n")
		fs.PrintDefaults()
	}
	db := fs.String("db", "bank.db", "the bank's SQLite file, created if missing")
	payments := fs.String("payments", "", "the payment network's SQLite file (default: --db's name with .payments.db)")
	port := fs.Int("port", 8000, "the port to listen on, on 127.0.0.1 (0: any free port)")
	addr := fs.String("addr", "", "the address to listen on, HOST:PORT (instead of --port)")
	budget := fs.Duration("budget", jsrun.DefaultBudget, "how long one request may run (an endless loop is stopped and answered 500)")
	payDelay := fs.Duration("pay-delay", jsrun.DefaultPayDelay, "how long each pay call takes, as a payment network's round trip would (0: none)")
	maxHeap := fs.Uint64("max-heap-mib", jsrun.DefaultMaxHeap>>20, "how many MiB the heap may hold while requests run; past it the running requests are stopped and answered 500 (a loop that keeps allocating)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fs.Usage()
		return errors.New("lab serve: name one handler file (idemlab lab handler -h lists the shipped ones)")
	}
	src, err := os.ReadFile(pos[0])
	if err != nil {
		return fmt.Errorf("lab serve: %w", err)
	}
	delay := *payDelay
	if delay == 0 {
		delay = -1 // none, where jsrun's zero means its default
	}
	h, err := jsrun.Load(pos[0], src, jsrun.Options{DB: *db, Payments: *payments, Budget: *budget, PayDelay: delay, MaxHeap: *maxHeap << 20, Log: stderr})
	if err != nil {
		return fmt.Errorf("lab serve: %w", err)
	}
	defer h.Close()
	listen := *addr
	if listen == "" {
		listen = net.JoinHostPort("127.0.0.1", strconv.Itoa(*port))
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("lab serve: %w", err)
	}
	srv := server.HTTPServer(listen, h)
	// The first line names the address listened on (tests and scripts read it).
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "idemlab lab serve: %s listening on %s\n", h.Name(), base)
	fmt.Fprintf(stdout, "  database: %s (payments: %s)\n  grade it: idemlab grade %s\n", *db, paymentsName(*db, *payments), base)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("lab serve: %w", err)
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("lab serve: %w", err)
	}
	return nil
}

func paymentsName(db, payments string) string {
	if payments != "" {
		return payments
	}
	return jsrun.PaymentsFile(db)
}

func labHandler(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lab handler", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		var b strings.Builder
		b.WriteString("Usage: idemlab lab handler NAME [-o FILE] [--force]\n\n" +
			"Writes one of the lab's JavaScript handlers (docs/lab-handler.md), to serve and grade:\n\n" +
			"  idemlab lab handler scoped -o scoped.js\n" +
			"  idemlab lab serve scoped.js --db /tmp/bank.db --port 8000\n" +
			"  idemlab grade http://127.0.0.1:8000\n\n" +
			"The rungs, each the one before plus one fix:\n")
		for _, name := range handlers.Rungs() {
			fmt.Fprintf(&b, "  %s\n", name)
		}
		b.WriteString("\nThe mistakes, each a rung with one idea changed:\n")
		for _, m := range handlers.Mistakes() {
			fmt.Fprintf(&b, "  %-22s (%s) %s\n", m.Name, m.From, m.What)
		}
		b.WriteString("\n")
		fmt.Fprint(stderr, b.String())
		fs.PrintDefaults()
	}
	out := fs.String("o", "", "the file to write (default NAME.js); - for standard output")
	force := fs.Bool("force", false, "replace the file if it exists")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fs.Usage()
		return errors.New("lab handler: name one handler")
	}
	src, err := handlers.Source(pos[0])
	if err != nil {
		return fmt.Errorf("lab handler: %w", err)
	}
	file := *out
	if file == "" {
		file = path.Base(strings.TrimSuffix(pos[0], ".js")) + ".js" // mistakes/global-keys: global-keys.js
	}
	if file == "-" {
		_, err := stdout.Write(src)
		return err
	}
	mode := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if *force {
		mode = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(file, mode, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("lab handler: %s exists; pass --force to replace it, or -o another file", file)
	}
	if err != nil {
		return fmt.Errorf("lab handler: %w", err)
	}
	if _, err := f.Write(src); err != nil {
		f.Close()
		return fmt.Errorf("lab handler: write %s: %w", file, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("lab handler: write %s: %w", file, err)
	}
	fmt.Fprintf(stdout, "Wrote the handler %s to %s. Serve it and grade it:\n  idemlab lab serve %s --db /tmp/bank.db --port 8000\n  idemlab grade http://127.0.0.1:8000\n", pos[0], file, file)
	return nil
}
