package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/ledger"
)

func relayUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: engined relay [flags]

Relay carries every slot's outbox events from Redis to the PostgreSQL ledger
(--pg), releases expired holds and finishes the transfers their senders left
(aborts those undecided past --transfer-timeout), until interrupted (SIGINT,
SIGTERM). An event leaves Redis only once PostgreSQL committed it: with
PostgreSQL or a Redis master down, events wait and the relay retries.

An event stays at the head of its stream until PostgreSQL has it: a relay
reads every stream from its head, so a relay started after one died (or
several relays at once) delivers what is there, and the ledger skips the
events it has already (docs/events.md, Delivery).

`)
	printConfigUsage(w)
}

// connectLedger builds the engine on the configured Redis and opens the
// ledger; closeAll releases both.
func connectLedger(ctx context.Context, cfg *Config) (*engine.Engine, *ledger.Ledger, func(), error) {
	rdb := cfg.RedisClient()
	led, err := ledger.Open(ctx, cfg.PGDSN, nil)
	if err != nil {
		_ = rdb.Close()
		return nil, nil, nil, err
	}
	return engine.New(rdb, cfg.EngineOptions()), led, func() { led.Close(); _ = rdb.Close() }, nil
}

// runRelay is "engined relay".
func runRelay(args []string, c cli) int {
	f := newCommandFlags("relay", c, relayUsage)
	cfg, status := f.parseLedger(args)
	if cfg == nil {
		return status
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(c.stderr, nil))
	redis.SetLogger(redisLogger{log: log})
	rdb := cfg.RedisClient()
	defer rdb.Close()
	eo := cfg.EngineOptions()
	eo.Logger = log
	runWorkers(ctx, cfg, rdb, engine.New(rdb, eo), log, nil)
	return exitOK
}
