package classroom

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"idemlab/internal/limit"
	"idemlab/lab"
)

// The room's commands about its people: a phone joining, its vote, the
// instructor's question, reveal and level. Each runs on the room's
// goroutine (Room.handle), so it reads and changes the room's state
// without a lock.

// student is one phone's identity in a room. Its secret lives in the
// phone's localStorage, so a reload is the same student; the room keeps
// only the secret's hash. It is owned by the room's goroutine.
type student struct {
	id       string
	nickname string
	sends    *limit.Bucket
	vote     string

	// The student's current wish and its key. open is true while the last
	// attempt got no final answer, so pressing again retries it.
	intent   string
	key      string
	attempts int
	open     bool
	inFlight bool
	lanes    int
	// kicked is set when the instructor removed the student: its secret
	// joins no more.
	kicked bool
	// conns are the student's sockets, the oldest first.
	conns []*conn
}

// vote is the room's prediction: what will the second retry of the next
// storm get? It belongs to one storm: asked before it, locked when it
// starts (Run is then that storm's ledger), judged by its verdict alone and
// cleared by the storm after it.
type vote struct {
	Open     bool   `json:"open"`
	Revealed bool   `json:"revealed"`
	Question string `json:"question,omitempty"`
	Level    string `json:"level,omitempty"`
	// Choices are the answers offered, fitted to the level (ChoicesFor).
	Choices []string `json:"choices,omitempty"`
	Run     int      `json:"run,omitempty"`
	// Votes is the number cast; Counts is shown only once revealed.
	Votes  int            `json:"votes"`
	Counts map[string]int `json:"counts,omitempty"`
	Actual *actual        `json:"actual,omitempty"`
}

// actual is what the second retry really got.
type actual struct {
	Choice string `json:"choice,omitempty"`
	Status int    `json:"status"`
	Lane   string `json:"lane"`
}

const question = "The first attempt's answer is lost and the client sends it again. What will the second retry get?"

// joinedMsg tells a phone who it is in the room.
type joinedMsg struct {
	Type     string `json:"type"`
	ID       string `json:"id"`
	Nickname string `json:"nickname"`
	Vote     string `json:"vote"`
	Retrying bool   `json:"retrying"`
	Level    string `json:"level"`
}

// votedMsg confirms a phone's vote.
type votedMsg struct {
	Type   string `json:"type"`
	Choice string `json:"choice"`
}

// join makes c a student of the room: the one its secret names, or a new
// one if the room and the address allow it.
func (r *Room) join(c *conn, m ClientMessage) {
	if c.role != RoleStudent {
		r.tell(c, errorMsg("bad-message", "the projector does not join"))
		return
	}
	if c.student != nil {
		r.tell(c, errorMsg("bad-message", "already joined"))
		return
	}
	if c.refused {
		return // turned away already; the socket is closing
	}
	sum := sha256.Sum256([]byte(m.Secret))
	h := hex.EncodeToString(sum[:])
	st := r.students[h]
	if st != nil && st.kicked {
		c.refused = true
		r.refuse(c, h, refusal{reason: refusedKicked, detail: "the instructor removed you from this room"})
		return
	}
	if st == nil {
		if f := r.newStudentRefusal(c); f != nil {
			c.refused = true
			r.refuse(c, h, *f)
			return
		}
		st = &student{id: "s" + strconv.Itoa(len(r.byID)+1), sends: limit.NewBucket(r.cl.cfg.SendsPerSecond, r.cl.cfg.SendBurst)}
		r.students[h] = st
		r.byID[st.id] = st
	}
	delete(r.refused, h)
	// One student holds a few sockets (a reload overlaps the old page's):
	// a socket more closes the oldest, so that one secret cannot pile up
	// sockets inside the room.
	for len(st.conns) >= r.cl.cfg.Limits.SocketsPerStudent {
		old := st.conns[0]
		st.conns = st.conns[1:]
		old.refused = true
		r.tell(old, errorMsg("replaced", "this student joined again from another page; this one is closed"))
		old.closeAfterQueued()
	}
	st.conns = append(st.conns, c)
	st.nickname = r.uniqueNickname(st, m.Nickname)
	c.student = st
	r.dirtyView = true
	r.tell(c, joinedMsg{Type: "joined", ID: st.id, Nickname: st.nickname, Vote: st.vote, Retrying: st.open, Level: r.level})
}

