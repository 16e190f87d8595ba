package engine_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// Transfers with one payer commit in the payer's own run (docs/transfers.md,
// One payer). eng's default idempotency TTL lets them.

// payment is a P2P payment: each CNY from payer to every payee.
func payment(payer string, each string, payees ...string) instructions.Transfer {
	units, _ := instructions.ToUnits(each, 2)
	parts := []instructions.Part{part(payer, ops().Debit("CNY", instructions.FromUnits(units*int64(len(payees)), 2)))}
	for _, p := range payees {
		parts = append(parts, part(p, ops().Credit("CNY", each)))
	}
	return instructions.Transfer{ID: newID("pay"), Parts: parts}
}

func TestTransfer_OnePayerPaysEachPayeeOnceWithOneEventPerPart(t *testing.T) {
	needRedis(t)
	hs := holdersOnMasters(t,
		func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") }, nil, nil)
	before := []instructions.State{state(t, hs[0]), state(t, hs[1]), state(t, hs[2])}
	tr := payment(hs[0], "4.00", hs[1], hs[2])

	st := transfer(t, tr)
	require.Equal(t, engine.TransferCommitted, st.Status, "%v", st.Error)
	assert.True(t, st.Complete)
	assert.False(t, st.Replayed)
	want := []string{"2.00", "4.00", "4.00"}
	for i, h := range hs {
		after := state(t, h)
		assert.Equal(t, want[i], after.Balances["CNY"].Available, "holder %d", i)
		assert.Equal(t, before[i].Seq+1, after.Seq, "holder %d: one instruction, one event", i)
		assert.Empty(t, after.Holds, "no transfer hold is opened on the one-payer path")
	}

	again := transfer(t, tr)
	assert.Equal(t, engine.TransferCommitted, again.Status)
	assert.True(t, again.Complete)
	assert.True(t, again.Replayed)
	for i, h := range hs {
		assert.Equal(t, want[i], state(t, h).Balances["CNY"].Available, "holder %d: paid once", i)
	}

	other := tr
	other.Parts = other.Parts[:2]
	other.Parts[0] = part(hs[0], ops().Debit("CNY", "4.00"))
	_, err := eng.Transfer(context.Background(), other)
	assert.ErrorIs(t, err, engine.ErrIdempotencyConflict)
}

func TestTransfer_OnePayerRejectedChangesNothingAnywhere(t *testing.T) {
	needRedis(t)
	hs := holdersOnMasters(t,
		func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "1.00") }, nil)
	cases := []struct {
		name    string
		tr      instructions.Transfer
		part    int
		code    error
		message string
	}{
		{"the payer lacks the funds", payment(hs[0], "4.00", hs[1]), 0, engine.ErrInsufficientFunds, "available 1.00"},
		// The case before made the payee seen: this payment goes in two round trips.
		{"the payer lacks the funds, its payee seen", payment(hs[0], "4.00", hs[1]), 0, engine.ErrInsufficientFunds,
			"available 1.00"},
		{"a payee does not exist", payment(hs[0], "1.00", newID("nobody")), 1, engine.ErrHolderNotFound, "not found"},
		{"a payee of two does not exist", payment(hs[0], "1.00", hs[1], newID("nobody")), 2, engine.ErrHolderNotFound,
			"not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b0, p0 := state(t, hs[0]), state(t, hs[1])
			st := transfer(t, c.tr)
			require.Equal(t, engine.TransferAborted, st.Status)
			assert.True(t, st.Complete)
			require.NotNil(t, st.PartIndex)
			assert.Equal(t, c.part, *st.PartIndex)
			require.NotNil(t, st.Error)
			assert.ErrorIs(t, st.Error, c.code)
			assert.Equal(t, 0, st.Error.OpIndex)
			assert.Contains(t, st.Error.Message, c.message)
			assert.Equal(t, b0, state(t, hs[0]), "the payer's whole state is as it was")
			assert.Equal(t, p0, state(t, hs[1]), "the payee's whole state is as it was")
		})
	}
}

// The payer's part may settle from a hold: an order's hold paid to a
// merchant, the rest of the hold left open.
func TestTransfer_OnePayerSettlesFromAHold(t *testing.T) {
	needRedis(t)
	hs := holdersOnMasters(t,
		func(in instructions.Instruction) instructions.Instruction {
			return in.Credit("USDT", "1000").Freeze("USDT", "500", "ord-1", time.Hour)
		}, nil)
	st := transfer(t, instructions.Transfer{ID: newID("fill"), Parts: []instructions.Part{
		part(hs[0], ops().SettleLeg("ord-1", "USDT", "100")), part(hs[1], ops().Credit("USDT", "100"))}})
	require.Equal(t, engine.TransferCommitted, st.Status, "%v", st.Error)
	b := state(t, hs[0])
	assert.Equal(t, instructions.Balance{Available: "500.000000", Frozen: "400.000000"}, b.Balances["USDT"])
	assert.Equal(t, "400.000000", b.Holds["ord-1"].Legs["USDT"])
	assert.Equal(t, "100.000000", state(t, hs[1]).Balances["USDT"].Available)
}

