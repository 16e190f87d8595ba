package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/reconcile"
)

func rebuildUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: engined rebuild (--holder H | --all) [--force] [flags]

Rebuild writes holders' Redis state (meta, balances, frozen funds, points,
coupons, holds and their expiry index entries) from the PostgreSQL ledger
(--pg), in one MULTI per holder, when Redis is missing the holder or behind.
The same MULTI writes the idempotency records of the instructions applied
within --idempotency-ttl, with what is left of it, so that a client retrying
one gets its first answer again; a record Redis still has is kept.
Rejections are not in the ledger: their records are not rebuilt, and a
retried rejected instruction is judged afresh.
It refuses a holder where Redis is ahead (or at the same seq with another
digest): writing would lose changes the ledger has not received yet. A
holder at the ledger's seq and digest is in sync only if every figure
agrees too; one whose figures differ (a mismatch, in reconcile's words:
changed outside the engine) is refused and what differs is listed, and
--force writes the ledger's figures over it. It also
refuses a holder whose events the ledger refused, when Redis and the ledger
differ on it: their histories forked (a failover lost events the ledger had,
then Redis applied others at their seq), and writing would discard
instructions Redis acknowledged. --force writes anyway.
Even with --force it refuses a holder whose events past the ledger's seq are
still on their way (in the outbox, or applied by the ledger after rebuild
read it): let the relay deliver them, then rebuild again.

Exit status: 0 when every holder asked for is in sync or rebuilt, 1 when one
was refused or is not in the ledger, 2 when it could not run.

Flags:

  --holder H
        rebuild holder H
  --all
        rebuild every holder of the ledger
  --force
        also overwrite holders where Redis is ahead, diverged, or whose
        figures differ from the ledger's at the same seq
`)
	printConfigUsage(w)
}

// runRebuild is "engined rebuild".
func runRebuild(args []string, c cli) int {
	f := newCommandFlags("rebuild", c, rebuildUsage)
	holder := f.fs.String("holder", "", "rebuild holder H")
	all := f.fs.Bool("all", false, "rebuild every holder of the ledger")
	force := f.fs.Bool("force", false, "also overwrite holders where Redis is ahead, diverged, or differs from the ledger")
	cfg, status := f.parseLedger(args)
	if cfg == nil {
		return status
	}
	if (*holder == "") == !*all {
		return f.fail("give either --holder H or --all")
	}
	if *holder != "" {
		if err := checkReadID("holder", *holder); err != nil {
			return f.fail("--holder: %s", asError(err).Message)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	eng, led, closeAll, err := connectLedger(ctx, cfg)
	if err != nil {
		return f.fail("%v", err)
	}
	defer closeAll()
	holders := []string{*holder}
	if *all {
		if holders, err = led.Holders(ctx); err != nil {
			return f.fail("%v", err)
		}
	}
	res, err := reconcile.Rebuild(ctx, eng, led, holders, *force)
	for _, why := range res.Refused {
		// Events on their way are refused whatever --force: their message says to rebuild
		// again once the relay has delivered them.
		if strings.HasPrefix(why, engine.ErrInFlight.Error()) {
			fmt.Fprintf(c.stderr, "engined rebuild: %s\n", why)
		} else {
			fmt.Fprintf(c.stderr, "engined rebuild: %s (--force overwrites)\n", why)
		}
	}
	for _, h := range res.Missing {
		fmt.Fprintf(c.stderr, "engined rebuild: %s: not in the ledger\n", h)
	}
	if err != nil {
		return f.fail("%v", err)
	}
	fmt.Fprintf(c.stdout, "rebuilt %d, in sync %d, refused %d, not in the ledger %d\n", res.Rebuilt, res.InSync, len(res.Refused), len(res.Missing))
	if len(res.Refused) > 0 || len(res.Missing) > 0 {
		return exitDrift
	}
	return exitOK
}
