package web_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTilesSayOneInTheSingular: the room's tiles name a count of one in
// the singular ("1 replay", not "1 replays"), any other count in the
// plural, and Korean, which has one form, alike.
func TestTilesSayOneInTheSingular(t *testing.T) {
	var got map[string][]string
	runInNode(t, "the tiles' words are", `
globalThis.localStorage = { getItem: () => null, setItem: () => {} };
const out = {};
for (const lang of ['en', 'ko']) {
  globalThis.location = { search: '?lang=' + lang };
  const { tileWord } = await import('./classroom/words.js?' + lang);
  out[lang] = [0, 1, 2].flatMap((n) => ['tile_replays', 'tile_lost', 'tile_transfers', 'tile_liveDup'].map((k) => n + ' ' + tileWord(k, n)));
}
process.stdout.write(JSON.stringify(out));
`, []string{"classroom/words.js"}, []string{}, &got)
	assert.Equal(t, []string{
		"0 replays", "0 lost answers", "0 transfers", "0 extra transfers so far",
		"1 replay", "1 lost answer", "1 transfer", "1 extra transfer so far",
		"2 replays", "2 lost answers", "2 transfers", "2 extra transfers so far",
	}, got["en"])
	assert.Equal(t, []string{
		"0 재생", "0 잃은 응답", "0 송금", "0 지금까지 추가 송금",
		"1 재생", "1 잃은 응답", "1 송금", "1 지금까지 추가 송금",
		"2 재생", "2 잃은 응답", "2 송금", "2 지금까지 추가 송금",
	}, got["ko"])
}
