package postgres

import (
	"context"
	"sync"
)

// gatherer is how calls that meet at one thing (a pair of accounts, a key
// table) share a round trip and a commit: while one call, or one group,
// for key k is at PostgreSQL, the next calls for k gather behind it; when
// it returns, they go together, and the first of them leads. ledgerGroups
// and claimGroups are gatherers; what a group sends, and what it does when
// it fails, is theirs.
//
// A gatherer is safe for concurrent use; the zero value is ready.
type gatherer[K comparable, C any] struct {
	mu sync.Mutex
	// busy holds the keys with a call or a group at PostgreSQL, each with
	// the group gathering behind it (nil while none has).
	busy map[K]*gathering[C]
}

// gathering is the calls gathered behind the one at PostgreSQL.
type gathering[C any] struct {
	calls []C
	turn  chan struct{} // closed when the group may go
}

// join says what c does for k: go at once (first: nothing for k is at
// PostgreSQL), or wait in grp, which it leads when it is grp's first call.
// A call in a group then calls wait; a call that goes at once calls
// passOn when it returns.
func (g *gatherer[K, C]) join(k K, c C) (first bool, grp *gathering[C], leads bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.busy == nil {
		g.busy = map[K]*gathering[C]{}
	}
	behind, busy := g.busy[k]
	if !busy {
		g.busy[k] = nil
		return true, nil, false
	}
	if behind == nil {
		behind = &gathering[C]{turn: make(chan struct{})}
		g.busy[k] = behind
	}
	behind.calls = append(behind.calls, c)
	return false, behind, len(behind.calls) == 1
}

// wait is what a call that joined grp does until its group has answered
// it (done is closed): when it leads, it waits for grp's turn, has send
// send the group's calls, and passes k on. The leader sends even if its
// own request is given up meanwhile, since the others wait on it.
func (g *gatherer[K, C]) wait(ctx context.Context, k K, grp *gathering[C], leads bool, send func(context.Context, []C), done <-chan struct{}) {
	if leads {
		<-grp.turn
		send(context.WithoutCancel(ctx), grp.calls)
		g.passOn(k)
	}
	<-done
}

// passOn hands k to the group gathered behind the call or group that just
// returned, or frees it.
func (g *gatherer[K, C]) passOn(k K) {
	g.mu.Lock()
	defer g.mu.Unlock()
	next := g.busy[k]
	if next == nil {
		delete(g.busy, k)
		return
	}
	g.busy[k] = nil
	close(next.turn)
}

// gathered is how many calls wait behind the one at PostgreSQL for k.
func (g *gatherer[K, C]) gathered(k K) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if next := g.busy[k]; next != nil {
		return len(next.calls)
	}
	return 0
}
