package engine

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"
)

// This file holds what one Engine keeps in its own memory, the two
// mistakes a team makes when it scales out to a second server: the
// per-key mutex of LockMemory and the key cache of ClaimServerCache. Both
// are correct inside one process and protect nothing across two, because
// each Engine (each server) has its own.

// lockPoll is how long a waiting attempt whose hook returned looks for the
// lock to come free before it asks its hook again. A hook that parks the
// attempt (the learner's scheduler) decides when to look again; one that
// passes straight through (the classroom) would otherwise spin.
const lockPoll = 2 * time.Millisecond

// keyLocks is the mutex per key of LockMemory. It is safe for concurrent
// use.
type keyLocks struct {
	mu   sync.Mutex
	held map[string]*heldLock
}

// heldLock is one taken lock: who holds it and a channel closed when it is
// let go.
type heldLock struct {
	lane string
	free chan struct{}
}

// tryLock takes the lock on id for lane, or says who holds it and gives
// the channel that closes when it is let go.
func (l *keyLocks) tryLock(id, lane string) (unlock func(), holder string, free <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h := l.held[id]; h != nil {
		return nil, h.lane, h.free
	}
	if l.held == nil {
		l.held = map[string]*heldLock{}
	}
	h := &heldLock{lane: lane, free: make(chan struct{})}
	l.held[id] = h
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.held[id] == h {
			delete(l.held, id)
		}
		close(h.free)
	}, "", nil
}

// lockKey takes this engine's in-memory lock on the attempt's key, waiting
// while another attempt on this engine holds it. While it waits, the
// attempt parks at the hook's claim "lock" step between looks, so a
// scheduler sees a waiting lane instead of a lane that never comes back.
// The lock is let go when the attempt ends (a.unlock, run by transfer).
func (a *attempt) lockKey() error {
	id := a.scope + "\x00" + a.key
	waited := false
	for {
		unlock, holder, free := a.e.locks.tryLock(id, a.req.Lane)
		if unlock != nil {
			a.unlock = unlock
			note := "took " + a.e.serverName() + "'s in-memory lock on this key; it is held until the answer is sent"
			if waited {
				note = "the in-memory lock came free: took it; " + a.e.serverName() + "'s other attempts of this key wait now"
			}
			a.emit(PhaseClaim, "", OutcomeLocked, 0, note)
			return nil
		}
		if !waited {
			waited = true
			who := "another request"
			if holder != "" {
				who = holder
			}
			a.emit(PhaseClaim, "", OutcomeWaiting, 0, "waits for "+a.e.serverName()+"'s in-memory lock on this key, held by "+who)
		}
		if a.e.hook == nil {
			select {
			case <-free:
			case <-a.ctx.Done():
				return a.ctx.Err()
			}
			continue
		}
		a.step(PhaseClaim, PartLockWait)
		t := time.NewTimer(lockPoll)
		select {
		case <-free:
		case <-t.C:
		case <-a.ctx.Done():
			t.Stop()
			return a.ctx.Err()
		}
		t.Stop()
	}
}

// PartLockWait is the Step.Part of an attempt parked while it waits for
// the in-memory lock (LockMemory): moving it looks at the lock again.
const PartLockWait = "lock"

// serverName is how notes name this engine: "server 2", or "this server"
// when the engine was given no name.
func (e *Engine) serverName() string {
	if e.server == "" {
		return "this server"
	}
	return "server " + e.server
}

// serverCache is the key table of ClaimServerCache: a Store whose key
// methods keep the rows in this engine's memory and whose ledger methods
// are the real store's. It is safe for concurrent use; the mutex is held
// across the ledger transaction that completes a key, so that the owner
// guard holds as the constrained table's does.
type serverCache struct {
	Store
	mu   sync.Mutex
	rows map[string]KeyRecord
}

var _ Store = (*serverCache)(nil)

func newServerCache(s Store) *serverCache {
	return &serverCache{Store: s, rows: map[string]KeyRecord{}}
}

func cacheID(scope, key string) string { return scope + "\x00" + key }

