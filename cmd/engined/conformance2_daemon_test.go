package main

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// The same mistake with engined apply: the holder's node answers MOVED,
// and the error object says which flag names a cluster.
func TestConformance2_ApplyToOneClusterNodeSaysHowToNameACluster(t *testing.T) {
	needRedis(t)
	t.Parallel()
	ctx := context.Background()
	rdb := testCluster.Client(nil)
	t.Cleanup(func() { _ = rdb.Close() })
	node := testCluster.Addrs()[0]
	var holder string
	for i := 0; holder == ""; i++ {
		h := newID("elsewhere")
		m, err := rdb.MasterForKey(ctx, "{h:"+h+"}")
		require.NoError(t, err)
		if m.Options().Addr != node {
			holder = h
		}
		require.Less(t, i, 100, "no holder off %s", node)
	}
	in := instructionJSON(newID("i"), holder, `[{"op": "open"}]`)
	body := wantError(t, engined(buildEngined(t), "apply", "-f", "-", "--redis", node).withStdin(in).run(t))
	assert.Equal(t, "UNAVAILABLE", body.Error.Code)
	assert.Contains(t, body.Error.Message, "MOVED")
	assert.Contains(t, body.Error.Message, "say so with --redis-cluster")
}
