package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// rawHoldOf reads hold's stored form on holder ("" when it is closed).
func rawHoldOf(t *testing.T, holder, hold string) string {
	t.Helper()
	v, err := rdb.HGet(context.Background(), cluster.Holder(holder), stored.PrefixHold+hold).Result()
	if err != nil {
		return ""
	}
	return v
}

// The sweeper expires an order (with a TTL) that two fills in flight have
// emptied: the release of the whole expired hold closes it, whatever its
// count; the fill that then commits finds it closed, the one that aborts
// gives its amount to available. Nothing is left open and money is
// conserved.
func TestTakesAdversary_TheSweeperExpiresAnOrderFillsEmptied(t *testing.T) {
	needRedis(t)
	ttl := 1500 * time.Millisecond
	hs := holdersOnMasters(t,
		func(in instructions.Instruction) instructions.Instruction {
			return in.Credit("USDT", "100").Freeze("USDT", "100", "ord-1", ttl)
		},
		sellerOrder("ord-7", "0.6"), sellerOrder("ord-8", "0.4"))
	before := totals(t, hs...)
	exp := state(t, hs[0]).Holds["ord-1"].ExpiresMs
	a := buyerPrepared(t, trade(newID("x"), hs[0], "ord-1", hs[1], "ord-7", "60", "0.6"))
	b := buyerPrepared(t, trade(newID("x"), hs[0], "ord-1", hs[2], "ord-8", "40", "0.5"))
	raw := rawHoldOf(t, hs[0], "ord-1")
	require.Regexp(t, `\|2$`, raw, "two undecided takes")

	time.Sleep(time.Until(time.UnixMilli(exp)) + 200*time.Millisecond)
	_, err := eng.ReleaseExpired(context.Background(), hs[0], "ord-1", exp)
	require.NoError(t, err)
	assert.NotContains(t, state(t, hs[0]).Holds, "ord-1", "an expired order closes, however many fills took from it")

	st := transfer(t, a)
	require.Equal(t, engine.TransferCommitted, st.Status, "%+v", st.Error)
	st = transfer(t, b)
	require.Equal(t, engine.TransferAborted, st.Status)
	buyer := state(t, hs[0])
	assert.Empty(t, buyer.Holds)
	assert.Equal(t, instructions.Balance{Available: "40.000000", Frozen: "0.000000"}, buyer.Balances["USDT"])
	assert.Equal(t, before, totals(t, hs...), "money is conserved")
	n, err := rdb.ZScore(context.Background(), cluster.Expiry(cluster.HolderSlot(hs[0])), hs[0]+" ord-1").Result()
	assert.Error(t, err, "no expiry index entry left: %v", n)
}

// A fill whose buyer's part settles two legs of one order and a leg of a
// second order, with another fill in flight on the first order: each hold
// counts the fill once, and once every fill is decided no count is left.
func TestTakesAdversary_AFillFromTwoLegsAndTwoHoldsCountsOncePerHold(t *testing.T) {
	needRedis(t)
	hs := holdersOnMasters(t,
		func(in instructions.Instruction) instructions.Instruction {
			return in.Credit("USDT", "200").Credit("EUR", "50").Freeze("USDT", "100", "ord-1", time.Hour).
				Freeze("EUR", "50", "ord-1", time.Hour).Freeze("USDT", "100", "ord-2", time.Hour)
		},
		sellerOrder("ord-7", "0.6"), sellerOrder("ord-8", "0.4"))
	before := totals(t, hs...)
	multi := func(id, btc string) instructions.Transfer {
		return instructions.Transfer{ID: id, Parts: []instructions.Part{
			part(hs[0], ops().SettleLeg("ord-1", "USDT", "30").SettleLeg("ord-1", "EUR", "50").SettleLeg("ord-1", "USDT", "30").
				SettleLeg("ord-2", "USDT", "100").Credit("BTC", btc)),
			part(hs[1], ops().SettleLeg("ord-7", "BTC", btc).Credit("USDT", "160").Credit("EUR", "50")),
		}}
	}
	// B: 40 from ord-1, will abort.
	b := buyerPrepared(t, trade(newID("x"), hs[0], "ord-1", hs[2], "ord-8", "40", "0.5"))
	// M: aborts too (0.7 BTC of a hold of 0.6), after its buyer's prepare.
	m := buyerPrepared(t, multi(newID("x"), "0.7"))
	assert.Regexp(t, `^[0-9]+\|\|\|2$`, rawHoldOf(t, hs[0], "ord-1"))
	assert.Regexp(t, `^[0-9]+\|\|\|1$`, rawHoldOf(t, hs[0], "ord-2"))
	st := transfer(t, m)
	require.Equal(t, engine.TransferAborted, st.Status)
	assert.Regexp(t, `^[0-9]+\|EUR=5000,USDT=60000000\|\|1$`, rawHoldOf(t, hs[0], "ord-1"))
	assert.Regexp(t, `^[0-9]+\|USDT=100000000\|$`, rawHoldOf(t, hs[0], "ord-2"))
	// M again, committing now.
	m2 := transfer(t, multi(newID("x"), "0.6"))
	require.Equal(t, engine.TransferCommitted, m2.Status, "%+v", m2.Error)
	assert.Regexp(t, `^[0-9]+\|\|\|1$`, rawHoldOf(t, hs[0], "ord-1"), "B is still undecided")
	assert.Equal(t, "", rawHoldOf(t, hs[0], "ord-2"))
	st = transfer(t, b)
	require.Equal(t, engine.TransferAborted, st.Status)
	assert.Regexp(t, `^[0-9]+\|USDT=40000000\|$`, rawHoldOf(t, hs[0], "ord-1"))
	assert.Equal(t, before, totals(t, hs...), "money is conserved")
	apply(t, instructions.New(newID("rel"), hs[0]).Release("ord-1"))
}

