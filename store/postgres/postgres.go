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
//  2. both accounts, SELECT … ORDER BY id FOR UPDATE: the payer's balance
//     is read under the lock that the debit then holds, so no concurrent
//     debit can spend the same money between the check and the UPDATE (at
//     READ COMMITTED a plain SELECT would read a balance another
//     transaction is about to lower, and the CHECK (balance >= 0) would be
//     the only thing left to catch the overdraft). Locking in id order, and
//     always the key before the accounts, means two transfers in opposite
//     directions cannot deadlock.
//
// SERIALIZABLE would also be correct, but it reports the same conflicts
// later, as serialization failures (SQLSTATE 40001) at commit, which the
// store would have to retry or hand to the client; with the locks above a
// conflicting transfer simply waits its turn. Should a serialization
// failure or a deadlock (40P01) ever come back, nothing was committed: the
// store reports engine.ErrBusy and the client retries with the same key.
//
// DB is safe for concurrent use by multiple goroutines: it holds a pool of
// connections.
package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"idemlab/engine"
	"idemlab/store"
)

var _ engine.Store = (*DB)(nil)

// DB is one level's ledger and key tables in one schema of a PostgreSQL
// database.
type DB struct {
	pool   *pgxpool.Pool
	schema string

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
// creating the schema and running the migrations it lacks first.
func Open(ctx context.Context, url, schema string) (*DB, error) {
	if !schemaName.MatchString(schema) {
		return nil, fmt.Errorf("postgres: schema name %q: want lower-case letters, digits and _", schema)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	err = migrate(ctx, conn, schema)
	conn.Close(ctx)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: pool: %w", err)
	}
	return &DB{pool: pool, schema: schema}, nil
}

// Close closes the pool's connections.
func (db *DB) Close() error {
	db.pool.Close()
	return nil
}

// Schema is the schema the tables live in.
func (db *DB) Schema() string { return db.schema }

// Table names, as they appear in the SQL the traces show.
const (
	keysTable      = "idem_keys"
	looseKeysTable = "idem_keys_unconstrained"
)

func tableName(t engine.KeyTable) string {
	if t == engine.TableLoose {
		return looseKeysTable
	}
	return keysTable
}

const keyColumns = "scope, idem_key, customer, fingerprint, state, owner, lease_until, created_at, expires_at, status, headers, body, transfer_id"

// keyColumnsNoState is keyColumns without state: what code that keeps no
// in-progress state writes.
const keyColumnsNoState = "scope, idem_key, customer, fingerprint, owner, lease_until, created_at, expires_at, status, headers, body, transfer_id"

// statements holds every SQL text the store runs; pgx prepares each once
// per connection on first use.
var statements = func() map[string]string {
	m := map[string]string{
		"putAccount":   "INSERT INTO accounts (id, balance) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET balance = excluded.balance",
		"getAccount":   "SELECT balance FROM accounts WHERE id = $1",
		"lockAccounts": "SELECT id, balance FROM accounts WHERE id = ANY($1) ORDER BY id FOR UPDATE",
		"debit":        "UPDATE accounts SET balance = balance - $2 WHERE id = $1",
		"credit":       "UPDATE accounts SET balance = balance + $2 WHERE id = $1",
		"transferID":   "SELECT nextval(pg_get_serial_sequence('transfers', 'id'))",
		"addTransfer":  "INSERT INTO transfers (id, from_id, to_id, amount, created_at, customer, idem_key) VALUES ($1, $2, $3, $4, $5, $6, $7)",
		"transferByID": "SELECT t.from_id, t.to_id, t.amount, t.created_at, t.customer, t.idem_key, a.balance FROM transfers t JOIN accounts a ON a.id = t.from_id WHERE t.id = $1",
		"begin":        "BEGIN ISOLATION LEVEL READ COMMITTED",
		"commit":       "COMMIT",
		"rollback":     "ROLLBACK",
		"usage": "SELECT (SELECT count(*) FROM " + keysTable + ") + (SELECT count(*) FROM " + looseKeysTable + ")," +
			" (SELECT count(*) FROM accounts), (SELECT count(*) FROM transfers)," +
			" (SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r')",
	}
	// The reaper's sweep: a window of up to $3 rows after the cursor, of
	// which the expired ones ($4 is now) are deleted; the statement answers
	// how many it deleted, how many the window held and where it ended. The
	// constrained table's cursor is (scope, key) = ($1, $2); the
	// unconstrained table's is its id, $1 (and $2 is unused, so the two
	// statements bind alike). The expiry is tested on the row being deleted,
	// so a row that a takeover renewed meanwhile is re-checked and kept.
	const expired = " AND k.expires_at > 0 AND k.expires_at <= $4"
	m["sweep:"+keysTable] = `WITH win AS (SELECT scope, idem_key FROM ` + keysTable + ` WHERE (scope, idem_key) > ($1, $2) ORDER BY scope, idem_key LIMIT $3),
		gone AS (DELETE FROM ` + keysTable + ` k USING win w WHERE k.scope = w.scope AND k.idem_key = w.idem_key` + expired + ` RETURNING 1)
		SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM win), coalesce(l.scope, ''), coalesce(l.idem_key, '')
		FROM (SELECT 1) one LEFT JOIN (SELECT scope, idem_key FROM win ORDER BY scope DESC, idem_key DESC LIMIT 1) l ON true`
	m["sweep:"+looseKeysTable] = `WITH win AS (SELECT id FROM ` + looseKeysTable + ` WHERE id > $1::bigint ORDER BY id LIMIT $3),
		gone AS (DELETE FROM ` + looseKeysTable + ` k USING win w WHERE k.id = w.id` + expired + ` RETURNING 1)
		SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM win), coalesce((SELECT max(id) FROM win), 0)::text, $2::text`
	for _, t := range []string{keysTable, looseKeysTable} {
		m["lookup:"+t] = "SELECT " + keyColumns + " FROM " + t + " WHERE scope = $1 AND idem_key = $2 ORDER BY created_at DESC LIMIT 1"
		m["insert:"+t] = "INSERT INTO " + t + " (" + keyColumns + ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
		m["insertIgnore:"+t] = m["insert:"+t] + " ON CONFLICT DO NOTHING"
		m["insertNoState:"+t] = "INSERT INTO " + t + " (" + keyColumnsNoState + ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
		m["insertIgnoreNoState:"+t] = m["insertNoState:"+t] + " ON CONFLICT DO NOTHING"
		m["takeOver:"+t] = "UPDATE " + t + " SET customer = $3, fingerprint = $4, state = $5, owner = $6, lease_until = $7, created_at = $8, expires_at = $9," +
			" status = NULL, headers = NULL, body = NULL, transfer_id = NULL" +
			" WHERE scope = $1 AND idem_key = $2 AND ((expires_at > 0 AND expires_at <= $10) OR (state = 'in_progress' AND lease_until > 0 AND lease_until <= $10))"
		m["lockKey:"+t] = "SELECT 1 FROM " + t + " WHERE scope = $1 AND idem_key = $2 AND owner = $3 AND state = 'in_progress' FOR UPDATE"
		// The completion fails (22012, division by zero) when it finds no
		// claim of this owner's to complete, which aborts the ledger's
		// transaction (DB.Transfer).
		m["complete:"+t] = "WITH done AS (UPDATE " + t + " SET state = 'completed', lease_until = 0, status = $4, headers = $5, body = $6, transfer_id = $7" +
			" WHERE scope = $1 AND idem_key = $2 AND owner = $3 AND state = 'in_progress' RETURNING 1) SELECT 1 / count(*)::int FROM done"
		m["storeResponse:"+t] = "UPDATE " + t + " SET status = $4, headers = $5, body = $6, transfer_id = $7 WHERE scope = $1 AND idem_key = $2 AND owner = $3"
		m["release:"+t] = "DELETE FROM " + t + " WHERE scope = $1 AND idem_key = $2 AND owner = $3 AND state = 'in_progress'"
		m["keys:"+t] = "SELECT " + keyColumns + " FROM " + t + " ORDER BY created_at, scope, idem_key"
	}
	return m
}()

// SQL returns the text of a statement, for traces.
func SQL(name string) string {
	s, ok := statements[name]
	if !ok {
		panic("postgres: no statement " + name) // a typo in this package
	}
	return s
}

// mapErr turns the conflicts after which nothing was committed
// (serialization failure, deadlock, lock not available) into
// engine.ErrBusy and wraps the rest with the operation.
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
	return fmt.Errorf("postgres: %s: %w", op, err)
}

