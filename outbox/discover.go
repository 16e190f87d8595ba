// The relay's discovery of outbox streams: finding the slots' outboxes it does
// not follow yet, and measuring backlog and lag.

package outbox

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/internal/worker"
)

// discover finds outbox streams not followed yet, and measures backlog and
// lag. It probes every slot's outbox key with EXISTS in
// pipelines (16384 O(1) commands, whatever the size of the data set) rather
// than SCAN, which would walk every key of every holder. While every master
// sends notices it only measures, and only the streams behind: a notice
// names a new stream, and a written stream is read at the next round. full
// (after notices may have been lost) probes and measures everything, and
// makes every stream due.
func (r *Relay) discover(ctx context.Context, full bool) error {
	watched := r.allWatched()
	if full || !watched {
		if err := r.probeSlots(ctx); err != nil {
			return err
		}
	}
	if full {
		r.fromHeads(ctx)
	}
	r.nstreams.Store(int64(len(r.streams)))
	clear(r.replicas) // masters gain and lose replicas: ask again
	return r.measure(ctx, full || !watched)
}

// probeSlots follows every outbox stream that exists and is not followed yet.
func (r *Relay) probeSlots(ctx context.Context) error {
	for lo := 0; lo < cluster.Slots; lo += worker.SlotsPerPipeline {
		pipe := r.rdb.Pipeline()
		cmds := make([]*redis.IntCmd, 0, worker.SlotsPerPipeline)
		keys := make([]string, 0, worker.SlotsPerPipeline)
		for slot := lo; slot < min(lo+worker.SlotsPerPipeline, cluster.Slots); slot++ {
			k := cluster.Outbox(slot)
			if _, ok := r.streams[k]; ok {
				continue
			}
			keys = append(keys, k)
			cmds = append(cmds, pipe.Exists(ctx, k))
		}
		if len(cmds) == 0 {
			continue
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("relay discover: %w", err)
		}
		for i, c := range cmds {
			if c.Val() == 1 {
				r.follow(keys[i])
			}
		}
	}
	return nil
}

// follow adds a stream to those the relay reads, due at once.
func (r *Relay) follow(key string) {
	r.streams[key] = &relayStream{key: key}
}

// measure reads backlog (entries left in the streams: delivered ones are
// removed) and lag (age of the oldest entry left), from the streams behind,
// or from all (without notices, a write to a stream tells nothing). The
// other streams' entries are read by the next round: their lag is about how
// long the oldest event of the last write waited for it, known without a
// command, and the lag is at least that. Measuring every written stream
// instead would cost two commands per stream written every
// DiscoverInterval, as many as the reads themselves.
func (r *Relay) measure(ctx context.Context, all bool) error {
	waited := r.waited
	r.waited = 0
	var ss []*relayStream
	for _, s := range r.streams {
		if all || s.behind {
			ss = append(ss, s)
		}
	}
	if len(ss) == 0 {
		r.backlog.Store(0)
		r.lag.Store(waited)
		return nil
	}
	pipe := r.rdb.Pipeline()
	lens := make([]*redis.IntCmd, 0, len(ss))
	firsts := make([]*redis.XMessageSliceCmd, 0, len(ss))
	for _, s := range ss {
		lens = append(lens, pipe.XLen(ctx, s.key))
		firsts = append(firsts, pipe.XRangeN(ctx, s.key, s.start(), "+", 1))
	}
	_, _ = pipe.Exec(ctx) // errors are read per command
	var backlog int64
	oldest := int64(0)
	for i := range lens {
		// A stream's own error (WRONGTYPE) is left to its reads; one of
		// the connection fails the measure.
		for _, err := range []error{lens[i].Err(), firsts[i].Err()} {
			if err != nil && !errors.Is(err, redis.Nil) && !replyError(err) {
				return fmt.Errorf("relay measure: %w", err)
			}
		}
		backlog += max(0, lens[i].Val()-ss[i].untrimmed)
		if lens[i].Err() == nil && lens[i].Val() <= ss[i].untrimmed {
			ss[i].behind = false // a write to it comes with a notice, or a poll finds it
		}
		if msgs := firsts[i].Val(); len(msgs) > 0 {
			if ms := idMs(msgs[0].ID); oldest == 0 || ms < oldest {
				oldest = ms
			}
		}
	}
	r.backlog.Store(backlog)
	if oldest != 0 {
		waited = max(waited, time.Now().UnixMilli()-oldest)
	}
	r.lag.Store(waited)
	return nil
}

// idMs reads the time part of a stream entry id.
func idMs(id string) int64 {
	ms, _ := strconv.ParseInt(strings.SplitN(id, "-", 2)[0], 10, 64)
	return ms
}
