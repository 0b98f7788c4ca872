package jsrun_test

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"idemlab/lab/handlers"
	"idemlab/lab/jsrun"
)

// BenchmarkScopedTransfer measures one POST /transfers of the scoped
// reference handler over HTTP, a fresh key each time, with no payment
// delay: the cost lab serve adds (a runtime, the file run afresh, the
// event loop, ten statements) to what the handler asks SQLite to do.
func BenchmarkScopedTransfer(b *testing.B) {
	src, err := handlers.Source("scoped")
	require.NoError(b, err)
	h, err := jsrun.Load("scoped.js", src, jsrun.Options{DB: filepath.Join(b.TempDir(), "bank.db"), PayDelay: -1, Log: discard{}})
	require.NoError(b, err)
	srv := httptest.NewServer(h)
	defer func() { srv.Close(); h.Close() }()
	json := []string{"Content-Type", "application/json"}
	for _, acct := range []string{"alice", "bob"} {
		do(b, "PUT", srv.URL+"/accounts/"+acct, `{"balance": 1000000000000}`, json...)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		a := do(b, "POST", srv.URL+"/transfers", `{"from": "alice", "to": "bob", "amount": 1}`,
			"Content-Type", "application/json", "X-Customer-ID", "shop", "Idempotency-Key", fmt.Sprintf(`"k%d"`, i))
		if a.status != 201 {
			b.Fatalf("status %d: %s", a.status, strings.TrimSpace(a.body))
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkEmptyTransfer measures the floor under every POST /transfers:
// HTTP, a fresh runtime, the file run in it, one call and its answer, no
// statement.
func BenchmarkEmptyTransfer(b *testing.B) {
	h, err := jsrun.Load("empty.js", []byte(`async function transfer() { return lab.json(201, {}); }`),
		jsrun.Options{DB: filepath.Join(b.TempDir(), "bank.db"), Log: discard{}})
	require.NoError(b, err)
	srv := httptest.NewServer(h)
	defer func() { srv.Close(); h.Close() }()
	for b.Loop() {
		if a := do(b, "POST", srv.URL+"/transfers", ""); a.status != 201 {
			b.Fatalf("status %d: %s", a.status, a.body)
		}
	}
}
