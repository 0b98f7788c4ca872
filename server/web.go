package server

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"idemlab/docs"
	"idemlab/engine"
	"idemlab/engine/httpapi"
	"idemlab/lab"
	"idemlab/lab/handlers"
	"idemlab/lessons"
	"idemlab/web"
)

// mountWeb serves the playground: the page at /, its files beside it, the
// lessons as JSON under /api/, and the engine's WebAssembly module
// compressed. With a webDir (Options.WebDir) the files come from that
// folder on every request, so a page author sees an edit on reload without
// rebuilding. The lessons were rendered and checked at start-up.
func mountWeb(mux *http.ServeMux, webDir string, lessonsAPI http.Handler) {
	site := &webSite{fsys: web.FS(webDir), etags: map[string]etagEntry{}}
	mux.Handle("GET /{$}", site)
	mux.Handle("GET /{name}", site)
	mux.Handle("GET /lab/{name}", site)
	// The lessons arrive as JSON at the same paths the static export
	// writes, so the page does not care which of the two serves it.
	mux.Handle("GET /api/lessons.json", lessonsAPI)
	mux.Handle("GET /api/lessons/", lessonsAPI)
	mux.HandleFunc("GET "+labStartPath, serveLabStart(""))
	mux.HandleFunc("GET "+labStartPathKo, serveLabStart("ko"))
	for _, api := range labAPIs {
		mux.HandleFunc("GET "+api.path, api.serve)
	}
	mux.HandleFunc("GET "+labRulesPath, serveLabRules)
}

// labRulesPath is where the lab page finds the rules the checker judges
// (lab.Rules: number, name, title in English and Korean), to list them
// beside the race. The static export writes it at the same path.
const labRulesPath = "/api/lab/rules.json"

func labRulesJSON() []byte {
	b, _ := json.Marshal(lab.Rules())
	return b
}

func serveLabRules(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(labRulesJSON())
}

// labAPI is the lab's API reference (req, db, pay, lab) in one language:
// docs/lab-handler.md's API sections (lab-handler.ko.md's in Korean)
// rendered to HTML, and the path where the lab page finds it. The static
// export writes it at the same path.
type labAPI struct {
	lang, path string
	html       func() ([]byte, error)
}

// labAPIs are the languages the reference is written in.
var labAPIs = []labAPI{
	{"en", "/api/lab/api.html", sync.OnceValues(func() ([]byte, error) { return renderLabAPI("en") })},
	{"ko", "/api/lab/api.ko.html", sync.OnceValues(func() ([]byte, error) { return renderLabAPI("ko") })},
}

func (a labAPI) serve(w http.ResponseWriter, r *http.Request) {
	page, err := a.html()
	if err != nil {
		httpapi.Write(w, engine.CauseInternal.Problem("the lab's API reference is missing from this build").Response())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(page)
}

// renderLabAPI renders the API sections of lab-handler.md in lang: goldmark
// without its unsafe option, so no raw HTML of the file reaches the page.
func renderLabAPI(lang string) ([]byte, error) {
	src, err := docs.HandlerAPI(lang)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.Table)).Convert(src, &out); err != nil {
		return nil, fmt.Errorf("lab API (%s): %w", lang, err)
	}
	return out.Bytes(), nil
}

// labStartPath is where the lab page finds the handler a student starts
// from: the naive rung, the file `idemlab lab handler naive` writes. Only
// that one: the page gives the rungs' goals and hints, never their code.
// labStartPathKo is the same code with its comments in Korean, for the
// Korean page (handlers.Start). The static export writes both at the same
// paths.
const (
	labStartPath   = "/api/lab/start.js"
	labStartPathKo = "/api/lab/start.ko.js"
)

func serveLabStart(lang string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		src, err := handlers.Start(lang)
		if err != nil {
			httpapi.Write(w, engine.CauseInternal.Problem("the lab's naive handler is missing from this build").Response())
			return
		}
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Write(src)
	}
}

// webSite serves the files of web.FS. It is safe for concurrent use.
type webSite struct {
	fsys fs.FS

	mu    sync.Mutex
	etags map[string]etagEntry
}

