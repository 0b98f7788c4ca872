package server

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"idemlab/classroom"
	"idemlab/engine"
	"idemlab/engine/httpapi"
	"idemlab/internal/peer"
	"idemlab/lessons"
)

// Server is idemlab's HTTP handler: the classroom, the playground and the
// bank API, mounted in that order by New. It is safe for concurrent use.
type Server struct {
	mux       *http.ServeMux
	hosts     hostAllowList
	classroom *classroom.Classroom
	closeOnce sync.Once
	log       *slog.Logger
	proxies   peer.Trusted
	// warnedProxy is set once the log has said that a proxy on this
	// machine forwards requests without --trusted-proxy.
	warnedProxy atomic.Bool
}

// Options configure the parts of the server beyond the bank API.
type Options struct {
	Logger *slog.Logger
	// InstructorToken is the classroom's secret; empty means the one kept
	// beside DB, else a new one. RotateToken makes a new one regardless.
	InstructorToken string
	RotateToken     bool
	// ListenAddr is the address the server listens on: the classroom's
	// join link is built from it, or from PublicURL when set.
	ListenAddr string
	// WebDir, when set, serves the playground's files from disk instead of
	// the embedded copy (for developing the page without rebuilding).
	WebDir string
	// DB is the bank API's database path ("" in memory); other parts may
	// keep their own files beside it.
	DB string
	// BankLimits hold the bank API up under abuse (limit.go); zero fields
	// take the published defaults.
	BankLimits BankLimits
	// AllowedHosts are the Host names the server answers to besides
	// loopback ones (AllowedHosts builds them for a listener); anything
	// else gets a 421 problem, which is what stops DNS rebinding.
	AllowedHosts []string
	// PublicURL is the address phones and other machines reach the server
	// at, when it is not the listening address (a reverse proxy, a DNS
	// name): the classroom's join link names it, and its host is allowed.
	PublicURL string
	// LessonsDir, when set, takes the lessons from this folder (laid out as
	// lessons/: en/01-naive.md) instead of the embedded copy, for a lesson
	// author: they are read again on every request, so an edit shows on
	// reload. Either way every lesson is rendered and checked in New, which
	// fails on the first that does not parse.
	LessonsDir string
	// TrustedProxies are the reverse proxies whose X-Forwarded-For,
	// X-Forwarded-Proto, X-Forwarded-Host and Forwarded headers are
	// believed (package peer); from anyone else they are ignored.
	TrustedProxies peer.Trusted
	// Classroom is the classroom's configuration beyond the fields above
	// (queues, deadlines, rates, its clock); zero fields take its defaults.
	// The fields above and Logger replace its own.
	Classroom classroom.Config
}

// causes are the problem causes the server answers with, the engine's and
// its parts', each described at /problems/{slug}.
func causes() []engine.Cause {
	return slices.Concat(engine.Causes, classroom.Causes,
		[]engine.Cause{causeHostRefused, causeBankRateLimited, causeBudgetSpent, causeNotReady})
}

// New returns a server over already opened banks.
func New(banks []*Bank, opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.BankLimits.defaults()
	hosts := opts.AllowedHosts
	if u, err := url.Parse(opts.PublicURL); err == nil && u.Hostname() != "" {
		hosts = append(hosts[:len(hosts):len(hosts)], u.Hostname())
	}
	lessonsAPI, err := loadLessons(opts.LessonsDir)
	if err != nil {
		return nil, err
	}
	s := &Server{mux: http.NewServeMux(), hosts: newHostAllowList(hosts), log: opts.Logger, proxies: opts.TrustedProxies}
	cl, err := classroom.New(classroomConfig(opts))
	if err != nil {
		return nil, err
	}
	s.classroom = cl
	cl.Register(s.mux)
	mountWeb(s.mux, opts.WebDir, lessonsAPI)
	var guards []*bankGuard
	for _, b := range banks {
		prefix := "/bank/" + b.Level
		g := newBankGuard(b, opts.BankLimits, httpapi.Handler{Engine: b.Engine})
		guards = append(guards, g)
		h := http.StripPrefix(prefix, g)
		s.mux.Handle(prefix+"/", h)
		s.mux.Handle(prefix, h) // GET on the base URL publishes the level's policy and limits
	}
	// /healthz is liveness, the process serves HTTP, and touches no
	// database: a restart cannot bring a database back. /readyz is
	// readiness, each level's database answers (ready.go).
	s.mux.Handle(readyPattern, &readiness{banks: banks, log: opts.Logger})
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok\n"))
	})
	s.mux.HandleFunc("GET /bank", func(w http.ResponseWriter, r *http.Request) {
		var out []bankPublication
		for _, g := range guards {
			out = append(out, g.publication(r.Context()))
		}
		httpapi.WriteJSON(w, r, 200, out)
	})
	s.mux.HandleFunc("GET /problems/{slug}", func(w http.ResponseWriter, r *http.Request) {
		for _, c := range causes() {
			if c.Slug == r.PathValue("slug") {
				httpapi.WriteJSON(w, r, 200, map[string]any{"type": c.Type(), "title": c.Title, "status": c.Status})
				return
			}
		}
		httpapi.Write(w, engine.CauseNotFound.Problem("no such problem type").Response())
	})
	return s, nil
}

