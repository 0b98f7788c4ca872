package lessons_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/lab/scenario"
)

// playFunc plays one of a lesson's scenarios to its end, under its own
// policy or under p when p is not nil.
type playFunc func(t *testing.T, id string, p *engine.Policy) scenario.State

// inEveryLanguage runs check once per language lesson id is written in,
// as a subtest named for the language, with the lesson's scenarios by id
// and a way to play them; the lesson must be written in English and
// Korean.
func inEveryLanguage(t *testing.T, id string, check func(t *testing.T, specs map[string]scenario.Spec, play playFunc)) {
	t.Helper()
	langs := 0
	for _, l := range load(t).All() {
		if l.ID != id {
			continue
		}
		langs++
		t.Run(l.Lang, func(t *testing.T) {
			specs := map[string]scenario.Spec{}
			for _, s := range l.Scenarios {
				specs[s.ID] = s
			}
			play := func(t *testing.T, id string, p *engine.Policy) scenario.State {
				t.Helper()
				spec, ok := specs[id]
				require.True(t, ok, "scenario %s", id)
				pol, err := spec.BasePolicy()
				require.NoError(t, err)
				if p != nil {
					pol = *p
				}
				s, err := scenario.New(spec, pol, memory)
				require.NoError(t, err)
				t.Cleanup(s.Close)
				st, err := s.Run()
				require.NoError(t, err)
				require.True(t, st.Done)
				return st
			}
			check(t, specs, play)
		})
	}
	assert.Equal(t, 2, langs, "lesson %s is written in English and Korean", id)
}
