package classroom

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const goodSecret = "0123456789abcdef0123456789abcdef"

func TestDecodeClientMessage(t *testing.T) {
	valid := []struct {
		name, in string
		check    func(t *testing.T, m ClientMessage)
	}{
		{"join", `{"type":"join","nickname":"  Ana  ","secret":"` + goodSecret + `"}`,
			func(t *testing.T, m ClientMessage) { assert.Equal(t, "Ana", m.Nickname) }},
		{"join with markup kept as text", `{"type":"join","nickname":"<img src=x>","secret":"` + goodSecret + `"}`,
			func(t *testing.T, m ClientMessage) { assert.Equal(t, "<img src=x>", m.Nickname) }},
		{"send", `{"type":"send","basement":true}`, func(t *testing.T, m ClientMessage) { assert.True(t, m.Basement) }},
		{"vote", `{"type":"vote","choice":"double"}`, nil},
		{"level", `{"type":"level","level":"scoped"}`, nil},
		{"storm with defaults", `{"type":"storm","storm":{"level":"naive","clients":10}}`,
			func(t *testing.T, m ClientMessage) {
				assert.Equal(t, 1, m.Storm.Keys)
				assert.Equal(t, 2, m.Storm.Attempts)
				assert.Equal(t, FaultNone, m.Storm.Fault)
			}},
		{"crash defaults to execute", `{"type":"storm","storm":{"level":"unique","clients":3,"fault":"crash"}}`,
			func(t *testing.T, m ClientMessage) { assert.Equal(t, "execute", string(m.Storm.Phase)) }},
		{"ask", `{"type":"ask"}`, nil},
		{"kick", `{"type":"kick","student":"s12"}`, func(t *testing.T, m ClientMessage) { assert.Equal(t, "s12", m.Student) }},
		{"lock", `{"type":"lock"}`, nil},
		{"unlock", `{"type":"unlock"}`, nil},
		{"Korean nickname", `{"type":"join","nickname":"김민지","secret":"` + goodSecret + `"}`, nil},
		{"a filler beside a letter", `{"type":"join","nickname":"a\u3164","secret":"` + goodSecret + `"}`, nil},
	}
	for _, tc := range valid {
		t.Run(tc.name, func(t *testing.T) {
			m, err := DecodeClientMessage([]byte(tc.in))
			require.NoError(t, err)
			if tc.check != nil {
				tc.check(t, m)
			}
		})
	}
	invalid := []struct{ name, in string }{
		{"empty", ``},
		{"not an object", `[1,2]`},
		{"two objects", `{"type":"ask"}{"type":"ask"}`},
		{"trailing garbage", `{"type":"ask"} x`},
		{"unknown type", `{"type":"drop-tables"}`},
		{"no type", `{"choice":"201"}`},
		{"unknown field", `{"type":"send","admin":true}`},
		{"field of another type", `{"type":"send","level":"naive"}`},
		{"nickname too long", `{"type":"join","nickname":"` + strings.Repeat("x", 25) + `","secret":"` + goodSecret + `"}`},
		{"blank nickname", `{"type":"join","nickname":"   ","secret":"` + goodSecret + `"}`},
		{"Hangul filler nickname", `{"type":"join","nickname":"\u3164\u3164","secret":"` + goodSecret + `"}`},
		{"blank Braille nickname", `{"type":"join","nickname":"\u2800","secret":"` + goodSecret + `"}`},
		{"Hangul choseong filler", `{"type":"join","nickname":"\u115f\u1160","secret":"` + goodSecret + `"}`},
		{"halfwidth filler and ideographic space", `{"type":"join","nickname":"\uffa0\u3000","secret":"` + goodSecret + `"}`},
		{"only combining marks", `{"type":"join","nickname":"\u0301\u0301","secret":"` + goodSecret + `"}`},
		{"kick without student", `{"type":"kick"}`},
		{"kick of a bad id", `{"type":"kick","student":"admin"}`},
		{"lock with a field", `{"type":"lock","student":"s1"}`},
		{"control character", `{"type":"join","nickname":"a\u0007b","secret":"` + goodSecret + `"}`},
		{"bidi override", `{"type":"join","nickname":"a\u202eb","secret":"` + goodSecret + `"}`},
		{"short secret", `{"type":"join","nickname":"a","secret":"abc"}`},
		{"uppercase secret", `{"type":"join","nickname":"a","secret":"` + strings.ToUpper(goodSecret) + `"}`},
		{"bad vote", `{"type":"vote","choice":"500"}`},
		{"bad level", `{"type":"level","level":"expert"}`},
		{"storm without spec", `{"type":"storm"}`},
		{"too many clients", `{"type":"storm","storm":{"level":"naive","clients":1001}}`},
		{"no clients", `{"type":"storm","storm":{"level":"naive","clients":0}}`},
		{"more keys than clients", `{"type":"storm","storm":{"level":"naive","clients":2,"keys":3}}`},
		{"too many attempts", `{"type":"storm","storm":{"level":"naive","clients":2,"attempts":6}}`},
		{"unknown fault", `{"type":"storm","storm":{"level":"naive","clients":2,"fault":"meteor"}}`},
		{"phase without a phased fault", `{"type":"storm","storm":{"level":"naive","clients":2,"phase":"claim"}}`},
		{"unknown phase", `{"type":"storm","storm":{"level":"naive","clients":2,"fault":"crash","phase":"lunch"}}`},
		{"negative slow motion", `{"type":"storm","storm":{"level":"naive","clients":2,"slow_ms":-1}}`},
		{"huge latency", `{"type":"storm","storm":{"level":"naive","clients":2,"latency_ms":999999}}`},
		{"unknown storm field", `{"type":"storm","storm":{"level":"naive","clients":2,"token":"x"}}`},
		{"invalid UTF-8", "{\"type\":\"join\",\"nickname\":\"\xff\",\"secret\":\"" + goodSecret + "\"}"},
		{"too big", `{"type":"ask","x":"` + strings.Repeat("a", MaxMessageBytes) + `"}`},
	}
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeClientMessage([]byte(tc.in))
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrBadMessage))
		})
	}
}

