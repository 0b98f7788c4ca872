package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"idemlab/engine"
	"idemlab/lab"
	"idemlab/store"
)

// MaxDayIntents bounds a day played in the browser or a lesson test: a
// day's worth of teaching, not a load test.
const MaxDayIntents = 20_000

// DayRequest asks for a day of traffic against one policy. A scenario's
// JSON (with "level", "policy" and "day") decodes into it as well.
type DayRequest struct {
	Level  string          `json:"level"`
	Policy json.RawMessage `json:"policy,omitempty"`
	Day    *lab.DayParams  `json:"day"`
	// Goals are the day scenario's goals, judged on the day's report.
	Goals []Goal `json:"goals,omitempty"`
}

// ParseDayRequest reads a DayRequest and resolves its policy.
func ParseDayRequest(b []byte) (lab.DayParams, engine.Policy, error) {
	var r DayRequest
	if err := json.Unmarshal(b, &r); err != nil {
		return lab.DayParams{}, engine.Policy{}, fmt.Errorf("scenario: day: %w", err)
	}
	if r.Day == nil {
		return lab.DayParams{}, engine.Policy{}, errors.New("scenario: day: \"day\" params are required")
	}
	p, err := Spec{Level: r.Level, Policy: r.Policy}.BasePolicy()
	if err != nil {
		return lab.DayParams{}, engine.Policy{}, fmt.Errorf("scenario: day: %w", err)
	}
	params := dayParams(r.Day)
	if err := params.Validate(); err != nil {
		return lab.DayParams{}, engine.Policy{}, fmt.Errorf("scenario: day: %w", err)
	}
	return params, p, nil
}

// dayParams fills the zero fields of p with the lab's defaults.
func dayParams(p *lab.DayParams) lab.DayParams {
	d := lab.DefaultDayParams()
	if p == nil {
		return d
	}
	out := *p
	if out.Seed == 0 {
		out.Seed = d.Seed
	}
	if out.Customers == 0 {
		out.Customers = d.Customers
	}
	if out.Intents == 0 {
		out.Intents = d.Intents
	}
	if out.DaySeconds == 0 {
		out.DaySeconds = d.DaySeconds
	}
	if out.RetryHorizonSeconds == 0 {
		out.RetryHorizonSeconds = d.RetryHorizonSeconds
	}
	if out.Mix == (lab.RetryMix{}) {
		out.Mix = d.Mix
	}
	if out.MaxAmount == 0 {
		out.MaxAmount = d.MaxAmount
	}
	return out
}

// RunDay generates the day p describes and replays it in-process against a
// fresh in-memory database under policy, then judges it with the checker.
// progress, when not nil, is told how many attempts are done.
func RunDay(ctx context.Context, p lab.DayParams, policy engine.Policy, progress func(done, total int)) (lab.Tally, error) {
	p = dayParams(&p)
	if err := p.Validate(); err != nil {
		return lab.Tally{}, fmt.Errorf("scenario: day: %w", err)
	}
	if p.Intents > MaxDayIntents {
		return lab.Tally{}, fmt.Errorf("scenario: day: at most %d intents here, got %d", MaxDayIntents, p.Intents)
	}
	db, err := store.OpenMemory()
	if err != nil {
		return lab.Tally{}, fmt.Errorf("scenario: day: %w", err)
	}
	defer db.Close()
	eng := engine.New(db, policy, lab.DayEngineOptions())
	ledger := func(ctx context.Context) ([]engine.Transfer, []engine.Account, error) {
		snap, err := db.Snapshot(ctx)
		return snap.Transfers, snap.Accounts, err
	}
	t, err := lab.ReplayDay(ctx, lab.GenerateDay(p), eng, ledger, progress)
	if err != nil {
		return t, fmt.Errorf("scenario: day: %w", err)
	}
	return t, nil
}
