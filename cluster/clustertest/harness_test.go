package clustertest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
)

func TestStart_ClusterIsReady(t *testing.T) {
	c := sharedCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	for _, n := range c.Nodes {
		info, err := c.admin(n).ClusterInfo(ctx).Result()
		require.NoError(t, err, n.Addr)
		assert.Equal(t, "ok", cluster.InfoField(info, "cluster_state"), n.Addr)
		assert.Equal(t, strconv.Itoa(cluster.Slots), cluster.InfoField(info, "cluster_slots_assigned"), n.Addr)
	}
	assert.Len(t, c.Addrs(), len(c.Nodes))
	assert.NotEmpty(t, c.MasterAddrs())
	for _, m := range c.MasterAddrs() {
		assert.Contains(t, c.Addrs(), m)
	}

	t.Run("a started cluster has the asked shape", func(t *testing.T) {
		c := startedOnly(t, c)
		assert.Len(t, c.Nodes, 6)
		assert.Len(t, c.MasterAddrs(), 3)
		for _, n := range c.Nodes {
			assert.FileExists(t, filepath.Join(n.Dir, "nodes.conf"))
			assert.FileExists(t, n.Config)
			assert.FileExists(t, n.Log)
			assert.NotEmpty(t, n.ID)
		}
	})
}

// TestClient_WritesToEveryMaster writes through the cluster client into slots
// spread over the whole range and reads each key back from the master that
// MasterOf names, directly: a wrong master would answer MOVED.
func TestClient_WritesToEveryMaster(t *testing.T) {
	c := sharedCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rdb := c.Client(nil)
	defer rdb.Close()

	written := map[string]int{} // master -> keys written in its slots
	for s := 0; s < cluster.Slots; s += 257 {
		key := "{" + cluster.SlotTag(s) + "}:probe"
		require.NoError(t, rdb.Set(ctx, key, s, time.Minute).Err(), key)
		master, err := c.MasterOf(ctx, s)
		require.NoError(t, err)
		direct := redis.NewClient(&redis.Options{Addr: master, Protocol: 2})
		got, err := direct.Get(ctx, key).Int()
		_ = direct.Close()
		require.NoError(t, err, "GET %s from %s", key, master)
		assert.Equal(t, s, got)
		written[master]++
	}
	for _, m := range c.MasterAddrs() {
		assert.Positive(t, written[m], "no key landed on master %s", m)
	}
	assert.Len(t, written, len(c.MasterAddrs()))
}

func TestClient_KeepsCallerOptions(t *testing.T) {
	c := sharedCluster(t)
	opt := &redis.ClusterOptions{ReadTimeout: 3 * time.Second}
	rdb := c.Client(opt)
	defer rdb.Close()
	assert.Empty(t, opt.Addrs, "the caller's options are not modified")
	assert.True(t, rdb.Options().ContextTimeoutEnabled)
	assert.Equal(t, 3*time.Second, rdb.Options().ReadTimeout)
	assert.ElementsMatch(t, c.Addrs(), rdb.Options().Addrs)

	def := c.Client(nil)
	defer def.Close()
	assert.Equal(t, 10*time.Second, def.Options().ReadTimeout, "generous unless asked otherwise")
	assert.Equal(t, 10*time.Second, def.Options().WriteTimeout)
}

// TestKill_FailsOverAndRestarts kills the master of a slot in the shared
// cluster, waits for its replica to take over, writes to the slot again and
// brings the old master back as a replica.
func TestKill_FailsOverAndRestarts(t *testing.T) {
	c := startedOnly(t, sharedCluster(t))
	// Generous deadlines: a failover, a restart and a resync on a loaded
	// machine; only a failing run reaches them.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rdb := c.Client(nil)
	defer rdb.Close()

	const key = "failover-probe"
	slot := cluster.Slot(key)
	victim, err := c.MasterOf(ctx, slot)
	require.NoError(t, err)
	require.NoError(t, rdb.Set(ctx, key, "before", 0).Err())

	require.NoError(t, c.Kill(victim))
	assert.Error(t, c.Kill(victim), "a dead node cannot be killed again")
	started := time.Now()
	fctx, fcancel := context.WithTimeout(ctx, time.Minute)
	newMaster, err := c.WaitFailover(fctx, victim)
	fcancel()
	require.NoError(t, err)
	t.Logf("failover of %s to %s took %v", victim, newMaster, time.Since(started).Round(time.Millisecond))
	assert.NotEqual(t, victim, newMaster)
	assert.Contains(t, c.MasterAddrs(), newMaster)
	assert.NotContains(t, c.MasterAddrs(), victim)
	got, err := c.MasterOf(ctx, slot)
	require.NoError(t, err)
	assert.Equal(t, newMaster, got)

	// go-redis does not reload its slot map after a connection error (only
	// on MOVED, or every ClusterStateReloadInterval, 60 s by default), so a
	// client must ask for a reload itself when a write fails on a dead node.
	var setErr error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		sctx, scancel := context.WithTimeout(ctx, 2*time.Second)
		setErr = rdb.Set(sctx, key, "after", 0).Err()
		scancel()
		if setErr == nil {
			break
		}
		rdb.ReloadState(ctx)
	}
	require.NoError(t, setErr, "write to slot %d after the failover", slot)
	direct := redis.NewClient(&redis.Options{Addr: newMaster, Protocol: 2})
	defer direct.Close()
	v, err := direct.Get(ctx, key).Result()
	require.NoError(t, err)
	assert.Equal(t, "after", v)

	assert.Error(t, c.Restart(ctx, newMaster), "a running node cannot be restarted")
	require.NoError(t, c.Restart(ctx, victim))
	require.NoError(t, c.WaitReady(ctx))
	info, err := c.admin(mustNode(t, c, victim)).Info(ctx, "replication").Result()
	require.NoError(t, err)
	assert.Equal(t, "slave", cluster.InfoField(info, "role"))
	assert.Equal(t, strconv.Itoa(mustNode(t, c, newMaster).Port), cluster.InfoField(info, "master_port"))
	assert.Len(t, c.MasterAddrs(), 3)
	assert.NotContains(t, c.MasterAddrs(), victim)
}

