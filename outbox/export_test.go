package outbox

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/internal/worker"
)

// Discover follows every outbox stream that exists, as Run does first, so
// that a test can then call Round alone.
func (r *Relay) Discover(ctx context.Context) error { return r.discover(ctx, true) }

// Rounds gives the number of rounds r has run.
func Rounds(r *Relay) int64 { return r.rounds.Load() }

// SetWatchPing sets how long r's watches wait for a notice before they ping
// their master; call it before Run.
func SetWatchPing(r *Relay, d time.Duration) { r.ping = d }

// WatchUntilLive runs a relay's watch of node's change notices until it has
// subscribed, then stops it without waiting for it to end (a watch blocked
// in a read sees its context only when the read times out); it reports
// whether it subscribed before ctx was done.
func WatchUntilLive(ctx context.Context, node *redis.Client) bool {
	r := NewRelay(node, nil, nil)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	r.syncWatches(wctx)
	w := r.watches[node.Options().Addr]
	for !w.Live() {
		if worker.Sleep(ctx, 10*time.Millisecond); ctx.Err() != nil {
			return false
		}
	}
	return true
}
