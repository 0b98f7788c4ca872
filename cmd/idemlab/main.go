// Command idemlab is the one binary: the playground and bank API server
// (serve, the default), the lab's day and grade commands and the static
// export. It wires the packages; it holds no logic of its own.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"idemlab/classroom"
	"idemlab/engine"
	"idemlab/internal/peer"
	"idemlab/internal/stores"
	"idemlab/server"
	"idemlab/store/postgres"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "idemlab:", err)
		os.Exit(exitStatus(err))
	}
}

// exitError is an error that ends the process with a status of its own
// (idemlab grade tells a broken rule, a warning and a grade that could not
// run apart); any other error exits 1.
type exitError struct {
	status int
	err    error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// exitStatus is the status the process exits with after err.
func exitStatus(err error) int {
	var e exitError
	if errors.As(err, &e) {
		return e.status
	}
	return 1
}

// command is one subcommand; each lives in its own file.
type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands are idemlab's subcommands, in the order --help lists them.
func commands() []command {
	return []command{
		{"serve", "serve the playground, the classroom and the bank API at every level (the default)", serve},
		{"day", "generate a day of traffic (day generate), or replay one in-process or against an endpoint (day replay)", runDay},
		{"grade", "judge any endpoint of the lab contract by the checker's rules (exit 0 only when all it can judge hold and every check is ok)", runGrade},
		{"lab", "print the lab contract (lab contract), write the example endpoint (lab example) or a JavaScript handler (lab handler), serve a handler file (lab serve)", runLab},
		{"export", "write the playground as a static site (page, lessons as JSON, engine module) into DIR", export},
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, "idemlab: a playground for making retried money transfers safe.\n\nUsage: idemlab [command] [flags]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun 'idemlab COMMAND -h' for a command's flags.\n")
}

// run picks the command named by args[0] (serve when args start with a
// flag or are empty) and runs it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "help", "-h", "-help", "--help":
			usage(stdout)
			return nil
		}
	}
	name := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(ctx, args, stdout, stderr)
		}
	}
	usage(stderr)
	return fmt.Errorf("unknown command %q", name)
}

