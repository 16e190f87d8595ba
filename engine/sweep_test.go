package engine_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// ownEngine gives an engine on a cluster of its own: the sweeper and the
// relay work on every slot, and would take other tests' holds and events.
func ownEngine(t *testing.T) (*clustertest.Cluster, *engine.Engine) {
	t.Helper()
	c := clustertest.StartForTest(t, clustertest.Options{Masters: 2})
	rdb := c.Client(nil)
	t.Cleanup(func() { _ = rdb.Close() })
	return c, engine.New(rdb, nil)
}

// TestSweeper_ReleasesExpiredHolds: a running sweeper releases every expired
// hold, funds, points and coupon, under an id of its own. How soon after the
// expiry is logged, not asserted: on a loaded machine a sweep can come late
// without anything being wrong.
func TestSweeper_ReleasesExpiredHolds(t *testing.T) {
	needRedis(t)
	c, e := ownEngine(t)
	ctx := context.Background()
	var holders []string
	for i := range 30 {
		h := newID("sw" + strconv.Itoa(i))
		holders = append(holders, h)
		_, err := e.Apply(ctx, instructions.New("open", h).Open().Credit("CNY", "10.00").EarnPoints("50").
			GrantCoupon("c1", time.Time{}).
			Freeze("CNY", "3.00", "order", time.Second).FreezePoints("20", "order").LockCoupon("c1", "order"))
		require.NoError(t, err)
	}
	expires := time.Now().Add(time.Second)
	sw := engine.NewSweeper(e, nil)
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = sw.Run(sctx); close(done) }()
	defer func() { cancel(); <-done }()

	require.Eventually(t, func() bool { return sw.Stats().Released == int64(len(holders)) }, time.Minute, 20*time.Millisecond,
		"stats %+v", sw.Stats())
	t.Logf("released %v after the expiry", time.Since(expires).Round(time.Millisecond))
	assert.Zero(t, sw.Stats().Errors)

	rdb := c.Client(nil)
	defer rdb.Close()
	for _, h := range holders {
		st, err := e.State(ctx, h)
		require.NoError(t, err)
		assert.Empty(t, st.Holds)
		assert.Equal(t, instructions.Balance{Available: "10.00", Frozen: "0.00"}, st.Balances["CNY"])
		assert.Equal(t, instructions.Points{Available: "50", Frozen: "0"}, st.Points)
		assert.Equal(t, "available", st.Coupons["c1"])
		// The release has its event, under the sweeper's id. Two of the
		// holders can share a slot and so an outbox: take this holder's last.
		msgs, err := rdb.XRange(ctx, cluster.Outbox(cluster.HolderSlot(h)), "-", "+").Result()
		require.NoError(t, err)
		var last map[string]any
		for _, m := range msgs {
			if m.Values["holder"] == h {
				last = m.Values
			}
		}
		require.NotNil(t, last, "no event of %s in its slot's outbox", h)
		assert.Equal(t, "2", last["seq"])
		assert.Regexp(t, `^sweep-[0-9a-f]{24}$`, last["id"])
		n, err := rdb.ZCard(ctx, cluster.Expiry(cluster.HolderSlot(h))).Result()
		require.NoError(t, err)
		assert.Zero(t, n, "the expiry index is empty")
	}

	t.Run("a stale index entry is removed", func(t *testing.T) {
		h := holders[0]
		key := cluster.Expiry(cluster.HolderSlot(h))
		require.NoError(t, rdb.ZAdd(ctx, key, redis.Z{Score: 1, Member: h + " gone"}).Err())
		// The sweeper counts the entry once its ZREM has answered: wait for both.
		require.Eventually(t, func() bool { return rdb.ZCard(ctx, key).Val() == 0 && sw.Stats().Stale == 1 },
			time.Minute, 20*time.Millisecond, "stale entries counted: %d", sw.Stats().Stale)
	})
}

func TestSweepID_Deterministic(t *testing.T) {
	a := engine.SweepID("u1", "order", 1700000000000)
	assert.Equal(t, a, engine.SweepID("u1", "order", 1700000000000))
	assert.NotEqual(t, a, engine.SweepID("u1", "order", 1700000000001))
	assert.NotEqual(t, a, engine.SweepID("u1", "order2", 1700000000000))
	assert.True(t, instructions.ValidID(a))
}
