package main

import (
	"bufio"
	"bytes"
	"net/http"
	"os/exec"
	"path/filepath"
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

// TestInstructorTokenIsNeverLogged runs the real binary with a known token,
// signs in wrongly and rightly, and checks that the token appears once, in
// the start-up link, and nowhere in the logs.
func TestInstructorTokenIsNeverLogged(t *testing.T) {
	const token = "tok-3f9a1c77e2b54d0c9e61"
	bin := buildBinary(t)
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "idemlab.db"),
		"--instructor-token", token)
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

	require.Eventually(t, func() bool { return strings.Contains(stdout.String(), "instructor link") }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, 1, strings.Count(stdout.String(), token), "printed once, in the instructor link")
	assert.NotContains(t, stderr.String(), token, "never in the logs")
}
