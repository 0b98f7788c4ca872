// A day's file: JSON lines, the params first, then the accounts, the
// intents and the attempts (docs/lab-contract.md).

package lab

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"idemlab/engine"
)

// dayLine is one line of a day file. Kind says which field is set.
type dayLine struct {
	Kind    string          `json:"kind"`
	Params  *DayParams      `json:"params,omitempty"`
	Account *engine.Account `json:"account,omitempty"`
	Intent  *DayIntent      `json:"intent,omitempty"`
	Attempt *DayAttempt     `json:"attempt,omitempty"`
}

// Line kinds of a day file.
const (
	lineParams  = "params"
	lineAccount = "account"
	lineIntent  = "intent"
	lineAttempt = "attempt"
)

// WriteJSONL writes the day as JSON Lines: one params line, then one line
// per opening account, per intent and per attempt (docs/lab-contract.md).
func (d Day) WriteJSONL(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	write := func(l dayLine) error {
		if err := enc.Encode(l); err != nil {
			return fmt.Errorf("write day: %w", err)
		}
		return nil
	}
	p := d.Params
	if err := write(dayLine{Kind: lineParams, Params: &p}); err != nil {
		return err
	}
	for i := range d.Accounts {
		if err := write(dayLine{Kind: lineAccount, Account: &d.Accounts[i]}); err != nil {
			return err
		}
	}
	for i := range d.Intents {
		if err := write(dayLine{Kind: lineIntent, Intent: &d.Intents[i]}); err != nil {
			return err
		}
	}
	for i := range d.Attempts {
		if err := write(dayLine{Kind: lineAttempt, Attempt: &d.Attempts[i]}); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write day: %w", err)
	}
	return nil
}

// MaxDayLine is the longest line ReadDay accepts.
const MaxDayLine = 64 << 10

// ReadDay reads a day written by WriteJSONL (or by hand, following
// docs/lab-contract.md). It checks that every attempt names a known intent
// and that attempts are in time order.
func ReadDay(r io.Reader) (Day, error) {
	var d Day
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxDayLine)
	intents := map[string]bool{}
	n := 0
	seenParams := false
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var l dayLine
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return d, fmt.Errorf("read day: line %d: %w", n, err)
		}
		switch {
		case l.Kind == lineParams && l.Params != nil:
			d.Params, seenParams = *l.Params, true
		case l.Kind == lineAccount && l.Account != nil:
			d.Accounts = append(d.Accounts, *l.Account)
		case l.Kind == lineIntent && l.Intent != nil:
			intents[l.Intent.ID] = true
			d.Intents = append(d.Intents, *l.Intent)
		case l.Kind == lineAttempt && l.Attempt != nil:
			a := *l.Attempt
			if !intents[a.Intent] {
				return d, fmt.Errorf("read day: line %d: attempt %s names intent %q before its intent line", n, a.Lane, a.Intent)
			}
			if k := len(d.Attempts); k > 0 && d.Attempts[k-1].AtMS > a.AtMS {
				return d, fmt.Errorf("read day: line %d: attempt %s is earlier than the line before it", n, a.Lane)
			}
			if a.Loss == "" {
				a.Loss = LossNone
			}
			d.Attempts = append(d.Attempts, a)
		default:
			return d, fmt.Errorf("read day: line %d: unknown kind %q or missing %q field", n, l.Kind, l.Kind)
		}
		if len(d.Attempts) > 4*MaxDayIntents {
			return d, errors.New("read day: too many attempts")
		}
	}
	if err := sc.Err(); err != nil {
		return d, fmt.Errorf("read day: line %d: %w", n+1, err)
	}
	if !seenParams {
		return d, errors.New("read day: no params line")
	}
	lanes := make(map[string]bool, len(d.Attempts))
	for _, a := range d.Attempts {
		if lanes[a.Lane] {
			return d, fmt.Errorf("read day: lane %s appears twice", a.Lane)
		}
		lanes[a.Lane] = true
	}
	for _, a := range d.Attempts {
		if a.Overlaps != "" && !lanes[a.Overlaps] {
			return d, fmt.Errorf("read day: attempt %s overlaps unknown lane %s", a.Lane, a.Overlaps)
		}
	}
	return d, nil
}
