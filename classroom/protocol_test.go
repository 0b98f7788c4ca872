package classroom_test

// (Over 500 lines on purpose: the classroom's protocol tests over real
// websockets share one set of dialling and reading helpers kept here.)

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/classroom"
	"idemlab/classroom/roomdb"
	"idemlab/engine"
	"idemlab/internal/peer"
	"idemlab/lab"
)

// The classroom's tests run over real sockets: httptest.NewServer over
// the classroom's own routes (Register), real websockets, real storms
// against a real SQLite ledger.

const testToken = "instructor-secret-for-tests-0123456789"

// waitLong bounds how long a test waits for a message. It is a safety net
// against a hang, not a speed requirement.
const waitLong = 60 * time.Second

type classroomEnv struct {
	t   testing.TB
	ts  *httptest.Server
	cl  *classroom.Classroom
	jar http.CookieJar
}

// newClassroomEnv starts the classroom with cfg, signed in to with
// testToken.
func newClassroomEnv(t testing.TB, cfg classroom.Config) *classroomEnv {
	return newClassroomEnvOn(t, cfg, nil)
}

// newClassroomEnvOn is newClassroomEnv with each accepted connection passed
// through wrap, as a constrained network would.
func newClassroomEnvOn(t testing.TB, cfg classroom.Config, wrap func(net.Conn) net.Conn) *classroomEnv {
	t.Helper()
	cfg.InstructorToken = testToken
	return newClassroomEnvWith(t, cfg, wrap, nil)
}

// newClassroomEnvWith starts the classroom with cfg (its files beside
// cfg.DB, when set) and the browser's cookie jar (a new one when nil). It
// hands the classroom the stores cmd/idemlab does (SQLite ledgers, the
// rooms file of classroom/roomdb) and serves its routes as the server
// does: on their own mux, each request's peer resolved with no proxy
// trusted.
func newClassroomEnvWith(t testing.TB, cfg classroom.Config, wrap func(net.Conn) net.Conn, jar http.CookieJar) *classroomEnv {
	t.Helper()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg = classroom.WithSQLiteLedgers(cfg)
	cfg.OpenRooms = func(path string) (classroom.Rooms, error) { return roomdb.OpenRooms(path) }
	cl, err := classroom.New(cfg)
	require.NoError(t, err)
	mux := http.NewServeMux()
	cl.Register(mux)
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := peer.Trusted{}.Resolve(r)
		mux.ServeHTTP(w, peer.With(r, p))
	}))
	if wrap != nil {
		ts.Listener = wrapListener{ts.Listener, wrap}
	}
	ts.Start()
	if jar == nil {
		jar, _ = cookiejar.New(nil)
	}
	t.Cleanup(func() {
		cl.Close() // closes every websocket first, so the test server has nothing left to wait for
		ts.Close()
	})
	return &classroomEnv{t: t, ts: ts, cl: cl, jar: jar}
}

type wrapListener struct {
	net.Listener
	wrap func(net.Conn) net.Conn
}

func (l wrapListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return l.wrap(c), nil
}

func (e *classroomEnv) post(path string, body any, origin string) *http.Response {
	e.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", e.ts.URL+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	res, err := (&http.Client{Jar: e.jar}).Do(req)
	require.NoError(e.t, err)
	return res
}

// signIn trades the token for the instructor's cookie and opens a room.
func (e *classroomEnv) openRoom() string {
	e.t.Helper()
	res := e.post("/classroom/api/session", map[string]string{"token": testToken}, e.ts.URL)
	res.Body.Close()
	require.Equal(e.t, 200, res.StatusCode)
	res = e.post("/classroom/api/rooms", map[string]string{}, e.ts.URL)
	defer res.Body.Close()
	require.Equal(e.t, 201, res.StatusCode)
	var room struct{ Code string }
	require.NoError(e.t, json.NewDecoder(res.Body).Decode(&room))
	require.Len(e.t, room.Code, 6)
	return room.Code
}

// wsClient is a test's websocket: a goroutine reads every message into a
// channel, unless the client is made to stop reading.
type wsClient struct {
	t    testing.TB
	ws   *websocket.Conn
	msgs chan msg
	mu   sync.Mutex
	err  error
}

