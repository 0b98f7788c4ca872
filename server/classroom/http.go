package classroom

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	qrcode "github.com/skip2/go-qrcode"

	"idemlab/engine"
	"idemlab/engine/httpapi"
	"idemlab/server/limit"
	classroomweb "idemlab/web/classroom"
)

// The classroom's HTTP side: its pages, its JSON API and the websocket
// handshake. Every refusal is answered as application/problem+json.

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
