package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/atomledger/atomledger/engine"
)

func sweepHotUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: engined sweep-hot --holder X [flags]

Sweep-hot moves what hot holder X's receiving lanes hold (available balances
and points) into its lane 0 now, one transfer per lane, and prints what it
did as JSON: the lane count, the transfers that moved something, and the
lanes missing from Redis (rebuild them: engined rebuild). "engined serve"
does the same for every hot holder each --hot-sweep; running both at once
is safe, as each lane's transfer is named by the lane's seq
(docs/hot-holders.md).

Exit status: 0 when swept, 1 when a lane is missing or a transfer failed
(tried again by the next sweep), 2 when it could not run.

Flags:

  --holder X
        the hot holder
`)
	printConfigUsage(w)
}

// runSweepHot is "engined sweep-hot".
func runSweepHot(args []string, c cli) int {
	f := newCommandFlags("sweep-hot", c, sweepHotUsage)
	holder := f.fs.String("holder", "", "the hot holder")
	if status, ok := f.parse(args); !ok {
		return status
	}
	if *holder == "" {
		return f.fail("--holder X is required")
	}
	if err := checkReadID("holder", *holder); err != nil {
		return f.fail("--holder: %s", asError(err).Message)
	}
	cfg, err := f.config()
	if err != nil {
		return f.fail("%v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, applyTimeout)
	defer cancel()
	rdb := cfg.RedisClient()
	defer rdb.Close()
	got, err := engine.New(rdb, cfg.EngineOptions()).SweepHot(ctx, *holder)
	if err != nil && got.Holder == "" { // no lane read, no transfer tried: it could not run
		return f.fail("%v", err)
	}
	status := 0
	if err != nil || len(got.Missing) > 0 {
		status = 1
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "engined sweep-hot: %v\n", err)
	}
	return printJSON(c, got, status)
}
