// The relay's reading: which streams a round reads, grouped by master, each
// master's reads in one pipeline, and what a stream's read error means.

package outbox

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
)

// relayEntry is one entry read from a stream.
type relayEntry struct {
	stream, id string
	fields     map[string]string
}

// relayNode is a connection pool to one master: a cluster's node client, or
// the single server.
type relayNode interface {
	Pipeline() redis.Pipeliner
	Info(ctx context.Context, section ...string) *redis.StringCmd
}

// relayGroup is what a round reads from one master, in one pipeline.
type relayGroup struct {
	node     relayNode
	addr     string
	replicas int // connected replicas of the master; -1: unknown, ask INFO
	due      []*relayStream

	reads []*redis.XMessageSliceCmd
	wait  *redis.IntCmd // nil when the master has no replica
	err   error         // INFO failed: nothing was read
}

// readGroup sends a master's pipeline: the reads of its streams, each from
// its head or after what this relay delivered and did not remove yet, then, if it has a replica, a write of the relay's own
// and WAIT 1. It asks the master how many replicas it has (INFO
// replication) when the relay does not know.
func (r *Relay) readGroup(ctx context.Context, g *relayGroup, count int64) {
	if g.replicas < 0 {
		info, err := g.node.Info(ctx, "replication").Result()
		if err != nil {
			g.err = err
			return
		}
		g.replicas, _ = strconv.Atoi(cluster.InfoField(info, "connected_slaves"))
	}
	pipe := g.node.Pipeline()
	g.reads = make([]*redis.XMessageSliceCmd, len(g.due))
	for i, s := range g.due {
		g.reads[i] = pipe.XRangeN(ctx, s.key, s.start(), "+", count)
	}
	if g.replicas > 0 && len(g.due) > 0 {
		// A read replicates nothing, and WAIT after Redis 7.0 waits only
		// for what the connection's last replicated command had: this
		// write, after the reads, makes it wait for every entry read.
		pipe.Set(ctx, waitMark(g.due[0].key), "1", time.Minute)
		// The client's read timeout bounds it too (3s by default).
		g.wait = redis.NewIntCmd(ctx, "wait", 1, r.o.ReplicaTimeout.Milliseconds())
		_ = pipe.Process(ctx, g.wait)
	}
	_, _ = pipe.Exec(ctx) // errors are read per command
}

// start is where the stream's next read starts: after what this relay
// delivered and did not remove yet, or at the head.
func (s *relayStream) start() string {
	if s.from == "" {
		return "-"
	}
	return "(" + s.from
}

// waitMark names the key a read pipeline writes before its WAIT: in the
// slot of the outbox key (the same master), and outside the prefixes of the
// change notices (cluster.SlotKeyPrefixes), so that writing it tells no
// worker anything.
func waitMark(outbox string) string {
	return "atomledger-relay-wait{" + cluster.HashTag(outbox) + "}"
}

func entryOf(stream string, m redis.XMessage) relayEntry {
	e := relayEntry{stream: stream, id: m.ID, fields: make(map[string]string, len(m.Values))}
	for k, v := range m.Values {
		s, _ := v.(string)
		e.fields[k] = s
	}
	return e
}

// handleStreamErr reacts to a stream's read error and reports whether it is
// a failure of the round. ASK, TRYAGAIN (the slot is half-way through a
// reshard: its keys answer on the other master until the slot is given to
// it) and WRONGTYPE (the key is not a stream) are the stream's own: it alone
// waits, read again later, while the round goes on for the others.
func (r *Relay) handleStreamErr(key string, err error) bool {
	s := r.streams[key]
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
	return true
}

// replyError tells an error Redis answered to one command (WRONGTYPE, ASK,
// NOGROUP...) from a failure to reach it.
func replyError(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

// dueStreams lists the streams whose turn has come.
func (r *Relay) dueStreams(now time.Time) (due []*relayStream) {
	for _, s := range r.streams {
		if !now.Before(s.nextRead) {
			due = append(due, s)
		}
	}
	return due
}

// groupByMaster sorts the due streams by the master that holds them: one
// group per master, one pipeline each. It returns the first error met (a
// stream whose master is not known is left out of the round).
func (r *Relay) groupByMaster(ctx context.Context, due []*relayStream) ([]*relayGroup, error) {
	var firstErr error
	groups := map[relayNode]*relayGroup{}
	var order []*relayGroup
	for _, s := range due {
		var node relayNode = r.rdb
		if c, ok := r.rdb.(*redis.ClusterClient); ok {
			n, err := c.MasterForKey(ctx, s.key)
			if err != nil {
				if r.handleStreamErr(s.key, err) && firstErr == nil {
					firstErr = fmt.Errorf("relay: master of %s: %w", s.key, err)
				}
				continue
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
		g.due = append(g.due, s)
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

// collect takes the entries a master's pipeline read, and sets when each
// of its streams is read next. It returns the first error met; a stream
// whose read failed gives no entries.
func (r *Relay) collect(g *relayGroup, count int64, now time.Time) ([]relayEntry, error) {
	if g.err != nil {
		return nil, fmt.Errorf("relay: replicas of %s: %w", g.addr, g.err)
	}
	var firstErr error
	r.replicas[g.addr] = g.replicas
	ceiling, watched := r.o.MaxIdle, false
	if w := r.watches[g.addr]; w != nil && w.Live() {
		ceiling, watched = r.o.WatchedIdle, true
	}
	var got []relayEntry
	for i, s := range g.due {
		msgs, err := g.reads[i].Result()
		if err != nil {
			s.behind = true
			if r.handleStreamErr(s.key, err) && firstErr == nil {
				firstErr = fmt.Errorf("relay read %s: %w", s.key, err)
			}
			continue
		}
		for _, m := range msgs {
			got = append(got, entryOf(s.key, m))
		}
		n := int64(len(msgs))
		s.behind = n >= count
		switch {
		case watched && n < count:
			// Read to the end: the next write comes with a notice. The
			// safety net's read comes within the ceiling, on a grid of an
			// eighth of it, so that the idle streams are read together,
			// a pipeline per master, not each in a round of its own.
			at := now.Add(ceiling)
			// at.Truncate alone would drop the monotonic clock reading, and
			// a step of the wall clock would move the read.
			s.idle, s.nextRead = ceiling, at.Add(-at.Sub(at.Truncate(ceiling/8)))
		case n > 0:
			s.idle, s.nextRead = 0, time.Time{}
		default:
			s.idle = min(max(2*s.idle, r.o.PollInterval), ceiling)
			s.nextRead = now.Add(s.idle)
		}
	}
	return got, firstErr
}
