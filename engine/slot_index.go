package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/internal/worker"
)

// slotIndex tells a background worker which slots' index (cluster.Expiry or
// cluster.Transfers) to read on its next pass, so that an idle worker reads
// none. Reading the index of every slot on every pass costs 16,384 reads a
// pass whatever is due; instead the worker reads every slot once, learns
// when each index's earliest entry falls due, and afterwards reads only
// the slots whose entries fall due and those a change notice names (each
// master tells of every write to its per-slot keys: worker.Watch). It reads every slot again whenever notices may have been missed
// (a watch not subscribed yet, resubscribed or down, a flush), after a pass
// that failed, and every full interval as a safety net.
type slotIndex struct {
	e      *Engine
	key    func(int) string
	full   time.Duration
	retry  time.Duration
	log    *slog.Logger
	who    string
	suffix string // of key's names, to pick them out of the notices

	watches map[string]*worker.Watch // master address -> its notices
	wg      sync.WaitGroup

	mu     sync.Mutex
	dirty  map[int]bool // slots a notice named since the last pass
	resync bool         // notices may have been missed: read every slot

	next     map[int]time.Time // slot -> when its earliest entry falls due (local clock); absent: empty
	from     map[int]int       // slot -> how many due entries its next read skips (dueOn)
	read     map[int]int       // slot -> how many entries the last pass read there
	lastFull time.Time
}

func newSlotIndex(e *Engine, key func(int) string, full, retry time.Duration, log *slog.Logger, who string) *slotIndex {
	k := key(0)
	return &slotIndex{e: e, key: key, full: full, retry: retry, log: log, who: who, suffix: k[strings.IndexByte(k, '}'):],
		watches: map[string]*worker.Watch{}, dirty: map[int]bool{}, next: map[int]time.Time{}, from: map[int]int{}, read: map[int]int{}}
}

// stop ends the watches and waits for them.
func (x *slotIndex) stop() {
	for _, w := range x.watches {
		w.Stop()
	}
	x.wg.Wait()
	clear(x.watches)
}

func (x *slotIndex) notice(keys []string, all bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if all {
		x.resync = true
	}
	for _, k := range keys {
		if strings.HasSuffix(k, x.suffix) {
			if s := cluster.Slot(k); k == x.key(s) {
				x.dirty[s] = true
			}
		}
	}
}

// due reads the due entries of the slots that may have some (every slot
// when the notices cannot be trusted) and learns when to read each again.
// ctx bounds the watches it starts: they run until stop.
func (x *slotIndex) due(ctx context.Context, limit int) ([]indexEntry, error) {
	worker.SyncWatches(ctx, x.e.rdb, x.watches, &x.wg, func(ctx context.Context, n *redis.Client, w *worker.Watch) {
		worker.WatchNotices(ctx, n, w, worker.IndexWrites, x.notice, x.retry, worker.WatchPing, x.log, x.who)
	})
	// Notices taken before the read: a write after it comes with a notice
	// after it, read on the next pass.
	x.mu.Lock()
	dirty, resync := x.dirty, x.resync
	x.dirty, x.resync = map[int]bool{}, false
	x.mu.Unlock()
	now := time.Now()
	full := resync || !worker.AllLive(x.watches) || x.lastFull.IsZero() || now.Sub(x.lastFull) >= x.full
	var want func(int) bool
	if !full {
		for s, t := range x.next {
			if !t.After(now) {
				dirty[s] = true
			}
		}
		if len(dirty) == 0 {
			return nil, nil
		}
		want = func(s int) bool { return dirty[s] }
	}
	entries, next, err := x.e.dueEntries(ctx, x.key, limit, want, x.from)
	if full && err == nil {
		clear(x.next)
		x.lastFull = now
	}
	x.noteRead(entries, next)
	for s, t := range next {
		if t.IsZero() {
			delete(x.next, s)
		} else {
			x.next[s] = t
		}
	}
	if err != nil {
		// What could not be read is unknown: every slot again next time.
		x.mu.Lock()
		x.resync = true
		x.mu.Unlock()
	}
	return entries, err
}

