package main

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// DESIGN.md, rule 8 and the daemon's readiness ("Redis reachable, scripts
// loaded"): one address is a standalone server unless --redis-cluster says
// otherwise. Given one node of a cluster so, the daemon is not ready (the
// library would be loaded on that node alone, and every holder of the other
// nodes answered MOVED), and says which flag names a cluster.
func TestConformance2_OneClusterNodeAsAServerIsNotReady(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil, "--redis", testCluster.Addrs()[0])
	a := d.doWith(t, http.MethodGet, "/readyz", "", nil)
	wantErrorAnswer(t, a, http.StatusServiceUnavailable, "UNAVAILABLE")
	assert.Contains(t, string(a.body), "is a node of a Redis Cluster")
	assert.Contains(t, string(a.body), "--redis-cluster")

	d = startServe(t, nil, "--redis", testCluster.Addrs()[0], "--redis-cluster")
	assert.Equal(t, http.StatusOK, d.doWith(t, http.MethodGet, "/readyz", "", nil).status, "named a cluster, it is ready")
}
