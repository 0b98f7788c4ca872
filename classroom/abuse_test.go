package classroom_test

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/classroom"
	"idemlab/engine"
)

// The attacks of "Hold up under abuse", each from another loopback address
// standing for another machine on the classroom's network.

// from returns a dialer whose connections leave from addr (127.0.0.2 and
// up: another machine as far as the server can tell).
func from(addr string) *net.Dialer {
	return &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}, Timeout: 10 * time.Second}
}

// wsFrom is a websocket dialer from addr, offering compression.
func wsFrom(addr string) *websocket.Dialer {
	return &websocket.Dialer{NetDial: from(addr).Dial, HandshakeTimeout: 10 * time.Second, EnableCompression: true}
}

// bomb is a 2,000,000-byte join message that deflates to about 2 KB.
func bomb() []byte {
	return []byte(`{"type":"join","secret":"` + strings.Repeat("0", 64) + `","nickname":"` + strings.Repeat("a", 2_000_000) + `"}`)
}

// TestClassroomCompressedBombRefused sends a message that is under the read
// limit on the wire and 2 MB once inflated: the server stops inflating at
// the limit and closes the connection (1009) instead of reading it whole.
func TestClassroomCompressedBombRefused(t *testing.T) {
	env := newClassroomEnv(t, classroom.Config{})
	code := env.openRoom()
	c, _, err := env.dial(code, "", false, env.ts.URL, wsFrom("127.0.0.2"))
	require.NoError(t, err)
	c.readAll()
	c.next("welcome")
	require.NoError(t, c.ws.SetCompressionLevel(9))
	var z bytes.Buffer
	fw, _ := flate.NewWriter(&z, 9)
	fw.Write(bomb())
	fw.Close()
	require.Less(t, z.Len(), classroom.MaxMessageBytes, "on the wire the bomb is under the read limit")
	require.NoError(t, c.ws.WriteMessage(websocket.TextMessage, bomb()))
	// Read whole, the message would be refused as a bad join and the
	// connection kept: an error message arrives instead of the close.
	for m := range c.msgs {
		require.NotEqual(t, "error", m.Type, "the 2 MB message was read whole: %s", m.Raw)
	}
	// The server closed the socket: with its close frame (1009), or, when
	// the rest of the frame was still unread as it closed, with a reset.
	require.Error(t, c.err)
	var ce *websocket.CloseError
	if errors.As(c.err, &ce) {
		assert.Equal(t, websocket.CloseMessageTooBig, ce.Code)
	}
}

// frozen returns a classroom configuration whose limits and sessions run
// on a clock that moves only when the test says, so that a test counts
// what an allowance lets through however slow the machine is.
func frozen() (classroom.Config, *engine.ManualClock) {
	clk := engine.NewManualClock(time.Unix(1_700_000_000, 0))
	return classroom.Config{Now: clk.Now}, clk
}

// postFrom sends a JSON POST to the classroom from addr, with the page's
// own Origin.
func (e *classroomEnv) postFrom(addr, path string, body any, jar http.CookieJar) *http.Response {
	e.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", e.ts.URL+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", e.ts.URL)
	client := &http.Client{Jar: jar, Transport: &http.Transport{DialContext: from(addr).DialContext}}
	res, err := client.Do(req)
	require.NoError(e.t, err)
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

// dialFrom opens a websocket to a room from addr and reads its welcome.
func (e *classroomEnv) dialFrom(addr, code string) (*wsClient, *http.Response, error) {
	c, res, err := e.dial(code, "", false, e.ts.URL, wsFrom(addr))
	if err != nil {
		return nil, res, err
	}
	c.readAll()
	c.next("welcome")
	return c, res, nil
}

