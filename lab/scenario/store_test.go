package scenario

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/lab"
	"idemlab/store/sqlite"
)

// Memory opens SQLite on the memdb VFS, the store the browser's module
// hands in: the one these tests play on. It is exported to the external
// tests too (this file is compiled only into the test binary).
func Memory() (Store, error) { return sqlite.OpenMemory() }

var _ Opener = Memory

// TestNoOpenerIsAnError: a caller that hands in no store is told so,
// rather than a session that fails at its first move.
func TestNoOpenerIsAnError(t *testing.T) {
	spec, err := Parse([]byte(`{"id":"t","level":"scoped","accounts":{"a":1000,"b":0},` +
		`"lanes":[{"id":"A1","customer":"c","key":"k","body":{"from":"a","to":"b","amount":10}}]}`))
	require.NoError(t, err)
	_, err = New(spec, engine.MustPreset(engine.LevelScoped), nil)
	assert.ErrorIs(t, err, errNoOpener)
	_, err = RunDay(context.Background(), nil, lab.DayParams{Intents: 2}, engine.MustPreset(engine.LevelScoped), nil)
	assert.ErrorIs(t, err, errNoOpener)
}
