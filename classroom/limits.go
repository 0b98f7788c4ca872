package classroom

import (
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"idemlab/engine/httpapi"
	"idemlab/internal/limit"
	"idemlab/internal/peer"
)

// Limits are what the classroom admits. A class often reaches the server
// from one address (a school's NAT, a reverse proxy), and an attacker's
// sockets come from one address too; so what a real student has and a
// flood does not decides most of it: a room code given out by the
// instructor, and the student's own secret. A room admits new students up
// to its class size; each student holds a few sockets; per-address
// figures are kept for what has no room behind it (codes that open
// nothing, wrong instructor secrets) and, as a backstop, for sockets and
// new students, at figures a NAT of 200 phones does not reach in honest
// use. The instructor's signed-in browser and the one-time sign-in link
// are never refused for anyone else's mistakes; 127.0.0.1, the server's
// own machine reached directly, is exempt from the per-address figures.
// Zero fields take the defaults below, which docs/SECURITY.md publishes.
type Limits struct {
	// ClassSize is how many students a room admits; the presenter changes
	// it for its room. Students already in come back whatever it is.
	ClassSize int
	// SocketsPerStudent is how many sockets one student (one secret) holds
	// in a room: joining on one more closes its oldest.
	SocketsPerStudent int
	// JoinWait is how long a phone's socket may stay open without naming
	// a student; then it is closed.
	JoinWait time.Duration
	// ConnsPerClient is how many websockets one address may hold open.
	ConnsPerClient int
	// ConnectsPerSecond and ConnectBurst bound how fast one address opens
	// websockets.
	ConnectsPerSecond, ConnectBurst float64
	// NewStudentsPerMinute and NewStudentBurst bound how many new students
	// one address may add to the rooms (a phone that reloads, or comes back
	// with its secret, is the same student and does not count).
	NewStudentsPerMinute, NewStudentBurst float64
	// FailedSignInsPerMinute and FailedSignInBurst bound wrong instructor
	// secrets per address. A signed-in instructor needs no sign-in, and
	// the one-time link is never refused.
	FailedSignInsPerMinute, FailedSignInBurst float64
	// UnknownCodesPerMinute and UnknownCodeBurst bound how many room codes
	// that open no room one address may try (guessing codes). A room the
	// address reached before stays open to it.
	UnknownCodesPerMinute, UnknownCodeBurst float64
	// StatesPerSecond bounds the room's state messages: changes that come
	// faster are sent together.
	StatesPerSecond float64
	// RefusedRetry is how long a phone refused for a full or locked room
	// waits before it asks again: the instructor may make room meanwhile.
	RefusedRetry time.Duration
}

// The defaults of Limits. The per-address figures let a class of 200
// phones behind one address in: each phone holds one socket (two while it
// reloads) and joins once; 200 phones that all reconnect after a restart,
// or press Join three times, open 400 to 600 sockets within half a minute.
const (
	DefaultClassSize              = 60
	DefaultSocketsPerStudent      = 2
	DefaultJoinWait               = 15 * time.Second
	DefaultConnsPerClient         = 600
	DefaultConnectsPerSecond      = 20
	DefaultConnectBurst           = 400
	DefaultNewStudentsPerMinute   = 60
	DefaultNewStudentBurst        = 250
	DefaultFailedSignInsPerMinute = 6
	DefaultFailedSignInBurst      = 5
	DefaultUnknownCodesPerMinute  = 10
	DefaultUnknownCodeBurst       = 30
	DefaultStatesPerSecond        = 4
	DefaultRefusedRetry           = 10 * time.Second
)

func (l *Limits) defaults() {
	limit.Default(&l.ClassSize, DefaultClassSize)
	limit.Default(&l.SocketsPerStudent, DefaultSocketsPerStudent)
	limit.Default(&l.JoinWait, DefaultJoinWait)
	limit.Default(&l.ConnsPerClient, DefaultConnsPerClient)
	limit.Default(&l.ConnectsPerSecond, DefaultConnectsPerSecond)
	limit.Default(&l.ConnectBurst, DefaultConnectBurst)
	limit.Default(&l.NewStudentsPerMinute, DefaultNewStudentsPerMinute)
	limit.Default(&l.NewStudentBurst, DefaultNewStudentBurst)
	limit.Default(&l.FailedSignInsPerMinute, DefaultFailedSignInsPerMinute)
	limit.Default(&l.FailedSignInBurst, DefaultFailedSignInBurst)
	limit.Default(&l.UnknownCodesPerMinute, DefaultUnknownCodesPerMinute)
	limit.Default(&l.UnknownCodeBurst, DefaultUnknownCodeBurst)
	limit.Default(&l.StatesPerSecond, DefaultStatesPerSecond)
	limit.Default(&l.RefusedRetry, DefaultRefusedRetry)
}

