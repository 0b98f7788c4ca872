package classroom

import (
	"time"

	"encoding/json"

	"github.com/gorilla/websocket"
)

// maxRecorded bounds the trace events a room keeps of its current ledger:
// a storm of 1,000 clients × 5 attempts emits about 45,000. Beyond it
// events are still sent live, only not kept for a screen that connects
// later (the projector records as many).
const maxRecorded = 60000

// record is what a screen needs to draw the room's current ledger again
// from nothing: its storm's announcement, every trace event it recorded and
// its last verdict. A screen that reconnects (a Wi-Fi blip, a reload, a
// restarted server) is sent the record after its welcome and redraws the
// same picture, phases and verdict included. It is owned by the room's
// goroutine, which also makes the broadcasts it mirrors.
type record struct {
	Run int `json:"run"`
	// Storm is the storm message as it was sent; nil for a ledger that
	// only students' presses used.
	Storm json.RawMessage `json:"storm,omitempty"`
	// Events are kept in the order they were broadcast.
	Events   []wireEvent `json:"events"`
	Unkept   int         `json:"unkept,omitempty"`
	Finished bool        `json:"finished"`
	// Interrupted is set on a record read back at start-up whose storm
	// never finished: the process died during it.
	Interrupted bool `json:"-"`
	// ReportProjector and ReportPhone are the last verdict as each kind of
	// screen received it.
	ReportProjector json.RawMessage `json:"report_projector,omitempty"`
	ReportPhone     json.RawMessage `json:"report_phone,omitempty"`

	// replayed holds the record as messages, encoded once and shared by
	// every screen that connects until the record changes: after a Wi-Fi
	// blip a room's hundred phones reconnect at once, and a storm's record
	// is tens of thousands of events. Index 0 is the phones', 1 the
	// projectors'.
	replayed [2][]*websocket.PreparedMessage
}

// changed drops the encoded messages: the record has something new.
func (rec *record) changed() { rec.replayed = [2][]*websocket.PreparedMessage{} }

// setStorm and setReport keep a storm's announcement and a verdict.
func (rec *record) setStorm(b []byte) {
	rec.Storm = b
	rec.changed()
}

func (rec *record) setReport(projector, phone []byte, final bool) {
	rec.ReportProjector, rec.ReportPhone = projector, phone
	rec.Finished = rec.Finished || final
	rec.changed()
}

// keep adds a broadcast batch of events to the record of their ledger.
// Events of an older ledger (a run replaced while its last requests
// finish) are not part of the picture the record redraws.
func (rec *record) keep(evs []wireEvent) {
	rec.changed()
	for _, e := range evs {
		if e.Run != rec.Run {
			continue
		}
		if len(rec.Events) >= maxRecorded {
			rec.Unkept++
			continue
		}
		rec.Events = append(rec.Events, e)
	}
}

// replay is the record as the messages a newly connected screen reads, in
// the order the room sent them: the storm, its events in batches, the
// verdict. It runs on the room's goroutine.
func (rec *record) replay(projector bool) []*websocket.PreparedMessage {
	kind := 0
	if projector {
		kind = 1
	}
	if rec.replayed[kind] != nil {
		return rec.replayed[kind]
	}
	out := []*websocket.PreparedMessage{}
	add := func(b []byte) {
		if len(b) == 0 {
			return
		}
		if m, err := websocket.NewPreparedMessage(websocket.TextMessage, b); err == nil {
			out = append(out, m)
		}
	}
	add(rec.Storm)
	for evs := rec.Events; len(evs) > 0; {
		n := min(len(evs), maxBatch)
		add(encodeBatch(0, evs[:n]))
		evs = evs[n:]
	}
	if projector {
		add(rec.ReportProjector)
	} else {
		add(rec.ReportPhone)
	}
	rec.replayed[kind] = out
	return out
}

// recordEvery is how often a room's record is written while a storm's
// events stream in: a server killed mid-storm comes back with the storm up
// to at most this long before it died.
const recordEvery = 2 * time.Second
