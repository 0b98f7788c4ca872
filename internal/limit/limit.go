// Package limit holds idemlab's per-client limits: token buckets and
// counters keyed by an address (package peer says whose: the TCP peer's,
// or the client a trusted proxy names; an IPv6 client by its /64), so
// that one noisy machine runs out of its own allowance and never anyone
// else's. The callers decide what is exempt (peer.Peer.Exempt).
package limit

import (
	"math"
	"net/netip"
	"sync"
	"time"
)

// MaxClients bounds how many addresses a limiter remembers. Past it, the
// addresses whose buckets have refilled are forgotten (they are back to a
// full allowance, so forgetting them changes nothing); if none has, a new
// address shares the zero Addr's bucket instead of growing the map.
const MaxClients = 1 << 16

// Rate is a token bucket per client: Burst tokens saved up at most, Per
// tokens added a second. It is safe for concurrent use.
type Rate struct {
	per, burst float64
	now        func() time.Time

	mu sync.Mutex
	m  map[netip.Addr]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// refill adds the tokens earned since the bucket was last seen, at per a
// second, and keeps at most burst. A new bucket (no last) starts full.
func (b *bucket) refill(now time.Time, per, burst float64) {
	if d := now.Sub(b.last); d > 0 {
		b.tokens = math.Min(burst, b.tokens+d.Seconds()*per)
	}
	b.last = now
}

// Bucket is one token bucket, for one thing rather than one address
// (a connection's messages, a student's transfers): Burst tokens saved up
// at most, Per tokens added a second. It is safe for concurrent use.
type Bucket struct {
	per, burst float64

	mu sync.Mutex
	b  bucket
}

// NewBucket returns a full bucket.
func NewBucket(per, burst float64) *Bucket {
	return &Bucket{per: per, burst: burst, b: bucket{tokens: burst}}
}

// Allow takes a token at now, or returns false when none is left.
func (b *Bucket) Allow(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.b.last.IsZero() {
		b.b.last = now // full from the first call, not from year one
	}
	b.b.refill(now, b.per, b.burst)
	if b.b.tokens < 1 {
		return false
	}
	b.b.tokens--
	return true
}

// Default sets *v to d when *v is zero or less: the one way a
// configuration's unset figures (limits, sizes, durations) take their
// defaults.
func Default[T int | int64 | float64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// NewRate returns a limiter that lets each client do burst things at once
// and per things a second after that. now is the clock; nil means
// time.Now (tests inject their own, so that nothing depends on how fast
// the machine is).
func NewRate(per, burst float64, now func() time.Time) *Rate {
	if now == nil {
		now = time.Now
	}
	return &Rate{per: per, burst: burst, now: now, m: map[netip.Addr]*bucket{}}
}

// Per and Burst return the limiter's figures, for publishing them.
func (l *Rate) Per() float64   { return l.per }
func (l *Rate) Burst() float64 { return l.burst }

// bucketLocked returns a's bucket, refilled to now. The caller holds mu.
func (l *Rate) bucketLocked(a netip.Addr, now time.Time) *bucket {
	b := l.m[a]
	if b == nil {
		if len(l.m) >= MaxClients {
			l.forgetFullLocked(now)
		}
		if len(l.m) >= MaxClients {
			a = netip.Addr{}
			if b = l.m[a]; b != nil {
				l.refill(b, now)
				return b
			}
		}
		b = &bucket{tokens: l.burst, last: now}
		l.m[a] = b
		return b
	}
	l.refill(b, now)
	return b
}

func (l *Rate) refill(b *bucket, now time.Time) { b.refill(now, l.per, l.burst) }

func (l *Rate) forgetFullLocked(now time.Time) {
	for a, b := range l.m {
		l.refill(b, now)
		if b.tokens >= l.burst {
			delete(l.m, a)
		}
	}
}

// Allow takes one of a's tokens. When a has none left it takes nothing and
// returns false and how long until a token is back.
func (l *Rate) Allow(a netip.Addr) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucketLocked(a, l.now())
	if b.tokens < 1 {
		return false, l.waitFor(b)
	}
	b.tokens--
	return true, 0
}

// Ready reports whether a has a token, without taking it: a limit on
// failures asks first and Spends only when the attempt failed.
func (l *Rate) Ready(a netip.Addr) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucketLocked(a, l.now())
	if b.tokens < 1 {
		return false, l.waitFor(b)
	}
	return true, 0
}

// Spend takes one of a's tokens, even the last.
func (l *Rate) Spend(a netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucketLocked(a, l.now())
	b.tokens = math.Max(0, b.tokens-1)
}

func (l *Rate) waitFor(b *bucket) time.Duration {
	if l.per <= 0 {
		return time.Hour
	}
	return time.Duration((1 - b.tokens) / l.per * float64(time.Second))
}

// RetryAfter rounds a wait up to whole seconds, as Retry-After says it.
func RetryAfter(d time.Duration) int {
	s := int(math.Ceil(d.Seconds()))
	return max(s, 1)
}

// Count bounds how many of something (open websockets) each client holds
// at once. It is safe for concurrent use.
type Count struct {
	max int
	mu  sync.Mutex
	m   map[netip.Addr]int
}

// NewCount returns a Count that lets each client hold max at once.
func NewCount(max int) *Count { return &Count{max: max, m: map[netip.Addr]int{}} }

// Max is the figure each client is held to.
func (c *Count) Max() int { return c.max }

// Held is how many a holds now.
func (c *Count) Held(a netip.Addr) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[a]
}

// Acquire counts one more for a, unless a holds Max already.
func (c *Count) Acquire(a netip.Addr) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m[a] >= c.max {
		return false
	}
	c.m[a]++
	return true
}

// Release gives one back; a client holding none is forgotten.
func (c *Count) Release(a netip.Addr) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m[a] <= 1 {
		delete(c.m, a)
		return
	}
	c.m[a]--
}
