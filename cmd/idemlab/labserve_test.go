package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/lab/handlers"
)

func TestLabHandlerWritesEveryHandler(t *testing.T) {
	_, help, err := runCmd(t, "lab", "handler", "-h")
	require.Error(t, err)
	for _, name := range handlers.Names() {
		assert.Regexp(t, "\n  "+name+"( |\n)", help, "-h lists every handler")
		want, err := handlers.Source(name)
		require.NoError(t, err)
		out, _, err := runCmd(t, "lab", "handler", name, "-o", "-")
		require.NoError(t, err)
		assert.Equal(t, string(want), out)
	}
	file := filepath.Join(t.TempDir(), "mine.js")
	out, _, err := runCmd(t, "lab", "handler", "naive", "-o", file)
	require.NoError(t, err)
	assert.Contains(t, out, "idemlab lab serve "+file)
	_, _, err = runCmd(t, "lab", "handler", "scoped", "-o", file)
	require.ErrorContains(t, err, "--force", "an existing file is kept")
	_, _, err = runCmd(t, "lab", "handler", "-o", file, "--force", "scoped")
	require.NoError(t, err, "flags may come before the name")
	written, err := os.ReadFile(file)
	require.NoError(t, err)
	scoped, _ := handlers.Source("scoped")
	assert.Equal(t, string(scoped), string(written))

	t.Run("default file name", func(t *testing.T) {
		dir := t.TempDir()
		t.Chdir(dir)
		_, _, err := runCmd(t, "lab", "handler", "mistakes/global-keys")
		require.NoError(t, err)
		_, err = os.Stat(filepath.Join(dir, "global-keys.js"))
		assert.NoError(t, err, "NAME.js in the current folder, whatever folder the name says")
	})

	for name, args := range map[string][]string{
		"no name":        {"lab", "handler"},
		"unknown name":   {"lab", "handler", "perfect"},
		"two names":      {"lab", "handler", "naive", "scoped"},
		"serve no file":  {"lab", "serve"},
		"serve no such":  {"lab", "serve", filepath.Join(t.TempDir(), "absent.js")},
		"serve two file": {"lab", "serve", "a.js", "b.js"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := runCmd(t, args...)
			assert.Error(t, err)
		})
	}
}

// TestLabServeRefusesABadFile: a handler that does not compile, or whose
// schema SQLite refuses, stops lab serve before it listens, with the reason.
func TestLabServeRefusesABadFile(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ src, want string }{
		"syntax":      {"async function transfer(req, db, pay) {", "does not compile"},
		"no transfer": {"const schema = 'CREATE TABLE k (x)';", "declares no function transfer"},
		"schema":      {"const schema = 'CREATE TABLE accounts (x)';\nasync function transfer() {}", "its schema failed: table accounts already exists"},
		"retention":   {"const retentionSeconds = 'a day';\nasync function transfer() {}", "retentionSeconds must be a whole number"},
	} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".js")
			require.NoError(t, os.WriteFile(file, []byte(c.src), 0o600))
			_, _, err := runCmd(t, "lab", "serve", file, "--db", filepath.Join(dir, name+".db"), "--port", "0")
			require.ErrorContains(t, err, c.want)
		})
	}
}

// TestLabServeGradesThroughTheBinary is the student's path with nothing
// but the binary: write a shipped handler, serve it with `idemlab lab
// serve` as a process of its own, and grade it with `idemlab grade`. naive
// breaks its three rules; scoped passes.
func TestLabServeGradesThroughTheBinary(t *testing.T) {
	bin := buildBinary(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, c := range []struct {
		name   string
		broken []string
	}{
		{"naive", []string{"one-transfer-per-intent", "different-request-never-succeeds", "replay-is-byte-identical"}},
		{"scoped", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, c.name+".js")
			out, err := exec.Command(bin, "lab", "handler", c.name, "-o", file).CombinedOutput()
			require.NoError(t, err, string(out))
			cmd, base := startLabServe(t, bin, file, "--db", filepath.Join(dir, "bank.db"))
			out, err = exec.Command(bin, "grade", base, "--seed", "7", "--intents", "30", "--no-history", "--json").Output()
			var rep struct {
				OK    bool `json:"ok"`
				Rules []struct {
					Name, Verdict string
				} `json:"rules"`
			}
			require.NoError(t, json.Unmarshal(out, &rep), string(out))
			var broken []string
			for _, r := range rep.Rules {
				if r.Verdict == "broken" {
					broken = append(broken, r.Name)
				}
			}
			assert.ElementsMatch(t, c.broken, broken)
			assert.Equal(t, c.broken == nil, rep.OK)
			assert.Equal(t, c.broken == nil, err == nil, "grade exits 0 only when every rule holds")

			require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				assert.NoError(t, err, "exit status 0 after SIGTERM")
			case <-time.After(30 * time.Second):
				t.Fatal("lab serve did not stop after SIGTERM")
			}
		})
	}
}

// startLabServe runs `idemlab lab serve FILE args…` on a free port and
// returns the process and its base URL, read from the first line it prints.
func startLabServe(t *testing.T, bin, file string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"lab", "serve", file, "--port", "0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("lab serve said on stderr:\n%s", stderr.String())
		}
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case l := <-line:
		m := listening.FindStringSubmatch(l)
		require.NotNil(t, m, "lab serve said %q", l)
		return cmd, m[1]
	case <-time.After(60 * time.Second):
		t.Fatal("lab serve did not start listening")
	}
	return nil, ""
}
