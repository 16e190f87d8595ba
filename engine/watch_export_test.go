package engine

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/internal/worker"
)

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
