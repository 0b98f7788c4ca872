package limit

import (
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestRateIsPerClient(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	l := NewRate(1, 3, clk.now)
	a, b := netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.3")
	for i := range 3 {
		ok, _ := l.Allow(a)
		require.True(t, ok, "burst %d", i)
	}
	ok, wait := l.Allow(a)
	assert.False(t, ok)
	assert.Equal(t, time.Second, wait)
	assert.Equal(t, 1, RetryAfter(wait))
	ok, _ = l.Allow(b)
	assert.True(t, ok, "another client has its own allowance")
	clk.add(500 * time.Millisecond)
	ok, wait = l.Allow(a)
	assert.False(t, ok)
	assert.Equal(t, 500*time.Millisecond, wait)
	clk.add(500 * time.Millisecond)
	ok, _ = l.Allow(a)
	assert.True(t, ok, "a token a second")
}

func TestRateReadyAndSpend(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	l := NewRate(0.1, 2, clk.now)
	a := netip.MustParseAddr("10.0.0.2")
	for range 5 {
		ok, _ := l.Ready(a)
		require.True(t, ok, "asking takes nothing")
	}
	l.Spend(a)
	l.Spend(a)
	ok, wait := l.Ready(a)
	assert.False(t, ok)
	assert.Equal(t, 10*time.Second, wait)
}

func TestRateForgetsRefilledClients(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	l := NewRate(1, 1, clk.now)
	for i := range MaxClients {
		ok, _ := l.Allow(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}))
		require.True(t, ok)
	}
	// Nobody has refilled: a new address shares the overflow bucket.
	ok, _ := l.Allow(netip.MustParseAddr("192.168.0.1"))
	assert.True(t, ok)
	ok, _ = l.Allow(netip.MustParseAddr("192.168.0.2"))
	assert.False(t, ok, "past MaxClients new addresses share one bucket, the map does not grow")
	assert.LessOrEqual(t, len(l.m), MaxClients+1)
	clk.add(time.Second)
	ok, _ = l.Allow(netip.MustParseAddr("192.168.0.3"))
	assert.True(t, ok)
	assert.Less(t, len(l.m), 10, "refilled clients are forgotten")
}

func TestCount(t *testing.T) {
	c := NewCount(2)
	a, b := netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.3")
	assert.True(t, c.Acquire(a))
	assert.True(t, c.Acquire(a))
	assert.False(t, c.Acquire(a))
	assert.True(t, c.Acquire(b))
	c.Release(a)
	assert.True(t, c.Acquire(a))
	c.Release(a)
	c.Release(a)
	c.Release(a)
	assert.Empty(t, c.m[a])
	assert.NotContains(t, c.m, a)
}

// TestBucket: a connection's or a student's bucket starts full and earns
// a token a second.
func TestBucket(t *testing.T) {
	b := NewBucket(1, 2)
	now := time.Unix(0, 0)
	assert.True(t, b.Allow(now))
	assert.True(t, b.Allow(now))
	assert.False(t, b.Allow(now), "the burst is spent")
	assert.False(t, b.Allow(now.Add(500*time.Millisecond)))
	assert.True(t, b.Allow(now.Add(1500*time.Millisecond)), "a token a second")
}
