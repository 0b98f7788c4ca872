package postgres_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"idemlab/engine"
	"idemlab/internal/pgtest"
	"idemlab/store/postgres"
)

func openCounted(t testing.TB, url string) (*postgres.DB, *pgtest.RoundTrips) {
	t.Helper()
	rt := &pgtest.RoundTrips{}
	db, err := postgres.OpenWith(context.Background(), url, fmt.Sprintf("s%d", schemaSeq.Add(1)),
		postgres.Options{Configure: func(c *pgxpool.Config) { c.ConnConfig.Tracer = rt }})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db, rt
}

func scopedTransfer(key, body string) engine.Request {
	return engine.Request{Method: "POST", Path: "/transfers", Customer: "c1", HasCustomer: true,
		Key: []string{`"` + key + `"`}, Body: []byte(body), ContentType: "application/json"}
}

// A transfer with a fresh key at scoped costs three round trips, the claim,
// the payment processor's charge (committed apart from the ledger, as a
// foreign party's is) and the ledger's one statement, from the
// connection's first transfer on;
// its retry costs two as well, the claim that fails with 23505 and the
// read of the stored answer; and the claim after a duplicate costs no
// more than any other.
func TestRoundTripsPerTransfer(t *testing.T) {
	db, rt := openCounted(t, pgtest.URL(t))
	ctx := context.Background()
	for id, bal := range map[string]int64{"alice": 1000, "bob": 0} {
		_, err := db.PutAccount(ctx, id, bal)
		require.NoError(t, err)
	}
	eng := engine.New(db, engine.MustPreset(engine.LevelScoped), engine.Options{})
	const body = `{"from":"alice","to":"bob","amount":1}`
	cases := []struct {
		name   string
		key    string
		status int
		trips  int64
	}{
		{"first transfer on the connection", "k-1", 201, 3},
		{"another fresh key", "k-2", 201, 3},
		{"retry of a completed key", "k-1", 201, 2},
		{"fresh key after a duplicate", "k-3", 201, 3},
		{"retry again", "k-3", 201, 2},
		{"and a fresh key", "k-4", 201, 3},
	}
	for _, c := range cases {
		before := rt.N.Load()
		r := eng.Handle(ctx, scopedTransfer(c.key, body))
		require.Equal(t, c.status, r.Response.Status, "%s", r.Response.Body)
		if c.trips >= 0 {
			assert.Equal(t, c.trips, rt.N.Load()-before, c.name)
		}
	}
}

// The answer ledger_transfer stores is byte for byte the one the client
// got, transfer ids past six digits included, and a retry replays it.
func TestStoredAnswerIsTheAnswerGiven(t *testing.T) {
	db := open(t, pgtest.URL(t))
	ctx := context.Background()
	for id, bal := range map[string]int64{"alice": 1_000_000, "bob": 0} {
		_, err := db.PutAccount(ctx, id, bal)
		require.NoError(t, err)
	}
	_, err := db.Pool().Exec(ctx, "SELECT setval(pg_get_serial_sequence('transfers', 'id'), 999998)")
	require.NoError(t, err)
	eng := engine.New(db, engine.MustPreset(engine.LevelScoped), engine.Options{})
	for i, want := range []string{"tr_999999", "tr_1000000", "tr_1000001"} {
		key := "k-" + strconv.Itoa(i)
		first := eng.Handle(ctx, scopedTransfer(key, `{"from":"alice","to":"bob","amount":7}`))
		require.Equal(t, 201, first.Response.Status, "%s", first.Response.Body)
		assert.Contains(t, string(first.Response.Body), `"transfer_id":"`+want+`"`)
		assert.Contains(t, string(first.Response.Body), fmt.Sprintf(`"balance_after":%d`, 1_000_000-7*(i+1)))
		look, err := db.LookupKey(ctx, engine.TableConstrained, "c1 POST "+engine.TransfersRoute, key)
		rec := look.Record
		require.NoError(t, err)
		require.NotNil(t, rec.Response)
		assert.Equal(t, want, rec.TransferID)
		assert.Equal(t, string(first.Response.Body), string(rec.Response.Body))
		assert.Equal(t, first.Response.Header, rec.Response.Header)
		again := eng.Handle(ctx, scopedTransfer(key, `{"from":"alice","to":"bob","amount":7}`))
		assert.True(t, again.Replayed)
		assert.Equal(t, string(first.Response.Body), string(again.Response.Body))
	}
	assert.Equal(t, engine.TransferID(1000001), "tr_1000001", "ledger_transfer writes ids as engine.TransferID does")
}

