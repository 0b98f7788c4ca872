// Package jsrun serves a student's lab handler, a JavaScript file that
// declares `async function transfer(req, db, pay)` (docs/lab-handler.md), as
// an HTTP endpoint of the lab contract on a SQLite file: what `idemlab lab
// serve` runs and `idemlab grade` judges, the same file the browser's lab
// races step by step.
//
// The JavaScript engine is github.com/dop251/goja: pure Go, so the one
// idemlab binary still builds without cgo for every platform it ships to;
// ECMAScript 2020 and later with Promises and async/await, which the
// handler API is made of; Runtime.Interrupt, which stops an endless loop
// from another goroutine; and stack positions, which name the student's line
// when their code throws. A goja Runtime is not safe for concurrent use, so
// every attempt (one POST /transfers) gets a Runtime of its own, runs the
// compiled file in it afresh (top-level state does not survive from one
// attempt to the next) and drives it with a small event loop of its own
// (goja has none): each db or pay call queues its Go work and returns a
// Promise; the loop runs the work on the attempt's goroutine, on the
// attempt's own SQLite connection, and resolves the Promise, which resumes
// the handler up to its next await, until the handler's Promise settles.
// Before each such step the goroutine yields, so the steps of concurrent
// attempts interleave for real, as they do in a server whose every database
// call is a round trip.
package jsrun

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
	"github.com/ncruces/go-sqlite3"

	"idemlab/engine"
	"idemlab/engine/httpapi"
)

// Defaults of Options.
const (
	// DefaultBudget is how long one attempt may run, its waits for the
	// database and the payment network included, before it is stopped and
	// answered 500.
	DefaultBudget = 5 * time.Second
	// DefaultPayDelay is how long the payment network takes to answer: some
	// tens of milliseconds, as the lab contract advises, so that a retry can
	// arrive while a transfer is in flight.
	DefaultPayDelay = 20 * time.Millisecond
	// DefaultMaxHeap is how large the process's heap may grow while
	// handlers run before the running attempts are stopped and answered
	// 500: a handler that keeps allocating (an array grown in a loop) must
	// not take the endpoint, or the student's machine, down with it.
	DefaultMaxHeap = 512 << 20
)

// LabTables are the lab's own tables, created before the student's schema
// in the same database (docs/lab-handler.md, "The lab's tables").
const LabTables = `
CREATE TABLE accounts (
  id      TEXT PRIMARY KEY,
  balance INTEGER NOT NULL CHECK (balance >= 0)
);
CREATE TABLE transfers (
  id         INTEGER PRIMARY KEY,
  from_id    TEXT NOT NULL,
  to_id      TEXT NOT NULL,
  amount     INTEGER NOT NULL CHECK (amount > 0),
  created_at INTEGER NOT NULL
);`

// Options say where a Handler keeps its data and how long things take.
type Options struct {
	// DB is the bank's SQLite file, created if missing: the lab's tables
	// and the student's schema.
	DB string
	// Payments is the payment network's own SQLite file, where pay records
	// its charges, out of reach of the student's SQL and of any rollback.
	// Empty: DB's name with ".payments.db" for ".db" (bank.db →
	// bank.payments.db).
	Payments string
	// Budget is how long one attempt may run (DefaultBudget when zero).
	Budget time.Duration
	// MaxHeap is how many bytes the process's heap may hold while attempts
	// run (DefaultMaxHeap when zero). Past it, every attempt running is
	// stopped: the heap is the process's, and which attempt filled it
	// cannot be told.
	MaxHeap uint64
	// PayDelay is how long pay takes (DefaultPayDelay when zero; negative
	// for none).
	PayDelay time.Duration
	// Log receives the lines of lab.log and every exception (os.Stderr when
	// nil).
	Log io.Writer
	// Now is the clock req.now reads (time.Now when nil).
	Now func() time.Time
}

