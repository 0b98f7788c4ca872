// Package web holds the playground's browser side: the page, its
// stylesheet and JavaScript modules, and, once `make wasm` has built it, the
// engine compiled to WebAssembly (idemlab.wasm.br and idemlab.wasm.gz, with
// Go's wasm_exec.js). There is no JavaScript build step: the files served
// are the files in this folder.
package web

import (
	"embed"
	"io/fs"
	"os"
	"path"
	"strings"
)

// Files is the playground as embedded at build time. The pattern matches
// the whole folder, so the build never fails when the WebAssembly module has
// not been built yet; the server then answers with "module missing" and the
// page says how to build it. Go sources come along and are never served.
//
//go:embed *
var Files embed.FS

// Module names: the compressed copies are what the server sends; the raw
// module is written only by export, for hosts that cannot negotiate.
const (
	ModuleName   = "idemlab.wasm"
	ModuleBrotli = ModuleName + ".br"
	ModuleGzip   = ModuleName + ".gz"
	WasmExec     = "wasm_exec.js"
	// EditorName is the lab page's code editor, bundled by `make editor`
	// from web/src/editor.js and precompressed beside it like the module.
	EditorName = "editor.js"
)

// The lab's runtime lives in one folder, served under /lab/: LabRunner is
// the worker that runs a student's own handler, sent with a policy of
// its own (server/web.go).
const (
	LabDir    = "lab"
	LabRunner = LabDir + "/runner.js"
)

// Servable reports whether name, a file at the top of the playground's
// folder, is part of the site: the page, its styles, scripts, images and
// the compressed module. Go sources, checksums and hidden files are not.
func Servable(name string) bool {
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return false
	}
	switch path.Ext(name) {
	case ".html", ".css", ".js", ".svg", ".png", ".ico", ".txt", ".wasm":
		return true
	}
	return name == ModuleBrotli || name == ModuleGzip
}

// FS returns the playground's files: the folder dir when it is not empty
// (a developer editing the page without rebuilding), else the embedded copy.
func FS(dir string) fs.FS {
	if dir != "" {
		return os.DirFS(dir)
	}
	return Files
}