func isUniqueViolation(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "23505"
}

// PutAccount creates or sets an account.
func (db *DB) PutAccount(ctx context.Context, id string, balance int64) (engine.Account, error) {
	if _, err := db.pool.Exec(ctx, SQL("putAccount"), id, balance); err != nil {
		return engine.Account{}, mapErr("put account", err)
	}
	return engine.Account{ID: id, Balance: balance}, nil
}

// GetAccount returns an account or engine.ErrNotFound.
func (db *DB) GetAccount(ctx context.Context, id string) (engine.Account, error) {
	var bal int64
	err := db.pool.QueryRow(ctx, SQL("getAccount"), id).Scan(&bal)
	if errors.Is(err, pgx.ErrNoRows) {
		return engine.Account{}, engine.ErrNotFound
	}
	if err != nil {
		return engine.Account{}, mapErr("get account", err)
	}
	return engine.Account{ID: id, Balance: bal}, nil
}

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// LookupKey returns the newest row for (scope, key), or nil.
func (db *DB) LookupKey(ctx context.Context, t engine.KeyTable, scope, key string) (engine.LookupResult, error) {
	name := "lookup:" + tableName(t)
	rec, err := lookup(ctx, db.pool, name, scope, key)
	return engine.LookupResult{Record: rec, SQL: SQL(name)}, err
}

