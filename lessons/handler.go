package lessons

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"idemlab/engine"
	"idemlab/engine/httpapi"
)

// Handler serves the set's lessons as JSON:
//
//	GET /api/lessons.json              the index, in order
//	GET /api/lessons/{id}.{lang}.json  one lesson in one language
//
// Mount it at /api/lessons.json and /api/lessons/. The lessons are encoded
// once, here: an error stops the server's start, never a student's page.
func (s *Set) Handler() (http.Handler, error) {
	h := &handler{files: map[string][]byte{}, etags: map[string]string{}}
	add := func(name string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("lessons: encode %s: %w", name, err)
		}
		sum := sha256.Sum256(b)
		h.files[name], h.etags[name] = b, `"`+hex.EncodeToString(sum[:8])+`"`
		return nil
	}
	if err := add("lessons.json", s.Index()); err != nil {
		return nil, err
	}
	for _, l := range s.All() {
		if err := add("lessons/"+l.ID+"."+l.Lang+".json", l); err != nil {
			return nil, err
		}
	}
	return h, nil
}

type handler struct {
	files map[string][]byte // path below /api/ → JSON
	etags map[string]string
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		resp := engine.CauseMethodNotAllowed.Problem("lessons are read with GET").Response()
		resp.Header = append(resp.Header, engine.Header{Name: "Allow", Value: "GET, HEAD"})
		httpapi.Write(w, resp)
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
