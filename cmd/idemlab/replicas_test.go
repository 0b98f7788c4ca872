package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGradeTwoServeProcessesOnOneFile runs `idemlab serve` twice on one
// --db file, two processes as two replicas behind a load balancer, and
// grades the scoped level over both, named as two URLs and with --replica:
// its key is claimed in the shared database, so it passes.
func TestGradeTwoServeProcessesOnOneFile(t *testing.T) {
	bin := buildBinary(t)
	db := filepath.Join(t.TempDir(), "idemlab.db")
	var bases []string
	for range 2 {
		_, url := startServe(t, bin, "--db", db, "--bank-rate", "10000")
		bases = append(bases, url+"/bank/scoped")
	}
	cases := []struct {
		name string
		args []string
	}{
		{"two URLs", []string{"grade", bases[0], bases[1], "--seed", "3", "--intents", "40"}},
		{"--replica", []string{"grade", bases[0], "--replica", bases[1], "--seed", "4", "--intents", "40"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := runCmd(t, c.args...)
			t.Log("\n" + out)
			require.NoError(t, err)
			assert.Contains(t, out, "Over 2 replicas ("+bases[0]+", "+bases[1]+")")
			assert.Contains(t, out, "Verdict: every rule holds, and every check keeps the contract's promise.")
		})
	}
}
