package handlers_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/lab/handlers"
)

// TestEveryHandlerChecksInTheContractsOrder sends every shipped handler
// requests with one fault or two, and holds it to the contract's order:
// 401 (customer), 400 (key), 415 (Content-Type), 400 (body), all before
// anything is claimed. naive keeps no key, so it never refuses one.
func TestEveryHandlerChecksInTheContractsOrder(t *testing.T) {
	const body = `{"from": "alice", "to": "bob", "amount": 5}`
	cases := []struct {
		name                       string
		customer, key, ctype, body string
		status                     int
		naive                      int // what naive, which ignores the key, answers instead (0: the same)
	}{
		{"no customer", "", `"k1"`, "application/json", body, 401, 0},
		{"no customer and a bare key", "", `k1`, "application/json", body, 401, 0},
		{"a bare key", "shop", `k1`, "application/json", body, 400, 404},
		{"no key", "shop", "", "application/json", body, 400, 404},
		{"a list of keys", "shop", `"a", "b"`, "application/json", body, 400, 404},
		{"a bare key and text", "shop", `k1`, "text/plain", body, 400, 415},
		{"text", "shop", `"k2"`, "text/plain", body, 415, 0},
		{"text and a bad body", "shop", `"k3"`, "text/plain", "{", 415, 0},
		{"a bad body", "shop", `"k4"`, "application/json", "{", 400, 0},
		{"a string amount", "shop", `"k5"`, "application/json; charset=utf-8", `{"from": "alice", "to": "bob", "amount": "5"}`, 400, 0},
		{"from is to", "shop", `"k6"`, "", `{"from": "alice", "to": "alice", "amount": 5}`, 400, 0},
		{"a +json Content-Type", "shop", `"k7"`, "application/merge-patch+json", body, 404, 0},
	}
	for _, name := range handlers.Names() {
		t.Run(name, func(t *testing.T) {
			s := serve(t, name)
			for _, c := range cases {
				req, err := http.NewRequest("POST", s.base+"/transfers", strings.NewReader(c.body))
				require.NoError(t, err)
				for h, v := range map[string]string{"X-Customer-ID": c.customer, "Idempotency-Key": c.key, "Content-Type": c.ctype} {
					if v != "" {
						req.Header.Set(h, v)
					}
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				want := c.status
				if c.naive != 0 && name == "naive" {
					want = c.naive // the accounts do not exist
				}
				assert.Equal(t, want, resp.StatusCode, "%s: %s", c.name, b)
			}
		})
	}
}