// noteRead counts the entries of each slot a pass read (next has them all).
func (x *slotIndex) noteRead(entries []indexEntry, next map[int]time.Time) {
	clear(x.read)
	for s := range next {
		x.read[s] = 0
	}
	for _, en := range entries {
		x.read[en.slot]++
	}
}

// advance sets where the next read of each slot read by the last pass
// starts: past the entries the worker left in place (left: slot -> how
// many) when the read gave limit entries, which may all be such entries,
// at the head otherwise (dueOn).
func (x *slotIndex) advance(left map[int]int, limit int) {
	for s, n := range x.read {
		if n == limit {
			x.from[s] += left[s]
		} else {
			delete(x.from, s)
		}
	}
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
// before now (past the first from[slot] of them: dueOn), and tells for each
// slot read when it should be read again.
// Each master is asked for its own
// slots, against its own clock (TIME): the scripts judge time by the clock
// of the master they run on, and a worker whose clock ran ahead would act
// too early.
//
// A slot being moved answers MOVED or ASK for its index: that slot alone is
// read again where the answer points (with ASKING for an ASK), against that
// master's clock. Whatever could not be read is in the error, and the
// entries returned are all that could: a caller acts on them.
func (e *Engine) dueEntries(ctx context.Context, key func(int) string, limit int, want func(int) bool, from map[int]int) ([]indexEntry, map[int]time.Time, error) {
	next := map[int]time.Time{}
	c, ok := e.rdb.(*redis.ClusterClient)
	if !ok {
		due, _, err := dueOn(ctx, e.rdb, wanted(singles(0, cluster.Slots-1), want), key, limit, false, next, from)
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
		node, err := masterAt(ctx, c, addr)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		due, redirs, err := dueOn(ctx, node, ss, key, limit, false, next, from)
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
		node, err := masterAt(ctx, c, to.addr)
		if err != nil {
			errs = append(errs, fmt.Errorf("slots %v: %w", ss, err))
			continue
		}
		due, redirs, err := dueOn(ctx, node, ss, key, limit, to.ask, next, from)
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

// masterAt finds the client go-redis keeps for the master at addr.
func masterAt(ctx context.Context, c *redis.ClusterClient, addr string) (*redis.Client, error) {
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
//
// An entry the worker could not act on (a release refused OVERFLOW until its
// holder has room, a transfer left for a later pass) stays due where it is,
// at the head of its index: limit of them would fill every read of the slot
// and keep what falls due after them waiting. So each read skips the first
// from[slot] due entries (none when from is nil), the ones earlier full
// reads left in place (slotIndex.advance), and a read that gives fewer than
// limit starts again from the head: the entries left behind are tried every
// few passes, and none waits behind them.
func dueOn(ctx context.Context, rdb redis.Cmdable, slots []int, key func(int) string, limit int, asking bool,
	next map[int]time.Time, from map[int]int) ([]indexEntry, []redirect, error) {
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
	for lo := 0; lo < len(slots); lo += worker.SlotsPerPipeline {
		chunk := slots[lo:min(lo+worker.SlotsPerPipeline, len(slots))]
		pipe := rdb.Pipeline()
		cmds := make([]*redis.ZSliceCmd, len(chunk))
		later := make([]*redis.ZSliceCmd, len(chunk))
		for i, slot := range chunk {
			if asking {
				pipe.Do(ctx, "asking")
			}
			cmds[i] = pipe.ZRangeByScoreWithScores(ctx, key(slot), &redis.ZRangeBy{Min: "-inf", Max: max,
				Offset: int64(from[slot]), Count: int64(limit)})
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
			case len(c.Val()) > 0 || from[chunk[i]] > 0: // the head, skipped, is due
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
