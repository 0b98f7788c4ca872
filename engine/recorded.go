package engine

import (
	"context"
	"errors"
	"strings"
)

// keyTable is the table the policy's claims go to.
func (e *Engine) keyTable() KeyTable {
	if e.policy.Claim == ClaimCheckThenInsert {
		return TableLoose
	}
	return TableConstrained
}

// keyScope is the scope a customer's transfer keys live in.
func (e *Engine) keyScope(customer string) string {
	if e.policy.Scope == ScopeCustomerEndpoint {
		return customer + " POST " + TransfersRoute
	}
	return "*"
}

// AddsRows reports whether req is a request that can add rows to the
// store: a PUT of an account or a transfer. Reads and refusals add none.
func AddsRows(req Request) bool {
	return req.Method == "PUT" && strings.HasPrefix(req.Path, "/accounts/") ||
		req.Method == "POST" && req.Path == TransfersRoute
}

// Recorded reports whether the store can answer req without adding a row:
// a PUT on an account that exists, a transfer whose key is recorded in its
// scope (its replay, its 409 or its 422), or a request that the engine
// refuses before it stores anything (a key or customer that does not
// parse). A server that has spent its size budget lets these through and
// refuses the rest; a transfer at a level without keys always adds a row.
func (e *Engine) Recorded(ctx context.Context, req Request) (bool, error) {
	if req.Method == "PUT" {
		_, err := e.store.GetAccount(ctx, strings.TrimPrefix(req.Path, "/accounts/"))
		if errors.Is(err, ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}
	if !e.policy.Keyed() {
		return false, nil
	}
	customer, prob := ParseCustomer(req.Customer, req.HasCustomer)
	if prob != nil {
		return true, nil
	}
	key, prob := ParseKey(req.Key)
	if prob != nil {
		return true, nil
	}
	look, err := e.store.LookupKey(ctx, e.keyTable(), e.keyScope(customer), key)
	return look.Record != nil, err
}
