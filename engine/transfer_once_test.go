package engine_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// Exactly once per part, whatever the idempotency TTL (docs/transfers.md,
// "Exactly once"): these tests run with ids remembered for one second.

const shortTTL = time.Second

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// shortTTLEngine forgets ids after shortTTL and lets recovery take transfers
// over soon.
func shortTTLEngine() *engine.Engine {
	return engine.New(rdb, &engine.Options{IdempotencyTTL: shortTTL, TransferTimeout: shortTransferTimeout, Logger: quiet})
}

// cny writes minor units of CNY as the API's decimal.
func cny(units int64) string { return instructions.FromUnits(units, 2) }

// waitForgotten polls until holder has forgotten instruction id.
func waitForgotten(t *testing.T, holder, id string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for rdb.Exists(context.Background(), cluster.Tx(holder, id)).Val() != 0 {
		require.True(t, time.Now().Before(deadline), "%s still remembers %s", holder, id)
		time.Sleep(100 * time.Millisecond)
	}
}

// cnyOf is holder's available CNY, in minor units.
func cnyOf(t *testing.T, holder string) int64 {
	t.Helper()
	n, ok := instructions.ToUnits(state(t, holder).Balances["CNY"].Available, 2)
	require.True(t, ok)
	return n
}

func TestTransfer_PartsApplyOnceWhileUnfinishedForTenTTLs(t *testing.T) {
	needRedis(t)
	logged := &logRecords{}
	e := engine.New(rdb, &engine.Options{IdempotencyTTL: shortTTL, TransferTimeout: shortTransferTimeout, Logger: slog.New(logged)})
	ctx := context.Background()
	hs := holdersOnMasters(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") }, nil, nil)
	a, b, c := hs[0], hs[1], hs[2]
	tr := instructions.Transfer{ID: newID("pay"), Parts: []instructions.Part{
		part(a, ops().Debit("CNY", "2.00")), part(b, ops().Credit("CNY", "1.00")), part(c, ops().Credit("CNY", "1.00"))}}
	require.NoError(t, driverSteps(ctx, e, tr, "begin,prepare:0,prepare:1,prepare:2,decide"))

	// Between the commit point and C's commit, other credits fill C to 0.50
	// below 2^53-1 minor units: its commit cannot run until room is made.
	edge := int64(instructions.MaxUnits - 50)
	apply(t, newIn(c).Credit("CNY", cny(edge)))

	r := engine.NewRecovery(e, &engine.RecoveryOptions{Interval: 100 * time.Millisecond, Logger: quiet})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(runCtx) }()
	defer func() { stop(); <-done }()

	check := func(when string) {
		t.Helper()
		assert.Equal(t, int64(800), cnyOf(t, a), "%s: A is debited once", when)
		assert.Equal(t, int64(100), cnyOf(t, b), "%s: B is paid once", when)
		assert.Equal(t, edge, cnyOf(t, c), "%s: C is not paid yet", when)
	}
	resends := 0
	for start := time.Now(); time.Since(start) < 11*shortTTL; resends++ {
		st, err := e.Transfer(ctx, tr) // the client sends it again
		require.NoError(t, err)
		require.Equal(t, engine.TransferCommitted, st.Status)
		require.False(t, st.Complete, "C's commit cannot run")
		check("after " + strconv.Itoa(resends+1) + " re-sends")
		time.Sleep(200 * time.Millisecond)
	}
	assert.Greater(t, r.Stats().Passes, int64(10), "the recovery worker drove it too")
	ids, err := e.TransferStepIDs(tr, 1)
	require.NoError(t, err)
	waitForgotten(t, b, ids["commit"]) // long since: nothing but the record stops B's commit
	_, err = e.Transfer(ctx, tr)
	require.NoError(t, err)
	check("with B's commit id forgotten")

	apply(t, newIn(c).Debit("CNY", "1.00")) // room is made
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := e.GetTransfer(ctx, tr.ID)
		require.NoError(t, err)
		if st.Complete {
			assert.Equal(t, engine.TransferCommitted, st.Status)
			break
		}
		require.True(t, time.Now().Before(deadline), "C's commit never ran")
		time.Sleep(100 * time.Millisecond)
	}
	assert.Equal(t, int64(800), cnyOf(t, a))
	assert.Equal(t, int64(100), cnyOf(t, b))
	assert.Equal(t, edge, cnyOf(t, c), "C paid once, after the 1.00 it gave")
	assert.Equal(t, int64(1000)+edge-100, cnyOf(t, a)+cnyOf(t, b)+cnyOf(t, c), "money is conserved")
	assert.Equal(t, []int64{3, 3, 5}, []int64{state(t, a).Seq, state(t, b).Seq, state(t, c).Seq},
		"A and B: open, prepare, commit; C: open, prepare, the fill, the debit, commit")
	parts, _, _ := stuckOf(logged, tr.ID)
	assert.Zero(t, parts, "no part of it was ever found stuck")
	for _, h := range hs {
		assert.Empty(t, state(t, h).Holds, "holder %s", h)
	}
}