// Main is the serve command: Run opens the banks, builds the server and
// starts listening; Close shuts it all down, in reverse, waiting for every
// goroutine it started. It is used by one goroutine.
type Main struct {
	// From the flags.
	addr, dbPath, publicURL, webDir string
	lessonsDir, classroomDB         string
	latency, retention, lease       time.Duration
	token                           string
	rotate                          bool
	tlsCert, tlsKey                 string
	proxies                         peer.Trusted
	classroomLimits                 classroom.Limits
	bankRate                        float64
	dbMaxConns                      int

	stdout io.Writer
	log    *slog.Logger

	banks   []*server.Bank
	handler *server.Server
	srv     *http.Server
	// served receives Serve's error once it stops; stopReap ends the
	// reaper and reaped is closed when it has.
	served   chan error
	stopReap context.CancelFunc
	reaped   chan struct{}
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	m, err := parseServe(args, stdout, stderr)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Run(ctx); err != nil {
		return err
	}
	select {
	case err := <-m.served:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(stdout, "idemlab: shutting down")
	return m.Close()
}

// parseServe reads serve's flags into a Main that has not started.
func parseServe(args []string, stdout, stderr io.Writer) (*Main, error) {
	m := &Main{stdout: stdout}
	var err error
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&m.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&m.dbPath, "db", "./idemlab.db", "SQLite file, each level's file beside it (empty: in memory); or a postgres:// URL, one database that several idemlab servers share, each level in its own schema")
	fs.IntVar(&m.dbMaxConns, "db-max-conns", postgres.DefaultMaxConns, "with a postgres:// --db: the most connections this server opens to PostgreSQL, all levels together. "+
		"Keep servers × this below PostgreSQL's max_connections less superuser_reserved_connections: 4 servers × 16 = 64 of the default 100 − 3")
	fs.StringVar(&m.classroomDB, "classroom-db", "", "with a postgres:// --db: the SQLite file this server keeps its classroom in (rooms, the instructor's secret); empty: in memory. The classroom is one process's, never shared")
	fs.DurationVar(&m.latency, "payment-latency", 0, "simulated payment-network call inside each transfer")
	fs.DurationVar(&m.retention, "retention", engine.ScopedRetention, "how long the scoped level keeps keys (publish it; it must outlast your clients' retries)")
	fs.DurationVar(&m.lease, "lease", engine.ScopedLease, "how long an in_progress claim protects its key at the scoped level before a retry may take it over")
	tokenFile := fs.String("instructor-token-file", "", "read the classroom instructor's secret (at least 16 characters) from this file's first line")
	tokenFlag := fs.String("instructor-token", "", "the instructor's secret on the command line (deprecated: any user of the machine sees it in ps; use --instructor-token-file or $IDEMLAB_INSTRUCTOR_TOKEN)")
	fs.BoolVar(&m.rotate, "rotate-instructor-token", false, "make a new classroom secret (the old link and every signed-in browser stop working); without it the secret kept beside --db stays")
	fs.StringVar(&m.publicURL, "public-url", "", "the address phones and other machines reach this server at (a reverse proxy, a DNS name): the classroom's join link names it, and its host is allowed")
	fs.StringVar(&m.tlsCert, "tls-cert", "", "serve HTTPS with this certificate file (PEM, the chain after the leaf); loaded again when it changes, for renewals")
	fs.StringVar(&m.tlsKey, "tls-key", "", "the private key of --tls-cert (PEM)")
	var trusted []string
	fs.Func("trusted-proxy", "a reverse proxy's address or CIDR (repeatable): only from it are X-Forwarded-For, X-Forwarded-Proto, X-Forwarded-Host and Forwarded believed, so that each phone behind it is counted as itself and HTTPS is known (a proxy on this machine: 127.0.0.1/32)",
		func(s string) error { trusted = append(trusted, s); return nil })
	fs.IntVar(&m.classroomLimits.ClassSize, "class-size", classroom.DefaultClassSize, "how many students a classroom room admits (the presenter changes it per room)")
	fs.IntVar(&m.classroomLimits.ConnsPerClient, "sockets-per-address", classroom.DefaultConnsPerClient, "classroom websockets one address may hold: raise it past 3 × the phones behind one NAT address")
	fs.Float64Var(&m.classroomLimits.NewStudentBurst, "joins-per-address", classroom.DefaultNewStudentBurst, "new students one address may add at once (then 1 a second): raise it past the phones behind one NAT address")
	fs.DurationVar(&m.classroomLimits.JoinWait, "join-wait", classroom.DefaultJoinWait, "how long a phone's classroom socket may stay open without joining")
	fs.Float64Var(&m.bankRate, "bank-rate", server.DefaultBankRequestsPerSecond, "bank API requests a second per client address (bursts of twice that); a class behind one address shares it")
	fs.StringVar(&m.webDir, "web-dir", "", "serve the playground's files from this folder instead of the embedded copy")
	fs.StringVar(&m.lessonsDir, "lessons-dir", "", "serve the lessons from this folder (laid out as lessons/: en/01-naive.md) instead of the embedded copy, read again on every request; a lesson that does not parse stops the start")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: idemlab serve [flags]

Serves the playground, the classroom and the bank API.

A class on a school's network (docs/DEPLOY.md):
  every phone its own address (a LAN)   --addr 0.0.0.0:8080
  every phone behind one NAT address    nothing more: a room admits --class-size students
                                        whatever their address; past 200 phones on one
                                        address, raise --sockets-per-address and
                                        --joins-per-address
  behind a reverse proxy (nginx, Caddy) --trusted-proxy PROXY-ADDRESS --public-url https://NAME
                                        (without --trusted-proxy the whole class counts as
                                        the proxy's one address)
  HTTPS of its own                      --tls-cert FILE --tls-key FILE --public-url https://NAME

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	m.log = slog.New(slog.NewTextHandler(stderr, nil))
	if m.proxies, err = peer.ParseTrusted(trusted); err != nil {
		return nil, err
	}
	if (m.tlsCert == "") != (m.tlsKey == "") {
		return nil, errors.New("--tls-cert and --tls-key go together: give both files")
	}
	if m.classroomLimits.ClassSize < 1 || m.classroomLimits.ClassSize > classroom.MaxClassSize {
		return nil, fmt.Errorf("--class-size is 1 to %d", classroom.MaxClassSize)
	}
	if m.dbMaxConns < 1 {
		return nil, errors.New("--db-max-conns is at least 1")
	}
	if m.classroomLimits.ConnsPerClient < 1 || m.classroomLimits.NewStudentBurst < 1 || m.bankRate <= 0 || m.classroomLimits.JoinWait <= 0 {
		return nil, errors.New("--sockets-per-address, --joins-per-address, --join-wait and --bank-rate are positive")
	}
	token, err := instructorToken(*tokenFile, *tokenFlag, m.log)
	if err != nil {
		return nil, err
	}
	m.token = token
	return m, nil
}

// Run opens the banks, builds the server, starts listening and the key
// reaper, prints the addresses, and returns; Serve's error arrives on
// m.served. Call Close afterwards, also when Run fails.
func (m *Main) Run(ctx context.Context) error {
	banks, err := stores.OpenBanksWithin(m.dbPath, m.dbMaxConns, server.Config{PaymentLatency: m.latency, Retention: m.retention, Lease: m.lease})
	if err != nil {
		return err
	}
	m.banks = banks

	ln, err := net.Listen("tcp", m.addr)
	if err != nil {
		return err
	}
	scheme := "http"
	if m.tlsCert != "" {
		certs, err := server.NewCertReloader(m.tlsCert, m.tlsKey, m.log)
		if err != nil {
			ln.Close()
			return err
		}
		ln = tls.NewListener(ln, certs.TLSConfig())
		scheme = "https"
	}
	hosts, err := server.AllowedHosts(ln.Addr(), m.publicURL)
	if err != nil {
		ln.Close()
		return err
	}
	// The classroom keeps its rooms in SQLite files beside --db, or with
	// PostgreSQL in --classroom-db: it lives in this one process.
	localDB := m.dbPath
	if stores.IsPostgres(localDB) {
		localDB = m.classroomDB
	}
	handler, err := server.New(banks, server.Options{Logger: m.log, InstructorToken: m.token, RotateToken: m.rotate, WebDir: m.webDir, LessonsDir: m.lessonsDir, DB: localDB,
		AllowedHosts: hosts, ListenAddr: ln.Addr().String(), PublicURL: m.publicURL, TrustedProxies: m.proxies,
		BankLimits: server.BankLimits{RequestsPerSecond: m.bankRate, Burst: 2 * m.bankRate},
		Classroom:  stores.Classroom(classroom.Config{Limits: m.classroomLimits})})
	if err != nil {
		ln.Close()
		return err
	}
	m.handler = handler
	m.srv = server.HTTPServer(m.addr, handler)

	reapCtx, stopReap := context.WithCancel(ctx)
	m.stopReap, m.reaped = stopReap, make(chan struct{})
	go func() {
		defer close(m.reaped)
		server.ReapEvery(reapCtx, banks, time.Minute, m.log)
	}()

	// The first line names the address listened on (tests and scripts
	// read it); the links after it name where people reach the server:
	// --public-url when given (a proxy, a DNS name), with its scheme.
	base := scheme + "://" + ln.Addr().String()
	fmt.Fprintf(m.stdout, "idemlab is listening on %s\n", base)
	if m.publicURL != "" {
		base = strings.TrimSuffix(m.publicURL, "/")
		fmt.Fprintf(m.stdout, "  reached at: %s\n", base)
	}
	if !m.proxies.Empty() {
		fmt.Fprintf(m.stdout, "  trusted proxies (their X-Forwarded-* headers are believed): %s\n", m.proxies)
	}
	fmt.Fprintf(m.stdout, "  bank API: %s/bank/{naive,unique,fingerprint,in-progress,replay,scoped}/\n", base)
	if p := handler.InstructorPath(); p != "" {
		fmt.Fprintf(m.stdout, "  classroom, instructor sign-in link (works once; keep it private): %s%s\n", base, p)
	}
	if secret := handler.GeneratedInstructorSecret(); secret != "" {
		// Nobody else knows a generated secret: it is printed once, the
		// start it was made (later starts keep it, beside --db), for signing
		// in again (another browser, after signing out).
		fmt.Fprintf(m.stdout, "  classroom, instructor secret for the sign-in page: %s\n", secret)
	}
	m.served = make(chan error, 1)
	go func() { m.served <- m.srv.Serve(ln) }()
	return nil
}

// Close stops serving (letting requests in flight finish, for up to ten
// seconds), stops the reaper and waits for it, closes the classroom and
// the banks. A second call does nothing.
func (m *Main) Close() error {
	var err error
	if m.srv != nil {
		shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if e := m.srv.Shutdown(shutCtx); e != nil && !errors.Is(e, http.ErrServerClosed) {
			err = e
		}
		m.srv = nil
	}
	if m.stopReap != nil {
		m.stopReap()
		<-m.reaped
		m.stopReap = nil
	}
	if m.handler != nil {
		m.handler.Close()
		m.handler = nil
	}
	if m.banks != nil {
		server.CloseBanks(m.banks)
		m.banks = nil
	}
	return err
}
