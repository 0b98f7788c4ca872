package scenario

import (
	"context"
	"errors"

	"idemlab/engine"
	"idemlab/lab"
)

// Store is the database a scenario or a day is played on: the engine's
// store, the ledger and charges the checker reads (lab.DayStore), the
// whole of it read back for the key table and the balances (Snapshot), and
// Close. store/sqlite's DB is one; the package imports no store, its
// caller hands one in.
type Store interface {
	lab.DayStore
	Snapshot(ctx context.Context) (engine.Snapshot, error)
	Close() error
}

// Opener opens a fresh, empty Store; each call returns a database of its
// own, which its caller closes. The browser's module passes SQLite on the
// memdb VFS.
type Opener func() (Store, error)

// errNoOpener is what a session or a day without an Opener says.
var errNoOpener = errors.New("scenario: no Opener to open a database with")

// open calls o, or says that there is none.
func (o Opener) open() (Store, error) {
	if o == nil {
		return nil, errNoOpener
	}
	return o()
}
