package sqlite

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/ncruces/go-sqlite3"

	"idemlab/engine"
)

// hold holds the database while f runs one unit of work on it: every call
// of the store but Close reaches the connection through it. On a file with
// group commit, f runs inside the group's transaction, and hold returns
// only once that transaction has committed, with the group's error if it
// failed (see commitGroup). A cancelled ctx stops it before it waits.
func (db *DB) hold(ctx context.Context, f func() error) (err error) {
	_, err = db.holdThen(ctx, func() (bool, error) { return false, f() })
	return err
}

// holdThen is hold for a unit of work that may choose not to wait for the
// group's commit: when f returns early, holdThen returns as soon as f has
// run, with the group, whose commit the caller's next write rides (see
// engine.InsertResult.Pending). Without group commit it always waits.
//
// A ctx that carries such a group from an earlier call
// (engine.WithPending) runs nothing if that group's commit failed: the
// claim it follows is gone.
func (db *DB) holdThen(ctx context.Context, f func() (early bool, err error)) (pending *commitGroup, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !db.group {
		db.mu.Lock()
		defer db.mu.Unlock()
		_, err := f()
		return nil, err
	}
	g, err := db.join()
	if err != nil {
		return nil, err
	}
	early := false
	defer func() {
		if early && err == nil {
			db.leaveEarly(g)
			pending = g
			return
		}
		err = db.leave(g, err)
	}()
	if p, ok := engine.PendingOf(ctx).(*commitGroup); ok {
		if err := p.Failed(); err != nil {
			return nil, fmt.Errorf("sqlite: the claim before this write is gone: %w", err)
		}
	}
	early, err = f()
	return nil, err
}

// holdStmt is hold for work that is one statement: it runs f with st
// prepared.
func (db *DB) holdStmt(ctx context.Context, st *stmt, f func(*sqlite3.Stmt) error) error {
	return db.hold(ctx, func() error {
		s, err := db.prepare(st)
		if err != nil {
			return err
		}
		return f(s)
	})
}

// commitGroup is one SQLite transaction shared by the callers that held the
// database one after another while others were waiting for it: the group
// commit of a file database. Each caller's work runs inside it (the ledger
// in a SAVEPOINT of its own); the last caller of the group commits, and no
// caller returns before that commit, so nothing is answered that a crash
// could still undo. A page that several callers changed, the ledger's or
// the key table's last page, is written to the WAL once per group instead
// of once per caller.
type commitGroup struct {
	done    chan struct{} // closed when the group committed or failed
	err     error         // why it failed
	members int
	db      *DB
}

// Failed says whether the group's commit failed, without waiting: nil
// while it is open or once it committed.
func (g *commitGroup) Failed() error {
	select {
	case <-g.done:
		return g.err
	default:
		return nil
	}
}

// Wait waits for the group's commit and says whether it failed. A group
// still open is ended first (committed, unless someone is about to join
// it and will), so that a claim whose attempt answers without another
// write never waits for a stranger's.
func (g *commitGroup) Wait() error {
	select {
	case <-g.done:
	default:
		g.db.mu.Lock()
		if g.db.batch == g {
			g.db.end(g)
		}
		g.db.mu.Unlock()
		<-g.done
	}
	return g.err
}

// maxGroup bounds a group: its first caller waits for the work of the
// others before its commit. (Groups of at most 4 were best while every
// claim waited for a commit of its own; since the claim rides the next
// commit, and the last member yields before it commits, larger groups
// form and pay: see docs/PERFORMANCE.md.)
const maxGroup = 16

// yieldsBeforeCommit is how many times the last member of a group that
// could take more lets other goroutines run before it commits: a request
// whose work is a moment away (its HTTP body parsed, its claim just
// answered) then joins this group instead of paying for the next commit.
const yieldsBeforeCommit = 2

// join locks the database and makes the caller a member of the open
// commit group, opening one if there is none.
func (db *DB) join() (*commitGroup, error) {
	db.waiting.Add(1)
	db.mu.Lock()
	db.waiting.Add(-1)
	if db.batch == nil {
		if err := db.exec(&db.stmts.begin); err != nil {
			db.mu.Unlock()
			return nil, mapErr("begin", err)
		}
		db.batch = &commitGroup{done: make(chan struct{}), db: db}
	}
	g := db.batch
	g.members++
	return g, nil
}

// leave ends a member's work in group g: the member commits the group if
// nobody is waiting to join it or it is full, unlocks the database, and
// waits for the group's commit. It returns err, or the group's error if
// the member's own work succeeded.
func (db *DB) leave(g *commitGroup, err error) error {
	db.end(g)
	db.mu.Unlock()
	<-g.done
	if g.err != nil && err == nil {
		return g.err
	}
	return err
}

// leaveEarly ends a member's work in group g without waiting for the
// group's commit. When it is the group's only member it does not commit
// either: its next write is a moment away and will join the group (or a
// group after it, if another caller commits this one first), and nobody
// else waits on this one. Otherwise it ends the group as leave does, so
// that no member already waiting waits on the next write (a slow payment
// call may come first).
func (db *DB) leaveEarly(g *commitGroup) {
	if g.members > 1 || db.conn.GetAutocommit() {
		db.end(g)
	}
	db.mu.Unlock()
}

// end commits group g if nobody is waiting to join it or it is full, or
// fails it if an error rolled its transaction back. It runs while the
// database is held.
func (db *DB) end(g *commitGroup) {
	for i := 0; i < yieldsBeforeCommit && db.waiting.Load() == 0 && g.members < maxGroup && !db.conn.GetAutocommit(); i++ {
		runtime.Gosched()
	}
	switch {
	case db.conn.GetAutocommit():
		// An error rolled the whole transaction back: every member's work
		// is gone, and each of them must say so.
		g.err = errors.New("sqlite: the group's transaction was rolled back by an error")
		db.batch = nil
		close(g.done)
	case db.waiting.Load() == 0 || g.members >= maxGroup:
		if err := db.exec(&db.stmts.commit); err != nil {
			g.err = mapErr("commit", err)
			db.exec(&db.stmts.rollback)
		}
		db.groups.Add(1)
		db.grouped.Add(int64(g.members))
		db.batch = nil
		close(g.done)
	}
}
