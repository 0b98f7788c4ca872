package classroom

import (
	"context"
	"sync/atomic"
	"time"

	"idemlab/engine"
)

// laneCtl is the fault planned for one lane (one attempt).
type laneCtl struct {
	fault engine.Fault
	phase engine.Phase
	fired atomic.Bool
	// gaveUp is closed when a client timeout strikes, which lets the
	// client move on to its retry while the server keeps working.
	gaveUp chan struct{}
}

// hook runs before every phase: slow motion first, then the lane's planned
// fault, if any, at its phase.
func (run *run) hook(ctx context.Context, s engine.Step) engine.Fault {
	if run.slow > 0 {
		t := time.NewTimer(run.slow)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	v, ok := run.lanes.Load(s.Lane)
	if !ok {
		return engine.FaultNone
	}
	lc := v.(*laneCtl)
	switch lc.fault {
	case engine.FaultLoseResponse:
		if s.Phase == engine.PhaseRespond {
			return engine.FaultLoseResponse
		}
	case engine.FaultCrash, engine.FaultClientTimeout:
		if s.Phase == lc.phase && lc.fired.CompareAndSwap(false, true) {
			if lc.gaveUp != nil {
				close(lc.gaveUp)
			}
			return lc.fault
		}
	}
	return engine.FaultNone
}
