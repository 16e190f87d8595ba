package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

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
	type ackGroup struct {
		kept     []int // outcomes that are on the master and must reach replicas
		wrote    bool
		replayed int    // a replayed entry, -1 if none
		sent     []sent // each kept entry's own call and WAIT: an entry sent again (after
		// "Function not found") was written after the WAIT of its first round
	}
	groups := map[*redis.Client]*ackGroup{}
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
			g = &ackGroup{replayed: -1}
			groups[s.node] = g
			order = append(order, s.node)
		}
		g.wrote = g.wrote || w
		if r && g.replayed < 0 {
			g.replayed = i
		}
		g.kept = append(g.kept, i)
		g.sent = append(g.sent, s)
	}
	for _, node := range order {
		g := groups[node]
		var err error
		for _, s := range g.sent {
			if err = e.acked(s); err != nil {
				break
			}
		}
		if err == nil && !g.wrote {
			e.acks.waiting.Add(int64(len(g.kept)))
			err = e.confirmReplay(ctx, node, calls[g.replayed])
			e.acks.waiting.Add(-int64(len(g.kept)))
		}
		e.acks.record(node.Options().Addr, err)
		if err != nil {
			e.reloadAfter(ctx, err)
			e.acks.unconfirmed.Add(int64(len(g.kept)))
			for _, i := range g.kept {
				out[i] = Outcome{Err: notDurable(calls[i].n.ID, node, err)}
			}
		}
	}
}

// ackedOn is acked for a transfer's own writes (its record, a fence), whose
// WAITs tell of their master's replicas like the instructions' do.
func (e *Engine) ackedOn(s sent) error {
	err := e.acked(s)
	if s.node != nil {
		e.acks.record(s.node.Options().Addr, err)
	}
	return err
}

// unconfirmedAfter is how many WAITs in a row must fall short on a master
// before CheckReplicas calls its writes unconfirmable: one can be a replica
// briefly slow, several in a row a master without the replicas it needs.
const unconfirmedAfter = 3

// ackHealth follows what replica acknowledgements gave, for metrics and
// readiness.
type ackHealth struct {
	waiting     atomic.Int64 // answers now waiting for replicas (their pipeline's WAIT)
	unconfirmed atomic.Int64 // answers given UNAVAILABLE because replicas did not confirm in time

	mu    sync.Mutex
	short map[string]int // master address -> WAITs in a row that fell short
}

// record notes how the WAIT of a master's pipeline ended.
func (a *ackHealth) record(addr string, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err == nil {
		delete(a.short, addr)
		return
	}
	a.short[addr]++
}

// ReplicaStats are the figures of replica acknowledgements
// (Options.MinReplicaAcks), for metrics; all zero when it is off.
type ReplicaStats struct {
	Waiting     int64 // answers waiting now for replicas to confirm their writes (WAIT)
	Unconfirmed int64 // answers given UNAVAILABLE because too few replicas confirmed in time, since start
}

// ReplicaStats reads the figures; safe to call at any time.
func (e *Engine) ReplicaStats() ReplicaStats {
	return ReplicaStats{Waiting: e.acks.waiting.Load(), Unconfirmed: e.acks.unconfirmed.Load()}
}

// CheckReplicas tells whether writes can be confirmed on every master where
// the last unconfirmedAfter WAITs fell short: it asks such a master itself
// (a WAIT on one of its connections, so that the answer does not depend on
// clients writing: a daemon taken out of service for not being ready gets
// none), and forgets the master once enough replicas answer. nil when
// MinReplicaAcks is off; else the error names each such master and what
// its replicas answered.
func (e *Engine) CheckReplicas(ctx context.Context) error {
	if e.minAcks == 0 {
		return nil
	}
	e.acks.mu.Lock()
	var suspect []string
	for addr, n := range e.acks.short {
		if n >= unconfirmedAfter {
			suspect = append(suspect, addr)
		}
	}
	e.acks.mu.Unlock()
	slices.Sort(suspect)
	var errs []string
	for _, addr := range suspect {
		n, gone, err := e.probeAcks(ctx, addr)
		if gone || err == nil && n >= int64(e.minAcks) {
			e.acks.record(addr, nil)
			continue
		}
		why := fmt.Sprintf("%d of %d replicas acknowledged within %v", n, e.minAcks, e.ackTimeout)
		if err != nil {
			why = err.Error()
		}
		errs = append(errs, fmt.Sprintf("writes to master %s cannot be confirmed by %d replica(s): %s; "+
			"its instructions are answered UNAVAILABLE until a replica has synced (their outcome: GET /v1/holders/{holder}/instructions/{id}, or a retry with the same id)",
			addr, e.minAcks, why))
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// probeAcks asks the master at addr how many replicas acknowledge its
// writes, waiting at most the acknowledgement timeout. gone: addr is no
// longer a master (a failover replaced it), so its record is moot.
func (e *Engine) probeAcks(ctx context.Context, addr string) (n int64, gone bool, err error) {
	node, ok := e.rdb.(*redis.Client)
	if c, isCluster := e.rdb.(*redis.ClusterClient); isCluster {
		if node, err = masterAt(ctx, c, addr); err != nil {
			return 0, true, nil
		}
	} else if !ok || node.Options().Addr != addr {
		return 0, true, nil // a Sentinel client follows its master: the old one is moot
	}
	n, err = node.Do(ctx, "wait", e.minAcks, e.ackTimeout.Milliseconds()).Int64()
	return n, false, err
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
