package web_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// labModelScript turns each case's runner state into the race view's
// model as the lab page does (lab-model.js labRaceInput, race-model.js
// buildRace) and prints what the picture is made of: each key row's
// segments, each attempt's marks, the winner, the axis's numbers and the
// rules' labels.
const labModelScript = `
import { readFileSync } from 'node:fs';
import { labRaceInput } from './lab-model.js';
import { buildRace } from './race-model.js';

const cases = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const out = cases.map((state) => {
  const m = buildRace(labRaceInput(state));
  return {
    segs: m.groups.flatMap((g) => g.db.map((s) => ({ state: s.state, owner: s.owner, value: s.value, status: s.status }))),
    marks: Object.fromEntries([...m.attempts.values()].map((a) => [a.id, a.marks.map((x) => x.kind)])),
    winner: m.groups.map((g) => g.winner).join(','),
    ticks: (m.ticks || []).filter((x) => x !== null),
    labels: m.violations.map((v) => v.label),
    processor: m.showProcessor,
  };
});
process.stdout.write(JSON.stringify(out));
`

// labSeg is a key row's segment in the lab's race model.
type labSeg struct {
	State  string `json:"state"`
	Owner  string `json:"owner"`
	Value  string `json:"value"`
	Status int    `json:"status"`
}