// etagEntry caches a file's content hash until its size or time changes
// (they never do for the embedded copy).
type etagEntry struct {
	size int64
	mod  time.Time
	etag string
}

func (ws *webSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The name comes from the path, not r.PathValue: Server.ServeHTTP
	// dispatches through mux.Handler, which does not set path values.
	name := strings.TrimPrefix(r.URL.Path, "/")
	if name == "" {
		name = "index.html"
	}
	if name == web.ModuleName {
		ws.serveModule(w, r)
		return
	}
	if name == web.EditorName {
		ws.serveCompressed(w, r, name)
		return
	}
	if dir, rest, ok := strings.Cut(name, "/"); ok {
		// The one folder served: the lab's runner and its page.
		if dir != web.LabDir || !web.Servable(rest) || strings.HasPrefix(rest, web.ModuleName) || !ws.serveFile(w, r, name, "") {
			httpapi.Write(w, engine.CauseNotFound.Problem("no such file in the playground").Response())
		}
		return
	}
	if !web.Servable(name) || name == web.ModuleBrotli || name == web.ModuleGzip {
		httpapi.Write(w, engine.CauseNotFound.Problem("no such file in the playground").Response())
		return
	}
	if !ws.serveFile(w, r, name, "") {
		httpapi.Write(w, engine.CauseNotFound.Problem("no such file in the playground").Response())
	}
}

// serveModule sends the module in the best encoding the browser accepts:
// brotli (about 2.8 MB), else gzip (about 4 MB), else the raw module,
// decompressed on the fly when only the gzip copy exists. Each encoding has
// its own ETag, and Vary tells caches that the answer depends on
// Accept-Encoding.
func (ws *webSite) serveModule(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Vary", "Accept-Encoding")
	accepts := acceptedEncodings(r.Header.Get("Accept-Encoding"))
	if accepts["br"] && ws.serveFile(w, r, web.ModuleBrotli, "br") {
		return
	}
	if accepts["gzip"] && ws.serveFile(w, r, web.ModuleGzip, "gzip") {
		return
	}
	if ws.serveFile(w, r, web.ModuleName, "") {
		return
	}
	f, err := ws.fsys.Open(web.ModuleGzip)
	if err != nil {
		// The page's worker reads this status and tells the learner how to
		// build the module.
		p := engine.CauseNotFound.Problem("the engine module is missing: run make run (or make wasm) to build it")
		httpapi.Write(w, p.Response())
		return
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		httpapi.Write(w, engine.CauseInternal.Problem("the engine module's gzip copy is damaged: run make wasm").Response())
		return
	}
	w.Header().Set("Content-Type", "application/wasm")
	w.Header().Set("Cache-Control", "no-cache")
	io.Copy(w, zr)
}

// serveCompressed sends a file that `make` precompressed (the lab's code
// editor) in the best encoding the browser accepts, else as it is.
func (ws *webSite) serveCompressed(w http.ResponseWriter, r *http.Request, name string) {
	w.Header().Set("Vary", "Accept-Encoding")
	accepts := acceptedEncodings(r.Header.Get("Accept-Encoding"))
	if accepts["br"] && ws.serveFile(w, r, name+".br", "br") {
		return
	}
	if accepts["gzip"] && ws.serveFile(w, r, name+".gz", "gzip") {
		return
	}
	if !ws.serveFile(w, r, name, "") {
		httpapi.Write(w, engine.CauseNotFound.Problem("the lab's code editor is not built: run make run (or make editor)").Response())
	}
}

