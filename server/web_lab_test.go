package server

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The lab's folder is served under /lab/: its runner with a policy of
// its own that lets it reach nothing, its page with the playground's.
func TestWebServesTheLabsRunnerLockedDown(t *testing.T) {
	dir := webDir(t, []byte("module"))
	lab := filepath.Join(dir, "lab")
	require.NoError(t, os.MkdirAll(filepath.Join(lab, "testdata"), 0o755))
	for name, text := range map[string]string{"runner.js": "// the runner\n", "test.html": "<!doctype html><title>lab</title>", "testdata/naive.js": "//\n", "idemlab.wasm.gz": "x"} {
		require.NoError(t, os.WriteFile(filepath.Join(lab, name), []byte(text), 0o644))
	}
	ts := startWeb(t, dir)

	resp, body := get(t, ts.URL+"/lab/runner.js", "")
	require.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "// the runner\n", string(body))
	assert.Equal(t, "default-src 'none'; script-src 'unsafe-eval' 'wasm-unsafe-eval'", resp.Header.Get("Content-Security-Policy"))

	resp, _ = get(t, ts.URL+"/lab/test.html", "")
	require.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, pageCSP, resp.Header.Get("Content-Security-Policy"))

	resp, _ = get(t, ts.URL+"/app.js", "")
	assert.Empty(t, resp.Header.Get("Content-Security-Policy"), "a script of the page needs none of its own")

	for _, path := range []string{"/lab/testdata/naive.js", "/lab/idemlab.wasm.gz", "/lab/nothing.js", "/other/app.js", "/lab/..%2fapp.js", "/lab/"} {
		t.Run(path, func(t *testing.T) {
			resp, _ := get(t, ts.URL+path, "")
			assert.Equal(t, 404, resp.StatusCode)
		})
	}
}
