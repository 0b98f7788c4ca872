package classroom

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"idemlab/engine"
	"idemlab/internal/limit"
)

// A classroom with a database path keeps its rooms in a SQLite file beside
// the bank's (idemlab-classroom.db for idemlab.db): the instructor's secret
// and session, and every room's students, votes, level and last ledger's
// record. A server killed in the middle of a lesson and started again on
// the same files has the same rooms; the instructor stays signed in and
// every phone finds its room and its student again. The storms' ledgers
// themselves are not kept: a restarted room starts its next ledger fresh,
// and the files a killed process left are removed at start-up.

// Rooms keeps the classroom's rooms and settings across restarts: the
// instructor's secret and sessions, and each room as a document the
// classroom writes and reads back at start-up. cmd/idemlab hands in a
// SQLite file (classroom/roomdb). Implementations must be safe for
// concurrent use.
type Rooms interface {
	// Setting returns a setting's value, and whether it is set.
	Setting(name string) (value string, ok bool, err error)
	// SetSetting writes a setting.
	SetSetting(name, value string) error
	// SaveRoom writes a room's document, and its record unless record is
	// nil (the record, a storm's events, is large and changes less often).
	SaveRoom(code string, doc, record []byte, now time.Time) error
	// DeleteRoom forgets a room.
	DeleteRoom(code string) error
	// LoadRooms returns every saved room, oldest change first.
	LoadRooms() ([]SavedRoom, error)
	Close() error
}

// SavedRoom is one room as it was last saved.
type SavedRoom struct {
	Code string
	// Doc is the room (students, votes, level); Record the last ledger's
	// storm, events and verdict (nil if none was saved).
	Doc, Record []byte
	Updated     time.Time
}

// Ledger is one storm's database: the engine's store, and the whole of it
// read back for the checker. cmd/idemlab hands in the SQLite store
// (store/sqlite) through Config.OpenLedger.
type Ledger interface {
	engine.Store
	Snapshot(ctx context.Context) (engine.Snapshot, error)
	Close() error
}

// Settings in the rooms file.
const (
	settingToken    = "instructor_token"
	settingSessions = "instructor_sessions"
)

// roomsPath is the classroom's file beside the bank database db.
func roomsPath(db string) string {
	ext := filepath.Ext(db)
	return strings.TrimSuffix(db, ext) + "-classroom" + ext
}

// removeLeftoverLedgers deletes the storm ledgers (and their WAL files)
// that a killed process left beside db: no room will ever read them.
func removeLeftoverLedgers(db string) int {
	ext := filepath.Ext(db)
	base := strings.TrimSuffix(db, ext)
	n := 0
	for _, suffix := range []string{"", "-wal", "-shm"} {
		matches, _ := filepath.Glob(globEscape(base) + "-classroom-??????-*" + globEscape(ext) + suffix)
		for _, m := range matches {
			// Only names ledgerPath writes: <base>-classroom-<CODE>-<run><ext>.
			rest := strings.TrimSuffix(strings.TrimPrefix(m, base+"-classroom-"), ext+suffix)
			code, id, ok := strings.Cut(rest, "-")
			if _, err := strconv.Atoi(id); !ok || err != nil || len(code) != 6 {
				continue
			}
			if os.Remove(m) == nil {
				n++
			}
		}
	}
	return n
}

func globEscape(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(s)
}

// secretsFrom reads the instructor's secret and signed-in sessions from
// the rooms file, or makes the secret and writes it there. A token given
// in the configuration replaces the stored one (and ends the sessions it
// signed in); rotate makes a new one.
func secretsFrom(db Rooms, token string, rotate bool) (tok, sessions string, made bool, err error) {
	if db != nil && !rotate {
		stored, ok, err := db.Setting(settingToken)
		if err != nil {
			return "", "", false, err
		}
		if token == "" && ok {
			token = stored
		}
		if token == stored && ok {
			// The same secret as before: the browsers it signed in stay so.
			if s, ok, err := db.Setting(settingSessions); err != nil {
				return "", "", false, err
			} else if ok {
				sessions = s
			}
		}
	}
	if token == "" {
		if token, err = randomHex(24); err != nil {
			return "", "", false, err
		}
		made = true
	}
	if db != nil {
		if err := db.SetSetting(settingToken, token); err != nil {
			return "", "", false, err
		}
		if err := db.SetSetting(settingSessions, sessions); err != nil {
			return "", "", false, err
		}
	}
	return token, sessions, made, nil
}

