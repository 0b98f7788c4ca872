package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ncruces/go-sqlite3"

	"idemlab/engine"
)

// LookupKey reads the newest row for (scope, key), if any.
func (db *DB) LookupKey(ctx context.Context, t engine.KeyTable, scope, key string) (engine.LookupResult, error) {
	st := &db.stmts.keys(t).lookup
	res := engine.LookupResult{SQL: st.sql}
	err := db.holdStmt(ctx, st, func(s *sqlite3.Stmt) (err error) {
		res.Record, err = lookup(s, scope, key)
		return err
	})
	return res, err
}

// lookup runs a prepared lookup statement.
func lookup(s *sqlite3.Stmt, scope, key string) (*engine.KeyRecord, error) {
	defer s.Reset()
	s.BindText(1, scope)
	s.BindText(2, key)
	if !s.Step() {
		return nil, mapErr("look up key", s.Err())
	}
	rec, err := scanKey(s)
	return &rec, err
}

// scanKey reads a row selected with keyColumns.
func scanKey(s *sqlite3.Stmt) (engine.KeyRecord, error) {
	rec := engine.KeyRecord{
		Scope: s.ColumnText(0), Key: s.ColumnText(1), Customer: s.ColumnText(2), Fingerprint: s.ColumnText(3),
		State: s.ColumnText(4), Owner: s.ColumnText(5), LeaseUntil: s.ColumnInt64(6), CreatedAt: s.ColumnInt64(7),
		ExpiresAt: s.ColumnInt64(8), TransferID: s.ColumnText(12),
	}
	if s.ColumnType(9) != sqlite3.NULL {
		resp := &engine.Response{Status: s.ColumnInt(9), Body: s.ColumnBlob(11, []byte{})}
		if err := json.Unmarshal(s.ColumnRawText(10), &resp.Header); err != nil {
			return rec, fmt.Errorf("sqlite: stored headers of %q: %w", rec.Key, err)
		}
		rec.Response = resp
	}
	return rec, nil
}

func bindKey(s *sqlite3.Stmt, rec engine.KeyRecord) error {
	s.BindText(1, rec.Scope)
	s.BindText(2, rec.Key)
	s.BindText(3, rec.Customer)
	s.BindText(4, rec.Fingerprint)
	s.BindText(5, rec.State)
	s.BindText(6, rec.Owner)
	s.BindInt64(7, rec.LeaseUntil)
	s.BindInt64(8, rec.CreatedAt)
	s.BindInt64(9, rec.ExpiresAt)
	return bindResponse(s, 10, rec.Response, rec.TransferID)
}

// jsonHeader is the stored form of the header almost every response has.
// It is never changed.
var jsonHeader = func() []byte {
	b, _ := json.Marshal([]engine.Header{{Name: "Content-Type", Value: "application/json"}})
	return b
}()

// encodeHeader is json.Marshal of a response's header, without the
// reflection for the one header almost every response has: this runs
// inside the ledger's transaction.
func encodeHeader(h []engine.Header) ([]byte, error) {
	if len(h) == 1 && h[0].Name == "Content-Type" && h[0].Value == "application/json" {
		return jsonHeader, nil
	}
	return json.Marshal(h)
}

// bindResponse binds status, headers, body and transfer id from param n on.
func bindResponse(s *sqlite3.Stmt, n int, resp *engine.Response, transferID string) error {
	if resp == nil {
		s.BindNull(n)
		s.BindNull(n + 1)
		s.BindNull(n + 2)
	} else {
		h, err := encodeHeader(resp.Header)
		if err != nil {
			return err
		}
		s.BindInt(n, resp.Status)
		s.BindRawText(n+1, h)
		s.BindBlob(n+2, resp.Body)
	}
	if transferID == "" {
		s.BindNull(n + 3)
	} else {
		s.BindText(n+3, transferID)
	}
	return nil
}