// clientLimits holds the classroom's per-address limiters.
type clientLimits struct {
	conns       *limit.Count
	connects    *limit.Rate
	newStudents *limit.Rate
	failedSign  *limit.Rate
	unknownCode *limit.Rate
}

func newClientLimits(l Limits, now func() time.Time) *clientLimits {
	return &clientLimits{
		conns:       limit.NewCount(l.ConnsPerClient),
		connects:    limit.NewRate(l.ConnectsPerSecond, l.ConnectBurst, now),
		newStudents: limit.NewRate(l.NewStudentsPerMinute/60, l.NewStudentBurst, now),
		failedSign:  limit.NewRate(l.FailedSignInsPerMinute/60, l.FailedSignInBurst, now),
		unknownCode: limit.NewRate(l.UnknownCodesPerMinute/60, l.UnknownCodeBurst, now),
	}
}

// Reasons a phone is refused, as the room counts them for the presenter
// and the phone's error message names them.
const (
	refusedFull    = "full"    // the room has its class size of students
	refusedLocked  = "locked"  // the instructor locked the room
	refusedPaced   = "paced"   // the address added too many new students lately
	refusedNetwork = "network" // the address holds or opened too many sockets
	refusedKicked  = "kicked"  // the instructor removed this student
	refusedCodes   = "codes"   // the address tried too many codes that open nothing
)

// refusal is why a client was turned away, in words for the person
// refused, and when to try again (0: not on its own).
type refusal struct {
	reason string
	detail string
	wait   time.Duration
}

// write answers the refusal over HTTP: 429 with Retry-After, its type
// saying which limit (the phone's page words it from that).
func (f refusal) write(w http.ResponseWriter) {
	cause := causeTooMany
	if f.reason == refusedCodes {
		cause = causeCodesTried
	}
	p := cause.Problem(f.detail)
	p.RetryAfter = limit.RetryAfter(f.wait)
	httpapi.Write(w, p.Response())
}

// message is the refusal as the phone's error message.
func (f refusal) message() errMsg {
	m := errorMsg(f.reason, f.detail)
	if f.wait > 0 {
		m.RetryAfter = limit.RetryAfter(f.wait)
	}
	return m
}

func seconds(d time.Duration) string { return strconv.Itoa(limit.RetryAfter(d)) + " s" }

// codeRefusal is asked before a room code is looked up for a client: why
// it may not try the code (it tried too many that opened nothing), or nil.
// The instructor and a room the address reached before are never refused,
// so that a few mistyped codes behind a school's one address do not shut
// the class out of its real room; any other room, once held off, is
// refused like a wrong code, so that a guessing machine learns nothing.
func (c *Classroom) codeRefusal(r *http.Request, room *Room) *refusal {
	p := peer.Of(r)
	if p.Exempt() || c.isInstructor(r) || (room != nil && room.knows(p.Addr)) {
		return nil
	}
	if ok, wait := c.limits.unknownCode.Ready(p.Addr); !ok {
		return &refusal{reason: refusedCodes, wait: wait,
			detail: "too many room codes that open no room were tried from this network; check the code on the projector and try again in " + seconds(wait)}
	}
	return nil
}

// codeMissed counts a room code that opened nothing.
func (c *Classroom) codeMissed(r *http.Request) {
	if p := peer.Of(r); !p.Exempt() && !c.isInstructor(r) {
		c.limits.unknownCode.Spend(p.Addr)
	}
}