// Responses that ledger_transfer cannot fill in ahead (a value written in
// a way the two sample renderings do not reveal, or in a header) and
// declined transfers take the ledger in steps; what is stored is still
// exactly what the render made of the outcome.
func TestAnswersRenderedFromTheLedger(t *testing.T) {
	renders := map[string]func(engine.TransferResult) engine.Response{
		"balance in hex": func(r engine.TransferResult) engine.Response {
			return engine.Response{Status: 201, Body: []byte(strconv.FormatInt(r.Transfer.BalanceAfter, 16) + " " + r.Transfer.ID)}
		},
		"id in a header": func(r engine.TransferResult) engine.Response {
			return engine.Response{Status: 201, Header: []engine.Header{{Name: "Location", Value: "/transfers/" + r.Transfer.ID}}, Body: []byte("{}")}
		},
		"outcome in the status": func(r engine.TransferResult) engine.Response {
			return engine.Response{Status: 201 + int(r.Outcome), Body: []byte(fmt.Sprint(r.Outcome, r.Missing, r.Balance, r.Transfer.BalanceAfter))}
		},
	}
	url := pgtest.URL(t)
	ctx := context.Background()
	for name, render := range renders {
		t.Run(name, func(t *testing.T) {
			db := open(t, url)
			for id, bal := range map[string]int64{"a": 100, "b": 0} {
				_, err := db.PutAccount(ctx, id, bal)
				require.NoError(t, err)
			}
			for i, c := range []struct {
				from, to string
				amount   int64
				outcome  engine.TransferOutcome
			}{
				{"a", "b", 30, engine.TransferDone},
				{"a", "b", 500, engine.TransferInsufficientFunds},
				{"a", "nobody", 1, engine.TransferUnknownAccount},
				{"nobody", "b", 1, engine.TransferUnknownAccount},
			} {
				key := fmt.Sprintf("k-%d", i)
				_, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, engine.KeyRecord{
					Scope: "s", Key: key, Customer: "c1", State: engine.StateInProgress, Owner: "o", CreatedAt: 1})
				require.NoError(t, err)
				res, err := db.Transfer(ctx, engine.TransferArgs{From: c.from, To: c.to, Amount: c.amount, At: 5,
					Complete: &engine.Completion{Table: engine.TableConstrained, Scope: "s", Key: key, Owner: "o", Render: render}})
				require.NoError(t, err)
				require.True(t, res.Completed)
				assert.Equal(t, c.outcome, res.Outcome)
				look, err := db.LookupKey(ctx, engine.TableConstrained, "s", key)
				rec := look.Record
				require.NoError(t, err)
				require.NotNil(t, rec.Response)
				assert.Equal(t, engine.StateCompleted, rec.State)
				want := render(res)
				assert.Equal(t, want.Status, rec.Response.Status)
				assert.Equal(t, want.Header, rec.Response.Header)
				assert.Equal(t, string(want.Body), string(rec.Response.Body))
				assert.Equal(t, string(want.Body), string(res.Response.Body))
			}
			a, err := db.GetAccount(ctx, "a")
			require.NoError(t, err)
			assert.Equal(t, int64(70), a.Balance, "only the first transfer moved money")
		})
	}
}