// roomDoc is a room as the rooms file keeps it.
type roomDoc struct {
	Level    string            `json:"level"`
	RunSeq   int               `json:"run_seq"`
	Students []studentDoc      `json:"students"`
	Votes    map[string]string `json:"votes"`
	Vote     vote              `json:"vote"`
	Locked   bool              `json:"locked,omitempty"`
	// ClassSize is the size the presenter set; zero: the server's default.
	ClassSize int `json:"class_size,omitempty"`
}

type studentDoc struct {
	Hash     string `json:"hash"` // of the phone's secret; the secret is never kept
	ID       string `json:"id"`
	Nickname string `json:"nickname"`
	Vote     string `json:"vote,omitempty"`
	Kicked   bool   `json:"kicked,omitempty"`
}

// doc is the room as a document.
func (r *Room) doc() roomDoc {
	d := roomDoc{Level: r.level, RunSeq: r.runSeq, Votes: map[string]string{}, Vote: r.vote, Locked: r.locked}
	if r.classSize != r.cl.cfg.Limits.ClassSize {
		d.ClassSize = r.classSize
	}
	for h, st := range r.students {
		d.Students = append(d.Students, studentDoc{Hash: h, ID: st.id, Nickname: st.nickname, Vote: st.vote, Kicked: st.kicked})
	}
	for k, v := range r.votes {
		d.Votes[k] = v
	}
	return d
}

// save writes the room to the rooms file: its document always, its record
// when it changed. It runs on the room's goroutine (at a tick, or when the
// classroom closes), never on a request's path.
func (r *Room) save(withRecord bool) {
	db := r.cl.db
	if db == nil || r.closed {
		return
	}
	doc, err := json.Marshal(r.doc())
	if err != nil {
		return
	}
	var rec []byte
	if withRecord && r.rec != nil {
		if rec, err = json.Marshal(r.rec); err != nil {
			rec = nil
		}
	}
	if err := db.SaveRoom(r.code, doc, rec, time.Now()); err != nil {
		r.cl.cfg.Logger.Warn("classroom: save room", "room", r.code, "err", err)
	}
}

// restore rebuilds the rooms of the rooms file. A room whose last ledger
// had a storm still running when the process died keeps the storm's
// announcement and events but no verdict; its record says it was cut off.
func (c *Classroom) restore() error {
	saved, err := c.db.LoadRooms()
	if err != nil {
		return fmt.Errorf("classroom: load rooms: %w", err)
	}
	for _, s := range saved {
		var d roomDoc
		if err := json.Unmarshal(s.Doc, &d); err != nil || len(s.Code) != 6 {
			c.cfg.Logger.Warn("classroom: a saved room does not parse; it is dropped", "room", s.Code, "err", err)
			c.db.DeleteRoom(s.Code)
			continue
		}
		r := newRoom(c, s.Code, func(r *Room) {
			r.level, r.runSeq, r.vote, r.locked = d.Level, d.RunSeq, d.Vote, d.Locked
			if d.ClassSize > 0 {
				r.classSize = d.ClassSize
			}
			if _, ok := engine.Preset(d.Level); !ok {
				r.level = engine.LevelNaive
			}
			for _, sd := range d.Students {
				st := &student{id: sd.ID, nickname: sd.Nickname, vote: sd.Vote, kicked: sd.Kicked, sends: limit.NewBucket(c.cfg.SendsPerSecond, c.cfg.SendBurst)}
				r.students[sd.Hash] = st
				r.byID[st.id] = st
				if st.kicked {
					r.kicked++
				}
			}
			for k, v := range d.Votes {
				r.votes[k] = v
			}
			if r.vote.Open {
				r.vote.Votes = len(r.votes)
			}
			if len(s.Record) > 0 {
				var rec record
				if json.Unmarshal(s.Record, &rec) == nil {
					rec.Interrupted = !rec.Finished && rec.Storm != nil
					r.rec = &rec
					r.restoredRun, r.interrupted = rec.Run, rec.Interrupted
					if rec.Run > r.runSeq {
						r.runSeq = rec.Run
					}
				}
			}
		})
		c.rooms[s.Code] = r
	}
	return nil
}
