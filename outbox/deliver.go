// The relay's delivery: what it hands to the sink (the Sink contract, each
// event with its stream and entry id so that one set aside keeps them), in
// stream and id order, then removing from the streams what the sink has.

package outbox

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/atomledger/atomledger/stored"
)

// Sink receives outbox events, each as an entry of its stream: where it
// was read and the event, read by stored.ReadEntry (docs/events.md). Write
// returns nil only once the whole batch is durable (an event the sink
// cannot apply, or an entry that is not an event, recorded as set aside
// with its stream and entry id, not lost): the relay deletes the events
// from Redis after that, never before. It must take the same event twice,
// and events of a holder out of order, without harm: a relay re-delivers
// after any failure. ledger.Ledger is one.
type Sink interface {
	Write(ctx context.Context, batch []stored.Entry) error
}

// deliver writes what a round read to the sink, in writes of at most
// MaxBatch events, one after the other: a failed write leaves it and the
// rest to be read again. It returns the entries delivered.
//
// The sink applies a holder's events in seq order, and a holder's events
// all live in one stream, in seq order: so the entries go grouped by
// stream, each stream's in id order, and a write never holds a later event
// of a holder than the next one.
func (r *Relay) deliver(ctx context.Context, batch []relayEntry) (int, error) {
	batch = streamOrder(batch)
	done := 0
	for len(batch) > 0 {
		n := min(len(batch), r.o.MaxBatch)
		if err := r.write(ctx, batch[:n]); err != nil {
			for _, e := range batch {
				if s := r.streams[e.stream]; s != nil {
					s.nextRead, s.behind = time.Time{}, true // read again
				}
			}
			return done, err
		}
		done += n
		batch = batch[n:]
	}
	return done, nil
}

// streamOrder groups entries by stream, in the order the streams first
// appear, each stream's entries in id order.
func streamOrder(batch []relayEntry) []relayEntry {
	first := map[string]int{}
	for i, e := range batch {
		if _, ok := first[e.stream]; !ok {
			first[e.stream] = i
		}
	}
	slices.SortStableFunc(batch, func(a, b relayEntry) int {
		if c := cmp.Compare(first[a.stream], first[b.stream]); c != 0 {
			return c
		}
		return compareIDs(a.id, b.id)
	})
	return batch
}

// compareIDs orders stream entry ids ("<ms>-<seq>") as Redis does.
func compareIDs(a, b string) int {
	am, as, _ := strings.Cut(a, "-")
	bm, bs, _ := strings.Cut(b, "-")
	x, _ := strconv.ParseUint(am, 10, 64)
	y, _ := strconv.ParseUint(bm, 10, 64)
	if c := cmp.Compare(x, y); c != 0 {
		return c
	}
	x, _ = strconv.ParseUint(as, 10, 64)
	y, _ = strconv.ParseUint(bs, 10, 64)
	return cmp.Compare(x, y)
}

// trimTimeout bounds the removal of what the sink has, which goes on after
// the relay's context ends.
const trimTimeout = 2 * time.Second

// write writes one batch to the sink; the next reads of its streams start
// after it, and removeDelivered removes it. A batch holds every entry of a
// stream from where its read started (a stream's entries go in id order),
// so the removal takes only entries the sink has.
func (r *Relay) write(ctx context.Context, batch []relayEntry) error {
	events := make([]stored.Entry, len(batch))
	oldest := int64(math.MaxInt64)
	for i, e := range batch {
		events[i] = stored.ReadEntry(e.stream, e.id, e.fields)
		oldest = min(oldest, idMs(e.id))
	}
	if err := r.sink.Write(ctx, events); err != nil {
		r.sinkDown.Store(true)
		return fmt.Errorf("relay: sink: %w", err)
	}
	r.sinkDown.Store(false)
	for _, e := range batch {
		if s := r.streams[e.stream]; s != nil {
			s.from, s.trim = e.id, nextID(e.id)
			s.untrimmed++
		}
	}
	r.batches.Add(1)
	r.waited = time.Now().UnixMilli() - oldest
	return nil
}

// removeDelivered removes from their streams what the sink has (XTRIM
// MINID, one per stream): from every stream with all, else from those
// last trimmed TrimInterval ago or more. The sink has it: a stop arriving
// now must not leave it to be delivered again, so the removal outlives ctx
// (bounded). If it fails, the streams are read again from their heads.
func (r *Relay) removeDelivered(ctx context.Context, now time.Time, all bool) error {
	var ss []*relayStream
	for _, s := range r.streams {
		if s.trim != "" && (all || now.Sub(s.trimmed) >= r.o.TrimInterval) {
			ss = append(ss, s)
		}
	}
	if len(ss) == 0 {
		return nil
	}
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), trimTimeout)
	defer cancel()
	pipe := r.rdb.Pipeline()
	for _, s := range ss {
		pipe.XTrimMinID(tctx, s.key, s.trim)
	}
	if _, err := pipe.Exec(tctx); err != nil {
		// Committed but maybe not removed: read again, and the sink skips them.
		for _, s := range ss {
			s.readFromHead()
			s.nextRead = time.Time{}
		}
		return fmt.Errorf("relay: remove delivered events: %w", err)
	}
	for _, s := range ss {
		r.relayed.Add(s.untrimmed)
		// The stream's head is now after what was delivered: read from it
		// (a stream replaced since, whose ids may be lower, is read whole).
		s.from, s.trim, s.untrimmed, s.trimmed = "", "", 0, now
	}
	return nil
}

// nextID is the stream entry id right after id: XTRIM MINID keeps it and
// what follows.
func nextID(id string) string {
	ms, seq, _ := strings.Cut(id, "-")
	n, _ := strconv.ParseUint(seq, 10, 64)
	if n == math.MaxUint64 {
		m, _ := strconv.ParseUint(ms, 10, 64)
		return strconv.FormatUint(m+1, 10) + "-0"
	}
	return ms + "-" + strconv.FormatUint(n+1, 10)
}

// holdBackUnreplicated tells, with an error, that no replica of g's master
// confirmed in ReplicaTimeout that it has the entries got (WAIT): they are
// not delivered, but stay in their streams, read again.
func (r *Relay) holdBackUnreplicated(g *relayGroup, got []relayEntry) error {
	if g.wait == nil {
		return nil
	}
	n, err := g.wait.Result()
	if (err == nil && n >= 1) || len(got) == 0 {
		return nil
	}
	for _, s := range g.due {
		s.nextRead, s.behind = time.Time{}, true
	}
	delete(r.replicas, g.addr)
	if err == nil {
		err = fmt.Errorf("no replica confirmed within %v", r.o.ReplicaTimeout)
	}
	return fmt.Errorf("relay: WAIT on %s (%d entries held back): %w", g.addr, len(got), err)
}
