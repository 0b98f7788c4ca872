package classroom

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	qrcode "github.com/skip2/go-qrcode"

	"idemlab/engine"
	"idemlab/engine/httpapi"
	"idemlab/internal/clip"
	"idemlab/internal/peer"
	pages "idemlab/web/classroom"
)

// The classroom's HTTP side: its pages, its JSON API and the websocket
// handshake. Every refusal is answered as application/problem+json.

// Register adds the classroom's routes to mux.
func (c *Classroom) Register(mux *http.ServeMux) {
	files := http.FileServerFS(pages.Files)
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
	http.ServeFileFS(w, r, pages.Files, name)
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

// originRefusal says why a request's Origin is not this server's own, or
// "" when it is. Browsers always send Origin on websocket handshakes and
// cross-site POSTs, so a page on another site can neither open a room's
// socket with the instructor's cookie nor create rooms in their name.
// This server's own origins are the host the request was sent to (the
// Host header, or what a trusted proxy says the client asked for, with
// the scheme it used) and --public-url's. Default ports are the same as
// none.
func (c *Classroom) originRefusal(r *http.Request) string {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return "the request carries no Origin; open the classroom's own pages"
	}
	o, ok := normalOrigin(origin)
	if !ok {
		return fmt.Sprintf("the Origin %q is not an http(s) origin", clip.String(origin, 100))
	}
	p := peer.Of(r)
	own, _ := normalOrigin(p.Origin())
	u, _ := url.Parse(o) // normalOrigin parsed it
	if o == own || strings.EqualFold(u.Host, p.Host) {
		// The same host (a proxy that terminates TLS without saying so
		// still sends the Host the browser used).
		return ""
	}
	if c.cfg.PublicURL != "" {
		if pub, ok := normalOrigin(c.cfg.PublicURL); ok && o == pub {
			return ""
		}
	}
	if ownURL, err := url.Parse(own); err == nil && strings.EqualFold(u.Hostname(), ownURL.Hostname()) {
		// The same name on another port: a proxy that sends the Host
		// without the port the browser used.
		return fmt.Sprintf("the page's origin %s is not the %s this server was reached at: a reverse proxy dropped the port from Host. "+
			"Pass it (nginx: proxy_set_header Host $http_host) or start idemlab with --public-url %s", o, own, o)
	}
	return fmt.Sprintf("the page's origin %s is not this server's (%s)", clip.String(o, 100), own)
}

// normalOrigin reads an origin (or a URL) as scheme://host[:port], lower
// case, its scheme's default port left out.
func normalOrigin(s string) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if h, port, err := net.SplitHostPort(host); err == nil && (scheme == "http" && port == "80" || scheme == "https" && port == "443") {
		host = h
		if strings.Contains(h, ":") {
			host = "[" + h + "]"
		}
	}
	return scheme + "://" + host, true
}

func (c *Classroom) handleCreateRoom(w http.ResponseWriter, r *http.Request) {
	if why := c.originRefusal(r); why != "" {
		httpapi.Write(w, causeBadOrigin.Problem("create rooms from the classroom page: "+why).Response())
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

// handleRoom answers whether a room exists, and whether this client may
// open its socket now: a page whose socket keeps failing asks it, says
// "no room" only when this answers 404 (a network that fails answers
// nothing, and the page keeps reconnecting), and says why in words, and
// waits as long as it is told, when this answers 429.
func (c *Classroom) handleRoom(w http.ResponseWriter, r *http.Request) {
	room := c.lookupRoom(w, r, "/classroom/api/rooms/", "")
	if room == nil {
		return
	}
	if f := c.socketRefusal(peer.Of(r)); f != nil && !c.isInstructor(r) {
		f.write(w)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	httpapi.WriteJSON(w, r, 200, map[string]string{"code": room.code})
}

func (c *Classroom) handleQR(w http.ResponseWriter, r *http.Request) {
	room := c.lookupRoom(w, r, "/classroom/api/rooms/", "/qr.png")
	if room == nil {
		return
	}
	room.remember(peer.Of(r).Addr)
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
	if why := c.originRefusal(r); why != "" {
		httpapi.Write(w, causeBadOrigin.Problem("open the room from this server's own pages: "+why).Response())
		return
	}
	p := peer.Of(r)
	room := c.lookupRoom(w, r, "/classroom/ws/", "")
	if room == nil {
		return
	}
	instructor := c.isInstructor(r)
	role := RoleStudent
	if r.URL.Query().Get("role") == RoleProjector {
		if !instructor {
			httpapi.Write(w, causeForbidden.Problem("only the instructor's browser can project a room").Response())
			return
		}
		role = RoleProjector
	}
	release := func() {}
	if !instructor {
		var f *refusal
		if release, f = c.admitSocket(p); f != nil {
			room.noteRefusedSocket(p)
			f.write(w)
			return
		}
	}
	room.remember(p.Addr)
	if !room.reserve() {
		release()
		httpapi.Write(w, causeRoomsFull.Problem("this room holds as many connections as it can").Response())
		return
	}
	ws, err := c.upgrader.Upgrade(w, r, nil)
	if err != nil {
		release()
		room.unreserve()
		return // the upgrader has answered
	}
	cn := newConn(ws, room, role)
	cn.peer, cn.release = p, release
	if role == RoleProjector {
		cn.joinURL = c.joinURL(r, room.code)
	}
	room.attach(cn)
}

// lookupRoom returns the room whose code the path holds between prefix and
// suffix, or answers the client itself and returns nil: refused when it
// tried too many codes (codeRefusal), 404 when no room has the code (a
// miss it counts).
func (c *Classroom) lookupRoom(w http.ResponseWriter, r *http.Request, prefix, suffix string) *Room {
	room := c.room(roomCode(r, prefix, suffix))
	if f := c.codeRefusal(r, room); f != nil {
		f.write(w)
		return nil
	}
	if room == nil {
		c.codeMissed(r)
		httpapi.Write(w, causeRoomMissing.Problem("check the code on the projector").Response())
		return nil
	}
	return room
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