// TestClassroomSignInLimitIsPerAddress: a machine that sends wrong secrets
// as fast as it can is held off after its allowance, and the instructor,
// from another machine, signs in at once.
func TestClassroomSignInLimitIsPerAddress(t *testing.T) {
	cfg, _ := frozen()
	env := newClassroomEnv(t, cfg)
	statuses := map[int]int{}
	for range 40 {
		statuses[env.postFrom("127.0.0.2", "/classroom/api/session", map[string]string{"token": "wrong-wrong-wrong-wrong"}, nil).StatusCode]++
	}
	assert.Equal(t, map[int]int{401: classroom.DefaultFailedSignInBurst, 429: 40 - classroom.DefaultFailedSignInBurst}, statuses)
	jar, _ := cookiejar.New(nil)
	for i := range 13 {
		res := env.postFrom("127.0.0.3", "/classroom/api/session", map[string]string{"token": testToken}, jar)
		require.Equal(t, 200, res.StatusCode, "the instructor's sign-in %d from another address", i)
	}
	assert.Equal(t, 429, env.postFrom("127.0.0.2", "/classroom/api/session", map[string]string{"token": testToken}, nil).StatusCode,
		"the guessing address waits, even with the right secret")
	// The instructor behind the same address (a school's NAT) is not
	// locked out: the one-time link is never held off, and a signed-in
	// browser opens rooms and projects them.
	code := strings.TrimPrefix(env.cl.InstructorPath(), "/classroom/teach#signin=")
	same, _ := cookiejar.New(nil)
	require.Equal(t, 200, env.postFrom("127.0.0.2", "/classroom/api/session", map[string]string{"signin": code}, same).StatusCode,
		"the one-time link from the guessing address")
	res := env.postFrom("127.0.0.2", "/classroom/api/rooms", map[string]string{}, same)
	assert.Equal(t, 201, res.StatusCode, "a signed-in instructor opens a room from the same address")
}

// TestClassroomOneTimeLinkAndSessions: the printed link signs in once;
// each sign-in is its own session; signing out ends one and not the
// other; a session expires after SessionTTL.
func TestClassroomOneTimeLinkAndSessions(t *testing.T) {
	cfg, clk := frozen()
	env := newClassroomEnv(t, cfg)
	code := strings.TrimPrefix(env.cl.InstructorPath(), "/classroom/teach#signin=")
	a, _ := cookiejar.New(nil)
	b, _ := cookiejar.New(nil)
	require.Equal(t, 200, env.postFrom("127.0.0.2", "/classroom/api/session", map[string]string{"signin": code}, a).StatusCode)
	assert.Equal(t, 401, env.postFrom("127.0.0.3", "/classroom/api/session", map[string]string{"signin": code}, b).StatusCode,
		"the link is dead once used: the browser's history keeps nothing usable")
	require.Equal(t, 200, env.postFrom("127.0.0.3", "/classroom/api/session", map[string]string{"token": testToken}, b).StatusCode)
	u, _ := url.Parse(env.ts.URL + "/classroom/")
	require.Len(t, a.Cookies(u), 1)
	require.Len(t, b.Cookies(u), 1)
	assert.NotEqual(t, a.Cookies(u)[0].Value, b.Cookies(u)[0].Value, "one session per sign-in")

	isInstructor := func(jar http.CookieJar) bool {
		res, err := (&http.Client{Jar: jar}).Get(env.ts.URL + "/classroom/api/session")
		require.NoError(t, err)
		defer res.Body.Close()
		return decodeBody[struct{ Instructor bool }](t, res).Instructor
	}
	assert.True(t, isInstructor(a))
	assert.True(t, isInstructor(b))
	req, _ := http.NewRequest("DELETE", env.ts.URL+"/classroom/api/session", nil)
	req.Header.Set("Origin", env.ts.URL)
	old := a.Cookies(u)[0]
	res, err := (&http.Client{Jar: a}).Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, 200, res.StatusCode)
	stale, _ := cookiejar.New(nil)
	stale.SetCookies(u, []*http.Cookie{old})
	assert.False(t, isInstructor(stale), "a signed-out session is dead even if the cookie was kept")
	assert.True(t, isInstructor(b), "signing out one browser leaves the others")
	clk.Advance(classroom.SessionTTL)
	assert.False(t, isInstructor(b), "a session expires")
}

func decodeBody[T any](t testing.TB, res *http.Response) T {
	t.Helper()
	var v T
	require.NoError(t, json.NewDecoder(res.Body).Decode(&v))
	return v
}

