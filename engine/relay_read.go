// The relay's reading: which streams a round reads, grouped by master, each
// master's reads and claims of entries stuck with dead consumers in one
// pipeline, and what a stream's read error means.

package engine

import (
	"context"
	"strconv"
	"strings"

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
func (r *Relay) handleStreamErr(ctx context.Context, key string, err error) bool {
	if !redis.HasErrorPrefix(err, "NOGROUP") {
		return true
	}
	if e := r.rdb.XGroupCreate(ctx, key, r.o.Group, "0").Err(); e != nil && !redis.HasErrorPrefix(e, "BUSYGROUP") {
		delete(r.streams, key)
		r.nstreams.Store(int64(len(r.streams)))
		return false
	}
	r.o.Logger.Warn("relay: consumer group was missing, recreated", "stream", key)
	if s := r.streams[key]; s != nil {
		s.fromPEL = true
	}
	return false
}