// processTag is four random hex digits.
func processTag() string {
	var b [2]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// PaymentsFile is the payment network's file for the bank file db, when
// Options.Payments is empty.
func PaymentsFile(db string) string {
	return strings.TrimSuffix(db, ".db") + ".payments.db"
}

// Handler serves one handler file over one database: the lab contract's
// GET /, PUT and GET /accounts/{id}, and POST /transfers by the file's
// transfer. It is safe for concurrent use: every request gets its own
// JavaScript runtime and its own SQLite connection.
type Handler struct {
	name      string // the file's base name, as stack positions say it
	prog      *goja.Program
	retention *int64 // retentionSeconds; nil when the file declares none
	opts      Options
	log       *log.Logger
	idle      chan *sqlite3.Conn
	pay       *network
	attempts  atomic.Int64
	// process tells this process's attempt ids from another's: two lab
	// serve processes on one database (replicas) must never share an owner.
	process string
}

var _ http.Handler = (*Handler)(nil)

// declarations reads what the file declares at its top level (a script's
// const and let are not properties of the global object, so they are read
// by name in the script's own scope).
var declarations = goja.MustCompile("declarations", `({
  transfer: typeof transfer === 'undefined' ? undefined : transfer,
  schema: typeof schema === 'undefined' ? undefined : schema,
  retentionSeconds: typeof retentionSeconds === 'undefined' ? undefined : retentionSeconds,
})`, false)

// Load compiles the handler file src (named name in positions), checks what
// it declares, opens the database (creating the lab's tables and running the
// file's schema when the database has no accounts table yet) and the payment
// network's file. A file that does not compile, lacks transfer, declares a
// schema that SQLite refuses or a retention that is not a whole number of
// seconds ≥ 0 is refused with the reason.
func Load(name string, src []byte, o Options) (*Handler, error) {
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	if o.MaxHeap == 0 {
		o.MaxHeap = DefaultMaxHeap
	}
	if o.PayDelay == 0 {
		o.PayDelay = DefaultPayDelay
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = os.Stderr
	}
	if o.DB == "" {
		return nil, errors.New("jsrun: no database file")
	}
	if o.Payments == "" {
		o.Payments = PaymentsFile(o.DB)
	}
	name = filepath.Base(name)
	prog, err := goja.Compile(name, string(src), false)
	if err != nil {
		return nil, fmt.Errorf("%s does not compile: %w", name, err)
	}
	if err := declaredTwice(name, src); err != nil {
		return nil, err
	}
	h := &Handler{name: name, prog: prog, opts: o, log: log.New(o.Log, "", log.LstdFlags),
		idle: make(chan *sqlite3.Conn, 64), process: processTag()}
	schema, err := h.declared()
	if err != nil {
		return nil, err
	}
	if err := h.createTables(schema); err != nil {
		return nil, err
	}
	if h.pay, err = openNetwork(o.Payments, o.PayDelay); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// declaredTwice refuses a file that declares a name twice, most often
// transfer: JavaScript keeps the last declaration of a function without a
// word, so a handler pasted above another never runs. In strict code a
// block's declarations must differ, so the file is compiled once more
// that way, only to ask (the browser's lab asks the same).
func declaredTwice(name string, src []byte) error {
	_, err := goja.Compile(name, "\"use strict\"; {\n"+string(src)+"\n}", true)
	if err == nil {
		return nil
	}
	m := redeclared.FindStringSubmatch(err.Error())
	if m == nil {
		return nil
	}
	line, _ := strconv.Atoi(m[2])
	return fmt.Errorf("%s declares %s twice (again at line %d): only the last declaration counts, so the code of the first never runs; keep one", name, m[1], line-1)
}

var redeclared = regexp.MustCompile(`Identifier '([^']+)' has already been declared at [^:]*:(\d+):`)

// declared runs the file once, within the budget, and reads its
// declarations: transfer, and the schema it returns.
func (h *Handler) declared() (schema string, err error) {
	vm := goja.New()
	stop := time.AfterFunc(h.opts.Budget, func() { vm.Interrupt("time budget") })
	defer stop.Stop()
	installLab(vm, h, "load")
	if _, err := vm.RunProgram(h.prog); err != nil {
		return "", fmt.Errorf("%s failed as it was loaded: %w", h.name, err)
	}
	v, err := vm.RunProgram(declarations)
	if err != nil {
		return "", fmt.Errorf("%s: %w", h.name, err)
	}
	decl := v.ToObject(vm)
	if _, ok := goja.AssertFunction(decl.Get("transfer")); !ok {
		return "", fmt.Errorf("%s declares no function transfer(req, db, pay)", h.name)
	}
	if s := decl.Get("schema"); !goja.IsUndefined(s) {
		if _, ok := export(s).(string); !ok {
			return "", fmt.Errorf("%s: schema must be a string of SQL", h.name)
		}
		schema = s.String()
	}
	if r := decl.Get("retentionSeconds"); !goja.IsUndefined(r) {
		n, ok := export(r).(int64)
		if !ok || n < 0 {
			return "", fmt.Errorf("%s: retentionSeconds must be a whole number of seconds ≥ 0, got %s", h.name, r.String())
		}
		h.retention = &n
	}
	return schema, nil
}

// createTables creates the lab's tables and runs the schema, in one
// transaction, when the database has no accounts table yet; a database that
// has one is used as it is.
func (h *Handler) createTables(schema string) error {
	c, err := sqlite3.Open(h.opts.DB)
	if err != nil {
		return fmt.Errorf("open %s: %w", h.opts.DB, err)
	}
	// WAL lets readers go on while a writer holds the lock; it is a
	// property of the file, set once.
	if err := c.Exec("PRAGMA journal_mode=WAL"); err != nil {
		c.Close()
		return fmt.Errorf("open %s: %w", h.opts.DB, err)
	}
	if err := h.prepare(c); err != nil {
		c.Close()
		return err
	}
	st, _, err := c.Prepare(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'accounts'`)
	if err != nil {
		c.Close()
		return fmt.Errorf("open %s: %w", h.opts.DB, err)
	}
	st.Step()
	exists := st.ColumnInt(0) > 0
	st.Close()
	if !exists {
		if err := c.Exec("BEGIN IMMEDIATE"); err != nil {
			c.Close()
			return fmt.Errorf("create tables: %w", err)
		}
		if err := c.Exec(LabTables); err != nil {
			c.Exec("ROLLBACK")
			c.Close()
			return fmt.Errorf("create the lab's tables: %w", err)
		}
		if strings.TrimSpace(schema) != "" {
			if err := c.Exec(schema); err != nil {
				c.Exec("ROLLBACK")
				c.Close()
				return fmt.Errorf("%s: its schema failed: %s", h.name, sqliteMessage(err))
			}
		}
		if err := c.Exec("COMMIT"); err != nil {
			c.Close()
			return fmt.Errorf("create tables: %w", err)
		}
	}
	h.idle <- c
	return nil
}

// prepare sets what every connection needs: a busy timeout a little longer
// than an attempt's budget, so that begin() waits for another attempt's
// commit instead of failing at once, and the attempt's budget, not the
// timeout, ends a wait that lasts too long.
func (h *Handler) prepare(c *sqlite3.Conn) error {
	if err := c.BusyTimeout(h.opts.Budget + time.Second); err != nil {
		return fmt.Errorf("busy timeout: %w", err)
	}
	if err := c.Exec("PRAGMA synchronous=NORMAL"); err != nil {
		return fmt.Errorf("pragmas: %w", err)
	}
	return nil
}

// conn returns an idle connection, or a new one when none is idle: no
// connection is ever used by two attempts at once.
func (h *Handler) conn() (*sqlite3.Conn, error) {
	select {
	case c := <-h.idle:
		return c, nil
	default:
	}
	c, err := sqlite3.Open(h.opts.DB)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", h.opts.DB, err)
	}
	if err := h.prepare(c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// release rolls back what the attempt left open and keeps the connection
// for the next one (or closes it when enough are idle, or it is unusable).
func (h *Handler) release(c *sqlite3.Conn) {
	c.SetInterrupt(context.Background())
	if !c.GetAutocommit() {
		if err := c.Exec("ROLLBACK"); err != nil {
			c.Close()
			return
		}
	}
	select {
	case h.idle <- c:
	default:
		c.Close()
	}
}

// Close closes the idle connections and the payment network's file.
// Requests still running keep theirs until they end.
func (h *Handler) Close() error {
	for {
		select {
		case c := <-h.idle:
			c.Close()
		default:
			if h.pay != nil {
				return h.pay.close()
			}
			return nil
		}
	}
}

// Name is the handler file's base name.
func (h *Handler) Name() string { return h.name }

// ServeHTTP answers the lab contract. The body is read first, at most
// engine.MaxBodyBytes (413 beyond, before any header is looked at).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, engine.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpapi.Write(w, engine.CauseBodyTooLarge.Problemf("the limit is %d bytes", engine.MaxBodyBytes).Response())
			return
		}
		httpapi.Write(w, engine.CauseBodyInvalid.Problem("the body could not be read in full").Response())
		return
	}
	path := r.URL.Path
	switch {
	case path == "/" || path == "":
		if r.Method != http.MethodGet {
			httpapi.Write(w, methodNotAllowed("GET"))
			return
		}
		pub := map[string]any{"handler": h.name}
		if h.retention != nil {
			pub["retention_seconds"] = *h.retention
		}
		httpapi.Write(w, jsonResponse(200, pub))
	case path == engine.TransfersRoute:
		if r.Method != http.MethodPost {
			httpapi.Write(w, methodNotAllowed("POST"))
			return
		}
		httpapi.Write(w, h.transfer(r, body))
	case strings.HasPrefix(path, "/accounts/"):
		id := strings.TrimPrefix(path, "/accounts/")
		switch r.Method {
		case http.MethodPut:
			httpapi.Write(w, h.putAccount(id, r.Header.Get("Content-Type"), body))
		case http.MethodGet:
			httpapi.Write(w, h.getAccount(id))
		default:
			httpapi.Write(w, methodNotAllowed("GET, PUT"))
		}
	default:
		httpapi.Write(w, engine.CauseNotFound.Problem("the lab endpoint has GET /, PUT/GET /accounts/{id} and POST /transfers").Response())
	}
}

func methodNotAllowed(allow string) engine.Response {
	r := engine.CauseMethodNotAllowed.Problemf("allowed: %s", allow).Response()
	r.Header = append(r.Header, engine.Header{Name: "Allow", Value: allow})
	return r
}

func jsonResponse(status int, v any) engine.Response {
	body, _ := json.Marshal(v) // plain maps and structs of strings and numbers
	return engine.Response{Status: status, Header: []engine.Header{{Name: "Content-Type", Value: "application/json"}}, Body: body}
}

// internalError answers 500 for a failure of the lab's own (not the
// student's code), logged with its text.
func (h *Handler) internalError(op string, err error) engine.Response {
	h.log.Printf("lab: %s: %v", op, err)
	return engine.AsProblem(err).Response()
}

func (h *Handler) putAccount(id, contentType string, body []byte) engine.Response {
	if !engine.ValidAccountID(id) {
		return engine.CauseAccountInvalid.Problemf("an account id is 1 to %d letters, digits, '-', '_' or '.'", engine.MaxAccountLen).Response()
	}
	if p := engine.CheckContentType(contentType); p != nil {
		return p.Response()
	}
	balance, p := engine.ParseBalance(body)
	if p != nil {
		return p.Response()
	}
	c, err := h.conn()
	if err != nil {
		return h.internalError("put account", err)
	}
	defer h.release(c)
	if _, err := execute(c, `INSERT INTO accounts (id, balance) VALUES (?, ?)
		ON CONFLICT (id) DO UPDATE SET balance = excluded.balance`, []any{id, balance}, modeRun); err != nil {
		return h.internalError("put account", err)
	}
	return jsonResponse(200, engine.Account{ID: id, Balance: balance})
}

func (h *Handler) getAccount(id string) engine.Response {
	if !engine.ValidAccountID(id) {
		return engine.CauseAccountNotFound.Problem("no account has that id").Response()
	}
	c, err := h.conn()
	if err != nil {
		return h.internalError("get account", err)
	}
	defer h.release(c)
	res, err := execute(c, `SELECT balance FROM accounts WHERE id = ?`, []any{id}, modeGet)
	if err != nil {
		return h.internalError("get account", err)
	}
	if len(res.rows) == 0 {
		return engine.CauseAccountNotFound.Problemf("account %q does not exist", id).Response()
	}
	balance, _ := res.rows[0][0].value.(int64)
	return jsonResponse(200, engine.Account{ID: id, Balance: balance})
}