// TestClassroomJoinFloodFromOneAddress: a machine opens sockets and joins
// as fast as it can, against per-address figures made small (the defaults
// are sized for a school's NAT; TestClassBehindOneAddressGetsIn). Its
// students stop at its new-student allowance, each refused phone is told
// why and when to ask again and its socket closes, its sockets stop at
// its connect allowance, the presenter counts the refused, and a real
// student from another machine still joins.
func TestClassroomJoinFloodFromOneAddress(t *testing.T) {
	cfg, clk := frozen()
	cfg.Limits = classroom.Limits{ConnsPerClient: 8, ConnectBurst: 20, NewStudentBurst: 4}
	env := newClassroomEnv(t, cfg)
	code := env.openRoom()
	proj := env.projector(code)
	var open []*wsClient
	joined, refused, handshake := 0, map[string]int{}, map[int]int{}
	attempt := func(i int) {
		c, res, err := env.dialFrom("127.0.0.2", code)
		if err != nil {
			require.NotNil(t, res, "attempt %d: %v", i, err)
			handshake[res.StatusCode]++
			return
		}
		c.send(map[string]string{"type": "join", "nickname": fmt.Sprintf("bot%d", i), "secret": secret(1000 + i)})
		for m := range c.msgs {
			if m.Type == "joined" {
				joined++
				open = append(open, c)
				return
			}
			if m.Type == "error" {
				e := decode[struct {
					Code       string
					Detail     string
					RetryAfter int `json:"retry_after"`
				}](t, m)
				refused[e.Code]++
				assert.Contains(t, e.Detail, "from this network")
				assert.Positive(t, e.RetryAfter, "a paced phone is told when it will ask again")
				for range c.msgs {
				}
				require.Error(t, c.err, "a refused phone's socket is closed")
				return
			}
		}
	}
	for i := range 30 {
		attempt(i)
	}
	assert.Equal(t, 4, joined, "new students from one address")
	assert.Equal(t, map[string]int{"paced": 16}, refused, "refused in words")
	assert.Equal(t, map[int]int{429: 10}, handshake, "sockets past the address's 20 connects")
	// Its sockets are held: the 4 students' only.
	assert.Len(t, open, 4)

	env.studentFrom("127.0.0.3", code, "ana", secret(1))
	clk.Advance(time.Second) // the next state's turn
	st := decode[struct {
		Students int
		Refused  map[string]int
		Roster   []struct{ Nickname string }
	}](t, untilState(clk, proj, func(m msg) bool {
		return decode[struct{ Students int }](t, m).Students == 5
	}))
	assert.Len(t, st.Roster, 5)
	assert.Equal(t, 16, st.Refused["paced"], "the presenter counts each refused phone once")
	assert.Equal(t, 1, st.Refused["network"], "and the address whose sockets were refused")
}

// TestClassBehindOneAddressGetsIn: a class of 200 phones behind one
// address (a school's NAT) at the default figures, some pressing Join
// three times. Every phone gets in once the presenter sets the class
// size; the 201st is told the room is full and when it asks again, the
// presenter sees it waiting, and it gets in once the size is raised.
func TestClassBehindOneAddressGetsIn(t *testing.T) {
	cfg, clk := frozen()
	env := newClassroomEnv(t, cfg)
	code := env.openRoom()
	proj := env.projector(code)
	proj.send(map[string]any{"type": "size", "size": 200})
	clk.Advance(time.Second)
	untilState(clk, proj, func(m msg) bool {
		return decode[struct {
			ClassSize int `json:"class_size"`
		}](t, m).ClassSize == 200
	})
	var phones []*wsClient
	for i := range 200 {
		presses := 1
		if i%5 == 0 {
			presses = 3 // pressed Join again, twice, before the first answered
		}
		for range presses {
			c, res, err := env.dialFrom("127.0.0.2", code)
			require.NoError(t, err, "phone %d: %v", i, res)
			c.send(map[string]string{"type": "join", "nickname": fmt.Sprintf("p%d", i), "secret": secret(2000 + i)})
			c.next("joined")
			phones = append(phones, c)
		}
	}
	clk.Advance(time.Second)
	untilState(clk, proj, func(m msg) bool { return decode[struct{ Students int }](t, m).Students == 200 })

	late, _, err := env.dialFrom("127.0.0.2", code)
	require.NoError(t, err)
	late.send(map[string]string{"type": "join", "nickname": "late", "secret": secret(9999)})
	e := decode[struct {
		Code       string
		Detail     string
		RetryAfter int `json:"retry_after"`
	}](t, late.next("error"))
	assert.Equal(t, "full", e.Code)
	assert.Contains(t, e.Detail, "the room is full (200 of 200 students)")
	assert.Equal(t, 10, e.RetryAfter)
	clk.Advance(time.Second)
	untilState(clk, proj, func(m msg) bool { return decode[struct{ Refused map[string]int }](t, m).Refused["full"] == 1 })

	proj.send(map[string]any{"type": "size", "size": 201})
	clk.Advance(time.Second)
	untilState(clk, proj, func(m msg) bool {
		return decode[struct {
			ClassSize int `json:"class_size"`
		}](t, m).ClassSize == 201
	})
	env.studentFrom("127.0.0.2", code, "late", secret(9999))
	clk.Advance(time.Second)
	st := decode[struct{ Refused map[string]int }](t, untilState(clk, proj, func(m msg) bool {
		return decode[struct{ Students int }](t, m).Students == 201
	}))
	assert.Empty(t, st.Refused, "the phone that got in is no longer counted as refused")
}

