package classroom

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
)

// TestRecordIsEncodedOncePerChange: every screen that connects between two
// changes of the record gets the same encoded messages; a new event or a
// verdict makes new ones, with it.
func TestRecordIsEncodedOncePerChange(t *testing.T) {
	rec := &record{Run: 1}
	rec.setStorm([]byte(`{"type":"storm","run":1}`))
	rec.keep([]wireEvent{{Event: engine.Event{Seq: 1, Lane: "c1.1"}, Run: 1}})
	first := rec.replay(false)
	require.Len(t, first, 2, "the storm and one batch")
	assert.Same(t, first[0], rec.replay(false)[0], "a second phone gets the same messages")
	assert.Len(t, rec.replay(true), 2, "projectors have their own copy")

	rec.keep([]wireEvent{{Event: engine.Event{Seq: 2, Lane: "c1.2"}, Run: 1}, {Event: engine.Event{Seq: 1}, Run: 0}})
	assert.Len(t, rec.Events, 2, "an older ledger's event is not this record's")
	rec.setReport([]byte(`{"type":"report","p":1}`), []byte(`{"type":"report"}`), true)
	after := rec.replay(false)
	require.Len(t, after, 3)
	assert.NotSame(t, first[0], after[0], "the record changed: encoded again")
	assert.True(t, rec.Finished)
}