// FuzzDecodeClientMessage feeds the decoder arbitrary bytes: it never
// panics, errors wrap ErrBadMessage, and whatever it accepts is within
// the limits.
func FuzzDecodeClientMessage(f *testing.F) {
	for _, s := range []string{`{"type":"join","nickname":"Ana","secret":"` + goodSecret + `"}`, `{"type":"send","basement":true}`,
		`{"type":"vote","choice":"409"}`, `{"type":"storm","storm":{"level":"scoped","clients":1000,"keys":7,"attempts":5,"fault":"crash","phase":"commit","slow_ms":100}}`,
		`{"type":"level","level":"naive"}`, `{}`, `null`, `{"type":"join","nickname":"\u202e"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeClientMessage(b)
		if err != nil {
			if !errors.Is(err, ErrBadMessage) {
				t.Fatalf("error %v does not wrap ErrBadMessage", err)
			}
			return
		}
		if m.Type == MsgJoin {
			if _, err := CleanNickname(m.Nickname); err != nil {
				t.Fatalf("accepted nickname %q fails its own check", m.Nickname)
			}
		}
		if m.Storm != nil && (m.Storm.Clients < 1 || m.Storm.Clients > MaxStormClients || m.Storm.Keys > m.Storm.Clients) {
			t.Fatalf("accepted storm out of bounds: %+v", *m.Storm)
		}
	})
}

// TestCataloguesAreCopies: a caller that changes the list it was given
// changes nobody else's.
func TestCataloguesAreCopies(t *testing.T) {
	StormFaults()[0] = "mine"
	Choices()[0] = "mine"
	assert.Equal(t, FaultNone, StormFaults()[0])
	assert.Equal(t, ChoiceDouble, Choices()[0])
}
