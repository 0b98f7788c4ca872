package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"idemlab/engine"
	"idemlab/lab"
)

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
	params := r.Day.WithDefaults()
	if err := params.Validate(); err != nil {
		return lab.DayParams{}, engine.Policy{}, fmt.Errorf("scenario: day: %w", err)
	}
	return params, p, nil
}

// RunDay generates the day p describes and replays it in-process against a
// fresh database from open under policy, then judges it with the checker.
// progress, when not nil, is told how many attempts are done.
func RunDay(ctx context.Context, open Opener, p lab.DayParams, policy engine.Policy, progress func(done, total int)) (lab.Tally, error) {
	p = p.WithDefaults()
	if err := p.Validate(); err != nil {
		return lab.Tally{}, fmt.Errorf("scenario: day: %w", err)
	}
	if p.Intents > lab.MaxTaughtDayIntents {
		return lab.Tally{}, fmt.Errorf("scenario: day: at most %d intents here, got %d", lab.MaxTaughtDayIntents, p.Intents)
	}
	db, err := open.open()
	if err != nil {
		return lab.Tally{}, fmt.Errorf("scenario: day: %w", err)
	}
	defer db.Close()
	t, err := lab.ReplayDay(ctx, lab.GenerateDay(p), db, policy, lab.ReplayOptions{Progress: progress})
	if err != nil {
		return t, fmt.Errorf("scenario: day: %w", err)
	}
	return t, nil
}
