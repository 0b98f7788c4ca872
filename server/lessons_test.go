package server_test

import (
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/internal/stores"
	"idemlab/server"
)

// A lesson that does not parse stops the server's start, with the file
// named; it is never a 500 on a student's page. A good one from the
// author's folder is served, and an edit shows on the next request.
func TestServerRefusesToStartOnABrokenLesson(t *testing.T) {
	good := "---\nid: 01-x\nn: 1\ntitle: T\nsummary: S\nlevel: naive\n---\n\n```scenario\n" +
		`{"id":"s1","level":"naive","accounts":{},"lanes":[{"id":"A","customer":"c","body":{}}]}` + "\n```\n"
	write := func(src string) string {
		dir := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "en"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "en", "01-x.md"), []byte(src), 0o644))
		return dir
	}
	banks, err := stores.OpenBanks("", server.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { server.CloseBanks(banks) })

	_, err = server.New(banks, stores.Options(server.Options{LessonsDir: write("# no front matter\n")}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "en/01-x.md")

	dir := write(good)
	h, err := server.New(banks, stores.Options(server.Options{LessonsDir: dir}))
	require.NoError(t, err)
	t.Cleanup(h.Close)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	index := func() (int, string) {
		resp, err := ts.Client().Get(ts.URL + "/api/lessons.json")
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(body)
	}
	status, body := index()
	assert.Equal(t, 200, status)
	assert.Contains(t, string(body), `"01-x"`)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "en", "01-x.md"), []byte(strings.Replace(good, "title: T", "title: Edited", 1)), 0o644))
	status, body = index()
	assert.Equal(t, 200, status)
	assert.Contains(t, body, `"Edited"`, "the author's edit shows without a restart")
}
