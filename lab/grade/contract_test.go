package grade_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/docs"
	"idemlab/engine"
	"idemlab/internal/stores"
	"idemlab/lab/grade"
	"idemlab/server"
)

// slowBank serves idemlab's levels with a payment call long enough that
// a retry sent meanwhile surely arrives while the first is still running.
func slowBank(t *testing.T, latency time.Duration) string {
	t.Helper()
	banks, err := stores.OpenBanks("", server.Config{PaymentLatency: latency})
	require.NoError(t, err)
	t.Cleanup(func() { server.CloseBanks(banks) })
	h, err := server.New(banks, stores.Options(server.Options{}))
	require.NoError(t, err)
	t.Cleanup(h.Close)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

type answer struct {
	status int
	body   []byte
}

func send(t *testing.T, method, url string, headers map[string]string, body string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range headers {
		req.Header[http.CanonicalHeaderKey(k)] = []string{v}
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{resp.StatusCode, b}
}

func balanceOf(t *testing.T, base, id string) int64 {
	t.Helper()
	a := send(t, "GET", base+"/accounts/"+id, nil, "")
	require.Equal(t, 200, a.status, "%s", a.body)
	var acct struct{ Balance int64 }
	require.NoError(t, json.Unmarshal(a.body, &acct))
	return acct.Balance
}

// The answers a rung gives a request under a used key, as the contract's
// table names them.
const (
	newTransfer = "a new transfer"
	generic     = "already processed"
	inProgress  = "409"
	mismatch    = "422"
	firstAnswer = "the first answer"
)

// rungTable reads the contract's table of what every rung answers: level →
// the three cells, each classified by the one marker it contains.
func rungTable(t *testing.T) map[string][3]string {
	t.Helper()
	doc := string(docs.Contract)
	i := strings.Index(doc, "### What every rung answers")
	require.GreaterOrEqual(t, i, 0, "the contract has the table")
	rows := map[string][3]string{}
	row := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\|(.*)\\|\\s*$")
	for _, m := range row.FindAllStringSubmatch(doc[i:strings.Index(doc[i+4:], "\n### ")+i+4], -1) {
		cells := strings.Split(m[2], "|")
		require.Len(t, cells, 3, "row %s", m[1])
		var got [3]string
		for j, c := range cells {
			var found []string
			for _, marker := range []string{newTransfer, generic, inProgress, mismatch, firstAnswer} {
				if strings.Contains(c, marker) {
					found = append(found, marker)
				}
			}
			require.Len(t, found, 1, "cell %d of %s names exactly one answer: %q", j, m[1], c)
			got[j] = found[0]
		}
		rows[m[1]] = got
	}
	return rows
}

// TestContractRungTable sends each rung of idemlab's own server the three
// requests the contract's table is about, and checks that the table says
// what the engine answers.
func TestContractRungTable(t *testing.T) {
	table := rungTable(t)
	require.Len(t, table, len(engine.Levels()))
	base := slowBank(t, 300*time.Millisecond)
	for _, level := range engine.Levels() {
		t.Run(level, func(t *testing.T) {
			bank := base + "/bank/" + level
			observed := [3]string{}
			for n, story := range []string{"completed", "running", "different"} {
				payer, payee := fmt.Sprintf("%s-%s-payer", level, story), fmt.Sprintf("%s-%s-payee", level, story)
				require.Equal(t, 200, send(t, "PUT", bank+"/accounts/"+payer, nil, `{"balance":1000000}`).status)
				require.Equal(t, 200, send(t, "PUT", bank+"/accounts/"+payee, nil, `{"balance":0}`).status)
				h := map[string]string{"Content-Type": "application/json", "X-Customer-ID": "c1", "Idempotency-Key": `"` + level + story + `"`}
				body := fmt.Sprintf(`{"from":%q,"to":%q,"amount":1000}`, payer, payee)
				retryBody := body
				if story == "different" {
					retryBody = fmt.Sprintf(`{"from":%q,"to":%q,"amount":2000}`, payer, payee)
				}
				var first, retry answer
				if story == "running" {
					var wg sync.WaitGroup
					wg.Add(1)
					go func() { defer wg.Done(); first = send(t, "POST", bank+"/transfers", h, body) }()
					time.Sleep(100 * time.Millisecond) // the first is paying for 300 ms
					retry = send(t, "POST", bank+"/transfers", h, retryBody)
					wg.Wait()
				} else {
					first = send(t, "POST", bank+"/transfers", h, body)
					retry = send(t, "POST", bank+"/transfers", h, retryBody)
				}
				require.Equal(t, 201, first.status, "%s", first.body)
				paid := balanceOf(t, bank, payee)
				switch {
				case paid > 1000:
					observed[n] = newTransfer
				case retry.status == 409:
					observed[n] = inProgress
				case retry.status == 422:
					observed[n] = mismatch
				case retry.status == first.status && bytes.Equal(retry.body, first.body):
					observed[n] = firstAnswer
				case bytes.Contains(retry.body, []byte("already_processed")):
					observed[n] = generic
				default:
					t.Fatalf("%s: an answer the table has no word for: %d %s", story, retry.status, retry.body)
				}
			}
			assert.Equal(t, table[level], observed, "the contract's row for %s (completed retry, simultaneous retry, another body)", level)
		})
	}
}

// TestContractErrorOrder holds idemlab's own endpoint to what the contract
// says of faulty requests: which answer comes first when a request has
// several faults, an empty X-Customer-ID, a body over the limit, a bad
// PUT /accounts; and that none of them claims the key.
func TestContractErrorOrder(t *testing.T) {
	bank := bankServer(t) + "/bank/" + engine.LevelScoped
	require.Equal(t, 200, send(t, "PUT", bank+"/accounts/order-payer", nil, `{"balance":1000000}`).status)
	require.Equal(t, 200, send(t, "PUT", bank+"/accounts/order-payee", nil, `{"balance":0}`).status)
	valid := `{"from":"order-payer","to":"order-payee","amount":1000}`
	huge := `{"from":"order-payer","to":"order-payee","amount":1000,"pad":"` + strings.Repeat("x", 64<<10) + `"}`
	const key = `"order-k"`
	for _, c := range []struct {
		name    string
		headers map[string]string
		body    string
		status  int
	}{
		{"413 before 401", map[string]string{"Idempotency-Key": "bare"}, huge, 413},
		{"an empty customer is a missing one", map[string]string{"X-Customer-ID": "", "Idempotency-Key": key, "Content-Type": "application/json"}, valid, 401},
		{"401 before the key's 400", map[string]string{"Idempotency-Key": "bare", "Content-Type": "text/plain"}, "{", 401},
		{"the key's 400 before 415", map[string]string{"X-Customer-ID": "c1", "Idempotency-Key": "bare", "Content-Type": "text/plain"}, "{", 400},
		{"415 before the body's 400", map[string]string{"X-Customer-ID": "c1", "Idempotency-Key": key, "Content-Type": "text/plain"}, "{", 415},
		{"the body's 400", map[string]string{"X-Customer-ID": "c1", "Idempotency-Key": key, "Content-Type": "application/json"}, `{"from":"order-payer","to":"order-payer","amount":1000}`, 400},
		{"no Content-Type is accepted", map[string]string{"X-Customer-ID": "c1", "Idempotency-Key": `"order-other"`}, valid, 201},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := send(t, "POST", bank+"/transfers", c.headers, c.body)
			assert.Equal(t, c.status, a.status, "%s", a.body)
		})
	}
	// None of the refusals above claimed "order-k": the repaired request
	// under it is a new request, and pays.
	a := send(t, "POST", bank+"/transfers", map[string]string{"X-Customer-ID": "c1", "Idempotency-Key": key, "Content-Type": "application/json"}, valid)
	assert.Equal(t, 201, a.status, "%s", a.body)
	assert.Equal(t, int64(2000), balanceOf(t, bank, "order-payee"))

	for _, c := range []struct{ name, path, body string }{
		{"bad id", "/accounts/al'ice", `{"balance":1}`},
		{"negative", "/accounts/order-payee", `{"balance":-1}`},
		{"a string", "/accounts/order-payee", `{"balance":"1"}`},
		{"a fraction", "/accounts/order-payee", `{"balance":1.5}`},
		{"missing", "/accounts/order-payee", `{}`},
		{"another field", "/accounts/order-payee", `{"balance":1,"owner":"x"}`},
		{"not JSON", "/accounts/order-payee", `balance=1`},
	} {
		t.Run("PUT "+c.name, func(t *testing.T) {
			a := send(t, "PUT", bank+c.path, map[string]string{"Content-Type": "application/json"}, c.body)
			assert.Equal(t, 400, a.status, "%s", a.body)
		})
	}
	assert.Equal(t, int64(2000), balanceOf(t, bank, "order-payee"), "a bad PUT leaves the account as it was")
	assert.Equal(t, 200, send(t, "PUT", bank+"/accounts/order-zero", nil, `{"balance":0}`).status, "0 is a balance")
}

// TestContractDayCountIsTrue: the day check's line and the tally name the
// same number of intents; the number asked for is the wishes.
func TestContractDayCountIsTrue(t *testing.T) {
	o := gradeOpts()
	rep, err := grade.Grade(context.Background(), bankServer(t)+"/bank/scoped", o)
	require.NoError(t, err)
	require.NotNil(t, rep.Day)
	day, ok := rep.Check("day")
	require.True(t, ok)
	require.Greater(t, rep.Day.Intents, o.Day.Intents, "seed 99 has new-key presses, each an intent of its own")
	assert.Contains(t, day.Title, fmt.Sprintf("a day of %d intents (%d wishes and their new-key presses)", rep.Day.Intents, o.Day.Intents))
	var b strings.Builder
	require.NoError(t, rep.WriteText(&b))
	assert.Contains(t, b.String(), fmt.Sprintf("The day: %d intents,", rep.Day.Intents))
}
