// Package server is idemlab's HTTP side: the bank API once per level, the
// health check and, in time, the playground's static files and the
// classroom. It wires engine, store and httpapi; it holds no engine logic.
package server

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"idemlab/engine"
	"idemlab/store"
)

// Config configures a Server.
type Config struct {
	// DB is the SQLite file path. Each level keeps its own database beside
	// it: ./idemlab.db gives ./idemlab-naive.db … ./idemlab-scoped.db.
	// Empty means in-memory databases.
	DB string
	// PaymentLatency is the simulated payment-network call on the bank API.
	PaymentLatency time.Duration
	// Retention and Lease, when set, replace the scoped level's published
	// retention and lease (the lower levels keep their own).
	Retention, Lease time.Duration
	// Clock is injected by tests; the wall clock when nil.
	Clock  engine.Clock
	Logger *slog.Logger
}

// Bank is one level of the bank API: its policy, its own database and its
// engine.
type Bank struct {
	Level  string
	Engine *engine.Engine
	DB     *store.DB
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
		var (
			db  *store.DB
			err error
		)
		if cfg.DB == "" {
			db, err = store.OpenMemory()
		} else {
			db, err = store.OpenFile(LevelPath(cfg.DB, level))
		}
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

// ReapEvery deletes expired keys in batches until ctx ends.
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
			now := b.Engine.Clock().Now().UnixMilli()
			for {
				n, err := b.DB.Reap(ctx, now, 500)
				if err != nil {
					log.Warn("reap keys", "level", b.Level, "err", err)
					break
				}
				if n < 500 {
					break
				}
			}
		}
	}
}
