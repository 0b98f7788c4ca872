// Package endpointtest starts a bank endpoint written in another language
// (docs/examples/bank.py, the grader's peers) as a process of its own, for
// the tests and benchmarks that grade or measure it.
package endpointtest

import (
	"bufio"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Start runs interpreter with args (skipping t when the interpreter is not
// installed), waits for the line "listening on URL" the endpoint prints
// once its socket is open, and returns URL. The process is killed when t
// ends; what it wrote on stderr is logged if t failed. Under -short (make
// test-short) it skips t: no other process runs.
func Start(t testing.TB, interpreter string, args ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: no %s endpoint (make test runs them)", interpreter)
	}
	bin, err := exec.LookPath(interpreter)
	if err != nil {
		t.Skipf("%s is not installed, so this endpoint cannot run", interpreter)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, args...)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("%s said on stderr:\n%s", interpreter, stderr.String())
		}
	})
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
	}()
	select {
	case l := <-line:
		_, base, ok := strings.Cut(l, "listening on ")
		require.True(t, ok, "%s %v said %q", interpreter, args, l)
		return base
	case <-time.After(20 * time.Second):
		t.Fatalf("%s %v did not start within 20 s", interpreter, args)
	}
	return ""
}
