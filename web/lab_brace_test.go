package web_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnclosedBraceFindsWhereTheBraceWasMeant: every closing brace that
// stands alone on its line in the shipped handlers, taken out one at a
// time, is found where it was (the line after it, which now holds its
// place), with the line of the { it closed; a file whose braces balance,
// and braces in strings, templates and comments, answer nothing.
func TestUnclosedBraceFindsWhereTheBraceWasMeant(t *testing.T) {
	type want struct {
		Text   string `json:"text"`
		Open   int    `json:"open"`
		Before int    `json:"before"`
	}
	var cases []want
	for _, name := range []string{"naive", "unique", "in-progress", "scoped"} {
		b, err := os.ReadFile("../lab/handlers/" + name + ".js")
		require.NoError(t, err)
		lines := strings.Split(string(b), "\n")
		for i, l := range lines {
			// A } alone, inside the handler (not its last), whose
			// block is a statement's: an if, a try, a catch, a loop.
			if strings.TrimSpace(l) != "}" || !strings.HasPrefix(l, "  ") {
				continue
			}
			open := 0
			indent := len(l) - len(strings.TrimLeft(l, " "))
			for j := i - 1; j >= 0; j-- {
				lj := lines[j]
				if strings.HasSuffix(strings.TrimRight(lj, " "), "{") && len(lj)-len(strings.TrimLeft(lj, " ")) == indent {
					open = j + 1
					break
				}
			}
			if open == 0 || i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) == "" && i+2 >= len(lines) {
				continue
			}
			text := strings.Join(append(append([]string{}, lines[:i]...), lines[i+1:]...), "\n")
			// The line after it holds its place, unless blank lines
			// come first: the next line with code.
			before := i + 1
			for before <= len(lines)-1 && strings.TrimSpace(lines[before]) == "" {
				before++
			}
			cases = append(cases, want{Text: text, Open: open, Before: before})
		}
	}
	require.Greater(t, len(cases), 10, "enough braces to take out")
	balanced := []string{
		"async function transfer(req, db, pay) {\n  const s = '{';\n  const t = `}\n{`; // {\n  /* { */\n  return lab.json(201, {\n    a: 1,\n  });\n}\n",
	}
	var got struct {
		Found    []map[string]int `json:"found"`
		Balanced []any            `json:"balanced"`
	}
	runInNode(t, "the missing braces are", `
import { readFileSync } from 'node:fs';
import { unclosedBrace } from './lab-brace.js';
const input = JSON.parse(readFileSync(process.argv[2], 'utf8'));
process.stdout.write(JSON.stringify({
  found: input.cases.map((c) => unclosedBrace(c.text)),
  balanced: input.balanced.map((t) => unclosedBrace(t)),
}));
`, []string{"lab-brace.js"}, map[string]any{"cases": cases, "balanced": balanced}, &got)
	for i, c := range cases {
		assert.Equal(t, map[string]int{"open": c.Open, "before": c.Before}, got.Found[i], "case %d:\n%s", i, c.Text)
	}
	assert.Equal(t, []any{nil}, got.Balanced)
}
