package httpapi

import (
	"context"
	"net/http"

	"idemlab/engine"
)

// failureKey is the context key of a request's failure slot.
type failureKey struct{}

// failure holds the internal error behind a request's 5xx answer until the
// one place that logs answers (the server's ServeHTTP) reads it.
type failure struct{ err error }

// TrackFailure returns ctx with an empty failure slot, and a function that
// returns what a handler noted in it (nil when nothing was).
func TrackFailure(ctx context.Context) (context.Context, func() error) {
	f := &failure{}
	return context.WithValue(ctx, failureKey{}, f), func() error { return f.err }
}

// NoteFailure records err as the cause of the answer to the request of ctx,
// for the log: the client never sees its text. Without a slot in ctx (see
// TrackFailure) it does nothing.
func NoteFailure(ctx context.Context, err error) {
	if f, ok := ctx.Value(failureKey{}).(*failure); ok && err != nil {
		f.err = err
	}
}

// WriteError answers r with err as a problem: err itself if it is an
// engine.Problem, else the generic one engine.AsProblem makes, and notes
// err for the log.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	NoteFailure(r.Context(), err)
	Write(w, engine.AsProblem(err).Response())
}