// socketRefusal says whether the address may open one more websocket,
// without taking it: the phone's page asks it after a socket failed to
// open, to say why.
func (c *Classroom) socketRefusal(p peer.Peer) *refusal {
	if p.Exempt() {
		return nil
	}
	if ok, wait := c.limits.connects.Ready(p.Addr); !ok {
		return tooManyConnects(wait)
	}
	if c.limits.conns.Held(p.Addr) >= c.limits.conns.Max() {
		return c.tooManySockets()
	}
	return nil
}

// tooManyConnects is the refusal of an address that opened its allowance
// of sockets lately; tooManySockets, of one that holds its allowance.
func tooManyConnects(wait time.Duration) *refusal {
	return &refusal{reason: refusedNetwork, wait: wait,
		detail: "too many connections opened from this network at once; trying again in " + seconds(wait)}
}

func (c *Classroom) tooManySockets() *refusal {
	return &refusal{reason: refusedNetwork, wait: 5 * time.Second,
		detail: fmt.Sprintf("this network holds %d connections to the classroom already; trying again in 5 s", c.limits.conns.Max())}
}

// admitSocket takes one of the address's websockets and one of its
// connects; it returns the refusal when either has run out. The returned
// function gives the socket back.
func (c *Classroom) admitSocket(p peer.Peer) (release func(), refused *refusal) {
	if p.Exempt() {
		return func() {}, nil
	}
	if ok, wait := c.limits.connects.Allow(p.Addr); !ok {
		return nil, tooManyConnects(wait)
	}
	if !c.limits.conns.Acquire(p.Addr) {
		return nil, c.tooManySockets()
	}
	var once sync.Once
	return func() { once.Do(func() { c.limits.conns.Release(p.Addr) }) }, nil
}

// newStudentRefusal says why c may not add a new student to the room, or
// nil: the room is locked, it has its class size, or c's address has added
// many students lately. It runs on the room's goroutine.
func (r *Room) newStudentRefusal(c *conn) *refusal {
	switch {
	case r.locked:
		return &refusal{reason: refusedLocked, wait: r.cl.cfg.Limits.RefusedRetry,
			detail: "the instructor has locked this room; this phone asks again every " + seconds(r.cl.cfg.Limits.RefusedRetry) + " until it is opened"}
	case r.seated() >= r.classSize:
		return &refusal{reason: refusedFull, wait: r.cl.cfg.Limits.RefusedRetry,
			detail: fmt.Sprintf("the room is full (%d of %d students); this phone asks again every %s, and gets in as soon as the instructor makes room", r.seated(), r.classSize, seconds(r.cl.cfg.Limits.RefusedRetry))}
	}
	if c.peer.Exempt() {
		return nil
	}
	if ok, wait := r.cl.limits.newStudents.Allow(c.peer.Addr); !ok {
		return &refusal{reason: refusedPaced, wait: wait,
			detail: "too many new students joined from this network lately; trying again in " + seconds(wait)}
	}
	return nil
}

// seated is how many students the room holds, the kicked not counted.
// It runs on the room's goroutine.
func (r *Room) seated() int { return len(r.byID) - r.kicked }

// knownAddrs bounds how many addresses a room remembers as having reached
// it: past it, the room stops adding (those already known stay known).
const knownAddrs = 4096

// knows reports whether a reached the room before. It is safe for
// concurrent use.
func (r *Room) knows(a netip.Addr) bool {
	r.kmu.Lock()
	defer r.kmu.Unlock()
	_, ok := r.known[a]
	return ok
}

// remember records that a reached the room with its right code.
func (r *Room) remember(a netip.Addr) {
	r.kmu.Lock()
	defer r.kmu.Unlock()
	if len(r.known) < knownAddrs {
		r.known[a] = struct{}{}
	}
}

// refuse turns a phone away: it is told why (and when it will ask again),
// the room counts it for the presenter, the log says it once per client
// and minute, and its socket closes once the writer has sent the message.
// It runs on the room's goroutine.
func (r *Room) refuse(c *conn, who string, f refusal) {
	r.noteRefused(who, f.reason, c.peer)
	r.tell(c, f.message())
	c.closeAfterQueued()
}

// refusedKept bounds the refused clients a room counts; refusedFor is how
// long one counts after its last refusal (a phone that is refused asks
// again every few seconds; one that gave up drops out).
const (
	refusedKept = 4096
	refusedFor  = time.Minute
)

