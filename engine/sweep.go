package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// SweeperOptions configure a Sweeper. A nil *SweeperOptions or a zero field
// means the default.
type SweeperOptions struct {
	// Interval between two sweeps. Default 500ms.
	Interval time.Duration
	// Limit is the most expired holds one sweep takes from one slot. Default 256.
	Limit int
	// Logger receives failed releases. Default slog.Default().
	Logger *slog.Logger
	// Resync is the longest Run goes between two reads of every slot's
	// index: between them it reads only the slots whose holds fall due or
	// that a change notice names, a safety net beside the notices. Default 5m.
	Resync time.Duration
}

// SweeperStats are a sweeper's counters, for metrics.
type SweeperStats struct {
	Sweeps   int64 // completed sweeps
	Released int64 // expired holds released by this sweeper (not those it found released by another)
	Stale    int64 // index entries of holds already closed, or malformed, removed
	Errors   int64 // failed sweeps or releases, retried on the next sweep
}

// Sweeper releases expired holds: each one through Apply, as a release op
// with an id derived from the holder, the hold and its expiry (SweepID), so
// that every release has its outbox event like any other change, and a
// sweep that runs twice releases once.
type Sweeper struct {
	e *Engine
	w *dueWorker

	released, stale atomic.Int64
}

// NewSweeper builds a sweeper that releases through e.
func NewSweeper(e *Engine, opt *SweeperOptions) *Sweeper {
	var o SweeperOptions
	if opt != nil {
		o = *opt
	}
	s := &Sweeper{e: e}
	s.w = &dueWorker{e: e, o: dueOptions(o).withDefaults(500 * time.Millisecond), key: cluster.Expiry, act: s.sweep,
		who: "sweeper", run: "sweep", tag: "sweep"}
	return s
}

// Stats reads the counters; safe to call while it runs.
func (s *Sweeper) Stats() SweeperStats {
	return SweeperStats{Sweeps: s.w.passes.Load(), Released: s.released.Load(), Stale: s.stale.Load(), Errors: s.w.errs.Load()}
}

// SweepID is the instruction id of the sweeper's release of hold of holder
// expiring at expiresMs.
func SweepID(holder, hold string, expiresMs int64) string {
	sum := sha256.Sum256([]byte(holder + "\x00" + hold + "\x00" + strconv.FormatInt(expiresMs, 10)))
	return instructions.SweepIDPrefix + hex.EncodeToString(sum[:])[:24]
}

// Run sweeps every Interval until ctx is done, then returns nil. Each sweep
// reads only the expiry indexes that may hold something due (slotIndex):
// an idle sweeper reads none.
func (s *Sweeper) Run(ctx context.Context) error { return s.w.Run(ctx) }

// expired is one entry of an expiry index that is due.
type expired struct {
	slot         int
	holder, hold string
	exp          int64
}

// Sweep releases the holds expired now and returns once they are released.
// It reads every slot's expiry index. Indexes it could not read (a master
// down, a slot being moved) make it fail after it has released what the
// others gave.
func (s *Sweeper) Sweep(ctx context.Context) error { return s.w.once(ctx) }

// sweep releases the due holds of entries, and tells per slot how many
// entries it left in the index (failed).
func (s *Sweeper) sweep(ctx context.Context, entries []indexEntry) map[int]int {
	left := map[int]int{}
	var due []expired
	for _, en := range entries {
		holder, hold, ok := strings.Cut(en.member, " ")
		if ok && en.score > 0 {
			due = append(due, expired{slot: en.slot, holder: holder, hold: hold, exp: en.score})
			continue
		}
		// Not an entry the library writes ("<holder> <hold>", due when the
		// hold expires): written by hand, it would stay at the head for
		// good, and a release at 0 would take the hold whatever its expiry.
		if err := s.e.rdb.ZRem(ctx, cluster.Expiry(en.slot), en.member).Err(); err != nil {
			left[en.slot]++
			s.w.errs.Add(1)
			continue
		}
		s.stale.Add(1)
		s.w.o.Logger.Warn("sweeper: removed a malformed expiry index entry", "slot", en.slot, "member", en.member, "score", en.score)
	}
	if len(due) > 0 {
		s.release(ctx, due, left)
	}
	return left
}

