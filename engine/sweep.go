package engine

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	Released int64 // expired holds released
	Stale    int64 // index entries of holds already closed, removed
	Errors   int64 // failed sweeps or releases, retried on the next sweep
}

// Sweeper releases expired holds: each one through Apply, as a release op
// with an id derived from the holder, the hold and its expiry (SweepID), so
// that every release has its outbox event like any other change, and a
// sweep that runs twice releases once.
type Sweeper struct {
	e *Engine
	o SweeperOptions

	sweeps, released, stale, errs atomic.Int64
}

// NewSweeper builds a sweeper that releases through e.
func NewSweeper(e *Engine, opt *SweeperOptions) *Sweeper {
	var o SweeperOptions
	if opt != nil {
		o = *opt
	}
	if o.Interval <= 0 {
		o.Interval = 500 * time.Millisecond
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
	return &Sweeper{e: e, o: o}
}

// Stats reads the counters; safe to call while it runs.
func (s *Sweeper) Stats() SweeperStats {
	return SweeperStats{Sweeps: s.sweeps.Load(), Released: s.released.Load(), Stale: s.stale.Load(), Errors: s.errs.Load()}
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
func (s *Sweeper) Run(ctx context.Context) error {
	idx := newSlotIndex(s.e, cluster.Expiry, s.o.Resync, s.o.Interval, s.o.Logger, "sweeper")
	defer idx.stop()
	sweep := func(ctx context.Context) error {
		entries, err := idx.due(ctx, s.o.Limit)
		return s.sweep(ctx, entries, err)
	}
	s.e.every(ctx, s.o.Interval, sweep, func(err error) {
		s.errs.Add(1)
		s.o.Logger.Warn("sweeper: sweep failed", "err", err)
	})
	return nil
}

// every runs pass every interval until ctx is done. After a failed pass,
// reported to failed, a cluster client re-reads the slot map: a failover
// moves slots, and go-redis does not reload it on connection errors.
func (e *Engine) every(ctx context.Context, interval time.Duration, pass func(context.Context) error, failed func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := pass(ctx); err != nil && ctx.Err() == nil {
			failed(err)
			if c, ok := e.rdb.(*redis.ClusterClient); ok {
				c.ReloadState(ctx)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

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
func (s *Sweeper) Sweep(ctx context.Context) error {
	entries, _, err := s.e.dueEntries(ctx, cluster.Expiry, s.o.Limit, nil)
	return s.sweep(ctx, entries, err)
}

// sweep releases the due holds of entries, then returns err, the error of
// their read.
func (s *Sweeper) sweep(ctx context.Context, entries []indexEntry, err error) error {
	if err != nil {
		err = fmt.Errorf("sweep: %w", err)
	}
	var due []expired
	for _, en := range entries {
		if holder, hold, ok := strings.Cut(en.member, " "); ok {
			due = append(due, expired{slot: en.slot, holder: holder, hold: hold, exp: en.score})
		}
	}
	if len(due) > 0 {
		s.release(ctx, due)
	}
	if err != nil {
		return err
	}
	s.sweeps.Add(1)
	return nil
}

// indexEntry is a due member of a per-slot index (a sorted set).
type indexEntry struct {
	slot   int
	member string
	score  int64
	now    int64 // the clock of the index's master when it was read, Unix ms
}

// dueEntries reads, in the per-slot index key(slot) of every slot (of the
// slots want keeps, if want is not nil), up to limit members scored at or
// before now, and tells for each slot read when it should be read again
// (slotNext). Each master is asked for its own
// slots, against its own clock (TIME): the scripts judge time by the clock
// of the master they run on, and a worker whose clock ran ahead would act
// too early.
//
// A slot being moved answers MOVED or ASK for its index: that slot alone is
// read again where the answer points (with ASKING for an ASK), against that
// master's clock. Whatever could not be read is in the error, and the
// entries returned are all that could: a caller acts on them.
func (e *Engine) dueEntries(ctx context.Context, key func(int) string, limit int, want func(int) bool) ([]indexEntry, map[int]time.Time, error) {
	next := map[int]time.Time{}
	c, ok := e.rdb.(*redis.ClusterClient)
	if !ok {
		due, _, err := dueOn(ctx, e.rdb, wanted(singles(0, cluster.Slots-1), want), key, limit, false, next)
		return due, next, err
	}
	slots, err := c.ClusterSlots(ctx).Result() //nolint:staticcheck // CLUSTER SLOTS answers on every supported version
	if err != nil {
		return nil, nil, fmt.Errorf("cluster slots: %w", err)
	}
	owned := map[string][]int{}
	for _, r := range slots {
		if len(r.Nodes) > 0 {
			owned[r.Nodes[0].Addr] = append(owned[r.Nodes[0].Addr], wanted(singles(r.Start, r.End), want)...)
		}
	}
	var all []indexEntry
	var errs []error
	var redirected []redirect
	for addr, ss := range owned {
		if len(ss) == 0 {
			continue
		}
		node, err := masterClient(ctx, c, addr)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		due, redirs, err := dueOn(ctx, node, ss, key, limit, false, next)
		if err != nil {
			errs = append(errs, err)
		}
		all = append(all, due...)
		redirected = append(redirected, redirs...)
	}
	// Each slot once, where it was sent; a second redirection is an error.
	again := map[redirect][]int{}
	for _, r := range redirected {
		to := redirect{addr: r.addr, ask: r.ask}
		again[to] = append(again[to], r.slot)
	}
	for to, ss := range again {
		node, err := masterClient(ctx, c, to.addr)
		if err != nil {
			errs = append(errs, fmt.Errorf("slots %v: %w", ss, err))
			continue
		}
		due, redirs, err := dueOn(ctx, node, ss, key, limit, to.ask, next)
		if err != nil {
			errs = append(errs, err)
		}
		for _, r := range redirs {
			errs = append(errs, fmt.Errorf("read index of slot %d: redirected twice", r.slot))
		}
		all = append(all, due...)
	}
	return all, next, errors.Join(errs...)
}

// wanted keeps the slots want keeps; all of them if want is nil.
func wanted(slots []int, want func(int) bool) []int {
	if want == nil {
		return slots
	}
	return slices.DeleteFunc(slots, func(s int) bool { return !want(s) })
}

// singles lists the slots lo..hi.
func singles(lo, hi int) []int {
	ss := make([]int, 0, hi-lo+1)
	for s := lo; s <= hi; s++ {
		ss = append(ss, s)
	}
	return ss
}

// redirect is a slot whose index read answered MOVED (ask false) or ASK: the
// slot is being moved, or has been, to the master at addr.
type redirect struct {
	slot int
	addr string
	ask  bool
}

// redirectOf reads a MOVED or ASK reply ("MOVED <slot> <addr>").
func redirectOf(err error, slot int) (redirect, bool) {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return redirect{}, false
	}
	f := strings.Fields(rerr.Error())
	if len(f) != 3 || (f[0] != "MOVED" && f[0] != "ASK") {
		return redirect{}, false
	}
	return redirect{slot: slot, addr: f[2], ask: f[0] == "ASK"}, true
}

// masterClient finds the client go-redis keeps for the master at addr.
func masterClient(ctx context.Context, c *redis.ClusterClient, addr string) (*redis.Client, error) {
	var mu sync.Mutex // ForEachMaster calls its function concurrently
	var found *redis.Client
	_ = c.ForEachMaster(ctx, func(_ context.Context, m *redis.Client) error {
		if sameAddr(m.Options().Addr, addr) {
			mu.Lock()
			found = m
			mu.Unlock()
		}
		return nil
	})
	if found == nil {
		return nil, fmt.Errorf("no client for master %s", addr)
	}
	return found, nil
}

func sameAddr(a, b string) bool {
	if a == b {
		return true
	}
	ha, pa, _ := net.SplitHostPort(a)
	hb, pb, _ := net.SplitHostPort(b)
	local := func(h string) bool { return h == "" || h == "localhost" || h == "127.0.0.1" || h == "::1" }
	return pa == pb && (ha == hb || local(ha) && local(hb))
}

// dueOn reads, on one server, the due entries of the indexes of slots,
// against that server's clock; asking sends ASKING before each read (the
// slots are being imported there). Each slot's read stands alone: one that
// answers MOVED or ASK is returned as a redirect, one that fails otherwise
// goes into the error, and neither keeps the other slots' entries back.
//
// Each slot read gets its entry in next: now when it had due entries (what
// is acted on is looked at again, so that a failed step is retried), the
// local time at which its earliest later entry falls due by the server's
// clock, or the zero time for an index with nothing in it.
func dueOn(ctx context.Context, rdb redis.Cmdable, slots []int, key func(int) string, limit int, asking bool,
	next map[int]time.Time) ([]indexEntry, []redirect, error) {
	t, err := rdb.Time(ctx).Result()
	if err != nil {
		return nil, nil, fmt.Errorf("time: %w", err)
	}
	local := time.Now()
	now := t.UnixMilli()
	max := strconv.FormatInt(now, 10)
	var out []indexEntry
	var redirs []redirect
	var errs []error
	for lo := 0; lo < len(slots); lo += discoverChunk {
		chunk := slots[lo:min(lo+discoverChunk, len(slots))]
		pipe := rdb.Pipeline()
		cmds := make([]*redis.ZSliceCmd, len(chunk))
		later := make([]*redis.ZSliceCmd, len(chunk))
		for i, slot := range chunk {
			if asking {
				pipe.Do(ctx, "asking")
			}
			cmds[i] = pipe.ZRangeByScoreWithScores(ctx, key(slot), &redis.ZRangeBy{Min: "-inf", Max: max, Count: int64(limit)})
			if asking {
				pipe.Do(ctx, "asking")
			}
			later[i] = pipe.ZRangeByScoreWithScores(ctx, key(slot), &redis.ZRangeBy{Min: "(" + max, Max: "+inf", Count: 1})
		}
		_, _ = pipe.Exec(ctx) // each command's own error is read below
		for i, c := range cmds {
			if err := cmp.Or(c.Err(), later[i].Err()); err != nil && !errors.Is(err, redis.Nil) {
				if r, ok := redirectOf(err, chunk[i]); ok {
					redirs = append(redirs, r)
				} else if len(errs) < 3 { // a master down fails every slot alike
					errs = append(errs, fmt.Errorf("read index of slot %d: %w", chunk[i], err))
				}
				continue
			}
			for _, z := range c.Val() {
				m, _ := z.Member.(string)
				out = append(out, indexEntry{slot: chunk[i], member: m, score: int64(z.Score), now: now})
			}
			switch l := later[i].Val(); {
			case len(c.Val()) > 0:
				next[chunk[i]] = local
			case len(l) > 0:
				next[chunk[i]] = local.Add(time.Duration(int64(l[0].Score)-now) * time.Millisecond)
			default:
				next[chunk[i]] = time.Time{}
			}
		}
	}
	return out, redirs, errors.Join(errs...)
}

// release releases due holds in one batch. HOLD_NOT_FOUND means the hold
// closed meanwhile, or is another hold of the same name; an index entry
// left for a closed hold goes.
func (s *Sweeper) release(ctx context.Context, due []expired) {
	calls := make([]call, len(due))
	pending := make([]int, len(due))
	for i, d := range due {
		calls[i], pending[i] = s.e.sweepCall(d.holder, d.hold, d.exp), i
	}
	out := make([]Outcome, len(due))
	s.e.run(ctx, calls, pending, out)
	for i, o := range out {
		d := due[i]
		switch {
		case o.Err == nil:
			s.released.Add(1)
		case errors.Is(o.Err, ErrHoldNotFound), errors.Is(o.Err, ErrHolderNotFound):
			if err := s.dropStale(ctx, d); err != nil {
				s.errs.Add(1)
				s.o.Logger.Warn("sweeper: remove stale index entry", "holder", d.holder, "hold", d.hold, "err", err)
			} else {
				s.stale.Add(1)
			}
		default:
			s.errs.Add(1)
			s.o.Logger.Warn("sweeper: release failed", "holder", d.holder, "hold", d.hold, "err", o.Err)
		}
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