// TestLabModelDrawsTheKeyRowTheTablesHold builds the race model of lab
// runs (runner states as web/lab/runner.js makes them) and checks that
// each key's row is what the key_rows of the student's tables said after
// each step: a row without a state column is only written, never
// in_progress or completed; a state column's values follow, each with the
// attempt whose step wrote it (a claim, a takeover, a completion inside a
// transaction shown at its COMMIT); a row deleted is no row; an INSERT
// that left the key's rows as they were claimed nothing. The axis counts
// the runner's steps, and each broken rule is labelled with its number.
func TestLabModelDrawsTheKeyRowTheTablesHold(t *testing.T) {
	at := func(lane string, seq, step int, fields map[string]any) map[string]any {
		e := map[string]any{"seq": seq, "step": step, "lane": lane, "intent": "i1", "customer": "cust-1", "key": `"k-1"`}
		for k, v := range fields {
			e[k] = v
		}
		return e
	}
	start := func(lane string, seq, step int) map[string]any {
		return at(lane, seq, step, map[string]any{"phase": "start", "body": `{"from":"alice","to":"bob","amount":200000}`})
	}
	db := func(lane string, seq, step int, op, sql, outcome string, rows int, keyRows ...map[string]any) map[string]any {
		if keyRows == nil {
			keyRows = []map[string]any{}
		}
		return at(lane, seq, step, map[string]any{"phase": "db", "op": op, "sql": sql, "outcome": outcome, "rows": rows, "key_rows": keyRows})
	}
	row := func(table string, r map[string]any) map[string]any { return map[string]any{"table": table, "row": r} }
	claim := func(owner, state string, status any) map[string]any {
		return row("idem_keys", map[string]any{"idem_key": "k-1", "state": state, "owner": owner, "status": status})
	}
	attempts := []map[string]any{
		{"id": "a1", "intent": "i1", "customer": "cust-1", "key": `"k-1"`, "state": "answered"},
		{"id": "a2", "intent": "i1", "customer": "cust-1", "key": `"k-1"`, "state": "answered"},
	}
	state := func(trace ...map[string]any) map[string]any {
		return map[string]any{"attempts": attempts, "trace": trace, "db": map[string]any{"tables": map[string]any{}}}
	}
	insert := "INSERT INTO idem_keys (idem_key, state, owner) VALUES (?, 'in_progress', ?)"
	type labCase struct {
		name   string
		state  map[string]any
		segs   []labSeg
		marks  map[string][]string
		winner string
		ticks  []int
		labels []string
	}
	cases := []labCase{
		{
			name: "a key table without a state column",
			state: state(
				start("a1", 1, 0),
				db("a1", 2, 1, "run", "INSERT INTO idem_keys (idem_key, created_at) VALUES (?, ?)", "ok", 1,
					row("idem_keys", map[string]any{"idem_key": "k-1", "created_at": 5})),
				start("a2", 3, 1),
				db("a2", 4, 2, "run", "INSERT INTO idem_keys (idem_key, created_at) VALUES (?, ?)", "constraint", 0,
					row("idem_keys", map[string]any{"idem_key": "k-1", "created_at": 5})),
			),
			segs:   []labSeg{{State: "recorded", Owner: "a1"}},
			marks:  map[string][]string{"a1": {"step", "claim"}, "a2": {"step", "duplicate"}},
			winner: "a1",
			ticks:  []int{1, 2},
		},
		{
			name: "a claim left by a crash, taken over and completed in a transaction",
			state: state(
				start("a1", 1, 0),
				db("a1", 2, 1, "run", insert, "ok", 1, claim("a1", "in_progress", nil)),
				at("a1", 3, 2, map[string]any{"phase": "crash", "outcome": "crashed"}),
				start("a2", 4, 2),
				db("a2", 5, 3, "run", insert, "constraint", 0, claim("a1", "in_progress", nil)),
				db("a2", 6, 4, "run", "UPDATE idem_keys SET owner = ? WHERE idem_key = ?", "ok", 1, claim("a2", "in_progress", nil)),
				db("a2", 7, 5, "begin", "BEGIN IMMEDIATE", "ok", 0, claim("a2", "in_progress", nil)),
				db("a2", 8, 6, "run", "UPDATE idem_keys SET state = 'completed', status = 201 WHERE idem_key = ?", "ok", 1, claim("a2", "in_progress", nil)),
				db("a2", 9, 7, "commit", "COMMIT", "ok", 0, claim("a2", "completed", 201)),
				at("a2", 10, 7, map[string]any{"phase": "answer", "outcome": "answered", "status": 201}),
			),
			segs: []labSeg{
				{State: "in_progress", Owner: "a1", Value: "in_progress"},
				{State: "in_progress", Owner: "a2", Value: "in_progress"},
				{State: "completed", Owner: "a2", Value: "completed", Status: 201},
			},
			marks: map[string][]string{"a1": {"step", "claim", "crashed"}, "a2": {"step", "duplicate", "takeover", "step", "step", "step", "answer"}},
			// The crashed claimer wins nothing: the takeover settled it.
			winner: "a2",
			ticks:  []int{1, 2, 3, 4, 5, 6, 7},
		},
		{
			name: "a claim left by a crash and never taken over: no winner",
			state: state(
				start("a1", 1, 0),
				db("a1", 2, 1, "run", insert, "ok", 1, claim("a1", "in_progress", nil)),
				at("a1", 3, 2, map[string]any{"phase": "crash", "outcome": "crashed"}),
				start("a2", 4, 2),
				db("a2", 5, 3, "run", insert, "constraint", 0, claim("a1", "in_progress", nil)),
				at("a2", 6, 3, map[string]any{"phase": "answer", "outcome": "answered", "status": 409}),
			),
			segs:   []labSeg{{State: "in_progress", Owner: "a1", Value: "in_progress"}},
			marks:  map[string][]string{"a1": {"step", "claim", "crashed"}, "a2": {"step", "duplicate", "answer"}},
			winner: "",
			ticks:  []int{1, 2, 3},
		},
		{
			name: "a claim deleted again",
			state: state(
				start("a1", 1, 0),
				db("a1", 2, 1, "run", "INSERT INTO claims (k, status) VALUES (?, 'pending')", "ok", 1, row("claims", map[string]any{"k": "k-1", "status": "pending"})),
				db("a1", 3, 2, "run", "DELETE FROM claims WHERE k = ?", "ok", 1),
			),
			segs:   []labSeg{{State: "valued", Owner: "a1", Value: "pending"}, {State: "absent", Owner: "a1"}},
			marks:  map[string][]string{"a1": {"step", "claim", "step"}, "a2": {}},
			winner: "a1",
			ticks:  []int{1, 2},
		},
		{
			name: "an INSERT that holds no key claims nothing",
			state: state(
				start("a1", 1, 0),
				db("a1", 2, 1, "run", "INSERT INTO audit (what) VALUES ('transfer')", "ok", 1),
			),
			segs:   []labSeg{},
			marks:  map[string][]string{"a1": {"step", "step"}, "a2": {}},
			winner: "",
			ticks:  []int{1},
		},
	}
	// Two customers under one key string, into a key table scoped by
	// customer: each customer's key is its own row, drawn apart, each row
	// with the attempt that wrote it.
	scopedRow := func(customer, by string) map[string]any {
		return map[string]any{"table": "idem_keys", "by": by, "row": map[string]any{"customer": customer, "idem_key": "k-1", "state": "in_progress"}}
	}
	two := map[string]any{
		"attempts": []map[string]any{
			{"id": "a1", "intent": "i1", "customer": "cust-1", "key": `"k-1"`, "state": "answered"},
			{"id": "a2", "intent": "i2", "customer": "cust-2", "key": `"k-1"`, "state": "answered"},
		},
		"trace": []map[string]any{
			start("a1", 1, 0),
			db("a1", 2, 1, "run", insert, "ok", 1, scopedRow("cust-1", "a1")),
			at("a2", 3, 1, map[string]any{"phase": "start", "customer": "cust-2", "intent": "i2"}),
			at("a2", 4, 2, map[string]any{"phase": "db", "op": "run", "sql": insert, "outcome": "ok", "rows": 1, "customer": "cust-2", "intent": "i2",
				"key_rows": []map[string]any{scopedRow("cust-1", "a1"), scopedRow("cust-2", "a2")}}),
		},
		"db": map[string]any{"tables": map[string]any{}},
	}
	cases = append(cases, labCase{name: "two customers' own rows under one key string", state: two,
		segs:   []labSeg{{State: "in_progress", Owner: "a1", Value: "in_progress"}, {State: "in_progress", Owner: "a2", Value: "in_progress"}},
		marks:  map[string][]string{"a1": {"step", "claim"}, "a2": {"step", "claim"}},
		winner: "a1,a2", ticks: []int{1, 2}})
	// A row a1 committed at a step that read no rows (its key as sent is
	// another string), first seen at a2's step: a1's row, not a2's.
	seen := state(
		start("a1", 1, 0),
		at("a1", 2, 1, map[string]any{"phase": "db", "op": "run", "sql": "INSERT INTO idem_keys (idem_key) VALUES (?)", "outcome": "ok", "rows": 1}),
		start("a2", 3, 1),
		db("a2", 4, 2, "get", "SELECT * FROM idem_keys WHERE idem_key = ?", "ok", 1,
			map[string]any{"table": "idem_keys", "by": "a1", "row": map[string]any{"idem_key": "k-1"}}),
	)
	cases = append(cases, labCase{name: "a row first seen at another attempt's step is its writer's", state: seen,
		segs:   []labSeg{{State: "recorded", Owner: "a1"}},
		marks:  map[string][]string{"a1": {"step", "claim"}, "a2": {"step", "step"}},
		winner: "a1", ticks: []int{1, 2}})
	// One rule broken twice, another once: 1, 3a, 3b.
	broken := state(start("a1", 1, 0))
	broken["verdict"] = map[string]any{"report": map[string]any{"rules": []any{
		map[string]any{"rule": map[string]any{"n": 1, "name": "one-transfer-per-intent"}, "violations": []any{map[string]any{"lanes": []string{"a1"}}}},
		map[string]any{"rule": map[string]any{"n": 3, "name": "replay-is-byte-identical"}, "violations": []any{map[string]any{"lanes": []string{"a1"}}, map[string]any{"lanes": []string{"a1"}}}},
	}}}
	cases = append(cases, labCase{name: "rules labelled by their numbers", state: broken, segs: []labSeg{}, marks: map[string][]string{"a1": {"step"}, "a2": {}}, ticks: []int{}, labels: []string{"1", "3a", "3b"}})

	in := make([]map[string]any, len(cases))
	for i, c := range cases {
		in[i] = c.state
	}
	var got []struct {
		Segs      []labSeg            `json:"segs"`
		Marks     map[string][]string `json:"marks"`
		Winner    string              `json:"winner"`
		Ticks     []int               `json:"ticks"`
		Labels    []string            `json:"labels"`
		Processor bool                `json:"processor"`
	}
	runInNode(t, "the lab's race model is", labModelScript, []string{"lab-model.js", "race-model.js", "dom.js"}, in, &got)
	require.Len(t, got, len(cases))
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.segs, got[i].Segs, "the key row")
			assert.Equal(t, c.marks, got[i].Marks, "the marks")
			assert.Equal(t, c.winner, got[i].Winner, "the winner")
			assert.Equal(t, c.ticks, got[i].Ticks, "the axis counts the runner's steps")
			if c.labels != nil {
				assert.Equal(t, c.labels, got[i].Labels, "the brackets' labels")
			}
		})
	}
}
