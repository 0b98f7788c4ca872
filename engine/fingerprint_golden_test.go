package engine_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"idemlab/engine"
)

// goldenFingerprints keeps the fingerprints of a thousand valid transfer
// bodies, written every way a client may write them (any order of the
// fields, any whitespace, letters escaped in names and values, amounts from
// 1 to 2^53-1), as idemlab computed them before it wrote the canonical form
// from the parsed transfer: by canonicalizing the body's text with a
// general RFC 8785 implementation (engine/jcs.go, removed in the same
// commit as this file was added). Keys stored in existing databases carry
// those fingerprints and must still match. The file is a record: never
// regenerate it from the code it checks.
const goldenFingerprints = "testdata/fingerprints.jsonl"

type goldenFingerprint struct {
	Body        string `json:"body"`
	Canonical   string `json:"canonical"`
	Fingerprint string `json:"fingerprint"`
}

// TestFingerprintsMatchTheStoredOnes holds the canonical fingerprint of
// a thousand bodies to the one idemlab stored before (testdata), byte
// for byte.
func TestFingerprintsMatchTheStoredOnes(t *testing.T) {
	f, err := os.Open(filepath.FromSlash(goldenFingerprints))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var g goldenFingerprint
		require.NoError(t, json.Unmarshal(sc.Bytes(), &g))
		tr, prob := engine.ParseTransfer([]byte(g.Body))
		require.Nil(t, prob, g.Body)
		require.Equal(t, g.Canonical, string(tr.Canonical()), "body %q", g.Body)
		fp := engine.Fingerprint(engine.FingerprintCanonical, "POST", engine.TransfersRoute, []byte(g.Body), tr)
		require.Equal(t, g.Fingerprint, fp, "body %q", g.Body)
		n++
	}
	require.NoError(t, sc.Err())
	require.Equal(t, 1000, n)
}
