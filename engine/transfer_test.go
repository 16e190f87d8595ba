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
)

// holdersOnMasters opens one holder per setup, each on another master than
// the one before it (the cluster has three), so that a transfer's parts
// really span shards.
func holdersOnMasters(t *testing.T, setups ...func(instructions.Instruction) instructions.Instruction) []string {
	t.Helper()
	ctx := context.Background()
	var hs []string
	used := map[string]bool{}
	for _, setup := range setups {
		for {
			h := newID("h")
			m, err := testCluster.MasterOf(ctx, cluster.HolderSlot(h))
			require.NoError(t, err)
			if used[m] && len(used) < 3 {
				continue
			}
			used[m] = true
			in := instructions.New(newID("open"), h).Open()
			if setup != nil {
				in = setup(in)
			}
			_, err = eng.Apply(ctx, in)
			require.NoError(t, err)
			t.Cleanup(func() { checkInvariants(t, h) })
			hs = append(hs, h)
			break
		}
	}
	return hs
}

func part(holder string, in instructions.Instruction) instructions.Part {
	return instructions.Part{Holder: holder, Ops: in.Ops}
}

func ops() instructions.Instruction { return instructions.Instruction{} }

// trade is a fill: the buyer pays usdt from its order's hold and gets btc,
// the seller the other way round.
func trade(id, buyer, buyOrder, seller, sellOrder, usdt, btc string) instructions.Transfer {
	return instructions.Transfer{ID: id, Parts: []instructions.Part{
		part(buyer, ops().SettleLeg(buyOrder, "USDT", usdt).Credit("BTC", btc)),
		part(seller, ops().SettleLeg(sellOrder, "BTC", btc).Credit("USDT", usdt)),
	}}
}

func transfer(t *testing.T, tr instructions.Transfer) engine.TransferState {
	t.Helper()
	st, err := eng.Transfer(context.Background(), tr)
	require.NoError(t, err)
	return st
}

// valueOf strips what a transfer's two phases change even when it aborts:
// the counter and nothing else.
func valueOf(st instructions.State) instructions.State {
	st.Seq = 0
	return st
}

func TestTransfer_TradeWithPartialFillsThenCancel(t *testing.T) {
	needRedis(t)
	hs := holdersOnMasters(t,
		func(in instructions.Instruction) instructions.Instruction {
			return in.Credit("USDT", "1000").Freeze("USDT", "500", "ord-1", time.Hour)
		},
		func(in instructions.Instruction) instructions.Instruction {
			return in.Credit("BTC", "0.01").Freeze("BTC", "0.01", "ord-7", time.Hour)
		})
	buyer, seller := hs[0], hs[1]

	for i := range 3 {
		st := transfer(t, trade(newID("fill"), buyer, "ord-1", seller, "ord-7", "100", "0.002"))
		require.Equal(t, engine.TransferCommitted, st.Status, "fill %d: %+v", i, st.Error)
		assert.True(t, st.Complete)
		assert.False(t, st.Replayed)
	}
	b, s := state(t, buyer), state(t, seller)
	assert.Equal(t, instructions.Balance{Available: "500.000000", Frozen: "200.000000"}, b.Balances["USDT"])
	assert.Equal(t, instructions.Balance{Available: "0.00600000", Frozen: "0.00000000"}, b.Balances["BTC"])
	assert.Equal(t, map[string]string{"USDT": "200.000000"}, b.Holds["ord-1"].Legs)
	assert.Equal(t, instructions.Balance{Available: "300.000000", Frozen: "0.000000"}, s.Balances["USDT"])
	assert.Equal(t, instructions.Balance{Available: "0.00000000", Frozen: "0.00400000"}, s.Balances["BTC"])
	assert.Equal(t, map[string]string{"BTC": "0.00400000"}, s.Holds["ord-7"].Legs)
	assert.Len(t, b.Holds, 1, "no transfer hold is left behind")
	assert.Len(t, s.Holds, 1)

	apply(t, newIn(buyer).Release("ord-1"))
	apply(t, newIn(seller).Release("ord-7"))
	b, s = state(t, buyer), state(t, seller)
	assert.Equal(t, instructions.Balance{Available: "700.000000", Frozen: "0.000000"}, b.Balances["USDT"])
	assert.Equal(t, instructions.Balance{Available: "0.00400000", Frozen: "0.00000000"}, s.Balances["BTC"])
	assert.Empty(t, b.Holds)
	assert.Empty(t, s.Holds)
}

