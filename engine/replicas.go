package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/lua"
)

// Replica acknowledgements (Options.MinReplicaAcks) and the per-master
// plumbing they need.
//
// WAIT counts the replicas that have every write of the connection it runs
// on, so it must follow the scripts on their master's own connection: the
// cluster client would send a keyless WAIT to any node. Each master gets one
// pipeline, its EVALSHAs then one WAIT; a pipeline of a *redis.Client runs on
// a single connection. An outcome that wrote nothing on this run (a replay)
// may not be covered by the connection's WAIT offset (Redis 7.2 and later
// move it only after a command that replicated something), so when no entry
// of the pipeline wrote, one replayed record's expiry is set again to its
// own value: a replicated write that orders the connection after the
// original one.

// masterClient returns the client of the master serving key: the slot's
// master for a cluster, the client itself for a single server or Sentinel.
func (e *Engine) masterClient(ctx context.Context, key string) (*redis.Client, error) {
	switch c := e.rdb.(type) {
	case *redis.ClusterClient:
		return c.MasterForKey(ctx, key)
	case *redis.Client:
		return c, nil
	default:
		return nil, fmt.Errorf("master of %s: unsupported client %T", key, e.rdb)
	}
}

// reloadAfter asks a cluster client to re-read the slot map after an error
// that suggests it is stale. go-redis does so on MOVED, and every
// ClusterStateReloadInterval, but not after a failed connection: without
// this, a dead master's slots would be sent to it until the next reload.
func (e *Engine) reloadAfter(ctx context.Context, err error) {
	c, ok := e.rdb.(*redis.ClusterClient)
	if !ok || err == nil || isNoScript(err) {
		return
	}
	var rerr redis.Error
	if !errors.As(err, &rerr) || isTransient(rerr.Error()) {
		c.ReloadState(ctx)
	}
}

// loadApplyFor loads the apply script on the masters of calls[i] for every
// i of idx.
func (e *Engine) loadApplyFor(ctx context.Context, calls []call, idx []int) error {
	done := map[*redis.Client]bool{}
	for _, i := range idx {
		node, err := e.masterClient(ctx, calls[i].keys[0])
		if err != nil {
			e.reloadAfter(ctx, err)
			return fmt.Errorf("load scripts: %w", err)
		}
		if done[node] {
			continue
		}
		if err := node.ScriptLoad(ctx, lua.Apply.Source).Err(); err != nil {
			e.reloadAfter(ctx, err)
			return fmt.Errorf("load scripts: %s: %w", node.Options().Addr, err)
		}
		done[node] = true
	}
	return nil
}

// runReplicated is run with MinReplicaAcks set: one pipeline per master,
// the masters at once, each ending with WAIT.
func (e *Engine) runReplicated(ctx context.Context, calls []call, pending []int, out []Outcome) {
	for round := 0; len(pending) > 0; round++ {
		groups := map[*redis.Client][]int{}
		var order []*redis.Client
		for _, i := range pending {
			node, err := e.masterClient(ctx, calls[i].keys[0])
			if err != nil {
				e.reloadAfter(ctx, err)
				out[i].Err = redisFailure(calls[i].n.ID, err)
				continue
			}
			if groups[node] == nil {
				order = append(order, node)
			}
			groups[node] = append(groups[node], i)
		}
		var (
			mu    sync.Mutex
			again []int
			wg    sync.WaitGroup
		)
		for _, node := range order {
			wg.Go(func() {
				idx := groups[node]
				noscript := e.sendReplicated(ctx, node, calls, idx, out, round < 3)
				if len(noscript) == 0 {
					return
				}
				// NOSCRIPT means it did not run: load, then send those again.
				if err := node.ScriptLoad(ctx, lua.Apply.Source).Err(); err != nil {
					e.reloadAfter(ctx, err)
					for _, i := range noscript {
						out[i].Err = redisFailure(calls[i].n.ID, fmt.Errorf("load scripts: %w", err))
					}
					return
				}
				mu.Lock()
				again = append(again, noscript...)
				mu.Unlock()
			})
		}
		wg.Wait()
		pending = again
	}
}

