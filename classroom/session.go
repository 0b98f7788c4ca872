package classroom

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"idemlab/engine"
	"idemlab/engine/httpapi"
	"idemlab/internal/peer"
)

// MinTokenLength is the shortest instructor secret the classroom accepts:
// with the per-address limit on failed sign-ins, a secret this long cannot
// be guessed in a lesson, or in a year.
const MinTokenLength = 16

// SessionTTL is how long a sign-in lasts: a school day. Signing out ends it
// sooner.
const SessionTTL = 12 * time.Hour

// sessions are the instructor's signed-in browsers, each with its own
// random cookie value, and the one-time sign-in codes printed at start-up.
// Only SHA-256 digests are kept, so that a map lookup compares digests,
// never the secrets themselves. It is safe for concurrent use.
type sessions struct {
	now func() time.Time
	ttl time.Duration

	mu      sync.Mutex
	live    map[[32]byte]time.Time // session digest → expiry
	oneTime map[[32]byte]bool      // sign-in code digest

	// persist, when set, is given the live sessions (encoded) after each
	// sign-in and sign-out, so that a restarted server keeps them.
	persist func(string)
}

// encodeLocked writes the live sessions as JSON: digest (hex) → expiry
// (Unix ms). Only digests are kept; a stolen file signs no one in. The
// caller holds mu.
func (s *sessions) encodeLocked() string {
	m := make(map[string]int64, len(s.live))
	for k, exp := range s.live {
		m[hex.EncodeToString(k[:])] = exp.UnixMilli()
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// load brings back sessions that encodeLocked wrote; expired or malformed
// ones are dropped.
func (s *sessions) load(encoded string) {
	if encoded == "" {
		return
	}
	var m map[string]int64
	if json.Unmarshal([]byte(encoded), &m) != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for k, ms := range m {
		b, err := hex.DecodeString(k)
		exp := time.UnixMilli(ms)
		if err != nil || len(b) != 32 || !now.Before(exp) {
			continue
		}
		s.live[[32]byte(b)] = exp
	}
}

// saved hands the live sessions to persist, if any.
func (s *sessions) saved() {
	if s.persist == nil {
		return
	}
	s.mu.Lock()
	enc := s.encodeLocked()
	s.mu.Unlock()
	s.persist(enc)
}

func newSessions(now func() time.Time, ttl time.Duration) *sessions {
	return &sessions{now: now, ttl: ttl, live: map[[32]byte]time.Time{}, oneTime: map[[32]byte]bool{}}
}

// start opens a session and returns its cookie value.
func (s *sessions) start() (string, error) {
	v, err := randomHex(32)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	now := s.now()
	for k, exp := range s.live {
		if !now.Before(exp) {
			delete(s.live, k)
		}
	}
	s.live[sha256.Sum256([]byte(v))] = now.Add(s.ttl)
	s.mu.Unlock()
	s.saved()
	return v, nil
}

// valid reports whether v is a session that has not expired or ended.
func (s *sessions) valid(v string) bool {
	sum := sha256.Sum256([]byte(v))
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.live[sum]
	if ok && !s.now().Before(exp) {
		delete(s.live, sum)
		return false
	}
	return ok
}

// end signs a session out.
func (s *sessions) end(v string) {
	sum := sha256.Sum256([]byte(v))
	s.mu.Lock()
	delete(s.live, sum)
	s.mu.Unlock()
	s.saved()
}

// newSignInCode returns a code that signs the instructor in once.
func (s *sessions) newSignInCode() (string, error) {
	v, err := randomHex(16)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	s.oneTime[sha256.Sum256([]byte(v))] = true
	s.mu.Unlock()
	return v, nil
}

// useSignInCode reports whether v is a sign-in code not used yet, and uses
// it: the link that carried it is dead from now on, in every browser
// history it was written into.
func (s *sessions) useSignInCode(v string) bool {
	sum := sha256.Sum256([]byte(v))
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.oneTime[sum] {
		return false
	}
	delete(s.oneTime, sum)
	return true
}

// sessionCookie is the instructor's cookie: HttpOnly, SameSite=Strict,
// Secure whenever the browser reached idemlab over HTTPS (its own TLS or
// a trusted proxy's), limited to the classroom's paths, dropped by the browser when the
// session expires (Max-Age, relative, so that the browser's clock does not
// matter), removed at once when value is empty.
func sessionCookie(r *http.Request, value string, ttl time.Duration) *http.Cookie {
	ck := &http.Cookie{Name: instructorCookie, Value: value, Path: "/classroom",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: peer.Of(r).Secure, MaxAge: int(ttl.Seconds())}
	if value == "" {
		ck.MaxAge = -1
	}
	return ck
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
	if why := c.originRefusal(r); why != "" {
		httpapi.Write(w, causeBadOrigin.Problem("sign in from the classroom page itself: "+why).Response())
		return
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
	// The one-time link's code is never refused: it is 128 random bits,
	// which no one guesses, and refusing it would let anyone behind the
	// instructor's address (a school's NAT) lock the instructor out. Typed
	// secrets are counted per address: a machine that keeps guessing is
	// held off, and the instructor, from any other address, is not.
	client := peer.Of(r)
	if body.SignIn == "" && !client.Exempt() {
		if ok, wait := c.limits.failedSign.Ready(client.Addr); !ok {
			refusal{wait: wait, detail: "too many wrong instructor secrets were typed from this network; try again in " + seconds(wait) +
				", or open the one-time sign-in link printed when the server started (it is never held off)"}.write(w)
			return
		}
	}
	ok := body.Token != "" && c.checkToken(body.Token) || body.SignIn != "" && c.sessions.useSignInCode(body.SignIn)
	if !ok {
		if !client.Exempt() {
			c.limits.failedSign.Spend(client.Addr)
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
	if why := c.originRefusal(r); why != "" {
		httpapi.Write(w, causeBadOrigin.Problem("sign out from the classroom page itself: "+why).Response())
		return
	}
	if ck, err := r.Cookie(instructorCookie); err == nil {
		c.sessions.end(ck.Value)
	}
	http.SetCookie(w, sessionCookie(r, "", 0))
	httpapi.WriteJSON(w, r, 200, map[string]bool{"instructor": false})
}
