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
	"syscall"
	"time"

	"idemlab/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "idemlab:", err)
		os.Exit(1)
	}
}

const usage = `idemlab: a playground for making retried money transfers safe.

Usage:
  idemlab [serve] [--addr 127.0.0.1:8080] [--db ./idemlab.db] [--payment-latency 0s]

Commands:
  serve    serve the bank API at every level under /bank/{level}/ (default)
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	dbPath := fs.String("db", "./idemlab.db", "SQLite file; each level keeps its own file beside it (empty: in memory)")
	latency := fs.Duration("payment-latency", 0, "simulated payment-network call inside each transfer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	banks, err := server.OpenBanks(server.Config{DB: *dbPath, PaymentLatency: *latency, Logger: log})
	if err != nil {
		return err
	}
	defer server.CloseBanks(banks)

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := server.HTTPServer(*addr, server.New(banks, log))
	reapCtx, stopReap := context.WithCancel(ctx)
	defer stopReap()
	go server.ReapEvery(reapCtx, banks, time.Minute, log)

	fmt.Fprintf(stdout, "idemlab is listening on http://%s\n", ln.Addr())
	fmt.Fprintf(stdout, "  bank API: http://%s/bank/{naive,unique,fingerprint,in-progress,replay,scoped}/\n", ln.Addr())
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
