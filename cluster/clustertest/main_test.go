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

// startedOnly skips the test when the shared cluster is an existing one,
// whose nodes the harness may not kill.
func startedOnly(t *testing.T) {
	t.Helper()
	if os.Getenv(EnvTestRedis) != "" {
		t.Skipf("%s names an existing cluster; the harness kills only servers it started", EnvTestRedis)
	}
}
