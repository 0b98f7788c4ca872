package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"idemlab/internal/endpointtest"
)

// TestGradeExitStatus: a CI job tells the grade's outcomes apart by its
// exit status: 0 when every rule holds and every check is ok, 1 when a
// rule is broken, 3 when only checks warn, 2 when there is no grade (no
// URL, an endpoint that cannot be reached). Every report says what it
// cannot judge over HTTP.
func TestGradeExitStatus(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	base, level := studentEndpoint(t)
	grade := func(args ...string) (int, string) {
		t.Helper()
		out, _, err := runCmd(t, append([]string{"grade", "--seed", "7", "--intents", "40", "--no-history"}, args...)...)
		if err == nil {
			return 0, out
		}
		return exitStatus(err), out
	}

	level.Store("scoped")
	status, out := grade(base)
	assert.Equal(t, 0, status, out)
	assert.Contains(t, out, "Not judged over HTTP: what a crash of the endpoint's process leaves behind.")

	level.Store("unique")
	status, out = grade(base)
	assert.Equal(t, 1, status, "a rule broken")
	assert.Contains(t, out, "Not judged over HTTP")

	// scoped, its replays stripped of Idempotent-Replayed by a proxy: no
	// rule breaks, and checks warn.
	level.Store("scoped")
	stripped := endpointtest.WithoutHeaders(t, base, "Idempotent-Replayed")
	status, out = grade(stripped)
	assert.Equal(t, 3, status, out)
	assert.Contains(t, out, "lacks the header Idempotent-Replayed")

	closed := httptest.NewServer(http.NotFoundHandler())
	gone := closed.URL
	closed.Close()
	status, _ = grade(gone)
	assert.Equal(t, 2, status, "an endpoint that cannot be reached")
	status, _ = grade()
	assert.Equal(t, 2, status, "no URL")
}
