package sqlite

import (
	"context"
	"fmt"

	"github.com/ncruces/go-sqlite3"
)

// Reap is one step of the reaper's sweep: it looks at up to batch keys,
// continuing where the last step stopped, and deletes those that expired
// at or before nowMS. It walks the constrained key table, then the
// unconstrained one; swept is true when this step reached the end of the
// last, and the next step starts again at the beginning.
//
// There is no index on the expiry time to find expired keys directly: it
// would cost every claim a second b-tree write (schema migration 2), and a
// key that expired is already treated as absent by the request that meets
// it, so the sweep only reclaims space.
func (db *DB) Reap(ctx context.Context, nowMS int64, batch int) (deleted int, swept bool, err error) {
	if batch < 1 {
		return 0, false, fmt.Errorf("sqlite: reap: batch %d < 1", batch)
	}
	err = db.hold(ctx, func() (err error) {
		deleted, swept, err = db.reap(nowMS, batch)
		return err
	})
	return deleted, swept, err
}

// reap is Reap's step. Callers hold the database.
func (db *DB) reap(nowMS int64, batch int) (deleted int, swept bool, err error) {
	c := &db.sweep
	ks := &db.stmts.constrained
	if c.loose {
		ks = &db.stmts.loose
	}
	end, err := db.prepare(&ks.sweepEnd)
	if err != nil {
		return 0, false, err
	}
	c.bindAfter(end)
	end.BindInt64(3, int64(batch-1))
	var next sweepCursor
	found := end.Step()
	if found {
		next = sweepCursor{loose: c.loose, started: true}
		if c.loose {
			next.rowid = end.ColumnInt64(0)
		} else {
			next.scope, next.key = end.ColumnText(0), end.ColumnText(1)
		}
	}
	if err := end.Reset(); err != nil {
		return 0, false, mapErr("reap keys", err)
	}
	st := &ks.sweepRest
	if found {
		st = &ks.sweep
	}
	del, err := db.prepare(st)
	if err != nil {
		return 0, false, err
	}
	c.bindAfter(del)
	if found {
		if next.loose {
			del.BindInt64(3, next.rowid)
		} else {
			del.BindText(3, next.scope)
			del.BindText(4, next.key)
		}
	}
	del.BindInt64(5, nowMS)
	if err := del.Exec(); err != nil {
		return 0, false, mapErr("reap keys", err)
	}
	deleted = int(db.conn.Changes())
	switch {
	case found:
		*c = next
	case !c.loose:
		*c = sweepCursor{loose: true}
	default:
		*c = sweepCursor{}
		swept = true
	}
	return deleted, swept, nil
}

// sweepCursor is where the reaper's sweep stands: in which table, and the
// last row it looked at (none yet when !started).
type sweepCursor struct {
	loose      bool
	started    bool
	scope, key string
	rowid      int64
}

// bindAfter binds the window's lower bound: ?1 (and ?2) of the sweep
// statements. Before the first window every row is after it.
func (c *sweepCursor) bindAfter(s *sqlite3.Stmt) {
	switch {
	case c.loose:
		s.BindInt64(1, c.rowid) // rowids start at 1
	case c.started:
		s.BindText(1, c.scope)
		s.BindText(2, c.key)
	default:
		s.BindText(1, "") // keys are never empty: ("", "") is before all
		s.BindText(2, "")
	}
}
