package engine

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/stored"
)

// This file reads a holder's raw state from Redis for reconciliation and
// rebuild (stored.Differences compares two accounts of it).

// Snapshots reads the raw state of holders in pipelines; a holder Redis does
// not have is absent from the map. Recent stays empty: idempotency records
// have keys of their own, which only a SCAN would find.
//
// Errors: UNAVAILABLE. A stored value that is not a number is read as 0
// and listed in the snapshot's Unreadable.
func (e *Engine) Snapshots(ctx context.Context, holders []string) (map[string]*stored.Snapshot, error) {
	pipe := e.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(holders))
	for i, h := range holders {
		cmds[i] = readState(ctx, pipe, h)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, redisFailure("", err)
	}
	out := make(map[string]*stored.Snapshot, len(holders))
	for i, h := range holders {
		if s := stored.ParseHolder(h, cmds[i].Val()); s != nil {
			out[h] = s
		}
	}
	return out, nil
}

// readState reads a holder's hash (in a pipeline, or at once on a Tx).
func readState(ctx context.Context, c redis.Cmdable, h string) *redis.MapStringStringCmd {
	return c.HGetAll(ctx, cluster.Holder(h))
}