func lookup(ctx context.Context, q querier, name, scope, key string) (*engine.KeyRecord, error) {
	rows, err := q.Query(ctx, SQL(name), scope, key)
	if err != nil {
		return nil, mapErr("look up key", err)
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, mapErr("look up key", rows.Err())
	}
	rec, err := scanKey(rows)
	if err != nil {
		return nil, err
	}
	return &rec, nil
}

// scanKey reads a row selected with keyColumns.
func scanKey(row pgx.Row) (engine.KeyRecord, error) {
	var (
		rec        engine.KeyRecord
		status     *int32
		headers    *string
		body       []byte
		transferID *string
	)
	if err := row.Scan(&rec.Scope, &rec.Key, &rec.Customer, &rec.Fingerprint, &rec.State, &rec.Owner, &rec.LeaseUntil,
		&rec.CreatedAt, &rec.ExpiresAt, &status, &headers, &body, &transferID); err != nil {
		return rec, mapErr("read key", err)
	}
	if transferID != nil {
		rec.TransferID = *transferID
	}
	if status != nil {
		if body == nil {
			body = []byte{}
		}
		resp := &engine.Response{Status: int(*status), Body: body}
		if headers != nil {
			if err := json.Unmarshal([]byte(*headers), &resp.Header); err != nil {
				return rec, fmt.Errorf("postgres: stored headers of %q: %w", rec.Key, err)
			}
		}
		rec.Response = resp
	}
	return rec, nil
}

