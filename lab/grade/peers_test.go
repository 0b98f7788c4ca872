package grade_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/internal/endpointtest"
	"idemlab/lab/grade"
)

// verdict is what grading one endpoint must find: the rules it must break
// (target) and may break (allowed, target when nil), the checks that must
// fail or warn, and the causes the grader must diagnose. An endpoint with
// nothing to find must pass with no note at all.
type verdict struct {
	target, allowed []string
	fail, warn      []string
	causes          []string
	// report holds phrases the text report must contain.
	report []string
	// dayStatuses are statuses the day's tally must count; unpaid says
	// that some of the day's intents must be counted as never paid.
	dayStatuses []int
	unpaid      bool
}

func assertVerdict(t *testing.T, rep grade.Report, want verdict) {
	t.Helper()
	var b strings.Builder
	require.NoError(t, rep.WriteText(&b))
	t.Log("\n" + b.String())
	for _, c := range rep.Checks {
		assert.Empty(t, c.Error, c.Name)
	}
	if want.target == nil && want.fail == nil && want.warn == nil {
		assert.True(t, rep.OK, "broken %v, warned %v", rep.Broken(), rep.Warned())
		assert.Empty(t, rep.Notes)
		return
	}
	assert.False(t, rep.OK, "a breach of the contract never passes")
	for _, r := range want.target {
		assert.Contains(t, rep.Broken(), r)
	}
	allowed := want.allowed
	if allowed == nil {
		allowed = want.target
	}
	assert.Subset(t, allowed, rep.Broken())
	for _, name := range want.fail {
		c, ok := rep.Check(name)
		require.True(t, ok, name)
		assert.Equal(t, grade.CheckFail, c.Verdict, "check %s", name)
	}
	for _, name := range want.warn {
		c, ok := rep.Check(name)
		require.True(t, ok, name)
		assert.Equal(t, grade.CheckWarn, c.Verdict, "check %s", name)
		assert.Empty(t, c.Broken, "a warning breaks no rule")
	}
	var causes []string
	for _, f := range rep.Failures {
		if f.Cause != "" {
			causes = append(causes, f.Cause)
		}
		assert.NotEmpty(t, f.Fix, "every failure says what to fix")
	}
	for _, c := range want.causes {
		assert.Contains(t, causes, c)
	}
	for _, p := range want.report {
		assert.Contains(t, b.String(), p)
	}
	// Every note the text shows carries its curl lines, as in --json.
	_, notes, _ := strings.Cut(b.String(), "\nNotes:")
	seen := map[string]bool{}
	for _, n := range rep.Notes {
		if seen[n.Check] {
			continue
		}
		seen[n.Check] = true
		for _, l := range n.Curl {
			assert.Contains(t, notes, l, "note %q", n.Message)
		}
	}
	// --json says the same: each check's verdict, each failure's cause and
	// fix, the day's answers by status and unpaid intents.
	raw, err := json.Marshal(rep)
	require.NoError(t, err)
	var j struct {
		Checks []struct {
			Name, Verdict string
		}
		Failures []struct {
			Cause, Fix string
		}
		Day map[string]any
	}
	require.NoError(t, json.Unmarshal(raw, &j))
	for i, c := range j.Checks {
		assert.Equal(t, rep.Checks[i].Verdict, c.Verdict, c.Name)
	}
	for i, f := range j.Failures {
		assert.Equal(t, rep.Failures[i].Cause, f.Cause)
		assert.NotEmpty(t, f.Fix)
	}
	require.NotNil(t, rep.Day)
	for _, st := range want.dayStatuses {
		assert.Positive(t, rep.Day.Statuses[st], "the day counts its %d answers", st)
		assert.Contains(t, b.String(), fmt.Sprintf(" %d×%d", st, rep.Day.Statuses[st]))
	}
	if want.unpaid {
		assert.Positive(t, rep.Day.Unpaid)
		assert.Contains(t, b.String(), fmt.Sprintf("%d intents never paid", rep.Day.Unpaid))
	}
	require.NotNil(t, j.Day)
	assert.Contains(t, j.Day, "statuses")
	assert.Contains(t, j.Day, "unpaid_intents")
	assert.Contains(t, j.Day, "duplicates", "the checker's counts stay at the top of day")
}

// peerCase is an endpoint outside Go, with the flags that plant one
// mistake (none: the correct configuration) and what grading must find.
type peerCase struct {
	name  string
	flags []string
	want  verdict
}

