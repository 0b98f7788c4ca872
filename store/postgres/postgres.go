// Package postgres implements engine.Store on PostgreSQL through
// github.com/jackc/pgx/v5, for a team that runs several idemlab servers
// against one database. Each level's ledger and key tables live in a schema
// of their own (Open's schema argument); any number of processes may open
// the same schema at once.
//
// # The claim
//
// The claim is one INSERT into idem_keys, whose primary key is (scope,
// idem_key). The primary key's unique index is the verdict: a second
// INSERT of the same key fails with unique_violation (SQLSTATE 23505), in
// whichever process it runs, and only then is the blocking row read. An
// INSERT that meets a row another transaction inserted but has not yet
// committed waits for that transaction, so two servers can never both
// succeed. A lock in one server's memory, or a SELECT before the INSERT,
// protects nothing across processes; the index does.
//
// # Isolation and row locks
//
// Every statement runs at READ COMMITTED, PostgreSQL's default, and the
// ledger transaction takes the row locks it needs explicitly:
//
//  1. the key row, SELECT … FOR UPDATE guarded by owner and state: if a
//     lease takeover gave the key to another attempt, no row comes back and
//     the transaction ends before any money moves; if the takeover comes
//     after, its UPDATE waits for this lock and then finds the key
//     completed, so it changes nothing. Either way a key pays once.
//  2. both accounts, in id order. ledger_transfer moves the money with two
//     UPDATEs by primary key, the lower id first, the debit guarded by its
//     own WHERE (balance >= amount): at READ COMMITTED an UPDATE that
//     waited for another transaction's lock tests its WHERE again on the
//     row that transaction left, so no concurrent debit can spend the same
//     money between the check and the write. A transfer that does not go
//     through that way (a missing account, too little money) is undone
//     within the call and decided on the two rows locked by SELECT … FOR
//     UPDATE in id order, as transferInSteps always does (a plain SELECT
//     would read a balance another transaction is about to lower, and the
//     balance's own rule, never below zero, would be the only thing left to
//     catch the overdraft). Locking in id order, and always the key before
//     the accounts, means two transfers in opposite directions cannot
//     deadlock.
//
// SERIALIZABLE would also be correct, but it reports the same conflicts
// later, as serialization failures (SQLSTATE 40001) at commit, which the
// store would have to retry or hand to the client; with the locks above a
// conflicting transfer simply waits its turn. Should a serialization
// failure or a deadlock (40P01) ever come back, nothing was committed: the
// store reports engine.ErrBusy and the client retries with the same key.
//
// # Round trips
//
// A transfer with a fresh key costs at most two round trips and two
// commits: the claim, an INSERT committed before the money moves (a retry
// on any server must see the in_progress row), and the ledger transaction, one
// call of the function ledger_transfer (ledger.go), which takes the locks
// above, moves the money and completes the key in one statement. The accounts'
// locks are held only while PostgreSQL executes it, never across a round
// trip to the app server. Calls for transfers between the same two
// accounts that arrive while one is at PostgreSQL wait for it and then go
// together, one round trip and one commit for all of them
// (ledgerGroups). Claims on one key table that arrive while one is at
// PostgreSQL go together too, as a batch of the same plain INSERTs in one
// transaction (claimGroups); when any of them fails, a duplicate's 23505
// included, the transaction rolls back and each claim runs again alone, so
// that every verdict is still its own INSERT's. A declined transfer, or a response that cannot be
// rendered ahead, takes the ledger transaction in two pipelined batches
// instead (transferInSteps).
//
// # Connections
//
// Each DB has a pool, and the pools of one server's levels share one
// Budget of connections (OpenWith), so that a server never asks
// PostgreSQL for more than its share of max_connections. When PostgreSQL
// cannot be reached or refuses a connection, or the budget stays spent,
// the call fails with engine.ErrUnavailable, which the server answers 503
// with Retry-After. A transfer's statements each take a connection of
// their own, the claim first: a claim refused leaves nothing behind, and
// a claim whose later statements could not run is released (ReleaseKey,
// on a context of its own), or, when PostgreSQL is gone by then, taken
// over by a retry once its lease runs out (scoped).
//
// DB is safe for concurrent use by multiple goroutines: it holds a pool of
// connections.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	neturl "net/url"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/puddle/v2"

	"idemlab/engine"
)

