package clustertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
)

// Options configure Start. A zero field means its default.
type Options struct {
	// Masters is the number of masters; the slots are split evenly between
	// them. Default 3.
	Masters int
	// Replicas is the number of replicas of each master. Default 0.
	Replicas int
	// Dir holds one directory per node, named after its port; Start replaces
	// any directory of that name. Default: a new temporary directory, which
	// Stop removes.
	Dir string
	// RedisServer is the path of the server binary. Default: "redis-server"
	// looked up on PATH.
	RedisServer string
	// ExtraConfig lines ("directive value") are appended to the config of
	// every node, after the harness's own. Default none.
	ExtraConfig []string
	// Standalone starts one plain server, not in cluster mode, instead of a
	// cluster (Masters and Replicas are then ignored): for testing the
	// engine against a single Redis. Default false.
	Standalone bool
	// TLS, if set, makes every server speak TLS only (see TLS): Node.Addr is
	// then its TLS port, and clients need TLS.ClientConfig.
	TLS *TLS
}

// Cluster is a running Redis Cluster: servers started by Start, or the
// nodes of an existing cluster named by ATOMLEDGER_TEST_REDIS (see
// StartForTest), which the harness never starts, kills or stops.
type Cluster struct {
	// Nodes are the servers of the cluster: with Start, the masters first,
	// then the replicas of the first master, then those of the second, ...
	Nodes []*Node

	dir     string
	tempDir bool
	bin     string   // the server binary
	extra   []string // extra config lines of every node
	tls     *TLS     // nil for plain TCP

	mu       sync.Mutex // guards the unexported fields of every Node, and stopped
	stopped  bool
	last     topology // the last slot map all live nodes agreed on
	stopOnce sync.Once
	stopErr  error
}

// pollInterval is how often the harness re-reads the state it waits for.
const pollInterval = 50 * time.Millisecond

// Start starts a cluster of opt.Masters masters with opt.Replicas replicas
// each, as redis-server processes on free ports of 127.0.0.1, and returns
// once it is ready (see WaitReady). The deadline of ctx bounds the whole
// start; on any failure everything started so far is stopped again.
func Start(ctx context.Context, opt Options) (_ *Cluster, err error) {
	if opt.Masters == 0 {
		opt.Masters = 3
	}
	if opt.Masters < 0 || opt.Masters > cluster.Slots || opt.Replicas < 0 {
		return nil, fmt.Errorf("start cluster: %d masters with %d replicas each", opt.Masters, opt.Replicas)
	}
	bin := opt.RedisServer
	if bin == "" {
		bin = "redis-server"
	}
	bin, err = exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("start cluster: %w", err)
	}

	c := &Cluster{dir: opt.Dir, bin: bin, extra: opt.ExtraConfig, tls: opt.TLS}
	if c.dir != "" {
		// Each server runs in its own node directory: a relative path would
		// be taken from there.
		if c.dir, err = filepath.Abs(c.dir); err != nil {
			return nil, fmt.Errorf("start cluster: %w", err)
		}
	}
	if c.dir == "" {
		if c.dir, err = os.MkdirTemp("", "atomledger-cluster-"); err != nil {
			return nil, fmt.Errorf("start cluster: %w", err)
		}
		c.tempDir = true
	} else if err = os.MkdirAll(c.dir, 0o755); err != nil {
		return nil, fmt.Errorf("start cluster: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Stop())
		}
	}()

	if opt.Standalone {
		opt.Masters, opt.Replicas = 1, 0
		opt.ExtraConfig = append(opt.ExtraConfig[:len(opt.ExtraConfig):len(opt.ExtraConfig)], "cluster-enabled no")
	}
	nodes := make([]*Node, opt.Masters*(1+opt.Replicas))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() { nodes[i], errs[i] = c.startNode(ctx, bin, opt.ExtraConfig) })
	}
	wg.Wait()
	for _, n := range nodes {
		if n != nil {
			c.Nodes = append(c.Nodes, n)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("start cluster: %w", err)
	}
	if opt.Standalone {
		return c, nil
	}
	if err := c.create(ctx, opt.Masters, opt.Replicas); err != nil {
		return nil, fmt.Errorf("create cluster: %w", err)
	}
	if err := c.WaitReady(ctx); err != nil {
		return nil, fmt.Errorf("start cluster: %w", err)
	}
	return c, nil
}

