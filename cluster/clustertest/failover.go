package clustertest

// A failover the way a crash makes one: a node killed, its replica promoted,
// the node restarted as a replica of the new master.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/atomledger/atomledger/cluster"
)

// Kill kills the server at addr with SIGKILL, like a crash, and waits for
// it to exit. If it was a master, its slots and replicas are remembered for
// WaitFailover.
func (c *Cluster) Kill(addr string) error {
	n, err := c.node(addr)
	if err != nil {
		return err
	}
	c.mu.Lock()
	p, stopped := n.proc, c.stopped
	c.mu.Unlock()
	switch {
	case stopped:
		return errors.New("kill: cluster stopped")
	case p == nil:
		return fmt.Errorf("kill %s: not started by the harness", addr)
	case !p.running():
		return fmt.Errorf("kill %s: not running", addr)
	}

	// The node's own view of its shard is the one to trust; the last map
	// the harness saw stands in if the node does not answer.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	t, err := c.readTopology(ctx, n)
	cancel()

	p.kill()

	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		t = c.last
	}
	n.lastSeen = t.shardOfMaster(addr)
	return nil
}

// Restart starts the killed server at addr again, with the same port, config
// and nodes.conf, and waits until it answers PING. It comes back empty (there
// is no persistence); a former master whose slots were failed over rejoins
// as a replica of the new master (WaitReady waits for that).
func (c *Cluster) Restart(ctx context.Context, addr string) error {
	n, err := c.node(addr)
	if err != nil {
		return err
	}
	for {
		c.mu.Lock()
		switch {
		case c.stopped:
			c.mu.Unlock()
			return errors.New("restart: cluster stopped")
		case n.proc == nil:
			c.mu.Unlock()
			return fmt.Errorf("restart %s: not started by the harness", addr)
		case n.proc.running():
			c.mu.Unlock()
			return fmt.Errorf("restart %s: still running", addr)
		}
		p, err := n.launch()
		if err != nil {
			c.mu.Unlock()
			return fmt.Errorf("restart %s: %w", addr, err)
		}
		// Set before waiting, so that a concurrent Stop stops it too.
		n.proc = p
		c.mu.Unlock()

		err = n.waitUp(ctx, p)
		if err == nil {
			break
		}
		p.kill()
		if !addrInUse(err) {
			return fmt.Errorf("restart: %w", err)
		}
		// Something else took the port meanwhile; it may let it go.
		select {
		case <-ctx.Done():
			return fmt.Errorf("restart: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	// A fresh connection pool: the old one holds dead connections and may be
	// backing off after refused dials.
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return errors.New("restart: cluster stopped")
	}
	_ = n.rdb.Close()
	n.rdb = adminClient(n.Addr, n.tls)
	return nil
}

// WaitFailover waits, after Kill of the master at killed, until one of its
// replicas is the master of all its slots in the slot map of every live node,
// and every live node reports cluster_state:ok. It returns the new master's
// address.
func (c *Cluster) WaitFailover(ctx context.Context, killed string) (newMaster string, err error) {
	n, err := c.node(killed)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	old := n.lastSeen
	c.mu.Unlock()
	if old == nil {
		return "", fmt.Errorf("wait for failover: %s was not a master when Kill stopped it", killed)
	}
	if len(old.Replicas) == 0 {
		return "", fmt.Errorf("wait for failover: %s had no replica", killed)
	}
	err = poll(ctx, "wait for failover of "+killed, func(ctx context.Context) error {
		t, _, err := c.agreedTopology(ctx)
		if err != nil {
			return err
		}
		s := t.shardOf(old.Slots[0][0])
		if s == nil || !slices.ContainsFunc(old.Replicas, func(r member) bool { return r.ID == s.Master.ID }) {
			return fmt.Errorf("slot %d is not served by a replica of %s yet", old.Slots[0][0], killed)
		}
		for _, r := range old.Slots {
			for slot := r[0]; slot <= r[1]; slot++ {
				if !s.has(slot) {
					return fmt.Errorf("slot %d is not served by %s", slot, s.Master.Addr)
				}
			}
		}
		newMaster = s.Master.Addr
		c.setRoles(t)
		return nil
	})
	return newMaster, err
}

// MasterOf returns the address of the master of slot, as the first live node
// that answers sees it.
func (c *Cluster) MasterOf(ctx context.Context, slot int) (string, error) {
	if slot < 0 || slot >= cluster.Slots {
		return "", fmt.Errorf("master of slot %d: out of range", slot)
	}
	var errs []error
	for _, n := range c.live() {
		t, err := c.readTopology(ctx, n)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.Addr, err))
			continue
		}
		if s := t.shardOf(slot); s != nil {
			return s.Master.Addr, nil
		}
		return "", fmt.Errorf("master of slot %d: %s sees no master", slot, n.Addr)
	}
	return "", fmt.Errorf("master of slot %d: %w", slot, errors.Join(errs...))
}
