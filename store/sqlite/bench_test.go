package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"idemlab/engine"
	"idemlab/store/sqlite"
)

// The store's own benchmarks: what one call of each kind costs, through the
// engine (every level, a fresh key and a retry of it, on an in-memory
// database as the browser's lessons run it), on a file with 16 callers at
// once (group commit), and the reaper's sweep. Run them before and after a
// change to the store side by side, in one run, and compare the ratio: the
// machine's speed changes between runs.

const storeBenchBody = `{"from":"alice","to":"bob","amount":1}`

var storeBenchKeys atomic.Int64

func benchAccounts(b *testing.B, db *sqlite.DB) {
	b.Helper()
	ctx := context.Background()
	if _, err := db.PutAccount(ctx, "alice", 1<<50); err != nil {
		b.Fatal(err)
	}
	if _, err := db.PutAccount(ctx, "bob", 0); err != nil {
		b.Fatal(err)
	}
}

func transferRequest(key string) engine.Request {
	return engine.Request{Method: "POST", Path: "/transfers", Customer: "bench", HasCustomer: true,
		Key: []string{`"` + key + `"`}, Body: []byte(storeBenchBody), ContentType: "application/json"}
}

// BenchmarkEngineMemory is one transfer through the engine on an in-memory
// database, at every level: with a fresh key, and a retry of a key that
// was already answered (a look-up, and at some levels a recomputation).
func BenchmarkEngineMemory(b *testing.B) {
	for _, level := range []string{engine.LevelNaive, engine.LevelUnique, engine.LevelFingerprint,
		engine.LevelInProgress, engine.LevelReplay, engine.LevelScoped} {
		for _, retry := range []bool{false, true} {
			name := level + "/new-key"
			if retry {
				name = level + "/retry"
			}
			b.Run(name, func(b *testing.B) {
				db, err := sqlite.OpenMemory()
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				benchAccounts(b, db)
				eng := engine.New(db, engine.MustPreset(level), engine.Options{})
				ctx := context.Background()
				if retry {
					eng.Handle(ctx, transferRequest("retried"))
				}
				b.ReportAllocs()
				for b.Loop() {
					key := "retried"
					if !retry {
						key = fmt.Sprintf("m-%d", storeBenchKeys.Add(1))
					}
					res := eng.Handle(ctx, transferRequest(key))
					if res.Response.Status >= 500 {
						b.Fatalf("status %d: %s", res.Response.Status, res.Response.Body)
					}
				}
			})
		}
	}
}

// BenchmarkEngineFileParallel is scoped transfers with fresh keys from 16
// goroutines on a file database: the claims and the ledger share group
// commits.
func BenchmarkEngineFileParallel(b *testing.B) {
	if runtime.GOOS == "js" {
		b.Skip("needs a file database")
	}
	db, err := sqlite.OpenFile(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	benchAccounts(b, db)
	eng := engine.New(db, engine.MustPreset(engine.LevelScoped), engine.Options{})
	ctx := context.Background()
	b.SetParallelism(8) // 16 callers on 2 cores
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res := eng.Handle(ctx, transferRequest(fmt.Sprintf("f-%d", storeBenchKeys.Add(1))))
			if res.Response.Status != 201 {
				b.Errorf("status %d: %s", res.Response.Status, res.Response.Body)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkReap is the reaper's sweep over 2,000 keys of which half have
// expired, in steps of 500; each iteration puts back the keys it deleted.
func BenchmarkReap(b *testing.B) {
	db, err := sqlite.OpenMemory()
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	insert := func(i int) {
		rec := engine.KeyRecord{Scope: "s", Key: fmt.Sprintf("k%05d", i), Customer: "c", State: engine.StateCompleted, CreatedAt: 1}
		if i%2 == 0 {
			rec.ExpiresAt = 10
		}
		if _, err := db.InsertKey(ctx, engine.TableConstrained, engine.InsertPlain, rec); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 2000 {
		insert(i)
	}
	b.ReportAllocs()
	for b.Loop() {
		total := 0
		for {
			n, swept, err := db.Reap(ctx, 100, 500)
			if err != nil {
				b.Fatal(err)
			}
			total += n
			if swept {
				break
			}
		}
		if total != 1000 {
			b.Fatalf("reaped %d keys, want 1000", total)
		}
		b.StopTimer()
		for i := 0; i < 2000; i += 2 {
			insert(i)
		}
		b.StartTimer()
	}
}

// BenchmarkOpenMemory is opening and closing a fresh in-memory database:
// what every lesson, reset and sandbox change costs in the browser.
func BenchmarkOpenMemory(b *testing.B) {
	warm, err := sqlite.OpenMemory()
	if err != nil {
		b.Fatal(err)
	}
	warm.Close()
	for b.Loop() {
		db, err := sqlite.OpenMemory()
		if err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
}
