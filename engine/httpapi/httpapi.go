// Package httpapi adapts an engine.Engine to net/http. It is kept out of
// package engine so that the browser's WebAssembly module, which imports
// the engine, does not carry net/http.
package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"idemlab/engine"
)

// Handler serves the bank API of one engine. Mount it with the level's
// prefix stripped, so that it sees /transfers and /accounts/{id}. It is safe
// for concurrent use.
type Handler struct {
	Engine *engine.Engine
}

// ServeHTTP reads the request (at most engine.MaxBodyBytes), hands it to the
// engine as a plain value and writes the engine's response. When a fault
// lost the response, the connection is cut without an answer, as a load
// balancer would cut it.
func (h Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, engine.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			Write(w, engine.CauseBodyTooLarge.Problemf("the limit is %d bytes", engine.MaxBodyBytes).Response())
			return
		}
		// A half-sent body: the client is gone or too slow; nothing happened.
		Write(w, engine.CauseBodyInvalid.Problem("the body could not be read in full").Response())
		return
	}
	res := h.Engine.Handle(r.Context(), Request(r, body))
	NoteFailure(r.Context(), res.Err)
	if !res.Delivered {
		panic(http.ErrAbortHandler)
	}
	Write(w, res.Response)
}

// Request is r as the engine sees it, with body already read.
func Request(r *http.Request, body []byte) engine.Request {
	customer, hasCustomer := "", false
	if v, ok := r.Header["X-Customer-Id"]; ok {
		hasCustomer = true
		if len(v) == 1 {
			customer = v[0]
		} else {
			customer = "\x00" // several customer headers: refused as malformed
		}
	}
	return engine.Request{
		Method:      r.Method,
		Path:        r.URL.Path,
		Customer:    customer,
		HasCustomer: hasCustomer,
		Key:         r.Header.Values("Idempotency-Key"),
		Body:        body,
		ContentType: r.Header.Get("Content-Type"),
	}
}

// Write writes an engine response exactly: its headers in order, its status
// and its body bytes.
func Write(w http.ResponseWriter, resp engine.Response) {
	h := w.Header()
	for _, kv := range resp.Header {
		h.Add(kv.Name, kv.Value)
	}
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(resp.Status)
	w.Write(resp.Body)
}

// WriteJSON answers r with v as indented JSON (read with curl as often as
// by a page) and status. A value that does not encode is an internal
// error, answered and noted as WriteError does.
func WriteJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		WriteError(w, r, fmt.Errorf("encode answer: %w", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}