func TestTransfer_RejectedPartChangesNothingAnywhere(t *testing.T) {
	needRedis(t)
	hs := holdersOnMasters(t,
		func(in instructions.Instruction) instructions.Instruction {
			return in.Credit("USDT", "1000").Freeze("USDT", "100", "ord-1", time.Hour).EarnPoints("50")
		},
		func(in instructions.Instruction) instructions.Instruction {
			return in.Credit("BTC", "0.001").Freeze("BTC", "0.001", "ord-7", time.Hour)
		},
		func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "5.00") })
	before := map[string]instructions.State{}
	for _, h := range hs {
		before[h] = valueOf(state(t, h))
	}
	cases := []struct {
		name string
		tr   instructions.Transfer
		part int
		op   int
		want error
	}{
		{"the seller's hold is short", trade(newID("x"), hs[0], "ord-1", hs[1], "ord-7", "100", "0.002"), 1, 0, engine.ErrExceedsHold},
		{"the buyer takes more than its hold has", trade(newID("x"), hs[0], "ord-1", hs[1], "ord-7", "100.000001", "0.001"), 0, 0, engine.ErrExceedsHold},
		{"a debit beyond the balance", instructions.Transfer{ID: newID("x"), Parts: []instructions.Part{
			part(hs[0], ops().Debit("USDT", "1").SpendPoints("10")),
			part(hs[2], ops().Credit("USDT", "1").EarnPoints("10").Debit("CNY", "5.01")),
			part(hs[1], ops().Credit("CNY", "5.01")),
		}}, 1, 2, engine.ErrInsufficientFunds},
		{"an unknown holder", instructions.Transfer{ID: newID("x"), Parts: []instructions.Part{
			part(hs[2], ops().Debit("CNY", "1.00")),
			part(newID("nobody"), ops().Credit("CNY", "1.00")),
		}}, 1, 0, engine.ErrHolderNotFound},
		{"the order's hold is unknown", trade(newID("x"), hs[0], "ord-1", hs[1], "ord-9", "1", "0.0001"), 1, 0, engine.ErrHoldNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := transfer(t, c.tr)
			require.Equal(t, engine.TransferAborted, st.Status)
			assert.True(t, st.Complete, "every prepared part was given back")
			require.NotNil(t, st.Error)
			assert.ErrorIs(t, st.Error, c.want)
			require.NotNil(t, st.PartIndex)
			assert.Equal(t, c.part, *st.PartIndex)
			assert.Equal(t, c.op, st.Error.OpIndex, "the index of the client's op in its part")
			for _, h := range hs {
				assert.Equal(t, before[h], valueOf(state(t, h)), "holder %s", h)
			}
			again := transfer(t, c.tr)
			assert.True(t, again.Replayed)
			assert.Equal(t, st.Status, again.Status)
			assert.Equal(t, st.Error.Code, again.Error.Code)
		})
	}
}

func TestTransfer_OrderHoldIsWholeAgainAfterAbortAndClosedAfterCommit(t *testing.T) {
	needRedis(t)
	hs := holdersOnMasters(t,
		func(in instructions.Instruction) instructions.Instruction {
			return in.Credit("USDT", "300").Freeze("USDT", "300", "ord-1", time.Hour)
		},
		func(in instructions.Instruction) instructions.Instruction {
			return in.Credit("BTC", "1").Freeze("BTC", "0.4", "ord-7", time.Hour)
		})
	before := state(t, hs[0])
	// The buyer's part takes the whole of ord-1; the seller's fails.
	st := transfer(t, trade(newID("x"), hs[0], "ord-1", hs[1], "ord-7", "300", "0.5"))
	require.Equal(t, engine.TransferAborted, st.Status)
	assert.Equal(t, valueOf(before), valueOf(state(t, hs[0])), "ord-1 is back, legs and expiry")

	st = transfer(t, trade(newID("x"), hs[0], "ord-1", hs[1], "ord-7", "300", "0.4"))
	require.Equal(t, engine.TransferCommitted, st.Status, "%+v", st.Error)
	b, s := state(t, hs[0]), state(t, hs[1])
	assert.Empty(t, b.Holds, "a fill that empties the order's hold closes it")
	assert.Empty(t, s.Holds)
	assert.NotContains(t, b.Balances, "USDT", "nothing is left of it")
	assert.Equal(t, instructions.Balance{Available: "0.40000000", Frozen: "0.00000000"}, b.Balances["BTC"])
}

