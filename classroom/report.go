package classroom

import (
	"context"

	"idemlab/engine"
	"idemlab/lab"
)

// keyRow is the projector's summary of a key table's row
// (engine.KeyRecord, built by keyRowOf): the columns a room reads, and the
// stored response's status instead of the response.
type keyRow struct {
	Key      string `json:"key"`
	Customer string `json:"customer"`
	Scope    string `json:"scope"`
	State    string `json:"state"`
	Status   int    `json:"status,omitempty"`
	Transfer string `json:"transfer_id,omitempty"`
	Expires  int64  `json:"expires_at,omitempty"`
}

func keyRowOf(k engine.KeyRecord) keyRow {
	row := keyRow{Key: k.Key, Customer: k.Customer, Scope: k.Scope, State: k.State, Transfer: k.TransferID, Expires: k.ExpiresAt}
	if k.Response != nil {
		row.Status = k.Response.Status
	}
	return row
}

// maxKeyRows bounds the key table sent to screens; the count says the rest.
const maxKeyRows = 40

// reportMsg is the checker's verdict on a run, with the ledger's balances
// and key table, sent to every screen.
type reportMsg struct {
	Type      string           `json:"type"`
	Run       int              `json:"run"`
	Level     string           `json:"level"`
	Storm     *stormInfo       `json:"storm,omitempty"`
	Report    lab.Report       `json:"report"`
	Balances  map[string]int64 `json:"balances"`
	Keys      []keyRow         `json:"keys"`
	KeysTotal int              `json:"keys_total"`
	Vote      *vote            `json:"vote,omitempty"`
	// Picture draws a storm's history over its own clock (milliseconds
	// from its first request); only a storm's report has one. The phones'
	// copy lists no attempts (its buckets' samples are empty).
	Picture *lab.Picture `json:"picture,omitempty"`
	// PictureSVG is the picture drawn (lab.Picture.SVG), for the projector
	// only: the same drawing `idemlab day replay --svg` writes.
	PictureSVG string `json:"picture_svg,omitempty"`
	// PictureSVGKo is the same drawing in Korean, for a projector whose
	// pages speak it.
	PictureSVGKo string `json:"picture_svg_ko,omitempty"`
}

// stormInfo describes a finished storm.
type stormInfo struct {
	Spec       StormSpec `json:"spec"`
	Requests   int       `json:"requests"`
	DurationMS int64     `json:"duration_ms"`
}

// sendReport judges a run and broadcasts the verdict. It runs off the
// room's goroutine, on the storm's after a storm and on one the room spawns
// otherwise: reading the ledger, checking the history and drawing the
// picture take as long as the history is big, and the room goes on
// answering meanwhile. The verdict is then handed to the room's goroutine
// (do), which reveals the vote with a storm's and broadcasts it. A report
// whose reading began before that of one already broadcast is dropped: it
// would show the screens an older ledger.
func (r *Room) sendReport(run *run, storm *stormInfo) {
	seq := r.reportSeq.Add(1)
	h, snap, err := run.history(context.WithoutCancel(r.ctx))
	if err != nil {
		r.cl.cfg.Logger.Warn("classroom report", "room", r.code, "err", err)
		return
	}
	rep := lab.Check(h)
	msg := reportMsg{Type: "report", Run: run.id, Level: run.level, Storm: storm, Report: rep,
		Balances: h.EndBalances, KeysTotal: len(snap.Keys) + len(snap.LooseKeys)}
	rows := append(append([]engine.KeyRecord(nil), snap.Keys...), snap.LooseKeys...)
	for i, k := range rows {
		if i == maxKeyRows {
			break
		}
		msg.Keys = append(msg.Keys, keyRowOf(k))
	}
	if msg.Keys == nil {
		msg.Keys = []keyRow{}
	}
	if storm == nil {
		r.do(func() {
			if r.reportSent > seq {
				return
			}
			r.reportSent = seq
			r.recordAndBroadcast(run.id, keepReport, msg, msg)
		})
		return
	}
	// The projector gets the picture with each moment's attempts, so that
	// a column opens them in the race view; the phones get it without
	// those lists: a storm of 5,000 requests lists thousands of attempts,
	// which three hundred phones on the room's wifi need not each receive.
	pic := lab.NewPicture(h, rep, lab.PictureOptions{})
	msg.Picture = &pic
	msg.PictureSVG = string(pic.SVG("en"))
	msg.PictureSVGKo = string(pic.SVG("ko"))
	bare := pic
	bare.Samples = 0
	bare.Buckets = make([]lab.PictureBucket, len(pic.Buckets))
	for i, b := range pic.Buckets {
		b.Sample = []lab.PictureAttempt{}
		bare.Buckets[i] = b
	}
	phones := msg
	phones.Picture = &bare
	phones.PictureSVG = ""
	phones.PictureSVGKo = ""
	second := secondRetry(h)
	r.do(func() {
		if r.reportSent > seq {
			return
		}
		r.reportSent = seq
		if r.vote.Run == run.id {
			r.reveal(second)
		}
		if v := r.vote; v.Question != "" && v.Run == run.id {
			msg.Vote, phones.Vote = &v, &v
		}
		r.recordAndBroadcast(run.id, keepFinalReport, msg, phones)
	})
}