// loadLessons renders and checks every lesson, the embedded ones or those
// in dir, and returns their JSON handler: bad content stops the start.
// Lessons from dir are loaded again on every request; an edit that breaks
// one answers 500 and the server's log says why.
func loadLessons(dir string) (http.Handler, error) {
	if dir == "" {
		set, err := lessons.Embedded()
		if err != nil {
			return nil, err
		}
		return set.Handler()
	}
	load := func() (http.Handler, error) {
		set, err := lessons.LoadDir(dir)
		if err != nil {
			return nil, err
		}
		return set.Handler()
	}
	if _, err := load(); err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, err := load()
		if err != nil {
			httpapi.WriteError(w, r, err)
			return
		}
		h.ServeHTTP(w, r)
	}), nil
}

// Close stops what the classroom started (rooms, storms, hubs). The banks
// stay open: their owner closes them.
// A second call does nothing.
func (s *Server) Close() { s.closeOnce.Do(s.classroom.Close) }

// ServeHTTP routes a request; anything outside the known routes is a 404
// problem.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// No response is ever to be sniffed as another type than it says: not
	// the lessons' JSON, the health check, a QR image or the raw module.
	w.Header().Set("X-Content-Type-Options", "nosniff")
	p, forwarded := s.proxies.Resolve(r)
	if forwarded && s.proxies.Empty() && s.warnedProxy.CompareAndSwap(false, true) {
		s.log.Warn("requests from 127.0.0.1 carry X-Forwarded-For or Forwarded: a proxy on this machine that idemlab was not told to trust; " +
			"they are all counted as one client, none exempt. Start idemlab with --trusted-proxy 127.0.0.1/32 to count each client as itself")
	}
	r = peer.With(r, p)
	if p.Secure {
		// Browsers that once reached idemlab over HTTPS come back over it
		// for a day, even when someone types http://. A day, not a year:
		// a classroom server moves between machines and names.
		w.Header().Set("Strict-Transport-Security", "max-age=86400")
	}
	if !s.hosts.allows(r.Host) {
		refuseHost(w)
		return
	}
	_, pattern := s.mux.Handler(r)
	if pattern == "" {
		httpapi.Write(w, engine.CauseNotFound.Problem("see /bank for the bank API's levels").Response())
		return
	}
	ctx, failure := httpapi.TrackFailure(r.Context())
	rec := &statusRecorder{ResponseWriter: w}
	s.mux.ServeHTTP(rec, r.WithContext(ctx)) // the mux itself fills in r.PathValue
	switch err := failure(); {
	case r.Context().Err() != nil && (err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		// The client went away and its request's context ended with it:
		// whatever the handler answered goes nowhere, and nothing failed
		// on this side. What the store had committed stays; the client's
		// retry with its key finds it.
		if err != nil || rec.status >= 500 {
			s.log.LogAttrs(r.Context(), slog.LevelInfo, "client closed the request", s.requestAttrs(r, pattern)...)
		}
	case rec.status >= 500 && pattern != readyPattern:
		// (A 503 from /readyz is a verdict, logged by readiness when it
		// changes; a load balancer asks every few seconds.)
		s.logFailure(r, pattern, rec.status, err)
	}
}

// requestAttrs are what finds a request again in the log: its method,
// route, path and idempotency key. Never the body, the cookies or any
// other header: they may carry a secret.
func (s *Server) requestAttrs(r *http.Request, pattern string) []slog.Attr {
	key := r.Header.Get("Idempotency-Key")
	if len(key) > engine.MaxKeyLen+2 {
		key = key[:engine.MaxKeyLen+2]
	}
	return []slog.Attr{slog.String("method", r.Method), slog.String("route", pattern), slog.String("path", r.URL.Path),
		slog.String("key", key)}
}

// logFailure is the one place a server error is logged: one record per
// answer of 500 or more, with what finds the request again (requestAttrs)
// and the error behind it.
func (s *Server) logFailure(r *http.Request, pattern string, status int, err error) {
	level := slog.LevelError
	if status != http.StatusInternalServerError {
		level = slog.LevelWarn // a busy or unreachable database, a spent budget: the server works as published
	}
	msg := "server error"
	switch {
	case errors.Is(err, engine.ErrUnavailable):
		msg = "database unavailable" // refused, unreachable or lost: answered 503, Retry-After
	case errors.Is(err, engine.ErrBusy):
		msg = "database busy"
	}
	attrs := append(s.requestAttrs(r, pattern), slog.Int("status", status), slog.Any("err", err))
	s.log.LogAttrs(r.Context(), level, msg, attrs...)
}

// statusRecorder remembers the status a handler answered with. It passes
// Hijack on, for the classroom's websockets.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(r.ResponseWriter).Hijack()
}

// Unwrap gives http.ResponseController the writer underneath.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// HTTPServer wraps handler with the timeouts that keep slow or half-sent
// requests from holding connections.
func HTTPServer(addr string, handler http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
}
