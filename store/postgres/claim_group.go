package postgres

import (
	"context"
	"sort"

	"github.com/jackc/pgx/v5"

	"idemlab/engine"
)

// claimGroups lets concurrent claims on one key table share a round trip
// and a commit, as the SQLite store's group commit does. While one of this
// server's claims on a table is at PostgreSQL, the next ones gather behind
// it; when it returns they go together, as one pipelined batch of plain
// INSERTs that PostgreSQL runs as one transaction.
//
// Each claim stays the INSERT the lessons teach, and its verdict is still
// the unique index's: when any INSERT of a group fails (a duplicate key's
// 23505, or anything else), the whole transaction rolls back and every
// claim of the group runs again on its own, so that each duplicate meets
// its own 23505 and every fresh key is written. A group's INSERTs run in
// key order, so that two servers' groups never wait on each other in a
// cycle.
//
// claimGroups is safe for concurrent use; the zero value is ready.
type claimGroups = gatherer[engine.KeyTable, *claimCall]

// claimCall is one claim INSERT and what it did.
type claimCall struct {
	s        stmt
	args     []any
	order    string // scope and key, the group's order
	inserted bool
	alone    bool          // the group failed: run the claim on its own
	done     chan struct{} // closed when inserted or alone is set
}

// claim runs one plain claim INSERT: on its own when no other claim on t
// is at PostgreSQL from this server, else in the group gathering behind
// it. The error is the INSERT's own (a 23505 on a duplicate) only when it
// ran alone; a grouped claim that reports no error was written.
func (db *DB) claim(ctx context.Context, t engine.KeyTable, s stmt, args []any, order string) (bool, error) {
	c := &claimCall{s: s, args: args, order: order, done: make(chan struct{})}
	first, grp, leads := db.claims.join(t, c)
	if first {
		ok, err := db.claimOnce(ctx, s, args)
		db.claims.passOn(t)
		return ok, err
	}
	db.claims.wait(ctx, t, grp, leads, db.runClaims, c.done)
	if c.alone {
		return db.claimOnce(ctx, s, args)
	}
	return c.inserted, nil
}

func (db *DB) claimOnce(ctx context.Context, s stmt, args []any) (bool, error) {
	tag, err := db.pool.Exec(ctx, string(s), args...)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// runClaims sends a group's INSERTs as one batch, one transaction; if any
// failed, the transaction rolled back and each claim is told to run alone.
func (db *DB) runClaims(ctx context.Context, calls []*claimCall) {
	if len(calls) == 1 {
		c := calls[0]
		c.alone = true
		close(c.done)
		return
	}
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].order < calls[j].order })
	batch := &pgx.Batch{}
	for _, c := range calls {
		batch.Queue(string(c.s), c.args...)
	}
	b := db.pool.SendBatch(ctx, batch)
	ok := true
	for _, c := range calls {
		if !ok {
			break
		}
		tag, err := b.Exec()
		ok = err == nil
		c.inserted = ok && tag.RowsAffected() == 1
	}
	if err := b.Close(); err != nil {
		ok = false
	}
	for _, c := range calls {
		if !ok {
			c.inserted, c.alone = false, true
		}
		close(c.done)
	}
}
