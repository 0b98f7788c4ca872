package postgres

import (
	"context"
	"fmt"
	"strconv"
)

// sweepCursor is where this process's reaper stands: in which table, and
// the last row it looked at.
type sweepCursor struct {
	loose      bool
	scope, key string // the constrained table's last (scope, key); keys are never empty
	id         int64  // the unconstrained table's last id
}

// Reap is one step of the reaper's sweep: one statement that looks at up to
// batch keys after the last step's window and deletes those that expired
// at or before nowMS. It walks the constrained key table in primary-key
// order, then the unconstrained one in id order; swept is true when the
// step reached the end of the last. Each step is its own short
// transaction, so claims on other keys never wait long for it. Several
// processes may sweep at once: a row is deleted once, whoever gets there.
func (db *DB) Reap(ctx context.Context, nowMS int64, batch int) (deleted int, swept bool, err error) {
	if batch < 1 {
		return 0, false, fmt.Errorf("postgres: reap: batch %d < 1", batch)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	c := &db.sweep
	var (
		n, seen    int64
		last1, lk2 string
	)
	if c.loose {
		err = db.pool.QueryRow(ctx, string(db.stmts.looseKeys.sweep), c.id, "", batch, nowMS).Scan(&n, &seen, &last1, &lk2)
	} else {
		err = db.pool.QueryRow(ctx, string(db.stmts.keys.sweep), c.scope, c.key, batch, nowMS).Scan(&n, &seen, &last1, &lk2)
	}
	if err != nil {
		return 0, false, mapErr("reap keys", err)
	}
	switch {
	case seen == int64(batch) && c.loose:
		c.id, _ = strconv.ParseInt(last1, 10, 64)
	case seen == int64(batch):
		c.scope, c.key = last1, lk2
	case !c.loose:
		*c = sweepCursor{loose: true}
	default:
		*c = sweepCursor{}
		swept = true
	}
	return int(n), swept, nil
}
