package web_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/lab"
)

// extraPaymentsScript prints, for each case, what strings.js says of it:
// extraPayments in the language asked for, and the race view's ledger
// total (t('racePaidAgainTotal'), as race.js calls it) in that language.
const extraPaymentsScript = `
import { readFileSync } from 'node:fs';
import { extraPayments, setLang, t } from './strings.js';
import { won } from './dom.js';

const cases = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const out = cases.map((c) => {
  setLang(c.lang);
  return { sentence: extraPayments(c.n, c.won), total: t('racePaidAgainTotal', { n: c.n, amount: won(c.won) }) };
});
process.stdout.write(JSON.stringify(out));
`

// TestExtraPaymentsSaysWhatTheCheckerSays runs web/strings.js in Node and
// holds its sentence for money moved more than once to lab.ExtraPayments,
// which the checker's rule 1 opens with: the bench's summary, the race
// view's ledger total, the classroom's tally and verdict and the rule say
// one sentence, in English and in Korean.
func TestExtraPaymentsSaysWhatTheCheckerSays(t *testing.T) {
	type tcase struct {
		N    int    `json:"n"`
		Won  int64  `json:"won"`
		Lang string `json:"lang"`
	}
	var cases []tcase
	for _, lang := range []string{"en", "ko"} {
		for _, c := range []tcase{{0, 0, lang}, {1, 500_000, lang}, {2, 1_000_000, lang}, {39, 390_000, lang}, {1_234, 12_340_000, lang}} {
			cases = append(cases, c)
		}
	}
	var got []struct{ Sentence, Total string }
	runInNode(t, "the page's words are", extraPaymentsScript, []string{"strings.js", "dom.js"}, cases, &got)
	require.Len(t, got, len(cases))
	for i, c := range cases {
		want := lab.ExtraPayments(c.N, c.Won, c.Lang)
		assert.Equal(t, want, got[i].Sentence, "strings.js extraPayments(%d, %d) in %s", c.N, c.Won, c.Lang)
		// race.js draws the total only for two payments again or more,
		// and passes the count unformatted (extraPayments groups its
		// digits: 1,234).
		if c.N > 1 && c.N < 1000 {
			assert.Equal(t, "✘ "+want, got[i].Total, "the race view's ledger total for %d in %s", c.N, c.Lang)
		}
		assert.NotContains(t, got[i].Sentence, "twice")
		assert.NotContains(t, got[i].Sentence, "두 번")
	}
}