// responseArgs are the status, headers, body and transfer id columns'
// values.
func responseArgs(resp *engine.Response, transferID string) ([]any, error) {
	args := []any{nil, nil, nil, nil}
	if resp != nil {
		h, err := json.Marshal(resp.Header)
		if err != nil {
			return nil, err
		}
		body := resp.Body
		if body == nil {
			body = []byte{}
		}
		args[0], args[1], args[2] = int32(resp.Status), string(h), body
	}
	if transferID != "" {
		args[3] = transferID
	}
	return args, nil
}

// InsertKey runs the claim INSERT. The verdict on a duplicate is the
// unique index's violation; only after it does the store read the
// blocking row.
func (db *DB) InsertKey(ctx context.Context, t engine.KeyTable, mode engine.InsertMode, rec engine.KeyRecord) (engine.InsertResult, error) {
	name := "insert"
	if mode == engine.InsertOrIgnore {
		name = "insertIgnore"
	}
	args := []any{rec.Scope, rec.Key, rec.Customer, rec.Fingerprint}
	if rec.State == "" {
		name += "NoState"
	} else {
		args = append(args, rec.State)
	}
	name += ":" + tableName(t)
	res := engine.InsertResult{SQL: SQL(name)}
	resp, err := responseArgs(rec.Response, rec.TransferID)
	if err != nil {
		return res, fmt.Errorf("postgres: key's response: %w", err)
	}
	args = append(args, rec.Owner, rec.LeaseUntil, rec.CreatedAt, rec.ExpiresAt)
	args = append(args, resp...)
	tag, err := db.pool.Exec(ctx, res.SQL, args...)
	switch {
	case err == nil:
		res.Inserted = tag.RowsAffected() == 1
		return res, nil
	case isUniqueViolation(err):
		res.ConstraintError = err.Error()
		res.Existing, err = lookup(ctx, db.pool, "lookup:"+tableName(t), rec.Scope, rec.Key)
		return res, err
	}
	return res, mapErr(fmt.Sprintf("claim %q", rec.Key), err)
}

// TakeOverKey replaces an expired row, or an in_progress row whose lease ran
// out, with rec. One conditional UPDATE: a second one waits for the first's
// row lock, then re-checks its WHERE on the new row and finds the lease
// renewed, so at most one attempt wins.
func (db *DB) TakeOverKey(ctx context.Context, t engine.KeyTable, rec engine.KeyRecord, nowMS int64) (engine.WriteResult, error) {
	name := "takeOver:" + tableName(t)
	state := rec.State
	if state == "" {
		state = engine.StateCompleted
	}
	tag, err := db.pool.Exec(ctx, SQL(name), rec.Scope, rec.Key, rec.Customer, rec.Fingerprint, state, rec.Owner,
		rec.LeaseUntil, rec.CreatedAt, rec.ExpiresAt, nowMS)
	if err != nil {
		return engine.WriteResult{SQL: SQL(name)}, mapErr(fmt.Sprintf("take over %q", rec.Key), err)
	}
	return engine.WriteResult{Changed: tag.RowsAffected() == 1, SQL: SQL(name)}, nil
}

