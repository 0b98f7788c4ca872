package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFlat(t *testing.T) {
	got, err := parseFlat(` [1, -2.5, "a\"b\u00e9", "plain", null, true, false, [3, "x"], [], 1e3] `)
	require.NoError(t, err)
	assert.Equal(t, []any{int64(1), -2.5, "a\"bé", "plain", nil, true, false, []any{int64(3), "x"}, []any{}, 1000.0}, got)
	for _, bad := range []string{``, `[`, `[1,`, `{"a":1}`, `[1] x`, `["a]`, `[nul]`, `[{}]`} {
		_, err := parseFlat(bad)
		assert.Error(t, err, bad)
	}
}
