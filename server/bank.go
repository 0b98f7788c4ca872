// Package server is idemlab's HTTP side: the bank API once per level, the
// health check, the playground's files and lessons, and the live classroom
// (server/classroom), each mounted by New. It wires engine, store and
// httpapi; it holds no engine logic.
package server

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"idemlab/engine"
	"idemlab/store/postgres"
	"idemlab/store/sqlite"
)

// Config configures a Server.
type Config struct {
	// DB is the SQLite file path. Each level keeps its own database beside
	// it: ./idemlab.db gives ./idemlab-naive.db … ./idemlab-scoped.db.
	// Empty means in-memory databases. A postgres:// URL names one
	// PostgreSQL database instead, shared by any number of servers, where
	// each level keeps its tables in a schema of its own (LevelSchema).
	DB string
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
// budget and the tests read of it. sqlite.DB (SQLite) and postgres.DB are
// BankDBs.
type BankDB interface {
	engine.Store
	Usage(ctx context.Context) (engine.Usage, error)
	Snapshot(ctx context.Context) (engine.Snapshot, error)
	Close() error
}

var (
	_ BankDB = (*sqlite.DB)(nil)
	_ BankDB = (*postgres.DB)(nil)
)

// LevelSchema is the PostgreSQL schema a level's tables live in:
// idemlab_naive … idemlab_scoped.
func LevelSchema(level string) string {
	return "idemlab_" + strings.ReplaceAll(level, "-", "_")
}

// openLevel opens a level's database as cfg.DB says.
func openLevel(cfg Config, level string) (BankDB, error) {
	switch {
	case cfg.DB == "":
		return sqlite.OpenMemory()
	case postgres.IsURL(cfg.DB):
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return postgres.Open(ctx, cfg.DB, LevelSchema(level))
	}
	return sqlite.OpenFile(LevelPath(cfg.DB, level))
}

// LevelPath returns the database file of a level for the configured path.
func LevelPath(db, level string) string {
	ext := filepath.Ext(db)
	return strings.TrimSuffix(db, ext) + "-" + level + ext
}

// OpenBanks opens one database and engine per level.
func OpenBanks(cfg Config) ([]*Bank, error) {
	var banks []*Bank
	for _, level := range engine.Levels {
		db, err := openLevel(cfg, level)
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
