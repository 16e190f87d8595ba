package engine

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// dueOptions are the settings of a dueWorker: SweeperOptions and
// RecoveryOptions, which have these fields, convert to it.
type dueOptions struct {
	Interval time.Duration
	Limit    int
	Logger   *slog.Logger
	Resync   time.Duration
}

// withDefaults fills the zero fields: interval is the worker's own default.
func (o dueOptions) withDefaults(interval time.Duration) dueOptions {
	if o.Interval <= 0 {
		o.Interval = interval
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
	return o
}

// dueWorker makes passes over a per-slot due index (a sorted set per slot,
// each member scored by when it falls due): a pass reads the due entries,
// at most o.Limit a slot, and hands them to act. The sweeper
// (cluster.Expiry) and transfer recovery (cluster.Transfers) are two.
type dueWorker struct {
	e   *Engine
	o   dueOptions
	key func(slot int) string // the slot's index
	// act takes care of the due entries, counts its own failures in errs,
	// and tells per slot how many entries it left in place.
	act func(context.Context, []indexEntry) map[int]int
	who string // names the worker in the log
	run string // names a pass in the log: "<who>: <run> failed"
	tag string // prefixes the error of a pass that could not read every index

	passes, errs atomic.Int64
}

// Run makes a pass every o.Interval until ctx is done, then returns nil.
// Each pass reads only the indexes that may hold something due
// (slotIndex): an idle worker reads none. After a failed pass a cluster
// client re-reads the slot map: a failover moves slots, and go-redis does
// not reload it on connection errors.
func (w *dueWorker) Run(ctx context.Context) error {
	idx := newSlotIndex(w.e, w.key, w.o.Resync, w.o.Interval, w.o.Logger, w.who)
	defer idx.stop()
	t := time.NewTicker(w.o.Interval)
	defer t.Stop()
	for {
		entries, err := idx.due(ctx, w.o.Limit)
		left, err := w.pass(ctx, entries, err)
		idx.advance(left, w.o.Limit)
		if err != nil && ctx.Err() == nil {
			w.errs.Add(1)
			w.o.Logger.Warn(w.who+": "+w.run+" failed", "err", err)
			if c, ok := w.e.rdb.(*redis.ClusterClient); ok {
				c.ReloadState(ctx)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// once makes one pass over what is due now, reading every slot's index.
func (w *dueWorker) once(ctx context.Context) error {
	entries, _, err := w.e.dueEntries(ctx, w.key, w.o.Limit, nil, nil)
	_, err = w.pass(ctx, entries, err)
	return err
}

// pass hands entries to act, then fails with err, the error of their read
// (left is act's: per slot, the entries it left in place):
// indexes it could not read (a master down, a slot being moved) fail the
// pass once the entries of the others are taken care of.
func (w *dueWorker) pass(ctx context.Context, entries []indexEntry, err error) (left map[int]int, _ error) {
	if len(entries) > 0 {
		left = w.act(ctx, entries)
	}
	if err != nil {
		return left, fmt.Errorf("%s: %w", w.tag, err)
	}
	w.passes.Add(1)
	return left, nil
}
