package engine

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/stored"
)

// outboxPage is how many entries Undelivered reads from an outbox at once.
const outboxPage = 1000

// Undelivered reads the seqs of holders' events still in their slots'
// outboxes: not read by a relay yet, or read and not yet acknowledged (the
// relay deletes an event only once the ledger committed it). Those are on
// their way to the ledger; an event the holder applied that is neither
// there nor in the ledger is lost. It reads the whole of those outboxes, in
// pages; a holder none of whose events is there is absent from the map.
//
// Errors: UNAVAILABLE.
func (e *Engine) Undelivered(ctx context.Context, holders []string) (map[string]map[int64]bool, error) {
	want := map[string]bool{}
	var outboxes []string
	for _, h := range holders {
		if !want[h] {
			want[h] = true
			outboxes = append(outboxes, cluster.Outbox(cluster.HolderSlot(h)))
		}
	}
	out := map[string]map[int64]bool{}
	err := readOutboxes(ctx, e.rdb, outboxes, func(h string, seq int64) {
		if !want[h] {
			return
		}
		if out[h] == nil {
			out[h] = map[int64]bool{}
		}
		out[h][seq] = true
	})
	if err != nil {
		return nil, redisFailure("", err)
	}
	return out, nil
}

// readOutboxes reads the whole of the outboxes, in pages of outboxPage
// entries, a page of each in one pipeline, and hands the holder and seq of
// each event to each.
func readOutboxes(ctx context.Context, rdb redis.Cmdable, outboxes []string, each func(holder string, seq int64)) error {
	from := map[string]string{} // outbox -> where its next page starts
	for _, k := range outboxes {
		from[k] = "-"
	}
	for len(from) > 0 {
		pipe := rdb.Pipeline()
		cmds := map[string]*redis.XMessageSliceCmd{}
		for k, start := range from {
			cmds[k] = pipe.XRangeN(ctx, k, start, "+", outboxPage)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
		for k, c := range cmds {
			msgs := c.Val()
			for _, m := range msgs {
				if h, seq, ok := stored.HolderSeq(m.Values); ok {
					each(h, seq)
				}
			}
			if len(msgs) < outboxPage {
				delete(from, k)
			} else {
				from[k] = "(" + msgs[len(msgs)-1].ID
			}
		}
	}
	return nil
}
