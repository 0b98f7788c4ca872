// Package pgtest gives a test package a throwaway PostgreSQL cluster: the
// one named by $IDEMLAB_TEST_POSTGRES, or one it creates with initdb in a
// temporary directory, listening only on a Unix socket there, run as an
// unprivileged user, and removes again when the package's tests end.
//
// A package calls Main from its TestMain and URL from its tests. The
// cluster starts when a test first asks for it, once per package, and
// stops after the package's last test; when no PostgreSQL can be had, URL
// skips the test and says why, as the browser tests do without Chromium.
// That shared cluster allows 300 connections, for the many pools of a
// package's tests; a test of what a real PostgreSQL allows, or of one that
// stops and starts again, takes a cluster of its own with PostgreSQL's
// defaults (NewCluster).
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names a PostgreSQL database for the tests to use instead of a
// cluster of their own. Tests create schemas of their own in it.
const EnvURL = "IDEMLAB_TEST_POSTGRES"

var (
	once    sync.Once
	baseURL string
	reason  string
	stop    = func() {}
	dbSeq   atomic.Int64
)

// Main runs the package's tests and stops the cluster if one started.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main for a TestMain with more to clean up: it runs the tests,
// stops the cluster and returns the exit code.
func Run(m *testing.M) int {
	code := m.Run()
	stop()
	return code
}

// URL returns the URL of a new, empty database in the cluster, dropped
// when t ends, or skips t when there is no PostgreSQL, or under -short
// (make test-short: no cluster starts).
func URL(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no PostgreSQL cluster (make test starts one)")
	}
	once.Do(func() { stop = start() })
	if baseURL == "" {
		t.Skip("no PostgreSQL for this test: " + reason)
	}
	return newDatabase(t, baseURL)
}

// Database returns the URL of a new, empty database in the cluster; it is
// dropped when t ends, as URL's are.
func (c *Cluster) Database(t testing.TB) string {
	t.Helper()
	return newDatabase(t, c.url)
}

func newDatabase(t testing.TB, baseURL string) string {
	t.Helper()
	name := fmt.Sprintf("idemlab_test_%d_%d", os.Getpid(), dbSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, baseURL)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	// Registered before the test's own cleanups, so it runs after them,
	// when the test's pools are closed; FORCE ends any a killed server
	// left behind.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		conn, err := pgx.Connect(ctx, baseURL)
		if err != nil {
			t.Errorf("pgtest: connect to drop %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	u, _ := url.Parse(baseURL)
	u.Path = "/" + name
	return u.String()
}

func start() (stop func()) {
	if u := os.Getenv(EnvURL); u != "" {
		baseURL = u
		return func() {}
	}
	stop, err := startCluster()
	if err != nil {
		reason = err.Error() + " (install PostgreSQL, or set " + EnvURL + " to a database URL)"
		return func() {}
	}
	return stop
}

// binDir finds PostgreSQL's server programs: on PATH, else the newest
// Debian installation under /usr/lib/postgresql.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	if len(dirs) == 0 {
		return "", errors.New("initdb not found on PATH or under /usr/lib/postgresql")
	}
	return filepath.Dir(dirs[0]), nil
}

func version(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

// startCluster starts the package's shared cluster. Its max_connections
// is 300, so that the packages' many tests may each open their pools; a
// test of the connection budget wants PostgreSQL's default, NewCluster.
func startCluster() (func(), error) {
	c, err := newCluster("-c", "max_connections=300")
	if err != nil {
		return nil, err
	}
	baseURL = c.url
	return c.remove, nil
}

// Cluster is a PostgreSQL cluster of one test's own, which it may stop
// and start again, with PostgreSQL's defaults (max_connections 100, of
// which superuser_reserved_connections keeps 3) unless told otherwise.
// Its methods are for the test's goroutine.
type Cluster struct {
	bin, dir, data string
	opts           string
	as             func(name string, args ...string) *exec.Cmd
	url            string
	remove         func()
}

// NewCluster starts a cluster for t with settings (each "-c", "name=value"
// after PostgreSQL's defaults), removed when t ends, or skips t as URL
// does when there is no PostgreSQL or under -short. A cluster named by
// $IDEMLAB_TEST_POSTGRES is not one a test may stop, so with it set the
// test is skipped too.
func NewCluster(t testing.TB, settings ...string) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no PostgreSQL cluster (make test starts one)")
	}
	if os.Getenv(EnvURL) != "" {
		t.Skip("a cluster of the test's own, which it stops and starts: not with " + EnvURL)
	}
	c, err := newCluster(settings...)
	if err != nil {
		t.Skip("no PostgreSQL cluster for this test: " + err.Error())
	}
	t.Cleanup(c.remove)
	return c
}

