package postgres

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultMaxConns is a server's connection budget when none is given
// (--db-max-conns): all its levels together open at most this many
// connections to PostgreSQL. PostgreSQL's default max_connections, 100,
// keeps superuser_reserved_connections (3) for its superusers, so 97 are
// left for idemlab's servers: four of them hold 4 × 16 = 64, a fifth
// started for a rolling deploy 80, and six 96, with psql and backups still
// able to get in beside four or five.
const DefaultMaxConns = 16

// budgetWait is how long a new connection waits for a place in the budget
// (after asking the other levels for an idle one) before the request that
// wanted it is refused as unavailable. Each request holds a connection for
// one statement at a time, so a place is usually free within milliseconds.
const budgetWait = 2 * time.Second

// errBudgetSpent is what a connection that found no place in the budget
// fails with; mapErr reports it as engine.ErrUnavailable.
var errBudgetSpent = errors.New("postgres: the server's connection budget is spent")

// Budget is the number of connections one idemlab server may hold open to
// PostgreSQL, shared by every DB opened with it (OpenWith): one per level,
// each with a pool of its own, since each level's statements run against
// its own schema. A level may use the whole budget when the others are
// idle; a level that needs a connection while the budget is spent asks the
// others' pools to close an idle one first. Every socket to PostgreSQL is
// counted, the migration's included, from the dial until it is closed.
// A Budget is safe for concurrent use.
type Budget struct {
	places chan struct{}

	mu    sync.Mutex
	pools []*pgxpool.Pool
}

// NewBudget returns a budget of max connections (DefaultMaxConns when
// max < 1).
func NewBudget(max int) *Budget {
	if max < 1 {
		max = DefaultMaxConns
	}
	return &Budget{places: make(chan struct{}, max)}
}

// Max is the number of connections the budget allows.
func (b *Budget) Max() int { return cap(b.places) }

// Open is the number of connections open now.
func (b *Budget) Open() int { return len(b.places) }

func (b *Budget) add(p *pgxpool.Pool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pools = append(b.pools, p)
}

func (b *Budget) remove(p *pgxpool.Pool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, q := range b.pools {
		if q == p {
			b.pools = append(b.pools[:i], b.pools[i+1:]...)
			return
		}
	}
}

// take holds a place for a new connection: at once when one is free, else
// after closing another pool's idle connection, else when one is freed
// within budgetWait or ctx.
func (b *Budget) take(ctx context.Context) error {
	select {
	case b.places <- struct{}{}:
		return nil
	default:
	}
	// Shedding is asked again while the connection waits: two connections
	// that want a place at once may both find the other pools' idle
	// connections taken by the other's shed (AcquireAllIdle holds them all
	// while it closes one), and the one that found none would otherwise
	// wait out budgetWait while idle connections stood by. Seen in CI as
	// 503s of a three-server grade under -race on two cores.
	t := time.NewTimer(budgetWait)
	defer t.Stop()
	again := time.NewTicker(shedEvery)
	defer again.Stop()
	for {
		b.shed(ctx)
		select {
		case b.places <- struct{}{}:
			return nil
		case <-again.C:
		case <-t.C:
			return errBudgetSpent
		case <-ctx.Done():
			return errBudgetSpent
		}
	}
}

// shedEvery is how often a connection waiting for a place asks the other
// pools again for an idle connection to close.
const shedEvery = 20 * time.Millisecond

// shed closes one idle connection of some pool sharing the budget, so that
// its place goes to a level that needs it.
func (b *Budget) shed(ctx context.Context) {
	b.mu.Lock()
	pools := append([]*pgxpool.Pool(nil), b.pools...)
	b.mu.Unlock()
	for _, p := range pools {
		idle := p.AcquireAllIdle(ctx)
		if len(idle) == 0 {
			continue
		}
		// A closed connection released to its pool is destroyed, and
		// closing its socket frees its place (budgetConn.Close).
		idle[0].Conn().Close(ctx)
		for _, c := range idle {
			c.Release()
		}
		return
	}
}

// dialer wraps dial so that every socket it opens holds a place in b
// until it is closed.
func (b *Budget) dialer(dial pgconn.DialFunc) pgconn.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if err := b.take(ctx); err != nil {
			return nil, err
		}
		c, err := dial(ctx, network, addr)
		if err != nil {
			<-b.places
			return nil, err
		}
		return &budgetConn{Conn: c, places: b.places}, nil
	}
}

// budgetConn frees its place in the budget when it is closed, once.
type budgetConn struct {
	net.Conn
	places chan struct{}
	once   sync.Once
}

func (c *budgetConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { <-c.places })
	return err
}

// releaseTimeout bounds the release of a failed attempt's claim
// (ReleaseKey), and releaseTries is how many connections it tries.
const (
	releaseTimeout = 5 * time.Second
	releaseTries   = 3
)
