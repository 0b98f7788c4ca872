package web_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newsScript prints the bench's news clause (bench.js eventNews) for each
// event, in each language.
const newsScript = `
import { readFileSync } from 'node:fs';
import { eventNews } from './bench.js';
import { setLang } from './strings.js';

const cases = JSON.parse(readFileSync(process.argv[2], 'utf8'));
process.stdout.write(JSON.stringify(cases.map((c) => { setLang(c.lang); return eventNews(c.event); })));
`

// TestBenchNewsSaysWhatTheProcessorDid runs bench.js in Node and checks
// the clause the bench announces for a payment call: whether the
// processor charged, answered with its first charge or declined, and the
// recovery point recorded or read in place of a call, from the event's
// typed fields, in English and in Korean.
func TestBenchNewsSaysWhatTheProcessorDid(t *testing.T) {
	type event struct {
		Lane     string `json:"lane"`
		Phase    string `json:"phase"`
		Outcome  string `json:"outcome"`
		Amount   int64  `json:"amount,omitempty"`
		ChargeID string `json:"charge_id,omitempty"`
		Charge   string `json:"charge,omitempty"`
		Recovery string `json:"recovery,omitempty"`
	}
	type tcase struct {
		Lang  string `json:"lang"`
		Event event  `json:"event"`
		want  []string
	}
	cases := []tcase{
		{"en", event{"A1", "execute", "executed", 180000, "ch_000001", "charged", ""}, []string{"A1 called the processor", "charged 180,000 won as ch_000001"}},
		{"en", event{"A2", "execute", "executed", 180000, "ch_000001", "replayed", ""}, []string{"with the key", "its first charge, ch_000001", "nothing new"}},
		{"en", event{"A1", "execute", "executed", 0, "", "declined", ""}, []string{"declined", "nothing was charged"}},
		{"en", event{"A1", "execute", "stored", 0, "ch_000001", "", "charge_made"}, []string{"recorded the recovery point charge_made with ch_000001"}},
		{"en", event{"A2", "execute", "skipped", 180000, "ch_000001", "recovered", "charge_made"}, []string{"found the recovery point charge_made", "no call"}},
		{"ko", event{"A1", "execute", "executed", 180000, "ch_000001", "charged", ""}, []string{"결제 대행사를 호출했고", "180,000원이 청구됐습니다(ch_000001)"}},
		{"ko", event{"A2", "execute", "executed", 180000, "ch_000001", "replayed", ""}, []string{"첫 청구(ch_000001)로 답했습니다"}},
		{"ko", event{"A2", "execute", "skipped", 180000, "ch_000001", "recovered", "charge_made"}, []string{"복구 지점 charge_made를 찾았습니다", "호출하지 않고"}},
	}
	var got []string
	runInNode(t, "the page's words are", newsScript, []string{"bench.js", "strings.js", "dom.js", "vdom.js", "race.js", "race-model.js", "sandbox.js"}, cases, &got)
	require.Len(t, got, len(cases))
	for i, c := range cases {
		for _, w := range c.want {
			assert.Contains(t, got[i], w, "%s %+v", c.Lang, c.Event)
		}
		assert.NotContains(t, got[i], "payment network", "%s %+v", c.Lang, c.Event)
	}
}
