package sqlite

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ncruces/go-sqlite3"

	"idemlab/engine"
)

// PutAccount creates or sets an account.
func (db *DB) PutAccount(ctx context.Context, id string, balance int64) (engine.Account, error) {
	err := db.holdStmt(ctx, &db.stmts.putAccount, func(s *sqlite3.Stmt) error {
		s.BindText(1, id)
		s.BindInt64(2, balance)
		return mapErr("put account", s.Exec())
	})
	if err != nil {
		return engine.Account{}, err
	}
	return engine.Account{ID: id, Balance: balance}, nil
}

// GetAccount returns an account or engine.ErrNotFound.
func (db *DB) GetAccount(ctx context.Context, id string) (engine.Account, error) {
	var (
		bal int64
		ok  bool
	)
	err := db.hold(ctx, func() (err error) {
		bal, ok, err = db.balance(id)
		return err
	})
	switch {
	case err != nil:
		return engine.Account{}, err
	case !ok:
		return engine.Account{}, engine.ErrNotFound
	}
	return engine.Account{ID: id, Balance: bal}, nil
}

// balance reads an account's balance. Callers hold the database.
func (db *DB) balance(id string) (int64, bool, error) {
	s, err := db.prepare(&db.stmts.getAccount)
	if err != nil {
		return 0, false, err
	}
	defer s.Reset()
	s.BindText(1, id)
	if s.Step() {
		return s.ColumnInt64(0), true, nil
	}
	return 0, false, mapErr("get account", s.Err())
}

// Transfer runs the ledger transaction: check both accounts and the funds,
// debit, credit, record the transfer and, when asked, complete the key, all
// in one BEGIN IMMEDIATE … COMMIT (in a group commit, one SAVEPOINT …
// RELEASE of the group's transaction).
func (db *DB) Transfer(ctx context.Context, a engine.TransferArgs) (res engine.TransferResult, err error) {
	var ran []string
	defer func() { res.SQL = strings.Join(ran, ";\n") }()
	err = db.hold(ctx, func() error {
		l := ledgerTx{db: db, ran: &ran}
		return l.transfer(a, &res)
	})
	return res, err
}

// ledgerTx is one run of the ledger's transaction: it runs statements and
// keeps their text, in order, for the trace. Its methods run while the
// database is held.
type ledgerTx struct {
	db  *DB
	ran *[]string
}

// prepare prepares st and records that it runs.
func (l ledgerTx) prepare(st *stmt) (*sqlite3.Stmt, error) {
	*l.ran = append(*l.ran, st.sql)
	return l.db.prepare(st)
}

// exec runs st, which binds nothing, and records that it ran.
func (l ledgerTx) exec(st *stmt) error {
	*l.ran = append(*l.ran, st.sql)
	return l.db.exec(st)
}

func (l ledgerTx) transfer(a engine.TransferArgs, res *engine.TransferResult) error {
	db, stmts := l.db, &l.db.stmts
	begin, commit := &stmts.begin, &stmts.commit
	if db.group {
		begin, commit = &stmts.savepoint, &stmts.release
	}
	if err := l.exec(begin); err != nil {
		return mapErr("begin transfer", err)
	}
	committed := false
	defer func() {
		if committed {
			return
		}
		if db.group {
			l.exec(&stmts.rollbackTo)
			l.exec(&stmts.release)
			return
		}
		l.exec(&stmts.rollback)
	}()

	*l.ran = append(*l.ran, stmts.getAccount.sql)
	fromBal, ok, err := db.balance(a.From)
	if err != nil {
		return err
	}
	switch {
	case !ok:
		res.Outcome, res.Missing = engine.TransferUnknownAccount, a.From
	case fromBal < a.Amount:
		res.Outcome, res.Balance = engine.TransferInsufficientFunds, fromBal
	default:
		if err := l.move(a, fromBal, res); err != nil {
			return err
		}
	}
	if c := a.Complete; c != nil {
		resp := c.Render(*res)
		s, err := l.prepare(&stmts.keys(c.Table).complete)
		if err != nil {
			return err
		}
		s.BindText(1, c.Scope)
		s.BindText(2, c.Key)
		s.BindText(3, c.Owner)
		if err := bindResponse(s, 4, &resp, res.Transfer.ID); err != nil {
			return fmt.Errorf("sqlite: bind response: %w", err)
		}
		if err := s.Exec(); err != nil {
			return mapErr(fmt.Sprintf("complete %q", c.Key), err)
		}
		if db.conn.Changes() != 1 {
			// Another attempt took the claim over: this one must not pay.
			res.Completed = false
			return nil
		}
		res.Completed, res.Response = true, &resp
	}
	if err := l.exec(commit); err != nil {
		return mapErr("commit transfer", err)
	}
	committed = true
	return nil
}