func (c *serverCache) LookupKey(_ context.Context, _ KeyTable, scope, key string) (LookupResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.rows[cacheID(scope, key)]; ok {
		return LookupResult{Record: &r}, nil
	}
	return LookupResult{}, nil
}

func (c *serverCache) InsertKey(_ context.Context, _ KeyTable, mode InsertMode, rec KeyRecord) (InsertResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := cacheID(rec.Scope, rec.Key)
	if old, ok := c.rows[id]; ok {
		if mode == InsertOrIgnore {
			return InsertResult{}, nil
		}
		return InsertResult{Existing: &old, ConstraintError: "the key is in this server's cache"}, nil
	}
	if rec.State == "" {
		rec.State = StateCompleted
	}
	c.rows[id] = rec
	return InsertResult{Inserted: true}, nil
}

func (c *serverCache) TakeOverKey(_ context.Context, _ KeyTable, rec KeyRecord, nowMS int64) (WriteResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := cacheID(rec.Scope, rec.Key)
	old, ok := c.rows[id]
	expired := old.ExpiresAt > 0 && old.ExpiresAt <= nowMS
	leaseOut := old.State == StateInProgress && old.LeaseUntil > 0 && old.LeaseUntil <= nowMS
	if ok && !expired && !leaseOut {
		return WriteResult{}, nil
	}
	c.rows[id] = rec
	return WriteResult{Changed: true}, nil
}

func (c *serverCache) Transfer(ctx context.Context, a TransferArgs) (TransferResult, error) {
	if a.Complete == nil {
		return c.Store.Transfer(ctx, a)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	done := *a.Complete
	id := cacheID(done.Scope, done.Key)
	if r, ok := c.rows[id]; !ok || r.Owner != done.Owner || r.State != StateInProgress {
		return TransferResult{}, nil // the claim was taken over: nothing moves
	}
	a.Complete = nil
	tr, err := c.Store.Transfer(ctx, a)
	if err != nil {
		return tr, err
	}
	resp := done.Render(tr)
	r := c.rows[id]
	r.State, r.Response, r.TransferID = StateCompleted, &resp, tr.Transfer.ID
	c.rows[id] = r
	tr.Completed, tr.Response = true, &resp
	return tr, nil
}

func (c *serverCache) StoreResponse(_ context.Context, _ KeyTable, scope, key, owner string, resp Response, transferID string) (WriteResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := cacheID(scope, key)
	r, ok := c.rows[id]
	if !ok || r.Owner != owner {
		return WriteResult{}, nil
	}
	r.State, r.Response, r.TransferID = StateCompleted, &resp, transferID
	c.rows[id] = r
	return WriteResult{Changed: true}, nil
}

func (c *serverCache) ReleaseKey(_ context.Context, _ KeyTable, scope, key, owner string) (WriteResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := cacheID(scope, key)
	if r, ok := c.rows[id]; ok && r.Owner == owner && r.State == StateInProgress {
		delete(c.rows, id)
		return WriteResult{Changed: true}, nil
	}
	return WriteResult{}, nil
}

// Reap forgets the cached keys that expired at or before nowMS, then lets
// the real store take its step.
func (c *serverCache) Reap(ctx context.Context, nowMS int64, batch int) (int, bool, error) {
	c.mu.Lock()
	n := 0
	for id, r := range c.rows {
		if r.ExpiresAt > 0 && r.ExpiresAt <= nowMS {
			delete(c.rows, id)
			n++
		}
	}
	c.mu.Unlock()
	d, swept, err := c.Store.Reap(ctx, nowMS, batch)
	return n + d, swept, err
}

// CachedKeys returns the keys this engine holds in its own memory under
// ClaimServerCache, for a view to show each server's cache; nil under
// every other claim strategy.
func (e *Engine) CachedKeys() []KeyRecord {
	c, ok := e.store.(*serverCache)
	if !ok {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]KeyRecord, 0, len(c.rows))
	for _, r := range c.rows {
		out = append(out, r)
	}
	slices.SortFunc(out, func(x, y KeyRecord) int {
		return cmp.Or(cmp.Compare(x.CreatedAt, y.CreatedAt), cmp.Compare(x.Scope, y.Scope), cmp.Compare(x.Key, y.Key))
	})
	return out
}
