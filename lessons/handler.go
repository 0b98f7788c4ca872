package lessons

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"

	"idemlab/engine"
	"idemlab/engine/httpapi"
)

// Handler serves the embedded lessons as JSON:
//
//	GET /api/lessons.json              the index, in order
//	GET /api/lessons/{id}.{lang}.json  one lesson in one language
//
// Mount it at /api/lessons.json and /api/lessons/. The lessons are loaded
// and encoded once; a lesson that fails to load makes every request a 500
// problem, which the content tests catch long before a student does.
func Handler() http.Handler {
	s, err := Embedded()
	return newHandler(s, err)
}

// Handler serves this set; see the package-level Handler.
func (s *Set) Handler() http.Handler { return newHandler(s, nil) }

type handler struct {
	err   error
	files map[string][]byte // path below /api/ → JSON
	etags map[string]string
}

func newHandler(s *Set, err error) http.Handler {
	h := &handler{err: err, files: map[string][]byte{}, etags: map[string]string{}}
	if err != nil {
		return h
	}
	add := func(name string, v any) {
		b, merr := json.Marshal(v)
		if merr != nil {
			h.err = merr
			return
		}
		sum := sha256.Sum256(b)
		h.files[name], h.etags[name] = b, `"`+hex.EncodeToString(sum[:8])+`"`
	}
	add("lessons.json", s.Index())
	for _, l := range s.All() {
		add("lessons/"+l.ID+"."+l.Lang+".json", l)
	}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		resp := engine.CauseMethodNotAllowed.Problem("lessons are read with GET").Response()
		resp.Header = append(resp.Header, engine.Header{Name: "Allow", Value: "GET, HEAD"})
		httpapi.Write(w, resp)
		return
	}
	if h.err != nil {
		httpapi.Write(w, engine.CauseInternal.Problem("the lessons failed to load").Response())
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, "/api/")
	b, found := h.files[name]
	if !ok || !found {
		httpapi.Write(w, engine.CauseNotFound.Problem("no such lesson; GET /api/lessons.json lists them").Response())
		return
	}
	etag := h.etags[name]
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "no-cache")
	if match := r.Header.Get("If-None-Match"); match != "" && match == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}
