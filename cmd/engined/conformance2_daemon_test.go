package main

import (
	"context"
	"encoding/json"
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
	assert.Equal(t, http.StatusOK, d.readyz(t).status, "named a cluster, it is ready")
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

// DESIGN.md, "Result": the JSON types of a result's and a state's fields,
// read literally: seq a whole number, replayed a boolean, every amount a
// decimal string at its asset's scale (points whole), a coupon's state a
// string, a hold's legs strings, its coupons a list and expires_ms a whole
// number.
func TestConformance2_ResultAndStateTypes(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	h := newID("types")
	a := d.post(t, instructionJSON(newID("r"), h, `[{"op": "open"}, {"op": "credit", "asset": "USDT", "amount": "5"},
		{"op": "earn_points", "amount": "300"}, {"op": "grant_coupon", "coupon": "c-1"},
		{"op": "freeze", "asset": "USDT", "amount": "1.5", "hold": "o-1", "ttl_ms": 3600000},
		{"op": "freeze_points", "amount": "20", "hold": "o-1"}, {"op": "lock_coupon", "coupon": "c-1", "hold": "o-1"}]`))
	require.Equal(t, http.StatusOK, a.status, "%s", a)
	st := d.do(t, http.MethodGet, "/v1/holders/"+h, "")
	require.Equal(t, http.StatusOK, st.status, "%s", st)
	for name, body := range map[string][]byte{"result": a.body, "state": st.body} {
		t.Run("the "+name, func(t *testing.T) {
			var v map[string]any
			require.NoError(t, json.Unmarshal(body, &v))
			assert.Equal(t, float64(1), v["seq"])
			assert.Equal(t, h, v["holder"])
			if name == "result" {
				assert.Equal(t, false, v["replayed"])
			} else {
				assert.Equal(t, "active", v["status"])
			}
			assert.Equal(t, map[string]any{"USDT": map[string]any{"available": "3.500000", "frozen": "1.500000"}}, v["balances"])
			assert.Equal(t, map[string]any{"available": "280", "frozen": "20"}, v["points"])
			assert.Equal(t, map[string]any{"c-1": "held:o-1"}, v["coupons"])
			holds, _ := v["holds"].(map[string]any)
			hold, _ := holds["o-1"].(map[string]any)
			require.NotNil(t, hold, "%s", body)
			assert.Equal(t, map[string]any{"USDT": "1.500000", "points": "20"}, hold["legs"])
			assert.Equal(t, []any{"c-1"}, hold["coupons"])
			ms, ok := hold["expires_ms"].(float64)
			assert.True(t, ok && ms > 1e12 && ms == float64(int64(ms)), "expires_ms %v is a whole number of ms", hold["expires_ms"])
		})
	}
}
