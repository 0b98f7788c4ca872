package classroom_test

import (
	"encoding/json"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/classroom"
	"idemlab/classroom/roomdb"
	"idemlab/engine"
)

// TestClassroomRoomsSurviveARestart runs a lesson on a server with a
// database, copies its files while it runs (what a SIGKILL leaves: the
// file as the last commit wrote it, WAL included) and starts a second
// server on the copy. The instructor is still signed in with the same
// cookie and secret; the room has its students and their votes; a
// projector that connects is sent the last storm's announcement, every
// event and the verdict, so it draws the same picture; a phone with the
// same secret is the same student.
func TestClassroomRoomsSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "idemlab.db")
	env := newClassroomEnvWith(t, classroom.Config{InstructorToken: testToken, DB: db}, nil, nil)
	code := env.openRoom()
	proj := env.projector(code)
	ana := env.student(code, "ana", secret(0))
	proj.send(map[string]string{"type": "ask"})
	ana.until("state", func(m msg) bool { return strings.Contains(string(m.Raw), `"open":true`) })
	ana.send(map[string]string{"type": "vote", "choice": "double"})
	ana.next("voted")
	rep := fireStorm(t, proj, []*wsClient{ana}, classroom.StormSpec{Level: engine.LevelNaive, Clients: 4, Keys: 1, Attempts: 2})
	require.Equal(t, 7, rep.Report.Summary.Duplicates, "eight requests of one wish at naive: seven too many")

	// Copy the files once the room's record with the verdict is on disk.
	killed := filepath.Join(t.TempDir(), "idemlab.db")
	require.Eventually(t, func() bool {
		copyFiles(t, strings.TrimSuffix(db, ".db")+"-classroom.db", strings.TrimSuffix(killed, ".db")+"-classroom.db")
		rooms, err := openRoomsForTest(strings.TrimSuffix(killed, ".db") + "-classroom.db")
		return err == nil && strings.Contains(rooms, `"report_projector"`)
	}, 10*time.Second, 50*time.Millisecond, "the room's record reaches its file")
	// A storm ledger left behind by the killed process is removed.
	leftover := strings.TrimSuffix(killed, ".db") + "-classroom-" + code + "-1.db"
	require.NoError(t, os.WriteFile(leftover, []byte("left by a killed process"), 0o600))

	// The second server runs on the copy, without --instructor-token: the
	// secret and the session come from its files. The browser is the same
	// (its cookie jar).
	env2 := newClassroomEnvWith(t, classroom.Config{DB: killed}, nil, env.jar)
	assert.NoFileExists(t, leftover)

	c, _, err := env2.dial(code, classroom.RoleProjector, true, env2.ts.URL, nil)
	require.NoError(t, err, "the instructor's browser is still signed in, and the room is there")
	c.readAll()
	w := c.next("welcome")
	assert.Contains(t, string(w.Raw), `"nickname":"ana"`)
	storm := decode[struct{ Run int }](t, c.next("storm"))
	assert.Equal(t, rep.Run, storm.Run)
	events := 0
	var got reportMsg
	for got.Run == 0 {
		m := c.nextAny()
		switch m.Type {
		case "events":
			events += len(decode[struct{ Events []json.RawMessage }](t, m).Events)
		case "report":
			got = decode[reportMsg](t, m)
		}
	}
	assert.Equal(t, rep.Report.Summary, got.Report.Summary, "the same verdict")
	assert.Equal(t, rep.Vote, got.Vote, "the same vote, judged by the same storm")
	assert.GreaterOrEqual(t, events, 8*5, "every phase of the storm's eight requests (five each at naive)")

	phone, _, err := env2.dial(code, "", false, env2.ts.URL, nil)
	require.NoError(t, err)
	phone.readAll()
	phone.next("welcome")
	phone.send(map[string]string{"type": "join", "nickname": "ana", "secret": secret(0)})
	j := phone.next("joined")
	assert.Contains(t, string(j.Raw), `"id":"s1"`, "the same student")
	assert.Contains(t, string(j.Raw), `"vote":"double"`, "with the vote she cast")

	// The way to sign in has not changed: the secret kept in the files
	// still signs a new browser in.
	other := &classroomEnv{t: t, ts: env2.ts, cl: env2.cl}
	other.jar, _ = cookiejar.New(nil)
	res := other.post("/classroom/api/session", map[string]string{"token": testToken}, env2.ts.URL)
	res.Body.Close()
	assert.Equal(t, 200, res.StatusCode)
}

func copyFiles(t *testing.T, from, to string) {
	t.Helper()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(from + suffix)
		if err != nil {
			os.Remove(to + suffix)
			continue
		}
		require.NoError(t, os.WriteFile(to+suffix, b, 0o600))
	}
}

// openRoomsForTest reads every room's record of a rooms file as one string.
func openRoomsForTest(path string) (string, error) {
	db, err := roomdb.OpenRooms(path)
	if err != nil {
		return "", err
	}
	defer db.Close()
	rooms, err := db.LoadRooms()
	var b strings.Builder
	for _, r := range rooms {
		b.Write(r.Record)
	}
	return b.String(), err
}

// nextAny is the next message, whatever its type.
func (c *wsClient) nextAny() msg {
	c.t.Helper()
	select {
	case m, open := <-c.msgs:
		if !open {
			c.t.Fatalf("connection closed: %v", c.err)
		}
		return m
	case <-time.After(waitLong):
		c.t.Fatalf("no message within %s", waitLong)
	}
	return msg{}
}