// startNode starts one server on a free port.
func (c *Cluster) startNode(ctx context.Context, bin string, extra []string) (*Node, error) {
	return startOnFreePort(ctx, func(port int) (*Node, error) {
		if c.tls == nil {
			return newNode(c.dir, bin, port, extra)
		}
		n, err := newNode(c.dir, bin, port, append(extra[:len(extra):len(extra)], c.tls.serverConfig(port)...))
		if n != nil {
			n.tls = c.tls.ClientConfig()
		}
		return n, err
	})
}

// create joins the started servers into one cluster, the way redis-cli
// --cluster create does: slots first, a distinct config epoch per node (so
// that no epoch collision has to be resolved), then MEET, then REPLICATE once
// each replica knows its master.
func (c *Cluster) create(ctx context.Context, masters, replicas int) error {
	for i, n := range c.Nodes {
		id, err := n.rdb.ClusterMyID(ctx).Result()
		if err != nil {
			return fmt.Errorf("%s: %w", n.Addr, err)
		}
		n.ID = id
		if i < masters {
			lo, hi := i*cluster.Slots/masters, (i+1)*cluster.Slots/masters-1
			if err := n.rdb.ClusterAddSlotsRange(ctx, lo, hi).Err(); err != nil {
				return fmt.Errorf("%s: add slots %d-%d: %w", n.Addr, lo, hi, err)
			}
		}
		// Distinct epochs spare the cluster its collision handling. A node that
		// already heard of another (a node of another cluster gossiping to a
		// port it used to know) refuses; the cluster then settles the epochs
		// itself, and the check below still requires exactly our nodes.
		_ = n.rdb.Do(ctx, "cluster", "set-config-epoch", i+1).Err()
	}
	first := c.Nodes[0]
	for _, n := range c.Nodes[1:] {
		if err := first.rdb.ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(n.Port)).Err(); err != nil {
			return fmt.Errorf("%s: meet %s: %w", first.Addr, n.Addr, err)
		}
	}
	err := poll(ctx, "wait for every node to know every other", func(ctx context.Context) error {
		for _, n := range c.Nodes {
			text, err := n.rdb.ClusterNodes(ctx).Result()
			if err != nil {
				return fmt.Errorf("%s: %w", n.Addr, err)
			}
			lines := strings.Split(strings.TrimSpace(text), "\n")
			if len(lines) != len(c.Nodes) {
				if len(lines) == 1 && n != first {
					// Its MEET's handshake timed out (a node timeout of a second on
					// a starved machine) and nothing else will introduce it: again.
					_ = first.rdb.ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(n.Port)).Err()
				}
				return fmt.Errorf("%s knows %d nodes of %d", n.Addr, len(lines), len(c.Nodes))
			}
			if strings.Contains(text, "handshake") || strings.Contains(text, "noaddr") {
				return fmt.Errorf("%s: a handshake is in progress", n.Addr)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, n := range c.Nodes[masters:] {
		master := c.Nodes[i/replicas]
		err := poll(ctx, "replicate", func(ctx context.Context) error {
			if err := n.rdb.ClusterReplicate(ctx, master.ID).Err(); err != nil {
				return fmt.Errorf("%s: replicate %s: %w", n.Addr, master.Addr, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// AddMaster starts one more server, an empty master without slots, and
// returns once every node of the cluster knows it and it knows every node. Move slots to it (CLUSTER
// SETSLOT, MIGRATE) to give it work; until then WaitReady does not hold,
// since it is in no slot map.
func (c *Cluster) AddMaster(ctx context.Context) (*Node, error) {
	n, err := c.startNode(ctx, c.bin, c.extra)
	if err != nil {
		return nil, fmt.Errorf("add master: %w", err)
	}
	if n.ID, err = n.rdb.ClusterMyID(ctx).Result(); err != nil {
		return nil, fmt.Errorf("add master: %s: %w", n.Addr, err)
	}
	c.mu.Lock()
	c.Nodes = append(c.Nodes, n)
	c.mu.Unlock()
	if err := c.admin(c.Nodes[0]).ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(n.Port)).Err(); err != nil {
		return nil, fmt.Errorf("add master: meet %s: %w", n.Addr, err)
	}
	err = poll(ctx, "wait for every node to know the new master", func(ctx context.Context) error {
		for _, m := range c.live() {
			text, err := c.admin(m).ClusterNodes(ctx).Result()
			if err != nil {
				return fmt.Errorf("%s: %w", m.Addr, err)
			}
			lines := strings.Split(strings.TrimSpace(text), "\n")
			if len(lines) != len(c.Nodes) || strings.Contains(text, "handshake") || strings.Contains(text, "noaddr") {
				return fmt.Errorf("%s knows %d nodes of %d", m.Addr, len(lines), len(c.Nodes))
			}
			info, err := c.admin(m).ClusterInfo(ctx).Result()
			if err != nil {
				return fmt.Errorf("%s: %w", m.Addr, err)
			}
			if state := cluster.InfoField(info, "cluster_state"); state != "ok" {
				return fmt.Errorf("%s: cluster_state:%s", m.Addr, state)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("add master: %w", err)
	}
	return n, nil
}

// poll calls check until it returns nil or ctx ends; the error then names
// what was awaited and the last reason check gave.
func poll(ctx context.Context, what string, check func(context.Context) error) error {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w; last: %v", what, ctx.Err(), err)
		case <-t.C:
		}
	}
}

// live returns the nodes expected to answer: those of an existing cluster,
// and those of the harness whose process is running.
func (c *Cluster) live() []*Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	var live []*Node
	for _, n := range c.Nodes {
		if n.proc == nil || n.proc.running() {
			live = append(live, n)
		}
	}
	return live
}

func (c *Cluster) admin(n *Node) *redis.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	return n.rdb
}

// readTopology reads the slot map as n sees it, naming the nodes the harness
// knows by their Addr: a node that never met another does not know its own
// address, and views are compared as text.
func (c *Cluster) readTopology(ctx context.Context, n *Node) (topology, error) {
	t, err := readTopology(ctx, c.admin(n))
	if err != nil {
		return nil, err
	}
	known := make(map[string]string, len(c.Nodes)) // id -> address
	for _, n := range c.Nodes {
		if n.ID != "" {
			known[n.ID] = n.Addr
		}
	}
	rename := func(m *member) {
		if a, ok := known[m.ID]; ok {
			m.Addr = a
		}
	}
	for i := range t {
		rename(&t[i].Master)
		for j := range t[i].Replicas {
			rename(&t[i].Replicas[j])
		}
	}
	return t.normalize(), nil
}

// agreedTopology reads the slot map of every live node and returns it if
// every one of them reports cluster_state:ok and they all see the same map.
func (c *Cluster) agreedTopology(ctx context.Context) (topology, []*Node, error) {
	live := c.live()
	if len(live) == 0 {
		return nil, nil, errors.New("no live node")
	}
	var agreed topology
	for i, n := range live {
		rdb := c.admin(n)
		info, err := rdb.ClusterInfo(ctx).Result()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", n.Addr, err)
		}
		if state := cluster.InfoField(info, "cluster_state"); state != "ok" {
			return nil, nil, fmt.Errorf("%s: cluster_state:%s", n.Addr, state)
		}
		t, err := c.readTopology(ctx, n)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", n.Addr, err)
		}
		if i == 0 {
			agreed = t
		} else if t.String() != agreed.String() {
			return nil, nil, fmt.Errorf("%s and %s see different slot maps:\n%s\n%s", live[0].Addr, n.Addr, agreed, t)
		}
	}
	return agreed, live, nil
}

// WaitReady waits until every live node reports cluster_state:ok, they all
// see the same slot map (masters and their replicas) covering all the slots,
// every live node is in that map, and every replica among them reports
// master_link_status:up. Call it after Restart to wait until the node is a
// synced replica again. The roles it finds become those of MasterAddrs.
func (c *Cluster) WaitReady(ctx context.Context) error {
	return poll(ctx, "wait for cluster", func(ctx context.Context) error {
		t, live, err := c.agreedTopology(ctx)
		if err != nil {
			return err
		}
		if n := t.covered(); n != cluster.Slots {
			return fmt.Errorf("%d of %d slots have a master", n, cluster.Slots)
		}
		for _, n := range live {
			switch t.role(n.Addr) {
			case "":
				return fmt.Errorf("%s is not in the slot map", n.Addr)
			case "replica":
				info, err := c.admin(n).Info(ctx, "replication").Result()
				if err != nil {
					return fmt.Errorf("%s: %w", n.Addr, err)
				}
				if s := cluster.InfoField(info, "master_link_status"); s != "up" {
					return fmt.Errorf("%s: master_link_status:%s", n.Addr, s)
				}
			}
		}
		c.setRoles(t)
		return nil
	})
}

func (c *Cluster) setRoles(t topology) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = t
	for _, n := range c.Nodes {
		n.master = t.role(n.Addr) == "master"
	}
}

// Addrs returns the address of every node.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr
	}
	return addrs
}

// MasterAddrs returns the addresses of the masters in the last slot map seen
// by Start, StartForTest, WaitReady or WaitFailover. It does no I/O: after a
// failover it changes only once WaitFailover or WaitReady has seen it.
func (c *Cluster) MasterAddrs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var addrs []string
	for _, n := range c.Nodes {
		if n.master {
			addrs = append(addrs, n.Addr)
		}
	}
	return addrs
}

