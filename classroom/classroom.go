// Package classroom is idemlab's live classroom: rooms that an instructor
// opens and projects, phones that join with a short code and a nickname,
// storms of simultaneous retries against a fresh ledger, and every trace
// event of every request sent over websockets to every screen in the room.
//
// Each room's state is owned by one goroutine, which runs the commands
// its connections, storms and transfers hand it one at a time and is the
// only one that broadcasts (room.go); the room's messages reach every
// screen in one order.
//
// Each connection has one reader and one writer goroutine, write deadlines,
// pings and a read limit; messages to a connection go through a bounded
// queue, and a client whose queue is full is dropped, never waited for.
// Trace events are batched per tick and each batch is encoded once and
// shared by every connection.
package classroom

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"idemlab/engine"
	"idemlab/engine/httpapi"
	"idemlab/internal/limit"
)

// Config configures a Classroom. Zero fields take the defaults in
// (*Config).defaults.
type Config struct {
	// InstructorToken is the instructor's secret; empty means the one the
	// rooms file keeps, else a new one.
	InstructorToken string
	// RotateToken makes a new secret and session even when the rooms file
	// keeps one: every signed-in browser must sign in again.
	RotateToken bool
	// ListenAddr is the address the server listens on; PublicURL, when set,
	// the address phones open instead of the one the projector was opened
	// at (see joinBase).
	ListenAddr string
	PublicURL  string
	// DB is the bank API's database path. The rooms are kept in a SQLite
	// file beside it (idemlab-classroom.db) and a room's storms run on
	// another (idemlab-classroom-<code>-<n>.db), a fresh file for every
	// storm. Empty means rooms that live in memory only and an in-memory
	// database per storm.
	DB string
	// OpenLedger opens a fresh database for one storm: a file at path, or
	// an in-memory one when path is "". Required: cmd/idemlab hands in the
	// SQLite store (store/sqlite), each storm's transactions run one at a
	// time so that the SQL projected is what one request runs.
	OpenLedger func(path string) (Ledger, error)
	// OpenRooms opens the rooms file at path (beside DB). Nil, or no DB,
	// keeps the rooms in memory only. cmd/idemlab hands in classroom/roomdb.
	OpenRooms func(path string) (Rooms, error)
	Logger    *slog.Logger

	// SendQueue is how many messages may wait for one connection's writer
	// before the connection is dropped as too slow.
	SendQueue int
	// WriteWait bounds each write to a connection.
	WriteWait time.Duration
	// PongWait is how long a connection may stay silent (no message, no
	// pong); PingPeriod how often the server pings.
	PongWait   time.Duration
	PingPeriod time.Duration
	// Tick is how often pending trace events are sent as one batch.
	Tick time.Duration
	// MaxRooms bounds the rooms open at once, MaxConns the connections of
	// one room.
	MaxRooms int
	MaxConns int
	// MessagesPerSecond and MessageBurst bound what one connection may send;
	// SendsPerSecond and SendBurst bound one student's transfers.
	MessagesPerSecond, MessageBurst float64
	SendsPerSecond, SendBurst       float64
	// IdleRoom is how long a room must have had no connection before a new
	// room may take its place when MaxRooms are open.
	IdleRoom time.Duration
	// LateRetryAfter is how long a late-retry storm waits (on the ledger's
	// clock) before its retries: longer than the retention of the levels
	// below scoped, shorter than scoped's. It is also the retry horizon the
	// checker judges the retention against.
	LateRetryAfter time.Duration
	// StudentLatency is the payment call of a student's own transfer.
	StudentLatency time.Duration
	// Limits bound what each client address may do (limits.go).
	Limits Limits
	// Now is the clock of the per-address limits and the sessions; nil
	// means time.Now.
	Now func() time.Time
}

func (c *Config) defaults() {
	set, setD, setF := limit.Default[int], limit.Default[time.Duration], limit.Default[float64]
	set(&c.SendQueue, 256)
	setD(&c.WriteWait, 10*time.Second)
	setD(&c.PongWait, 60*time.Second)
	setD(&c.PingPeriod, c.PongWait*9/10)
	setD(&c.Tick, 10*time.Millisecond)
	set(&c.MaxRooms, 32)
	set(&c.MaxConns, 1500)
	setF(&c.MessagesPerSecond, 10)
	setF(&c.MessageBurst, 20)
	setF(&c.SendsPerSecond, 1)
	setF(&c.SendBurst, 3)
	setD(&c.LateRetryAfter, time.Hour)
	setD(&c.IdleRoom, 10*time.Minute)
	setD(&c.StudentLatency, 300*time.Millisecond)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	c.Limits.defaults()
}