// sendReplicated sends calls[i] for every i of idx to node, then WAIT, and
// sets out[i]; it returns the entries answered NOSCRIPT (when retryNoScript)
// without setting their outcome.
func (e *Engine) sendReplicated(ctx context.Context, node *redis.Client, calls []call, idx []int, out []Outcome, retryNoScript bool) (noscript []int) {
	pipe := node.Pipeline()
	cmds := make([]*redis.Cmd, len(idx))
	for j, i := range idx {
		cmds[j] = pipe.EvalSha(ctx, lua.Apply.SHA1, calls[i].keys, calls[i].args...)
	}
	wait := redis.NewIntCmd(ctx, "wait", e.minAcks, e.ackTimeout.Milliseconds())
	_ = pipe.Process(ctx, wait)
	_, _ = pipe.Exec(ctx) // errors are read per command

	var kept []int // outcomes that are on the master and must reach replicas
	wrote, replayed := false, -1
	for j, i := range idx {
		err := cmds[j].Err()
		if isNoScript(err) && retryNoScript {
			noscript = append(noscript, i)
			continue
		}
		e.reloadAfter(ctx, err)
		out[i] = e.finish(calls[i], cmds[j])
		if err != nil {
			continue // already UNAVAILABLE or INTERNAL
		}
		w, r := effect(out[i])
		if !w && !r {
			continue // nothing was written for it, now or before
		}
		wrote = wrote || w
		if r && replayed < 0 {
			replayed = i
		}
		kept = append(kept, i)
	}
	if len(kept) == 0 {
		return noscript
	}
	acks, err := wait.Result()
	if err == nil && !wrote {
		acks, err = e.confirmReplay(ctx, node, calls[replayed])
	}
	if err == nil && acks < int64(e.minAcks) {
		err = fmt.Errorf("%d of %d replicas acknowledged within %v", acks, e.minAcks, e.ackTimeout)
	}
	if err != nil {
		e.reloadAfter(ctx, err)
		for _, i := range kept {
			out[i] = Outcome{Err: notDurable(calls[i].n.ID, node, err)}
		}
	}
	return noscript
}

// effect tells whether the script wrote for this outcome on this run (an
// applied instruction, a recorded rejection), or replayed one recorded
// earlier. A rejection for an unknown holder writes nothing; nor does a bug.
func effect(o Outcome) (wrote, replayed bool) {
	if o.Err == nil {
		return !o.Result.Replayed, o.Result.Replayed
	}
	var e *Error
	if !errors.As(o.Err, &e) || e.Code == instructions.CodeHolderNotFound || e.Code == instructions.CodeInternal {
		return false, false
	}
	return !e.Replayed, e.Replayed
}

// confirmReplay makes the connection's WAIT cover the replayed record of c:
// it sets the record's expiry again to its own value, a write that Redis
// replicates, then waits.
func (e *Engine) confirmReplay(ctx context.Context, node *redis.Client, c call) (int64, error) {
	tx := c.keys[6]
	at, err := node.Do(ctx, "pexpiretime", tx).Int64()
	if err != nil {
		return 0, err
	}
	if at < 0 {
		return 0, fmt.Errorf("idempotency record %s vanished", tx)
	}
	pipe := node.Pipeline()
	pipe.Do(ctx, "pexpireat", tx, at)
	wait := redis.NewIntCmd(ctx, "wait", e.minAcks, e.ackTimeout.Milliseconds())
	_ = pipe.Process(ctx, wait)
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, err
	}
	return wait.Val(), nil
}

// notDurable is the answer to an instruction that ran on the master but is
// not known to be on enough replicas.
func notDurable(id string, node *redis.Client, err error) *Error {
	return &Error{ID: id, Code: instructions.CodeUnavailable, OpIndex: instructions.NoOp,
		Message: fmt.Sprintf("applied on %s but not known to be on a replica (%v): retry with the same id", node.Options().Addr, err), Err: err}
}