var _ engine.Store = (*DB)(nil)

// DB is one level's ledger and key tables in one schema of a PostgreSQL
// database.
type DB struct {
	pool   *pgxpool.Pool
	schema string
	stmts  stmts
	// utf8 is true when the database stores text as UTF-8, so that a
	// response's body can travel to ledger_transfer as text.
	utf8 bool
	// budget is the server's connection budget this DB's pool shares.
	budget *Budget

	groups ledgerGroups // transfers between the same accounts, sharing commits
	claims claimGroups  // claims on one key table, sharing commits

	mu    sync.Mutex
	sweep sweepCursor // this process's place in the reaper's sweep
}

// IsURL reports whether s names a PostgreSQL database
// (postgres://… or postgresql://…) rather than a SQLite file.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// Open connects to the database at url and uses the tables in schema,
// creating the schema and running the migrations it lacks first, with a
// connection budget of its own (DefaultMaxConns).
func Open(ctx context.Context, url, schema string) (*DB, error) {
	return OpenWith(ctx, url, schema, Options{})
}

// Options are OpenWith's settings beyond the URL and the schema.
type Options struct {
	// Budget bounds the connections this DB opens together with every
	// other DB given the same Budget (one per server, shared by its
	// levels); nil means a budget of its own of DefaultMaxConns.
	Budget *Budget
	// Configure, when not nil, has the last word on the pool's
	// configuration before the pool starts (the tests and the benchmark
	// beside SQLite, internal/stores, count round trips with a tracer).
	Configure func(*pgxpool.Config)
}

// OpenWith is Open with a shared connection budget and a last word on the
// pool's configuration (Options).
func OpenWith(ctx context.Context, url, schema string, o Options) (*DB, error) {
	if !schemaName.MatchString(schema) {
		return nil, fmt.Errorf("postgres: schema name %q: want lower-case letters, digits and _", schema)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	budget := o.Budget
	if budget == nil {
		budget = NewBudget(DefaultMaxConns)
	}
	// Every socket, the migration's first, holds a place in the budget.
	cfg.ConnConfig.DialFunc = budget.dialer(cfg.ConnConfig.DialFunc)
	if cfg.ConnConfig.ConnectTimeout <= 0 {
		// Unless the URL says (connect_timeout), pgxpool would wait two
		// minutes on a database that does not answer; a request is
		// answered 503 long before.
		cfg.ConnConfig.ConnectTimeout = connectTimeout
	}
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	err = migrate(ctx, conn, schema, migrations)
	utf8 := conn.PgConn().ParameterStatus("server_encoding") == "UTF8"
	conn.Close(ctx)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	if u, err := neturl.Parse(url); err == nil && !u.Query().Has("pool_max_conns") {
		// The budget bounds the server's levels together; each level's
		// pool keeps the size that served one level best on its own.
		cfg.MaxConns = min(defaultPoolSize(), int32(budget.Max()))
	}
	db := &DB{schema: schema, stmts: newStmts(), utf8: utf8, budget: budget}
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		for _, s := range db.stmts.every() {
			// Named by its own text: Exec, Query and batches given the
			// text find the prepared statement (see stmt).
			if _, err := conn.Prepare(ctx, string(s), string(s)); err != nil {
				return fmt.Errorf("postgres: prepare %q: %w", s, err)
			}
		}
		return nil
	}
	if o.Configure != nil {
		o.Configure(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: pool: %w", err)
	}
	db.pool = pool
	budget.add(pool)
	return db, nil
}

// defaultPoolSize is a level's pool size when the URL does not set one
// (pool_max_conns), unless the budget is smaller. pgxpool's own default,
// 4 or the number of cores, left the server's requests queueing for a
// connection: with 16 clients on two cores, waiting on the pool cost about
// a quarter of the app's CPU per transfer (docs/PERFORMANCE.md). Each
// request holds a connection for one statement at a time, so a few per
// core keep PostgreSQL busy without crowding it, and fewer connections
// let more claims and ledger calls share a round trip (claimGroups,
// ledgerGroups): a pool of the whole budget, 16, cost 4 % more round trips
// per transfer than 8 (docs/PERFORMANCE.md, "The connection budget").
func defaultPoolSize() int32 {
	return int32(max(8, 2*runtime.GOMAXPROCS(0)))
}

// connectTimeout bounds one attempt to connect to PostgreSQL.
const connectTimeout = 5 * time.Second

// Close closes the pool's connections and gives their places in the
// budget back.
func (db *DB) Close() error {
	db.budget.remove(db.pool)
	db.pool.Close()
	return nil
}

// Schema is the schema the tables live in.
func (db *DB) Schema() string { return db.schema }

// mapErr turns the conflicts after which nothing was committed
// (serialization failure, deadlock, lock not available) into
// engine.ErrBusy, a database that cannot be reached or refuses the
// connection into engine.ErrUnavailable, and wraps the rest with the
// operation.
func mapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch pg.Code {
		case "40001", "40P01", "55P03":
			return fmt.Errorf("postgres: %s: %w (%v)", op, engine.ErrBusy, err)
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// The caller's context ended (a client that went away): not the
		// database's doing.
		return fmt.Errorf("postgres: %s: %w", op, err)
	}
	if unavailable(err) {
		return fmt.Errorf("postgres: %s: %w (%v)", op, engine.ErrUnavailable, err)
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}

// unavailable reports whether err says that PostgreSQL could not be
// reached or would not take the statement: a connection it refused
// (53300 too many clients, 57P03 starting up or shutting down, a socket
// nobody listens on), the server's own budget spent, a connection it
// ended (57P01 administrator command, 57P02 crash), one lost on the way
// (class 08, an EOF, a network error) or the pool closed. A request that
// meets it is answered 503 with Retry-After: retried with its key, it
// pays at most once whatever became of the statement.
func unavailable(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return strings.HasPrefix(pg.Code, "08") || strings.HasPrefix(pg.Code, "53") || strings.HasPrefix(pg.Code, "57P")
	}
	var connect *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connect) || errors.Is(err, errBudgetSpent) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, puddle.ErrClosedPool) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, pgconn.ErrConnClosed) || pgconn.SafeToRetry(err)
}