// URL is the cluster's postgres database, as the superuser.
func (c *Cluster) URL() string { return c.url }

// Stop stops PostgreSQL the way an operator's restart does (pg_ctl stop
// -m fast): the connections open are ended (SQLSTATE 57P01), and new ones
// are refused until Start.
func (c *Cluster) Stop(t testing.TB) {
	t.Helper()
	if out, err := c.as(filepath.Join(c.bin, "pg_ctl"), "-D", c.data, "-m", "fast", "-w", "stop").CombinedOutput(); err != nil {
		t.Fatalf("pgtest: pg_ctl stop: %v: %s", err, lastLine(out))
	}
}

// Start starts the cluster again after Stop.
func (c *Cluster) Start(t testing.TB) {
	t.Helper()
	if err := c.start(); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
}

// Log is what PostgreSQL has logged so far.
func (c *Cluster) Log() string {
	b, _ := os.ReadFile(filepath.Join(c.dir, "log"))
	return string(b)
}

// newCluster runs initdb and pg_ctl. PostgreSQL refuses to run as root,
// so as root the cluster belongs to the postgres user, which owns its
// directory.
func newCluster(settings ...string) (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "idemlab-pg-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, dir: dir, data: filepath.Join(dir, "data")}
	cleanup := func() { os.RemoveAll(dir) }
	c.as = func(name string, args ...string) *exec.Cmd { return exec.Command(name, args...) }
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			cleanup()
			return nil, errors.New("running as root and there is no postgres user to run the cluster as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chmod(dir, 0o755); err != nil {
			cleanup()
			return nil, err
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			cleanup()
			return nil, err
		}
		runuser, err := exec.LookPath("runuser")
		if err != nil {
			cleanup()
			return nil, errors.New("running as root without runuser to drop to the postgres user")
		}
		c.as = func(name string, args ...string) *exec.Cmd {
			return exec.Command(runuser, append([]string{"-u", "postgres", "--", name}, args...)...)
		}
	}
	out, err := c.as(filepath.Join(bin, "initdb"), "-D", c.data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C").CombinedOutput()
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("initdb: %v: %s", err, lastLine(out))
	}
	port, err := freePort()
	if err != nil {
		cleanup()
		return nil, err
	}
	// Only a Unix socket in the cluster's own directory: nothing else on
	// the machine can reach it, and no TCP port can clash. fsync is off:
	// the tests kill idemlab's processes, and stop the database only
	// cleanly.
	c.opts = fmt.Sprintf("-p %d -k %s -c listen_addresses='' -c fsync=off %s", port, dir, strings.Join(settings, " "))
	if err := c.start(); err != nil {
		cleanup()
		return nil, err
	}
	c.url = fmt.Sprintf("postgres://postgres@/postgres?host=%s&port=%d&sslmode=disable", url.QueryEscape(dir), port)
	c.remove = func() {
		c.as(filepath.Join(bin, "pg_ctl"), "-D", c.data, "-m", "immediate", "-w", "stop").Run()
		cleanup()
	}
	return c, nil
}

func (c *Cluster) start() error {
	out, err := c.as(filepath.Join(c.bin, "pg_ctl"), "-D", c.data, "-o", c.opts, "-l", filepath.Join(c.dir, "log"), "-w", "-t", "120", "start").CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl start: %v: %s %s", err, lastLine(out), lastLine([]byte(c.Log())))
	}
	return nil
}

// freePort picks a port number no TCP listener holds. The cluster listens
// on no TCP port at all; the number names its Unix socket's file
// (.s.PGSQL.PORT), and a free one keeps the URL from looking like any
// server already on the machine.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// RoundTrips is a pgx tracer that counts the messages the store waits on PostgreSQL for: each
// statement run on its own, each pipelined batch, and each statement's
// preparation (once per connection) is one round trip.
type RoundTrips struct{ N atomic.Int64 }

func (r *RoundTrips) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	r.N.Add(1)
	return ctx
}
func (r *RoundTrips) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

func (r *RoundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.N.Add(1)
	return ctx
}
func (r *RoundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *RoundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.N.Add(1)
	return ctx
}
func (r *RoundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *RoundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