// serveFile sends one file with a content-hash ETag and "no-cache", which
// makes browsers revalidate (a 304 costs one round trip) and never run a
// stale engine after an upgrade. It returns false when the file is absent.
func (ws *webSite) serveFile(w http.ResponseWriter, r *http.Request, name, encoding string) bool {
	f, err := ws.fsys.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || info.IsDir() {
		return false
	}
	rs, ok := f.(io.ReadSeeker)
	if !ok {
		return false
	}
	etag, err := ws.etag(name, info, rs)
	if err != nil {
		httpapi.Write(w, engine.CauseInternal.Problem("reading a playground file failed").Response())
		return true
	}
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	if encoding != "" {
		h.Set("Content-Encoding", encoding)
		h.Set("Content-Type", contentType(strings.TrimSuffix(name, path.Ext(name))))
	} else {
		h.Set("Content-Type", contentType(name))
	}
	switch {
	case name == web.LabRunner:
		// The worker that runs a student's own handler reaches nothing:
		// no network, no script from anywhere, only the evaluation of
		// the student's file and of the engine's module, which the page
		// hands it (web/lab/runner.js says why this and not an iframe).
		// A dedicated worker loaded from a URL is governed by this
		// header, not by the page's policy.
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-eval' 'wasm-unsafe-eval'")
	case name == "index.html" || strings.HasPrefix(name, web.LabDir+"/") && strings.HasSuffix(name, ".html"):
		// The page runs only its own scripts; the lesson HTML it shows is
		// rendered from markdown with raw HTML refused. 'wasm-unsafe-eval'
		// is what compiling the engine's module needs.
		h.Set("Content-Security-Policy", pageCSP)
	case name == "lab.html":
		// The lab page likewise; its code editor writes its own styles
		// into the page as it starts (CodeMirror's themes), which
		// style-src 'self' alone refuses. The page shows no HTML from
		// anyone: the student's code is text in the editor.
		h.Set("Content-Security-Policy", strings.Replace(pageCSP, "style-src 'self'", "style-src 'self' 'unsafe-inline'", 1))
	}
	// The modification time is left out on purpose: embedded files have
	// none, and the ETag alone decides freshness.
	http.ServeContent(w, r, name, time.Time{}, rs)
	return true
}

// pageCSP is the playground's pages' policy.
const pageCSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'self'"

// etag returns the quoted SHA-256 prefix of a file's content, cached by
// name, size and modification time.
func (ws *webSite) etag(name string, info fs.FileInfo, rs io.ReadSeeker) (string, error) {
	ws.mu.Lock()
	e, ok := ws.etags[name]
	ws.mu.Unlock()
	if ok && e.size == info.Size() && e.mod.Equal(info.ModTime()) {
		return e.etag, nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, rs); err != nil {
		return "", fmt.Errorf("hash %s: %w", name, err)
	}
	if _, err := rs.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("rewind %s: %w", name, err)
	}
	tag := `"` + hex.EncodeToString(h.Sum(nil)[:12]) + `"`
	ws.mu.Lock()
	ws.etags[name] = etagEntry{size: info.Size(), mod: info.ModTime(), etag: tag}
	ws.mu.Unlock()
	return tag, nil
}

func contentType(name string) string {
	switch {
	case strings.HasSuffix(name, ".html"):
		return "text/html; charset=utf-8"
	case strings.HasSuffix(name, ".css"):
		return "text/css; charset=utf-8"
	case strings.HasSuffix(name, ".js"):
		return "text/javascript; charset=utf-8"
	case strings.HasSuffix(name, ".json"):
		return "application/json"
	case strings.HasSuffix(name, ".svg"):
		return "image/svg+xml"
	case strings.HasSuffix(name, ".png"):
		return "image/png"
	case strings.HasSuffix(name, ".ico"):
		return "image/x-icon"
	case strings.HasSuffix(name, ".wasm"):
		return "application/wasm"
	}
	return "text/plain; charset=utf-8"
}

// acceptedEncodings parses Accept-Encoding (RFC 9110 §12.5.3) into the set
// of codings with a non-zero weight. "*" is not expanded: a client that
// names nothing specific gets the raw module, which every client can read.
func acceptedEncodings(header string) map[string]bool {
	out := map[string]bool{}
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding == "" {
			continue
		}
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		out[coding] = q > 0
	}
	return out
}