// Problems the classroom answers with, beside the engine's own.
var (
	causeForbidden   = engine.Cause{Slug: "classroom-forbidden", Title: "Only the instructor can do this", Status: 403}
	causeBadOrigin   = engine.Cause{Slug: "classroom-cross-origin", Title: "Request from another site refused", Status: 403}
	causeBadToken    = engine.Cause{Slug: "classroom-bad-token", Title: "Wrong instructor token", Status: 401}
	causeTooMany     = engine.Cause{Slug: "classroom-rate-limited", Title: "Too many requests", Status: 429}
	causeCodesTried  = engine.Cause{Slug: "classroom-codes-limited", Title: "Too many room codes that open no room", Status: 429}
	causeRoomsFull   = engine.Cause{Slug: "classroom-full", Title: "Too many rooms or connections", Status: 503}
	causeRoomMissing = engine.Cause{Slug: "classroom-room-not-found", Title: "No room has that code", Status: 404}
	causeWebsocket   = engine.Cause{Slug: "classroom-websocket", Title: "Websocket handshake refused", Status: 400}
)

// Causes lists the classroom's problem causes, for /problems/{slug}.
var Causes = []engine.Cause{causeForbidden, causeBadOrigin, causeBadToken, causeTooMany, causeCodesTried, causeRoomsFull, causeRoomMissing, causeWebsocket}

// instructorCookie carries the instructor's session, never the token itself.
const instructorCookie = "idemlab_instructor"