type msg struct {
	Type string          `json:"type"`
	Code string          `json:"code"`
	Raw  json.RawMessage `json:"-"`
}

func (e *classroomEnv) dial(code, role string, withCookie bool, origin string, dialer *websocket.Dialer) (*wsClient, *http.Response, error) {
	if dialer == nil {
		dialer = &websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	}
	if withCookie {
		dialer.Jar = e.jar
	}
	u := "ws" + strings.TrimPrefix(e.ts.URL, "http") + "/classroom/ws/" + code
	if role != "" {
		u += "?role=" + role
	}
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	ws, res, err := dialer.Dial(u, h)
	if err != nil {
		return nil, res, err
	}
	// A projector gets every storm's events; a phone far fewer, and a test
	// may hold hundreds of phones.
	buf := 1 << 12
	if role == classroom.RoleProjector {
		buf = 1 << 16
	}
	c := &wsClient{t: e.t, ws: ws, msgs: make(chan msg, buf)}
	e.t.Cleanup(func() { ws.Close() })
	return c, res, nil
}

func (e *classroomEnv) projector(code string) *wsClient {
	e.t.Helper()
	c, _, err := e.dial(code, classroom.RoleProjector, true, e.ts.URL, nil)
	require.NoError(e.t, err)
	c.readAll()
	c.next("welcome")
	return c
}

func (e *classroomEnv) student(code, nickname, secret string) *wsClient {
	e.t.Helper()
	c, _, err := e.dial(code, "", false, e.ts.URL, nil)
	require.NoError(e.t, err)
	c.readAll()
	c.next("welcome")
	c.send(map[string]string{"type": "join", "nickname": nickname, "secret": secret})
	c.next("joined")
	return c
}

func (c *wsClient) readAll() {
	go func() {
		defer close(c.msgs)
		for {
			_, data, err := c.ws.ReadMessage()
			if err != nil {
				c.mu.Lock()
				c.err = err
				c.mu.Unlock()
				return
			}
			var m msg
			if json.Unmarshal(data, &m) == nil {
				m.Raw = data
				c.msgs <- m
			}
		}
	}()
}

func (c *wsClient) send(v any) {
	c.t.Helper()
	require.NoError(c.t, c.ws.WriteJSON(v))
}

// next returns the next message of type typ, skipping the others.
func (c *wsClient) next(typ string) msg {
	c.t.Helper()
	return c.until(typ, func(msg) bool { return true })
}

func (c *wsClient) until(typ string, ok func(msg) bool) msg {
	c.t.Helper()
	deadline := time.After(waitLong)
	for {
		select {
		case m, open := <-c.msgs:
			if !open {
				c.t.Fatalf("connection closed while waiting for %q: %v", typ, c.err)
			}
			if m.Type == typ && ok(m) {
				return m
			}
		case <-deadline:
			c.t.Fatalf("no %q message within %s", typ, waitLong)
		}
	}
}

type reportMsg struct {
	Run    int
	Level  string
	Report struct {
		OK      bool
		Summary lab.Summary
	}
	Balances map[string]int64
	Storm    *struct{ Requests int }
	Vote     *struct {
		Revealed bool
		Run      int
		Counts   map[string]int
		Actual   *struct{ Choice string }
	}
}

func decode[T any](t testing.TB, m msg) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(m.Raw, &v))
	return v
}

func secret(n int) string { return fmt.Sprintf("%032x", n+1) }

// fireStorm sends a storm from the projector and waits for its report on
// every client, which all must agree.
func fireStorm(t *testing.T, proj *wsClient, others []*wsClient, spec classroom.StormSpec) reportMsg {
	t.Helper()
	proj.send(map[string]any{"type": "storm", "storm": spec})
	start := decode[struct{ Run int }](t, proj.next("storm"))
	isStormReport := func(m msg) bool {
		r := decode[reportMsg](t, m)
		return r.Run == start.Run && r.Storm != nil
	}
	want := decode[reportMsg](t, proj.until("report", isStormReport))
	for i, c := range others {
		got := decode[reportMsg](t, c.until("report", isStormReport))
		assert.Equal(t, want.Report.Summary, got.Report.Summary, "client %d saw another summary", i)
		assert.Equal(t, want.Vote, got.Vote, "client %d saw another vote", i)
	}
	require.NotNil(t, want.Storm)
	assert.Equal(t, spec.Clients*spec.Attempts, want.Storm.Requests)
	assert.Equal(t, spec.Clients*spec.Attempts, want.Report.Summary.Attempts, "every request is in the history")
	// The room says the storm is over after its report (screens show the
	// verdict first); like the projector's controls, the next storm waits
	// for that, or the room answers "busy".
	proj.until("state", func(m msg) bool { return !decode[struct{ Storming bool }](t, m).Storming })
	return want
}

