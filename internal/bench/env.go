package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
)

// env is what every part runs against.
type env struct {
	opt      Options
	s        Settings
	rdb      redis.UniversalClient
	eng      *engine.Engine
	cl       *clustertest.Cluster // started by the run, or nil
	addrs    []string             // for the daemon
	cluster  bool
	prefix   string // of every holder id of this run
	version  string
	topology string
	log      io.Writer
}

// poolSize lets every worker of the widest part (64 WATCH workers, each on
// its own connection) have a connection to each master, so that the client
// pool never is what a part measures.
func (e *env) poolSize() int { return 2*e.s.Workers + 16 }

func newEnv(ctx context.Context, opt Options) (_ *env, err error) {
	e := &env{opt: opt, s: opt.Settings, log: opt.Log}
	var b [3]byte
	_, _ = rand.Read(b[:])
	e.prefix = "bench-" + hex.EncodeToString(b[:])
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	if len(opt.Redis) == 0 {
		sctx, cancel := context.WithTimeout(ctx, 90*time.Second)
		// No replicas, so no failover to wait for: a long node timeout keeps
		// a master that the load starves of CPU for a moment from being
		// marked failed, which would stop the run with CLUSTERDOWN.
		e.cl, err = clustertest.Start(sctx, clustertest.Options{Masters: 3, Standalone: opt.Standalone,
			ExtraConfig: []string{"cluster-node-timeout 30000"}})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		e.addrs = e.cl.Addrs()
		e.cluster = !opt.Standalone
	} else {
		e.addrs = opt.Redis
		e.cluster = opt.RedisCluster || len(opt.Redis) > 1
	}
	if e.cluster {
		e.rdb = redis.NewClusterClient(&redis.ClusterOptions{Addrs: e.addrs, Username: opt.Username, Password: opt.Password,
			TLSConfig: opt.TLS, ContextTimeoutEnabled: true, PoolSize: e.poolSize(), ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
	} else {
		e.rdb = redis.NewClient(&redis.Options{Addr: e.addrs[0], Username: opt.Username, Password: opt.Password,
			TLSConfig: opt.TLS, ContextTimeoutEnabled: true, PoolSize: e.poolSize(), ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
	}
	e.eng = engine.New(e.rdb, nil)
	if err := e.eng.Load(ctx); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	masters := 0
	err = e.eachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		masters++
		info, err := c.Info(ctx, "server").Result()
		e.version = cluster.InfoField(info, "redis_version")
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	switch {
	case !e.cluster:
		e.topology = "one server"
	case e.cl != nil:
		e.topology = fmt.Sprintf("local cluster, %d masters, no replicas", masters)
	default:
		e.topology = fmt.Sprintf("cluster, %d masters", masters)
	}
	return e, nil
}

func (e *env) close() {
	if e.eng != nil {
		e.eng.Flush()
	}
	if e.rdb != nil {
		_ = e.rdb.Close()
	}
	if e.cl != nil {
		_ = e.cl.Stop()
	}
}

// owned tells whether the run started the servers, and so may flush them.
func (e *env) owned() bool { return e.cl != nil }

// eachMaster runs fn on every master, one after the other.
func (e *env) eachMaster(ctx context.Context, fn func(context.Context, *redis.Client) error) error {
	switch c := e.rdb.(type) {
	case *redis.ClusterClient:
		return e.serialMasters(ctx, c, fn)
	case *redis.Client:
		return fn(ctx, c)
	}
	return fmt.Errorf("unsupported client %T", e.rdb)
}

// serialMasters calls fn on each master of c in turn, in address order.
func (e *env) serialMasters(ctx context.Context, c *redis.ClusterClient, fn func(context.Context, *redis.Client) error) error {
	slots, err := c.ClusterSlots(ctx).Result()
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, s := range slots {
		if len(s.Nodes) == 0 || seen[s.Nodes[0].Addr] {
			continue
		}
		seen[s.Nodes[0].Addr] = true
		m, err := c.MasterForKey(ctx, keyInSlot(s.Start))
		if err != nil {
			return err
		}
		if err := fn(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// oneMaster returns a test that tells whether a slot is served by the
// master of slot 0: the script_cost part keeps every key there, so that one
// server does all the work it measures and the others stay idle (three
// servers on two cores would steal each other's CPU in the middle of a
// script run, and commandstats counts wall time).
func (e *env) oneMaster(ctx context.Context) (func(slot int) bool, error) {
	masterOf, err := e.slotMasters(ctx)
	if err != nil {
		return nil, err
	}
	owner := masterOf(0)
	return func(slot int) bool { return masterOf(slot) == owner }, nil
}

// slotMasters returns a function that names the master of a slot, from the
// slot map read once; on a plain server every slot's master is "".
func (e *env) slotMasters(ctx context.Context) (func(slot int) string, error) {
	c, ok := e.rdb.(*redis.ClusterClient)
	if !ok {
		return func(int) string { return "" }, nil
	}
	slots, err := c.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, err
	}
	return func(slot int) string {
		for _, s := range slots {
			if s.Start <= slot && slot <= s.End && len(s.Nodes) > 0 {
				return s.Nodes[0].Addr
			}
		}
		return ""
	}, nil
}

// keyInSlot is a key that lives in slot.
func keyInSlot(slot int) string { return "{" + cluster.SlotTag(slot) + "}" }

// reset readies the servers for a part: on a cluster the run started, it
// flushes every master; elsewhere it leaves the data alone (every part
// measures differences or its own keys).
func (e *env) reset(ctx context.Context) error {
	if !e.owned() {
		return nil
	}
	err := e.eachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		return c.FlushAllAsync(ctx).Err()
	})
	if err != nil {
		return fmt.Errorf("bench: flush: %w", err)
	}
	// FLUSHALL ASYNC frees in the background: wait until the memory settles
	// so the next part does not pay for it.
	return e.eachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		for i := 0; i < 100; i++ {
			info, err := c.Info(ctx, "memory").Result()
			if err != nil {
				return err
			}
			if cluster.InfoField(info, "lazyfree_pending_objects") == "0" {
				return nil
			}
			time.Sleep(20 * time.Millisecond)
		}
		return nil
	})
}

// resetStats runs CONFIG RESETSTAT on every master.
func (e *env) resetStats(ctx context.Context) error {
	return e.eachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		return c.ConfigResetStat(ctx).Err()
	})
}

// usedMemory sums used_memory over the masters.
func (e *env) usedMemory(ctx context.Context) (int64, error) {
	var total int64
	err := e.eachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "memory").Result()
		if err != nil {
			return err
		}
		n, err := strconv.ParseInt(cluster.InfoField(info, "used_memory"), 10, 64)
		total += n
		return err
	})
	return total, err
}

// loadScript loads src in the script cache of every master and returns its SHA-1.
func (e *env) loadScript(ctx context.Context, src string) (string, error) {
	var sha string
	err := e.eachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		var err error
		sha, err = c.ScriptLoad(ctx, src).Result()
		return err
	})
	return sha, err
}

// loadLibrary loads the library src on every master, replacing one of the
// same name.
func (e *env) loadLibrary(ctx context.Context, src string) error {
	return e.eachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		return c.FunctionLoadReplace(ctx, src).Err()
	})
}