// release releases due holds in one batch. HOLD_NOT_FOUND means the hold
// closed meanwhile, or is another hold of the same name; an index entry
// left for a closed hold goes.
func (s *Sweeper) release(ctx context.Context, due []expired, left map[int]int) {
	calls := make([]call, len(due))
	pending := make([]int, len(due))
	for i, d := range due {
		calls[i], pending[i] = s.e.sweepCall(d.holder, d.hold, d.exp), i
	}
	out := make([]Outcome, len(due))
	s.e.run(ctx, calls, pending, out)
	failed, first := 0, 0
	for i, o := range out {
		d := due[i]
		switch {
		case o.Err == nil:
			if !o.Result.Replayed { // a replay: another sweeper released it, and counted it
				s.released.Add(1)
			}
		case errors.Is(o.Err, ErrHoldNotFound), errors.Is(o.Err, ErrHolderNotFound):
			if err := s.dropStale(ctx, d); err != nil {
				s.w.errs.Add(1)
				left[d.slot]++
				s.w.o.Logger.Warn("sweeper: remove stale index entry", "holder", d.holder, "hold", d.hold, "err", err)
			} else {
				s.stale.Add(1)
			}
		default:
			s.w.errs.Add(1)
			left[d.slot]++
			if failed == 0 {
				first = i
			}
			failed++
		}
	}
	// One line a pass: a holder whose releases are refused until it has
	// room is met again on every few passes, with every hold at once.
	if failed > 0 {
		d := due[first]
		s.w.o.Logger.Warn("sweeper: releases failed, tried again on a later pass", "count", failed,
			"holder", d.holder, "hold", d.hold, "err", out[first].Err)
	}
}

// dropStale removes an index entry whose hold is closed, unless the hold
// was opened again meanwhile (the same name, a new entry): WATCH makes the
// check and the removal one step.
func (s *Sweeper) dropStale(ctx context.Context, d expired) error {
	hk := cluster.Holder(d.holder)
	key, member := cluster.Expiry(d.slot), d.holder+" "+d.hold
	return s.e.rdb.Watch(ctx, func(tx *redis.Tx) error {
		open, err := tx.HExists(ctx, hk, stored.PrefixHold+d.hold).Result()
		if err != nil {
			return err
		}
		score, err := tx.ZScore(ctx, key, member).Result()
		if errors.Is(err, redis.Nil) || open || int64(score) != d.exp {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.ZRem(ctx, key, member)
			return nil
		})
		return err
	}, hk, key)
}

// sweepCall is the release of one expired hold, valid only for the hold of
// that expiry (the script checks it): clients cannot say this, as release
// takes no expiry, so the step is set here rather than through Normalize.
func (e *Engine) sweepCall(holder, hold string, exp int64) call {
	n := instructions.Normalized{
		ID: SweepID(holder, hold, exp), Holder: holder, Counterparty: instructions.DefaultCounterparty, Memo: "hold expired",
		Steps: []instructions.Step{{Op: instructions.OpRelease, Hold: hold, Ms: exp}},
	}
	return e.build(n)
}

// ReleaseExpired releases hold under the sweeper's deterministic id, and only
// if it is still the hold that expires at expiresMs: a hold of the same name
// opened since is another hold and gets HOLD_NOT_FOUND. Whether the expiry has
// passed is not checked: the sweeper only calls it for holds whose expiry has.
// A refusal is not recorded under the id, so a later call tries again.
//
// Errors: HOLD_NOT_FOUND, HOLDER_NOT_FOUND, OVERFLOW, UNAVAILABLE, INTERNAL.
func (e *Engine) ReleaseExpired(ctx context.Context, holder, hold string, expiresMs int64) (instructions.Result, error) {
	out := make([]Outcome, 1)
	e.run(ctx, []call{e.sweepCall(holder, hold, expiresMs)}, []int{0}, out)
	return out[0].Result, out[0].Err
}