func TestClassroomStormAtEachLevel(t *testing.T) {
	env := newClassroomEnv(t, classroom.Config{})
	code := env.openRoom()
	proj := env.projector(code)
	var phones []*wsClient
	for i := range 3 {
		phones = append(phones, env.student(code, fmt.Sprintf("student %d", i), secret(i)))
	}
	for _, level := range engine.Levels() {
		t.Run(level, func(t *testing.T) {
			rep := fireStorm(t, proj, phones, classroom.StormSpec{Level: level, Clients: 8, Keys: 2, Attempts: 2, LatencyMS: 20})
			s := rep.Report.Summary
			assert.Equal(t, 2, s.Intents)
			if level == engine.LevelNaive {
				assert.Equal(t, 16, s.Transfers, "naive executes every request")
				assert.Equal(t, 14, s.Duplicates)
				assert.Equal(t, int64(14*10_000), s.PaidTwice)
				assert.False(t, rep.Report.OK)
			} else {
				assert.Equal(t, 2, s.Transfers, "one transfer per key")
				assert.Zero(t, s.Duplicates)
			}
			assert.Equal(t, int64(100_000_000)-s.Moved, rep.Balances["alice"], "the balances are the ledger's")
		})
	}
}

func TestClassroomStormFaults(t *testing.T) {
	env := newClassroomEnv(t, classroom.Config{})
	code := env.openRoom()
	proj := env.projector(code)
	phone := env.student(code, "ana", secret(0))
	cases := []struct {
		name  string
		spec  classroom.StormSpec
		check func(t *testing.T, r reportMsg)
	}{
		{"late retry after the short retention pays again", classroom.StormSpec{Level: engine.LevelReplay, Clients: 4, Keys: 4, Attempts: 2, Fault: classroom.FaultLateRetry},
			func(t *testing.T, r reportMsg) {
				assert.Equal(t, 4, r.Report.Summary.Duplicates, "every late retry is a second transfer")
				assert.Equal(t, 4, r.Report.Summary.Lost)
			}},
		{"late retry within scoped's retention is replayed", classroom.StormSpec{Level: engine.LevelScoped, Clients: 4, Keys: 4, Attempts: 2, Fault: classroom.FaultLateRetry},
			func(t *testing.T, r reportMsg) {
				assert.Zero(t, r.Report.Summary.Duplicates)
				assert.Equal(t, 4, r.Report.Summary.Replays)
				assert.True(t, r.Report.OK)
			}},
		{"lost responses are replayed at scoped", classroom.StormSpec{Level: engine.LevelScoped, Clients: 6, Keys: 6, Attempts: 2, Fault: classroom.FaultLoseResponse},
			func(t *testing.T, r reportMsg) {
				assert.Zero(t, r.Report.Summary.Duplicates)
				assert.Equal(t, 6, r.Report.Summary.Replays)
				assert.Equal(t, 6, r.Report.Summary.Lost)
			}},
		{"a crash before commit leaves nothing to pay twice at naive", classroom.StormSpec{Level: engine.LevelNaive, Clients: 3, Keys: 3, Attempts: 2, Fault: classroom.FaultCrash, Phase: engine.PhaseCommit},
			func(t *testing.T, r reportMsg) {
				assert.Equal(t, 3, r.Report.Summary.Transfers, "only the retries committed")
				assert.Zero(t, r.Report.Summary.Duplicates)
			}},
		{"a client that times out during execution retries into 409 at in-progress", classroom.StormSpec{Level: engine.LevelInProgress, Clients: 2, Keys: 2, Attempts: 2, Fault: classroom.FaultClientTimeout, Phase: engine.PhaseExecute, LatencyMS: 1500},
			func(t *testing.T, r reportMsg) {
				assert.Equal(t, 2, r.Report.Summary.Conflicts, "each retry arrives while its first attempt is paying")
				assert.Zero(t, r.Report.Summary.Duplicates)
			}},
		{"a corrected amount under the same key gets 422 at fingerprint", classroom.StormSpec{Level: engine.LevelFingerprint, Clients: 2, Keys: 2, Attempts: 2, ChangeAmount: true},
			func(t *testing.T, r reportMsg) {
				assert.Equal(t, 2, r.Report.Summary.Mismatches)
				assert.Zero(t, r.Report.Summary.Duplicates)
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, fireStorm(t, proj, []*wsClient{phone}, tc.spec))
		})
	}
}