func TestWaitFailover_RefusesReplica(t *testing.T) {
	c := startedOnly(t, sharedCluster(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a restart and a resync
	defer cancel()

	var replica string
	for _, a := range c.Addrs() {
		if !slices.Contains(c.MasterAddrs(), a) {
			replica = a
			break
		}
	}
	require.NotEmpty(t, replica)
	require.NoError(t, c.Kill(replica))
	_, err := c.WaitFailover(ctx, replica)
	assert.ErrorContains(t, err, "was not a master")
	require.NoError(t, c.Restart(ctx, replica))
	require.NoError(t, c.WaitReady(ctx))
}

func TestStart_FailsWithoutServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := Start(context.Background(), Options{RedisServer: filepath.Join(dir, "no-such-redis-server")})
	assert.Error(t, err)
}

// TestStart_FailsOnBadConfig checks that a server refusing its config fails
// Start with the server's own words.
func TestStart_FailsOnBadConfig(t *testing.T) {
	needServer(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	_, err := Start(ctx, Options{Masters: 2, ExtraConfig: []string{"no-such-directive yes"}})
	require.Error(t, err)
	assert.ErrorContains(t, err, "no-such-directive")
}

// TestStart_StopsEverythingOnTimeout gives Start too little time to form the
// cluster (a new master waits 2 s before it serves) and checks that every
// server it started is gone afterwards.
func TestStart_StopsEverythingOnTimeout(t *testing.T) {
	needServer(t)
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()

	_, err := Start(ctx, Options{Masters: 2, Replicas: 1, Dir: dir})
	require.ErrorIs(t, err, context.DeadlineExceeded)

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.NotEmpty(t, entries, "the node directories stay in a Dir given by the caller")
	for _, e := range entries {
		assert.FileExists(t, filepath.Join(dir, e.Name(), "redis.log"))
		assert.Error(t, ping(context.Background(), "127.0.0.1:"+e.Name()), "a server on port %s is still running", e.Name())
	}
}

func TestStop_RemovesTempDirAndIsIdempotent(t *testing.T) {
	needServer(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	c, err := Start(ctx, Options{Masters: 1})
	require.NoError(t, err)
	require.Len(t, c.Nodes, 1)
	addr := c.Nodes[0].Addr
	require.NoError(t, ping(ctx, addr))
	require.DirExists(t, c.dir)

	require.NoError(t, c.Stop())
	assert.NoDirExists(t, c.dir)
	assert.Error(t, ping(ctx, addr), "the server is gone")
	assert.NoError(t, c.Stop())
	assert.Error(t, c.Kill(addr))
	assert.Error(t, c.Restart(ctx, addr))
}

func mustNode(t *testing.T, c *Cluster, addr string) *Node {
	t.Helper()
	n, err := c.node(addr)
	require.NoError(t, err)
	return n
}

// TestWaitUp_RefusesAnotherServersAnswer starts a server on a port another
// server holds, as happens when a port chosen free is taken by another
// package's tests before the server binds it: the other server answers at
// once, but the wait must not take it for this one, which exits for want
// of the port (and is then started on another).
func TestWaitUp_RefusesAnotherServersAnswer(t *testing.T) {
	needServer(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	other, err := Start(ctx, Options{Standalone: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = other.Stop() })

	n, err := newNode(t.TempDir(), other.bin, other.Nodes[0].Port, nil)
	require.NoError(t, err)
	p, err := n.launch()
	require.NoError(t, err)
	t.Cleanup(p.kill)
	err = n.waitUp(ctx, p)
	require.Error(t, err, "the answer on the port came from another server")
	assert.True(t, addrInUse(err), "%v", err)
}
