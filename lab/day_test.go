package lab_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/lab"
)

func smallDay(seed int64) lab.DayParams {
	p := lab.DefaultDayParams()
	p.Seed, p.Customers, p.Intents = seed, 12, 300
	return p
}

func jsonl(t testing.TB, d lab.Day) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, d.WriteJSONL(&b))
	return b.Bytes()
}

func TestGenerateDayIsReproducibleFromItsSeed(t *testing.T) {
	a := jsonl(t, lab.GenerateDay(smallDay(7)))
	b := jsonl(t, lab.GenerateDay(smallDay(7)))
	c := jsonl(t, lab.GenerateDay(smallDay(8)))
	assert.Equal(t, a, b, "the same seed must give the same bytes")
	assert.NotEqual(t, a, c, "another seed must give another day")
}

func TestDayRoundTripsThroughJSONL(t *testing.T) {
	d := lab.GenerateDay(smallDay(3))
	got, err := lab.ReadDay(bytes.NewReader(jsonl(t, d)))
	require.NoError(t, err)
	assert.Equal(t, d, got)
}

// TestDayHasTheStoryItTells checks that a default-sized day contains every
// kind of trouble the lesson talks about, each one well-formed.
func TestDayHasTheStoryItTells(t *testing.T) {
	d := lab.GenerateDay(lab.DefaultDayParams())
	losses, policies := map[string]int{}, map[string]int{}
	overlaps, corrections, restyled, late, seqKeys := 0, 0, 0, 0, 0
	firstAt := map[string]int64{}
	styleOf := map[string]string{}
	lanes := map[string]bool{}
	for i, a := range d.Attempts {
		require.False(t, lanes[a.Lane], "lane %s twice", a.Lane)
		lanes[a.Lane] = true
		if i > 0 {
			require.LessOrEqual(t, d.Attempts[i-1].AtMS, a.AtMS, "attempts are in time order")
		}
		losses[a.Loss]++
		policies[a.Policy]++
		if a.Overlaps != "" {
			overlaps++
			assert.True(t, lanes[a.Overlaps], "%s overlaps a lane sent before it", a.Lane)
		}
		if a.Correction {
			corrections++
		}
		if s, ok := styleOf[a.Intent]; ok && s != a.Style {
			restyled++
		}
		styleOf[a.Intent] = a.Style
		if at, ok := firstAt[a.Intent]; ok {
			assert.LessOrEqual(t, a.AtMS-at, int64(d.Params.RetryHorizonSeconds)*1000, "%s retries past the horizon", a.Lane)
			if a.AtMS-at > 5*60*1000 {
				late++
			}
		} else {
			firstAt[a.Intent] = a.AtMS
		}
		if strings.Contains(a.Key, "order-") {
			seqKeys++
		}
		body, p := engine.ParseTransfer([]byte(a.Body))
		require.Nil(t, p, "%s: %s", a.Lane, a.Body)
		assert.Equal(t, engine.TransferBody{From: a.From, To: a.To, Amount: a.Amount}, body)
		assert.Equal(t, lab.RenderBody(a.Style, a.From, a.To, a.Amount), a.Body)
	}
	for _, l := range []string{lab.LossNone, lab.LossGatewayTimeout, lab.LossLBCut, lab.LossBasement} {
		assert.Positive(t, losses[l], "loss %s", l)
	}
	for _, p := range []string{lab.PolicyNone, lab.PolicyFixed, lab.PolicyBackoff, lab.PolicyImpatientSameKey, lab.PolicyImpatientNewKey} {
		assert.Positive(t, policies[p], "policy %s", p)
	}
	assert.Positive(t, overlaps, "retries that overlap the original")
	assert.Positive(t, corrections, "teller corrections")
	assert.Positive(t, restyled, "retries written in another JSON style")
	assert.Positive(t, late, "retries later than a 5-minute retention")
	assert.Positive(t, seqKeys, "keys from a counter, which collide across customers")
	assert.Greater(t, len(d.Attempts), len(d.Intents))
}

