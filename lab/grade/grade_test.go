package grade_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/engine/httpapi"
	"idemlab/internal/stores"
	"idemlab/server"
	"idemlab/store/sqlite"
)

// bankServer serves idemlab's own bank API, every level under /bank/{level},
// on a real loopback socket.
func bankServer(t testing.TB) string {
	t.Helper()
	banks, err := stores.OpenBanks("", server.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { server.CloseBanks(banks) })
	h, err := server.New(banks, stores.Options(server.Options{}))
	require.NoError(t, err)
	t.Cleanup(h.Close)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// engineServer serves one engine's bank API at the root of a loopback
// socket (the engine itself publishes its retention at GET /); wrap, when
// not nil, goes around it to plant a bug.
func engineServer(t testing.TB, p engine.Policy, o engine.Options, wrap func(http.Handler, *sqlite.DB) http.Handler) string {
	t.Helper()
	db, err := sqlite.OpenMemory()
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	var bank http.Handler = httpapi.Handler{Engine: engine.New(db, p, o)}
	if wrap != nil {
		bank = wrap(bank, db)
	}
	srv := httptest.NewServer(bank)
	t.Cleanup(srv.Close)
	return srv.URL
}

// ladderExpectations is what grading each level of idemlab's own server
// must find broken: each rung fails exactly what the next rung fixes.
//
//   - naive pays every request: retries and simultaneous retries pay twice
//     (1), a corrected amount is paid too (2), a retry is a new answer (3).
//   - unique answers a used key with a generic "already processed": a
//     corrected amount is told success (2), a retry is not the first answer
//     (3), another customer's key hands that customer a success with no
//     transfer of theirs (4, 5), and keys live 5 minutes (7).
//   - fingerprint and in-progress refuse the correction with 422, and still
//     answer retries generically (3) with global keys (4, 5) kept 5 minutes.
//   - replay answers with the stored bytes; keys are still global (4, 5) and
//     short-lived (7).
//   - scoped breaks nothing.
var ladderExpectations = map[string][]string{
	"naive":       {"one-transfer-per-intent", "different-request-never-succeeds", "replay-is-byte-identical"},
	"unique":      {"different-request-never-succeeds", "replay-is-byte-identical", "completion-has-its-transfer", "customers-see-own-responses", "retention-outlasts-retries"},
	"fingerprint": {"replay-is-byte-identical", "completion-has-its-transfer", "customers-see-own-responses", "retention-outlasts-retries"},
	"in-progress": {"replay-is-byte-identical", "completion-has-its-transfer", "customers-see-own-responses", "retention-outlasts-retries"},
	"replay":      {"completion-has-its-transfer", "customers-see-own-responses", "retention-outlasts-retries"},
	"scoped":      nil,
}

func httpapiFor(e *engine.Engine) http.Handler { return httpapi.Handler{Engine: e} }
