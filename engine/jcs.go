package engine

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// canonicalJSON writes the RFC 8785 (JSON Canonicalization Scheme) form of
// any JSON text: no insignificant whitespace; object members sorted by
// their names' UTF-16 code units; strings with only the escapes
// JSON.stringify writes (\" \\ \b \f \n \r \t and \u00xx for the other
// control characters, everything else as UTF-8); numbers as ECMAScript's
// Number.prototype.toString writes the IEEE 754 double they denote. Input
// that RFC 8785 does not cover is refused: anything that is not one JSON
// value (RFC 8259), invalid UTF-8, lone surrogates, duplicate member names,
// numbers beyond the range of a double.
//
// canonicalFlat answers first for the bodies the bank API sees every day;
// this is the general path. Tests hold it byte for byte to an independent
// implementation (FuzzCanonicalJSON, TestCanonicalNumbersOfRFC8785).
//
// idemlab used that implementation, a library, until it measured the
// browser's engine module: the library compiles a regular expression when
// the module starts, which brought in Go's regexp package and the unicode
// tables it builds. Without them the module is 0.55 MB smaller
// (12.62 → 12.07 MB raw, 2.48 → 2.40 MB brotli) and its package
// initialization takes 21–22 ms instead of 39–81 ms in Node
// (GODEBUG=inittrace=1).
func canonicalJSON(data []byte) ([]byte, error) {
	p := jcsParser{data: data}
	p.space()
	out, err := p.value(make([]byte, 0, len(data)), 0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.data) {
		return nil, p.errorf("data after the JSON value")
	}
	return out, nil
}

// maxJSONDepth bounds the nesting canonicalJSON follows, so that no body
// can make it recurse without end. No request idemlab accepts comes close.
const maxJSONDepth = 256

type jcsParser struct {
	data []byte
	i    int
}

func (p *jcsParser) errorf(format string, args ...any) error {
	return fmt.Errorf("canonical JSON: %s at byte %d", fmt.Sprintf(format, args...), p.i)
}

func (p *jcsParser) space() {
	p.i = skipSpace(p.data, p.i)
}

// value appends the canonical form of the value at p.i to out.
func (p *jcsParser) value(out []byte, depth int) ([]byte, error) {
	if depth > maxJSONDepth {
		return nil, p.errorf("nested deeper than %d", maxJSONDepth)
	}
	if p.i >= len(p.data) {
		return nil, p.errorf("unexpected end of the JSON text")
	}
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object(out, depth)
	case c == '[':
		return p.array(out, depth)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return appendJCSString(out, s), nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number(out)
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(p.data[p.i:], []byte(lit)) {
				p.i += len(lit)
				return append(out, lit...), nil
			}
		}
		return nil, p.errorf("unexpected character %q", c)
	}
}

func (p *jcsParser) object(out []byte, depth int) ([]byte, error) {
	type member struct {
		name  string
		units []uint16 // the name in UTF-16, the order RFC 8785 sorts by
		value []byte
	}
	var members []member
	p.i++ // {
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return append(out, '{', '}'), nil
	}
	for {
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, p.errorf("want a member name")
		}
		name, err := p.str()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, p.errorf("want ':' after a member name")
		}
		p.i++
		p.space()
		value, err := p.value(nil, depth+1)
		if err != nil {
			return nil, err
		}
		members = append(members, member{name, utf16.Encode([]rune(name)), value})
		p.space()
		if p.i >= len(p.data) {
			return nil, p.errorf("unexpected end of an object")
		}
		if p.data[p.i] == '}' {
			p.i++
			break
		}
		if p.data[p.i] != ',' {
			return nil, p.errorf("want ',' or '}' in an object")
		}
		p.i++
		p.space()
	}
	slices.SortStableFunc(members, func(a, b member) int { return slices.Compare(a.units, b.units) })
	out = append(out, '{')
	for k, m := range members {
		if k > 0 {
			if m.name == members[k-1].name {
				return nil, fmt.Errorf("canonical JSON: duplicate member name %q", m.name)
			}
			out = append(out, ',')
		}
		out = appendJCSString(out, m.name)
		out = append(out, ':')
		out = append(out, m.value...)
	}
	return append(out, '}'), nil
}

func (p *jcsParser) array(out []byte, depth int) ([]byte, error) {
	p.i++ // [
	out = append(out, '[')
	p.space()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return append(out, ']'), nil
	}
	for first := true; ; first = false {
		if !first {
			out = append(out, ',')
		}
		var err error
		if out, err = p.value(out, depth+1); err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.data) {
			return nil, p.errorf("unexpected end of an array")
		}
		if p.data[p.i] == ']' {
			p.i++
			return append(out, ']'), nil
		}
		if p.data[p.i] != ',' {
			return nil, p.errorf("want ',' or ']' in an array")
		}
		p.i++
		p.space()
	}
}

