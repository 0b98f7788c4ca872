package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"idemlab/engine"
)

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// LookupKey returns the newest row for (scope, key), or nil.
func (db *DB) LookupKey(ctx context.Context, t engine.KeyTable, scope, key string) (engine.LookupResult, error) {
	s := db.stmts.on(t).lookup
	rec, err := lookup(ctx, db.pool, s, scope, key)
	return engine.LookupResult{Record: rec, SQL: string(s)}, err
}

func lookup(ctx context.Context, q querier, s stmt, scope, key string) (*engine.KeyRecord, error) {
	rows, err := q.Query(ctx, string(s), scope, key)
	if err != nil {
		return nil, mapErr("look up key", err)
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, mapErr("look up key", rows.Err())
	}
	rec, err := scanKey(rows)
	if err != nil {
		return nil, err
	}
	return &rec, nil
}

// scanKey reads a row selected with keyColumns.
func scanKey(row pgx.Row) (engine.KeyRecord, error) {
	var (
		rec        engine.KeyRecord
		status     *int32
		headers    *string
		body       []byte
		transferID *string
	)
	if err := row.Scan(&rec.Scope, &rec.Key, &rec.Customer, &rec.Fingerprint, &rec.State, &rec.Owner, &rec.LeaseUntil,
		&rec.CreatedAt, &rec.ExpiresAt, &status, &headers, &body, &transferID); err != nil {
		return rec, mapErr("read key", err)
	}
	if transferID != nil {
		rec.TransferID = *transferID
	}
	if status != nil {
		if body == nil {
			body = []byte{}
		}
		resp := &engine.Response{Status: int(*status), Body: body}
		if headers != nil {
			if err := json.Unmarshal([]byte(*headers), &resp.Header); err != nil {
				return rec, fmt.Errorf("postgres: stored headers of %q: %w", rec.Key, err)
			}
		}
		rec.Response = resp
	}
	return rec, nil
}

// responseArgs are the status, headers, body and transfer id columns'
// values.
func responseArgs(resp *engine.Response, transferID string) ([]any, error) {
	args := []any{nil, nil, nil, nil}
	if resp != nil {
		h, err := json.Marshal(resp.Header)
		if err != nil {
			return nil, err
		}
		body := resp.Body
		if body == nil {
			body = []byte{}
		}
		args[0], args[1], args[2] = int32(resp.Status), string(h), body
	}
	if transferID != "" {
		args[3] = transferID
	}
	return args, nil
}

// InsertKey runs the claim INSERT. The verdict on a duplicate is the
// unique index's violation; only after it does the store read the
// blocking row.
func (db *DB) InsertKey(ctx context.Context, t engine.KeyTable, mode engine.InsertMode, rec engine.KeyRecord) (engine.InsertResult, error) {
	keys := db.stmts.on(t)
	args := []any{rec.Scope, rec.Key, rec.Customer, rec.Fingerprint}
	var s stmt
	switch {
	case rec.State == "" && mode == engine.InsertOrIgnore:
		s = keys.insertIgnoreNoState
	case rec.State == "":
		s = keys.insertNoState
	case mode == engine.InsertOrIgnore:
		s = keys.insertIgnore
	default:
		s = keys.insert
	}
	if rec.State != "" {
		args = append(args, rec.State)
	}
	res := engine.InsertResult{SQL: string(s)}
	resp, err := responseArgs(rec.Response, rec.TransferID)
	if err != nil {
		return res, fmt.Errorf("postgres: key's response: %w", err)
	}
	args = append(args, rec.Owner, rec.LeaseUntil, rec.CreatedAt, rec.ExpiresAt)
	args = append(args, resp...)
	var err2 error
	if mode == engine.InsertPlain {
		res.Inserted, err2 = db.claim(ctx, t, s, args, rec.Scope+"\x00"+rec.Key)
	} else {
		var tag pgconn.CommandTag
		tag, err2 = db.pool.Exec(ctx, res.SQL, args...)
		res.Inserted = err2 == nil && tag.RowsAffected() == 1
	}
	err = err2
	switch {
	case err == nil:
		return res, nil
	case isUniqueViolation(err):
		res.ConstraintError = err.Error()
		res.Existing, err = lookup(ctx, db.pool, keys.lookup, rec.Scope, rec.Key)
		return res, err
	}
	return res, mapErr(fmt.Sprintf("claim %q", rec.Key), err)
}

// TakeOverKey replaces an expired row, or an in_progress row whose lease ran
// out, with rec. One conditional UPDATE: a second one waits for the first's
// row lock, then re-checks its WHERE on the new row and finds the lease
// renewed, so at most one attempt wins.
func (db *DB) TakeOverKey(ctx context.Context, t engine.KeyTable, rec engine.KeyRecord, nowMS int64) (engine.WriteResult, error) {
	s := string(db.stmts.on(t).takeOver)
	state := rec.State
	if state == "" {
		state = engine.StateCompleted
	}
	tag, err := db.pool.Exec(ctx, s, rec.Scope, rec.Key, rec.Customer, rec.Fingerprint, state, rec.Owner,
		rec.LeaseUntil, rec.CreatedAt, rec.ExpiresAt, nowMS)
	if err != nil {
		return engine.WriteResult{SQL: s}, mapErr(fmt.Sprintf("take over %q", rec.Key), err)
	}
	return engine.WriteResult{Changed: tag.RowsAffected() == 1, SQL: s}, nil
}

// StoreResponse saves a response on a key after the fact (the rungs that
// record completion separately from the ledger).
func (db *DB) StoreResponse(ctx context.Context, t engine.KeyTable, scope, key, owner string, resp engine.Response, transferID string) (engine.WriteResult, error) {
	s := string(db.stmts.on(t).storeResponse)
	args, err := responseArgs(&resp, transferID)
	if err != nil {
		return engine.WriteResult{SQL: s}, fmt.Errorf("postgres: response of %q: %w", key, err)
	}
	tag, err := db.pool.Exec(ctx, s, append([]any{scope, key, owner}, args...)...)
	if err != nil {
		return engine.WriteResult{SQL: s}, mapErr(fmt.Sprintf("store response of %q", key), err)
	}
	return engine.WriteResult{Changed: tag.RowsAffected() > 0, SQL: s}, nil
}

// ReleaseKey deletes this owner's in_progress claim. It runs even when the
// request's context has ended: a claim left behind would answer 409 until
// its lease ran out.
func (db *DB) ReleaseKey(ctx context.Context, t engine.KeyTable, scope, key, owner string) (engine.WriteResult, error) {
	s := string(db.stmts.on(t).release)
	// Not cancelled with ctx, but bounded: a pool whose connections are
	// all busy frees one within milliseconds, and a database that is down
	// does not come back in time for this answer; then the claim's lease
	// is what recovers the key.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	tag, err := db.pool.Exec(ctx, s, scope, key, owner)
	for try := 1; try < releaseTries && err != nil && unavailable(err) && ctx.Err() == nil; try++ {
		// The pool handed out a connection that PostgreSQL had ended (a
		// restart, a terminated backend) and has dropped it now: the
		// next one may be alive.
		tag, err = db.pool.Exec(ctx, s, scope, key, owner)
	}
	if err != nil {
		return engine.WriteResult{SQL: s}, mapErr(fmt.Sprintf("release %q", key), err)
	}
	return engine.WriteResult{Changed: tag.RowsAffected() > 0, SQL: s}, nil
}
