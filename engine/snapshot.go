package engine

import (
	"context"
	"errors"

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

// LostExpiries lists, per holder of snaps (read from Redis by Snapshots),
// the holds with an expiry whose entry the slot's expiry index lacks or
// has at another time: the sweeper would never release them. The index is
// read after the hash, and each holder's seq after its entries, in one
// pipeline: a holder that applied an instruction since its snapshot is left
// out (its holds may have changed with their entries).
//
// Errors: UNAVAILABLE.
func (e *Engine) LostExpiries(ctx context.Context, snaps map[string]*stored.Snapshot) (map[string][]string, error) {
	pipe := e.rdb.Pipeline()
	type queued struct {
		check func() ([]string, error)
		seq   *redis.StringCmd
	}
	q := map[string]queued{}
	for h, s := range snaps {
		check := queueExpiries(ctx, pipe, s)
		q[h] = queued{check, pipe.HGet(ctx, cluster.Holder(h), stored.FieldSeq)}
	}
	_, _ = pipe.Exec(ctx) // each command's own error is read below
	out := map[string][]string{}
	for h, c := range q {
		if err := c.seq.Err(); err != nil && !errors.Is(err, redis.Nil) {
			return nil, redisFailure("", err)
		}
		if seq, err := c.seq.Int64(); err != nil || seq != snaps[h].Seq {
			continue // gone, or moved on
		}
		d, err := c.check()
		if err != nil {
			return nil, redisFailure("", err)
		}
		if len(d) > 0 {
			out[h] = d
		}
	}
	return out, nil
}

// readState reads a holder's hash (in a pipeline, or at once on a Tx).
func readState(ctx context.Context, c redis.Cmdable, h string) *redis.MapStringStringCmd {
	return c.HGetAll(ctx, cluster.Holder(h))
}