// A driver killed at each point of the one-payer path: recovery takes the
// transfer to the end the point allows, paying each payee once.
func TestTransfer_OnePayerRecoveryAfterTheDriverIsKilled(t *testing.T) {
	needRedis(t)
	cases := []struct {
		name, steps string
		want        string
		paid        []string // CNY available of payer, payee 1, payee 2 at the end ("": none)
	}{
		{"after begin", "begin", engine.TransferAborted, []string{"10.00", "", ""}},
		{"after the payer's run", "begin,commit:0", engine.TransferCommitted, []string{"2.00", "4.00", "4.00"}},
		{"after one payee's credit", "begin,commit:0,commit:2", engine.TransferCommitted, []string{"2.00", "4.00", "4.00"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hs := holdersOnMasters(t,
				func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") }, nil, nil)
			before := totals(t, hs...)
			tr := payment(hs[0], "4.00", hs[1], hs[2])
			killDriver(t, tr, c.steps, 0)

			st := recoverUntilComplete(t, tr.ID)
			assert.Equal(t, c.want, st.Status)
			for i, h := range hs {
				assert.Equal(t, c.paid[i], state(t, h).Balances["CNY"].Available, "holder %d", i)
			}
			if c.want == engine.TransferAborted {
				assert.Equal(t, before, totals(t, hs...), "nothing moved")
			}
			again, err := eng.Transfer(context.Background(), tr)
			require.NoError(t, err)
			assert.Equal(t, c.want, again.Status, "the client's retry learns the outcome")
			assert.True(t, again.Replayed)
			for i, h := range hs {
				assert.Equal(t, c.paid[i], state(t, h).Balances["CNY"].Available, "holder %d, after the retry", i)
			}
		})
	}
}

// Past its steps' window (the idempotency TTL, less two transfer timeouts,
// from its start) an unfinished one-payer transfer is not sent again: its
// steps' records may be gone, and a step sent again would apply twice. It
// is left unfinished and counted for an operator.
func TestTransfer_OnePayerNotSentAgainPastItsRecordsLife(t *testing.T) {
	needRedis(t)
	hs := holdersOnMasters(t,
		func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") }, nil)
	tr := payment(hs[0], "4.00", hs[1])
	ttl := 10 * shortTransferTimeout // the least TTL of the one-payer path
	forgetOnCleanup(t, tr.ID)
	killDriver(t, tr, "begin,commit:0", ttl)
	time.Sleep(ttl) // past the window, and past the payer's record

	parts, _ := recoverStuck(t, tr.ID)
	assert.Equal(t, 2, parts, "the payer's part and the payee's, neither finished in the record")
	st, err := eng.GetTransfer(context.Background(), tr.ID)
	require.NoError(t, err)
	assert.Equal(t, engine.TransferPending, st.Status)
	assert.False(t, st.Complete)
	assert.Equal(t, "6.00", state(t, hs[0]).Balances["CNY"].Available, "the payer was charged once, not again")
	assert.Empty(t, state(t, hs[1]).Balances, "left for an operator")
}

// The steps of a one-payer transfer are remembered for the record's window,
// whatever the TTL of the engine that sends them: here an engine whose own
// TTL is 1 s (it would run new transfers in two phases) finishes one begun
// with the default TTL, and its steps' records live about a day.
func TestTransfer_OnePayerStepsOutliveTheWindowWhoeverSendsThem(t *testing.T) {
	needRedis(t)
	hs := holdersOnMasters(t,
		func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") }, nil)
	tr := payment(hs[0], "4.00", hs[1])
	require.NoError(t, eng.TransferStep(context.Background(), tr, "begin", 0))

	short := twoPhase()
	st, err := short.Transfer(context.Background(), tr)
	require.NoError(t, err)
	require.Equal(t, engine.TransferCommitted, st.Status, "%v", st.Error)
	assert.True(t, st.Complete)
	ids, err := eng.TransferStepIDs(tr, 0)
	require.NoError(t, err)
	for i, h := range hs {
		ttl, err := rdb.PTTL(context.Background(), cluster.Tx(h, ids["commit"])).Result()
		require.NoError(t, err)
		assert.Greater(t, ttl, 23*time.Hour, "part %d's step record", i)
	}
}

// countCalls counts the library's runs a client sends, by function and, for
// the transfer function, by action ("apply", "transfer begin", ...).
type countCalls struct {
	mu *sync.Mutex
	n  map[string]int
}

func (h countCalls) count(cmds []redis.Cmder) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range cmds {
		a := c.Args()
		if len(a) < 2 || a[0] != "fcall" {
			continue
		}
		name := fmt.Sprint(a[1])
		if name == "transfer" && len(a) > 5 {
			name += " " + fmt.Sprint(a[5])
		}
		h.n[name]++
	}
}

func (h countCalls) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h countCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, c redis.Cmder) error { h.count([]redis.Cmder{c}); return next(ctx, c) }
}
func (h countCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { h.count(cmds); return next(ctx, cmds) }
}

