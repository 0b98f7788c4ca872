// Command idemlab is the one binary: the playground and bank API server
// (serve, the default), and in time the lab's day and grade commands and
// the static export. It wires the packages; it holds no logic of its own.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"syscall"
	"time"

	"idemlab/engine"
	"idemlab/server"
	"idemlab/store/postgres"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "idemlab:", err)
		os.Exit(1)
	}
}

// command is one subcommand. Each lives in its own file and registers
// itself in commands from an init function.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{
	"serve": {"serve the playground and the bank API at every level (the default)", serve},
}

func usage(w io.Writer) {
	fmt.Fprint(w, "idemlab: a playground for making retried money transfers safe.\n\nUsage: idemlab [command] [flags]\n\nCommands:\n")
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-8s %s\n", name, commands[name].summary)
	}
	fmt.Fprint(w, "\nRun 'idemlab COMMAND -h' for a command's flags.\n")
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	name := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	if name == "help" {
		usage(stdout)
		return nil
	}
	cmd, ok := commands[name]
	if !ok {
		usage(stderr)
		return fmt.Errorf("unknown command %q", name)
	}
	return cmd.run(ctx, args, stdout, stderr)
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	dbPath := fs.String("db", "./idemlab.db", "SQLite file, each level's file beside it (empty: in memory); or a postgres:// URL, one database that several idemlab servers share, each level in its own schema")
	classroomDB := fs.String("classroom-db", "", "with a postgres:// --db: the SQLite file this server keeps its classroom in (rooms, the instructor's secret); empty: in memory. The classroom is one process's, never shared")
	latency := fs.Duration("payment-latency", 0, "simulated payment-network call inside each transfer")
	retention := fs.Duration("retention", engine.ScopedRetention, "how long the scoped level keeps keys (publish it; it must outlast your clients' retries)")
	lease := fs.Duration("lease", engine.ScopedLease, "how long an in_progress claim protects its key at the scoped level before a retry may take it over")
	tokenFile := fs.String("instructor-token-file", "", "read the classroom instructor's secret (at least 16 characters) from this file's first line")
	tokenFlag := fs.String("instructor-token", "", "the instructor's secret on the command line (deprecated: any user of the machine sees it in ps; use --instructor-token-file or $IDEMLAB_INSTRUCTOR_TOKEN)")
	rotate := fs.Bool("rotate-instructor-token", false, "make a new classroom secret (the old link and every signed-in browser stop working); without it the secret kept beside --db stays")
	publicURL := fs.String("public-url", "", "the address phones and other machines reach this server at (a reverse proxy, a DNS name): the classroom's join link names it, and its host is allowed")
	webDir := fs.String("web-dir", "", "serve the playground's files from this folder instead of the embedded copy")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	token, err := instructorToken(*tokenFile, *tokenFlag, log)
	if err != nil {
		return err
	}
	banks, err := server.OpenBanks(server.Config{DB: *dbPath, PaymentLatency: *latency, Logger: log, Retention: *retention, Lease: *lease})
	if err != nil {
		return err
	}
	defer server.CloseBanks(banks)

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	hosts, err := server.AllowedHosts(ln.Addr(), *publicURL)
	if err != nil {
		return err
	}
	// The classroom keeps its rooms in SQLite files beside --db, or with
	// PostgreSQL in --classroom-db: it lives in this one process.
	localDB := *dbPath
	if postgres.IsURL(localDB) {
		localDB = *classroomDB
	}
	handler, err := server.New(banks, server.Options{Logger: log, InstructorToken: token, RotateToken: *rotate, WebDir: *webDir, DB: localDB,
		AllowedHosts: hosts, ListenAddr: ln.Addr().String(), PublicURL: *publicURL})
	if err != nil {
		return err
	}
	defer handler.Close()
	srv := server.HTTPServer(*addr, handler)
	reapCtx, stopReap := context.WithCancel(ctx)
	defer stopReap()
	go server.ReapEvery(reapCtx, banks, time.Minute, log)

	fmt.Fprintf(stdout, "idemlab is listening on http://%s\n", ln.Addr())
	fmt.Fprintf(stdout, "  bank API: http://%s/bank/{naive,unique,fingerprint,in-progress,replay,scoped}/\n", ln.Addr())
	if p := handler.InstructorPath(); p != "" {
		fmt.Fprintf(stdout, "  classroom, instructor sign-in link (works once; keep it private): http://%s%s\n", ln.Addr(), p)
	}
	if secret := handler.GeneratedInstructorSecret(); secret != "" {
		// Nobody else knows a generated secret: it is printed once, the
		// start it was made (later starts keep it, beside --db), for signing
		// in again (another browser, after signing out).
		fmt.Fprintf(stdout, "  classroom, instructor secret for the sign-in page: %s\n", secret)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(stdout, "idemlab: shutting down")
	shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
