// The relay's watch of change notices: each master tells the relay, on a
// connection of its own, which outbox streams were written, so that a stream
// is read when written rather than polled.

package outbox

import (
	"context"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/internal/worker"
)

// syncWatches watches every master and stops watching what is no longer one.
func (r *Relay) syncWatches(ctx context.Context) {
	worker.SyncWatches(ctx, r.rdb, r.watches, &r.watchWG, r.watch)
}

// allWatched tells whether every master the relay knows sends notices.
func (r *Relay) allWatched() bool {
	return worker.AllLive(r.watches)
}

// watch receives the change notices of one master until ctx is done, on a
// connection of its own that redirects the tracking notices to itself (in
// RESP2, where they arrive as messages of __redis__:invalidate). The
// prefixes cover the per-slot keys only (cluster.SlotKeyPrefixes): the
// holders' own keys, written by every instruction, would multiply the
// notices for nothing. Whenever it subscribes
// again, notices may have been lost meanwhile: it asks for a resync.
func (r *Relay) watch(ctx context.Context, node *redis.Client, w *worker.Watch) {
	worker.WatchNotices(ctx, node, w, worker.OutboxWrites, r.notice, r.o.MaxIdle, r.ping, r.o.Logger, "relay")
}

// notice records the outbox keys a notice names (or, with all, that every
// stream may have changed) and wakes Run.
func (r *Relay) notice(keys []string, all bool) {
	r.mu.Lock()
	if all {
		r.resync = true
	}
	for _, k := range keys {
		if strings.HasSuffix(k, "}:outbox") {
			r.noticed[k] = true
		}
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// takeNotices makes the streams notices named due, and follows those it
// did not follow yet. It runs before the reads: a write after a read comes
// with a notice after the read, so no write is left unread.
func (r *Relay) takeNotices() {
	r.mu.Lock()
	keys := r.noticed
	if len(keys) == 0 {
		r.mu.Unlock()
		return
	}
	r.noticed = map[string]bool{}
	r.mu.Unlock()
	for k := range keys {
		s := r.streams[k]
		if s == nil {
			if k != cluster.Outbox(cluster.Slot(k)) {
				continue // not an outbox, only named like one
			}
			r.follow(k)
			r.nstreams.Store(int64(len(r.streams)))
			continue
		}
		s.idle, s.nextRead = 0, time.Time{}
	}
}