func TestReadDayRefusesBrokenFiles(t *testing.T) {
	good := string(jsonl(t, lab.GenerateDay(lab.DayParams{Seed: 1, Customers: 2, Intents: 3})))
	lines := strings.Split(strings.TrimSpace(good), "\n")
	last := lines[len(lines)-1]
	for name, text := range map[string]string{
		"empty":          "",
		"not json":       "hello\n",
		"unknown kind":   `{"kind":"nap"}` + "\n",
		"unknown field":  strings.Replace(good, `"kind":"params"`, `"kind":"params","x":1`, 1),
		"no params":      strings.Join(lines[1:], "\n"),
		"orphan attempt": lines[0] + "\n" + last + "\n",
		"duplicate lane": good + last + "\n",
		"out of order":   strings.Join(swapLast(lines), "\n"),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := lab.ReadDay(strings.NewReader(text))
			assert.Error(t, err)
		})
	}
}

func TestDayParamsValidate(t *testing.T) {
	assert.NoError(t, lab.DefaultDayParams().Validate())
	for name, f := range map[string]func(*lab.DayParams){
		"one customer":  func(p *lab.DayParams) { p.Customers = 1 },
		"no intents":    func(p *lab.DayParams) { p.Intents = 0 },
		"too many":      func(p *lab.DayParams) { p.Intents = lab.MaxDayIntents + 1 },
		"loss over one": func(p *lab.DayParams) { p.LossRate = 1.5 },
		"bad prefix":    func(p *lab.DayParams) { p.Prefix = "a b" },
		"empty mix":     func(p *lab.DayParams) { p.Mix = lab.RetryMix{} },
		"short horizon": func(p *lab.DayParams) { p.RetryHorizonSeconds = 5 },
		"negative rate": func(p *lab.DayParams) { p.TellerRate = -0.1 },
	} {
		t.Run(name, func(t *testing.T) {
			p := lab.DefaultDayParams()
			f(&p)
			assert.Error(t, p.Validate())
		})
	}
}

// swapLast swaps the last attempt with the first attempt sent earlier.
func swapLast(lines []string) []string {
	out := append([]string(nil), lines...)
	n := len(out) - 1
	for i := n - 1; i > 0; i-- {
		if strings.Contains(out[i], `"kind":"attempt"`) && at(out[i]) < at(out[n]) {
			out[i], out[n] = out[n], out[i]
			return out
		}
	}
	panic("no earlier attempt to swap with")
}

func at(line string) string {
	i := strings.Index(line, `"at_ms":`)
	j := strings.Index(line[i:], ",")
	return fmt.Sprintf("%012s", line[i+8:i+j])
}

func TestDayWithPrefixRenamesEverything(t *testing.T) {
	d := lab.GenerateDay(smallDay(5))
	p := d.WithPrefix("run7-")
	require.Len(t, p.Attempts, len(d.Attempts))
	for i, a := range p.Attempts {
		assert.True(t, strings.HasPrefix(a.Lane, "run7-") && strings.HasPrefix(a.Key, "run7-") &&
			strings.HasPrefix(a.Customer, "run7-") && strings.HasPrefix(a.Intent, "run7-"), a.Lane)
		body, prob := engine.ParseTransfer([]byte(a.Body))
		require.Nil(t, prob)
		assert.Equal(t, engine.TransferBody{From: a.From, To: a.To, Amount: a.Amount}, body)
		assert.Equal(t, "run7-"+d.Attempts[i].From, body.From)
		assert.Equal(t, d.Attempts[i].Style, a.Style)
	}
	for _, a := range p.Accounts {
		assert.True(t, strings.HasPrefix(a.ID, "run7-"))
	}
	assert.Equal(t, d, lab.GenerateDay(smallDay(5)), "the original is untouched")
}

func TestGenerateDayOfSize(t *testing.T) {
	p := lab.DefaultDayParams()
	p.Customers = 20
	d := lab.GenerateDayOfSize(p, 3000)
	assert.GreaterOrEqual(t, len(d.Attempts), 3000)
	assert.Less(t, len(d.Attempts), 3100, "not many more than asked")
	assert.Equal(t, d, lab.GenerateDayOfSize(p, 3000), "reproducible")
}
