package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
)

// RecoveryOptions configure a Recovery. A nil *RecoveryOptions or a zero
// field means the default.
type RecoveryOptions struct {
	// Interval between two passes. Default 1s.
	Interval time.Duration
	// Limit is the most transfers one pass takes from one slot. Default 256.
	Limit int
	// Logger receives failed passes. Default slog.Default().
	Logger *slog.Logger
	// Resync is the longest Run goes between two reads of every slot's
	// index of transfers: between them it reads only the slots whose
	// transfers fall due or that a change notice names, a safety net beside
	// the notices. Default 5m.
	Resync time.Duration
}

// RecoveryStats are a recovery worker's counters, for metrics.
type RecoveryStats struct {
	Passes   int64 // completed passes
	Aborted  int64 // transfers aborted for want of a decision within the timeout
	Finished int64 // transfers whose parts it finished (committed or aborted)
	Errors   int64 // transfers or passes that failed, retried later
	// Stuck counts, per pass, the committed parts whose commit found no
	// transfer hold to consume: applied before (and its id forgotten since)
	// or prepared on a master that lost it. They stay unfinished for an
	// operator (docs/transfers.md, "Exactly once"); the recovery worker
	// never sends a part again on that ground.
	Stuck int64
}

// Recovery finishes the transfers their drivers left: a transfer still
// undecided past its deadline is aborted, and a decided one whose parts are
// not all finished after the engine's TransferTimeout is finished. It finds
// them in the per-slot index of unfinished transfers (cluster.Transfers),
// never by SCAN. Several workers may run at once: every step is idempotent.
type Recovery struct {
	e *Engine
	o RecoveryOptions

	passes, aborted, finished, errs, stuck atomic.Int64
}

// NewRecovery builds a recovery worker that works through e.
func NewRecovery(e *Engine, opt *RecoveryOptions) *Recovery {
	var o RecoveryOptions
	if opt != nil {
		o = *opt
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Limit <= 0 {
		o.Limit = 256
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Resync <= 0 {
		o.Resync = 5 * time.Minute
	}
	return &Recovery{e: e, o: o}
}

// Stats reads the counters; safe to call while it runs.
func (r *Recovery) Stats() RecoveryStats {
	return RecoveryStats{Passes: r.passes.Load(), Aborted: r.aborted.Load(), Finished: r.finished.Load(), Errors: r.errs.Load(),
		Stuck: r.stuck.Load()}
}

// Run makes a pass every Interval until ctx is done, then returns nil. Each
// pass reads only the indexes that may hold a transfer due (slotIndex): an
// idle worker reads none.
func (r *Recovery) Run(ctx context.Context) error {
	idx := newSlotIndex(r.e, cluster.Transfers, r.o.Resync, r.o.Interval, r.o.Logger, "transfer recovery")
	defer idx.stop()
	pass := func(ctx context.Context) error {
		due, err := idx.due(ctx, r.o.Limit)
		return r.pass(ctx, due, err)
	}
	r.e.every(ctx, r.o.Interval, pass, func(err error) {
		r.errs.Add(1)
		r.o.Logger.Warn("transfer recovery: pass failed", "err", err)
	})
	return nil
}

// Recover makes one pass over the transfers that are due now, reading every
// slot's index.
func (r *Recovery) Recover(ctx context.Context) error {
	due, _, err := r.e.dueEntries(ctx, cluster.Transfers, r.o.Limit, nil)
	return r.pass(ctx, due, err)
}

// pass takes care of the due transfers, then fails with err, the error of
// their read: indexes it could not read (a slot being moved, a master down)
// fail the pass once the transfers of the others are taken care of.
func (r *Recovery) pass(ctx context.Context, due []indexEntry, err error) error {
	for _, en := range due {
		if err := r.recover(ctx, en); err != nil {
			r.errs.Add(1)
			r.o.Logger.Warn("transfer recovery: transfer left for a later pass", "transfer", en.member, "err", err)
		}
	}
	if err != nil {
		return fmt.Errorf("transfer recovery: %w", err)
	}
	r.passes.Add(1)
	return nil
}

// recover takes one due transfer as far as it goes.
func (r *Recovery) recover(ctx context.Context, en indexEntry) error {
	id, index := en.member, cluster.Transfers(en.slot)
	rec, err := r.e.transferScript(ctx, id, "read")
	if err != nil {
		return err
	}
	if rec.outcome == "missing" || rec.done { // expired long ago, or found again by a claim: nothing left to do
		return r.e.rdb.ZRem(ctx, index, id).Err()
	}
	body, err := r.e.rdb.HGet(ctx, cluster.Transfer(id), "body").Result()
	if err != nil {
		return err
	}
	t, err := instructions.DecodeTransfer([]byte(body))
	if err != nil {
		return err
	}
	n, err := t.Normalize(r.e.assets)
	if err != nil {
		return err
	}
	pinLanes(&n, rec.holders)
	// The next look, should this one not get to the end.
	next := float64(en.now + r.e.xferTimeout.Milliseconds())
	if err := r.e.rdb.ZAddXX(ctx, index, redis.Z{Score: next, Member: id}).Err(); err != nil {
		return err
	}
	var st TransferState
	var stuck int
	switch {
	case rec.status == "preparing" && en.now < rec.deadline:
		return nil
	case rec.status == "preparing" && rec.payer >= 0 && rec.payer < len(n.Parts):
		// One payer: its step decides. Fenced first, it answers what was
		// decided, or a rejection if it never ran.
		n.Payer = rec.payer
		if st, stuck = r.e.drivePayment(ctx, n, rec, nil, true); st.Status == TransferAborted {
			r.aborted.Add(1)
		}
	case rec.status == "preparing":
		reason := r.e.lateReason()
		decided, err := r.e.transferScript(ctx, id, "decide", TransferAborted, reason, r.e.xferTimeout.Milliseconds())
		if err != nil {
			return err
		}
		if decided.status == TransferAborted && decided.err == reason {
			r.aborted.Add(1)
		}
		st, stuck = r.e.drive(ctx, n, decided)
	default:
		st, stuck = r.e.drive(ctx, n, rec)
	}
	r.stuck.Add(int64(stuck))
	if !st.Complete {
		return errors.New("parts left unfinished")
	}
	r.finished.Add(1)
	return nil
}