// Classroom holds the rooms and serves their pages, API and websockets. It
// is safe for concurrent use; Close stops every room, storm and connection.
type Classroom struct {
	cfg      Config
	token    string
	tokenSum [32]byte
	// sessions are the instructor's signed-in browsers; signInCode is the
	// one-time code of the link printed at start-up.
	sessions   *sessions
	signInCode string
	limits     *clientLimits
	upgrader   websocket.Upgrader

	// db keeps the rooms across restarts; nil without a database path.
	db Rooms
	// madeToken says the secret was made at this start: nobody knows it yet.
	madeToken bool

	mu     sync.Mutex
	rooms  map[string]*Room
	closed bool
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New returns a classroom. With a database path it opens the rooms file,
// removes the storm ledgers a killed process left, and brings back the
// rooms, the instructor's secret and session it keeps; otherwise, or when
// the file has none, it generates the secret unless cfg gives one.
func New(cfg Config) (*Classroom, error) {
	cfg.defaults()
	var db Rooms
	if cfg.OpenLedger == nil {
		return nil, errors.New("classroom: no Config.OpenLedger to open the storms' ledgers with")
	}
	if cfg.DB != "" {
		if n := removeLeftoverLedgers(cfg.DB); n > 0 {
			cfg.Logger.Info("classroom: removed storm ledgers left by a stopped server", "files", n)
		}
	}
	if cfg.DB != "" && cfg.OpenRooms != nil {
		var err error
		if db, err = cfg.OpenRooms(roomsPath(cfg.DB)); err != nil {
			return nil, fmt.Errorf("classroom: %w", err)
		}
	}
	token, stored, made, err := secretsFrom(db, cfg.InstructorToken, cfg.RotateToken)
	if err != nil {
		if db != nil {
			db.Close()
		}
		return nil, fmt.Errorf("classroom: instructor secret: %w", err)
	}
	if n := len(token); n < MinTokenLength {
		if db != nil {
			db.Close()
		}
		return nil, fmt.Errorf("classroom: the instructor token is %d characters; it needs at least %d", n, MinTokenLength)
	}
	sess := newSessions(cfg.Now, SessionTTL)
	sess.load(stored)
	code, err := sess.newSignInCode()
	if err != nil {
		return nil, fmt.Errorf("classroom: generate sign-in code: %w", err)
	}
	cfg.InstructorToken = token
	ctx, cancel := context.WithCancel(context.Background())
	c := &Classroom{cfg: cfg, token: token, tokenSum: sha256.Sum256([]byte(token)), db: db, madeToken: made,
		sessions: sess, signInCode: code, limits: newClientLimits(cfg.Limits, cfg.Now),
		rooms: map[string]*Room{}, ctx: ctx, cancel: cancel}
	if db != nil {
		// Signed-in browsers stay signed in across a restart: each sign-in
		// and sign-out is written to the rooms file.
		sess.persist = func(live string) {
			if err := db.SetSetting(settingSessions, live); err != nil {
				cfg.Logger.Warn("classroom: save sessions", "err", err)
			}
		}
		if err := c.restore(); err != nil {
			c.Close()
			return nil, err
		}
	}
	c.upgrader = websocket.Upgrader{
		HandshakeTimeout:  10 * time.Second,
		ReadBufferSize:    1024,
		WriteBufferSize:   4096,
		WriteBufferPool:   &sync.Pool{},
		EnableCompression: true,
		CheckOrigin:       func(r *http.Request) bool { return c.originRefusal(r) == "" },
		Error: func(w http.ResponseWriter, r *http.Request, status int, reason error) {
			c := causeWebsocket
			c.Status = status
			httpapi.Write(w, c.Problem(reason.Error()).Response())
		},
	}
	return c, nil
}

// InstructorPath is the path that opens the projector as the instructor:
// a one-time sign-in code in the fragment, which never reaches a server's
// request line or its logs. The page trades it for a session cookie; from
// then on the link is dead, so the copy that the browser's history keeps
// signs nobody in. The instructor's long-lived secret is typed into the
// sign-in page's password field instead, and is never put in a URL.
func (c *Classroom) InstructorPath() string {
	return "/classroom/teach#signin=" + url.QueryEscape(c.signInCode)
}

// GeneratedToken is the instructor's secret when this start made it (no
// secret was given and none was kept): the command prints it that once.
// Otherwise it is "".
func (c *Classroom) GeneratedToken() string {
	if !c.madeToken {
		return ""
	}
	return c.token
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

const codeAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789" // no 0/O, 1/I/L: read off a projector

func (c *Classroom) createRoom() (*Room, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("the server is shutting down")
	}
	if len(c.rooms) >= c.cfg.MaxRooms {
		c.evictIdleLocked(time.Now())
	}
	if len(c.rooms) >= c.cfg.MaxRooms {
		return nil, fmt.Errorf("at most %d rooms can be open at once", c.cfg.MaxRooms)
	}
	for {
		b := make([]byte, 6)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("room code: %w", err)
		}
		for i := range b {
			b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)]
		}
		code := string(b)
		if _, taken := c.rooms[code]; taken {
			continue
		}
		room := newRoom(c, code, func(r *Room) { r.saveDoc = true })
		c.rooms[code] = room
		return room, nil
	}
}

// evictIdleLocked closes the rooms nobody has been connected to for
// IdleRoom, to make space for a new one. The caller holds c.mu.
func (c *Classroom) evictIdleLocked(now time.Time) {
	for code, r := range c.rooms {
		if r.idleSince(now) >= c.cfg.IdleRoom {
			delete(c.rooms, code)
			c.wg.Add(1)
			go func() {
				defer c.wg.Done()
				r.close()
				// Once the room has stopped, no tick writes it back.
				if c.db != nil {
					c.db.DeleteRoom(code)
				}
			}()
		}
	}
}

func (c *Classroom) room(code string) *Room {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rooms[strings.ToUpper(code)]
}

// Close stops every room: storms are cancelled, connections closed, and
// Close returns when every goroutine the classroom started has returned.
func (c *Classroom) Close() {
	c.mu.Lock()
	c.closed = true
	rooms := make([]*Room, 0, len(c.rooms))
	for _, r := range c.rooms {
		rooms = append(rooms, r)
	}
	c.mu.Unlock()
	for _, r := range rooms {
		r.do(func() { r.save(true) }) // the last word of every room, before its ledger closes
	}
	c.cancel()
	for _, r := range rooms {
		r.close()
	}
	c.wg.Wait()
	if c.db != nil {
		c.db.Close()
	}
}
