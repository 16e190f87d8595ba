package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/ledger"
	"github.com/atomledger/atomledger/stored"
)

// RebuildResult tells what Rebuild did.
type RebuildResult struct {
	Rebuilt, InSync int      // holders written; holders Redis already had whole
	Refused         []string // why each holder refused was, one line each
	Missing         []string // holders the ledger does not have
}

// recentSlack widens the window of instructions read for their idempotency
// records: it is measured on this host's clock, the records' TTL on Redis's,
// and Restore drops those already expired on Redis's.
const recentSlack = time.Minute

// Rebuild writes holders' Redis state from the ledger, with the idempotency
// records of their recent instructions (engine.Restore), where Redis lacks
// a holder or is behind. Unless force, it refuses a holder where Redis is
// ahead, whose figures differ from the ledger's at the same seq and digest,
// or whose history forked from the ledger's (diverged): each refusal is
// listed with its reason. Even with force it refuses a holder whose events
// past the ledger's seq are still on their way (engine.ErrInFlight): the
// ledger would apply them after the write, and Redis would have forgotten
// them. A holder the ledger does not have is listed
// Missing. A hot holder is rebuilt with its lanes (each a holder of its own,
// counted as one).
//
// Errors: Redis's (engine.ErrUnavailable) and PostgreSQL's; holders
// rebuilt before the error stay rebuilt.
func Rebuild(ctx context.Context, eng *engine.Engine, led *ledger.Ledger, holders []string, force bool) (RebuildResult, error) {
	var res RebuildResult
	since := time.Now().Add(-eng.IdempotencyTTL() - recentSlack).UnixMilli()
	refused, err := led.RefusedCount(ctx)
	if err != nil {
		return res, err
	}
	if holders, err = withLanes(ctx, led, holders); err != nil {
		return res, err
	}
	for lo := 0; lo < len(holders); lo += batchSize {
		batch := holders[lo:min(lo+batchSize, len(holders))]
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
				res.Missing = append(res.Missing, h)
				continue
			}
			if diverged[h] && !force {
				res.Refused = append(res.Refused, fmt.Sprintf("holder %s: the ledger refused %d of its events: Redis's history is not the ledger's "+
					"(a failover lost events the ledger had, and Redis applied others at their seq?); rebuilding would discard "+
					"instructions Redis acknowledged since", h, refused[h]))
				continue
			}
			if beforeRestore != nil {
				beforeRestore()
			}
			var ledErr error
			wrote, err := eng.RestoreUnlessArrived(ctx, s, force, func(ctx context.Context) (bool, error) {
				a, err := led.Arrivals(ctx, []string{h})
				ledErr = err
				return a[h].Head > s.Seq, err
			})
			switch {
			case ledErr != nil:
				return res, ledErr
			case errors.Is(err, engine.ErrRedisAhead), errors.Is(err, engine.ErrStateDiffers), errors.Is(err, engine.ErrInFlight):
				res.Refused = append(res.Refused, err.Error())
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

// withLanes gives holders followed by the lanes of the hot holders among
// them that are not already there.
func withLanes(ctx context.Context, led *ledger.Ledger, holders []string) ([]string, error) {
	given := make(map[string]bool, len(holders))
	for _, h := range holders {
		given[h] = true
	}
	out := slices.Clip(holders) // appended to: not the caller's array
	for lo := 0; lo < len(holders); lo += batchSize {
		ls, err := led.Lanes(ctx, holders[lo:min(lo+batchSize, len(holders))])
		if err != nil {
			return nil, err
		}
		for _, l := range ls {
			if !given[l] {
				given[l] = true
				out = append(out, l)
			}
		}
	}
	return out, nil
}

// divergedHolders finds, among holders, those the ledger refused events of
// and whose Redis state is not the ledger's. Their histories forked: Redis
// applied instructions the ledger refused (typically after a failover lost
// events the relay had already delivered), and a rebuild would discard them
// although their clients were answered, while their idempotency records,
// kept by Redis, would go on replaying those answers.
func divergedHolders(ctx context.Context, eng *engine.Engine, holders []string, snaps map[string]*stored.Snapshot, refused map[string]int64) (map[string]bool, error) {
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

// beforeRestore, when set, runs after Rebuild read the ledger and before it
// writes a holder: a test delivers events there.
var beforeRestore func()
