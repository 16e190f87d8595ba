package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/lua"
)

// The one way the engine sends work to Redis: instructions (Apply,
// ApplyBatch, the sweeper's releases, transfer steps), transfer records and
// fences, and state reads all go through submit, which pipelines them, loads
// the library where a master answers "Function not found", and, with
// Options.MinReplicaAcks, ends each master's pipeline with a WAIT.
//
// WAIT counts the replicas that have every write of the connection it runs
// on, so it must follow the calls on their master's own connection: the
// cluster client would send a keyless WAIT to any node. A pipeline of a
// *redis.Client runs on a single connection.

// req is one command: an FCALL of the library's function fn with keys and
// args, or, when fn is "", the plain command args (keys[0] one of its keys).
// keys[0] tells which master serves it.
type req struct {
	fn   string
	keys []string
	args []any
}

// sent is what submit got for one req.
type sent struct {
	cmd *redis.Cmd
	// With MinReplicaAcks: the master the command ran on and the WAIT that
	// followed it there; nil otherwise, or when the master was not found.
	node *redis.Client
	wait *redis.IntCmd
}

// maxLoadRounds bounds how often one submit loads the library and sends
// again: a flush or failover between two rounds is possible, a loop is not.
const maxLoadRounds = 3

// submit sends every req and returns, in the same order, what each got.
// An entry answered "Function not found" did not run: the library is loaded
// on that entry's master and only such entries are sent again.
func (e *Engine) submit(ctx context.Context, reqs []req) []sent {
	out := make([]sent, len(reqs))
	pending := make([]int, len(reqs))
	for i := range reqs {
		pending[i] = i
	}
	for round := 0; len(pending) > 0; round++ {
		if e.minAcks > 0 {
			e.sendPerMaster(ctx, reqs, pending, out)
		} else {
			e.sendApart(ctx, reqs, pending, out)
		}
		var again []int
		for _, i := range pending {
			err := out[i].cmd.Err()
			if isNoFunction(err) && round < maxLoadRounds {
				again = append(again, i)
				continue
			}
			e.reloadAfter(ctx, err)
		}
		if len(again) > 0 {
			if err := e.loadFor(ctx, reqs, again); err != nil {
				for _, i := range again {
					out[i] = sent{cmd: failed(ctx, err)}
				}
				return out
			}
		}
		pending = again
	}
	return out
}

// queue adds r to pipe.
func queue(ctx context.Context, pipe redis.Pipeliner, r req) *redis.Cmd {
	if r.fn == "" {
		return pipe.Do(ctx, r.args...)
	}
	return pipe.FCall(ctx, r.fn, r.keys, r.args...)
}

// failed is a command that carries err.
func failed(ctx context.Context, err error) *redis.Cmd {
	cmd := redis.NewCmd(ctx)
	cmd.SetErr(err)
	return cmd
}

// sendApart sends reqs[i] for every i of pending: one pipeline of the
// cluster client per master, the masters at once. When a pipeline's context
// ends before every answer is in, go-redis sets that error on every command
// of the pipeline, those already answered too: in one pipeline over every
// master, a master that does not answer in time would make the calls that
// ran on the others UNAVAILABLE as well.
func (e *Engine) sendApart(ctx context.Context, reqs []req, pending []int, out []sent) {
	send := func(idx []int) {
		pipe := e.rdb.Pipeline()
		for _, i := range idx {
			out[i] = sent{cmd: queue(ctx, pipe, reqs[i])}
		}
		_, _ = pipe.Exec(ctx) // errors are read per command
	}
	groups := map[string][]int{}
	var order []string
	for _, i := range pending {
		m := e.masterOf(ctx, reqs[i].keys[0])
		if groups[m] == nil {
			order = append(order, m)
		}
		groups[m] = append(groups[m], i)
	}
	if len(order) == 1 { // a group commit's pipeline, a call alone
		send(pending)
		return
	}
	var wg sync.WaitGroup
	for _, m := range order {
		wg.Go(func() { send(groups[m]) })
	}
	wg.Wait()
}

// sendPerMaster sends reqs[i] for every i of pending: one pipeline per
// master, the masters at once, each ending with a WAIT.
func (e *Engine) sendPerMaster(ctx context.Context, reqs []req, pending []int, out []sent) {
	groups := map[*redis.Client][]int{}
	var order []*redis.Client
	for _, i := range pending {
		node, err := e.masterClient(ctx, reqs[i].keys[0])
		if err != nil {
			e.reloadAfter(ctx, err)
			out[i] = sent{cmd: failed(ctx, err)}
			continue
		}
		if groups[node] == nil {
			order = append(order, node)
		}
		groups[node] = append(groups[node], i)
	}
	var wg sync.WaitGroup
	for _, node := range order {
		wg.Go(func() {
			pipe := node.Pipeline()
			for _, i := range groups[node] {
				out[i] = sent{cmd: queue(ctx, pipe, reqs[i]), node: node}
			}
			wait := redis.NewIntCmd(ctx, "wait", e.minAcks, e.ackTimeout.Milliseconds())
			_ = pipe.Process(ctx, wait)
			e.acks.waiting.Add(int64(len(groups[node])))
			_, _ = pipe.Exec(ctx)
			e.acks.waiting.Add(-int64(len(groups[node])))
			for _, i := range groups[node] {
				out[i].wait = wait
			}
		})
	}
	wg.Wait()
}

// loadFor loads the library on the masters of reqs[i] for every i of idx,
// and only there: loading everywhere would fail while any node, even one
// these calls do not need, is down.
func (e *Engine) loadFor(ctx context.Context, reqs []req, idx []int) error {
	// The master that answered may be one the client was only redirected to
	// (MOVED, after slots moved to a new master): ForEachMaster re-reads the
	// slot map before it runs, so that MasterForKey below names it.
	if c, ok := e.rdb.(*redis.ClusterClient); ok {
		_ = c.ForEachMaster(ctx, func(context.Context, *redis.Client) error { return nil })
	}
	done := map[*redis.Client]bool{}
	for _, i := range idx {
		node, err := e.masterClient(ctx, reqs[i].keys[0])
		if err != nil {
			e.reloadAfter(ctx, err)
			return fmt.Errorf("load library: %w", err)
		}
		if done[node] {
			continue
		}
		if err := loadLibrary(ctx, node); err != nil {
			e.reloadAfter(ctx, err)
			return err
		}
		done[node] = true
	}
	return nil
}

// loadLibrary loads the library on one server, replacing a version of the
// same name.
func loadLibrary(ctx context.Context, c *redis.Client) error {
	if err := c.FunctionLoadReplace(ctx, lua.Library.Source).Err(); err != nil {
		return fmt.Errorf("load library: %s: %w", c.Options().Addr, err)
	}
	return nil
}

// isNoFunction tells whether Redis answered that the function is not
// loaded: the call did not run.
func isNoFunction(err error) bool {
	if err == nil {
		return false // before errors.As, whose target would escape to the heap on every call
	}
	var rerr redis.Error
	return errors.As(err, &rerr) && strings.Contains(rerr.Error(), "Function not found")
}

// acked checks the WAIT of a sent entry: nil when MinReplicaAcks is off or
// enough replicas acknowledged.
func (e *Engine) acked(s sent) error {
	if s.wait == nil {
		return nil
	}
	n, err := s.wait.Result()
	if err != nil {
		return err
	}
	if n < int64(e.minAcks) {
		return fmt.Errorf("%d of %d replicas acknowledged within %v", n, e.minAcks, e.ackTimeout)
	}
	return nil
}
