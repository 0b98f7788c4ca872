package server

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// webDir writes a playground folder with a page and, when module is not
// nil, the module's compressed copies made the way `make wasm` makes them.
func webDir(t testing.TB, module []byte) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, data []byte) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	write("index.html", []byte("<!doctype html><title>idemlab</title>"))
	write("app.js", []byte("export {};\n"))
	write("embed.go", []byte("package web\n"))
	write("idemlab.wasm.sum", []byte("0\n"))
	write("lab.html", []byte("<!doctype html><title>idemlab: your endpoint</title>"))
	write("lab.js", []byte("export {};\n"))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "lab"), 0o755))
	write("lab/runner.js", []byte("'use strict';\n"))
	write("lab/lab.js", []byte("export {};\n"))
	if module != nil {
		var gz, br bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(module)
		require.NoError(t, zw.Close())
		bw := brotli.NewWriter(&br)
		bw.Write(module)
		require.NoError(t, bw.Close())
		write("idemlab.wasm.gz", gz.Bytes())
		write("idemlab.wasm.br", br.Bytes())
		write("wasm_exec.js", []byte("// Go's loader\n"))
	}
	return dir
}

func startWeb(t testing.TB, dir string) *httptest.Server {
	t.Helper()
	banks, err := OpenBanks(Config{Open: testBanks("")})
	require.NoError(t, err)
	t.Cleanup(func() { CloseBanks(banks) })
	s, err := New(banks, testOptions(Options{WebDir: dir}))
	require.NoError(t, err)
	t.Cleanup(s.Close)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// get sends a GET with Accept-Encoding set by hand; Go's transport would
// otherwise ask for gzip itself and undo it silently.
func get(t testing.TB, url, acceptEncoding string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	require.NoError(t, err)
	req.Header.Set("Accept-Encoding", acceptEncoding)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, body
}

func TestWebServesThePageWithValidators(t *testing.T) {
	ts := startWeb(t, webDir(t, nil))

	resp, body := get(t, ts.URL+"/", "")
	require.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Contains(t, string(body), "<title>idemlab</title>")
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "'wasm-unsafe-eval'")
	etag := resp.Header.Get("ETag")
	require.NotEmpty(t, etag)
	assert.Equal(t, "no-cache", resp.Header.Get("Cache-Control"))

	again, body := get(t, ts.URL+"/", "", "If-None-Match", etag)
	assert.Equal(t, http.StatusNotModified, again.StatusCode)
	assert.Empty(t, body)

	js, _ := get(t, ts.URL+"/app.js", "")
	assert.Equal(t, 200, js.StatusCode)
	assert.Equal(t, "text/javascript; charset=utf-8", js.Header.Get("Content-Type"))
}

func TestWebRefusesWhatIsNotPartOfTheSite(t *testing.T) {
	ts := startWeb(t, webDir(t, []byte("module")))
	for _, path := range []string{"/embed.go", "/idemlab.wasm.sum", "/idemlab.wasm.br", "/idemlab.wasm.gz", "/nothing.js", "/..%2fgo.mod", "/.hidden.js"} {
		t.Run(path, func(t *testing.T) {
			resp, body := get(t, ts.URL+path, "")
			assert.Equal(t, 404, resp.StatusCode)
			assert.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
			assert.Contains(t, string(body), "/problems/not-found")
		})
	}
}

