package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"mime"
	"strings"
	"sync/atomic"
	"time"

	"idemlab/internal/clip"
)

// Options configure an Engine beyond its Policy. Every field may be zero.
type Options struct {
	// Clock tells the time; SystemClock when nil.
	Clock Clock
	// Hook runs before every phase of every transfer; none when nil.
	Hook Hook
	// Trace receives one event after every phase; none when nil.
	Trace Tracer
	// PaymentLatency is how long the simulated payment-network call inside
	// execution takes. Zero on the bank API, so benchmarks measure the
	// engine; lessons and storms set it to make races visible.
	PaymentLatency time.Duration
	// Server names the app server this engine plays when several share one
	// database ("1", "2"); trace events and notes carry it. An Engine's
	// memory (LockMemory's mutexes, ClaimServerCache's keys) is its own, as
	// a server process's is.
	Server string
}

// Engine runs the bank API under one Policy against one Store. It is safe
// for concurrent use: every request runs in its caller's goroutine.
type Engine struct {
	policy  Policy
	store   Store // base, or the server's own key cache under ClaimServerCache
	base    Store
	server  string
	locks   keyLocks
	clock   Clock
	hook    Hook
	trace   Tracer
	latency time.Duration
	start   time.Time
	seq     atomic.Int64
	owners  atomic.Int64
	ownerID string
}

// New returns an engine for policy p on store s.
func New(s Store, p Policy, o Options) *Engine {
	if o.Clock == nil {
		o.Clock = SystemClock{}
	}
	var id [6]byte
	_, _ = rand.Read(id[:]) // never fails (crypto/rand documents this)
	e := &Engine{policy: p, store: s, base: s, server: o.Server, clock: o.Clock, hook: o.Hook, trace: o.Trace,
		latency: o.PaymentLatency, start: o.Clock.Now(), ownerID: hex.EncodeToString(id[:])}
	if p.Claim == ClaimServerCache {
		e.store = newServerCache(s)
	}
	return e
}

// Policy returns the engine's policy.
func (e *Engine) Policy() Policy { return e.policy }

// Store returns the engine's store (the database, not the in-memory key
// cache of ClaimServerCache).
func (e *Engine) Store() Store { return e.base }

// Clock returns the engine's clock.
func (e *Engine) Clock() Clock { return e.clock }

// Result is what came of one attempt.
type Result struct {
	Response Response `json:"response"`
	// Delivered is false when the client never saw Response: the request
	// crashed, the response was lost or the client timed out.
	Delivered bool `json:"delivered"`
	// Fault is the fault that struck this attempt, and Phase where.
	Fault Fault `json:"fault"`
	Phase Phase `json:"fault_phase,omitempty"`
	// Replayed is true when the response came from the key table.
	Replayed bool `json:"replayed"`
	// Err is the error behind a problem the engine answered with because
	// something below it failed (the store's I/O, a locked database), for
	// the server's log. The client sees only the generic problem.
	Err error `json:"-"`
}

// TransfersRoute is the route the engine fingerprints and scopes transfers by.
const TransfersRoute = "/transfers"

// Handle answers one request of the bank API: PUT and GET /accounts/{id},
// POST /transfers.
func (e *Engine) Handle(ctx context.Context, req Request) Result {
	path := req.Path
	switch {
	case path == "" || path == "/":
		if req.Method != "GET" {
			return delivered(methodNotAllowed("GET"))
		}
		return delivered(jsonResponse(200, e.Published()))
	case path == TransfersRoute:
		if req.Method != "POST" {
			return delivered(methodNotAllowed("POST"))
		}
		return e.transfer(ctx, req)
	case strings.HasPrefix(path, "/accounts/"):
		id := strings.TrimPrefix(path, "/accounts/")
		switch req.Method {
		case "PUT":
			return e.putAccount(ctx, req, id)
		case "GET":
			return e.getAccount(ctx, id)
		default:
			return delivered(methodNotAllowed("GET, PUT"))
		}
	default:
		return delivered(CauseNotFound.Problem("the bank API has PUT/GET /accounts/{id} and POST /transfers").Response())
	}
}

// Publication is what a level publishes about itself: the policy, and the
// retention and lease in seconds, as the lab contract asks (GET on the base
// URL).
type Publication struct {
	Level            string `json:"level,omitempty"`
	Scope            string `json:"scope"`
	RetentionSeconds int64  `json:"retention_seconds"`
	LeaseSeconds     int64  `json:"lease_seconds"`
	Policy           Policy `json:"policy"`
}

// Published returns the engine's publication.
func (e *Engine) Published() Publication {
	p := e.policy
	scope := "global: one namespace for every customer's keys"
	if p.Scope == ScopeCustomerEndpoint {
		scope = "(customer, endpoint, key)"
	}
	if !p.Keyed() {
		scope = "none: no keys are kept"
	}
	return Publication{Level: p.Level, Scope: scope, RetentionSeconds: int64(p.Retention.D() / time.Second),
		LeaseSeconds: int64(p.Lease.D() / time.Second), Policy: p}
}

func delivered(r Response) Result { return Result{Response: r, Delivered: true} }

// failed answers with err as a problem, keeping err in the result.
func failed(err error) Result {
	return Result{Response: AsProblem(err).Response(), Delivered: true, Err: err}
}

func methodNotAllowed(allow string) Response {
	r := CauseMethodNotAllowed.Problemf("allowed: %s", allow).Response()
	r.Header = append(r.Header, Header{"Allow", allow})
	return r
}

func (e *Engine) putAccount(ctx context.Context, req Request, id string) Result {
	if !ValidAccountID(id) {
		return delivered(CauseAccountInvalid.Problemf("an account id is 1 to %d letters, digits, '-', '_' or '.'", MaxAccountLen).Response())
	}
	if p := CheckContentType(req.ContentType); p != nil {
		return delivered(p.Response())
	}
	balance, p := ParseBalance(req.Body)
	if p != nil {
		return delivered(p.Response())
	}
	a, err := e.store.PutAccount(ctx, id, balance)
	if err != nil {
		return failed(err)
	}
	return delivered(jsonResponse(200, a))
}

func (e *Engine) getAccount(ctx context.Context, id string) Result {
	if !ValidAccountID(id) {
		return delivered(CauseAccountNotFound.Problem("no account has that id").Response())
	}
	a, err := e.store.GetAccount(ctx, id)
	if err == ErrNotFound {
		return delivered(CauseAccountNotFound.Problemf("account %q does not exist", id).Response())
	}
	if err != nil {
		return failed(err)
	}
	return delivered(jsonResponse(200, a))
}

func jsonResponse(status int, v any) Response {
	body, _ := json.Marshal(v) // only plain structs and maps of them are passed
	return Response{Status: status, Header: []Header{{"Content-Type", "application/json"}}, Body: body}
}

// CheckContentType refuses (415) a Content-Type that is not JSON; none at
// all is accepted, as the lab contract says.
func CheckContentType(ct string) *Problem {
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return CauseMediaType.Problemf("got %q; send Content-Type: application/json", clip.String(ct, 60))
	}
	return nil
}
