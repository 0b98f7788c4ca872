package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// ledgerGroups lets concurrent transfers between the same two accounts
// share a round trip and a commit. While one of this server's ledger calls
// for a pair of accounts is at PostgreSQL, the next calls for that pair
// gather behind it; when it returns, they go together, as one pipelined
// batch that PostgreSQL runs as one transaction (the statements up to a
// pipeline's Sync are one implicit transaction), and the first of them
// leads: it sends the batch and hands the pair on to the calls gathered
// meanwhile. Transfers between one pair take their row locks one after
// another anyway; grouped, they also share the commit (and, with fsync
// on, its WAL flush).
//
// Only calls that complete a key are grouped. A group fails as a whole (a
// deadlock, a broken connection, anything that aborts its transaction),
// and then each of its calls runs again on its own: safe, because a call
// whose group did commit after all finds its key no longer in_progress and
// moves nothing. Lock order stays that of a single call: every call of a
// group locks its own key (locked by no one but its owner) and the same
// two accounts, in id order, which the group holds from its first call to
// its commit.
//
// ledgerGroups is safe for concurrent use; the zero value is ready.
type ledgerGroups = gatherer[accountPair, *ledgerCall]

// accountPair is two accounts in id order.
type accountPair struct{ lo, hi string }

func pairOf(from, to string) accountPair {
	if to < from {
		from, to = to, from
	}
	return accountPair{from, to}
}

// ledgerCall is one call of ledger_transfer and its answer.
type ledgerCall struct {
	args  []any
	reply ledgerReply
	err   error
	alone bool          // the group failed: run the call on its own
	done  chan struct{} // closed when reply, err or alone is set
}

// ledgerReply is what ledger_transfer answers.
type ledgerReply struct {
	outcome int32
	balance *int64
	id      *int64
}

// callLedger runs one call of ledger_transfer: on its own when its pair of
// accounts is free here, or else in the group gathering behind the call
// that holds the pair.
func (db *DB) callLedger(ctx context.Context, pair accountPair, args []any) (ledgerReply, error) {
	c := &ledgerCall{args: args, done: make(chan struct{})}
	first, grp, leads := db.groups.join(pair, c)
	if first {
		r, err := db.ledgerOnce(ctx, args)
		db.groups.passOn(pair)
		return r, err
	}
	db.groups.wait(ctx, pair, grp, leads, db.runGroup, c.done)
	if c.alone {
		return db.ledgerOnce(ctx, args)
	}
	return c.reply, c.err
}

// runGroup sends a group's calls as one batch, one transaction, and
// answers each of them; if the transaction failed, each is told to run
// alone.
func (db *DB) runGroup(ctx context.Context, calls []*ledgerCall) {
	if len(calls) == 1 {
		c := calls[0]
		c.reply, c.err = db.ledgerOnce(ctx, c.args)
		close(c.done)
		return
	}
	batch := &pgx.Batch{}
	for _, c := range calls {
		batch.Queue(string(ledger), c.args...)
	}
	b := db.pool.SendBatch(ctx, batch)
	ok := true
	for _, c := range calls {
		if ok {
			ok = b.QueryRow().Scan(&c.reply.outcome, &c.reply.balance, &c.reply.id) == nil
		}
	}
	if err := b.Close(); err != nil {
		ok = false
	}
	for _, c := range calls {
		if !ok {
			c.reply, c.alone = ledgerReply{}, true
		}
		close(c.done)
	}
}
