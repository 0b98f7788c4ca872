package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/docs"
	"idemlab/internal/endpointtest"
)

func TestLabContractIsTheDocument(t *testing.T) {
	onDisk, err := os.ReadFile(filepath.Join("..", "..", "docs", "lab-contract.md"))
	require.NoError(t, err)
	out, _, err := runCmd(t, "lab", "contract")
	require.NoError(t, err)
	assert.Equal(t, string(onDisk), out, "the binary prints the contract as it is in docs/")
	assert.True(t, strings.HasPrefix(out, "# The lab contract\n"))

	for name, args := range map[string][]string{
		"no subcommand":      {"lab"},
		"unknown subcommand": {"lab", "recipe"},
		"contract argument":  {"lab", "contract", "extra"},
		"example argument":   {"lab", "example", "bank.py"},
		"unknown bug":        {"lab", "example", "--bug", "off-by-one", "-o", "-"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := runCmd(t, args...)
			assert.Error(t, err)
		})
	}
}

func TestLabExampleWritesTheEndpoint(t *testing.T) {
	onDisk, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "bank.py"))
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "bank.py")
	out, _, err := runCmd(t, "lab", "example", "-o", file)
	require.NoError(t, err)
	assert.Contains(t, out, "python3 "+file)
	written, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, string(onDisk), string(written), "the correct endpoint is docs/examples/bank.py as it is")

	_, _, err = runCmd(t, "lab", "example", "-o", file, "--bug", "raw-bytes")
	require.ErrorContains(t, err, "--force", "an existing file is kept")
	_, _, err = runCmd(t, "lab", "example", "-o", file, "--bug", "raw-bytes", "--force")
	require.NoError(t, err)
	written, err = os.ReadFile(file)
	require.NoError(t, err)
	assert.Contains(t, string(written), `p.add_argument("--bug", default="raw-bytes"`)
	assert.Contains(t, string(written), "THIS COPY HAS A BUG PLANTED")

	stdout, _, err := runCmd(t, "lab", "example", "-o", "-")
	require.NoError(t, err)
	assert.Equal(t, string(onDisk), stdout)

	bugs := docs.ExampleBugs()
	require.GreaterOrEqual(t, len(bugs), 6, "the bug names are read from the example's --bug choices")
	_, help, err := runCmd(t, "lab", "example", "-h")
	require.Error(t, err)
	for _, b := range bugs {
		assert.Regexp(t, "\n  "+b+" +[a-z]", help, "-h lists and explains every bug")
		src, err := docs.ExampleWithBug(b)
		require.NoError(t, err)
		assert.Equal(t, 1, strings.Count(string(src), `default="`+b+`"`))
	}
}

// TestLabExampleGrades runs what `lab example` wrote, correct and with a
// bug planted, as a student would, and grades both: the binary alone is
// enough to get from nothing to a graded endpoint.
func TestLabExampleGrades(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, c := range []struct {
		bug, broken string
	}{
		{"", ""},
		{"global-keys", "customers-see-own-responses"},
	} {
		t.Run("bug="+c.bug, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "bank.py")
			_, _, err := runCmd(t, "lab", "example", "-o", file, "--bug", c.bug)
			require.NoError(t, err)
			base := endpointtest.Start(t, "python3", file, "--port", "0", "--db", filepath.Join(t.TempDir(), "bank.db"), "--payment-latency-ms", "20")
			out, _, err := runCmd(t, "grade", base, "--seed", "11", "--intents", "30", "--no-history")
			if c.broken == "" {
				assert.NoError(t, err, out)
				return
			}
			require.ErrorContains(t, err, c.broken, "the planted bug runs without --bug")
		})
	}
}