// Transfer runs the ledger transaction at READ COMMITTED in two round
// trips, each a pipelined batch of statements:
//
//  1. BEGIN; lock the key by its owner (when completing one); lock both
//     accounts in id order, reading their balances; draw the transfer's id;
//  2. debit, credit and record the transfer (only when both accounts exist
//     and the funds suffice); complete the key with the response rendered
//     from what step 1 read; COMMIT.
//
// The accounts stay locked from the first reply to the COMMIT: one round
// trip, during which every other transfer from the same account waits.
// The completion is written so that it fails when it completes no row (it
// divides by the count): the transaction is aborted, PostgreSQL skips the
// COMMIT queued behind it, and the store rolls back. So a key that is not
// this owner's can never be paid for, even if the lock of step 1 were ever
// wrong (with that lock taken out by hand, the conformance suite still
// passed). See the package comment for the locks.
func (db *DB) Transfer(ctx context.Context, a engine.TransferArgs) (res engine.TransferResult, err error) {
	var sql []string
	run := func(name string) string {
		s := SQL(name)
		sql = append(sql, s)
		return s
	}
	defer func() { res.SQL = strings.Join(sql, ";\n") }()

	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return res, mapErr("begin transfer", err)
	}
	defer conn.Release()
	open := false // a transaction is open on conn
	defer func() {
		if open {
			// A connection that cannot roll back is closed, which rolls back.
			if _, err := conn.Exec(context.WithoutCancel(ctx), SQL("rollback")); err != nil {
				conn.Conn().Close(context.WithoutCancel(ctx))
			}
			run("rollback")
		}
	}()

	c := a.Complete
	first := &pgx.Batch{}
	first.Queue(run("begin"))
	if c != nil {
		first.Queue(run("lockKey:"+tableName(c.Table)), c.Scope, c.Key, c.Owner)
	}
	first.Queue(run("lockAccounts"), []string{a.From, a.To})
	first.Queue(run("transferID"))
	balances := map[string]int64{}
	keyHeld := true
	var id int64
	err = func() error {
		br := conn.SendBatch(ctx, first)
		defer br.Close()
		if _, err := br.Exec(); err != nil {
			return mapErr("begin transfer", err)
		}
		open = true
		if c != nil {
			var one int
			err := br.QueryRow().Scan(&one)
			if errors.Is(err, pgx.ErrNoRows) {
				keyHeld = false
			} else if err != nil {
				return mapErr(fmt.Sprintf("lock key %q", c.Key), err)
			}
		}
		rows, err := br.Query()
		if err != nil {
			return mapErr("lock accounts", err)
		}
		for rows.Next() {
			var id string
			var bal int64
			if err := rows.Scan(&id, &bal); err != nil {
				rows.Close()
				return mapErr("lock accounts", err)
			}
			balances[id] = bal
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return mapErr("lock accounts", err)
		}
		return mapErr("draw transfer id", br.QueryRow().Scan(&id))
	}()
	if err != nil {
		return res, err
	}
	if !keyHeld {
		// Another attempt took the claim over: this one must not pay.
		return res, nil
	}

	last := &pgx.Batch{}
	fromBal, fromOK := balances[a.From]
	_, toOK := balances[a.To]
	moves := false
	switch {
	case !fromOK:
		res.Outcome, res.Missing = engine.TransferUnknownAccount, a.From
	case fromBal < a.Amount:
		res.Outcome, res.Balance = engine.TransferInsufficientFunds, fromBal
	case !toOK:
		res.Outcome, res.Missing = engine.TransferUnknownAccount, a.To
	default:
		moves = true
		last.Queue(run("debit"), a.From, a.Amount)
		last.Queue(run("credit"), a.To, a.Amount)
		last.Queue(run("addTransfer"), id, a.From, a.To, a.Amount, a.At, a.Customer, a.Key)
		res.Transfer = engine.Transfer{ID: store.TransferID(id), From: a.From, To: a.To, Amount: a.Amount,
			BalanceAfter: fromBal - a.Amount, CreatedAt: a.At, Customer: a.Customer, Key: a.Key}
	}
	var resp engine.Response
	if c != nil {
		resp = c.Render(res)
		args, err := responseArgs(&resp, res.Transfer.ID)
		if err != nil {
			return res, fmt.Errorf("postgres: response of %q: %w", c.Key, err)
		}
		last.Queue(run("complete:"+tableName(c.Table)), append([]any{c.Scope, c.Key, c.Owner}, args...)...)
	}
	last.Queue(run("commit"))
	completed := true
	err = func() error {
		br := conn.SendBatch(ctx, last)
		defer br.Close()
		if moves {
			for _, op := range []string{"debit", "credit", "record transfer"} {
				if _, err := br.Exec(); err != nil {
					return mapErr(op, err)
				}
			}
		}
		if c != nil {
			var one int
			err := br.QueryRow().Scan(&one)
			var pg *pgconn.PgError
			if errors.As(err, &pg) && pg.Code == "22012" {
				completed = false // the key was not this owner's; the COMMIT is skipped
				return nil
			} else if err != nil {
				return mapErr(fmt.Sprintf("complete %q", c.Key), err)
			}
		}
		tag, err := br.Exec()
		if err != nil {
			return mapErr("commit transfer", err)
		}
		if tag.String() != "COMMIT" {
			return fmt.Errorf("postgres: commit transfer: the transaction rolled back (%s)", tag)
		}
		return nil
	}()
	if err != nil {
		return res, err
	}
	if !completed {
		// The aborted transaction is still open: the deferred ROLLBACK ends it.
		res.Transfer = engine.Transfer{}
		return res, nil
	}
	open = false
	if c != nil {
		res.Completed, res.Response = true, &resp
	}
	return res, nil
}