func TestWebSendsTheModuleInTheBestEncodingAccepted(t *testing.T) {
	module := bytes.Repeat([]byte("\x00asm idemlab engine module "), 4096)
	dir := webDir(t, module)
	ts := startWeb(t, dir)
	brFile, err := os.ReadFile(filepath.Join(dir, "idemlab.wasm.br"))
	require.NoError(t, err)
	gzFile, err := os.ReadFile(filepath.Join(dir, "idemlab.wasm.gz"))
	require.NoError(t, err)

	cases := []struct {
		name, accept, encoding string
		want                   []byte
	}{
		{"chromium", "gzip, deflate, br, zstd", "br", brFile},
		{"gzip only", "gzip", "gzip", gzFile},
		{"brotli refused by weight", "br;q=0, gzip;q=0.8", "gzip", gzFile},
		{"nothing", "", "", module},
		{"identity", "identity", "", module},
	}
	etags := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := get(t, ts.URL+"/idemlab.wasm", tc.accept)
			require.Equal(t, 200, resp.StatusCode)
			assert.Equal(t, "application/wasm", resp.Header.Get("Content-Type"))
			assert.Equal(t, tc.encoding, resp.Header.Get("Content-Encoding"))
			assert.Equal(t, "Accept-Encoding", resp.Header.Get("Vary"))
			assert.True(t, bytes.Equal(tc.want, body), "body is the %q representation", tc.encoding)
			if tc.encoding != "" {
				etag := resp.Header.Get("ETag")
				require.NotEmpty(t, etag)
				etags[etag] = true
				again, _ := get(t, ts.URL+"/idemlab.wasm", tc.accept, "If-None-Match", etag)
				assert.Equal(t, http.StatusNotModified, again.StatusCode)
			}
		})
	}
	assert.Len(t, etags, 2, "brotli and gzip copies have different ETags")

	exec, body := get(t, ts.URL+"/wasm_exec.js", "")
	assert.Equal(t, 200, exec.StatusCode)
	assert.Equal(t, "// Go's loader\n", string(body))
}

func TestWebSaysWhenTheModuleIsMissing(t *testing.T) {
	ts := startWeb(t, webDir(t, nil))
	for _, accept := range []string{"br", "gzip", ""} {
		resp, body := get(t, ts.URL+"/idemlab.wasm", accept)
		assert.Equal(t, 404, resp.StatusCode)
		assert.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
		assert.Contains(t, string(body), "make run")
	}
	resp, _ := get(t, ts.URL+"/wasm_exec.js", "")
	assert.Equal(t, 404, resp.StatusCode)
}

func TestWebLeavesTheOtherRoutesAlone(t *testing.T) {
	ts := startWeb(t, webDir(t, nil))
	resp, body := get(t, ts.URL+"/healthz", "")
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "ok\n", string(body))
	resp, body = get(t, ts.URL+"/bank", "")
	assert.Equal(t, 200, resp.StatusCode)
	assert.True(t, strings.Contains(string(body), `"scoped"`))
}

func TestAcceptedEncodings(t *testing.T) {
	cases := []struct {
		header   string
		br, gzip bool
	}{
		{"", false, false},
		{"gzip, deflate, br, zstd", true, true},
		{"GZIP;q=0.5, BR;Q=1", true, true},
		{"br;q=0", false, false},
		{"br;q=0.0, gzip; q=0.001", false, true},
		{"*", false, false},
		{" , ;q=1, br", true, false},
	}
	for _, tc := range cases {
		t.Run(tc.header, func(t *testing.T) {
			got := acceptedEncodings(tc.header)
			assert.Equal(t, tc.br, got["br"])
			assert.Equal(t, tc.gzip, got["gzip"])
		})
	}
}

func TestWebServesTheLessons(t *testing.T) {
	ts := startWeb(t, webDir(t, nil))
	resp, body := get(t, ts.URL+"/api/lessons.json", "")
	require.Equal(t, 200, resp.StatusCode)
	var index []struct {
		ID    string   `json:"id"`
		Langs []string `json:"langs"`
	}
	require.NoError(t, json.Unmarshal(body, &index))
	require.NotEmpty(t, index)
	resp, body = get(t, ts.URL+"/api/lessons/"+index[0].ID+".en.json", "")
	require.Equal(t, 200, resp.StatusCode)
	assert.Contains(t, string(body), `"scenarios"`)
	resp, _ = get(t, ts.URL+"/api/lessons/no-such-lesson.en.json", "")
	assert.Equal(t, 404, resp.StatusCode)
}

