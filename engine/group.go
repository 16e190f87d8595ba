package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Group commit: concurrent Apply calls share pipelines. A call joins a queue;
// while fewer than groupSenders pipelines are in flight, a sender takes
// everything queued (up to groupMax) and sends it as one pipeline, one round
// trip per master. An idle engine sends a call at once, alone; under load,
// calls that arrive while pipelines are in flight go together in the next,
// which saves each one its own writes and reads on both sides of the
// connection (the daemon's profile: docs/benchmarks.md). Each call stays
// atomic on its own, as in ApplyBatch.
const (
	groupSenders = 4
	groupMax     = 128
)

// group is the queue of calls waiting for a pipeline.
type group struct {
	mu      sync.Mutex
	queue   []*grouped
	senders int
	// calls and pipelines sent, for tests and benchmarks.
	calls, pipelines atomic.Int64
}

// grouped is one call in the queue and, once done is closed, its outcome.
type grouped struct {
	ctx  context.Context
	c    call
	out  Outcome
	done chan struct{}
}

// applyGrouped runs c in a shared pipeline. When ctx ends first, the answer
// is the one a cut-short call gets (UNAVAILABLE: retry with the same id), as
// the call may still run.
func (e *Engine) applyGrouped(ctx context.Context, c call) Outcome {
	g := &grouped{ctx: ctx, c: c, done: make(chan struct{})}
	q := &e.group
	q.mu.Lock()
	q.queue = append(q.queue, g)
	start := q.senders < groupSenders
	if start {
		q.senders++
	}
	q.mu.Unlock()
	if start {
		go e.sendGroups()
	}
	select {
	case <-g.done:
		return g.out
	case <-ctx.Done():
		return Outcome{Err: redisFailure(c.n.ID, ctx.Err())}
	}
}

// sendGroups sends what is queued until the queue is empty.
func (e *Engine) sendGroups() {
	q := &e.group
	for {
		q.mu.Lock()
		n := min(len(q.queue), groupMax)
		if n == 0 {
			q.senders--
			q.mu.Unlock()
			return
		}
		batch := q.queue[:n:n]
		q.queue = q.queue[n:]
		q.mu.Unlock()
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
