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

// A transfer's settle without an amount (all that is left of a leg, or the
// whole hold of one leg) settles what balances the transfer, on both paths,
// and only if the hold holds exactly that: otherwise the transfer aborts
// EXCEEDS_HOLD (or HOLD_NOT_FOUND) with every holder's whole state as it was.
func TestTransfer_SettleWithoutAnAmount(t *testing.T) {
	needRedis(t)
	cases := []struct {
		name   string
		settle instructions.Instruction // the payer's op on its holds ord-1 (100 USDT), ord-2 (50 USDT, 0.5 BTC), ord-3 (10 USDT, a coupon)
		credit string                   // USDT the payee receives
		code   error                    // nil: committed
		msg    string
	}{
		{"all that is left of a leg", ops().SettleLeg("ord-1", "USDT", ""), "100", nil, ""},
		{"the whole hold", ops().Settle("ord-1"), "100", nil, ""},
		{"a leg that holds more", ops().SettleLeg("ord-1", "USDT", ""), "60", engine.ErrExceedsHold, "it holds 100.000000 USDT, and the transfer balances with 60.000000"},
		{"a leg that holds less", ops().SettleLeg("ord-1", "USDT", ""), "160", engine.ErrExceedsHold, "it holds 100.000000 USDT"},
		{"a whole hold of two legs", ops().Settle("ord-2"), "50", engine.ErrExceedsHold, "other legs than USDT"},
		{"a whole hold with a coupon", ops().Settle("ord-3"), "10", engine.ErrExceedsHold, "holds coupons"},
		{"a hold that is not there", ops().Settle("ord-9"), "50", engine.ErrHoldNotFound, "not found"},
	}
	for _, path := range []struct {
		name string
		e    *engine.Engine
	}{{"two phases", twoPhase()}, {"one payer", eng}} {
		for _, c := range cases {
			t.Run(path.name+"/"+c.name, func(t *testing.T) {
				hs := holdersOnMasters(t,
					func(in instructions.Instruction) instructions.Instruction {
						return in.Credit("USDT", "1000").Credit("BTC", "1").Freeze("USDT", "100", "ord-1", time.Hour).
							Freeze("USDT", "50", "ord-2", time.Hour).Freeze("BTC", "0.5", "ord-2", time.Hour).
							Freeze("USDT", "10", "ord-3", time.Hour).GrantCoupon("c-1", time.Time{}).LockCoupon("c-1", "ord-3")
					}, nil)
				before := []instructions.State{state(t, hs[0]), state(t, hs[1])}
				st, err := path.e.Transfer(context.Background(), instructions.Transfer{ID: newID("fill"), Parts: []instructions.Part{
					part(hs[0], c.settle), part(hs[1], ops().Credit("USDT", c.credit))}})
				require.NoError(t, err)
				assert.True(t, st.Complete)
				if c.code != nil {
					require.Equal(t, engine.TransferAborted, st.Status)
					require.NotNil(t, st.Error)
					assert.ErrorIs(t, st.Error, c.code)
					assert.Contains(t, st.Error.Message, c.msg)
					require.NotNil(t, st.PartIndex)
					assert.Equal(t, 0, *st.PartIndex)
					assert.Equal(t, 0, st.Error.OpIndex)
					assert.Equal(t, before[0], state(t, hs[0]), "checked before anyone was charged: the payer's whole state as it was")
					assert.Equal(t, before[1], state(t, hs[1]))
					return
				}
				require.Equal(t, engine.TransferCommitted, st.Status, "%v", st.Error)
				b := state(t, hs[0])
				assert.NotContains(t, b.Holds, "ord-1", "emptied, the hold is closed")
				assert.Equal(t, instructions.Balance{Available: "840.000000", Frozen: "60.000000"}, b.Balances["USDT"])
				assert.Equal(t, "100.000000", state(t, hs[1]).Balances["USDT"].Available)
			})
		}
	}
}
