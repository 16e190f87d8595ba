package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

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

Each relay process reads as a consumer of its own. The entries a relay had
read but not delivered when it died stay pending under its name: another
relay claims them once they have been pending for --claim-idle (default 30s).

  --claim-idle DURATION
        how long an entry stays with a dead relay before this one claims it

`)
	printConfigUsage(w)
}

// commandFlags parses a command's flags with the shared configuration, and
// fails like every command: a message on stderr and exitUsage.
type commandFlags struct {
	name string
	fs   *flag.FlagSet
	cf   *configFlags
	c    cli
}

func newCommandFlags(name string, c cli, usage func(io.Writer)) *commandFlags {
	fs := flag.NewFlagSet("engined "+name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.Usage = func() { usage(fs.Output()) }
	return &commandFlags{name: name, fs: fs, c: c}
}

// parse parses args and resolves the configuration; a nil *Config comes with
// the exit status to return.
func (f *commandFlags) parse(args []string) (*Config, int) {
	f.cf = addConfigFlags(f.fs)
	if err := f.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, exitOK
		}
		return nil, exitUsage
	}
	if f.fs.NArg() > 0 {
		return nil, f.fail("unexpected argument %q", f.fs.Arg(0))
	}
	cfg, err := f.cf.config(f.c.getenv)
	if err != nil {
		return nil, f.fail("%v", err)
	}
	if cfg.PGDSN == "" {
		return nil, f.fail("--pg (ENGINED_PG_DSN) is required")
	}
	return cfg, exitOK
}

func (f *commandFlags) fail(format string, args ...any) int {
	msg := fmt.Sprintf(format, args...)
	if strings.Contains(msg, "MOVED ") {
		msg += "\nthe address is a node of a Redis Cluster: say so with --redis-cluster (ENGINED_REDIS_CLUSTER=1), or give every node's address"
	}
	msg = strings.ReplaceAll(msg, "\n", "\nengined "+f.name+": ")
	fmt.Fprintf(f.c.stderr, "engined %s: %s\n", f.name, msg)
	return exitUsage
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
	claimIdle := f.fs.Duration("claim-idle", 30*time.Second, "")
	cfg, status := f.parse(args)
	if cfg == nil {
		return status
	}
	if *claimIdle <= 0 {
		return f.fail("--claim-idle %v: want a positive duration", *claimIdle)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(c.stderr, nil))
	if cfg.PGDSN == "" {
		return f.fail("--pg (or ENGINED_PG_DSN) is required: the relay writes to the ledger")
	}
	rdb := cfg.RedisClient()
	defer rdb.Close()
	eo := cfg.EngineOptions()
	eo.Logger = log
	runWorkers(ctx, cfg, rdb, engine.New(rdb, eo), log, nil, *claimIdle)
	return exitOK
}
