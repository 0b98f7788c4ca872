package web_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
// holds its sentence for money paid more than once to lab.ExtraPayments,
// which the checker's rule 1 opens with: the bench's summary, the race
// view's ledger total, the classroom's tally and verdict and the rule say
// one sentence, in English and in Korean.
func TestExtraPaymentsSaysWhatTheCheckerSays(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the page's words are checked in Node")
	}
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
	dir := t.TempDir()
	for _, f := range []string{"strings.js", "dom.js"} {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"type":"module"}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "check.js"), []byte(extraPaymentsScript), 0o644))
	in, err := json.Marshal(cases)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cases.json"), in, 0o644))
	cmd := exec.Command(node, "check.js", "cases.json")
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	require.NoError(t, err, "%s", stderr.String())
	var got []struct{ Sentence, Total string }
	require.NoError(t, json.Unmarshal(stdout, &got))
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
