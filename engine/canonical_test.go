package engine

import (
	"bytes"
	"testing"
	"time"

	"github.com/gowebpki/jcs"
)

// FuzzTransferCanonical holds the canonical form written from a parsed
// transfer to an independent, maintained RFC 8785 implementation
// (github.com/gowebpki/jcs, in the test build only, so the browser's module
// does not carry it): for every body ParseTransfer accepts, however it is
// written, the bytes are exactly the library's canonical form of the body.
func FuzzTransferCanonical(f *testing.F) {
	for _, s := range []string{
		`{"from":"alice","to":"bob","amount":200000}`,
		`{ "amount" : 200000 , "to":"bob",   "from":"alice" }`,
		"{\n\t\"to\": \"b\",\r\n\"from\": \"a\", \"amount\": 1\n}\n",
		`{"from":"a","to":"b","amount":9007199254740991}`, `{"from":"a","to":"b","amount":1234567890123456}`,
		`{"from":"a","to":"b","amount":1.0}`, `{"from":"a","to":"b","amount":1e3}`, `{"from":"a","to":"b","amount":007}`,
		`{"\u0066rom":"\u0061lice","to":"b\/","amount":1}`, `{"from":"al\u0069ce","to":"B.b_-9","amount":1}`,
		`{"from":"a","to":"b","amount":1,"from":"c"}`, `{"from":"é","to":"b","amount":1}`, `{"from":"a","to":"b","amount":1}x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		tr, prob := ParseTransfer(body)
		if prob != nil {
			return
		}
		want, err := jcs.Transform(body)
		if err != nil {
			t.Fatalf("ParseTransfer accepts %q, the library refuses it: %v", body, err)
		}
		if got := tr.Canonical(); !bytes.Equal(got, want) {
			t.Fatalf("%q: idemlab %s, the library %s", body, got, want)
		}
	})
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

// BenchmarkFingerprintCanonical is the fingerprint phase of a scoped
// transfer: the canonical form written from the parsed transfer, hashed.
// Before it was written from the parsed transfer, canonicalizing the
// body's text took 460–580 ns here; written from the transfer, 300–380 ns
// (2 cores, under load).
func BenchmarkFingerprintCanonical(b *testing.B) {
	body := []byte(`{"from":"c0012-acct","to":"inv-000123","amount":245600}`)
	tr, prob := ParseTransfer(body)
	if prob != nil {
		b.Fatal(prob)
	}
	b.ReportAllocs()
	for b.Loop() {
		Fingerprint(FingerprintCanonical, "POST", TransfersRoute, body, tr)
	}
}