// refusedClient is one client turned away lately.
type refusedClient struct {
	reason string
	at     time.Time
}

// noteRefused counts a refused client (who: its secret's hash, or its
// address for a socket refused before it could say who it is) and logs
// the refusal once per client and minute. It runs on the room's goroutine.
func (r *Room) noteRefused(who, reason string, p peer.Peer) {
	now := r.cl.cfg.Now()
	if prev, ok := r.refused[who]; !ok || prev.reason != reason || now.Sub(prev.at) >= refusedFor {
		r.cl.cfg.Logger.Warn("classroom: refused", "room", r.code, "reason", reason, "client", p.Addr.String(), "proxied", p.Proxied)
	}
	if _, ok := r.refused[who]; ok || len(r.refused) < refusedKept {
		r.refused[who] = refusedClient{reason: reason, at: now}
		r.dirtyView = true
	}
}

// refusedCounts are the clients refused within refusedFor, by reason. It
// runs on the room's goroutine.
func (r *Room) refusedCounts() map[string]int {
	now := r.cl.cfg.Now()
	var out map[string]int
	for _, f := range r.refused {
		if now.Sub(f.at) >= refusedFor {
			continue
		}
		if out == nil {
			out = map[string]int{}
		}
		out[f.reason]++
	}
	return out
}

// forgetRefused forgets the clients refused longer than refusedFor ago,
// and reports whether it forgot any. It runs on the room's goroutine.
func (r *Room) forgetRefused() bool {
	now := r.cl.cfg.Now()
	n := len(r.refused)
	maps.DeleteFunc(r.refused, func(_ string, f refusedClient) bool { return now.Sub(f.at) >= refusedFor })
	return len(r.refused) != n
}

// noteRefusedSocket counts a socket refused for its address's limits on a
// room that exists, for the presenter. Unlike the room's own commands it
// may be called from any goroutine; it does not wait for the room: the
// address is put aside (once, and at most refusedKept of them) and the
// room's next tick counts it (countRefusedSockets). Handed to the room's
// goroutine, it was dropped whenever that goroutine was busy, and the
// presenter missed a flood of refused sockets under load.
func (r *Room) noteRefusedSocket(p peer.Peer) {
	r.socketsMu.Lock()
	defer r.socketsMu.Unlock()
	if r.sockets == nil {
		r.sockets = map[netip.Addr]peer.Peer{}
	}
	if _, ok := r.sockets[p.Addr]; ok || len(r.sockets) < refusedKept {
		r.sockets[p.Addr] = p
	}
}

// countRefusedSockets counts the sockets put aside since the last tick
// (noteRefusedSocket). It runs on the room's goroutine.
func (r *Room) countRefusedSockets() {
	r.socketsMu.Lock()
	pending := r.sockets
	r.sockets = nil
	r.socketsMu.Unlock()
	for _, p := range pending {
		r.noteRefused("addr:"+p.Addr.String(), refusedNetwork, p)
	}
}

// kick removes a student: its connections are closed and its secret joins
// no more. Its address is not barred: behind a school's NAT that would bar
// the whole class. The roster no longer lists it. It runs on the room's
// goroutine.
func (r *Room) kick(by *conn, id string) {
	st := r.byID[id]
	if st == nil || st.kicked {
		r.tell(by, errorMsg("bad-message", "no such student in this room"))
		return
	}
	st.kicked = true
	r.kicked++
	r.dirtyView = true
	for c := range r.conns {
		if c.student != st {
			continue
		}
		r.tell(c, errorMsg(refusedKicked, "the instructor removed you from this room"))
		c.closeAfterQueued()
	}
}

// sweepUnjoined closes phones' sockets that named no student within
// JoinWait. It runs on the room's goroutine, once a second.
func (r *Room) sweepUnjoined(now time.Time) {
	wait := r.cl.cfg.Limits.JoinWait
	for c := range r.conns {
		if c.role == RoleStudent && c.student == nil && !c.refused && now.Sub(c.opened) >= wait {
			c.refused = true
			r.tell(c, errorMsg("join-timeout", "this connection named no student in time; the page joins again when it reconnects"))
			c.closeAfterQueued()
		}
	}
}