func TestClassroomPredictThenReveal(t *testing.T) {
	env := newClassroomEnv(t, classroom.Config{})
	code := env.openRoom()
	proj := env.projector(code)
	a := env.student(code, "ana", secret(0))
	b := env.student(code, "bo", secret(1))
	proj.send(map[string]string{"type": "ask"})
	a.until("state", func(m msg) bool { return strings.Contains(string(m.Raw), `"open":true`) })
	b.until("state", func(m msg) bool { return strings.Contains(string(m.Raw), `"open":true`) })
	a.send(map[string]string{"type": "vote", "choice": "double"})
	a.next("voted")
	b.send(map[string]string{"type": "vote", "choice": "201"})
	b.next("voted")
	proj.until("state", func(m msg) bool { return strings.Contains(string(m.Raw), `"votes":2`) })
	// The report reveals the histogram to every screen, with what really
	// happened; fireStorm checked that the phones got the same vote.
	rep := fireStorm(t, proj, []*wsClient{a, b}, classroom.StormSpec{Level: engine.LevelNaive, Clients: 2, Keys: 1, Attempts: 1})
	require.NotNil(t, rep.Vote)
	assert.True(t, rep.Vote.Revealed)
	assert.Equal(t, map[string]int{"double": 1, "201": 1, "none": 0}, rep.Vote.Counts, "naive's answers: charged twice, the first answer, none")
	require.NotNil(t, rep.Vote.Actual)
	assert.Equal(t, "double", rep.Vote.Actual.Choice, "two simultaneous requests at naive pay twice")
	assert.Equal(t, rep.Run, rep.Vote.Run, "the vote belongs to the storm it was asked before")

	// The next storm, with no new question, is not judged against that
	// vote: its verdict carries none, and the room's vote is cleared.
	rep2 := fireStorm(t, proj, []*wsClient{a, b}, classroom.StormSpec{Level: engine.LevelScoped, Clients: 2, Keys: 1, Attempts: 2})
	assert.Nil(t, rep2.Vote, "a later storm does not judge an earlier storm's vote")
	a.until("state", func(m msg) bool {
		return !decode[struct{ Storming bool }](t, m).Storming && !strings.Contains(string(m.Raw), `"question"`)
	})
}

func TestClassroomVoteChoicesFitTheLevel(t *testing.T) {
	env := newClassroomEnv(t, classroom.Config{})
	code := env.openRoom()
	proj := env.projector(code)
	a := env.student(code, "ana", secret(0))
	for _, tc := range []struct {
		level string
		want  string
	}{
		{engine.LevelNaive, `"choices":["double","201","none"]`},
		{engine.LevelUnique, `"choices":["double","200","none"]`},
		{engine.LevelFingerprint, `"choices":["double","200","422","none"]`},
		{engine.LevelInProgress, `"choices":["double","200","409","422","none"]`},
		{engine.LevelScoped, `"choices":["double","201","409","422","none"]`},
	} {
		proj.send(map[string]string{"type": "ask", "level": tc.level})
		a.until("state", func(m msg) bool { return strings.Contains(string(m.Raw), tc.want) })
	}
	// At scoped no server answers "already processed": the vote refuses it.
	a.send(map[string]string{"type": "vote", "choice": "200"})
	e := a.next("error")
	assert.Contains(t, string(e.Raw), "not one of this vote's")
}