func isUniqueViolation(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "23505"
}

// PutAccount creates or sets an account.
func (db *DB) PutAccount(ctx context.Context, id string, balance int64) (engine.Account, error) {
	if _, err := db.pool.Exec(ctx, string(putAccount), id, balance); err != nil {
		return engine.Account{}, mapErr("put account", err)
	}
	return engine.Account{ID: id, Balance: balance}, nil
}

// GetAccount returns an account or engine.ErrNotFound.
func (db *DB) GetAccount(ctx context.Context, id string) (engine.Account, error) {
	var bal int64
	err := db.pool.QueryRow(ctx, string(getAccount), id).Scan(&bal)
	if errors.Is(err, pgx.ErrNoRows) {
		return engine.Account{}, engine.ErrNotFound
	}
	if err != nil {
		return engine.Account{}, mapErr("get account", err)
	}
	return engine.Account{ID: id, Balance: bal}, nil
}

// TransferByID returns a transfer and its payer's balance now.
func (db *DB) TransferByID(ctx context.Context, id string) (engine.TransferByIDResult, error) {
	res := engine.TransferByIDResult{SQL: string(transferByID)}
	n, err := strconv.ParseInt(strings.TrimPrefix(id, "tr_"), 10, 64)
	if err != nil || !strings.HasPrefix(id, "tr_") {
		return res, engine.ErrNotFound
	}
	t := engine.Transfer{ID: id}
	var bal int64
	err = db.pool.QueryRow(ctx, res.SQL, n).Scan(&t.From, &t.To, &t.Amount, &t.CreatedAt, &t.Customer, &t.Key, &bal)
	if errors.Is(err, pgx.ErrNoRows) {
		return res, engine.ErrNotFound
	}
	if err != nil {
		return res, mapErr("transfer by id", err)
	}
	res.Transfer, res.Balance = t, bal
	return res, nil
}

// Ping runs one empty statement on a pooled connection, the cheapest
// proof that PostgreSQL answers this server (its /readyz). It fails, as
// engine.ErrUnavailable, when no connection can be had before ctx ends.
func (db *DB) Ping(ctx context.Context) error {
	return mapErr("ping", db.pool.Ping(ctx))
}
