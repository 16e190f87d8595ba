package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Group commit: concurrent Apply calls share pipelines. A call joins the
// queue of its holder's master; while fewer than groupSenders pipelines of
// that queue are in flight, a sender takes everything queued (up to
// groupMax) and sends it as one pipeline, one round trip. An idle engine
// sends a call at once, alone; under load, calls that arrive while
// pipelines are in flight go together in the next, which saves each one its
// own writes and reads on both sides of the connection (the daemon's
// profile: docs/benchmarks.md). Each call stays atomic on its own, as in
// ApplyBatch. A queue per master: a master that does not answer (paused,
// failing over) holds its own calls only, never the senders of the others.
const (
	groupSenders = 4
	groupMax     = 128
)

// group is the queues of calls waiting for a pipeline, one per master.
type group struct {
	mu     sync.Mutex
	queues map[string]*groupQueue // by master address; "" when not a cluster
	// calls and pipelines sent, for tests and benchmarks.
	calls, pipelines atomic.Int64
}

// groupQueue is one master's calls waiting, and its senders.
type groupQueue struct {
	calls   []*grouped
	senders int
}

// grouped is one call in the queue and, once done is closed, its outcome.
type grouped struct {
	ctx  context.Context
	c    call
	out  Outcome
	done chan struct{}
}

// masterOf is the address of the master of c's holder as the cluster client
// last saw the slot map ("" on a single server or Sentinel, or when the map
// cannot be read: those calls share one queue).
func (e *Engine) masterOf(ctx context.Context, c call) string {
	cc, ok := e.rdb.(*redis.ClusterClient)
	if !ok {
		return ""
	}
	m, err := cc.MasterForKey(ctx, c.keys[keyHolder])
	if err != nil {
		return ""
	}
	return m.Options().Addr
}

// applyGrouped runs c in a shared pipeline. When ctx ends first, the answer
// is the one a cut-short call gets (UNAVAILABLE: retry with the same id), as
// the call may still run.
func (e *Engine) applyGrouped(ctx context.Context, c call) Outcome {
	g := &grouped{ctx: ctx, c: c, done: make(chan struct{})}
	addr := e.masterOf(ctx, c)
	gr := &e.group
	gr.mu.Lock()
	if gr.queues == nil {
		gr.queues = map[string]*groupQueue{}
	}
	q := gr.queues[addr]
	if q == nil {
		q = &groupQueue{}
		gr.queues[addr] = q
	}
	q.calls = append(q.calls, g)
	start := q.senders < groupSenders
	if start {
		q.senders++
	}
	gr.mu.Unlock()
	if start {
		go e.sendGroups(q)
	}
	select {
	case <-g.done:
		return g.out
	case <-ctx.Done():
		return Outcome{Err: redisFailure(c.n.ID, ctx.Err())}
	}
}

// sendGroups sends what q holds until it is empty. (An empty queue stays:
// one per master address ever seen, and an idle engine's call allocates no
// new one.)
func (e *Engine) sendGroups(q *groupQueue) {
	gr := &e.group
	for {
		gr.mu.Lock()
		n := min(len(q.calls), groupMax)
		if n == 0 {
			q.senders--
			gr.mu.Unlock()
			return
		}
		batch := q.calls[:n:n]
		q.calls = q.calls[n:]
		gr.mu.Unlock()
		e.sendGroup(batch)
	}
}

// sendGroup sends one pipeline of the calls whose callers still wait, under
// the latest of their deadlines.
func (e *Engine) sendGroup(batch []*grouped) {
	var live []*grouped
	var deadline time.Time
	forever := false
	for _, g := range batch {
		if err := g.ctx.Err(); err != nil { // never sent
			// Its caller answers this itself, unless it finds both ready in
			// its select and takes this one.
			g.out = Outcome{Err: redisFailure(g.c.n.ID, err)}
			close(g.done)
			continue
		}
		live = append(live, g)
		if d, ok := g.ctx.Deadline(); !ok {
			forever = true
		} else if d.After(deadline) {
			deadline = d
		}
	}
	if len(live) == 0 {
		return
	}
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if !forever {
		ctx, cancel = context.WithDeadline(ctx, deadline)
	}
	defer cancel()
	calls := make([]call, len(live))
	pending := make([]int, len(live))
	for i, g := range live {
		calls[i], pending[i] = g.c, i
	}
	out := make([]Outcome, len(live))
	e.run(ctx, calls, pending, out)
	e.group.calls.Add(int64(len(live)))
	e.group.pipelines.Add(1)
	for i, g := range live {
		g.out = out[i]
		close(g.done)
	}
}
