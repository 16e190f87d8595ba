package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
)

func TestApply_Checkout(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "200.00").EarnPoints("5000").GrantCoupon("c-9", time.Time{}).Credit("USDT", "10")
	})
	in := instructions.New("order-55-pay", h).WithCounterparty("merchant:88").
		Debit("CNY", "80.00").SpendPoints("2000").RedeemCoupon("c-9").Freeze("USDT", "1.5", "ord-1", time.Minute)
	res, err := eng.Apply(context.Background(), in)
	require.NoError(t, err)
	assert.Equal(t, int64(2), res.Seq)
	assert.False(t, res.Replayed)
	assert.Equal(t, instructions.Balance{Available: "120.00", Frozen: "0.00"}, res.Balances["CNY"])
	assert.Equal(t, instructions.Balance{Available: "8.500000", Frozen: "1.500000"}, res.Balances["USDT"])
	assert.Equal(t, &instructions.Points{Available: "3000", Frozen: "0"}, res.Points)
	assert.Equal(t, map[string]string{"c-9": "used"}, res.Coupons)
	require.Contains(t, res.Holds, "ord-1")
	assert.Equal(t, map[string]string{"USDT": "1.500000"}, res.Holds["ord-1"].Legs)

	again, err := eng.Apply(context.Background(), in)
	require.NoError(t, err)
	assert.True(t, again.Replayed)
	again.Replayed = false
	assert.Equal(t, res, again)
}
