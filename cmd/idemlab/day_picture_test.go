package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDayReplayDrawsThePicture replays a small day at naive with --svg: the
// text tally is what it always was, and beside it an SVG file draws the
// day, its paid-again columns and its broken rule.
func TestDayReplayDrawsThePicture(t *testing.T) {
	a, _, err := runCmd(t, "day", "generate", "--seed", "4", "--customers", "6", "--intents", "80")
	require.NoError(t, err)
	dir := t.TempDir()
	file := filepath.Join(dir, "day.jsonl")
	require.NoError(t, os.WriteFile(file, []byte(a), 0o600))
	plain, _, err := runCmd(t, "day", "replay", file, "--level", "naive")
	require.NoError(t, err)

	cases := []struct {
		lang, words string
	}{
		{"", "moved more than once: "},
		{"ko", "더 나간 돈: "},
	}
	for _, tc := range cases {
		t.Run("lang="+tc.lang, func(t *testing.T) {
			out := filepath.Join(dir, "day-"+tc.lang+".svg")
			args := []string{"day", "replay", file, "--level", "naive", "--svg", out}
			if tc.lang != "" {
				args = append(args, "--lang", tc.lang)
			}
			text, _, err := runCmd(t, args...)
			require.NoError(t, err)
			assert.Equal(t, cutTiming(plain), cutTiming(text), "the text tally is unchanged")

			b, err := os.ReadFile(out)
			require.NoError(t, err)
			dec := xml.NewDecoder(bytes.NewReader(b))
			outcomes := map[string]int{}
			var root string
			var chars bytes.Buffer
			columns := 0
			for {
				tok, err := dec.Token()
				if err == io.EOF {
					break
				}
				require.NoError(t, err, "the picture is well-formed XML")
				switch e := tok.(type) {
				case xml.StartElement:
					if root == "" {
						root = e.Name.Space + " " + e.Name.Local
					}
					for _, at := range e.Attr {
						switch at.Name.Local {
						case "data-outcome":
							outcomes[at.Value]++
						case "data-bucket":
							columns++
						}
					}
				case xml.CharData:
					chars.Write(e)
				}
			}
			assert.Equal(t, "http://www.w3.org/2000/svg svg", root)
			assert.Equal(t, 96, columns, "a day in columns of 15 minutes")
			assert.Positive(t, outcomes["paid-once"])
			assert.Positive(t, outcomes["paid-again"], "naive pays retries again")
			assert.Contains(t, chars.String(), tc.words)
		})
	}

	_, _, err = runCmd(t, "day", "replay", file, "--level", "ladder", "--svg", filepath.Join(dir, "x.svg"))
	assert.ErrorContains(t, err, "--svg draws one replay")
	_, _, err = runCmd(t, "day", "replay", file, "--svg", filepath.Join(dir, "x.svg"), "--lang", "fr")
	assert.ErrorContains(t, err, "--lang")
}

// cutTiming drops the first line of a tally, which says how long the
// replay took.
func cutTiming(s string) string {
	_, rest, _ := strings.Cut(s, "\n")
	return rest
}
