package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExportNeverFollowsSymlinks plants what an attacker with write access
// to the output folder would: index.html as a link to a file outside it,
// and api as a link to a folder outside it. The export replaces the link
// to the file with the site's own file, stops at the linked folder, and
// leaves everything outside the folder as it was. A folder that holds
// anything is refused without --force.
func TestExportNeverFollowsSymlinks(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(root, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(outside, "api"), 0o755))
	victim := filepath.Join(outside, "bashrc")
	require.NoError(t, os.WriteFile(victim, []byte("precious\n"), 0o644))

	site := filepath.Join(root, "site")
	require.NoError(t, os.Mkdir(site, 0o755))
	require.NoError(t, os.Symlink(victim, filepath.Join(site, "index.html")))

	var out, errOut strings.Builder
	err := run(context.Background(), []string{"export", site}, &out, &errOut)
	require.Error(t, err, "a folder that holds anything is refused")
	assert.Contains(t, err.Error(), "--force")

	require.NoError(t, run(context.Background(), []string{"export", "--force", site}, &out, &errOut))
	b, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "precious\n", string(b), "the file the link pointed at is untouched")
	fi, err := os.Lstat(filepath.Join(site, "index.html"))
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular(), "the link itself was replaced by the site's file")

	// A linked folder stops the export; nothing lands outside.
	require.NoError(t, os.RemoveAll(filepath.Join(site, "api")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "api"), filepath.Join(site, "api")))
	err = run(context.Background(), []string{"export", "--force", site}, &out, &errOut)
	require.Error(t, err)
	entries, err := os.ReadDir(filepath.Join(outside, "api"))
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing was written through the linked folder")

	// The output folder itself as a link is refused.
	link := filepath.Join(root, "link")
	require.NoError(t, os.Symlink(outside, link))
	err = run(context.Background(), []string{"export", "--force", link}, &out, &errOut)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "symbolic link")

	// A fresh folder is written whole, and no temporary folder is left.
	fresh := filepath.Join(root, "fresh", "site")
	require.NoError(t, run(context.Background(), []string{"export", fresh}, &out, &errOut))
	_, err = os.Stat(filepath.Join(fresh, "api", "lessons.json"))
	assert.NoError(t, err)
	left, err := filepath.Glob(filepath.Join(root, "*", ".idemlab-export-*"))
	require.NoError(t, err)
	left2, _ := filepath.Glob(filepath.Join(root, ".idemlab-export-*"))
	assert.Empty(t, append(left, left2...), "temporary folders are removed")
}
