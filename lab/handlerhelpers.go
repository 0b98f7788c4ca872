package lab

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/gowebpki/jcs"

	"idemlab/engine"
)

// HandlerHelper runs one of the helpers a student's handler gets as
// lab.* (docs/lab-handler.md) on its argument: parseKey, parseTransfer,
// canonical, sha256. They are the engine's own (the key's parser, the
// transfer's validation, the canonical form), so that the student's
// handler and idemlab's agree on what a key and a valid body are. ok is
// false for an unknown helper; a nil value is the helper's null.
func HandlerHelper(name, arg string) (value any, ok bool) {
	switch name {
	case "parseKey":
		if k, p := engine.ParseKey([]string{arg}); p == nil {
			return k, true
		}
		return nil, true
	case "parseTransfer":
		if t, p := engine.ParseTransfer([]byte(arg)); p == nil {
			return t, true
		}
		return nil, true
	case "canonical":
		if t, p := engine.ParseTransfer([]byte(arg)); p == nil {
			return string(t.Canonical()), true
		}
		if b, err := jcs.Transform([]byte(arg)); err == nil {
			return string(b), true
		}
		return nil, true
	case "sha256":
		sum := sha256.Sum256([]byte(arg))
		return hex.EncodeToString(sum[:]), true
	}
	return nil, false
}