// StoreResponse saves a response on a key after the fact (the rungs that
// record completion separately from the ledger).
func (db *DB) StoreResponse(ctx context.Context, t engine.KeyTable, scope, key, owner string, resp engine.Response, transferID string) (engine.WriteResult, error) {
	name := "storeResponse:" + tableName(t)
	args, err := responseArgs(&resp, transferID)
	if err != nil {
		return engine.WriteResult{SQL: SQL(name)}, fmt.Errorf("postgres: response of %q: %w", key, err)
	}
	tag, err := db.pool.Exec(ctx, SQL(name), append([]any{scope, key, owner}, args...)...)
	if err != nil {
		return engine.WriteResult{SQL: SQL(name)}, mapErr(fmt.Sprintf("store response of %q", key), err)
	}
	return engine.WriteResult{Changed: tag.RowsAffected() > 0, SQL: SQL(name)}, nil
}

// ReleaseKey deletes this owner's in_progress claim. It runs even when the
// request's context has ended: a claim left behind would answer 409 until
// its lease ran out.
func (db *DB) ReleaseKey(ctx context.Context, t engine.KeyTable, scope, key, owner string) (engine.WriteResult, error) {
	name := "release:" + tableName(t)
	tag, err := db.pool.Exec(context.WithoutCancel(ctx), SQL(name), scope, key, owner)
	return engine.WriteResult{Changed: tag.RowsAffected() > 0, SQL: SQL(name)}, mapErr(fmt.Sprintf("release %q", key), err)
}

// TransferByID returns a transfer and its payer's balance now.
func (db *DB) TransferByID(ctx context.Context, id string) (engine.TransferByIDResult, error) {
	sql := SQL("transferByID")
	n, err := strconv.ParseInt(strings.TrimPrefix(id, "tr_"), 10, 64)
	if err != nil || !strings.HasPrefix(id, "tr_") {
		return engine.TransferByIDResult{SQL: sql}, engine.ErrNotFound
	}
	t := engine.Transfer{ID: id}
	var bal int64
	err = db.pool.QueryRow(ctx, sql, n).Scan(&t.From, &t.To, &t.Amount, &t.CreatedAt, &t.Customer, &t.Key, &bal)
	if errors.Is(err, pgx.ErrNoRows) {
		return engine.TransferByIDResult{SQL: sql}, engine.ErrNotFound
	}
	if err != nil {
		return engine.TransferByIDResult{SQL: sql}, mapErr("transfer by id", err)
	}
	return engine.TransferByIDResult{Transfer: t, Balance: bal, SQL: sql}, nil
}

// sweepCursor is where this process's reaper stands: in which table, and
// the last row it looked at.
type sweepCursor struct {
	loose      bool
	scope, key string // the constrained table's last (scope, key); keys are never empty
	id         int64  // the unconstrained table's last id
}