// A trade whose buyer's part settles the whole order hold (settle without
// leg or amount, "as in an instruction", docs/transfers.md), while another
// fill B from that order is in flight and then aborts, before or after the
// whole-settle's commit. A settle of the whole hold captures everything
// left and closes the hold; docs/transfers.md (Limits): a fill in flight
// that then aborts gives its amount to available. The part's commit says
// so to its close (units 1). Before, the close only counted down: the order
// stayed open, and B's abort put 40 USDT back into an order the client had
// settled, whichever came first.
func TestTakesAdversary_ATradeThatSettlesTheWholeOrderClosesIt(t *testing.T) {
	needRedis(t)
	for _, abortFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("abort first %v", abortFirst), func(t *testing.T) {
			hs := holdersOnMasters(t, buyerOrder, sellerOrder("ord-7", "0.6"), sellerOrder("ord-8", "0.4"))
			before := totals(t, hs...)
			// B takes 40 of the order; its seller's part will fail (0.5 of 0.4).
			b := buyerPrepared(t, trade(newID("x"), hs[0], "ord-1", hs[2], "ord-8", "40", "0.5"))
			whole := instructions.Transfer{ID: newID("x"), Parts: []instructions.Part{
				part(hs[0], ops().Settle("ord-1").Credit("BTC", "0.6")),
				part(hs[1], ops().SettleLeg("ord-7", "BTC", "0.6").Credit("USDT", "60")),
			}}
			// The whole-settle's driver stops after its prepares: the order
			// is empty, counted twice.
			require.NoError(t, eng.TransferStep(context.Background(), whole, "begin", 0))
			require.NoError(t, eng.TransferStep(context.Background(), whole, "prepare", 0))
			require.NoError(t, eng.TransferStep(context.Background(), whole, "prepare", 1))
			assert.Regexp(t, `^[0-9]+\|\|\|2$`, rawHoldOf(t, hs[0], "ord-1"))
			if abortFirst {
				require.Equal(t, engine.TransferAborted, transfer(t, b).Status)
			}
			st := transfer(t, whole)
			require.Equal(t, engine.TransferCommitted, st.Status, "%+v", st.Error)
			assert.NotContains(t, state(t, hs[0]).Holds, "ord-1", "a hold settled whole is closed (observed %q)", rawHoldOf(t, hs[0], "ord-1"))
			if !abortFirst {
				require.Equal(t, engine.TransferAborted, transfer(t, b).Status)
			}
			buyer := state(t, hs[0])
			assert.NotContains(t, buyer.Holds, "ord-1", "nothing goes back into an order settled whole")
			assert.Equal(t, instructions.Balance{Available: "40.000000", Frozen: "0.000000"}, buyer.Balances["USDT"])
			assert.Equal(t, before, totals(t, hs...), "money is conserved")
		})
	}
}