func TestClassroomStudentBasementAndRetry(t *testing.T) {
	for _, tc := range []struct {
		level      string
		transfers  int
		replayed   bool
		duplicates int
	}{
		{engine.LevelNaive, 2, false, 1},
		{engine.LevelScoped, 1, true, 0},
	} {
		t.Run(tc.level, func(t *testing.T) {
			env := newClassroomEnv(t, classroom.Config{StudentLatency: time.Millisecond})
			code := env.openRoom()
			proj := env.projector(code)
			proj.send(map[string]string{"type": "level", "level": tc.level})
			proj.until("report", func(m msg) bool { return decode[reportMsg](t, m).Level == tc.level })
			phone := env.student(code, "ana", secret(0))

			phone.send(map[string]any{"type": "send", "basement": true})
			type result struct {
				Status    int
				Delivered bool
				Retrying  bool
				Replayed  bool
				Key       string
				Lane      string
			}
			first := decode[result](t, phone.next("result"))
			assert.False(t, first.Delivered, "the basement lost the answer")
			assert.True(t, first.Retrying)

			phone.send(map[string]any{"type": "send"})
			second := decode[result](t, phone.next("result"))
			assert.True(t, second.Delivered)
			assert.Equal(t, first.Key, second.Key, "the retry carries the same key")
			assert.Equal(t, tc.replayed, second.Replayed)
			assert.Equal(t, 201, second.Status)
			assert.False(t, second.Retrying)

			// The projector gets the student's lanes, then the checker's verdict.
			proj.until("events", func(m msg) bool { return strings.Contains(string(m.Raw), `"lane":"`+second.Lane+`"`) })
			rep := decode[reportMsg](t, proj.until("report", func(m msg) bool {
				return decode[reportMsg](t, m).Report.Summary.Attempts == 2
			}))
			assert.Equal(t, tc.transfers, rep.Report.Summary.Transfers)
			assert.Equal(t, tc.duplicates, rep.Report.Summary.Duplicates)
		})
	}
}

func TestClassroomReloadKeepsIdentity(t *testing.T) {
	env := newClassroomEnv(t, classroom.Config{})
	code := env.openRoom()
	type joined struct{ ID, Nickname string }
	a := env.student(code, "ana", secret(7))
	a.ws.Close()
	again, _, err := env.dial(code, "", false, env.ts.URL, nil)
	require.NoError(t, err)
	again.readAll()
	again.send(map[string]string{"type": "join", "nickname": "  ana  ", "secret": secret(7)})
	j := decode[joined](t, again.next("joined"))
	assert.Equal(t, "s1", j.ID, "the same secret is the same student")
	assert.Equal(t, "ana", j.Nickname, "nicknames are trimmed")
	other, _, err := env.dial(code, "", false, env.ts.URL, nil)
	require.NoError(t, err)
	other.readAll()
	other.send(map[string]string{"type": "join", "nickname": "<b>bo</b>", "secret": secret(8)})
	j = decode[joined](t, other.next("joined"))
	assert.Equal(t, "s2", j.ID)
	assert.Equal(t, "<b>bo</b>", j.Nickname, "markup in a nickname is kept as text; the pages set it with textContent")
}

