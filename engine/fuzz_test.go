package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"idemlab/engine"
)

// FuzzParseKey: whatever the header holds, the parser either refuses it
// with a 400 problem or returns 1 to 255 printable ASCII characters.
func FuzzParseKey(f *testing.F) {
	for _, s := range []string{`"k"`, `"8e03978e-40d5-43e8-bc93-6894a57f9324"`, `k`, `""`, `"a";p=1`, `"a", "b"`,
		`"\"quoted\""`, `"` + strings.Repeat("x", 255) + `"`, `"` + strings.Repeat("x", 256) + `"`, "\"a\x00b\"", `?1`, `:YWJj:`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		key, prob := engine.ParseKey([]string{header})
		if prob != nil {
			if prob.Status != 400 {
				t.Fatalf("status %d for %q", prob.Status, header)
			}
			return
		}
		if len(key) < 1 || len(key) > engine.MaxKeyLen {
			t.Fatalf("accepted key of length %d from %q", len(key), header)
		}
		for i := 0; i < len(key); i++ {
			if key[i] < 0x20 || key[i] > 0x7e {
				t.Fatalf("accepted a non-printable byte %#x from %q", key[i], header)
			}
		}
	})
}

// FuzzTransferBody: a body is either refused with a 4xx problem, or it is a
// valid transfer whose canonical fingerprint does not change when the same
// object is written another way.
func FuzzTransferBody(f *testing.F) {
	for _, s := range []string{`{"from":"alice","to":"bob","amount":200000}`, `{"amount":1,"to":"b","from":"a"}`,
		`{"from":"a","to":"b","amount":1e3}`, `{"from":"a","to":"b","amount":-1}`, `{"from":"a","to":"b","amount":"1"}`,
		`{"from":"a","from":"b","to":"c","amount":1}`, `[`, `{"from":"a\u0000","to":"b","amount":1}`, "{\"from\":\"\xff\"}",
		`{"from":"a","to":"b","amount":9007199254740992}`, `{"from":"a","to":"b","amount":1}   `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		tr, prob := engine.ParseTransfer(body)
		if prob != nil {
			if prob.Status < 400 || prob.Status >= 500 {
				t.Fatalf("status %d for %q", prob.Status, body)
			}
			return
		}
		if tr.Amount <= 0 || tr.Amount > engine.MaxAmount || tr.From == tr.To || !engine.ValidAccountID(tr.From) || !engine.ValidAccountID(tr.To) {
			t.Fatalf("accepted an invalid transfer %+v from %q", tr, body)
		}
		fp := engine.Fingerprint(engine.FingerprintCanonical, "POST", "/transfers", body, tr)
		again, _ := json.MarshalIndent(map[string]any{"to": tr.To, "amount": tr.Amount, "from": tr.From}, "", "   ")
		tr2, prob := engine.ParseTransfer(again)
		if prob != nil {
			t.Fatalf("the same transfer written as %s is refused: %v", again, prob)
		}
		if fp2 := engine.Fingerprint(engine.FingerprintCanonical, "POST", "/transfers", again, tr2); fp2 != fp {
			t.Fatalf("the same transfer written as %s has another fingerprint than %q", again, body)
		}
	})
}