// TestWebServesTheLabAPIInEachLanguage: the lab page's API reference is
// the API sections of docs/lab-handler.md, or of lab-handler.ko.md for the
// Korean page, rendered, with the same headers in either language.
func TestWebServesTheLabAPIInEachLanguage(t *testing.T) {
	ts := startWeb(t, webDir(t, nil))
	for name, tc := range map[string]struct {
		path, first, next string
	}{
		"English": {"/api/lab/api.html", "<h2>The file</h2>", "Running it for real"},
		"Korean":  {"/api/lab/api.ko.html", "<h2>파일</h2>", "실제로 실행하기"},
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := get(t, ts.URL+tc.path, "")
			require.Equal(t, 200, resp.StatusCode)
			assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
			assert.Equal(t, "no-cache", resp.Header.Get("Cache-Control"))
			assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
			assert.True(t, strings.HasPrefix(string(body), tc.first), "starts at the section on the file")
			assert.Contains(t, string(body), "<code>db.run(sql, ...params)</code>", "the code as in the English")
			assert.NotContains(t, string(body), tc.next, "only the API sections")
		})
	}
}

func TestExportWritesAStaticSite(t *testing.T) {
	module := bytes.Repeat([]byte("\x00asm exported module "), 1024)
	out := filepath.Join(t.TempDir(), "site")
	require.NoError(t, ExportSite(out, webDir(t, module), false))

	ts := httptest.NewServer(http.FileServer(http.Dir(out)))
	t.Cleanup(ts.Close)
	resp, body := get(t, ts.URL+"/", "")
	require.Equal(t, 200, resp.StatusCode)
	assert.Contains(t, string(body), "<title>idemlab</title>")
	resp, body = get(t, ts.URL+"/idemlab.wasm", "")
	require.Equal(t, 200, resp.StatusCode)
	assert.True(t, bytes.Equal(module, body), "the raw module is written for hosts that cannot negotiate")
	for _, path := range []string{"/idemlab.wasm.br", "/idemlab.wasm.gz", "/wasm_exec.js", "/app.js", "/api/lessons.json",
		"/lab.html", "/lab.js", "/lab/runner.js", "/lab/lab.js", "/api/lab/start.js", "/api/lab/start.ko.js", "/api/lab/api.html", "/api/lab/api.ko.html", "/api/lab/rules.json"} {
		resp, _ := get(t, ts.URL+path, "")
		assert.Equal(t, 200, resp.StatusCode, path)
	}
	// The lab's API reference, rendered from docs/lab-handler.md.
	_, body = get(t, ts.URL+"/api/lab/api.html", "")
	assert.Contains(t, string(body), "<code>db.run(sql, ...params)</code>")
	assert.NotContains(t, string(body), "Running it for real", "only the API sections")
	_, body = get(t, ts.URL+"/api/lab/api.ko.html", "")
	assert.Contains(t, string(body), "<h2>파일</h2>", "the Korean, from docs/lab-handler.ko.md")
	assert.Contains(t, string(body), "<code>db.run(sql, ...params)</code>")
	var index []struct {
		ID string `json:"id"`
	}
	_, body = get(t, ts.URL+"/api/lessons.json", "")
	require.NoError(t, json.Unmarshal(body, &index))
	require.NotEmpty(t, index)
	for _, l := range index {
		resp, _ := get(t, ts.URL+"/api/lessons/"+l.ID+".en.json", "")
		assert.Equal(t, 200, resp.StatusCode, l.ID)
	}
	for _, name := range []string{"embed.go", "idemlab.wasm.sum"} {
		_, err := os.Stat(filepath.Join(out, name))
		assert.True(t, os.IsNotExist(err), "%s stays out of the site", name)
	}
}

func TestExportRefusesWithoutTheModule(t *testing.T) {
	err := ExportSite(filepath.Join(t.TempDir(), "site"), webDir(t, nil), false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "make wasm")
}