// studentFrom joins a room as a phone at addr.
func (e *classroomEnv) studentFrom(addr, code, nickname, secret string) *wsClient {
	e.t.Helper()
	c, _, err := e.dialFrom(addr, code)
	require.NoError(e.t, err)
	c.send(map[string]string{"type": "join", "nickname": nickname, "secret": secret})
	c.next("joined")
	return c
}

// TestClassroomCodeGuessingLimited: one machine trying room codes gets 30
// wrong ones, then 429 even for the right code; another machine is not
// affected; and a machine that reached the room before (a school's NAT,
// where someone else mistyped) is never held off from it.
func TestClassroomCodeGuessingLimited(t *testing.T) {
	cfg, _ := frozen()
	env := newClassroomEnv(t, cfg)
	code := env.openRoom()
	env.studentFrom("127.0.0.4", code, "first", secret(4)) // the class's address reaches the room
	for _, addr := range []string{"127.0.0.2", "127.0.0.4"} {
		statuses := map[int]int{}
		for i := range 40 {
			guess := fmt.Sprintf("ZZZ%03d", i)
			_, res, err := env.dial(guess, "", false, env.ts.URL, wsFrom(addr))
			require.Error(t, err)
			statuses[res.StatusCode]++
		}
		assert.Equal(t, map[int]int{404: classroom.DefaultUnknownCodeBurst, 429: 40 - classroom.DefaultUnknownCodeBurst}, statuses, addr)
	}
	_, res, err := env.dial(code, "", false, env.ts.URL, wsFrom("127.0.0.2"))
	require.Error(t, err, "the right code from the guessing machine is refused too: no oracle")
	assert.Equal(t, 429, res.StatusCode)
	for _, path := range []string{"/qr.png", ""} {
		r, err := (&http.Client{Transport: &http.Transport{DialContext: from("127.0.0.2").DialContext}}).Get(env.ts.URL + "/classroom/api/rooms/" + code + path)
		require.NoError(t, err)
		r.Body.Close()
		assert.Equal(t, 429, r.StatusCode, "the QR and room routes count codes too")
	}
	env.studentFrom("127.0.0.3", code, "ana", secret(1))
	env.studentFrom("127.0.0.4", code, "second", secret(5)) // the room this address knows stays open to it
}

