// The relay's reading: which streams a round reads, grouped by master, each
// master's reads and claims of entries stuck with dead consumers in one
// pipeline, and what a stream's read error means.

package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// relayEntry is one entry read from a stream.
type relayEntry struct {
	stream, id string
	fields     map[string]string // nil: deleted while pending
}

// relayNode is a connection pool to one master: a cluster's node client, or
// the single server.
type relayNode interface {
	Pipeline() redis.Pipeliner
	Info(ctx context.Context, section ...string) *redis.StringCmd
}

// relayGroup is what a round reads from one master, in one pipeline.
type relayGroup struct {
	node      relayNode
	addr      string
	replicas  int // connected replicas of the master; -1: unknown, ask INFO
	due       []*relayStream
	claimKeys []string

	reads  []*redis.XStreamSliceCmd
	claims []*redis.XAutoClaimCmd
	wait   *redis.IntCmd // nil when the master has no replica
	err    error         // INFO failed: nothing was read
}

// readGroup sends a master's pipeline: the reads and claims of its streams,
// then WAIT 1 if it has a replica. It asks the master how many replicas it
// has (INFO replication) when the relay does not know.
func (r *Relay) readGroup(ctx context.Context, g *relayGroup, count int64) {
	if g.replicas < 0 {
		info, err := g.node.Info(ctx, "replication").Result()
		if err != nil {
			g.err = err
			return
		}
		g.replicas = connectedReplicas(info)
	}
	pipe := g.node.Pipeline()
	g.reads = make([]*redis.XStreamSliceCmd, len(g.due))
	for i, s := range g.due {
		id := ">"
		if s.fromPEL {
			id = "0"
		}
		g.reads[i] = pipe.XReadGroup(ctx, &redis.XReadGroupArgs{Group: r.o.Group, Consumer: r.o.Consumer,
			Streams: []string{s.key, id}, Count: count, Block: -1})
	}
	for _, k := range g.claimKeys {
		g.claims = append(g.claims, pipe.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: k, Group: r.o.Group,
			Consumer: r.o.Consumer, MinIdle: r.o.ClaimIdle, Start: "0-0", Count: count}))
	}
	if g.replicas > 0 {
		// The client's read timeout bounds it too (3s by default).
		g.wait = redis.NewIntCmd(ctx, "wait", 1, r.o.ReplicaTimeout.Milliseconds())
		_ = pipe.Process(ctx, g.wait)
	}
	_, _ = pipe.Exec(ctx) // errors are read per command
}

// connectedReplicas reads connected_slaves from INFO replication.
func connectedReplicas(info string) int {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "connected_slaves:"); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

func entryOf(stream string, m redis.XMessage) relayEntry {
	e := relayEntry{stream: stream, id: m.ID}
	if m.Values != nil {
		e.fields = make(map[string]string, len(m.Values))
		for k, v := range m.Values {
			s, _ := v.(string)
			e.fields[k] = s
		}
	}
	return e
}

// handleStreamErr reacts to a stream's read error and reports whether it is
// a failure of the round. NOGROUP means the stream or its group is gone (a
// failover lost them before they reached a replica): recreate the group from
// the first entry (the sink skips what it has), or forget a stream that no
// longer exists (discovery finds it again).
//
// ASK, TRYAGAIN (the slot is half-way through a reshard: its keys answer on
// the other master until the slot is given to it) and WRONGTYPE (the key is
// not a stream) are the stream's own: it alone waits, re-read later, while
// the round goes on for the others.
func (r *Relay) handleStreamErr(ctx context.Context, key string, err error) bool {
	s := r.streams[key]
	if s != nil {
		s.fromPEL = true // a read whose answer was lost may have taken entries
	}
	for _, p := range []string{"ASK", "TRYAGAIN", "WRONGTYPE"} {
		if redis.HasErrorPrefix(err, p) {
			wait := r.o.MaxIdle
			if s != nil {
				s.idle = min(max(2*s.idle, r.o.PollInterval), r.o.MaxIdle)
				s.nextRead, wait = time.Now().Add(s.idle), s.idle
			}
			r.o.Logger.Warn("relay: stream cannot be read here, read again later", "stream", key, "err", err, "in", wait)
			return false
		}
	}
	if !redis.HasErrorPrefix(err, "NOGROUP") {
		return true
	}
	if e := r.rdb.XGroupCreate(ctx, key, r.o.Group, "0").Err(); e != nil && !redis.HasErrorPrefix(e, "BUSYGROUP") {
		delete(r.streams, key)
		r.nstreams.Store(int64(len(r.streams)))
		return false
	}
	r.o.Logger.Warn("relay: consumer group was missing, recreated", "stream", key)
	return false
}

