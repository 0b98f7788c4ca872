// Package classroom is idemlab's live classroom: rooms that an instructor
// opens and projects, phones that join with a short code and a nickname,
// storms of simultaneous retries against a fresh ledger, and every trace
// event of every request sent over websockets to every screen in the room.
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
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	qrcode "github.com/skip2/go-qrcode"

	"idemlab/engine"
	"idemlab/engine/httpapi"
	"idemlab/server/limit"
	"idemlab/store"
	classroomweb "idemlab/web/classroom"
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
	DB     string
	Logger *slog.Logger

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
	set := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	setD := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	setF := func(v *float64, d float64) {
		if *v <= 0 {
			*v = d
		}
	}
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
	causeRoomsFull   = engine.Cause{Slug: "classroom-full", Title: "Too many rooms or connections", Status: 503}
	causeRoomMissing = engine.Cause{Slug: "classroom-room-not-found", Title: "No room has that code", Status: 404}
	causeWebsocket   = engine.Cause{Slug: "classroom-websocket", Title: "Websocket handshake refused", Status: 400}
)

// Causes lists the classroom's problem causes, for /problems/{slug}.
var Causes = []engine.Cause{causeForbidden, causeBadOrigin, causeBadToken, causeTooMany, causeRoomsFull, causeRoomMissing, causeWebsocket}

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
	db *store.Rooms
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
	var db *store.Rooms
	if cfg.DB != "" {
		if n := removeLeftoverLedgers(cfg.DB); n > 0 {
			cfg.Logger.Info("classroom: removed storm ledgers left by a stopped server", "files", n)
		}
		var err error
		if db, err = store.OpenRooms(roomsPath(cfg.DB)); err != nil {
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
		CheckOrigin:       sameOrigin,
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

// Register adds the classroom's routes to mux.
func (c *Classroom) Register(mux *http.ServeMux) {
	files := http.FileServerFS(classroomweb.Files)
	mux.HandleFunc("GET /classroom", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/classroom/", http.StatusMovedPermanently)
	})
	mux.HandleFunc("GET /classroom/{$}", func(w http.ResponseWriter, r *http.Request) { servePage(w, r, "join.html") })
	mux.HandleFunc("GET /classroom/teach", func(w http.ResponseWriter, r *http.Request) { servePage(w, r, "teach.html") })
	mux.Handle("GET /classroom/static/", http.StripPrefix("/classroom/static", noDirs(files)))
	mux.HandleFunc("POST /classroom/api/session", c.handleLogin)
	mux.HandleFunc("GET /classroom/api/session", func(w http.ResponseWriter, r *http.Request) {
		httpapi.WriteJSON(w, r, 200, map[string]bool{"instructor": c.isInstructor(r)})
	})
	mux.HandleFunc("DELETE /classroom/api/session", c.handleLogout)
	mux.HandleFunc("POST /classroom/api/rooms", c.handleCreateRoom)
	mux.HandleFunc("GET /classroom/api/rooms/{code}/qr.png", c.handleQR)
	mux.HandleFunc("GET /classroom/api/rooms/{code}", c.handleRoom)
	mux.HandleFunc("GET /classroom/ws/{code}", c.handleWS)
}

// securityHeaders keep the pages from being framed or running anything but
// their own scripts.
func securityHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

func servePage(w http.ResponseWriter, r *http.Request, name string) {
	securityHeaders(w)
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeFileFS(w, r, classroomweb.Files, name)
}

func noDirs(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/") {
			httpapi.Write(w, engine.CauseNotFound.Problem("no such file").Response())
			return
		}
		securityHeaders(w)
		h.ServeHTTP(w, r)
	})
}

// sameOrigin accepts a request whose Origin names the host it was sent to.
// Browsers always send Origin on websocket handshakes and cross-site POSTs,
// so a page on another site can neither open a room's socket with the
// instructor's cookie nor create rooms in their name.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// isInstructor reports whether r carries a live session cookie of the
// instructor's.
func (c *Classroom) isInstructor(r *http.Request) bool {
	ck, err := r.Cookie(instructorCookie)
	if err != nil {
		return false
	}
	return c.sessions.valid(ck.Value)
}