func TestClassroomStudentsCannotControlTheRoom(t *testing.T) {
	env := newClassroomEnv(t, classroom.Config{})
	code := env.openRoom()
	proj := env.projector(code)
	phone := env.student(code, "mallory", secret(0))
	for _, m := range []map[string]any{
		{"type": "storm", "storm": classroom.StormSpec{Level: "naive", Clients: 5}},
		{"type": "level", "level": "scoped"},
		{"type": "reset"},
		{"type": "ask"},
		{"type": "reveal"},
	} {
		phone.send(m)
		e := decode[struct{ Code string }](t, phone.next("error"))
		assert.Equal(t, "forbidden", e.Code, "%v", m["type"])
	}
	// The room is as the instructor left it: no run, no storm, naive.
	proj.send(map[string]string{"type": "ask"})
	st := decode[struct {
		Run      int
		Level    string
		Storming bool
	}](t, proj.until("state", func(m msg) bool { return strings.Contains(string(m.Raw), `"open":true`) }))
	assert.Zero(t, st.Run, "no ledger was opened by the student")
	assert.Equal(t, "naive", st.Level)
	assert.False(t, st.Storming)

	// A phone cannot project, and never sees the token.
	_, res, err := env.dial(code, classroom.RoleProjector, false, env.ts.URL, nil)
	require.Error(t, err)
	assert.Equal(t, 403, res.StatusCode)
	res = (&classroomEnv{t: t, ts: env.ts, jar: mustJar()}).post("/classroom/api/rooms", map[string]string{}, env.ts.URL)
	res.Body.Close()
	assert.Equal(t, 403, res.StatusCode, "students cannot open rooms")
	phone.send(map[string]string{"type": "vote", "choice": "201"})
	m := phone.next("voted")
	assert.NotContains(t, string(m.Raw), testToken)
}

func mustJar() http.CookieJar {
	j, _ := cookiejar.New(nil)
	return j
}

func TestClassroomInstructorSignIn(t *testing.T) {
	env := newClassroomEnv(t, classroom.Config{})
	assert.True(t, strings.HasPrefix(env.cl.InstructorPath(), "/classroom/teach#signin="), env.cl.InstructorPath())
	assert.NotContains(t, env.cl.InstructorPath(), testToken, "the printed link carries a one-time code, not the secret")
	res := env.post("/classroom/api/session", map[string]string{"token": "wrong"}, env.ts.URL)
	res.Body.Close()
	assert.Equal(t, 401, res.StatusCode)
	assert.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
	res = env.post("/classroom/api/session", map[string]string{"token": testToken}, "http://evil.example")
	res.Body.Close()
	assert.Equal(t, 403, res.StatusCode, "a sign-in from another site is refused")
	res = env.post("/classroom/api/session", map[string]string{"token": testToken}, env.ts.URL)
	res.Body.Close()
	require.Equal(t, 200, res.StatusCode)
	for _, ck := range res.Cookies() {
		assert.NotContains(t, ck.Value, testToken, "the cookie is a session, not the token")
		assert.True(t, ck.HttpOnly)
		assert.Equal(t, http.SameSiteStrictMode, ck.SameSite)
	}
	code := env.openRoom()
	qr, err := http.Get(env.ts.URL + "/classroom/api/rooms/" + code + "/qr.png")
	require.NoError(t, err)
	png, _ := io.ReadAll(qr.Body)
	qr.Body.Close()
	assert.Equal(t, "image/png", qr.Header.Get("Content-Type"))
	assert.True(t, bytes.HasPrefix(png, []byte("\x89PNG")))
	for _, page := range []string{"/classroom/", "/classroom/teach", "/classroom/static/teach.js", "/classroom/static/teach-race.js", "/classroom/static/teach-verdict.js", "/classroom/static/tile.js", "/classroom/static/join.js", "/classroom/static/room.js", "/classroom/static/classroom.css"} {
		res, err := http.Get(env.ts.URL + page)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, 200, res.StatusCode, page)
	}
	res, err = http.Get(env.ts.URL + "/classroom/static/embed.go")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, 404, res.StatusCode, "Go sources are not embedded")
}

func TestClassroomOriginChecked(t *testing.T) {
	env := newClassroomEnv(t, classroom.Config{})
	code := env.openRoom()
	for _, origin := range []string{"http://evil.example", "", "null"} {
		_, res, err := env.dial(code, "", false, origin, nil)
		require.Error(t, err, "origin %q", origin)
		require.NotNil(t, res)
		assert.Equal(t, 403, res.StatusCode, "origin %q", origin)
	}
	_, res, err := env.dial("NOROOM", "", false, env.ts.URL, nil)
	require.Error(t, err)
	assert.Equal(t, 404, res.StatusCode)
}

