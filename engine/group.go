package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Group commit: concurrent Apply calls share pipelines, and so do the steps
// of transfers (their runs and the one-payer path's reads of its payees). A
// call joins the queue of its holder's master (a plain request, that of its
// key's); while fewer than groupSenders pipelines of
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

// grouped is one entry of a queue, a call or plain requests (rs, sent in
// this order in one pipeline), and, once done is closed, what it got: out
// for a call, got for the requests.
type grouped struct {
	ctx  context.Context
	c    call
	rs   []req
	out  Outcome
	got  []sent
	done chan struct{}
}

// masterOf is the address of the master of key as the cluster client last
// saw the slot map ("" on a single server or Sentinel, or when the map
// cannot be read: those share one queue).
func (e *Engine) masterOf(ctx context.Context, key string) string {
	cc, ok := e.rdb.(*redis.ClusterClient)
	if !ok {
		return ""
	}
	m, err := cc.MasterForKey(ctx, key)
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
	e.enqueue(ctx, g, c.keys[keyHolder])
	return g.outcome(ctx)
}

// runGrouped runs calls in shared pipelines, as applyGrouped does one, and
// sets out.
func (e *Engine) runGrouped(ctx context.Context, calls []call, out []Outcome) {
	gs := make([]grouped, len(calls))
	for i, c := range calls {
		gs[i] = grouped{ctx: ctx, c: c, done: make(chan struct{})}
		e.enqueue(ctx, &gs[i], c.keys[keyHolder])
	}
	for i := range gs {
		out[i] = gs[i].outcome(ctx)
	}
}

// answered waits for g's answer and tells whether it came, before ctx
// ended or by the time that is seen: an answer already in is never dropped
// for an ended context (a select would pick either at random), so that a
// caller who waited for another answer first still reads this one.
func (g *grouped) answered(ctx context.Context) bool {
	select {
	case <-g.done:
		return true
	case <-ctx.Done():
		select {
		case <-g.done:
			return true
		default:
			return false
		}
	}
}

// outcome waits for g's call, or for ctx to end.
func (g *grouped) outcome(ctx context.Context) Outcome {
	if g.answered(ctx) {
		return g.out
	}
	return Outcome{Err: redisFailure(g.c.n.ID, ctx.Err())}
}

// submitGrouped sends plain requests in shared pipelines, as submit sends
// them in one of their own.
func (e *Engine) submitGrouped(ctx context.Context, reqs []req) []sent {
	return e.submitSets(ctx, apart(nil, reqs)...)
}

// apart appends to sets each of reqs as a set of its own.
func apart(sets [][]req, reqs []req) [][]req {
	for i := range reqs {
		sets = append(sets, reqs[i:i+1])
	}
	return sets
}

// submitSets sends sets of plain requests in shared pipelines, each set's
// requests together and in their order, on the master of its first key
// (every key of a set must live on it), and returns what every request got,
// set after set.
func (e *Engine) submitSets(ctx context.Context, sets ...[]req) []sent {
	gs := make([]grouped, len(sets))
	total := 0
	for i, rs := range sets {
		gs[i] = grouped{ctx: ctx, rs: rs, done: make(chan struct{})}
		e.enqueue(ctx, &gs[i], rs[0].keys[0])
		total += len(rs)
	}
	got := make([]sent, 0, total)
	for i := range gs {
		if gs[i].answered(ctx) {
			got = append(got, gs[i].got...)
			continue
		}
		for range gs[i].rs {
			got = append(got, sent{cmd: failed(ctx, ctx.Err())})
		}
	}
	return got
}

// enqueue adds g to the queue of key's master, and starts a sender for it
// unless enough are in flight.
func (e *Engine) enqueue(ctx context.Context, g *grouped, key string) {
	addr := e.masterOf(ctx, key)
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

// sendGroup sends one pipeline of the entries whose callers still wait,
// under the latest of their deadlines.
func (e *Engine) sendGroup(batch []*grouped) {
	var calls []call
	var reqs []req
	var live []*grouped
	var deadline time.Time
	forever := false
	for _, g := range batch {
		if err := g.ctx.Err(); err != nil { // never sent
			// Its caller answers this itself, unless it finds both ready in
			// its select and takes this one.
			if g.rs != nil {
				g.got = make([]sent, len(g.rs))
				for i := range g.got {
					g.got[i] = sent{cmd: failed(g.ctx, err)}
				}
			} else {
				g.out = Outcome{Err: redisFailure(g.c.n.ID, err)}
			}
			close(g.done)
			continue
		}
		if g.rs != nil {
			reqs = append(reqs, g.rs...)
		} else {
			calls = append(calls, g.c)
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
	out := make([]Outcome, len(calls))
	got := e.runAlong(ctx, calls, out, reqs...)
	e.group.calls.Add(int64(len(live)))
	e.group.pipelines.Add(1)
	i, j := 0, 0
	for _, g := range live {
		if g.rs != nil {
			g.got, j = got[j:j+len(g.rs):j+len(g.rs)], j+len(g.rs)
		} else {
			g.out, i = out[i], i+1
		}
		close(g.done)
	}
}