// Reap is one step of the reaper's sweep: one statement that looks at up to
// batch keys after the last step's window and deletes those that expired
// at or before nowMS. It walks the constrained key table in primary-key
// order, then the unconstrained one in id order; swept is true when the
// step reached the end of the last. Each step is its own short
// transaction, so claims on other keys never wait long for it. Several
// processes may sweep at once: a row is deleted once, whoever gets there.
func (db *DB) Reap(ctx context.Context, nowMS int64, batch int) (deleted int, swept bool, err error) {
	if batch < 1 {
		return 0, false, fmt.Errorf("postgres: reap: batch %d < 1", batch)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	c := &db.sweep
	var (
		n, seen    int64
		last1, lk2 string
	)
	if c.loose {
		err = db.pool.QueryRow(ctx, SQL("sweep:"+looseKeysTable), c.id, "", batch, nowMS).Scan(&n, &seen, &last1, &lk2)
	} else {
		err = db.pool.QueryRow(ctx, SQL("sweep:"+keysTable), c.scope, c.key, batch, nowMS).Scan(&n, &seen, &last1, &lk2)
	}
	if err != nil {
		return 0, false, mapErr("reap keys", err)
	}
	switch {
	case seen == int64(batch) && c.loose:
		c.id, _ = strconv.ParseInt(last1, 10, 64)
	case seen == int64(batch):
		c.scope, c.key = last1, lk2
	case !c.loose:
		*c = sweepCursor{loose: true}
	default:
		*c = sweepCursor{}
		swept = true
	}
	return int(n), swept, nil
}

// Usage counts what the schema holds; Bytes is the size of its tables
// with their indexes and TOAST.
func (db *DB) Usage(ctx context.Context) (store.Usage, error) {
	var u store.Usage
	var bytes *int64
	if err := db.pool.QueryRow(ctx, SQL("usage")).Scan(&u.Keys, &u.Accounts, &u.Transfers, &bytes); err != nil {
		return u, mapErr("count usage", err)
	}
	if bytes != nil {
		u.Bytes = *bytes
	}
	return u, nil
}

// Snapshot reads the whole schema, in one REPEATABLE READ transaction so
// that the balances, the ledger and the keys are of one moment. It is meant
// for tests and the checker, on small databases.
func (db *DB) Snapshot(ctx context.Context) (store.Snapshot, error) {
	var snap store.Snapshot
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return snap, mapErr("snapshot", err)
	}
	defer tx.Rollback(ctx)
	rows, err := tx.Query(ctx, "SELECT id, balance FROM accounts ORDER BY id")
	if err != nil {
		return snap, mapErr("snapshot accounts", err)
	}
	snap.Accounts, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.Account, error) {
		var a engine.Account
		return a, r.Scan(&a.ID, &a.Balance)
	})
	if err != nil {
		return snap, mapErr("snapshot accounts", err)
	}
	rows, err = tx.Query(ctx, "SELECT id, from_id, to_id, amount, created_at, customer, idem_key FROM transfers ORDER BY id")
	if err != nil {
		return snap, mapErr("snapshot transfers", err)
	}
	snap.Transfers, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.Transfer, error) {
		var t engine.Transfer
		var id int64
		err := r.Scan(&id, &t.From, &t.To, &t.Amount, &t.CreatedAt, &t.Customer, &t.Key)
		t.ID = store.TransferID(id)
		return t, err
	})
	if err != nil {
		return snap, mapErr("snapshot transfers", err)
	}
	for _, t := range []string{keysTable, looseKeysTable} {
		rows, err := tx.Query(ctx, SQL("keys:"+t))
		if err != nil {
			return snap, mapErr("snapshot keys", err)
		}
		keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.KeyRecord, error) { return scanKey(r) })
		if err != nil {
			return snap, mapErr("snapshot keys", err)
		}
		if t == keysTable {
			snap.Keys = keys
		} else {
			snap.LooseKeys = keys
		}
	}
	return snap, nil
}
