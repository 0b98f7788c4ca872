package web_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// runInNode runs script in Node beside copies of the page's modules named
// in modules (ES modules, as the page loads them), with in written as JSON
// to the file named by the script's process.argv[2], and decodes what the
// script prints into out. Without Node the test is skipped, and says that
// what it checks is checked in Node.
func runInNode(t *testing.T, what, script string, modules []string, in, out any) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node is not installed: %s checked in Node", what)
	}
	dir := t.TempDir()
	for _, f := range modules {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"type":"module"}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "check.js"), []byte(script), 0o644))
	b, err := json.Marshal(in)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "input.json"), b, 0o644))
	cmd := exec.Command(node, "check.js", "input.json")
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	require.NoError(t, err, "%s", stderr.String())
	require.NoError(t, json.Unmarshal(stdout, out))
}