func (r *Room) castVote(c *conn, choice string) {
	st := c.student
	switch {
	case st == nil:
		r.tell(c, errorMsg("not-joined", "join the room first"))
		return
	case !r.vote.Open:
		r.tell(c, errorMsg("vote-closed", "no vote is open"))
		return
	case !slices.Contains(r.vote.Choices, choice):
		r.tell(c, errorMsg("bad-message", "that answer is not one of this vote's"))
		return
	}
	st.vote = choice
	r.votes[st.id] = choice
	r.vote.Votes = len(r.votes)
	r.dirtyView = true
	r.tell(c, votedMsg{Type: "voted", Choice: choice})
}

// ask opens a fresh vote about the next storm, at level (the room's when
// empty).
func (r *Room) ask(level string) {
	if level == "" {
		level = r.level
	}
	r.clearVote()
	r.vote = vote{Open: true, Question: question, Level: level, Choices: ChoicesFor(level)}
	r.dirtyView = true
}

// clearVote forgets the vote and every student's choice.
func (r *Room) clearVote() {
	r.vote = vote{}
	r.votes = map[string]string{}
	for _, st := range r.byID {
		st.vote = ""
	}
}

// reveal closes the vote and shows its histogram, with what the second
// retry really got when a run is known.
func (r *Room) reveal(a *actual) {
	if !r.vote.Open && !r.vote.Revealed && r.vote.Question == "" {
		return
	}
	counts := map[string]int{}
	for _, ch := range r.vote.Choices {
		counts[ch] = 0
	}
	for _, ch := range r.votes {
		counts[ch]++
	}
	r.vote.Open, r.vote.Revealed, r.vote.Counts, r.vote.Votes = false, true, counts, len(r.votes)
	if a != nil {
		r.vote.Actual = a
	}
	r.dirtyView = true
}

// setLevel switches the room to a level on a fresh ledger.
func (r *Room) setLevel(c *conn, level string) {
	if r.storming {
		r.tell(c, errorMsg("busy", "wait for the storm to end"))
		return
	}
	nr, err := r.newRun(level, nil)
	if err != nil {
		r.tell(c, errorMsg("internal", "could not open a fresh ledger"))
		return
	}
	r.sendState()
	r.spawn(func() { r.sendReport(nr, nil) })
}

// uniqueNickname is nick, or nick with the first free number after it
// ("ana 2") when another student of the room already has it (compared
// without case): the projector's names and a lane's label must each point
// at one phone.
func (r *Room) uniqueNickname(st *student, nick string) string {
	taken := func(n string) bool {
		for _, o := range r.byID {
			if o != st && strings.EqualFold(o.nickname, n) {
				return true
			}
		}
		return false
	}
	if !taken(nick) {
		return nick
	}
	for i := 2; ; i++ {
		suffix := " " + strconv.Itoa(i)
		base := []rune(nick)
		if len(base)+len([]rune(suffix)) > MaxNicknameRunes {
			base = base[:MaxNicknameRunes-len([]rune(suffix))]
		}
		if n := string(base) + suffix; !taken(n) {
			return n
		}
	}
}

// secondRetry finds what the second request of the first intent got: the
// answer the room voted on.
func secondRetry(h lab.History) *actual {
	if len(h.Intents) == 0 {
		return nil
	}
	first := h.Intents[0].ID
	n := 0
	for _, a := range h.Attempts {
		if a.Intent != first {
			continue
		}
		if n++; n < 2 {
			continue
		}
		act := &actual{Status: a.Status, Lane: a.Lane}
		transfers := 0
		for _, t := range h.Ledger {
			if t.Customer == a.Customer && t.Key == a.Key {
				transfers++
			}
		}
		switch {
		case transfers > 1:
			act.Choice = ChoiceDouble
		case !a.Delivered:
			act.Choice = ChoiceNoAnswer
		case a.Status == 201:
			act.Choice = Choice201
		case a.Status == 200:
			act.Choice = Choice200
		case a.Status == 409:
			act.Choice = Choice409
		case a.Status == 422:
			act.Choice = Choice422
		}
		return act
	}
	return nil
}
