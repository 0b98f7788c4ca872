package main

import (
	"encoding/json"
	"errors"
	"strconv"
)

// parseFlat reads a JSON array of scalars (null, true, false, numbers,
// strings) and arrays of them, as the runner sends a step's parameters
// and a schedule's answers. encoding/json's reflection costs tens of
// microseconds a call in the browser's module, and the explorer makes
// thousands of these a second. Whole numbers come back as int64, others
// as float64.
func parseFlat(s string) ([]any, error) {
	p := flatParser{s: s}
	p.space()
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, errors.New("flat JSON: trailing data")
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, errors.New("flat JSON: not an array")
	}
	return arr, nil
}

type flatParser struct {
	s string
	i int
}

func (p *flatParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\n' || p.s[p.i] == '\t' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *flatParser) value() (any, error) {
	if p.i >= len(p.s) {
		return nil, errors.New("flat JSON: unexpected end")
	}
	switch c := p.s[p.i]; {
	case c == '[':
		p.i++
		out := []any{}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return out, nil
		}
		for {
			p.space()
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			p.space()
			if p.i >= len(p.s) {
				return nil, errors.New("flat JSON: unexpected end")
			}
			if p.s[p.i] == ']' {
				p.i++
				return out, nil
			}
			if p.s[p.i] != ',' {
				return nil, errors.New("flat JSON: expected , or ]")
			}
			p.i++
		}
	case c == '"':
		start := p.i
		p.i++
		escaped := false
		for p.i < len(p.s) && p.s[p.i] != '"' {
			if p.s[p.i] == '\\' {
				escaped = true
				p.i++
			}
			p.i++
		}
		if p.i >= len(p.s) {
			return nil, errors.New("flat JSON: unterminated string")
		}
		p.i++
		if !escaped {
			return p.s[start+1 : p.i-1], nil
		}
		var str string
		if err := json.Unmarshal([]byte(p.s[start:p.i]), &str); err != nil {
			return nil, err
		}
		return str, nil
	case c == 'n' || c == 't' || c == 'f':
		for _, lit := range []struct {
			text string
			v    any
		}{{"null", nil}, {"true", true}, {"false", false}} {
			if len(p.s)-p.i >= len(lit.text) && p.s[p.i:p.i+len(lit.text)] == lit.text {
				p.i += len(lit.text)
				return lit.v, nil
			}
		}
		return nil, errors.New("flat JSON: bad literal")
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.i
		for p.i < len(p.s) && (p.s[p.i] == '-' || p.s[p.i] == '+' || p.s[p.i] == '.' || p.s[p.i] == 'e' || p.s[p.i] == 'E' || (p.s[p.i] >= '0' && p.s[p.i] <= '9')) {
			p.i++
		}
		num := p.s[start:p.i]
		if n, err := strconv.ParseInt(num, 10, 64); err == nil {
			return n, nil
		}
		return strconv.ParseFloat(num, 64)
	}
	return nil, errors.New("flat JSON: objects are not taken here")
}
