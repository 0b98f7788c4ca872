package web_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ledgerBlocksScript places seeded random ledgers crowded toward the plot's
// right edge with race.js's ledgerBlocks, as a phone's narrow race view
// does with a storm's forty payments, and prints for each the blocks'
// left edges, widths and counts.
const ledgerBlocksScript = `
import { readFileSync } from 'node:fs';
import { ledgerBlocks } from './race.js';

const cases = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const out = cases.map((k) => {
  let seed = k.seed;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const ledger = [];
  let x = k.plotLeft;
  for (let i = 0; i < k.n; i++) {
    x += rnd() * k.step;
    ledger.push({ x, again: i > 0 && rnd() < k.again });
  }
  const c = { X: (v) => v, unit: k.unit, plotLeft: k.plotLeft, textRight: k.textRight };
  return ledgerBlocks(ledger, c).map((b) => ({ left: b.left, w: b.w, n: b.list.length }));
});
process.stdout.write(JSON.stringify(out));
`

// TestLedgerBlocksNeverCoverEachOther runs race.js's ledgerBlocks in Node
// on crowded ledgers and holds every block inside the plot (the first may
// stand half before it, centred on its moment), clear of the
// next by its 2 px, with every payment in exactly one block: a block that
// grows by its count near the right edge and is pushed left joins the one
// it would cover (on a phone, "✘9" was once drawn over "✘12").
func TestLedgerBlocksNeverCoverEachOther(t *testing.T) {
	type tcase struct {
		Seed      int     `json:"seed"`
		N         int     `json:"n"`
		Step      float64 `json:"step"`
		Again     float64 `json:"again"`
		Unit      float64 `json:"unit"`
		PlotLeft  float64 `json:"plotLeft"`
		TextRight float64 `json:"textRight"`
	}
	var cases []tcase
	for seed := 1; seed <= 400; seed++ {
		cases = append(cases, tcase{Seed: seed, N: 10 + seed%70, Step: float64(1 + seed%9), Again: float64(seed%5) / 4, Unit: float64(6 + seed%20), PlotLeft: 90, TextRight: 200 + float64(seed%7)*40})
	}
	var got [][]struct {
		Left, W float64
		N       int
	}
	runInNode(t, "the race view's ledger is", ledgerBlocksScript, []string{"race.js", "race-model.js", "dom.js", "vdom.js", "strings.js"}, cases, &got)
	require.Len(t, got, len(cases))
	for i, c := range cases {
		total := 0
		for k, b := range got[i] {
			total += b.N
			assert.GreaterOrEqual(t, b.Left, c.PlotLeft-b.W/2-0.01, "case %d block %d starts more than half left of the plot", i, k)
			assert.LessOrEqual(t, b.Left+b.W, c.TextRight+0.01, "case %d block %d runs past the plot", i, k)
			if k > 0 {
				prev := got[i][k-1]
				assert.GreaterOrEqual(t, b.Left, prev.Left+prev.W+2-0.01, "case %d: block %d (×%d) covers block %d (×%d)", i, k, b.N, k-1, prev.N)
			}
		}
		assert.Equal(t, c.N, total, "case %d: every payment in one block", i)
	}
}

// wrapScript wraps each case's sentence with race.js's wrap and prints the
// lines.
const wrapScript = `
import { readFileSync } from 'node:fs';
import { wrap } from './race.js';

const cases = JSON.parse(readFileSync(process.argv[2], 'utf8'));
process.stdout.write(JSON.stringify(cases.map((k) => wrap(k.s, k.w, 12, 600))));
`

// TestWrapCutsALongWordAtItsJoints: a rule's sentence quotes a JSON body,
// one word wider than a phone's line. It is cut after a comma, colon or
// dash where one falls in the line's second half, never inside a member's
// name ("a / mount") when one does; and nothing is lost or added.
func TestWrapCutsALongWordAtItsJoints(t *testing.T) {
	type tcase struct {
		S string  `json:"s"`
		W float64 `json:"w"`
	}
	body := `{"transfer_id":"tr_2","from":"alice","to":"bob","amount":200000,"balance_after":600000,"created_at":"2026-01-01T09:00:00.000Z"}`
	var cases []tcase
	for w := 120.0; w <= 400; w += 7 {
		cases = append(cases, tcase{S: `(a2) got 201 ` + body + `, not what the attempt that answered first got`, W: w})
	}
	var got [][]string
	runInNode(t, "wrap is", wrapScript, []string{"race.js", "race-model.js", "dom.js", "vdom.js", "strings.js"}, cases, &got)
	require.Len(t, got, len(cases))
	for i, c := range cases {
		lines := got[i]
		joined := ""
		for k, l := range lines {
			assert.LessOrEqual(t, float64(len([]rune(l)))*12*0.62*1.04, c.W+12*0.62*1.04+1, "line %q fits %v", l, c.W)
			if k > 0 && !strings.HasSuffix(joined, ",") && !strings.HasSuffix(joined, ":") && !strings.HasSuffix(joined, "-") && !strings.HasSuffix(joined, "/") {
				joined += " "
			}
			joined += l
		}
		// Where the body was cut, each cut is at a joint, except where a
		// line's second half has none.
		for k := 0; k+1 < len(lines); k++ {
			l := lines[k]
			if !strings.Contains(body, l) || strings.ContainsAny(l[len(l)-1:], ",:-/") {
				continue
			}
			half := l[len(l)/2:]
			assert.False(t, strings.ContainsAny(half, ",:-/"), "at width %v the body is cut inside a word after %q although its line has a joint in its second half", c.W, l)
		}
		assert.Equal(t, strings.ReplaceAll(c.S, " ", ""), strings.ReplaceAll(joined, " ", ""), "every character kept, in order, at width %v", c.W)
	}
}
