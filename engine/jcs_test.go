package engine

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

// FuzzCanonicalJSON holds idemlab's RFC 8785 implementation to an
// independent one (github.com/gowebpki/jcs, used by tests only): the same
// bytes whenever both accept a text, and no text that only one of them
// accepts.
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{
		`{"from":"alice","to":"bob","amount":200000}`, `{"b":[1,2,{"d":true,"c":null}],"a":"x"}`,
		`{"\u20ac":1,"\ud83d\ude00":2,"\ufb33":3,"\r":4,"1":5,"\u0080":6,"\u00f6":7}`,
		`[1e21,1e-7,0.000001,-0,1.5,100,12345678901234567890,5e-324,1.7976931348623157e308]`,
		`"\u0000\u001f\u007f\"\\\/\b\f\n\r\t"`, `"é€😀"`, `  [ ]  `, `{}`, `true`, `null`, `0`,
		`{"a":1,"a":2}`, `[01]`, `[1.]`, `[.5]`, `[1e]`, `[-]`, `[1e400]`, `"\ud800"`, `"\udc00x"`,
		"\"\xff\"", "\"a\x01\"", `[1,]`, `{"a":1,}`, `[1]x`, `tru`, `{"a" 1}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		mine, err := canonicalJSON(body)
		other, otherErr := jcs.Transform(body)
		switch {
		case err == nil && otherErr == nil:
			if !bytes.Equal(mine, other) {
				t.Fatalf("%q: idemlab %s, the other implementation %s", body, mine, other)
			}
		case err == nil:
			t.Fatalf("%q: idemlab accepts it (%s), the other implementation refuses it: %v", body, mine, otherErr)
		case otherErr == nil:
			t.Fatalf("%q: idemlab refuses it (%v), the other implementation accepts it: %s", body, err, other)
		}
	})
}

// RFC 8785's Appendix B: IEEE 754 doubles and how the canonical form
// writes them (ECMAScript's Number::toString).
func TestCanonicalNumbersOfRFC8785(t *testing.T) {
	for bits, want := range map[uint64]string{
		0x0000000000000000: "0",
		0x8000000000000000: "0",
		0x0000000000000001: "5e-324",
		0x8000000000000001: "-5e-324",
		0x7fefffffffffffff: "1.7976931348623157e+308",
		0xffefffffffffffff: "-1.7976931348623157e+308",
		0x4340000000000000: "9007199254740992",
		0xc340000000000000: "-9007199254740992",
		0x4430000000000000: "295147905179352830000",
		0x44b52d02c7e14af5: "9.999999999999997e+22",
		0x44b52d02c7e14af6: "1e+23",
		0x44b52d02c7e14af7: "1.0000000000000001e+23",
		0x444b1ae4d6e2ef4e: "999999999999999700000",
		0x444b1ae4d6e2ef4f: "999999999999999900000",
		0x444b1ae4d6e2ef50: "1e+21",
		0x3eb0c6f7a0b5ed8c: "9.999999999999997e-7",
		0x3eb0c6f7a0b5ed8d: "0.000001",
		0x41b3de4355555553: "333333333.3333332",
		0x41b3de4355555554: "333333333.33333325",
		0x41b3de4355555555: "333333333.3333333",
		0x41b3de4355555556: "333333333.3333334",
		0x41b3de4355555557: "333333333.33333343",
		0xbecbf647612f3696: "-0.0000033333333333333333",
		0x43143ff3c1cb0959: "1424953923781206.2",
	} {
		f := math.Float64frombits(bits)
		if got := string(appendESNumber(nil, f)); got != want {
			t.Errorf("%#016x (%v): got %s, want %s", bits, f, got, want)
		}
		// The same double written as JSON, through the whole path.
		text := strconv.FormatFloat(f, 'g', -1, 64)
		if got, err := canonicalJSON([]byte(text)); err != nil || string(got) != want {
			t.Errorf("%s: got %s (%v), want %s", text, got, err, want)
		}
	}
}

// RFC 8785's example of sorting member names by UTF-16 code units (section
// 3.2.3): a euro sign, CARRIAGE RETURN, a Hebrew letter with dagesh, "1",
// an emoji (a surrogate pair), U+0080 and an o with diaeresis.
func TestCanonicalSortsNamesByUTF16(t *testing.T) {
	in := `{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One",` +
		`"\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`
	got, err := canonicalJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"\r":"Carriage Return","1":"One","` + "\u0080" + `":"Control","ö":"Latin Small Letter O With Diaeresis",` +
		`"€":"Euro Sign","😀":"Emoji: Grinning Face","` + "\ufb33" + `":"Hebrew Letter Dalet With Dagesh"}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// Whatever a body holds, canonicalJSON answers without recursing beyond its
// bound.
func TestCanonicalRefusesDeepNesting(t *testing.T) {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	if _, err := canonicalJSON([]byte(deep)); err == nil {
		t.Fatal("100,000 nested arrays were accepted")
	}
	ok := strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth)
	if _, err := canonicalJSON([]byte(ok)); err != nil {
		t.Fatalf("%d nested arrays: %v", maxJSONDepth, err)
	}
}
