package engine

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
)

// slotIndex tells a background worker which slots' index (cluster.Expiry or
// cluster.Transfers) to read on its next pass, so that an idle worker reads
// none. Reading the index of every slot on every pass costs 16,384 reads a
// pass whatever is due; instead the worker reads every slot once, learns
// when each index's earliest entry falls due, and afterwards reads only
// the slots whose entries fall due and those a change notice names (each
// master tells of every write to its per-slot keys, as it does the relay's
// watch). It reads every slot again whenever notices may have been missed
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

	watches map[string]*relayWatch // master address -> its notices
	wg      sync.WaitGroup

	mu     sync.Mutex
	dirty  map[int]bool // slots a notice named since the last pass
	resync bool         // notices may have been missed: read every slot

	next     map[int]time.Time // slot -> when its earliest entry falls due (local clock); absent: empty
	lastFull time.Time
}

func newSlotIndex(e *Engine, key func(int) string, full, retry time.Duration, log *slog.Logger, who string) *slotIndex {
	k := key(0)
	return &slotIndex{e: e, key: key, full: full, retry: retry, log: log, who: who, suffix: k[strings.IndexByte(k, '}'):],
		watches: map[string]*relayWatch{}, dirty: map[int]bool{}, next: map[int]time.Time{}}
}

// stop ends the watches and waits for them.
func (x *slotIndex) stop() {
	for _, w := range x.watches {
		w.stop()
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
	syncWatches(ctx, x.e.rdb, x.watches, &x.wg, func(ctx context.Context, n *redis.Client, w *relayWatch) {
		watchNotices(ctx, n, w, x.notice, x.retry, watchPing, x.log, x.who)
	})
	// Notices taken before the read: a write after it comes with a notice
	// after it, read on the next pass.
	x.mu.Lock()
	dirty, resync := x.dirty, x.resync
	x.dirty, x.resync = map[int]bool{}, false
	x.mu.Unlock()
	now := time.Now()
	full := resync || !allLive(x.watches) || x.lastFull.IsZero() || now.Sub(x.lastFull) >= x.full
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
	entries, next, err := x.e.dueEntries(ctx, x.key, limit, want)
	if full && err == nil {
		clear(x.next)
		x.lastFull = now
	}
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