// replyError tells an error Redis answered to one command (WRONGTYPE, ASK,
// NOGROUP...) from a failure to reach it.
func replyError(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

// dueStreams lists the streams whose turn has come, and tells whether it
// is time to claim entries stuck with dead consumers.
func (r *Relay) dueStreams(now time.Time) (due []*relayStream, claim bool) {
	for _, s := range r.streams {
		if !now.Before(s.nextRead) {
			due = append(due, s)
		}
	}
	return due, now.Sub(r.lastClaim) >= r.o.ClaimIdle/2
}

// groupByMaster sorts the due streams, and with claim every stream not known
// empty, by the master that holds them: one group per master, one pipeline
// each. It returns the first error met (a stream whose master is not known
// is left out of the round).
func (r *Relay) groupByMaster(ctx context.Context, due []*relayStream, claim bool, now time.Time) ([]*relayGroup, error) {
	var firstErr error
	groups := map[relayNode]*relayGroup{}
	var order []*relayGroup
	group := func(key string) *relayGroup {
		var node relayNode = r.rdb
		if c, ok := r.rdb.(*redis.ClusterClient); ok {
			n, err := c.MasterForKey(ctx, key)
			if err != nil {
				if r.handleStreamErr(ctx, key, err) && firstErr == nil {
					firstErr = fmt.Errorf("relay: master of %s: %w", key, err)
				}
				return nil
			}
			node = n
		}
		g := groups[node]
		if g == nil {
			g = &relayGroup{node: node, replicas: -1}
			if c, ok := node.(*redis.Client); ok {
				g.addr = c.Options().Addr
			}
			if n, ok := r.replicas[g.addr]; ok {
				g.replicas = n
			}
			groups[node] = g
			order = append(order, g)
		}
		return g
	}
	for _, s := range due {
		if g := group(s.key); g != nil {
			g.due = append(g.due, s)
		}
	}
	if claim {
		r.lastClaim = now
		for k, s := range r.streams {
			if s.empty {
				continue // no entry, so none pending with a dead consumer
			}
			if g := group(k); g != nil {
				g.claimKeys = append(g.claimKeys, k)
			}
		}
	}
	return order, firstErr
}

// readGroups sends every master's pipeline, the masters at once.
func (r *Relay) readGroups(ctx context.Context, groups []*relayGroup, count int64) {
	var wg sync.WaitGroup
	for _, g := range groups {
		wg.Go(func() { r.readGroup(ctx, g, count) })
	}
	wg.Wait()
}

// collect takes the entries a master's pipeline read and claimed, and sets
// when each of its streams is read next. It returns the first error met; a
// stream whose read failed gives no entries.
func (r *Relay) collect(ctx context.Context, g *relayGroup, count int64, now time.Time) ([]relayEntry, error) {
	var firstErr error
	if g.err != nil {
		for _, s := range g.due {
			s.fromPEL = true
		}
		return nil, fmt.Errorf("relay: replicas of %s: %w", g.addr, g.err)
	}
	r.replicas[g.addr] = g.replicas
	ceiling, watched := r.o.MaxIdle, false
	if w := r.watches[g.addr]; w != nil && w.live.Load() {
		ceiling, watched = r.o.WatchedIdle, true
	}
	var got []relayEntry
	for i, s := range g.due {
		res, err := g.reads[i].Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			if r.handleStreamErr(ctx, s.key, err) && firstErr == nil {
				firstErr = fmt.Errorf("relay read %s: %w", s.key, err)
			}
			continue
		}
		n := 0
		for _, st := range res {
			for _, m := range st.Messages {
				got = append(got, entryOf(s.key, m))
				n++
			}
		}
		if n > 0 {
			s.empty = false
		}
		switch {
		case watched && !s.fromPEL && int64(n) < count:
			// Read to the end: the next write comes with a notice.
			s.idle, s.nextRead = ceiling, now.Add(ceiling)
		case n > 0:
			s.idle, s.nextRead = 0, time.Time{}
		case s.fromPEL:
			s.fromPEL = false // own backlog done: new entries next
			r.again = true
		default:
			s.idle = min(max(2*s.idle, r.o.PollInterval), ceiling)
			s.nextRead = now.Add(s.idle)
		}
	}
	for i, c := range g.claims {
		msgs, _, err := c.Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			if r.handleStreamErr(ctx, g.claimKeys[i], err) && firstErr == nil {
				firstErr = fmt.Errorf("relay claim %s: %w", g.claimKeys[i], err)
			}
			continue
		}
		for _, m := range msgs {
			got = append(got, entryOf(g.claimKeys[i], m))
		}
		r.claimed.Add(int64(len(msgs)))
	}
	return got, firstErr
}
