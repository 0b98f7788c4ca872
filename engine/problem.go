package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Problem is an RFC 9457 problem detail. Type is a stable URI per cause,
// relative to the server that answered, so clients can switch on it.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	// RetryAfter, when set, becomes the Retry-After header (seconds).
	RetryAfter int `json:"-"`
}

// Cause is one reason a request is answered with a problem. Its Slug is the
// last part of the problem's type URI and never changes.
type Cause struct {
	Slug   string
	Title  string
	Status int
}

// The causes, one per distinct thing a client must do differently.
var (
	CauseKeyMissing        = Cause{"idempotency-key-missing", "Idempotency-Key header is required", 400}
	CauseKeyMalformed      = Cause{"idempotency-key-malformed", "Idempotency-Key is not a valid key", 400}
	CauseCustomerMissing   = Cause{"customer-missing", "X-Customer-ID header is required", 401}
	CauseCustomerMalformed = Cause{"customer-malformed", "X-Customer-ID is not a valid customer id", 401}
	CauseBodyInvalid       = Cause{"body-invalid", "Request body is not a valid JSON object", 400}
	CauseFieldInvalid      = Cause{"field-invalid", "A field is missing or has the wrong form", 400}
	CauseAmountInvalid     = Cause{"amount-invalid", "Amount must be a positive whole number of won", 400}
	CauseAccountInvalid    = Cause{"account-id-invalid", "Account id has the wrong form", 400}
	CauseSameAccount       = Cause{"same-account", "A transfer needs two different accounts", 400}
	CauseAccountNotFound   = Cause{"account-not-found", "Account not found", 404}
	CauseInsufficientFunds = Cause{"insufficient-funds", "Insufficient funds", 402}
	CauseKeyInProgress     = Cause{"idempotency-key-in-progress", "A request with this key is still being processed", 409}
	CauseKeyReused         = Cause{"idempotency-key-reused", "This key was used for a different request", 422}
	CauseNotFound          = Cause{"not-found", "No such resource", 404}
	CauseMethodNotAllowed  = Cause{"method-not-allowed", "Method not allowed", 405}
	CauseMediaType         = Cause{"unsupported-media-type", "Content-Type must be application/json", 415}
	CauseBodyTooLarge      = Cause{"body-too-large", "Request body is too large", 413}
	CauseBusy              = Cause{"busy", "The ledger is busy; retry with the same key", 503}
	CauseUnavailable       = Cause{"unavailable", "The ledger's database cannot be reached; retry with the same key", 503}
	CauseInternal          = Cause{"internal", "Internal error; retry with the same key", 500}
)

// UnavailableRetryAfter is the Retry-After, in seconds, of an answer
// that the database could not be reached for.
const UnavailableRetryAfter = 2

// Causes lists every cause, for documentation and tests.
var Causes = []Cause{CauseKeyMissing, CauseKeyMalformed, CauseCustomerMissing, CauseCustomerMalformed,
	CauseBodyInvalid, CauseFieldInvalid, CauseAmountInvalid, CauseAccountInvalid, CauseSameAccount,
	CauseAccountNotFound, CauseInsufficientFunds, CauseKeyInProgress, CauseKeyReused, CauseNotFound,
	CauseMethodNotAllowed, CauseMediaType, CauseBodyTooLarge, CauseBusy, CauseUnavailable, CauseInternal}

// ProblemTypePrefix starts every problem type URI.
const ProblemTypePrefix = "/problems/"

// Type returns the cause's stable type URI.
func (c Cause) Type() string { return ProblemTypePrefix + c.Slug }

// Problem returns a problem of this cause with a detail for this request.
func (c Cause) Problem(detail string) *Problem {
	return &Problem{Type: c.Type(), Title: c.Title, Status: c.Status, Detail: detail}
}

// Problemf is Problem with a formatted detail.
func (c Cause) Problemf(format string, args ...any) *Problem {
	return c.Problem(fmt.Sprintf(format, args...))
}

// Error makes a Problem usable as an error inside the engine.
func (p *Problem) Error() string { return p.Title + ": " + p.Detail }

// Response renders the problem as a response: the one problem+json writer.
func (p *Problem) Response() Response {
	body, _ := json.Marshal(p) // a struct of strings and ints cannot fail
	h := []Header{{"Content-Type", "application/problem+json"}}
	if p.RetryAfter > 0 {
		h = append(h, Header{"Retry-After", strconv.Itoa(p.RetryAfter)})
	}
	return Response{Status: p.Status, Header: h, Body: body}
}

// AsProblem returns err as a Problem: itself if it is one, else the
// internal-error problem, so that no internal text reaches a client.
func AsProblem(err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	if errors.Is(err, ErrBusy) {
		q := CauseBusy.Problem("the database stayed locked; nothing was charged, retry with the same key")
		q.RetryAfter = 1
		return q
	}
	if errors.Is(err, ErrUnavailable) {
		q := CauseUnavailable.Problem("the database cannot be reached now; retry with the same key, which pays at most once")
		q.RetryAfter = UnavailableRetryAfter
		return q
	}
	return CauseInternal.Problem("the server failed; retry with the same key")
}

func errorf(format string, args ...any) error { return fmt.Errorf("engine: "+format, args...) }
