package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

func apply(t *testing.T, in instructions.Instruction) instructions.Result {
	t.Helper()
	res, err := eng.Apply(context.Background(), in)
	require.NoError(t, err)
	return res
}

func TestApply_PartialFillsThenRelease(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("USDT", "1000") })
	res := apply(t, newIn(h).Freeze("USDT", "100", "ord-1", time.Hour))
	assert.Equal(t, instructions.Balance{Available: "900.000000", Frozen: "100.000000"}, res.Balances["USDT"])
	for i, left := range []string{"70.000000", "40.000000", "10.000000"} {
		res = apply(t, newIn(h).WithCounterparty("market").SettleLeg("ord-1", "USDT", "30"))
		assert.Equal(t, left, res.Holds["ord-1"].Legs["USDT"], "fill %d", i+1)
		assert.Equal(t, instructions.Balance{Available: "900.000000", Frozen: left}, res.Balances["USDT"])
	}
	res = apply(t, newIn(h).Release("ord-1"))
	assert.NotContains(t, res.Holds, "ord-1", "a released hold closes")
	assert.Equal(t, instructions.Balance{Available: "910.000000", Frozen: "0.000000"}, res.Balances["USDT"])
	st := state(t, h)
	assert.Empty(t, st.Holds)
	assert.Equal(t, int64(6), st.Seq)
	assert.ErrorIs(t, applyErr(t, newIn(h).Settle("ord-1")), engine.ErrHoldNotFound)
}

func TestApply_SettleLegInFullClosesHold(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "50.00").Freeze("CNY", "20.00", "o", 0)
	})
	res := apply(t, newIn(h).SettleLeg("o", "CNY", ""))
	assert.Empty(t, res.Holds)
	assert.Equal(t, instructions.Balance{Available: "30.00", Frozen: "0.00"}, res.Balances["CNY"])
}

func TestApply_HoldExpiry(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "10.00").GrantCoupon("c-1", time.Time{})
	})
	// The server's clock, on this machine, is read between the two looks at
	// ours, however long the call takes.
	sent := time.Now().UnixMilli()
	res := apply(t, newIn(h).Freeze("CNY", "4.00", "o", 50*time.Millisecond).LockCoupon("c-1", "o"))
	answered := time.Now().UnixMilli()
	exp := res.Holds["o"].ExpiresMs
	assert.GreaterOrEqual(t, exp, sent+50, "expiry from the server clock")
	assert.LessOrEqual(t, exp, answered+50, "expiry from the server clock")
	time.Sleep(120 * time.Millisecond)

	before := readRaw(t, h)
	e := applyErr(t, newIn(h).SettleLeg("o", "CNY", "1.00"))
	assert.ErrorIs(t, e, engine.ErrHoldExpired)
	assert.Equal(t, before, readRaw(t, h))

	res = apply(t, newIn(h).Release("o"))
	assert.Empty(t, res.Holds)
	assert.Equal(t, instructions.Balance{Available: "10.00", Frozen: "0.00"}, res.Balances["CNY"])
	assert.Equal(t, "available", res.Coupons["c-1"])
	assert.Empty(t, readRaw(t, h).Expiry, "a closed hold leaves the expiry index")
}

func mixedHold(in instructions.Instruction) instructions.Instruction {
	return in.Credit("CNY", "100.00").EarnPoints("3000").GrantCoupon("c-9", time.Time{}).
		Freeze("CNY", "30.00", "order-55", time.Hour).FreezePoints("2000", "order-55").LockCoupon("c-9", "order-55")
}

func TestApply_MixedHoldSettledInFull(t *testing.T) {
	needRedis(t)
	h := newHolder(t, mixedHold)
	st := state(t, h)
	hold := st.Holds["order-55"]
	assert.Equal(t, map[string]string{"CNY": "30.00", "points": "2000"}, hold.Legs)
	assert.Equal(t, []string{"c-9"}, hold.Coupons)
	assert.Equal(t, "held:order-55", st.Coupons["c-9"])

	res := apply(t, newIn(h).WithCounterparty("merchant:88").Settle("order-55"))
	assert.Empty(t, res.Holds)
	assert.Equal(t, instructions.Balance{Available: "70.00", Frozen: "0.00"}, res.Balances["CNY"])
	assert.Equal(t, &instructions.Points{Available: "1000", Frozen: "0"}, res.Points)
	assert.Equal(t, map[string]string{"c-9": "used"}, res.Coupons)
	assert.Empty(t, state(t, h).Holds)
}

