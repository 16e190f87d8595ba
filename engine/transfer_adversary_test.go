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

// Transfers against an adversary: drivers that interleave, bodies that try
// the rules, holds and payees that change under a transfer. Each test says
// what it tries and checks that no money is made or lost.

// A settle without an amount is checked by whichever driver prepares the
// transfer, not only by the one that began it: a beginner that stops after
// begin (killed, or its answer lost) left the check to the client's retry,
// which settled what balanced the transfer and left the rest of the hold.
// A retry that comes after the part's prepare took from the hold (its
// transfer hold is open) does not check it again.
func TestTransferAdversary_SettleWithoutAnAmountCheckedByEveryDriver(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	cases := []struct {
		name   string
		e      func() *engine.Engine
		held   string // USDT in ord-1
		steps  string // the first driver's, before it stops
		code   error  // nil: committed
		settle instructions.Instruction
	}{
		{"two phases, a leg that holds more", twoPhase, "150", "begin", engine.ErrExceedsHold, ops().SettleLeg("ord-1", "USDT", "")},
		{"two phases, a whole hold that holds more", twoPhase, "150", "begin", engine.ErrExceedsHold, ops().Settle("ord-1")},
		{"two phases, the part already prepared", twoPhase, "100", "begin,prepare:0", nil, ops().SettleLeg("ord-1", "USDT", "")},
		{"one payer, a leg that holds more", shortTimeout, "150", "begin", engine.ErrExceedsHold, ops().SettleLeg("ord-1", "USDT", "")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hs := holdersOnMasters(t, func(in instructions.Instruction) instructions.Instruction {
				return in.Credit("USDT", "1000").Freeze("USDT", c.held, "ord-1", time.Hour)
			}, nil)
			before := []instructions.State{state(t, hs[0]), state(t, hs[1])}
			tr := instructions.Transfer{ID: newID("fill"), Parts: []instructions.Part{
				part(hs[0], c.settle), part(hs[1], ops().Credit("USDT", "100"))}}
			require.NoError(t, driverSteps(ctx, c.e(), tr, c.steps))

			st, err := c.e().Transfer(ctx, tr)
			require.NoError(t, err)
			require.True(t, st.Complete)
			if c.code == nil {
				require.Equal(t, engine.TransferCommitted, st.Status, "%v", st.Error)
				assert.NotContains(t, state(t, hs[0]).Holds, "ord-1", "settled whole")
				assert.Equal(t, "100.000000", state(t, hs[1]).Balances["USDT"].Available)
				return
			}
			require.Equal(t, engine.TransferAborted, st.Status, "the hold holds %s, the transfer balances with 100", c.held)
			assert.ErrorIs(t, st.Error, c.code)
			assert.Equal(t, valueOf(before[0]), valueOf(state(t, hs[0])), "nothing settled: the order's hold is whole")
			assert.Equal(t, valueOf(before[1]), valueOf(state(t, hs[1])), "nobody paid")
		})
	}
}

// The same transfer id with a settle that says its amount, a settle of all
// that is left of the leg and a settle of the whole hold: three bodies that
// settle the same units but ask different things of the hold. The print
// kept only the units, so a retry with another of them was taken for the
// first and went on with its check; it is IDEMPOTENCY_CONFLICT, as any other
// body under the id.
func TestTransferAdversary_SettleWithAndWithoutAnAmountAreOtherBodies(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	settles := []instructions.Instruction{ops().SettleLeg("ord-1", "USDT", ""), ops().Settle("ord-1"), ops().SettleLeg("ord-1", "USDT", "100")}
	for i, first := range settles {
		for j, then := range settles {
			if i == j {
				continue
			}
			hs := holdersOnMasters(t, func(in instructions.Instruction) instructions.Instruction {
				return in.Credit("USDT", "1000").Freeze("USDT", "150", "ord-1", time.Hour)
			}, nil)
			id := newID("fill")
			body := func(s instructions.Instruction) instructions.Transfer {
				return instructions.Transfer{ID: id, Parts: []instructions.Part{part(hs[0], s), part(hs[1], ops().Credit("USDT", "100"))}}
			}
			require.NoError(t, shortTimeout().TransferStep(ctx, body(first), "begin", 0))
			_, err := shortTimeout().Transfer(ctx, body(then))
			assert.ErrorIs(t, err, engine.ErrIdempotencyConflict, "settle %d, then settle %d", i, j)
			assert.Equal(t, "850.000000", state(t, hs[0]).Balances["USDT"].Available, "nothing settled")
			assert.Empty(t, state(t, hs[1]).Balances, "nobody paid")
		}
	}
}
