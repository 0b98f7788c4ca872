package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProjectorCapsStudentLanes is the 300-students-pressing-Send attack,
// scaled to 60 phones that each settle three wishes, every wish its own
// key: the projector draws at most its cap of rows, key rows included,
// counts the rest, and stays a page of a few thousand nodes.
func TestProjectorCapsStudentLanes(t *testing.T) {
	ts := classroomServer(t)
	proj, code := projectorTab(t, ts.URL)
	const phones, presses = 60, 3
	var wg sync.WaitGroup
	errs := make(chan error, phones)
	for i := range phones {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- pressAll(ts.URL, code, i, presses)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	run(t, proj, waitJS(`document.querySelector('#race svg.race') !== null && `+attemptsDrawn+` >= `+fmt.Sprint(phones*presses)))
	rows := countIn(t, proj, `#race svg.race g.rows > [data-row]`)
	assert.LessOrEqual(t, rows, 40+1, "rows drawn, key rows included (MAX_ROWS 40, and the ledger)")
	assert.Equal(t, phones*presses, eval[int](t, proj, attemptsDrawn), "every attempt is drawn or counted")
	nodes := eval[int](t, proj, `document.querySelectorAll('#race *').length`)
	assert.Less(t, nodes, 5000, "nodes under the race view")
}

// pressAll joins a room as phone i and presses Send until it has had
// presses answers.
func pressAll(base, code string, i, presses int) error {
	u := "ws" + strings.TrimPrefix(base, "http") + "/classroom/ws/" + code
	ws, _, err := (&websocket.Dialer{HandshakeTimeout: 10 * time.Second}).Dial(u, http.Header{"Origin": {base}})
	if err != nil {
		return err
	}
	defer ws.Close()
	ws.SetReadDeadline(time.Now().Add(60 * time.Second))
	if err := ws.WriteJSON(map[string]string{"type": "join", "nickname": fmt.Sprintf("p%d", i), "secret": fmt.Sprintf("%032x", 5000+i)}); err != nil {
		return err
	}
	answered := 0
	if err := ws.WriteJSON(map[string]string{"type": "send"}); err != nil {
		return err
	}
	for answered < presses {
		var m struct{ Type, Code string }
		if err := ws.ReadJSON(&m); err != nil {
			return fmt.Errorf("phone %d after %d answers: %w", i, answered, err)
		}
		switch {
		case m.Type == "result":
			answered++
		case m.Type == "error" && (m.Code == "rate-limited" || m.Code == "wait"):
			time.Sleep(300 * time.Millisecond) // one transfer a second: press again
		default:
			continue
		}
		if answered < presses {
			if err := ws.WriteJSON(map[string]string{"type": "send"}); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestProjectorKicksAndLocks clicks what the instructor clicks: the ✕
// beside a student's name removes the student (the phone is told, the
// name leaves the roster), and "Lock the room" turns new students away.
func TestProjectorKicksAndLocks(t *testing.T) {
	ts := classroomServer(t)
	proj, code := projectorTab(t, ts.URL)
	join := func(nick string, secret int) (*websocket.Conn, string) {
		u := "ws" + strings.TrimPrefix(ts.URL, "http") + "/classroom/ws/" + code
		ws, _, err := (&websocket.Dialer{HandshakeTimeout: 10 * time.Second}).Dial(u, http.Header{"Origin": {ts.URL}})
		require.NoError(t, err)
		t.Cleanup(func() { ws.Close() })
		ws.SetReadDeadline(time.Now().Add(60 * time.Second))
		require.NoError(t, ws.WriteJSON(map[string]string{"type": "join", "nickname": nick, "secret": fmt.Sprintf("%032x", secret)}))
		for {
			var m struct{ Type, Code string }
			require.NoError(t, ws.ReadJSON(&m))
			if m.Type == "joined" {
				return ws, ""
			}
			if m.Type == "error" {
				return ws, m.Code
			}
		}
	}
	eve, _ := join("eve", 1)
	join("ana", 2)
	run(t, proj, waitJS(`document.querySelectorAll('#roster li').length === 2`))
	run(t, proj, click(`#roster li[data-student="s1"] button.kick`),
		waitJS(`document.querySelectorAll('#roster li').length === 1 && document.querySelector('#roster li').textContent.includes('ana')`))
	for {
		var m struct{ Type, Code string }
		require.NoError(t, eve.ReadJSON(&m), "eve is told before her socket closes")
		if m.Type == "error" {
			assert.Equal(t, "kicked", m.Code)
			break
		}
	}

	run(t, proj, click(`#lock`), waitJS(`!document.getElementById('locked').hidden && document.getElementById('lock').getAttribute('aria-pressed') === 'true'`))
	_, refused := join("late", 3)
	assert.Equal(t, "locked", refused)
	run(t, proj, click(`#lock`), waitJS(`document.getElementById('locked').hidden`))
	_, refused = join("late", 3)
	assert.Empty(t, refused, "unlocked: the new student joins")
}
