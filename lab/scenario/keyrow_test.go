package scenario

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
)

// A key row the page draws has the key table's columns under the names
// engine.KeyRecord gives them, with the stored response's body as text.
func TestKeyRowIsTheRecordWithItsResponseAsText(t *testing.T) {
	rec := engine.KeyRecord{Scope: "*", Key: "k", Customer: "c", Fingerprint: "fp", State: engine.StateCompleted, Owner: "A1",
		LeaseUntil: 5, CreatedAt: 1, ExpiresAt: 9, TransferID: "tr_000001",
		Response: &engine.Response{Status: 201, Header: []engine.Header{{Name: "Content-Type", Value: "application/json"}}, Body: []byte(`{"a":1}`)}}
	fields := func(v any) map[string]any {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		return m
	}
	w := &world{owners: map[string]string{"A1": "lane A1"}}
	rows := w.keyRows([]engine.KeyRecord{rec})
	require.Len(t, rows, 1)
	got, want := fields(rows[0]), fields(rec)
	want["owner"] = "lane A1"
	want["response"] = map[string]any{"status": float64(201), "header": []any{map[string]any{"name": "Content-Type", "value": "application/json"}}, "body": `{"a":1}`}
	assert.Equal(t, want, got)
}
