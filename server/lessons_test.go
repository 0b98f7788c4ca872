package server_test

import (
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/server"
)

// A lesson that does not parse stops the server's start, with the file
// named; it is never a 500 on a student's page. A good one from the
// author's folder is served.
func TestServerRefusesToStartOnABrokenLesson(t *testing.T) {
	good := "---\nid: 01-x\nn: 1\ntitle: T\nsummary: S\nlevel: naive\n---\n\n```scenario\n" +
		`{"id":"s1","level":"naive","accounts":{},"lanes":[{"id":"A","customer":"c","body":{}}]}` + "\n```\n"
	write := func(src string) string {
		dir := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "en"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "en", "01-x.md"), []byte(src), 0o644))
		return dir
	}
	banks, err := server.OpenBanks(server.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { server.CloseBanks(banks) })

	_, err = server.New(banks, server.Options{LessonsDir: write("# no front matter\n")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "en/01-x.md")

	h, err := server.New(banks, server.Options{LessonsDir: write(good)})
	require.NoError(t, err)
	t.Cleanup(h.Close)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	resp, err := ts.Client().Get(ts.URL + "/api/lessons.json")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Contains(t, string(body), `"01-x"`)
}
