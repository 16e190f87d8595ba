package engine_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// A part's commit in the two phases is the settle of x:<id>, a close per
// order hold it settles from and its credits: with 64 credits, 65 steps,
// which the library refuses. Before, such a trade was accepted, committed,
// and its payee's commit refused for ever: the payers charged, the payee
// never paid, x:<id> left open (DESIGN.md: "What can be checked before the
// commit point is checked there ... so that a committed transfer can always
// finish"). Now it is INVALID_INSTRUCTION before Redis, nothing changed; 63
// credits (a commit of 64 steps) commit and finish.
func TestTradeAdversary_APartWhoseCommitWouldPassTheOpLimitIsRefused(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t,
		func(in instructions.Instruction) instructions.Instruction { return in.Credit("USDT", "100") },
		func(in instructions.Instruction) instructions.Instruction { return in.Credit("BTC", "1") },
		nil)
	before := totals(t, hs...)
	trade := func(n int) instructions.Transfer {
		credits := ops()
		for range n {
			credits = credits.Credit("USDT", "1")
		}
		return instructions.Transfer{ID: newID("trade"), Parts: []instructions.Part{
			part(hs[0], ops().Debit("USDT", strconv.Itoa(n)).Credit("BTC", "0.5")),
			part(hs[1], ops().Debit("BTC", "0.5")),
			part(hs[2], credits),
		}}
	}
	_, err := shortTimeout().Transfer(ctx, trade(instructions.MaxOps))
	require.ErrorIs(t, err, engine.ErrInvalidInstruction)
	assert.Contains(t, err.Error(), "part 2")
	assert.Equal(t, before, totals(t, hs...), "nothing changed")

	st, err := shortTimeout().Transfer(ctx, trade(instructions.MaxOps-1))
	require.NoError(t, err)
	assert.Equal(t, engine.TransferCommitted, st.Status)
	assert.True(t, st.Complete)
	assert.Equal(t, before, totals(t, hs...), "money is conserved")
	assert.NotContains(t, state(t, hs[2]).Holds, "x:"+st.ID, "no transfer hold left open")
}

// Two fills from one order hold, in flight at once: each takes its amount
// out of the hold at prepare, so the hold can be empty while one of them is
// still undecided. The first to commit used to close the emptied hold; the
// other, aborting, then found no hold to give back into and made its amount
// available: the order's reservation lost while the order is still open.
// Now a hold stays open while a transfer that took from it is undecided,
// and the abort gives back into it.
func TestTradeAdversary_AnAbortedFillGivesBackIntoAnOrderAnotherFillEmptied(t *testing.T) {
	needRedis(t)
	hs := holdersOnMasters(t, buyerOrder, sellerOrder("ord-7", "0.6"), sellerOrder("ord-8", "0.4"))
	before := totals(t, hs...)
	// Fill B (40 USDT) is prepared on the buyer's side; its seller's part will
	// fail (0.5 BTC out of a hold of 0.4).
	b := buyerPrepared(t, trade(newID("x"), hs[0], "ord-1", hs[2], "ord-8", "40", "0.5"))
	// Fill A (60 USDT) takes the rest of the order and commits.
	a := transfer(t, trade(newID("x"), hs[0], "ord-1", hs[1], "ord-7", "60", "0.6"))
	require.Equal(t, engine.TransferCommitted, a.Status, "%+v", a.Error)
	assert.Contains(t, state(t, hs[0]).Holds, "ord-1", "an order another fill still holds from stays open")

	st := transfer(t, b)
	require.Equal(t, engine.TransferAborted, st.Status)
	assert.ErrorIs(t, st.Error, engine.ErrExceedsHold)
	buyer := state(t, hs[0])
	require.Contains(t, buyer.Holds, "ord-1", "B's 40 is back in the order")
	assert.Equal(t, map[string]string{"USDT": "40.000000"}, buyer.Holds["ord-1"].Legs)
	assert.Equal(t, instructions.Balance{Available: "0.000000", Frozen: "40.000000"}, buyer.Balances["USDT"])
	assert.Equal(t, before, totals(t, hs...), "money is conserved")

	// The order's last fill empties it, with nothing else in flight: closed.
	c := transfer(t, trade(newID("x"), hs[0], "ord-1", hs[2], "ord-8", "40", "0.4"))
	require.Equal(t, engine.TransferCommitted, c.Status, "%+v", c.Error)
	assert.NotContains(t, state(t, hs[0]).Holds, "ord-1")
	assert.Equal(t, before, totals(t, hs...))
}

// A cancel (release of the whole hold) while a fill is in flight closes the
// order at once, as a cancel means: what the fill took comes back to
// available if the fill aborts, not into an order the client cancelled.
func TestTradeAdversary_ACancelledOrderStaysClosedWhenItsFillAborts(t *testing.T) {
	needRedis(t)
	hs := holdersOnMasters(t, buyerOrder, sellerOrder("ord-8", "0.4"))
	b := buyerPrepared(t, trade(newID("x"), hs[0], "ord-1", hs[1], "ord-8", "40", "0.5"))
	apply(t, instructions.New(newID("cancel"), hs[0]).Release("ord-1"))
	assert.NotContains(t, state(t, hs[0]).Holds, "ord-1")

	st := transfer(t, b)
	require.Equal(t, engine.TransferAborted, st.Status)
	buyer := state(t, hs[0])
	assert.NotContains(t, buyer.Holds, "ord-1")
	assert.Equal(t, instructions.Balance{Available: "100.000000", Frozen: "0.000000"}, buyer.Balances["USDT"])
}

// buyerOrder opens a buyer with 100 USDT frozen for order ord-1.
func buyerOrder(in instructions.Instruction) instructions.Instruction {
	return in.Credit("USDT", "100").Freeze("USDT", "100", "ord-1", time.Hour)
}

// sellerOrder opens a seller with 1 BTC, btc of it frozen for order hold.
func sellerOrder(hold, btc string) func(instructions.Instruction) instructions.Instruction {
	return func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("BTC", "1").Freeze("BTC", btc, hold, time.Hour)
	}
}

// buyerPrepared begins trade tr and prepares its buyer's part only, as a
// driver stopped there would leave it.
func buyerPrepared(t *testing.T, tr instructions.Transfer) instructions.Transfer {
	t.Helper()
	require.NoError(t, eng.TransferStep(context.Background(), tr, "begin", 0))
	require.NoError(t, eng.TransferStep(context.Background(), tr, "prepare", 0))
	return tr
}