// move credits, debits and records the transfer. The credit goes first: if
// it changes no row, the payee does not exist and nothing has moved yet.
func (l ledgerTx) move(a engine.TransferArgs, fromBal int64, res *engine.TransferResult) error {
	db, stmts := l.db, &l.db.stmts
	for _, step := range []struct {
		name string
		st   *stmt
		id   string
	}{{"credit", &stmts.credit, a.To}, {"debit", &stmts.debit, a.From}} {
		s, err := l.prepare(step.st)
		if err != nil {
			return err
		}
		s.BindText(1, step.id)
		s.BindInt64(2, a.Amount)
		if err := s.Exec(); err != nil {
			return mapErr(step.name, err)
		}
		if db.conn.Changes() == 0 {
			res.Outcome, res.Missing = engine.TransferUnknownAccount, step.id
			return nil
		}
	}
	s, err := l.prepare(&stmts.addTransfer)
	if err != nil {
		return err
	}
	s.BindText(1, a.From)
	s.BindText(2, a.To)
	s.BindInt64(3, a.Amount)
	s.BindInt64(4, a.At)
	s.BindText(5, a.Customer)
	s.BindText(6, a.Key)
	if err := s.Exec(); err != nil {
		return mapErr("record transfer", err)
	}
	res.Transfer = engine.Transfer{ID: engine.TransferID(db.conn.LastInsertRowID()), From: a.From, To: a.To, Amount: a.Amount,
		BalanceAfter: fromBal - a.Amount, CreatedAt: a.At, Customer: a.Customer, Key: a.Key}
	return nil
}

func parseTransferID(id string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimPrefix(id, "tr_"), 10, 64)
	return n, err == nil && strings.HasPrefix(id, "tr_")
}

// TransferByID reads a transfer and its payer's balance now, in one SELECT
// joining the ledger and the account.
func (db *DB) TransferByID(ctx context.Context, id string) (engine.TransferByIDResult, error) {
	st := &db.stmts.transferByID
	res := engine.TransferByIDResult{SQL: st.sql}
	rowid, ok := parseTransferID(id)
	if !ok {
		return res, engine.ErrNotFound
	}
	err := db.holdStmt(ctx, st, func(s *sqlite3.Stmt) error {
		defer s.Reset()
		s.BindInt64(1, rowid)
		if !s.Step() {
			if err := s.Err(); err != nil {
				return mapErr("transfer by id", err)
			}
			return engine.ErrNotFound
		}
		res.Transfer = engine.Transfer{ID: id, From: s.ColumnText(0), To: s.ColumnText(1), Amount: s.ColumnInt64(2),
			CreatedAt: s.ColumnInt64(3), Customer: s.ColumnText(4), Key: s.ColumnText(5)}
		res.Balance = s.ColumnInt64(6)
		return nil
	})
	return res, err
}

// Ping reads the ledger once, the cheapest statement that proves the
// database answers (a server's /readyz). It takes its turn like any other
// call, so a database held past ctx's deadline reports ctx's error.
func (db *DB) Ping(ctx context.Context) error {
	return db.hold(ctx, func() error {
		_, _, err := db.balance("")
		return err
	})
}
