package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
)

// lessonSpecs reads the scenarios with lanes from every lesson's markdown
// (the lessons package imports this one, so its loader is out of reach).
func lessonSpecs(t *testing.T) map[string]Spec {
	t.Helper()
	files, err := filepath.Glob("../../lessons/*/*.md")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	specs := map[string]Spec{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for i, block := range strings.Split(string(src), "```scenario\n")[1:] {
			body, _, ok := strings.Cut(block, "\n```")
			require.True(t, ok, "%s: scenario %d is not closed", f, i)
			spec, err := Parse([]byte(body))
			require.NoError(t, err, "%s: scenario %d", f, i)
			if len(spec.Lanes) > 0 {
				specs[f+"#"+spec.ID] = spec
			}
		}
	}
	return specs
}

// TestFirstStateNeedsNoDatabase holds a session's first state, which the
// page gets before its database is open (newUnopenedWorld, openLater), to
// the state the open database gives, byte for byte: for every lesson's
// scenario under its own policy and under each claim, and for accounts
// whose names sort by byte: case, digits and punctuation.
func TestFirstStateNeedsNoDatabase(t *testing.T) {
	specs := lessonSpecs(t)
	odd, err := Parse([]byte(`{"id": "odd", "level": "unique", "servers": 2,
	  "accounts": {"b": 1, "B": 2, "Z": 4, "a-1": 5, "a.b": 7, "a_b": 8, "a": 0, "9": 6},
	  "lanes": [{"id": "A1", "intent": "i", "customer": "c", "key": "k", "body": {"from": "a", "to": "b", "amount": 10}}]}`))
	require.NoError(t, err)
	specs["odd"] = odd
	claims := engine.KnobValues()["claim"]
	for name, spec := range specs {
		base, err := spec.BasePolicy()
		require.NoError(t, err, name)
		policies := map[string]engine.Policy{"own": base}
		for _, c := range claims {
			policies[c], err = ApplyPolicy(base, []byte(`{"claim": "`+c+`"}`))
			require.NoError(t, err, c)
		}
		for pname, p := range policies {
			later := newUnopenedWorld(spec, p, Memory)
			first := stateJSON(t, later.state(0))
			require.False(t, later.isOpen())
			require.NoError(t, later.open())
			assert.Equal(t, first, stateJSON(t, later.state(0)), "%s under %s", name, pname)
			later.close()

			now, err := newWorld(spec, p, Memory)
			require.NoError(t, err)
			assert.Equal(t, first, stateJSON(t, now.state(0)), "%s under %s", name, pname)
			now.close()
		}
	}
}
