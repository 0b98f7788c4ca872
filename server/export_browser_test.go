package server_test

// The exported site (idemlab export) played from a plain file server.

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/server"
)

// TestExportedSiteWorksFromAPlainFileServer exports the playground and
// serves the folder with http.FileServer, no idemlab behind it, then plays
// the race of lesson 2 to its duplicate and lesson 2's fixed level to none.
func TestExportedSiteWorksFromAPlainFileServer(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "site")
	require.NoError(t, server.ExportSite(out, playgroundDir(t), false))
	ts := httptest.NewServer(http.FileServer(http.Dir(out)))
	t.Cleanup(ts.Close)
	ctx := tab(t)
	openLesson(t, ctx, ts.URL, "02-unique")
	openScenario(t, ctx, "s1", false)
	runToEnd(t, ctx)
	assertRuleShown(t, ctx, "#rules", "#summary", "break", "one-transfer-per-intent")
	openScenario(t, ctx, "s3", false)
	runToEnd(t, ctx)
	assertRuleShown(t, ctx, "#rules", "#summary", "hold", "one-transfer-per-intent")
}

// TestExportedLabWorksFromAPlainFileServer opens the exported lab page from
// a plain file server (no headers of idemlab's own): the naive handler is
// in the editor, goes on the bench and is stepped by the runner.
func TestExportedLabWorksFromAPlainFileServer(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "site")
	require.NoError(t, server.ExportSite(out, playgroundDir(t), false))
	ts := httptest.NewServer(http.FileServer(http.Dir(out)))
	t.Cleanup(ts.Close)
	ctx := labTab(t, ts.URL, "")
	labRunnerReady(t, ctx)
	act(t, ctx, `#btn-lab-start`)
	act(t, ctx, `#lab-lanes .lab-lane[data-attempt=a1] button.primary`)
	assert.Equal(t, "1", attr(t, ctx, "body", "data-lab-steps"))
}
