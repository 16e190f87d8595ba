package engine_test

import (
	"context"
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

// The same engine works on one plain Redis server.
func TestApply_Standalone(t *testing.T) {
	needRedis(t)
	srv := clustertest.StartForTest(t, clustertest.Options{Standalone: true})
	c := redis.NewClient(&redis.Options{Addr: srv.Nodes[0].Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	e := engine.New(c, nil)
	require.NoError(t, e.Load(ctx))

	h := newID("h")
	_, err := e.Apply(ctx, instructions.New("open", h).Open().Credit("CNY", "100").EarnPoints("10").GrantCoupon("c", time.Time{}))
	require.NoError(t, err)
	res, err := e.Apply(ctx, instructions.New("pay", h).Debit("CNY", "80.00").SpendPoints("10").RedeemCoupon("c").Freeze("CNY", "5", "o", time.Minute))
	require.NoError(t, err)
	assert.Equal(t, instructions.Balance{Available: "15.00", Frozen: "5.00"}, res.Balances["CNY"])

	require.NoError(t, c.FunctionFlush(ctx).Err())
	out := e.ApplyBatch(ctx, []instructions.Instruction{
		instructions.New("b1", h).Debit("CNY", "1"),
		instructions.New("b2", h).Debit("CNY", "100"),
		instructions.New("pay", h).Debit("CNY", "80.00").SpendPoints("10").RedeemCoupon("c").Freeze("CNY", "5", "o", time.Minute),
	})
	require.NoError(t, out[0].Err)
	assert.ErrorIs(t, out[1].Err, engine.ErrInsufficientFunds)
	require.NoError(t, out[2].Err)
	assert.True(t, out[2].Result.Replayed)

	st, err := e.State(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, int64(3), st.Seq)
	assert.Equal(t, "14.00", st.Balances["CNY"].Available)
	n, err := c.XLen(ctx, cluster.Outbox(cluster.HolderSlot(h))).Result()
	require.NoError(t, err)
	assert.Equal(t, int64(3), n)
}
