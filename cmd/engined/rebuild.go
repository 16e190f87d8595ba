package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/ledger"
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

Exit status: 0 when every holder asked for is in sync or rebuilt, 1 when one
was refused, 2 when it could not run.

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
	cfg, status := f.parse(args)
	if cfg == nil {
		return status
	}
	if (*holder == "") == !*all {
		return f.fail("give either --holder H or --all")
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
	res, err := rebuild(ctx, eng, led, holders, *force, c.stderr)
	if err != nil {
		return f.fail("%v", err)
	}
	fmt.Fprintf(c.stdout, "rebuilt %d, in sync %d, refused %d, not in the ledger %d\n", res.Rebuilt, res.InSync, res.Refused, res.Missing)
	if res.Refused > 0 || res.Missing > 0 {
		return exitDrift
	}
	return exitOK
}

// rebuildResult counts what rebuild did.
type rebuildResult struct{ Rebuilt, InSync, Refused, Missing int }

// recentSlack widens the window of instructions read for their idempotency
// records: it is measured on this host's clock, the records' TTL on Redis's,
// and Restore drops those already expired on Redis's.
const recentSlack = time.Minute

// rebuild restores holders from the ledger, with the idempotency records of
// their recent instructions, reporting each refusal on log.
func rebuild(ctx context.Context, eng *engine.Engine, led *ledger.Ledger, holders []string, force bool, log io.Writer) (rebuildResult, error) {
	var res rebuildResult
	since := time.Now().Add(-eng.IdempotencyTTL() - recentSlack).UnixMilli()
	refused, err := led.RefusedCount(ctx)
	if err != nil {
		return res, err
	}
	for lo := 0; lo < len(holders); lo += reconcileBatch {
		batch := holders[lo:min(lo+reconcileBatch, len(holders))]
		snaps, err := led.Snapshots(ctx, batch, since)
		if err != nil {
			return res, err
		}
		diverged, err := divergedHolders(ctx, eng, batch, snaps, refused)
		if err != nil {
			return res, err
		}
		for _, h := range batch {
			s := snaps[h]
			if s == nil {
				res.Missing++
				fmt.Fprintf(log, "engined rebuild: %s: not in the ledger\n", h)
				continue
			}
			if diverged[h] && !force {
				res.Refused++
				fmt.Fprintf(log, "engined rebuild: holder %s: the ledger refused %d of its events: Redis's history is not the ledger's "+
					"(a failover lost events the ledger had, and Redis applied others at their seq?); rebuilding would discard "+
					"instructions Redis acknowledged since (--force overwrites)\n", h, refused[h])
				continue
			}
			es := engine.Snapshot(*s)
			wrote, err := eng.Restore(ctx, &es, force)
			switch {
			case errors.Is(err, engine.ErrRedisAhead), errors.Is(err, engine.ErrStateDiffers):
				res.Refused++
				fmt.Fprintf(log, "engined rebuild: %v (--force overwrites)\n", err)
			case err != nil:
				return res, fmt.Errorf("%s: %w", h, err)
			case wrote:
				res.Rebuilt++
			default:
				res.InSync++
			}
		}
	}
	return res, nil
}

// divergedHolders finds, among holders, those the ledger refused events of
// and whose Redis state is not the ledger's. Their histories forked: Redis
// applied instructions the ledger refused (typically after a failover lost
// events the relay had already delivered), and a rebuild would discard them
// although their clients were answered, while their idempotency records,
// kept by Redis, would go on replaying those answers.
func divergedHolders(ctx context.Context, eng *engine.Engine, holders []string, snaps map[string]*ledger.Snapshot, refused map[string]int64) (map[string]bool, error) {
	var suspect []string
	for _, h := range holders {
		if refused[h] > 0 && snaps[h] != nil {
			suspect = append(suspect, h)
		}
	}
	if len(suspect) == 0 {
		return nil, nil
	}
	fromRedis, err := eng.Snapshots(ctx, suspect)
	if err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	out := map[string]bool{}
	for _, h := range suspect {
		r, p := fromRedis[h], snaps[h]
		out[h] = r != nil && (r.Seq != p.Seq || r.Digest != p.Digest) // a holder Redis lost has nothing left to lose
	}
	return out, nil
}
