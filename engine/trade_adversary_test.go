package engine_test

import (
	"context"
	"strconv"
	"testing"

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
