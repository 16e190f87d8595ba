package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/instructions"
)

// Replica acknowledgements (Options.MinReplicaAcks) and the per-master
// plumbing they need. submit sends each master's calls on its own
// connection, then a WAIT. An outcome that wrote nothing on this run (a
// replay) may not be covered by the connection's WAIT offset (Redis 7.2 and
// later move it only after a command that replicated something), so when no
// entry of a master's pipeline wrote, one replayed record's expiry is set
// again to its own value: a replicated write that orders the connection
// after the original one.

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
	if !ok || err == nil || isNoFunction(err) {
		return
	}
	var rerr redis.Error
	if !errors.As(err, &rerr) || isTransient(rerr.Error()) {
		c.ReloadState(ctx)
	}
}

// confirmAcks turns into UNAVAILABLE the outcomes of calls[i] (i of
// pending, got[j] what submit got for it) that are on their master but not
// known to be on enough replicas.
func (e *Engine) confirmAcks(ctx context.Context, calls []call, pending []int, got []sent, out []Outcome) {
	type group struct {
		kept     []int // outcomes that are on the master and must reach replicas
		wrote    bool
		replayed int // a replayed entry, -1 if none
		wait     sent
	}
	groups := map[*redis.Client]*group{}
	var order []*redis.Client
	for j, i := range pending {
		s := got[j]
		if s.node == nil || s.cmd.Err() != nil {
			continue // already UNAVAILABLE or INTERNAL
		}
		w, r := effect(out[i])
		if !w && !r {
			continue // nothing was written for it, now or before
		}
		g := groups[s.node]
		if g == nil {
			g = &group{replayed: -1, wait: s}
			groups[s.node] = g
			order = append(order, s.node)
		}
		g.wrote = g.wrote || w
		if r && g.replayed < 0 {
			g.replayed = i
		}
		g.kept = append(g.kept, i)
	}
	for _, node := range order {
		g := groups[node]
		err := e.acked(g.wait)
		if err == nil && !g.wrote {
			err = e.confirmReplay(ctx, node, calls[g.replayed])
		}
		if err != nil {
			e.reloadAfter(ctx, err)
			for _, i := range g.kept {
				out[i] = Outcome{Err: notDurable(calls[i].n.ID, node, err)}
			}
		}
	}
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
func (e *Engine) confirmReplay(ctx context.Context, node *redis.Client, c call) error {
	tx := c.keys[keyTx]
	at, err := node.Do(ctx, "pexpiretime", tx).Int64()
	if err != nil {
		return err
	}
	if at < 0 {
		return fmt.Errorf("idempotency record %s vanished", tx)
	}
	pipe := node.Pipeline()
	pipe.Do(ctx, "pexpireat", tx, at)
	wait := redis.NewIntCmd(ctx, "wait", e.minAcks, e.ackTimeout.Milliseconds())
	_ = pipe.Process(ctx, wait)
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	return e.acked(sent{wait: wait})
}

// notDurable is the answer to an instruction that ran on the master but is
// not known to be on enough replicas.
func notDurable(id string, node *redis.Client, err error) *Error {
	return &Error{ID: id, Code: instructions.CodeUnavailable, OpIndex: instructions.NoOp,
		Message: fmt.Sprintf("applied on %s but not known to be on a replica (%v): retry with the same id", node.Options().Addr, err), Err: err}
}