// TestClassroomKickAndLock: the instructor removes a student, who cannot
// come back with the same secret; another student from the same address
// (a school's NAT) still joins; a locked room takes no new student, and a
// student already in it comes back after a reload.
func TestClassroomKickAndLock(t *testing.T) {
	env := newClassroomEnv(t, classroom.Config{})
	code := env.openRoom()
	proj := env.projector(code)
	bot := env.studentFrom("127.0.0.2", code, "bot", secret(7))
	ana := env.studentFrom("127.0.0.3", code, "ana", secret(1))
	botID := decode[struct {
		Roster []struct{ ID, Nickname string }
	}](t, proj.until("state", func(m msg) bool {
		return decode[struct{ Students int }](t, m).Students == 2
	})).Roster[0].ID

	bot.send(map[string]string{"type": "kick", "student": "s2"})
	assert.Equal(t, "forbidden", decode[struct{ Code string }](t, bot.next("error")).Code, "students cannot kick")

	proj.send(map[string]string{"type": "kick", "student": botID})
	assert.Equal(t, "kicked", decode[struct{ Code string }](t, bot.next("error")).Code)
	for range bot.msgs {
	}
	st := decode[struct {
		Students int
		Roster   []struct{ Nickname string }
	}](t, proj.until("state", func(m msg) bool { return decode[struct{ Students int }](t, m).Students == 1 }))
	assert.Equal(t, "ana", st.Roster[0].Nickname)
	c, _, err := env.dialFrom("127.0.0.2", code)
	require.NoError(t, err)
	c.send(map[string]string{"type": "join", "nickname": "bot", "secret": secret(7)})
	assert.Equal(t, "kicked", decode[struct{ Code string }](t, c.next("error")).Code)
	env.studentFrom("127.0.0.2", code, "classmate", secret(8))

	proj.send(map[string]string{"type": "lock"})
	proj.until("state", func(m msg) bool { return decode[struct{ Locked bool }](t, m).Locked })
	c, _, err = env.dialFrom("127.0.0.4", code)
	require.NoError(t, err)
	c.send(map[string]string{"type": "join", "nickname": "late", "secret": secret(9)})
	assert.Equal(t, "locked", decode[struct{ Code string }](t, c.next("error")).Code)
	ana.ws.Close()
	env.studentFrom("127.0.0.3", code, "ana", secret(1)) // a reload: the same student
	proj.send(map[string]string{"type": "unlock"})
	proj.until("state", func(m msg) bool { return !decode[struct{ Locked bool }](t, m).Locked })
	env.studentFrom("127.0.0.4", code, "late", secret(9))
}

// TestClassroomStateIsNotSentPerConnection: sockets that open and close as
// fast as a machine can make them cost the projector a state message per
// StatesPerSecond turn, not one per tick. The clock stands still, so every
// change waits for the one turn the test lets pass.
func TestClassroomStateIsNotSentPerConnection(t *testing.T) {
	cfg, clk := frozen()
	env := newClassroomEnv(t, cfg)
	code := env.openRoom()
	proj := env.projector(code)
	clk.Advance(time.Second)
	proj.next("state") // the projector's own arrival
	// The count starts with the last state sent at the clock's own time:
	// the arrival may have gone out before the clock moved, and a state
	// would then be owed to the first change below. A new class size, sent
	// after the clock moves, is answered by a state at that time.
	clk.Advance(time.Second)
	proj.send(map[string]any{"type": "size", "size": 61})
	proj.until("state", func(m msg) bool {
		return decode[struct {
			ClassSize int `json:"class_size"`
		}](t, m).ClassSize == 61
	})
	for range 200 {
		c, _, err := env.dial(code, "", false, env.ts.URL, nil)
		require.NoError(t, err)
		c.ws.Close()
	}
	proj.send(map[string]string{"type": "ask"})
	time.Sleep(50 * time.Millisecond) // a few ticks pass; none may send
	clk.Advance(time.Second)
	states := 0
	last := proj.until("state", func(m msg) bool {
		states++
		return decode[struct{ Vote struct{ Open bool } }](t, m).Vote.Open
	})
	assert.Equal(t, 1, states, "200 connections and a vote, one state message")
	assert.Equal(t, "null", string(decode[struct{ Roster json.RawMessage }](t, last).Roster),
		"nobody joined: the roster, unchanged, is not sent again")
}

// untilState waits for a state message as until does, moving the frozen
// clock a second every 20 ms meanwhile. A room sends states at most
// StatesPerSecond on its own clock: a change it takes after the tick that
// used the test's last move of the clock would otherwise wait for a move
// that never comes (seen once in CI, at load 8).
func untilState(clk *engine.ManualClock, c *wsClient, ok func(msg) bool) msg {
	c.t.Helper()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				clk.Advance(time.Second)
			}
		}
	}()
	defer func() {
		close(stop)
		<-done
	}()
	return c.until("state", ok)
}
