package classroom

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/internal/peer"
	"idemlab/store/sqlite"
)

func TestOfferDropsWhenTheQueueIsFull(t *testing.T) {
	cl, err := New(WithSQLiteLedgers(Config{SendQueue: 2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	require.NoError(t, err)
	defer cl.Close()
	room, err := cl.createRoom()
	require.NoError(t, err)

	server := make(chan *websocket.Conn, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err == nil {
			server <- ws
		}
	}))
	defer ts.Close()
	client, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http"), nil)
	require.NoError(t, err)
	defer client.Close()

	// No writer runs, so nothing drains the queue: the third message finds
	// it full, and the connection is dropped instead of waited for.
	c := newConn(<-server, room, RoleStudent)
	m, err := prepare(map[string]string{"type": "state"})
	require.NoError(t, err)
	assert.True(t, c.offer(m))
	assert.True(t, c.offer(m))
	assert.False(t, c.offer(m))
	assert.Equal(t, 1, room.Dropped())
	select {
	case <-c.done:
	default:
		t.Fatal("the connection is still open")
	}
	assert.False(t, c.offer(m), "a closed connection takes nothing")
	assert.Equal(t, 1, room.Dropped(), "a drop is counted once")
	_, _, err = client.ReadMessage()
	assert.Error(t, err, "the socket was closed")
}

func TestOriginRefusal(t *testing.T) {
	trusted, err := peer.ParseTrusted([]string{"127.0.0.1/32"})
	require.NoError(t, err)
	for _, tc := range []struct {
		name, origin, host, publicURL string
		headers                       map[string]string
		ok                            bool
		why                           string
	}{
		{name: "own host", origin: "http://127.0.0.1:8080", host: "127.0.0.1:8080", ok: true},
		{name: "https origin, Host without the default port", origin: "https://class.example", host: "class.example", ok: true},
		{name: "another site", origin: "http://evil.example", host: "127.0.0.1:8080", why: "is not this server's"},
		{name: "no origin", origin: "", host: "127.0.0.1:8080", why: "no Origin"},
		{name: "opaque origin", origin: "null", host: "127.0.0.1:8080", why: "not an http(s) origin"},
		{name: "file origin", origin: "file://127.0.0.1:8080", host: "127.0.0.1:8080", why: "not an http(s) origin"},
		{name: "a proxy that drops the port, no --public-url: says what to do", origin: "https://class.school.test:8443", host: "class.school.test",
			headers: map[string]string{"X-Forwarded-Proto": "https"}, why: "proxy_set_header Host $http_host"},
		{name: "a proxy that drops the port, with --public-url", origin: "https://class.school.test:8443", host: "class.school.test",
			publicURL: "https://class.school.test:8443/", headers: map[string]string{"X-Forwarded-Proto": "https"}, ok: true},
		{name: "a trusted proxy's X-Forwarded-Host", origin: "https://class.school.test:8443", host: "127.0.0.1:8080",
			headers: map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "class.school.test:8443", "X-Forwarded-For": "10.0.0.7"}, ok: true},
		{name: "https's default port written out", origin: "https://class.school.test", host: "127.0.0.1:8080",
			headers: map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "class.school.test:443", "X-Forwarded-For": "10.0.0.7"}, ok: true},
		{name: "the public URL's scheme counts", origin: "http://class.school.test:8443", host: "class.school.test",
			publicURL: "https://class.school.test:8443", why: "dropped the port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := &Classroom{cfg: Config{PublicURL: tc.publicURL}, sessions: newSessions(time.Now, time.Hour)}
			r := httptest.NewRequest("GET", "http://"+tc.host+"/classroom/ws/ABCDEF", nil)
			r.RemoteAddr = "127.0.0.1:4000"
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			p, _ := trusted.Resolve(r)
			why := cl.originRefusal(peer.With(r, p))
			if tc.ok {
				assert.Empty(t, why)
			} else {
				assert.Contains(t, why, tc.why)
			}
		})
	}
}