func TestClassroomBadMessagesAndRateLimit(t *testing.T) {
	env := newClassroomEnv(t, classroom.Config{MessagesPerSecond: 1, MessageBurst: 5})
	code := env.openRoom()
	phone := env.student(code, "eve", secret(0))
	for _, raw := range []string{`{"type":"send","nickname":"x"}`, `not json`, `{"type":"vote","choice":"500"}`} {
		require.NoError(t, phone.ws.WriteMessage(websocket.TextMessage, []byte(raw)))
		e := decode[struct{ Code string }](t, phone.next("error"))
		assert.Equal(t, "bad-message", e.Code, raw)
	}
	// Flooding is refused, and the connection survives.
	for range 10 {
		phone.send(map[string]string{"type": "vote", "choice": "201"})
	}
	e := decode[struct{ Code string }](t, phone.next("error"))
	assert.Contains(t, []string{"rate-limited", "vote-closed"}, e.Code)
	phone.until("error", func(m msg) bool { return decode[struct{ Code string }](t, m).Code == "rate-limited" })

	// A message over the read limit closes the connection.
	big := `{"type":"join","nickname":"` + strings.Repeat("a", classroom.MaxMessageBytes) + `"}`
	require.NoError(t, phone.ws.WriteMessage(websocket.TextMessage, []byte(big)))
	for range phone.msgs {
	}
	assert.Error(t, phone.err)
}

// TestClassroomSlowClientDropped connects a client that stops reading: the
// server's write to it blocks, its write deadline cuts it off, and everyone
// else receives the whole storm. (The other way a slow client is dropped,
// a full send queue, is tested beside the queue in package classroom.)
func TestClassroomSlowClientDropped(t *testing.T) {
	cfg := classroom.Config{SendQueue: 4096, WriteWait: time.Second, Tick: 5 * time.Millisecond}
	// Every socket of this server has a small kernel send buffer, as over a
	// thin network path, so a client that stops reading fills it quickly.
	thin := func(c net.Conn) net.Conn {
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetWriteBuffer(4096)
		}
		return c
	}
	env := newClassroomEnvOn(t, cfg, thin)
	code := env.openRoom()
	proj := env.projector(code)
	fast := env.student(code, "fast", secret(0))
	// The slow client's receive buffer is tiny and it never reads, so the
	// server's writes to it block and its queue fills.
	tiny := &websocket.Dialer{HandshakeTimeout: 10 * time.Second, NetDialContext: (&net.Dialer{
		Control: func(network, address string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048) })
			if err != nil {
				return err
			}
			return serr
		}}).DialContext}
	slow, _, err := env.dial(code, "", false, env.ts.URL, tiny)
	require.NoError(t, err)

	rep := fireStorm(t, proj, []*wsClient{fast}, classroom.StormSpec{Level: engine.LevelScoped, Clients: 400, Keys: 50, Attempts: 2})
	assert.Zero(t, rep.Report.Summary.Duplicates)
	proj.send(map[string]string{"type": "ask"}) // any change of state reports the drops
	proj.until("state", func(m msg) bool { return decode[struct{ Dropped int }](t, m).Dropped >= 1 })

	// Now the slow client reads what reached it: the connection ends before
	// the storm's report.
	slow.ws.SetReadDeadline(time.Now().Add(waitLong))
	sawReport := false
	for {
		_, data, err := slow.ws.ReadMessage()
		if err != nil {
			break
		}
		sawReport = sawReport || bytes.Contains(data, []byte(`"type":"report"`))
	}
	assert.False(t, sawReport, "the dropped client never got the report")
	// The others still work after the drop.
	fast.send(map[string]string{"type": "send"})
	fast.next("result")
}

func TestClassroomClosesEverything(t *testing.T) {
	env := newClassroomEnv(t, classroom.Config{})
	code := env.openRoom()
	proj := env.projector(code)
	proj.send(map[string]any{"type": "storm", "storm": classroom.StormSpec{Level: "scoped", Clients: 50, Attempts: 2, SlowMS: 200}})
	proj.next("storm")
	done := make(chan struct{})
	go func() { env.cl.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(waitLong):
		t.Fatal("Close did not return with a slow-motion storm running")
	}
	for range proj.msgs {
	}
	assert.Error(t, proj.err, "the projector's socket was closed")
}