// A one-payer transfer of n parts runs the library n times, each part once:
// its record is claimed and booked by plain commands. A rejected payer
// leaves the credits unsent, and the decision, rare, is the library's.
func TestTransfer_OnePayerRunsTheLibraryOncePerPart(t *testing.T) {
	needRedis(t)
	hs := holdersOnMasters(t,
		func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") }, nil, nil)
	for _, c := range []struct {
		name string
		tr   instructions.Transfer
		want map[string]int
	}{
		{"committed", payment(hs[0], "4.00", hs[1], hs[2]), map[string]int{"apply": 3}},
		{"aborted", payment(hs[0], "40.00", hs[1], hs[2]), map[string]int{"apply": 1, "transfer decide": 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			client := testCluster.Client(nil)
			defer client.Close()
			calls := countCalls{mu: &sync.Mutex{}, n: map[string]int{}}
			client.AddHook(calls)
			st, err := engine.New(client, &engine.Options{Logger: quiet}).Transfer(context.Background(), c.tr)
			require.NoError(t, err)
			assert.True(t, st.Complete)
			calls.mu.Lock()
			defer calls.mu.Unlock()
			assert.Equal(t, c.want, calls.n)
		})
	}
}

// A payment to a payee that a payment's read found a moment ago runs its
// payer with its claim and the read of its payee (two round trips): a
// payee gone since is found with the payer charged, who is given back what
// it paid at once, by an instruction of its own, and the transfer aborts
// with the payee's error (DESIGN.md, Cross-holder transfers). Nothing is
// written for the payee but the fence of its credit, which a driver that
// still means to send it meets.
func TestTransfer_OnePayerToAPayeeGoneIsGivenBack(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil)
	require.Equal(t, engine.TransferCommitted, transfer(t, payment(hs[0], "1.00", hs[1])).Status)
	back := hideHolder(t, hs[1])

	tr := payment(hs[0], "4.00", hs[1])
	before := state(t, hs[0])
	st := transfer(t, tr)
	require.Equal(t, engine.TransferAborted, st.Status)
	assert.True(t, st.Complete)
	require.NotNil(t, st.PartIndex)
	assert.Equal(t, 1, *st.PartIndex)
	require.NotNil(t, st.Error)
	assert.ErrorIs(t, st.Error, engine.ErrHolderNotFound)
	assert.Contains(t, st.Error.Message, "part 1 ("+hs[1]+")")
	after := state(t, hs[0])
	assert.Equal(t, before.Balances, after.Balances, "given back")
	assert.Equal(t, before.Seq+2, after.Seq, "charged, then given back: one event each")

	ids, err := eng.TransferStepIDs(tr, 1)
	require.NoError(t, err)
	assert.Equal(t, int64(1), rdb.Exists(ctx, cluster.Tx(hs[1], ids["commit"])).Val(), "the credit's fence")
	got, err := eng.GetTransfer(ctx, tr.ID)
	require.NoError(t, err)
	assert.Equal(t, engine.TransferAborted, got.Status)
	back()
	again := transfer(t, tr)
	assert.Equal(t, engine.TransferAborted, again.Status)
	assert.True(t, again.Replayed)
	assert.Equal(t, after, state(t, hs[0]), "given back once")
	assert.Equal(t, "1.00", state(t, hs[1]).Balances["CNY"].Available, "the payee back, and not paid")
}