func TestTransfer_PaymentWithPointsAcrossThreeHolders(t *testing.T) {
	needRedis(t)
	hs := holdersOnMasters(t,
		func(in instructions.Instruction) instructions.Instruction {
			return in.Credit("CNY", "100.00").EarnPoints("500")
		},
		nil, nil)
	tr := instructions.Transfer{ID: newID("pay"), Parts: []instructions.Part{
		part(hs[0], ops().Debit("CNY", "80.00").SpendPoints("200")),
		part(hs[1], ops().Credit("CNY", "79.20").EarnPoints("200")),
		part(hs[2], ops().Credit("CNY", "0.80")),
	}}
	st := transfer(t, tr)
	require.Equal(t, engine.TransferCommitted, st.Status, "%+v", st.Error)
	assert.Equal(t, "20.00", state(t, hs[0]).Balances["CNY"].Available)
	assert.Equal(t, "300", state(t, hs[0]).Points.Available)
	assert.Equal(t, "79.20", state(t, hs[1]).Balances["CNY"].Available)
	assert.Equal(t, "200", state(t, hs[1]).Points.Available)
	assert.Equal(t, "0.80", state(t, hs[2]).Balances["CNY"].Available)

	again := transfer(t, tr)
	assert.True(t, again.Replayed)
	assert.Equal(t, engine.TransferCommitted, again.Status)
	assert.Equal(t, "20.00", state(t, hs[0]).Balances["CNY"].Available, "a replay moves nothing")

	got, err := eng.GetTransfer(context.Background(), tr.ID)
	require.NoError(t, err)
	assert.Equal(t, engine.TransferCommitted, got.Status)
	assert.True(t, got.Complete)
	assert.Equal(t, hs, got.Holders, "the parts' holders, in order")

	other := tr
	other.Parts = []instructions.Part{tr.Parts[0], part(hs[1], ops().Credit("CNY", "80.00").EarnPoints("200"))}
	_, err = eng.Transfer(context.Background(), other)
	assert.ErrorIs(t, err, engine.ErrIdempotencyConflict)
	spelled := tr
	spelled.Parts = []instructions.Part{part(hs[0], ops().Debit("CNY", "80.0").SpendPoints("200")), tr.Parts[1], tr.Parts[2]}
	again, err = eng.Transfer(context.Background(), spelled)
	require.NoError(t, err, "80.0 and 80.00 are the same body")
	assert.True(t, again.Replayed)
}

func TestTransfer_GetUnknown(t *testing.T) {
	needRedis(t)
	id := newID("never")
	_, err := eng.GetTransfer(context.Background(), id)
	assert.ErrorIs(t, err, engine.ErrTransferNotFound)
	// A read's error, not an instruction's: no "apply" in it.
	assert.EqualError(t, err, "TRANSFER_NOT_FOUND: transfer "+id+" not found")
	_, err = eng.GetTransfer(context.Background(), "{bad}")
	assert.ErrorIs(t, err, engine.ErrInvalidID)
}

