package classroom

import (
	"net/http"
	"net/netip"
	"sync"
	"time"

	"idemlab/engine/httpapi"
	"idemlab/server/limit"
)

// Limits are what one client address may do in the classroom, whoever it
// claims to be. Every limit is per address (one phone, one laptop), never
// one allowance shared by everyone, so that a noisy machine runs out of its
// own and the instructor and the other phones keep theirs; 127.0.0.1, the
// server's own machine, is exempt. Zero fields take the defaults below,
// which docs/SECURITY.md publishes.
type Limits struct {
	// ConnsPerClient is how many websockets one address may hold open.
	ConnsPerClient int
	// ConnectsPerSecond and ConnectBurst bound how fast one address opens
	// websockets (a phone that reconnects needs one at a time).
	ConnectsPerSecond, ConnectBurst float64
	// NewStudentsPerMinute and NewStudentBurst bound how many new students
	// one address may add to the rooms (a phone that reloads, or comes back
	// with its secret, is the same student and does not count).
	NewStudentsPerMinute, NewStudentBurst float64
	// FailedSignInsPerMinute and FailedSignInBurst bound wrong instructor
	// secrets per address; a right one is never refused for another
	// address's failures.
	FailedSignInsPerMinute, FailedSignInBurst float64
	// UnknownCodesPerMinute and UnknownCodeBurst bound how many room codes
	// that open no room one address may try (guessing codes).
	UnknownCodesPerMinute, UnknownCodeBurst float64
	// StatesPerSecond bounds the room's state messages: changes that come
	// faster are sent together.
	StatesPerSecond float64
}

// The defaults of Limits.
const (
	DefaultConnsPerClient         = 8
	DefaultConnectsPerSecond      = 1
	DefaultConnectBurst           = 20
	DefaultNewStudentsPerMinute   = 1
	DefaultNewStudentBurst        = 4
	DefaultFailedSignInsPerMinute = 6
	DefaultFailedSignInBurst      = 5
	DefaultUnknownCodesPerMinute  = 6
	DefaultUnknownCodeBurst       = 10
	DefaultStatesPerSecond        = 4
)

func (l *Limits) defaults() {
	setI := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	setF := func(v *float64, d float64) {
		if *v <= 0 {
			*v = d
		}
	}
	setI(&l.ConnsPerClient, DefaultConnsPerClient)
	setF(&l.ConnectsPerSecond, DefaultConnectsPerSecond)
	setF(&l.ConnectBurst, DefaultConnectBurst)
	setF(&l.NewStudentsPerMinute, DefaultNewStudentsPerMinute)
	setF(&l.NewStudentBurst, DefaultNewStudentBurst)
	setF(&l.FailedSignInsPerMinute, DefaultFailedSignInsPerMinute)
	setF(&l.FailedSignInBurst, DefaultFailedSignInBurst)
	setF(&l.UnknownCodesPerMinute, DefaultUnknownCodesPerMinute)
	setF(&l.UnknownCodeBurst, DefaultUnknownCodeBurst)
	setF(&l.StatesPerSecond, DefaultStatesPerSecond)
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

// refuse answers 429 with Retry-After.
func refuse(w http.ResponseWriter, detail string, wait time.Duration) {
	p := causeTooMany.Problem(detail)
	p.RetryAfter = limit.RetryAfter(wait)
	httpapi.Write(w, p.Response())
}

// checkCode is asked before a room code is looked up for a client: false
// (and the answer written) when the address has tried too many codes that
// open nothing. found reports the lookup, so that a miss is counted.
func (c *Classroom) codeAllowed(w http.ResponseWriter, a netip.Addr) bool {
	if limit.Exempt(a) {
		return true
	}
	if ok, wait := c.limits.unknownCode.Ready(a); !ok {
		refuse(w, "too many room codes tried from your address; check the code on the projector", wait)
		return false
	}
	return true
}

// codeMissed counts a room code that opened nothing.
func (c *Classroom) codeMissed(a netip.Addr) {
	if !limit.Exempt(a) {
		c.limits.unknownCode.Spend(a)
	}
}

// admitSocket takes one of the address's websockets and one of its
// connects; it answers 429 and returns nil when either has run out. The
// returned function gives the socket back.
func (c *Classroom) admitSocket(w http.ResponseWriter, a netip.Addr) (release func()) {
	if limit.Exempt(a) {
		return func() {}
	}
	if ok, wait := c.limits.connects.Allow(a); !ok {
		refuse(w, "too many connections opened from your address; wait a moment", wait)
		return nil
	}
	if !c.limits.conns.Acquire(a) {
		refuse(w, "too many connections open from your address", time.Second)
		return nil
	}
	var once sync.Once
	return func() { once.Do(func() { c.limits.conns.Release(a) }) }
}

// newStudentAllowed takes one of the address's new students.
func (c *Classroom) newStudentAllowed(a netip.Addr) bool {
	if limit.Exempt(a) {
		return true
	}
	ok, _ := c.limits.newStudents.Allow(a)
	return ok
}

// newStudentRefused says why c may not add a new student to the room, or
// nil: the room is locked, the instructor kicked a student from c's
// address, or the address has added its share of students lately. It runs
// on the room's goroutine.
func (r *Room) newStudentRefused(c *conn) *errMsg {
	switch {
	case r.locked:
		m := errorMsg("locked", "the instructor has locked this room; students already in it can still come back")
		return &m
	case r.banned[c.client] && !limit.Exempt(c.client):
		m := errorMsg("kicked", "the instructor removed a student from your address")
		return &m
	case !r.cl.newStudentAllowed(c.client):
		m := errorMsg("rate-limited", "too many new students from your address; wait a minute")
		return &m
	}
	return nil
}

// kick removes a student: its connections are closed, its secret joins no
// more, and its address adds no new student to this room (127.0.0.1, the
// server's own machine, excepted). The roster no longer lists it. It runs
// on the room's goroutine.
func (r *Room) kick(by *conn, id string) {
	st := r.byID[id]
	if st == nil || st.kicked {
		r.tell(by, errorMsg("bad-message", "no such student in this room"))
		return
	}
	st.kicked = true
	r.kicked++
	if r.banned == nil {
		r.banned = map[netip.Addr]bool{}
	}
	if !limit.Exempt(st.addr) {
		r.banned[st.addr] = true
	}
	r.dirtyView = true
	for c := range r.conns {
		if c.student != st {
			continue
		}
		r.tell(c, errorMsg("kicked", "the instructor removed you from this room"))
		// The writer sends what is queued before the socket closes.
		r.spawn(func() {
			select {
			case <-c.done:
			case <-r.ctx.Done():
			case <-time.After(time.Second):
			}
			c.close()
		})
	}
}
