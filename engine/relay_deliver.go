// The relay's delivery: what it hands to the sink (the Sink contract, each
// event with its stream and entry id so that one set aside keeps them), in
// stream and id order, then acknowledging and deleting what the sink has.

package engine

import (
	"cmp"
	"context"
	"fmt"
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
// MaxBatch events, each acknowledged and deleted before the next: a failed
// write leaves it and the rest pending. It returns the entries delivered.
//
// The sink applies a holder's events in seq order, and a holder's events
// all live in one stream, in seq order: so the entries go grouped by
// stream, each stream's in id order (a claim adds older entries of a
// stream after its newer ones), and a write never holds a later event of a
// holder than the next one.
func (r *Relay) deliver(ctx context.Context, batch []relayEntry) (int, error) {
	batch = streamOrder(batch)
	done := 0
	for len(batch) > 0 {
		n, events := 0, 0
		for ; n < len(batch); n++ {
			if batch[n].fields != nil {
				if events == r.o.MaxBatch {
					break
				}
				events++
			}
		}
		if err := r.write(ctx, batch[:n]); err != nil {
			// Read but not written: pending, read again from the PEL.
			for _, e := range batch {
				if s := r.streams[e.stream]; s != nil {
					s.fromPEL = true
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
// appear, each stream's entries in id order, without repeats (a claim may
// return an entry a read of the PEL did).
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
	return slices.CompactFunc(batch, func(a, b relayEntry) bool { return a.stream == b.stream && a.id == b.id })
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

// ackTimeout bounds the acknowledgement of a batch the sink has, which
// goes on after the relay's context ends.
const ackTimeout = 2 * time.Second

// write writes one batch to the sink, then deletes and acknowledges it. An
// entry deleted while pending (no fields) is not written to the sink.
func (r *Relay) write(ctx context.Context, batch []relayEntry) error {
	events := make([]stored.Entry, 0, len(batch))
	for _, e := range batch {
		if e.fields != nil {
			events = append(events, stored.ReadEntry(e.stream, e.id, e.fields))
		}
	}
	if len(events) > 0 {
		if err := r.sink.Write(ctx, events); err != nil {
			r.sinkDown.Store(true)
			return fmt.Errorf("relay: sink: %w", err)
		}
		r.sinkDown.Store(false)
	}
	ids := map[string][]string{}
	for _, e := range batch {
		ids[e.stream] = append(ids[e.stream], e.id)
	}
	// The sink has them: a stop arriving now must not leave them pending
	// to be delivered again, so the acknowledgement outlives ctx (bounded).
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
	defer cancel()
	// XDEL first, and XACK only once every XDEL succeeded: an entry
	// acknowledged and not deleted (a crash between the two, a failover
	// that passed on only the first, XDEL refused) would be in no pending
	// list, behind the group's last id, in its stream for good. One deleted
	// and still pending is read again, without fields, and acknowledged.
	for _, ack := range []bool{false, true} {
		pipe := r.rdb.Pipeline()
		for k, v := range ids {
			if ack {
				pipe.XAck(actx, k, r.o.Group, v...)
			} else {
				pipe.XDel(actx, k, v...)
			}
		}
		if _, err := pipe.Exec(actx); err != nil {
			// Committed but not acknowledged: they come back and the sink skips them.
			return fmt.Errorf("relay: acknowledge: %w", err)
		}
	}
	r.relayed.Add(int64(len(events)))
	r.batches.Add(1)
	return nil
}

// holdBackUnreplicated tells, with an error, that no replica of g's master
// confirmed in ReplicaTimeout that it has the entries got (WAIT): they are
// not delivered, but stay pending and are read again from the PEL.
func (r *Relay) holdBackUnreplicated(g *relayGroup, got []relayEntry) error {
	if g.wait == nil {
		return nil
	}
	n, err := g.wait.Result()
	if (err == nil && n >= 1) || len(got) == 0 {
		return nil
	}
	// Not on a replica yet: they stay pending, and this
	// consumer's pending entries are read again.
	for _, e := range got {
		if s := r.streams[e.stream]; s != nil {
			s.fromPEL, s.nextRead = true, time.Time{}
		}
	}
	for _, s := range g.due {
		s.fromPEL, s.nextRead = true, time.Time{}
	}
	delete(r.replicas, g.addr)
	if err == nil {
		err = fmt.Errorf("no replica confirmed within %v", r.o.ReplicaTimeout)
	}
	return fmt.Errorf("relay: WAIT on %s (%d entries held back): %w", g.addr, len(got), err)
}