// Client returns a cluster client seeded with every node. opt may be nil
// for the defaults; Addrs is always replaced and ContextTimeoutEnabled always
// set, so that deadlines reach the socket. A zero ReadTimeout or
// WriteTimeout is 10 s, not go-redis's 3 s: tests share a loaded machine's
// cores with their servers, and a reply read late is no failure. opt itself
// is not modified. The caller closes the client.
//
// After a failover the client keeps sending a dead master's slots to the
// dead master: go-redis reloads its slot map on MOVED and every
// ClusterStateReloadInterval (60 s by default), not after a connection error
// (go-redis issue 3979). Call ReloadState on such an error before retrying.
func (c *Cluster) Client(opt *redis.ClusterOptions) *redis.ClusterClient {
	var o redis.ClusterOptions
	if opt != nil {
		o = *opt
	}
	o.Addrs = c.Addrs()
	o.ContextTimeoutEnabled = true
	if c.tls != nil && o.TLSConfig == nil {
		o.TLSConfig = c.tls.ClientConfig()
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = 10 * time.Second
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = 10 * time.Second
	}
	return redis.NewClusterClient(&o)
}

// node returns the node at addr.
func (c *Cluster) node(addr string) (*Node, error) {
	for _, n := range c.Nodes {
		if n.Addr == addr {
			return n, nil
		}
	}
	return nil, fmt.Errorf("no node %s in the cluster", addr)
}

// Stop stops every server the harness started (SIGTERM, then SIGKILL for a
// server still running 5 s later), waits for them to exit, and removes the
// directory if Start created it. Calling it again does nothing and returns
// the first call's error. For an existing cluster it only closes connections.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		c.mu.Lock()
		c.stopped = true
		var errs []error
		var wg sync.WaitGroup
		for _, n := range c.Nodes {
			if n.proc != nil {
				wg.Go(func() { n.proc.stop(5 * time.Second) })
			}
			if n.rdb != nil {
				errs = append(errs, closeAdmin(n))
			}
		}
		c.mu.Unlock()
		wg.Wait()
		if c.tempDir {
			errs = append(errs, os.RemoveAll(c.dir))
		}
		c.stopErr = errors.Join(errs...)
	})
	return c.stopErr
}