// str reads the string at p.i (its opening quote) and returns its value.
func (p *jcsParser) str() (string, error) {
	p.i++ // "
	var b strings.Builder
	for {
		if p.i >= len(p.data) {
			return "", p.errorf("unterminated string")
		}
		c := p.data[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c < 0x20:
			return "", p.errorf("control character in a string")
		case c == '\\':
			r, err := p.escape()
			if err != nil {
				return "", err
			}
			b.WriteRune(r)
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			p.i++
		default:
			r, size := utf8.DecodeRune(p.data[p.i:])
			if r == utf8.RuneError && size <= 1 {
				return "", p.errorf("invalid UTF-8")
			}
			b.WriteRune(r)
			p.i += size
		}
	}
}

// escape reads the escape sequence at p.i (its backslash).
func (p *jcsParser) escape() (rune, error) {
	if p.i+1 >= len(p.data) {
		return 0, p.errorf("unterminated escape")
	}
	c := p.data[p.i+1]
	p.i += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		r, err := p.hex4()
		if err != nil {
			return 0, err
		}
		if !utf16.IsSurrogate(r) {
			return r, nil
		}
		// A high surrogate must be followed by an escaped low one.
		if r < 0xdc00 && p.i+1 < len(p.data) && p.data[p.i] == '\\' && p.data[p.i+1] == 'u' {
			p.i += 2
			lo, err := p.hex4()
			if err != nil {
				return 0, err
			}
			if pair := utf16.DecodeRune(r, lo); pair != utf8.RuneError {
				return pair, nil
			}
		}
		return 0, p.errorf("lone surrogate in a string")
	}
	return 0, p.errorf("invalid escape \\%c", c)
}

func (p *jcsParser) hex4() (rune, error) {
	if p.i+4 > len(p.data) {
		return 0, p.errorf("short \\u escape")
	}
	v, err := strconv.ParseUint(string(p.data[p.i:p.i+4]), 16, 16)
	if err != nil {
		return 0, p.errorf("invalid \\u escape")
	}
	p.i += 4
	return rune(v), nil
}

// number reads the number at p.i, checked against RFC 8259's grammar, and
// appends it in ECMAScript's form.
func (p *jcsParser) number(out []byte) ([]byte, error) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.data) && p.data[p.i] >= '0' && p.data[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.data[p.i] == '-' {
		p.i++
	}
	intStart := p.i
	if n := digits(); n == 0 || (n > 1 && p.data[intStart] == '0') {
		return nil, p.errorf("invalid number")
	}
	if p.i < len(p.data) && p.data[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, p.errorf("invalid number")
		}
	}
	if p.i < len(p.data) && (p.data[p.i] == 'e' || p.data[p.i] == 'E') {
		p.i++
		if p.i < len(p.data) && (p.data[p.i] == '+' || p.data[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, p.errorf("invalid number")
		}
	}
	f, err := strconv.ParseFloat(string(p.data[start:p.i]), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsInf(f, 0) {
		return nil, p.errorf("number %s is beyond a double", p.data[start:p.i])
	}
	return appendESNumber(out, f), nil
}

// appendESNumber appends f as ECMAScript's Number::toString writes it
// (ECMA-262, 6.1.6.1.20, radix 10): the shortest digits that read back as
// f; plain notation from 1e-6 up to below 1e21, exponential outside it.
func appendESNumber(out []byte, f float64) []byte {
	if f == 0 {
		return append(out, '0') // -0 too
	}
	if f < 0 {
		out = append(out, '-')
		f = -f
	}
	// Go's shortest form, d.ddde±xx, gives the digits and the exponent.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	k, n := len(digits), x+1 // f = 0.digits × 10^n
	switch {
	case k <= n && n <= 21:
		out = append(out, digits...)
		for ; k < n; k++ {
			out = append(out, '0')
		}
	case 0 < n && n <= 21:
		out = append(out, digits[:n]...)
		out = append(out, '.')
		out = append(out, digits[n:]...)
	case -6 < n && n <= 0:
		out = append(out, '0', '.')
		for ; n < 0; n++ {
			out = append(out, '0')
		}
		out = append(out, digits...)
	default:
		out = append(out, digits[0])
		if k > 1 {
			out = append(out, '.')
			out = append(out, digits[1:]...)
		}
		out = append(out, 'e')
		if n-1 >= 0 {
			out = append(out, '+')
		}
		out = strconv.AppendInt(out, int64(n-1), 10)
	}
	return out
}

// appendJCSString appends s as a JSON string with RFC 8785's escapes.
func appendJCSString(out []byte, s string) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c >= 0x20:
			out = append(out, c)
		case c == '\b':
			out = append(out, '\\', 'b')
		case c == '\f':
			out = append(out, '\\', 'f')
		case c == '\n':
			out = append(out, '\\', 'n')
		case c == '\r':
			out = append(out, '\\', 'r')
		case c == '\t':
			out = append(out, '\\', 't')
		default:
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
	}
	return append(out, '"')
}