// The same id with another body whose payer is another holder: that
// payer's run went with the claim, so it is given back at once; the answer
// is IDEMPOTENCY_CONFLICT, and the first transfer stands.
func TestTransfer_OnePayerIDReusedByAnotherPayerIsGivenBack(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, tenCNY, nil)
	tr := payment(hs[0], "4.00", hs[2])
	require.Equal(t, engine.TransferCommitted, transfer(t, tr).Status)
	before := holderHash(t, hs[1])

	other := payment(hs[1], "4.00", hs[2])
	other.ID = tr.ID
	_, err := eng.Transfer(ctx, other)
	require.ErrorIs(t, err, engine.ErrIdempotencyConflict)
	after := holderHash(t, hs[1])
	assert.Equal(t, before["b:CNY"], after["b:CNY"], "the other payer given back")
	assert.Equal(t, "3", after["seq"], "opened, charged, given back")
	_, err = eng.Transfer(ctx, other)
	require.ErrorIs(t, err, engine.ErrIdempotencyConflict)
	assert.Equal(t, after, holderHash(t, hs[1]), "given back once")
	assert.Equal(t, "6.00", state(t, hs[0]).Balances["CNY"].Available)
	assert.Equal(t, "4.00", state(t, hs[2]).Balances["CNY"].Available)

	// The first transfer's record expires before the other payer's run's
	// record: the other body, sent again, is claimed anew, and its run
	// answers the fence the give-back left. Nobody is paid again.
	require.NoError(t, rdb.Del(ctx, cluster.Transfer(tr.ID)).Err())
	st := transfer(t, other)
	assert.Equal(t, engine.TransferAborted, st.Status)
	assert.Equal(t, after["b:CNY"], holderHash(t, hs[1])["b:CNY"], "given back, not charged again")
	assert.Equal(t, "4.00", state(t, hs[2]).Balances["CNY"].Available, "the payee not paid with money given back")
}

// Between the credits and the booking, a reader of the transfer learns from
// the steps' records what the booking will say; a booking never written
// (its pipeline held here, as a process stopped) is the recovery worker's,
// which then takes the record out of its index.
func TestTransfer_OnePayerReadBeforeItsBooking(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil)
	tr := payment(hs[0], "4.00", hs[1])
	client := testCluster.Client(nil)
	defer client.Close()
	h := newStall(transferAction("decide"), false)
	client.AddHook(h)
	driver := engine.New(client, &engine.Options{TransferTimeout: shortTransferTimeout, Logger: quiet})

	st, err := driver.Transfer(ctx, tr)
	require.NoError(t, err)
	require.Equal(t, engine.TransferCommitted, st.Status)
	require.True(t, st.Complete)
	<-h.hit
	raw, err := rdb.HGetAll(ctx, cluster.Transfer(tr.ID)).Result()
	require.NoError(t, err)
	require.Equal(t, []string{"claim"}, slices.Collect(maps.Keys(raw)), "the booking is held: the record is its claim")

	got, err := eng.GetTransfer(ctx, tr.ID)
	require.NoError(t, err)
	assert.Equal(t, engine.TransferCommitted, got.Status)
	assert.True(t, got.Complete)
	assert.Equal(t, hs, got.Holders)

	index := cluster.Transfers(cluster.Slot(cluster.Transfer(tr.ID)))
	worker := shortTimeout()
	r := engine.NewRecovery(worker, &engine.RecoveryOptions{Logger: quiet})
	for deadline := time.Now().Add(time.Minute); ; {
		require.NoError(t, r.Recover(ctx))
		worker.Flush()
		if rdb.HGet(ctx, cluster.Transfer(tr.ID), "done").Val() == "1" {
			break
		}
		require.True(t, time.Now().Before(deadline), "recovery never booked the transfer")
		time.Sleep(100 * time.Millisecond)
	}
	assert.Equal(t, engine.TransferCommitted, rdb.HGet(ctx, cluster.Transfer(tr.ID), "status").Val())
	assert.ErrorIs(t, rdb.ZScore(ctx, index, tr.ID).Err(), redis.Nil, "out of its index")
	close(h.release)
	driver.Flush()
	assert.Equal(t, "6.00", state(t, hs[0]).Balances["CNY"].Available)
	assert.Equal(t, "4.00", state(t, hs[1]).Balances["CNY"].Available)

	// A retry claims the done record again, which puts it back in the
	// index: the recovery worker takes it out without touching it.
	again, err := eng.Transfer(ctx, tr)
	require.NoError(t, err)
	assert.True(t, again.Replayed)
	assert.True(t, again.Complete)
	require.NoError(t, rdb.ZAdd(ctx, index, redis.Z{Score: 0, Member: tr.ID}).Err())
	require.NoError(t, engine.NewRecovery(eng, nil).Recover(ctx))
	assert.ErrorIs(t, rdb.ZScore(ctx, index, tr.ID).Err(), redis.Nil, "out of its index")
}
