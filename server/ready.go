package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"idemlab/engine"
	"idemlab/engine/httpapi"
)

// readyPattern is the route of the readiness check.
const readyPattern = "GET /readyz"

// readyTimeout is how long /readyz waits for each level's database: a
// load balancer's check must answer well within its own timeout, and a
// database slower than this is not one to send requests to.
const readyTimeout = time.Second

// readyRetryAfter is what a 503 from /readyz tells its reader.
const readyRetryAfter = 5

var causeNotReady = engine.Cause{Slug: "not-ready", Title: "A level's database does not answer", Status: http.StatusServiceUnavailable}

// readiness answers /readyz: every level's database pinged at once, each
// within readyTimeout. /healthz says only that the process serves HTTP; a
// load balancer that checks /readyz takes a server out while its database
// does not answer it, and back in when it does. It logs a change of
// verdict once, not every check. It is safe for concurrent use.
type readiness struct {
	banks []*Bank
	log   *slog.Logger

	mu     sync.Mutex
	failed string // the levels that failed the last check, "" when all answered
}

func (rd *readiness) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	errs := make([]error, len(rd.banks))
	var wg sync.WaitGroup
	for i, b := range rd.banks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
			defer cancel()
			errs[i] = b.DB.Ping(ctx)
		}()
	}
	wg.Wait()
	var failed []string
	var attrs []slog.Attr
	for i, err := range errs {
		if err != nil {
			failed = append(failed, rd.banks[i].Level)
			attrs = append(attrs, slog.Any(rd.banks[i].Level, err))
		}
	}
	rd.note(r.Context(), strings.Join(failed, ","), attrs)
	if len(failed) > 0 {
		p := causeNotReady.Problem(fmt.Sprintf("the database of level %s did not answer within %s", strings.Join(failed, ", "), readyTimeout))
		p.RetryAfter = readyRetryAfter
		httpapi.Write(w, p.Response())
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte("ready\n"))
}

// note logs the verdict when it differs from the last one: which levels
// stopped answering and why, or that they all answer again.
func (rd *readiness) note(ctx context.Context, failed string, attrs []slog.Attr) {
	rd.mu.Lock()
	changed := failed != rd.failed
	rd.failed = failed
	rd.mu.Unlock()
	switch {
	case !changed:
	case failed != "":
		rd.log.LogAttrs(ctx, slog.LevelWarn, "not ready: a level's database does not answer",
			append([]slog.Attr{slog.String("levels", failed)}, attrs...)...)
	default:
		rd.log.LogAttrs(ctx, slog.LevelInfo, "ready: every level's database answers")
	}
}