func TestIdleRoomsMakeSpace(t *testing.T) {
	cl, err := New(WithSQLiteLedgers(Config{MaxRooms: 1, IdleRoom: time.Nanosecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	require.NoError(t, err)
	defer cl.Close()
	a, err := cl.createRoom()
	require.NoError(t, err)
	require.True(t, a.reserve(), "someone is connecting to a")
	_, err = cl.createRoom()
	assert.Error(t, err, "a room in use is never evicted")
	a.unreserve()
	time.Sleep(time.Millisecond)
	b, err := cl.createRoom()
	require.NoError(t, err, "an idle room makes space")
	assert.Nil(t, cl.room(a.code), "the idle room is gone")
	assert.Same(t, b, cl.room(b.code))
}

// TestLedgerFilesBesideTheDatabase: with a database path, each run of a
// room is a SQLite file beside it, removed once the next run replaces it
// and when the classroom closes.
func TestLedgerFilesBesideTheDatabase(t *testing.T) {
	dir := t.TempDir()
	cl, err := New(WithSQLiteLedgers(Config{DB: filepath.Join(dir, "idemlab.db"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	require.NoError(t, err)
	room, err := cl.createRoom()
	require.NoError(t, err)
	newRun := func(level string) (nr *run, err error) {
		room.do(func() { nr, err = room.newRun(level, nil) })
		return nr, err
	}
	first, err := newRun("scoped")
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(dir, "idemlab-classroom-"+room.code+"-1.db"))
	res, _ := first.send(room.ctx, wish{lane: "s1.1", intent: "w1", customer: "c1", key: "k1", amount: amount}, nil)
	assert.Equal(t, 201, res.Response.Status)

	second, err := newRun("naive")
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(dir, "idemlab-classroom-"+room.code+"-2.db"))
	require.Eventually(t, func() bool {
		_, err := os.Stat(first.path)
		return os.IsNotExist(err)
	}, 10*time.Second, 10*time.Millisecond, "the replaced run's file is removed")
	h, _, err := second.history(room.ctx)
	require.NoError(t, err)
	assert.Empty(t, h.Attempts, "a fresh ledger has no history")
	assert.Equal(t, int64(startBalance), h.EndBalances[payer])

	cl.Close()
	left, _ := filepath.Glob(filepath.Join(dir, "idemlab-classroom-*"))
	assert.Empty(t, left, "closing the classroom removes its ledgers")
}

// TestRoomRefusesCommandsOnceClosed: a closed room's goroutine has
// returned, and a command handed to it (a reader leaving, a storm ending,
// a socket attaching) is refused at once: it neither runs nor waits.
func TestRoomRefusesCommandsOnceClosed(t *testing.T) {
	var logs lockedBuffer
	cl, err := New(WithSQLiteLedgers(Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}))
	require.NoError(t, err)
	defer cl.Close()
	room, err := cl.createRoom()
	require.NoError(t, err)
	ran := false
	require.True(t, room.do(func() { ran = true }))
	assert.True(t, ran, "an open room runs its commands")

	// A command that panics is logged; the room, and the server, go on.
	require.True(t, room.do(func() { panic("a bad message") }))
	ran = false
	require.True(t, room.do(func() { ran = true }))
	assert.True(t, ran, "the room runs commands after one panicked")
	assert.Contains(t, logs.String(), "a bad message")

	room.close()
	assert.False(t, room.do(func() { t.Error("a command ran after the room closed") }))
	assert.False(t, room.reserve(), "a closed room takes no connection")
	room.leave(&conn{}) // returns at once
	room.close()        // twice is once
}

// TestDoFromTheRoomsOwnGoroutine: a command that calls do (code written
// for other goroutines, reached from the room's) runs the inner command
// there and then, instead of waiting for itself forever.
func TestDoFromTheRoomsOwnGoroutine(t *testing.T) {
	cl, err := New(WithSQLiteLedgers(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	require.NoError(t, err)
	defer cl.Close()
	room, err := cl.createRoom()
	require.NoError(t, err)
	inner, returned := false, make(chan bool, 1)
	go func() { returned <- room.do(func() { inner = room.do(func() {}) }) }()
	select {
	case ok := <-returned:
		assert.True(t, ok)
		assert.True(t, inner, "the inner command ran on the room's goroutine")
	case <-time.After(10 * time.Second):
		t.Fatal("do called on the room's goroutine waited for itself")
	}
}

// lockedBuffer is a log's destination that the room's goroutine and the
// test may use at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestRefusalsAreLoggedOncePerClientAndMinute: a phone that is refused
// and asks again every few seconds is one log line a minute, not one a
// try; another phone, or another reason, is a line of its own; the
// presenter's count forgets a phone a minute after its last refusal.
func TestRefusalsAreLoggedOncePerClientAndMinute(t *testing.T) {
	var logs lockedBuffer
	clk := engine.NewManualClock(time.Unix(1_700_000_000, 0))
	cl, err := New(WithSQLiteLedgers(Config{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Now: clk.Now}))
	require.NoError(t, err)
	defer cl.Close()
	room, err := cl.createRoom()
	require.NoError(t, err)
	phone := peer.Peer{Addr: peer.Key("203.0.113.7:1"), Proxied: true}
	note := func(who, reason string) {
		room.do(func() { room.noteRefused(who, reason, phone) })
	}
	counts := func() (m map[string]int) {
		room.do(func() { m = room.refusedCounts() })
		return m
	}
	for range 5 {
		note("secret-a", refusedFull)
		clk.Advance(10 * time.Second)
	}
	note("secret-b", refusedFull)
	note("secret-a", refusedLocked)
	assert.Equal(t, 3, strings.Count(logs.String(), "classroom: refused"), logs.String())
	assert.Contains(t, logs.String(), "client=203.0.113.7 proxied=true")
	assert.Equal(t, map[string]int{refusedFull: 1, refusedLocked: 1}, counts())
	clk.Advance(20 * time.Second) // a minute since secret-a's first refusal
	note("secret-a", refusedLocked)
	assert.Equal(t, 3, strings.Count(logs.String(), "classroom: refused"), "the same client and reason within a minute of its last line")
	clk.Advance(61 * time.Second)
	assert.Empty(t, counts(), "a phone that stopped asking drops out of the count")
	note("secret-a", refusedLocked)
	assert.Equal(t, 4, strings.Count(logs.String(), "classroom: refused"))
}

// WithSQLiteLedgers hands cfg the SQLite store's ledgers, as cmd/idemlab
// does (internal/stores.Ledger, which imports this package). The rooms
// file is left out: these tests keep their rooms in memory. It is
// exported to the external tests too (this file is compiled only into the
// test binary).
func WithSQLiteLedgers(cfg Config) Config {
	cfg.OpenLedger = func(path string) (Ledger, error) {
		if path == "" {
			return sqlite.OpenMemory()
		}
		return sqlite.OpenFileWith(path, sqlite.FileOptions{Serial: true})
	}
	return cfg
}
