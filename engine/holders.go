package engine

import (
	"context"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
)

// Holders calls fn with the ids of the holders Redis has, in batches of at
// most 1000, scanning every master (SCAN for the holder hashes).
//
// Errors: UNAVAILABLE, or fn's error.
func (e *Engine) Holders(ctx context.Context, fn func(holders []string) error) error {
	scan := func(ctx context.Context, c *redis.Client) error {
		it := c.ScanType(ctx, 0, cluster.HolderPattern, 1000, "hash").Iterator()
		batch := make([]string, 0, 1000)
		for it.Next(ctx) {
			h, ok := cluster.HolderOfKey(it.Val())
			if !ok {
				continue
			}
			batch = append(batch, h)
			if len(batch) == cap(batch) {
				if err := fn(batch); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
		if err := it.Err(); err != nil {
			return redisFailure("", err)
		}
		if len(batch) > 0 {
			return fn(batch)
		}
		return nil
	}
	switch c := e.rdb.(type) {
	case *redis.ClusterClient:
		// One master at a time: fn need not be safe for concurrent use.
		var mu sync.Mutex // ForEachMaster calls its function concurrently
		var clients []*redis.Client
		if err := c.ForEachMaster(ctx, func(_ context.Context, m *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			clients = append(clients, m)
			return nil
		}); err != nil {
			return redisFailure("", err)
		}
		for _, m := range clients {
			if err := scan(ctx, m); err != nil {
				return err
			}
		}
		return nil
	case *redis.Client:
		return scan(ctx, c)
	default:
		return fmt.Errorf("holders: unsupported client %T", e.rdb)
	}
}
