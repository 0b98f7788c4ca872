package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lockedBuffer collects a child process's output safely.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestInstructorTokenIsNeverLogged runs the real binary with a known token
// in its environment, signs in wrongly and rightly, and checks that the
// token appears nowhere: not on the command line (ps), not in the start-up
// output (its link carries a one-time code instead), not in the logs.
func TestInstructorTokenIsNeverLogged(t *testing.T) {
	const token = "tok-3f9a1c77e2b54d0c9e61"
	bin := buildBinary(t)
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "idemlab.db"))
	cmd.Env = append(os.Environ(), "IDEMLAB_INSTRUCTOR_TOKEN="+token)
	var stdout, stderr lockedBuffer
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			stdout.Write([]byte(sc.Text() + "\n"))
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	var base string
	select {
	case base = <-urls:
	case <-time.After(60 * time.Second):
		t.Fatal("idemlab did not start")
	}

	signIn := func(tok string) int {
		req, _ := http.NewRequest("POST", base+"/classroom/api/session", strings.NewReader(`{"token":"`+tok+`"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", base)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, 401, signIn(token[:len(token)-1]+"x"), "a wrong token is refused")
	assert.Less(t, signIn(token), 300, "the right token signs in")
	resp, err := http.Get(base + "/classroom/teach?token=" + token) // a token pasted into a query string
	require.NoError(t, err)
	resp.Body.Close()

	require.Eventually(t, func() bool { return strings.Contains(stdout.String(), "sign-in link") }, 10*time.Second, 10*time.Millisecond)
	assert.NotContains(t, stdout.String(), token, "the start-up link carries a one-time code, not the secret")
	assert.NotContains(t, stdout.String(), "instructor secret for", "a secret given is not printed")
	assert.NotContains(t, stderr.String(), token, "never in the logs")
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", cmd.Process.Pid))
	require.NoError(t, err)
	assert.NotContains(t, string(cmdline), token, "not on the command line, where ps shows it")

	// The start-up link signs in once; opened again, from the browser's
	// history, it is dead.
	m := regexp.MustCompile(`#signin=([0-9a-f]+)`).FindStringSubmatch(stdout.String())
	require.NotNil(t, m, stdout.String())
	signInOnce := func() int {
		req, _ := http.NewRequest("POST", base+"/classroom/api/session", strings.NewReader(`{"signin":"`+m[1]+`"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", base)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, 200, signInOnce())
	assert.Equal(t, 401, signInOnce(), "the link is dead once used")
}

// TestInstructorTokenSources: a file's first line; the flag, with a
// warning that ps shows it; a secret under 16 characters refused; none,
// and one is generated and printed once.
func TestInstructorTokenSources(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "secret")
	require.NoError(t, os.WriteFile(file, []byte("from-a-file-0123456789\nignored\n"), 0o600))
	for _, tc := range []struct {
		name       string
		args       []string
		wantErr    string
		wantStdout string
		wantStderr string
	}{
		{"file", []string{"--instructor-token-file", file}, "", "sign-in link", ""},
		{"flag", []string{"--instructor-token", "on-the-command-line-0123"}, "", "sign-in link", "--instructor-token puts the secret on the command line"},
		{"short", []string{"--instructor-token", "short"}, "at least 16", "", ""},
		{"generated", nil, "", "instructor secret for the sign-in page: ", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", ""}, tc.args...)...)
			cmd.Env = append(os.Environ(), "IDEMLAB_INSTRUCTOR_TOKEN=")
			var stdout, stderr lockedBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Start())
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			t.Cleanup(func() { cmd.Process.Kill(); <-done })
			if tc.wantErr != "" {
				select {
				case err := <-done:
					done <- err
					assert.Error(t, err)
					assert.Contains(t, stderr.String(), tc.wantErr)
				case <-time.After(60 * time.Second):
					t.Fatal("idemlab started with a short secret")
				}
				return
			}
			require.Eventually(t, func() bool { return strings.Contains(stdout.String(), tc.wantStdout) }, 60*time.Second, 10*time.Millisecond, stdout.String())
			assert.Contains(t, stderr.String(), tc.wantStderr)
		})
	}
}
