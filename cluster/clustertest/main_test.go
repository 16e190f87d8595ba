package clustertest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
)

// shared is the cluster the tests of this package share: 3 masters with one
// replica each, started once by TestMain. Tests that kill nodes in it leave
// it ready again.
var shared *Cluster

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		// ExampleStart starts servers: -short leaves it out, as the tests
		// that need Redis skip themselves.
		if f := flag.Lookup("test.skip"); f != nil && f.Value.String() == "" {
			_ = f.Value.Set("^ExampleStart$")
		}
		os.Exit(m.Run())
	}
	ctx, cancel := context.WithTimeout(context.Background(), testStartTimeout)
	c, err := StartForMain(ctx, Options{Masters: 3, Replicas: 1})
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "redis cluster: %v\n", err)
		os.Exit(1)
	}
	shared = c
	code := m.Run()
	if err := c.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stop redis cluster: %v\n", err)
		code = max(code, 1)
	}
	os.Exit(code)
}

// sharedCluster returns the shared cluster, skipping the test under -short.
func sharedCluster(t *testing.T) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Redis; skipped under -short")
	}
	return shared
}

// needServer skips the test under -short: it starts redis-server itself.
func needServer(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs redis-server; skipped under -short")
	}
}

// startedOnly gives c, the shared cluster, when the harness started it, else
// (ATOMLEDGER_TEST_REDIS names an existing cluster, whose nodes the harness
// may not kill) a cluster of the same shape started for this test alone: a
// test that kills or restarts nodes runs either way, it never skips.
func startedOnly(t *testing.T, c *Cluster) *Cluster {
	t.Helper()
	if os.Getenv(EnvTestRedis) == "" {
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), testStartTimeout)
	defer cancel()
	own, err := Start(ctx, Options{Masters: 3, Replicas: 1})
	if err != nil {
		t.Fatalf("redis cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := own.Stop(); err != nil {
			t.Errorf("stop redis cluster: %v", err)
		}
	})
	return own
}
