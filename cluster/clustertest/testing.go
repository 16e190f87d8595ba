package clustertest

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// EnvTestRedis names the environment variable that points tests at a running
// cluster instead of starting one: comma-separated node addresses.
const EnvTestRedis = "ATOMLEDGER_TEST_REDIS"

// testStartTimeout bounds how long tests wait for a cluster to be ready:
// generous, as go test starts every package's servers at once, under -race,
// on machines that may have two cores.
const testStartTimeout = 3 * time.Minute

// StartForTest returns a ready cluster for a test: the one named by
// ATOMLEDGER_TEST_REDIS if set, else one started with Start and opt. It fails
// the test (it never skips) if the cluster cannot be started or reached, and
// stops the cluster when the test ends. A test that needs no Redis under
// -short checks testing.Short itself before calling it.
func StartForTest(tb TB, opt Options) *Cluster {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testStartTimeout)
	defer cancel()
	c, err := StartForMain(ctx, opt)
	if err != nil {
		tb.Fatalf("redis cluster: %v", err)
	}
	tb.Cleanup(func() {
		if err := c.Stop(); err != nil {
			tb.Errorf("stop redis cluster: %v", err)
		}
	})
	return c
}

// StartForMain is StartForTest for a TestMain that shares one cluster between
// the tests of a package: it returns the error instead of failing a test, and
// the caller stops the cluster after m.Run. Only a started cluster can be
// killed and restarted; one named by ATOMLEDGER_TEST_REDIS is left alone.
func StartForMain(ctx context.Context, opt Options) (*Cluster, error) {
	if env := os.Getenv(EnvTestRedis); env != "" {
		return attach(ctx, strings.Split(env, ","))
	}
	return Start(ctx, opt)
}

// attach returns the running cluster that the nodes at addrs belong to, once
// it is ready (see WaitReady), with the nodes found in its slot map added.
func attach(ctx context.Context, addrs []string) (_ *Cluster, err error) {
	c := &Cluster{}
	defer func() {
		if err != nil {
			_ = c.Stop()
		}
	}()
	seen := map[string]bool{}
	add := func(addr, id string) {
		if addr == "" || seen[addr] {
			return
		}
		seen[addr] = true
		n := &Node{Addr: addr, ID: id, rdb: adminClient(addr, nil)}
		if _, port, err := net.SplitHostPort(addr); err == nil {
			n.Port, _ = strconv.Atoi(port)
		}
		c.Nodes = append(c.Nodes, n)
	}
	for _, a := range addrs {
		add(strings.TrimSpace(a), "")
	}
	if len(c.Nodes) == 0 {
		return nil, fmt.Errorf("%s names no address", EnvTestRedis)
	}
	for _, n := range c.Nodes {
		if n.ID, err = n.rdb.ClusterMyID(ctx).Result(); err != nil {
			return nil, fmt.Errorf("%s %s: %w", EnvTestRedis, n.Addr, err)
		}
	}
	t, err := c.readTopology(ctx, c.Nodes[0])
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", EnvTestRedis, c.Nodes[0].Addr, err)
	}
	for _, s := range t {
		add(s.Master.Addr, s.Master.ID)
		for _, r := range s.Replicas {
			add(r.Addr, r.ID)
		}
	}
	if err := c.WaitReady(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", EnvTestRedis, err)
	}
	return c, nil
}

// TB is the part of testing.TB the harness uses. It is declared here so that
// a program that starts a cluster (engined dev, the bench) links no testing.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Cleanup(func())
}

// HeldCalls counts the clients of node that wait, blocked, in an FCALL: the
// calls a CLIENT PAUSE holds. Tests use it to know that a call reached the
// shard.
func HeldCalls(ctx context.Context, node *redis.Client) (int, error) {
	list, err := node.ClientList(ctx).Result()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range strings.Split(list, "\n") {
		if strings.Contains(c, " flags=b ") && strings.Contains(c, " cmd=fcall ") {
			n++
		}
	}
	return n, nil
}