func TestTransfer_InvalidIsRefusedBeforeRedis(t *testing.T) {
	needRedis(t)
	a, b := newID("a"), newID("b")
	pay := func(parts ...instructions.Part) instructions.Transfer {
		return instructions.Transfer{ID: newID("bad"), Parts: parts}
	}
	var many []instructions.Part
	for i := range 17 {
		many = append(many, part(fmt.Sprintf("h%d", i), ops().Credit("CNY", "1")))
	}
	cases := []struct {
		name string
		tr   instructions.Transfer
		want error
	}{
		{"one part", pay(part(a, ops().Credit("CNY", "1"))), engine.ErrInvalidInstruction},
		{"seventeen parts", pay(many...), engine.ErrInvalidInstruction},
		{"the same holder twice", pay(part(a, ops().Debit("CNY", "1")), part(a, ops().Credit("CNY", "1"))), engine.ErrInvalidInstruction},
		{"unbalanced", pay(part(a, ops().Debit("CNY", "1")), part(b, ops().Credit("CNY", "0.99"))), engine.ErrInvalidInstruction},
		{"another asset arrives", pay(part(a, ops().Debit("CNY", "1")), part(b, ops().Credit("USD", "1"))), engine.ErrInvalidInstruction},
		{"a freeze", pay(part(a, ops().Freeze("CNY", "1", "o", 0)), part(b, ops().Credit("CNY", "1"))), engine.ErrInvalidInstruction},
		{"two settles without an amount", pay(part(a, ops().Settle("o").SettleLeg("p", "CNY", "")), part(b, ops().Credit("CNY", "1"))), engine.ErrInvalidInstruction},
		{"a whole hold when two assets arrive", pay(part(a, ops().Settle("o")), part(b, ops().Credit("CNY", "1").Credit("USD", "1"))), engine.ErrInvalidInstruction},
		{"the rest of a leg when nothing of it arrives", pay(part(a, ops().SettleLeg("o", "CNY", "").Debit("USD", "1")), part(b, ops().Credit("USD", "1"))), engine.ErrInvalidInstruction},
		{"a coupon", pay(part(a, ops().RedeemCoupon("c")), part(b, ops().Credit("CNY", "1"))), engine.ErrInvalidInstruction},
		{"a bad amount", pay(part(a, ops().Debit("CNY", "1.001")), part(b, ops().Credit("CNY", "1.001"))), engine.ErrInvalidAmount},
		{"an unknown asset", pay(part(a, ops().Debit("XXX", "1")), part(b, ops().Credit("XXX", "1"))), engine.ErrUnknownAsset},
		{"a bad holder", pay(part("{a}", ops().Debit("CNY", "1")), part(b, ops().Credit("CNY", "1"))), engine.ErrInvalidID},
		{"no ops", pay(part(a, ops()), part(b, ops().Credit("CNY", "1"))), engine.ErrInvalidInstruction},
		{"the transfer's own hold", pay(part(a, ops().SettleLeg("x:other", "CNY", "1")), part(b, ops().Credit("CNY", "1"))), engine.ErrInvalidID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := eng.Transfer(context.Background(), c.tr)
			assert.ErrorIs(t, err, c.want)
			_, err = eng.GetTransfer(context.Background(), c.tr.ID)
			assert.ErrorIs(t, err, engine.ErrTransferNotFound, "nothing was recorded")
		})
	}
	long := pay(part(a, ops().Debit("CNY", "1")), part(b, ops().Credit("CNY", "1")))
	long.ID = fmt.Sprintf("%061d", 0)
	_, err := eng.Transfer(context.Background(), long)
	assert.ErrorIs(t, err, engine.ErrInvalidID, "an id of 61 bytes leaves no room for the parts' suffixes")
}

func TestApply_TransferHoldsAndIDsAreReserved(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "1.00") })
	e := applyErr(t, newIn(h).Freeze("CNY", "1.00", "x:t1", 0))
	assert.ErrorIs(t, e, engine.ErrInvalidID)
	e = applyErr(t, newIn(h).Release("x:t1"))
	assert.ErrorIs(t, e, engine.ErrInvalidID)
	e = applyErr(t, instructions.New("x:t1:p", h).Debit("CNY", "1.00"))
	assert.ErrorIs(t, e, engine.ErrInvalidID, "nor the id of a part's instruction")
	e = applyErr(t, newIn(h).WithCounterparty("x:t1").Credit("CNY", "1.00"))
	assert.ErrorIs(t, e, engine.ErrInvalidID, "nor a transfer's clearing account")
}
