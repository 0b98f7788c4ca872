package main

import (
	"bufio"
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// binary is idemlab built for this package's tests, once: every test that
// runs a real process shares it, and TestMain removes it.
var binary struct {
	once      sync.Once
	dir, path string
	err       error
}

// buildBinary builds idemlab once per test run and returns its path. Under
// -short (make test-short) it skips the test: no real process runs.
func buildBinary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no real idemlab process (make test runs them)")
	}
	binary.once.Do(func() {
		if binary.dir, binary.err = os.MkdirTemp("", "idemlab-test-bin-"); binary.err != nil {
			return
		}
		binary.path = filepath.Join(binary.dir, "idemlab")
		cmd := exec.Command("go", "build", "-o", binary.path, ".")
		cmd.Stderr = os.Stderr
		binary.err = cmd.Run()
	})
	require.NoError(t, binary.err, "go build")
	return binary.path
}

var listening = regexp.MustCompile(`listening on (https?://\S+)`)

// startServe runs `idemlab serve` as a real process and returns its base URL.
func startServe(t testing.TB, bin string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = io.Discard
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	select {
	case url, ok := <-found:
		require.True(t, ok, "idemlab exited before listening")
		return cmd, url
	case <-time.After(60 * time.Second):
		t.Fatal("idemlab did not start listening")
	}
	return nil, ""
}

func TestServeShutsDownGracefullyOnSIGTERM(t *testing.T) {
	bin := buildBinary(t)
	db := filepath.Join(t.TempDir(), "idemlab.db")
	cmd, url := startServe(t, bin, "--db", db)

	resp, err := http.Get(url + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)

	req, _ := http.NewRequest("PUT", url+"/bank/scoped/accounts/alice", strings.NewReader(`{"balance":5}`))
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		assert.NoError(t, err, "exit status 0 after SIGTERM")
	case <-time.After(30 * time.Second):
		t.Fatal("idemlab did not stop after SIGTERM")
	}
	for _, level := range []string{"naive", "scoped"} {
		_, err := os.Stat(filepath.Join(filepath.Dir(db), "idemlab-"+level+".db"))
		assert.NoError(t, err, "each level keeps its own database file")
	}

	// The data survives a restart on the same files.
	_, url = startServe(t, bin, "--db", db)
	resp, err = http.Get(url + "/bank/scoped/accounts/alice")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.JSONEq(t, `{"id":"alice","balance":5}`, string(body))
}

func TestUnknownCommand(t *testing.T) {
	var out, errOut strings.Builder
	err := run(context.Background(), []string{"frobnicate"}, &out, &errOut)
	assert.ErrorContains(t, err, `unknown command "frobnicate"`)
	assert.Contains(t, errOut.String(), "serve")
}

func TestHelpListsTheCommands(t *testing.T) {
	for _, arg := range []string{"--help", "-h", "help"} {
		t.Run(arg, func(t *testing.T) {
			var out, errOut strings.Builder
			require.NoError(t, run(context.Background(), []string{arg}, &out, &errOut))
			for _, name := range []string{"serve", "day", "grade", "lab", "export"} {
				assert.Contains(t, out.String(), "\n  "+name+" ", "idemlab %s lists %s", arg, name)
			}
			assert.NotContains(t, out.String(), "-addr", "the commands, not serve's flags")
		})
	}
}

// TestServeHelpSaysWhatToChangeForANATAndAProxy: serve -h names the flags
// a class behind one address or behind a reverse proxy needs; bad values
// of the new flags stop the start with a sentence.
func TestServeHelpSaysWhatToChangeForANATAndAProxy(t *testing.T) {
	var out, errOut strings.Builder
	err := run(context.Background(), []string{"serve", "-h"}, &out, &errOut)
	require.ErrorIs(t, err, flag.ErrHelp)
	help := errOut.String()
	for _, want := range []string{"behind one NAT address", "--class-size", "--sockets-per-address", "--joins-per-address",
		"behind a reverse proxy", "--trusted-proxy PROXY-ADDRESS", "--tls-cert FILE --tls-key FILE", "docs/DEPLOY.md", "-bank-rate", "-db-max-conns"} {
		assert.Contains(t, help, want)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--trusted-proxy", "nginx"}, "not an address or a CIDR"},
		{[]string{"--tls-cert", "a.pem"}, "go together"},
		{[]string{"--class-size", "0"}, "--class-size is 1 to 1500"},
		{[]string{"--sockets-per-address", "0"}, "are positive"},
		{[]string{"--db-max-conns", "0"}, "--db-max-conns is at least 1"},
	} {
		_, err := parseServe(tc.args, io.Discard, io.Discard)
		assert.ErrorContains(t, err, tc.want, tc.args)
	}
}

// serve --lessons-dir refuses to start on a lesson that does not parse.
func TestServeRefusesABrokenLessonsDir(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "en"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "en", "01-naive.md"), []byte("# no front matter\n"), 0o644))
	var out, errOut strings.Builder
	err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--db", "", "--lessons-dir", dir}, &out, &errOut)
	assert.ErrorContains(t, err, "en/01-naive.md")
	assert.NotContains(t, out.String(), "listening", "nothing was served")
}
