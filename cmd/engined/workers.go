package main

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/internal/worker"
	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/outbox"
)

// The ledger is the relay's sink.
var _ outbox.Sink = (*ledger.Ledger)(nil)

// runWorkers runs the background work of a daemon until ctx is done: the
// hold-expiry sweeper and the transfer recovery worker always, and the
// outbox relay into PostgreSQL when a ledger is configured (--pg). Several
// daemons may run the sweeper and the recovery worker at once: each step
// they take is idempotent. PostgreSQL may not be up yet: the relay waits
// for it, and the events wait in Redis meanwhile. With a ledger, each
// --webhook gets the ledger's feed (webhooks.go). reg, if not nil, gets the
// workers' figures as metrics.
func runWorkers(ctx context.Context, cfg *Config, rdb redis.UniversalClient, eng *engine.Engine, log *slog.Logger, reg prometheus.Registerer) {
	sweeper := engine.NewSweeper(eng, &engine.SweeperOptions{Logger: log})
	var wg sync.WaitGroup
	wg.Go(func() { _ = sweeper.Run(ctx) })
	register(reg, "atomledger_sweeper_released_total", "Expired holds released by the sweeper.", true,
		func() int64 { return sweeper.Stats().Released })
	register(reg, "atomledger_sweeper_errors_total", "Failed sweeps or releases, retried.", true,
		func() int64 { return sweeper.Stats().Errors })
	recovery := engine.NewRecovery(eng, &engine.RecoveryOptions{Logger: log})
	wg.Go(func() { _ = recovery.Run(ctx) })
	register(reg, "atomledger_transfer_recovery_passes_total", "Passes of the transfer recovery worker.", true,
		func() int64 { return recovery.Stats().Passes })
	register(reg, "atomledger_transfer_recovery_aborted_total", "Transfers aborted for want of a decision within --transfer-timeout.", true,
		func() int64 { return recovery.Stats().Aborted })
	register(reg, "atomledger_transfer_recovery_finished_total", "Transfers whose parts the recovery worker finished.", true,
		func() int64 { return recovery.Stats().Finished })
	register(reg, "atomledger_transfer_recovery_errors_total", "Transfers or recovery passes that failed, retried.", true,
		func() int64 { return recovery.Stats().Errors })
	register(reg, "atomledger_transfer_recovery_stuck_parts_total", "Committed transfer parts found with no transfer hold to consume, left unfinished for an operator.", true,
		func() int64 { return recovery.Stats().Stuck })
	if cfg.HotSweep > 0 {
		hot := engine.NewHotSweeper(eng, cfg.HotSweep, log)
		wg.Go(func() { _ = hot.Run(ctx) })
		register(reg, "atomledger_hot_sweep_moved_total", "Transfers that moved a hot holder's receiving lane into lane 0.", true,
			func() int64 { return hot.Stats().Moved })
		register(reg, "atomledger_hot_sweep_missing_lanes_total", "Hot holders' lanes found missing from Redis by a sweep (counted each pass): rebuild them.", true,
			func() int64 { return hot.Stats().Missing })
		register(reg, "atomledger_hot_sweep_errors_total", "Sweeps of a hot holder that failed, tried again next pass.", true,
			func() int64 { return hot.Stats().Errors })
	}
	if cfg.PGDSN == "" {
		log.Info("no ledger configured (--pg): the outbox relay does not run here")
		if len(cfg.Webhooks) > 0 {
			log.Warn("no ledger configured (--pg): the webhooks, which send the ledger's feed, do not run here")
		}
		wg.Wait()
		return
	}
	led := openLedger(ctx, cfg, log)
	if led == nil {
		wg.Wait()
		return
	}
	defer led.Close()
	register(reg, "atomledger_ledger_set_aside_total", "Events this process set aside: the ledger could not apply them, and their holders' later events wait behind them (docs/ledger.md).", true,
		func() int64 { return led.Stats().SetAside })
	var setAside atomic.Int64 // the last count read: a scrape while PostgreSQL is down shows it
	register(reg, "atomledger_ledger_set_aside", "Events set aside in the ledger and not resolved, read at each scrape: each stalls its holder until repaired (docs/ledger.md).", false,
		func() int64 {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			if n, err := led.SetAsideCount(ctx); err == nil {
				setAside.Store(n)
			}
			return setAside.Load()
		})
	relay := outbox.NewRelay(rdb, led, &outbox.Options{Logger: log})
	register(reg, "atomledger_relay_events_total", "Events written to the ledger and deleted from the outboxes.", true,
		func() int64 { return relay.Stats().Relayed })
	register(reg, "atomledger_relay_errors_total", "Failed relay rounds (Redis or PostgreSQL), retried.", true,
		func() int64 { return relay.Stats().Errors })
	register(reg, "atomledger_relay_backlog", "Events in the outboxes not yet delivered.", false,
		func() int64 { return relay.Stats().Backlog })
	register(reg, "atomledger_relay_lag_ms", "Age of the oldest undelivered event, ms.", false,
		func() int64 { return relay.Stats().LagMs })
	wg.Go(func() { _ = relay.Run(ctx) })
	for i, u := range cfg.Webhooks {
		w := newWebhook(u, cfg.WebhookSecret, led, log)
		w.register(reg, i+1)
		wg.Go(func() { w.run(ctx) })
	}
	wg.Go(func() {
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				rs, ss, ts := relay.Stats(), sweeper.Stats(), recovery.Stats()
				log.Info("relay", "relayed", rs.Relayed, "backlog", rs.Backlog, "lag_ms", rs.LagMs, "streams", rs.Streams,
					"errors", rs.Errors, "released", ss.Released, "sweep_errors", ss.Errors,
					"transfers_aborted", ts.Aborted, "transfers_finished", ts.Finished, "recovery_errors", ts.Errors)
			}
		}
	})
	log.Info("relay: running")
	wg.Wait()
}

// openLedger opens the ledger, retrying while PostgreSQL is unreachable; nil
// once ctx is done.
func openLedger(ctx context.Context, cfg *Config, log *slog.Logger) *ledger.Ledger {
	for wait := time.Second; ; wait = min(2*wait, 30*time.Second) {
		led, err := ledger.Open(ctx, cfg.PGDSN, &ledger.Options{Logger: log, Assets: cfg.Assets})
		if err == nil {
			return led
		}
		log.Warn("relay: ledger unavailable, retrying", "err", err, "in", wait)
		if worker.Sleep(ctx, wait); ctx.Err() != nil {
			return nil
		}
	}
}

// register exports one figure of a worker, as a counter or a gauge.
func register(reg prometheus.Registerer, name, help string, counter bool, f func() int64) {
	if reg == nil {
		return
	}
	value := func() float64 { return float64(f()) }
	opts := prometheus.GaugeOpts{Name: name, Help: help}
	if counter {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts(opts), value))
	} else {
		reg.MustRegister(prometheus.NewGaugeFunc(opts, value))
	}
}
