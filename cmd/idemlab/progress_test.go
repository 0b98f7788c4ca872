package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"idemlab/lab/grade"
)

// TestProgressLine: the line is rewritten in place, says the check and,
// during the day, how many of its requests were answered, and is wiped at
// the end.
func TestProgressLine(t *testing.T) {
	var b bytes.Buffer
	p := newProgressLine(&b)
	p.show(grade.Progress{Check: "reordered", N: 3, Of: 12})
	p.show(grade.Progress{Check: "day", N: 12, Of: 12, Done: 187, Total: 187})
	p.clear()
	out := b.String()
	assert.Contains(t, out, "\rgrading: check 3 of 12, reordered")
	assert.Contains(t, out, "\rgrading: check 12 of 12, day: 187 of 187 requests answered")
	assert.True(t, strings.HasSuffix(out, "\r"), "the line is wiped: %q", out)
	assert.False(t, isTerminal(&b))
}

// TestProgressBar: the day's bar is drawn in place, its last state always,
// and stays on its own line when the replay ends; off a terminal nothing is
// drawn.
func TestProgressBar(t *testing.T) {
	var b bytes.Buffer
	bar := &progressBar{statusLine{w: &b}}
	bar.update(0, 0)
	bar.update(2, 4)
	bar.update(4, 4)
	bar.done()
	bar.done()
	out := b.String()
	assert.Contains(t, out, "\r[####################....................]  50% 2/4 attempts")
	assert.True(t, strings.HasSuffix(out, "\r[########################################] 100% 4/4 attempts\n"), "%q", out)

	b.Reset()
	quiet := newProgressBar(&b)
	quiet.update(4, 4)
	quiet.done()
	assert.Empty(t, b.String())
}