// checkToken compares a presented token with the instructor's in constant
// time; hashing both first makes the comparison independent of length too.
func (c *Classroom) checkToken(tok string) bool {
	sum := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(sum[:], c.tokenSum[:]) == 1
}

func (c *Classroom) handleLogin(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		httpapi.Write(w, causeBadOrigin.Problem("sign in from the classroom page itself").Response())
		return
	}
	// Failed sign-ins are counted per address: a machine that keeps
	// guessing is held off, and the instructor, from any other address,
	// is not.
	client := limit.Client(r)
	if !limit.Exempt(client) {
		if ok, wait := c.limits.failedSign.Ready(client); !ok {
			refuse(w, "too many wrong sign-ins from your address; wait a moment", wait)
			return
		}
	}
	var body struct {
		Token  string `json:"token"`
		SignIn string `json:"signin"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 1024))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || (body.Token == "") == (body.SignIn == "") {
		httpapi.Write(w, engine.CauseBodyInvalid.Problem(`send {"token": "<instructor secret>"} or {"signin": "<code of the start-up link>"}`).Response())
		return
	}
	ok := body.Token != "" && c.checkToken(body.Token) || body.SignIn != "" && c.sessions.useSignInCode(body.SignIn)
	if !ok {
		if !limit.Exempt(client) {
			c.limits.failedSign.Spend(client)
		}
		detail := "that is not this server's instructor secret"
		if body.SignIn != "" {
			detail = "that sign-in link was used already or never existed; type the instructor secret instead"
		}
		httpapi.Write(w, causeBadToken.Problem(detail).Response())
		return
	}
	value, err := c.sessions.start()
	if err != nil {
		httpapi.WriteError(w, r, fmt.Errorf("start session: %w", err))
		return
	}
	http.SetCookie(w, sessionCookie(r, value, c.sessions.ttl))
	httpapi.WriteJSON(w, r, 200, map[string]bool{"instructor": true})
}

// handleLogout ends the browser's session.
func (c *Classroom) handleLogout(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		httpapi.Write(w, causeBadOrigin.Problem("sign out from the classroom page itself").Response())
		return
	}
	if ck, err := r.Cookie(instructorCookie); err == nil {
		c.sessions.end(ck.Value)
	}
	http.SetCookie(w, sessionCookie(r, "", 0))
	httpapi.WriteJSON(w, r, 200, map[string]bool{"instructor": false})
}

func (c *Classroom) handleCreateRoom(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		httpapi.Write(w, causeBadOrigin.Problem("create rooms from the classroom page").Response())
		return
	}
	if !c.isInstructor(r) {
		httpapi.Write(w, causeForbidden.Problem("open the instructor link printed when the server started").Response())
		return
	}
	room, err := c.createRoom()
	if err != nil {
		httpapi.Write(w, causeRoomsFull.Problem(err.Error()).Response())
		return
	}
	httpapi.WriteJSON(w, r, 201, map[string]string{"code": room.code, "join_url": c.joinURL(r, room.code)})
}

// joinURL is the address phones open to join room code.
func (c *Classroom) joinURL(r *http.Request, code string) string {
	return c.joinBase(r) + "/classroom/?room=" + code
}

// joinBase is where phones reach this server: --public-url when given;
// else the host the instructor's browser reached, unless that is this
// machine's own name (localhost, 127.0.0.1) while the server listens on
// every interface: a phone cannot open "localhost", so the join link
// names the machine's address on the LAN instead.
func (c *Classroom) joinBase(r *http.Request) string {
	if c.cfg.PublicURL != "" {
		return strings.TrimSuffix(c.cfg.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := r.Host
	if name, port, err := net.SplitHostPort(host); err == nil && isLoopbackName(name) && listensOnAll(c.cfg.ListenAddr) {
		if ip := lanAddress(); ip != nil {
			host = net.JoinHostPort(ip.String(), port)
		}
	}
	return scheme + "://" + host
}

func isLoopbackName(name string) bool {
	if strings.EqualFold(name, "localhost") || strings.HasSuffix(strings.ToLower(name), ".localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

// listensOnAll reports whether addr is a wildcard address (0.0.0.0, ::, or
// a port alone).
func listensOnAll(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "" || (ip != nil && ip.IsUnspecified())
}

// lanAddress is this machine's first private IPv4 address on an interface
// that is up (a phone on the same Wi-Fi can reach it), else its first
// global one; nil when it has none.
func lanAddress() net.IP {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil
	}
	var global net.IP
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok || n.IP.To4() == nil || n.IP.IsLoopback() || n.IP.IsLinkLocalUnicast() {
				continue
			}
			if n.IP.IsPrivate() {
				return n.IP.To4()
			}
			if global == nil {
				global = n.IP.To4()
			}
		}
	}
	return global
}

// handleRoom answers whether a room exists: a page whose socket keeps
// failing asks it, and says "no room" only when this answers 404 (a
// network that fails answers nothing, and the page keeps reconnecting).
func (c *Classroom) handleRoom(w http.ResponseWriter, r *http.Request) {
	room := c.room(roomCode(r, "/classroom/api/rooms/", ""))
	if room == nil {
		httpapi.Write(w, causeRoomMissing.Problem("check the code on the projector").Response())
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	httpapi.WriteJSON(w, r, 200, map[string]string{"code": room.code})
}

func (c *Classroom) handleQR(w http.ResponseWriter, r *http.Request) {
	client := limit.Client(r)
	if !c.codeAllowed(w, client) {
		return
	}
	room := c.room(roomCode(r, "/classroom/api/rooms/", "/qr.png"))
	if room == nil {
		c.codeMissed(client)
		httpapi.Write(w, causeRoomMissing.Problem("check the code on the projector").Response())
		return
	}
	// Ten pixels a module (a negative size): the projector enlarges it
	// with sharp edges, and it still decodes from the back of the room.
	png, err := qrcode.Encode(c.joinURL(r, room.code), qrcode.Medium, -10)
	if err != nil {
		httpapi.WriteError(w, r, fmt.Errorf("render qr code: %w", err))
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(png)
}

func (c *Classroom) handleWS(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		httpapi.Write(w, causeBadOrigin.Problem("open the room from this server's own pages").Response())
		return
	}
	client := limit.Client(r)
	if !c.codeAllowed(w, client) {
		return
	}
	room := c.room(roomCode(r, "/classroom/ws/", ""))
	if room == nil {
		c.codeMissed(client)
		httpapi.Write(w, causeRoomMissing.Problem("check the code on the projector").Response())
		return
	}
	role := RoleStudent
	if r.URL.Query().Get("role") == RoleProjector {
		if !c.isInstructor(r) {
			httpapi.Write(w, causeForbidden.Problem("only the instructor's browser can project a room").Response())
			return
		}
		role = RoleProjector
	}
	release := c.admitSocket(w, client)
	if release == nil {
		return
	}
	if !room.reserve() {
		release()
		httpapi.Write(w, causeRoomsFull.Problem("this room is full").Response())
		return
	}
	ws, err := c.upgrader.Upgrade(w, r, nil)
	if err != nil {
		release()
		room.unreserve()
		return // the upgrader has answered
	}
	cn := newConn(ws, room, role)
	cn.client, cn.release = client, release
	if role == RoleProjector {
		cn.joinURL = c.joinURL(r, room.code)
	}
	room.attach(cn)
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

// roomCode reads the room code out of the path. It does not use
// r.PathValue: the server routes through ServeMux.Handler, which matches
// patterns without recording their wildcards.
func roomCode(r *http.Request, prefix, suffix string) string {
	code, ok := strings.CutPrefix(r.URL.Path, prefix)
	if !ok {
		return ""
	}
	code, ok = strings.CutSuffix(code, suffix)
	if !ok || len(code) != 6 {
		return ""
	}
	return code
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