// InsertKey runs the claim INSERT. The verdict on a duplicate is SQLite's
// constraint error; only after it does the store read the blocking row.
func (db *DB) InsertKey(ctx context.Context, t engine.KeyTable, mode engine.InsertMode, rec engine.KeyRecord) (engine.InsertResult, error) {
	ks := db.stmts.keys(t)
	var st *stmt
	switch {
	case mode == engine.InsertOrIgnore && rec.State == "":
		st = &ks.insertIgnoreNoState
	case mode == engine.InsertOrIgnore:
		st = &ks.insertIgnore
	case rec.State == "":
		st = &ks.insertNoState
	default:
		st = &ks.insert
	}
	res := engine.InsertResult{SQL: st.sql}
	// An in_progress claim is always followed by a write of the same
	// attempt (its completion, or its release): it need not wait for a
	// commit of its own, and rides that write's (holdThen).
	claim := rec.State == engine.StateInProgress
	pending, err := db.holdThen(ctx, func() (bool, error) {
		s, err := db.prepare(st)
		if err != nil {
			return false, err
		}
		if err := bindKey(s, rec); err != nil {
			return false, fmt.Errorf("sqlite: bind key: %w", err)
		}
		err = s.Exec()
		switch {
		case err == nil:
			res.Inserted = db.conn.Changes() == 1
			return claim && res.Inserted, nil
		case !isConstraint(err):
			return false, mapErr(fmt.Sprintf("claim %q", rec.Key), err)
		}
		res.ConstraintError = err.Error()
		look, err := db.prepare(&ks.lookup)
		if err != nil {
			return false, err
		}
		res.Existing, err = lookup(look, rec.Scope, rec.Key)
		return false, err
	})
	if pending != nil {
		res.Pending = pending
	}
	return res, err
}

// TakeOverKey replaces an expired row, or an in_progress row whose lease ran
// out, with rec. One conditional UPDATE: at most one attempt wins.
func (db *DB) TakeOverKey(ctx context.Context, t engine.KeyTable, rec engine.KeyRecord, nowMS int64) (engine.WriteResult, error) {
	st := &db.stmts.keys(t).takeOver
	res := engine.WriteResult{SQL: st.sql}
	err := db.holdStmt(ctx, st, func(s *sqlite3.Stmt) error {
		s.BindText(1, rec.Scope)
		s.BindText(2, rec.Key)
		s.BindText(3, rec.Customer)
		s.BindText(4, rec.Fingerprint)
		state := rec.State
		if state == "" {
			state = engine.StateCompleted
		}
		s.BindText(5, state)
		s.BindText(6, rec.Owner)
		s.BindInt64(7, rec.LeaseUntil)
		s.BindInt64(8, rec.CreatedAt)
		s.BindInt64(9, rec.ExpiresAt)
		s.BindInt64(10, nowMS)
		if err := s.Exec(); err != nil {
			return mapErr(fmt.Sprintf("take over %q", rec.Key), err)
		}
		res.Changed = db.conn.Changes() == 1
		return nil
	})
	return res, err
}

// StoreResponse saves a response on a key after the fact (the rungs that
// record completion separately from the ledger).
func (db *DB) StoreResponse(ctx context.Context, t engine.KeyTable, scope, key, owner string, resp engine.Response, transferID string) (engine.WriteResult, error) {
	st := &db.stmts.keys(t).storeResponse
	res := engine.WriteResult{SQL: st.sql}
	err := db.holdStmt(ctx, st, func(s *sqlite3.Stmt) error {
		s.BindText(1, scope)
		s.BindText(2, key)
		s.BindText(3, owner)
		if err := bindResponse(s, 4, &resp, transferID); err != nil {
			return err
		}
		if err := s.Exec(); err != nil {
			return mapErr(fmt.Sprintf("store response of %q", key), err)
		}
		res.Changed = db.conn.Changes() > 0
		return nil
	})
	return res, err
}

// ReleaseKey deletes this owner's in_progress claim. It runs even when ctx
// is cancelled: it cleans up after a request that failed, perhaps because
// it was cancelled.
func (db *DB) ReleaseKey(ctx context.Context, t engine.KeyTable, scope, key, owner string) (engine.WriteResult, error) {
	st := &db.stmts.keys(t).release
	res := engine.WriteResult{SQL: st.sql}
	err := db.holdStmt(context.WithoutCancel(ctx), st, func(s *sqlite3.Stmt) error {
		s.BindText(1, scope)
		s.BindText(2, key)
		s.BindText(3, owner)
		if err := s.Exec(); err != nil {
			return mapErr(fmt.Sprintf("release %q", key), err)
		}
		res.Changed = db.conn.Changes() > 0
		return nil
	})
	return res, err
}
