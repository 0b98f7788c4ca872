package classroom

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
)

// The projector's key table reads these names (web/classroom/teach.js):
// a key row is the record's columns it shows, and the stored response's
// status; what the projector does not show is not sent.
func TestKeyRowIsWhatTheProjectorReads(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  engine.KeyRecord
		want string
	}{
		{"completed", engine.KeyRecord{Scope: "c1", Key: "k", Customer: "c1", Fingerprint: "fp", State: engine.StateCompleted, Owner: "o",
			LeaseUntil: 5, CreatedAt: 1, ExpiresAt: 9, TransferID: "tr_000001", Response: &engine.Response{Status: 201, Body: []byte("{}")}},
			`{"key":"k","customer":"c1","scope":"c1","state":"completed","status":201,"transfer_id":"tr_000001","expires_at":9}`},
		{"in progress, never expires", engine.KeyRecord{Scope: "*", Key: "k", Customer: "c1", State: engine.StateInProgress, Owner: "o", CreatedAt: 1},
			`{"key":"k","customer":"c1","scope":"*","state":"in_progress"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(keyRowOf(tc.rec))
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(b))
		})
	}
}