func TestApply_MixedHoldReleasedInFull(t *testing.T) {
	needRedis(t)
	h := newHolder(t, mixedHold)
	res := apply(t, newIn(h).Release("order-55"))
	assert.Empty(t, res.Holds)
	assert.Equal(t, instructions.Balance{Available: "100.00", Frozen: "0.00"}, res.Balances["CNY"])
	assert.Equal(t, &instructions.Points{Available: "3000", Frozen: "0"}, res.Points)
	assert.Equal(t, map[string]string{"c-9": "available"}, res.Coupons)
	apply(t, newIn(h).RedeemCoupon("c-9")) // usable again
}

func TestApply_HoldCreatedAndUsedInOneInstruction(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "10.00").Credit("BTC", "1")
	})
	res := apply(t, newIn(h).Freeze("CNY", "1.00", "o", time.Minute).Freeze("CNY", "2.00", "o", 0).Freeze("BTC", "0.5", "o", 0))
	assert.Equal(t, map[string]string{"CNY": "3.00", "BTC": "0.50000000"}, res.Holds["o"].Legs)
	res = apply(t, newIn(h).Freeze("CNY", "1.00", "p", time.Minute).Settle("p"))
	assert.NotContains(t, res.Holds, "p")
	assert.Empty(t, readRaw(t, h).Expiry["h p"])
}

func TestApply_SuspendedHolder(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "10.00").Freeze("CNY", "5.00", "o", 0).Suspend()
	})
	assert.Equal(t, "suspended", state(t, h).Status)
	assert.ErrorIs(t, applyErr(t, newIn(h).Debit("CNY", "1.00")), engine.ErrHolderSuspended)
	// Credits, settle and release still apply.
	apply(t, newIn(h).Credit("CNY", "1.00").EarnPoints("5").GrantCoupon("c", time.Time{}).SettleLeg("o", "CNY", "1.00").ReleaseLeg("o", "CNY", "1.00"))
	res := apply(t, newIn(h).Resume().Debit("CNY", "1.00"))
	assert.Equal(t, instructions.Balance{Available: "6.00", Frozen: "3.00"}, res.Balances["CNY"])
	assert.Equal(t, "active", state(t, h).Status)
}

func TestApply_LargestValueIsExact(t *testing.T) {
	needRedis(t)
	h := newHolder(t, nil)
	for _, c := range []struct{ asset, max string }{
		{"CNY", "90071992547409.91"}, {"BTC", "90071992.54740991"}, {"USDT", "9007199254.740991"},
	} {
		res := apply(t, newIn(h).Credit(c.asset, c.max))
		assert.Equal(t, c.max, res.Balances[c.asset].Available)
		assert.Equal(t, c.max, state(t, h).Balances[c.asset].Available)
		res = apply(t, newIn(h).Freeze(c.asset, c.max, "all-"+c.asset, 0))
		assert.Equal(t, c.max, res.Holds["all-"+c.asset].Legs[c.asset])
		res = apply(t, newIn(h).Release("all-"+c.asset))
		assert.Equal(t, c.max, res.Balances[c.asset].Available)
	}
	e := applyErr(t, newIn(h).Credit("CNY", "0.01"))
	assert.ErrorIs(t, e, engine.ErrOverflow)
	assert.Equal(t, `credit 0.01 CNY: CNY would pass 2^53-1 minor units (now 90071992547409.91)`, e.Message)
	assert.ErrorIs(t, applyErr(t, newIn(h).EarnPoints("9007199254740992")), engine.ErrInvalidAmount, "one above 2^53-1 is not an amount")
	res := apply(t, newIn(h).EarnPoints("9007199254740991"))
	assert.Equal(t, "9007199254740991", res.Points.Available)
}

func TestReleaseExpired_OnlyTheHoldOfThatExpiry(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") })
	first := apply(t, newIn(h).Freeze("CNY", "1.00", "o", time.Hour)).Holds["o"].ExpiresMs
	apply(t, newIn(h).Release("o"))
	second := apply(t, newIn(h).Freeze("CNY", "2.00", "o", 2*time.Hour)).Holds["o"].ExpiresMs
	require.NotEqual(t, first, second)

	before := readRaw(t, h)
	_, err := eng.ReleaseExpired(ctx, h, "o", first)
	assert.ErrorIs(t, err, engine.ErrHoldNotFound, "the hold of the first expiry is gone")
	assert.Equal(t, before, readRaw(t, h))

	res, err := eng.ReleaseExpired(ctx, h, "o", second)
	require.NoError(t, err)
	assert.Empty(t, res.Holds)
	assert.Equal(t, instructions.Balance{Available: "10.00", Frozen: "0.00"}, res.Balances["CNY"])
	again, err := eng.ReleaseExpired(ctx, h, "o", second)
	require.NoError(t, err)
	assert.True(t, again.Replayed, "the sweeper's id is deterministic")
}