// The mistakes both peers can make, each the way people make it.
var (
	wantGlobal = verdict{target: []string{"customers-see-own-responses"},
		allowed: []string{"customers-see-own-responses", "completion-has-its-transfer"},
		fail:    []string{"other-customer", "day"}, causes: []string{"global-keys"},
		report: []string{"never paid, because customer"}, unpaid: true}
	want2xxOnly = verdict{target: []string{"replay-is-byte-identical"}, fail: []string{"refusals"},
		causes: []string{"refusal-not-stored"}, report: []string{"status 201 against the first answer's 402"}}
	wantOrdered = verdict{target: []string{"replay-is-byte-identical"}, fail: []string{"reordered"},
		causes: []string{"order-sensitive-fingerprint"}, report: []string{"re-spaced in the same order got the first answer"}}
	wantRaw = verdict{target: []string{"replay-is-byte-identical"}, fail: []string{"reordered"},
		causes: []string{"raw-bytes-fingerprint"}}
	wantHorizon = verdict{target: []string{"retention-outlasts-retries"}, fail: []string{"retention"},
		causes: []string{"short-retention"}}
	wantNoRetryAfter = verdict{warn: []string{"together"}, report: []string{"without a Retry-After header"}}
)

// with adds statuses the day must count.
func with(v verdict, dayStatuses ...int) verdict {
	v.dayStatuses = append(append([]int(nil), v.dayStatuses...), dayStatuses...)
	return v
}

// TestGradePeerEndpoints grades two endpoints written outside Go, each run
// as a process of its own on a real socket: a Node.js bank on Node's own
// http module, and a Python bank whose idempotency is a WSGI middleware
// keyed, by default, by the header alone. Each correct configuration
// passes; each realistic mistake fails the check that shows it (or warns,
// where no rule breaks) with the right diagnosis.
func TestGradePeerEndpoints(t *testing.T) {
	node := []peerCase{
		{"correct", nil, verdict{}},
		{"global keys refused 417", []string{"--global-keys", "417"}, with(wantGlobal, 417)},
		{"global keys refused 409", []string{"--global-keys", "409"}, wantGlobal},
		{"only 2xx stored", []string{"--store-2xx-only"}, want2xxOnly},
		{"refusals rendered again", []string{"--rerender-errors"}, verdict{target: []string{"replay-is-byte-identical"},
			fail: []string{"refusals"}, causes: []string{"refusal-rerendered"}, report: []string{`"instance" is`}}},
		{"order-sensitive hash", []string{"--hash", "ordered"}, wantOrdered},
		{"raw-bytes hash", []string{"--hash", "raw"}, wantRaw},
		{"retention of exactly the horizon", []string{"--retention", "3600"}, wantHorizon},
		{"no Retry-After", []string{"--no-retry-after"}, wantNoRetryAfter},
		{"key limit counts the quotes", []string{"--key-limit-counts-quotes"}, verdict{warn: []string{"longest-key"},
			report: []string{"a valid key of exactly 255 characters"}}},
	}
	python := []peerCase{
		{"correct", nil, verdict{}},
		{"keyed by the header alone, refused 417", []string{"--key-by-header-alone", "--mismatch-status", "417"}, with(wantGlobal, 417)},
		{"keyed by the header alone, refused 409", []string{"--key-by-header-alone", "--mismatch-status", "409"}, wantGlobal},
		{"a correction refused 417", []string{"--mismatch-status", "417"}, verdict{warn: []string{"correction"},
			report: []string{"was answered 417"}}},
		{"only 2xx stored", []string{"--store-2xx-only"}, want2xxOnly},
		{"order-sensitive hash", []string{"--hash", "ordered"}, wantOrdered},
		{"retention of exactly the horizon", []string{"--retention", "3600"}, wantHorizon},
		{"no Retry-After", []string{"--no-retry-after"}, wantNoRetryAfter},
		{"bad requests stored under the key", []string{"--store-bad-requests"}, verdict{target: []string{"different-request-never-succeeds"},
			fail: []string{"repaired"}, causes: []string{"stored-validation-refusal"}, report: []string{"a body whose amount is a JSON string (repaired.1) was answered 400"}}},
	}
	peers := []struct {
		interpreter, script string
		cases               []peerCase
	}{
		{"node", "bank.js", node},
		{"python3", "middleware_bank.py", python},
	}
	for _, p := range peers {
		t.Run(p.interpreter, func(t *testing.T) {
			for _, c := range p.cases {
				t.Run(c.name, func(t *testing.T) {
					// Each bank is its own process, and most of a run is spent
					// waiting on its answers, so they run side by side.
					t.Parallel()
					args := append([]string{filepath.Join("testdata", "peers", p.script), "--port", "0", "--payment-latency-ms", "30"}, c.flags...)
					o := gradeOpts()
					o.Day.Intents = 30
					rep, err := grade.Grade(context.Background(), endpointtest.Start(t, p.interpreter, args...), o)
					require.NoError(t, err)
					assertVerdict(t, rep, c.want)
				})
			}
		})
	}
}