func TestTransfer_CommitSentAgainAfterItsIDIsForgottenAppliesNothing(t *testing.T) {
	needRedis(t)
	e, ctx := shortTTLEngine(), context.Background()
	hs := holdersOnMasters(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") }, nil)
	a, b := hs[0], hs[1]
	tr := instructions.Transfer{ID: newID("pay"), Parts: []instructions.Part{
		part(a, ops().Debit("CNY", "2.00")), part(b, ops().Credit("CNY", "2.00"))}}
	// The driver commits B's part and dies before marking it finished.
	require.NoError(t, driverSteps(ctx, e, tr, "begin,prepare:0,prepare:1,decide,commit:1"))
	ids, err := e.TransferStepIDs(tr, 1)
	require.NoError(t, err)
	waitForgotten(t, b, ids["commit"])
	// This transfer stays unfinished: keep it out of other tests' recovery.
	t.Cleanup(func() { rdb.ZRem(ctx, cluster.Transfers(cluster.TransferSlot(tr.ID)), tr.ID) })

	r := engine.NewRecovery(e, &engine.RecoveryOptions{Logger: quiet})
	deadline := time.Now().Add(2 * time.Minute) // B's part is found at the pass after its deadline
	for {
		parts, _ := recoverStuck(t, tr.ID)
		if parts == 1 {
			break
		}
		require.Zero(t, parts)
		require.True(t, time.Now().Before(deadline), "the recovery worker never found B's part stuck")
		time.Sleep(100 * time.Millisecond)
	}
	for range 3 {
		st, err := e.Transfer(ctx, tr)
		require.NoError(t, err)
		assert.Equal(t, engine.TransferCommitted, st.Status)
		assert.False(t, st.Complete, "B's part stays unfinished, for an operator")
		require.NoError(t, r.Recover(ctx))
	}
	assert.Equal(t, int64(200), cnyOf(t, b), "B is paid once")
	assert.Equal(t, int64(3), state(t, b).Seq, "open, prepare, commit: nothing applied again")
	assert.Equal(t, instructions.Balance{Available: "8.00", Frozen: "0.00"}, state(t, a).Balances["CNY"], "A's part finished")
	assert.Empty(t, state(t, a).Holds)
	assert.Empty(t, state(t, b).Holds)
}

func TestTransfer_AbortGivesBackAfterThePrepareIDIsForgotten(t *testing.T) {
	needRedis(t)
	e, ctx := shortTTLEngine(), context.Background()
	hs := holdersOnMasters(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") }, nil)
	a, b := hs[0], hs[1]
	before := valueOf(state(t, a))
	tr := instructions.Transfer{ID: newID("pay"), Parts: []instructions.Part{
		part(a, ops().Debit("CNY", "4.00")), part(b, ops().Credit("CNY", "4.00"))}}
	require.NoError(t, driverSteps(ctx, e, tr, "begin,prepare:0")) // then the driver dies
	ids, err := e.TransferStepIDs(tr, 0)
	require.NoError(t, err)
	waitForgotten(t, a, ids["prepare"])

	st := recoverUntilComplete(t, tr.ID)
	assert.Equal(t, engine.TransferAborted, st.Status)
	assert.Equal(t, before, valueOf(state(t, a)), "A's 4.00 are given back, though its prepare's id was forgotten")
	assert.Empty(t, state(t, b).Holds)
}

func TestTransfer_CreditThatWouldOverflowAbortsAtPrepare(t *testing.T) {
	needRedis(t)
	edge := int64(instructions.MaxUnits - 60)
	hs := holdersOnMasters(t,
		func(in instructions.Instruction) instructions.Instruction {
			return in.Credit("CNY", "10.00").EarnPoints("100")
		},
		nil,
		func(in instructions.Instruction) instructions.Instruction {
			return in.Credit("CNY", cny(edge)).EarnPoints(strconv.FormatInt(edge, 10))
		})
	a, b, c := hs[0], hs[1], hs[2]
	cases := []struct {
		name     string
		a, b, c  instructions.Instruction
		op       int
		asPoints bool
	}{
		{"a credit", ops().Debit("CNY", "2.00"), ops().Credit("CNY", "1.00"), ops().Credit("CNY", "1.00"), 0, false},
		{"two credits that fit apart, not together", ops().Debit("CNY", "2.00"), ops().Credit("CNY", "1.00"),
			ops().Credit("CNY", "0.50").Credit("CNY", "0.50"), 1, false},
		{"earned points", ops().SpendPoints("100"), ops().EarnPoints("30"), ops().EarnPoints("70"), 0, true},
	}
	for _, tc := range cases {
		for _, path := range []struct {
			name string
			e    *engine.Engine
		}{{"two phases", twoPhase()}, {"one payer", eng}} {
			t.Run(tc.name+"/"+path.name, func(t *testing.T) {
				before := map[string]instructions.State{}
				for _, h := range hs {
					before[h] = state(t, h)
				}
				st, err := path.e.Transfer(context.Background(), instructions.Transfer{ID: newID("pay"), Parts: []instructions.Part{
					part(a, tc.a), part(b, tc.b), part(c, tc.c)}})
				require.NoError(t, err)
				require.Equal(t, engine.TransferAborted, st.Status)
				assert.True(t, st.Complete)
				require.NotNil(t, st.Error)
				assert.ErrorIs(t, st.Error, engine.ErrOverflow)
				require.NotNil(t, st.PartIndex)
				assert.Equal(t, 2, *st.PartIndex)
				assert.Equal(t, tc.op, st.Error.OpIndex)
				assert.Contains(t, st.Error.Message, "2^53-1")
				assert.Equal(t, before[c], state(t, c), "C's prepare was refused: its whole state is as it was")
				for _, h := range []string{a, b} {
					after := state(t, h)
					if path.e == eng {
						assert.Equal(t, before[h], after, "checked before anyone was charged: nothing written")
						continue
					}
					assert.Equal(t, before[h].Seq+2, after.Seq, "prepare and abort are events")
					assert.Equal(t, valueOf(before[h]), valueOf(after), "holder %s: balances, points, holds as they were", h)
				}
			})
		}
	}
}

// The library's functions share one Lua state per node, so what check sums
// up (the credits of one call) must start from nothing in each call: two
// transfers, one after the other, each paying C 0.30 where C has room for
// 0.60 in all, both commit.
func TestTransfer_CreditChecksStartAfreshInEachCall(t *testing.T) {
	needRedis(t)
	edge := int64(instructions.MaxUnits - 60)
	hs := holdersOnMasters(t,
		func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") },
		func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", cny(edge)) })
	a, c := hs[0], hs[1]
	for i := range 2 {
		st := transfer(t, instructions.Transfer{ID: newID("pay"), Parts: []instructions.Part{
			part(a, ops().Debit("CNY", "0.30")), part(c, ops().Credit("CNY", "0.30"))}})
		require.Equal(t, engine.TransferCommitted, st.Status, "transfer %d: %v", i, st.Error)
		assert.True(t, st.Complete)
	}
	assert.Equal(t, cny(instructions.MaxUnits), state(t, c).Balances["CNY"].Available)
}

func TestApply_EnginesOwnIDsAreRefused(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "5.00").Freeze("CNY", "1.00", "o1", time.Hour)
	})
	before := state(t, h)
	sweep := engine.SweepID(h, "o1", before.Holds["o1"].ExpiresMs)
	e := applyErr(t, instructions.New(sweep, h).Release("o1"))
	assert.ErrorIs(t, e, engine.ErrInvalidID, "the sweeper's release of o1")
	assert.Contains(t, e.Message, `"sweep-"`)
	assert.Contains(t, e.Message, "sweeper")

	tr := instructions.Transfer{ID: "t1", Parts: []instructions.Part{
		part(h, ops().Debit("CNY", "1.00")), part(newID("other"), ops().Credit("CNY", "1.00"))}}
	for _, path := range []struct {
		e     *engine.Engine
		steps int
	}{{twoPhase(), 4}, {eng, 1}} {
		for i := range tr.Parts {
			ids, err := path.e.TransferStepIDs(tr, i)
			require.NoError(t, err)
			require.Len(t, ids, path.steps)
			for step, id := range ids {
				e := applyErr(t, instructions.New(id, h).Credit("CNY", "1.00"))
				assert.ErrorIs(t, e, engine.ErrInvalidID, "part %d's %s id %s", i, step, id)
				assert.Contains(t, e.Message, "transfers")
			}
		}
	}
	assert.Equal(t, before, state(t, h), "nothing changed")
}
