package engine

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// WatchUntilLive runs a relay's watch of node's change notices until it has
// subscribed, then stops it without waiting for it to end (a watch blocked
// in a read sees its context only when the read times out); it reports
// whether it subscribed before ctx was done.
func WatchUntilLive(ctx context.Context, node *redis.Client) bool {
	r := NewRelay(node, nil, nil)
	wctx, stop := context.WithCancel(ctx)
	w := &noticeWatch{stop: stop}
	go r.watch(wctx, node, w)
	defer stop()
	for !w.live.Load() {
		if sleep(ctx, 10*time.Millisecond); ctx.Err() != nil {
			return false
		}
	}
	return true
}
