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

func TestSplitStep(t *testing.T) {
	db, conn, op, params, sql, ok := splitStep("d1\nc2\nrun\n[1,\"a\"]\nSELECT 1\n-- and more\n")
	require.True(t, ok)
	assert.Equal(t, []string{"d1", "c2", "run", `[1,"a"]`, "SELECT 1\n-- and more\n"}, []string{db, conn, op, params, sql})
	_, _, _, _, _, ok = splitStep("d1\nc2\nrun")
	assert.False(t, ok)
}
