package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompressWritesCopiesThatDecodeToTheModule(t *testing.T) {
	src := filepath.Join(t.TempDir(), "idemlab.wasm")
	module := bytes.Repeat([]byte("\x00asm module bytes "), 2000)
	require.NoError(t, os.WriteFile(src, module, 0o644))
	out := t.TempDir()
	require.NoError(t, compress(src, out))

	f, err := os.Open(filepath.Join(out, "idemlab.wasm.gz"))
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	got, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.Equal(t, module, got, "gzip copy")

	br, err := os.ReadFile(filepath.Join(out, "idemlab.wasm.br"))
	require.NoError(t, err)
	got, err = io.ReadAll(brotli.NewReader(bytes.NewReader(br)))
	require.NoError(t, err)
	assert.Equal(t, module, got, "brotli copy")
	assert.Less(t, len(br), len(module)/10)
}

func TestCompressSkipsAnUnchangedModuleAndRedoesAChangedOne(t *testing.T) {
	src := filepath.Join(t.TempDir(), "idemlab.wasm")
	require.NoError(t, os.WriteFile(src, []byte("first module"), 0o644))
	out := t.TempDir()
	require.NoError(t, compress(src, out))
	br := filepath.Join(out, "idemlab.wasm.br")
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(br, old, old))

	require.NoError(t, compress(src, out))
	info, err := os.Stat(br)
	require.NoError(t, err)
	assert.True(t, info.ModTime().Equal(old), "an unchanged module is not compressed again")

	require.NoError(t, os.WriteFile(src, []byte("second module"), 0o644))
	require.NoError(t, compress(src, out))
	data, err := os.ReadFile(br)
	require.NoError(t, err)
	got, err := io.ReadAll(brotli.NewReader(bytes.NewReader(data)))
	require.NoError(t, err)
	assert.Equal(t, "second module", string(got))
}
