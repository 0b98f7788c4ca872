package engine

import (
	"bytes"
	"testing"
	"time"

	"github.com/gowebpki/jcs"
)

// FuzzCanonicalFlat holds the fast canonical form to the general path
// (canonicalJSON) and to an independent RFC 8785 implementation
// (github.com/gowebpki/jcs, used by tests only): whenever the fast path
// answers, its bytes are exactly theirs; when it declines, the general
// path decides alone.
func FuzzCanonicalFlat(f *testing.F) {
	for _, s := range []string{
		`{"from":"alice","to":"bob","amount":200000}`,
		`{ "amount" : 200000 , "to":"bob",   "from":"alice" }`,
		"{\n\t\"to\": \"b\",\r\n\"from\": \"a\", \"amount\": 1\n}\n",
		`{}`, ` { } `, `{"a":0}`, `{"a":-0}`, `{"a":-5}`, `{"a":007}`, `{"a":1.0}`, `{"a":1e3}`, `{"a":1E3}`,
		`{"a":123456789012345}`, `{"a":1234567890123456}`, `{"a":9007199254740993}`,
		`{"a":"x\"y"}`, `{"a":"x\\y"}`, `{"a":"\u00e9"}`, `{"a":"é"}`, "{\"a\":\"\x7f\"}", `{"a":"/"}`,
		`{"b":1,"a":2,"B":3,"_":4,"~":5}`, `{"a":1,"a":2}`, `{"a":{"b":1}}`, `{"a":[1]}`, `{"a":true}`, `{"a":null}`,
		`{"a":1,}`, `{"a" 1}`, `{"a":1}x`, `{"a":1}{}`, `[]`, `"s"`, ``, `{`, `{"a":1-2}`, `{"a":1true}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fast, ok := canonicalFlat(body)
		if !ok {
			return
		}
		general, err := canonicalJSON(body)
		if err != nil {
			t.Fatalf("fast path accepted %q, the general path refuses it: %v", body, err)
		}
		if !bytes.Equal(fast, general) {
			t.Fatalf("%q: fast %s, general %s", body, fast, general)
		}
		other, err := jcs.Transform(body)
		if err != nil || !bytes.Equal(fast, other) {
			t.Fatalf("%q: fast %s, the other implementation %s (%v)", body, fast, other, err)
		}
	})
}

// The bodies the bank API sees every day take the fast path.
func TestCanonicalFlatTakesTheTransferBodies(t *testing.T) {
	for _, body := range []string{
		`{"from":"alice","to":"bob","amount":200000}`,
		`{"amount": 300000, "to": "shop-7", "from": "teller_2.kr"}`,
		"{\n  \"from\": \"a\",\n  \"to\": \"b\",\n  \"amount\": 1\n}\n",
	} {
		c, ok := canonicalFlat([]byte(body))
		if !ok {
			t.Fatalf("%s: not taken by the fast path", body)
		}
		general, err := jcs.Transform([]byte(body))
		if err != nil || !bytes.Equal(c, general) {
			t.Fatalf("%s: fast %s, general %s (%v)", body, c, general, err)
		}
	}
}

// RenderTransfer's hand-written body is byte for byte what encoding/json
// writes, for plain account ids and for ids it must escape.
func TestRenderTransferMatchesEncodingJSON(t *testing.T) {
	for _, tr := range []Transfer{
		{ID: "tr_000001", From: "alice", To: "bob", Amount: 200000, BalanceAfter: 800000, CreatedAt: 1772442000123},
		{ID: "tr_999999", From: "teller_2.kr", To: "shop-7", Amount: MaxAmount, BalanceAfter: 0, CreatedAt: 0},
		{ID: "tr_1", From: "a<b>&c", To: "\"q\"\\", Amount: 1, BalanceAfter: -1, CreatedAt: -1},
		{ID: "tr_2", From: "é", To: "\x01\x7f", Amount: 1, BalanceAfter: 1, CreatedAt: 253402300799999},
	} {
		got := RenderTransfer(tr)
		want := jsonResponse(201, transferJSON{TransferID: tr.ID, From: tr.From, To: tr.To, Amount: tr.Amount,
			BalanceAfter: tr.BalanceAfter, CreatedAt: time.UnixMilli(tr.CreatedAt).UTC().Format("2006-01-02T15:04:05.000Z")})
		if !bytes.Equal(got.Body, want.Body) || got.Status != want.Status || len(got.Header) != 1 || got.Header[0] != want.Header[0] {
			t.Errorf("%+v:\n got %d %v %s\nwant %d %v %s", tr, got.Status, got.Header, got.Body, want.Status, want.Header, want.Body)
		}
	}
}
