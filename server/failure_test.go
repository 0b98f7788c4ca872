package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/internal/stores"
	"idemlab/server"
	"idemlab/store/sqlite"
)

// errDiskIO is what SQLite says when the disk under it fails.
var errDiskIO = errors.New("sqlite3: disk I/O error")

// failingStore is a real store whose key claims and account writes fail
// as a dying disk makes them fail.
type failingStore struct{ *sqlite.DB }

func (f failingStore) InsertKey(ctx context.Context, t engine.KeyTable, mode engine.InsertMode, rec engine.KeyRecord) (engine.InsertResult, error) {
	return engine.InsertResult{SQL: "INSERT INTO idempotency_keys …"}, errDiskIO
}

func (f failingStore) PutAccount(ctx context.Context, id string, balance int64) (engine.Account, error) {
	return engine.Account{}, errDiskIO
}

// syncBuffer is a log destination safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) records(t testing.TB) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		out = append(out, rec)
	}
	return out
}

// An error below the engine is answered with a generic problem, and logged
// once, with what finds the request again and never its body or customer.
func TestInternalErrorsAreLoggedOnceAndNeverShown(t *testing.T) {
	db, err := sqlite.OpenMemory()
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	eng := engine.New(failingStore{db}, engine.MustPreset(engine.LevelScoped), engine.Options{})
	var logs syncBuffer
	h, err := server.New([]*server.Bank{{Level: engine.LevelScoped, Engine: eng, DB: db}},
		stores.Options(server.Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))}))
	require.NoError(t, err)
	t.Cleanup(h.Close)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	c := client{t: t, base: ts.URL, http: ts.Client()}

	cases := []struct {
		name, method, path string
		headers            map[string]string
		body               string
		route, key         string
	}{
		{"a transfer's claim", "POST", "/bank/scoped/transfers",
			map[string]string{"Idempotency-Key": `"k-disk-1"`, "X-Customer-ID": "teller-secret-7"},
			`{"from":"alice","to":"bob","amount":123457}`, "/bank/scoped/", `"k-disk-1"`},
		{"an account write", "PUT", "/bank/scoped/accounts/alice", nil, `{"balance":987654}`, "/bank/scoped/", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(logs.records(t))
			resp, body := c.do(tc.method, tc.path, tc.headers, tc.body)
			assert.Equal(t, 500, resp.StatusCode)
			assert.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
			assert.Contains(t, string(body), engine.CauseInternal.Type())
			assert.NotContains(t, string(body), "disk", "the client never sees the internal error")

			recs := logs.records(t)[before:]
			require.Len(t, recs, 1, "one record per failed answer")
			rec := recs[0]
			assert.Equal(t, "ERROR", rec["level"])
			assert.Equal(t, tc.method, rec["method"])
			assert.Equal(t, tc.route, rec["route"])
			assert.Equal(t, tc.path, rec["path"])
			assert.Equal(t, tc.key, rec["key"])
			assert.EqualValues(t, 500, rec["status"])
			assert.Contains(t, rec["err"], "disk I/O error")
			line, _ := json.Marshal(rec)
			for _, secret := range []string{"123457", "987654", "teller-secret-7"} {
				assert.NotContains(t, string(line), secret, "the body and the other headers stay out of the log")
			}
		})
	}
}