// ExportSite writes the playground as a static site into dir: the page and
// its files, the module raw and precompressed (idemlab.wasm, .br, .gz, for
// hosts that serve precompressed files), wasm_exec.js, and the lessons as
// JSON at the paths the server uses (api/lessons.json,
// api/lessons/ID.LANG.json). Any static file host can then serve it with
// no idemlab behind it. webDir is Options.WebDir: "" for the embedded copy.
//
// The site is written into a new temporary folder first, then moved into
// dir by renames (export.go): dir never holds a half-written file, no
// symbolic link in it is followed, and a dir that holds anything is
// refused unless force says the files may be replaced.
func ExportSite(dir, webDir string, force bool) error {
	fsys := web.FS(webDir)
	if err := requireModule(fsys); err != nil {
		return err
	}
	final := dir
	if err := checkExportDir(final, force); err != nil {
		return err
	}
	parent := filepath.Dir(filepath.Clean(final))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	dir, err := os.MkdirTemp(parent, ".idemlab-export-*")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return fmt.Errorf("export: list the playground: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() || !web.Servable(e.Name()) {
			continue
		}
		if err := copyOut(fsys, e.Name(), filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	// The lab's runner and its module, in their folder. A plain host sends
	// the runner without its Content-Security-Policy; the runner locks the
	// network and storage away itself (web/lab/runner.js).
	labEntries, err := fs.ReadDir(fsys, web.LabDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("export: list the lab's runner: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, web.LabDir), 0o755); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	for _, e := range labEntries {
		if e.IsDir() || !web.Servable(e.Name()) {
			continue
		}
		if err := copyOut(fsys, web.LabDir+"/"+e.Name(), filepath.Join(dir, web.LabDir, e.Name())); err != nil {
			return err
		}
	}
	if _, err := fs.Stat(fsys, web.ModuleName); err != nil {
		// Only the compressed copies are embedded; a plain host needs the
		// module itself too.
		if err := gunzipOut(fsys, web.ModuleGzip, filepath.Join(dir, web.ModuleName)); err != nil {
			return err
		}
	}
	set, err := lessons.Embedded()
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := set.WriteFiles(filepath.Join(dir, "api")); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "api", "lab"), 0o755); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	for lang, path := range map[string]string{"": labStartPath, "ko": labStartPathKo} {
		start, err := handlers.Start(lang)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if err := writeOut(bytes.NewReader(start), filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(path, "/")))); err != nil {
			return err
		}
	}
	for _, api := range labAPIs {
		page, err := api.html()
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if err := writeOut(bytes.NewReader(page), filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(api.path, "/")))); err != nil {
			return err
		}
	}
	if err := writeOut(bytes.NewReader(labRulesJSON()), filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(labRulesPath, "/")))); err != nil {
		return err
	}
	return placeSite(dir, final)
}

// requireModule refuses to export a site whose engine was never built: it
// would load and then say so to every student.
func requireModule(fsys fs.FS) error {
	_, rawErr := fs.Stat(fsys, web.ModuleName)
	_, gzErr := fs.Stat(fsys, web.ModuleGzip)
	if rawErr != nil && gzErr != nil {
		return fmt.Errorf("export: %s is missing: build the engine module first (make wasm)", web.ModuleName)
	}
	if _, err := fs.Stat(fsys, web.WasmExec); err != nil {
		return fmt.Errorf("export: %s is missing: build the engine module first (make wasm)", web.WasmExec)
	}
	return nil
}

func copyOut(fsys fs.FS, name, dst string) error {
	src, err := fsys.Open(name)
	if err != nil {
		return fmt.Errorf("export %s: %w", name, err)
	}
	defer src.Close()
	return writeOut(src, dst)
}

func gunzipOut(fsys fs.FS, name, dst string) error {
	src, err := fsys.Open(name)
	if err != nil {
		return fmt.Errorf("export %s: %w", name, err)
	}
	defer src.Close()
	zr, err := gzip.NewReader(src)
	if err != nil {
		return fmt.Errorf("export %s: %w", name, err)
	}
	return writeOut(zr, dst)
}

func writeOut(r io.Reader, dst string) error {
	f, err := os.Create(dst)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return fmt.Errorf("export %s: %w", dst, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("export %s: %w", dst, err)
	}
	return nil
}
