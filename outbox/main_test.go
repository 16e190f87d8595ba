package outbox_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
)

// One real cluster shared by the package's tests that need no cluster of
// their own (most start one with ownEngine: they reshard, stop a replica,
// or count every stream).
var testCluster *clustertest.Cluster

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // the tests that need Redis skip themselves
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	c, err := clustertest.StartForMain(ctx, clustertest.Options{Masters: 1})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start redis cluster:", err)
		os.Exit(1)
	}
	testCluster = c
	code := m.Run()
	_ = c.Stop()
	os.Exit(code)
}

// needRedis skips under -short; otherwise the cluster of TestMain is there.
func needRedis(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Redis")
	}
}

func newID(prefix string) string { return clustertest.NewID(prefix) }

// ownEngine gives an engine on a cluster of its own: a relay there reads
// only the outboxes its test wrote, and the test may reshard it or stop its
// servers.
func ownEngine(t *testing.T) (*clustertest.Cluster, *engine.Engine) {
	t.Helper()
	c := clustertest.StartForTest(t, clustertest.Options{Masters: 2})
	rdb := c.Client(nil)
	t.Cleanup(func() { _ = rdb.Close() })
	return c, engine.New(rdb, nil)
}
