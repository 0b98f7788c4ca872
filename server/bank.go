// Package server is idemlab's HTTP side: the bank API once per level, the
// health check, the playground's files and lessons, and the live classroom
// (package classroom), each mounted by New. It wires engine and httpapi
// over the stores it is handed (cmd/idemlab chooses them); it holds no
// engine logic and imports no store.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"idemlab/engine"
)

// Config configures a Server.
type Config struct {
	// Open opens a level's database. Required: cmd/idemlab chooses the
	// store (internal/stores: SQLite files named by LevelPath, in-memory
	// SQLite, or PostgreSQL schemas named by LevelSchema).
	Open func(level string) (BankDB, error)
	// PaymentLatency is the simulated payment-network call on the bank API.
	PaymentLatency time.Duration
	// Retention and Lease, when set, replace the scoped level's published
	// retention and lease (the lower levels keep their own).
	Retention, Lease time.Duration
	// Clock is injected by tests; the wall clock when nil.
	Clock engine.Clock
}

// Bank is one level of the bank API: its policy, its own database and its
// engine.
type Bank struct {
	Level  string
	Engine *engine.Engine
	DB     BankDB
}

// BankDB is a level's database: the engine's store, and what the bank's
// budget and the tests read of it. store/sqlite's DB and store/postgres's
// DB are BankDBs (internal/stores checks it at compile time).
type BankDB interface {
	engine.Store
	Usage(ctx context.Context) (engine.Usage, error)
	Snapshot(ctx context.Context) (engine.Snapshot, error)
	// Ping proves with the cheapest statement that the database answers
	// (/readyz).
	Ping(ctx context.Context) error
	Close() error
}

// OpenBanks opens one database and engine per level.
func OpenBanks(cfg Config) ([]*Bank, error) {
	if cfg.Open == nil {
		return nil, errors.New("server: no Config.Open to open the levels' databases with")
	}
	var banks []*Bank
	for _, level := range engine.Levels() {
		db, err := cfg.Open(level)
		if err != nil {
			CloseBanks(banks)
			return nil, fmt.Errorf("open level %s: %w", level, err)
		}
		p := engine.MustPreset(level)
		if level == engine.LevelScoped {
			if cfg.Retention > 0 {
				p.Retention = engine.Duration(cfg.Retention)
			}
			if cfg.Lease > 0 {
				p.Lease = engine.Duration(cfg.Lease)
			}
		}
		eng := engine.New(db, p, engine.Options{Clock: cfg.Clock, PaymentLatency: cfg.PaymentLatency})
		banks = append(banks, &Bank{Level: level, Engine: eng, DB: db})
	}
	return banks, nil
}

// CloseBanks closes every bank's database.
func CloseBanks(banks []*Bank) {
	for _, b := range banks {
		b.DB.Close()
	}
}

// ReapEvery deletes expired keys until ctx ends: every tick it sweeps each
// bank's key tables in steps of ReapBatch keys, each step a short
// transaction with the database free for requests in between, until the
// sweep has seen every key or ReapPerTick keys, when the next tick goes on
// from there.
func ReapEvery(ctx context.Context, banks []*Bank, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, b := range banks {
			ReapOnce(ctx, b, log)
		}
	}
}

// The reaper's pace: a step looks at ReapBatch keys; one tick looks at no
// more than ReapPerTick keys per bank.
const (
	ReapBatch   = 500
	ReapPerTick = 100_000
)

// ReapOnce is one tick of ReapEvery for one bank; it returns how many keys
// it deleted.
func ReapOnce(ctx context.Context, b *Bank, log *slog.Logger) int {
	now := b.Engine.Clock().Now().UnixMilli()
	total := 0
	for seen := 0; seen < ReapPerTick; seen += ReapBatch {
		n, swept, err := b.DB.Reap(ctx, now, ReapBatch)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("reap keys", "level", b.Level, "err", err)
			}
			break
		}
		total += n
		if swept {
			break
		}
	}
	return total
}
