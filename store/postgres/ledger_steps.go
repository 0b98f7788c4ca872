package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"idemlab/engine"
)

// transferInSteps runs the ledger transaction at READ COMMITTED in two
// round trips, each a pipelined batch of statements, for the transfers
// whose key's response must be rendered from what the ledger read
// (DB.Transfer):
//
//  1. BEGIN; lock the key by its owner (when completing one); lock both
//     accounts in id order, reading their balances; draw the transfer's id;
//  2. debit, credit and record the transfer (only when both accounts exist
//     and the funds suffice); complete the key with the response rendered
//     from what step 1 read; COMMIT.
//
// The accounts stay locked from the first reply to the COMMIT: one round
// trip, during which every other transfer from the same account waits.
// The completion is written so that it fails when it completes no row (it
// divides by the count): the transaction is aborted, PostgreSQL skips the
// COMMIT queued behind it, and the store rolls back. So a key that is not
// this owner's can never be paid for, even if the lock of step 1 were ever
// wrong (with that lock taken out by hand, the conformance suite still
// passed).
func (db *DB) transferInSteps(ctx context.Context, a engine.TransferArgs) (res engine.TransferResult, err error) {
	var sql []string
	run := func(s stmt) string {
		sql = append(sql, string(s))
		return string(s)
	}
	defer func() { res.SQL = strings.Join(sql, ";\n") }()

	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return res, mapErr("begin transfer", err)
	}
	defer conn.Release()
	open := false // a transaction is open on conn
	defer func() {
		if open {
			// A connection that cannot roll back is closed, which rolls back.
			if _, err := conn.Exec(context.WithoutCancel(ctx), string(rollback)); err != nil {
				conn.Conn().Close(context.WithoutCancel(ctx))
			}
			run(rollback)
		}
	}()

	c := a.Complete
	var keys *keyStmts
	first := &pgx.Batch{}
	first.Queue(run(begin))
	if c != nil {
		keys = db.stmts.on(c.Table)
		first.Queue(run(keys.lockKey), c.Scope, c.Key, c.Owner)
	}
	first.Queue(run(lockAccounts), []string{a.From, a.To})
	first.Queue(run(nextID))
	balances := map[string]int64{}
	keyHeld := true
	var id int64
	err = func() error {
		br := conn.SendBatch(ctx, first)
		defer br.Close()
		if _, err := br.Exec(); err != nil {
			return mapErr("begin transfer", err)
		}
		open = true
		if c != nil {
			var one int
			err := br.QueryRow().Scan(&one)
			if errors.Is(err, pgx.ErrNoRows) {
				keyHeld = false
			} else if err != nil {
				return mapErr(fmt.Sprintf("lock key %q", c.Key), err)
			}
		}
		rows, err := br.Query()
		if err != nil {
			return mapErr("lock accounts", err)
		}
		for rows.Next() {
			var id string
			var bal int64
			if err := rows.Scan(&id, &bal); err != nil {
				rows.Close()
				return mapErr("lock accounts", err)
			}
			balances[id] = bal
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return mapErr("lock accounts", err)
		}
		return mapErr("draw transfer id", br.QueryRow().Scan(&id))
	}()
	if err != nil {
		return res, err
	}
	if !keyHeld {
		// Another attempt took the claim over: this one must not pay.
		return res, nil
	}

	last := &pgx.Batch{}
	fromBal, fromOK := balances[a.From]
	_, toOK := balances[a.To]
	moves := false
	switch {
	case !fromOK:
		res.Outcome, res.Missing = engine.TransferUnknownAccount, a.From
	case fromBal < a.Amount:
		res.Outcome, res.Balance = engine.TransferInsufficientFunds, fromBal
	case !toOK:
		res.Outcome, res.Missing = engine.TransferUnknownAccount, a.To
	default:
		moves = true
		last.Queue(run(debit), a.From, a.Amount)
		last.Queue(run(credit), a.To, a.Amount)
		last.Queue(run(addTransfer), id, a.From, a.To, a.Amount, a.At, a.Customer, a.Key)
		res.Transfer = engine.Transfer{ID: engine.TransferID(id), From: a.From, To: a.To, Amount: a.Amount,
			BalanceAfter: fromBal - a.Amount, CreatedAt: a.At, Customer: a.Customer, Key: a.Key}
	}
	var resp engine.Response
	if c != nil {
		resp = c.Render(res)
		args, err := responseArgs(&resp, res.Transfer.ID)
		if err != nil {
			return res, fmt.Errorf("postgres: response of %q: %w", c.Key, err)
		}
		last.Queue(run(keys.complete), append([]any{c.Scope, c.Key, c.Owner}, args...)...)
	}
	last.Queue(run(commit))
	completed := true
	err = func() error {
		br := conn.SendBatch(ctx, last)
		defer br.Close()
		if moves {
			for _, op := range []string{"debit", "credit", "record transfer"} {
				if _, err := br.Exec(); err != nil {
					return mapErr(op, err)
				}
			}
		}
		if c != nil {
			var one int
			err := br.QueryRow().Scan(&one)
			var pg *pgconn.PgError
			if errors.As(err, &pg) && pg.Code == "22012" {
				completed = false // the key was not this owner's; the COMMIT is skipped
				return nil
			} else if err != nil {
				return mapErr(fmt.Sprintf("complete %q", c.Key), err)
			}
		}
		tag, err := br.Exec()
		if err != nil {
			return mapErr("commit transfer", err)
		}
		if tag.String() != "COMMIT" {
			return fmt.Errorf("postgres: commit transfer: the transaction rolled back (%s)", tag)
		}
		return nil
	}()
	if err != nil {
		return res, err
	}
	if !completed {
		// The aborted transaction is still open: the deferred ROLLBACK ends it.
		res.Transfer = engine.Transfer{}
		return res, nil
	}
	open = false
	if c != nil {
		res.Completed, res.Response = true, &resp
	}
	return res, nil
}