// TestClassroomStormReportCarriesItsPicture fires storms and reads the
// picture in their reports: on the storm's own clock in milliseconds, its
// totals the report's summary, each moment's attempts listed for the
// projector and left out for the phones.
func TestClassroomStormReportCarriesItsPicture(t *testing.T) {
	env := newClassroomEnv(t, classroom.Config{})
	code := env.openRoom()
	proj := env.projector(code)
	phone := env.student(code, "ana", secret(0))
	type pictureReport struct {
		Run    int
		Storm  *struct{ Requests int }
		Report struct {
			Summary lab.Summary
			Rules   []struct {
				Rule lab.Rule
				OK   bool
			}
		}
		Picture    *lab.Picture
		PictureSVG string `json:"picture_svg"`
	}
	cases := []struct {
		name string
		spec classroom.StormSpec
	}{
		{"naive pays the retries again", classroom.StormSpec{Level: engine.LevelNaive, Clients: 12, Keys: 3, Attempts: 2, LatencyMS: 20}},
		{"scoped replays the lost answers", classroom.StormSpec{Level: engine.LevelScoped, Clients: 6, Keys: 6, Attempts: 2, Fault: classroom.FaultLoseResponse}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			proj.send(map[string]any{"type": "storm", "storm": tc.spec})
			start := decode[struct{ Run int }](t, proj.next("storm"))
			isStormReport := func(m msg) bool {
				r := decode[pictureReport](t, m)
				return r.Run == start.Run && r.Storm != nil
			}
			got := decode[pictureReport](t, proj.until("report", isStormReport))
			onPhone := decode[pictureReport](t, phone.until("report", isStormReport))
			proj.until("state", func(m msg) bool { return !decode[struct{ Storming bool }](t, m).Storming })

			p, s := got.Picture, got.Report.Summary
			require.NotNil(t, p, "a storm's report carries its picture")
			require.Equal(t, s, p.Summary)
			assert.Equal(t, tc.spec.Clients*tc.spec.Attempts, p.Totals.Sum(), "every request has one outcome")
			assert.Equal(t, s.Transfers, p.Totals.PaidOnce+p.Totals.PaidAgain, "every transfer is a request's")
			assert.Equal(t, s.Duplicates, p.Totals.PaidAgain)
			assert.Equal(t, s.PaidTwice, p.PaidTwice)
			assert.Equal(t, s.Lost, p.Unanswered)
			assert.Zero(t, p.Unattributed)
			assert.Less(t, p.StepMS, int64(1000), "a storm's clock counts milliseconds")
			assert.GreaterOrEqual(t, len(p.Buckets), lab.MinPictureBuckets)
			assert.LessOrEqual(t, len(p.Buckets), lab.MaxPictureBuckets)
			broken := 0
			for _, rr := range got.Report.Rules {
				if !rr.OK {
					broken++
				}
			}
			assert.Len(t, p.Causes, broken, "every broken rule is a cause")
			if tc.spec.Level == engine.LevelNaive {
				assert.Positive(t, p.PaidTwice)
				require.NotEmpty(t, p.Causes)
				assert.Equal(t, lab.RuleOneTransfer, p.Causes[0].Rule)
			} else {
				assert.Equal(t, tc.spec.Clients, p.Totals.Replayed, "each retry is answered from the key table")
				assert.Empty(t, p.Causes)
			}
			listed := 0
			for _, b := range p.Buckets {
				listed += len(b.Sample)
			}
			assert.Equal(t, p.Totals.Sum(), listed, "the projector gets every moment's attempts")
			assert.True(t, strings.HasPrefix(got.PictureSVG, "<svg"), "and the picture drawn")
			assert.Equal(t, len(p.Buckets), strings.Count(got.PictureSVG, "data-bucket="), "a column per moment")
			assert.Empty(t, onPhone.PictureSVG, "the phones draw nothing of it")

			q := onPhone.Picture
			require.NotNil(t, q, "the phones get the picture too")
			assert.Equal(t, p.Totals, q.Totals)
			assert.Equal(t, p.PaidTwice, q.PaidTwice)
			require.Len(t, q.Buckets, len(p.Buckets))
			for i, b := range q.Buckets {
				assert.Empty(t, b.Sample, "without the lists")
				assert.Equal(t, p.Buckets[i].Counts, b.Counts)
			}
		})
	}
}
