package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// An adversarial pass over the give-backs of a one-payer transfer
// (transfer_giveback.go giveBack, transfer_pay.go giveBackRun): a late
// run's give-back beside the transfer's own give-back x:<id>:g. Each test
// ends on the ledger: money conserved over the holders and each holder's
// seq moved by the runs expected.

// dieAfter is a go-redis hook that lets everything through until a
// pipeline holding a command match accepts has run; from then on it sends
// nothing and answers every command with an error: the process died right
// after that pipeline.
type dieAfter struct {
	match func(args []any) bool
	dead  *atomic.Bool
}

var errDied = errors.New("the engine's process died")

func (h dieAfter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h dieAfter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.dead.Load() {
			cmd.SetErr(errDied)
			return errDied
		}
		return next(ctx, cmd)
	}
}
func (h dieAfter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.dead.Load() {
			for _, c := range cmds {
				c.SetErr(errDied)
			}
			return errDied
		}
		hit := false
		for _, c := range cmds {
			hit = hit || h.match(c.Args())
		}
		err := next(ctx, cmds)
		if hit {
			h.dead.Store(true)
		}
		return err
	}
}

// recoverFor runs recovery passes, as the worker makes them, for d.
func recoverFor(t *testing.T, e *engine.Engine, d time.Duration) {
	t.Helper()
	r := engine.NewRecovery(e, &engine.RecoveryOptions{Logger: quiet})
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		_ = r.Recover(context.Background()) // a part left unfinished is an error of the pass: judged by the ledger
	}
}

// A quick payment whose credit never goes: the record says committed, the
// credit unfinished. In the second half of the window recovery gives the
// payer back: it fences the credit and runs x:<id>:g, and its process dies
// right then, before the record is written aborted and done (and before
// the payer's step is given the record's life). The next pass comes past
// the window, and leaves the transfer to an operator, as it must: money is
// conserved (the payer charged and given back, the payee not paid).
//
// Then the payer's step expires, a TTL after its run, while x:<id>:g, a
// TTL after the give-back, lives on; the client sends the body again. Its
// run applies fresh, sent past the window: a second charge, which
// transferQuick gives back by giveBackRun, under an id of its own
// (x:<id>:g and the run's seq): under the transfer's own, x:<id>:g, it
// would replay the give-back recovery made and give nothing, the payer
// charged twice and given back once.
func TestGiveBackAdversary_LateRunGivenBackAfterRecoverysGiveBack(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	// A window of 7 s, the give-back due from 3.5 s, the payer's step living
	// 8 s from its run: recovery's pass at 4.5 s has 2.5 s to give back
	// within the window on a busy box (with a window of 4 s and a pass at
	// 3 s, a fresh clone's CI run once saw the pass end past it).
	const timeout, ttl = 500 * time.Millisecond, 8 * time.Second
	hs := holdersOnMasters(t, tenCNY, nil)
	tr := paymentOnThirdMaster(t, hs[0], "4.00", hs[1])
	credit, back := "x:"+tr.ID+":c", "x:"+tr.ID+":g"
	first := quickEngineWith(t, hookedClient(t, loseAnswers{match: applyOn(hs[1], credit), ran: false}), timeout, ttl, hs[0], hs[1])
	again := quickEngineWith(t, nil, timeout, ttl, hs[0], hs[1]) // seen by it too
	forgetAllOnCleanup(t, tr.ID, hs...)
	before, seqs := totals(t, hs...), seqsOf(t, hs)
	payer0, payee0 := cnyOf(t, hs[0]), cnyOf(t, hs[1])

	st, err := first.Transfer(ctx, tr)
	require.NoError(t, err)
	require.Equal(t, engine.TransferCommitted, st.Status, "%v", st.Error)
	require.False(t, st.Complete, "the credit never went")
	first.Flush()
	until := time.UnixMilli(st.CreatedMs).Add(ttl - 2*timeout)

	// Recovery's give-back, late in the window; its process dies after it.
	time.Sleep(time.Until(time.UnixMilli(st.CreatedMs).Add(4500 * time.Millisecond)))
	dead := new(atomic.Bool)
	dying := engine.New(hookedClient(t, dieAfter{match: applyOn(hs[0], back), dead: dead}),
		&engine.Options{TransferTimeout: timeout, Logger: quiet})
	rec := engine.NewRecovery(dying, &engine.RecoveryOptions{Logger: quiet})
	for !dead.Load() && time.Now().Before(until) {
		_ = rec.RecoverSlots(ctx, slotsOf(tr.ID, hs...)...)
	}
	require.True(t, dead.Load(), "recovery gave the payer back")
	require.True(t, time.Now().Before(until), "within the window")
	require.Equal(t, payer0, cnyOf(t, hs[0]), "the payer given back")
	require.Equal(t, seqs[0]+2, state(t, hs[0]).Seq, "charged, given back")
	mid, err := eng.GetTransfer(ctx, tr.ID)
	require.NoError(t, err)
	require.False(t, mid.Complete, "the record not written: %+v", mid)

	// The next pass, a timeout later, past the window: left to an operator.
	time.Sleep(time.Until(until.Add(timeout)))
	recoverFor(t, engine.New(rdb, &engine.Options{TransferTimeout: timeout, Logger: quiet}), 200*time.Millisecond)
	require.Equal(t, before, totals(t, hs...), "money is conserved so far")
	require.Equal(t, payer0, cnyOf(t, hs[0]))

	waitGone(t, cluster.Tx(hs[0], credit)) // the payer's step, a TTL after its run
	require.Equal(t, int64(1), rdb.Exists(ctx, cluster.Tx(hs[0], back)).Val(), "the give-back's record lives on")
	got, err := again.Transfer(ctx, tr)
	require.NoError(t, err)
	again.Flush()
	assert.Equal(t, engine.TransferCommitted, got.Status, "as the record says")
	assert.Equal(t, before, totals(t, hs...), "money is conserved")
	assert.Equal(t, payer0, cnyOf(t, hs[0]), "the payer's second charge given back")
	assert.Equal(t, payee0, cnyOf(t, hs[1]), "the payee never paid")
	assert.Equal(t, seqs[0]+4, state(t, hs[0]).Seq, "two charges, two give-backs")
	assert.Equal(t, seqs[1], state(t, hs[1]).Seq)
}

// A quick payment to a payee too full for its credit (the read beside the
// payer's run says OVERFLOW): the driver gives the payer back at once,
// fences the credit, and stops before its x:<id>:g applies. Recovery
// finishes the give-back late in the window, from the fence. The transfer
// is aborted with the payee's OVERFLOW, which the fence keeps: before, a
// fence kept no reason, and the resumed give-back named the payee missing
// (HOLDER_NOT_FOUND) for a payee that was there all along.
func TestGiveBackAdversary_AResumedGiveBackKeepsThePayeesError(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	const timeout, ttl = 500 * time.Millisecond, 8 * time.Second // the give-back due from 3.5 s, within the window until 7 s
	hs := holdersOnMasters(t, tenCNY, nil)
	tr := payment(hs[0], "4.00", hs[1])
	back := "x:" + tr.ID + ":g"
	driver := quickEngineWith(t, hookedClient(t, loseAnswers{match: applyOn(hs[0], back), ran: false}), timeout, ttl, hs[0], hs[1])
	forgetAllOnCleanup(t, tr.ID, hs...)
	_, err := eng.Apply(ctx, instructions.New(newID("fill"), hs[1]).Credit("CNY", "90071992547408.00"))
	require.NoError(t, err)
	before, payer0 := totals(t, hs...), cnyOf(t, hs[0])

	st, err := driver.Transfer(ctx, tr)
	require.NoError(t, err)
	driver.Flush()
	require.False(t, st.Complete, "the give-back did not go: %+v", st)

	st = recoverWith(t, engine.New(rdb, &engine.Options{TransferTimeout: timeout, IdempotencyTTL: ttl, Logger: quiet}), tr.ID)
	assert.Equal(t, engine.TransferAborted, st.Status)
	require.NotNil(t, st.Error)
	assert.Equal(t, instructions.CodeOverflow, st.Error.Code, "%s", st.Error.Message)
	require.NotNil(t, st.PartIndex)
	assert.Equal(t, 1, *st.PartIndex, "the payee's part")
	assert.Equal(t, before, totals(t, hs...), "money is conserved")
	assert.Equal(t, payer0, cnyOf(t, hs[0]), "the payer given back once")
}

// asWas asserts that holder's whole state is was but its seq, moved by
// runs: a payment charged and given back.
func asWas(t *testing.T, holder string, was instructions.State, runs int64) {
	t.Helper()
	now := state(t, holder)
	assert.Equal(t, was.Seq+runs, now.Seq, "charged, given back: once each")
	now.Seq = was.Seq
	assert.Equal(t, was, now, "the payer as it was, its holds included")
}

// A payer that settles from its orders' holds is given back into those
// holds, not to available: its orders stay as they were (transfer_giveback.go
// giveBackSteps, the restore op). Both give-backs: the quick path's at once
// (its payee gone since it was seen), and recovery's in the second half of
// the window (the payee gone after the payer's run).
func TestGiveBackAdversary_ASettleGoesBackIntoItsHold(t *testing.T) {
	ctx := context.Background()
	hs := holdersOnMasters(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "20.00").Freeze("CNY", "10.00", "ord-1", time.Hour).
			EarnPoints("500").FreezePoints("300", "ord-p")
	}, nil)
	payer, payee := hs[0], hs[1]

	t.Run("quick", func(t *testing.T) {
		e := quickEngine(t, nil, payer, payee)
		was := state(t, payer)
		back := hideHolder(t, payee)
		tr := instructions.Transfer{ID: newID("pay"), Parts: []instructions.Part{
			part(payer, ops().SettleLeg("ord-1", "CNY", "4.00").SettleLeg("ord-p", "points", "100")),
			part(payee, ops().Credit("CNY", "4.00").EarnPoints("100")),
		}}
		forgetAllOnCleanup(t, tr.ID, payer, payee)
		st, err := e.Transfer(ctx, tr)
		require.NoError(t, err)
		back()
		require.Equal(t, engine.TransferAborted, st.Status)
		assert.Equal(t, instructions.CodeHolderNotFound, st.Error.Code)
		asWas(t, payer, was, 2)
	})
	t.Run("recovery", func(t *testing.T) {
		short := engine.New(rdb, &engine.Options{TransferTimeout: shortTransferTimeout,
			IdempotencyTTL: 50 * shortTransferTimeout, Logger: quiet})
		was := state(t, payer)
		tr := instructions.Transfer{ID: newID("pay"), Parts: []instructions.Part{
			part(payer, ops().SettleLeg("ord-1", "CNY", "6.00").Debit("CNY", "1.00").SettleLeg("ord-p", "points", "200")),
			part(payee, ops().Credit("CNY", "7.00").EarnPoints("200")),
		}}
		forgetAllOnCleanup(t, tr.ID, payer, payee)
		require.NoError(t, driverSteps(ctx, short, tr, "begin,commit:0"))
		back := hideHolder(t, payee)
		st := recoverWith(t, short, tr.ID)
		back()
		require.Equal(t, engine.TransferAborted, st.Status)
		asWas(t, payer, was, 2)
	})
	t.Run("a give-back an engine of another version made is not made again", func(t *testing.T) {
		// Its steps were written otherwise (a settle given back as a
		// credit): the same id under another body, IDEMPOTENCY_CONFLICT,
		// is that give-back, applied.
		short := engine.New(rdb, &engine.Options{TransferTimeout: shortTransferTimeout,
			IdempotencyTTL: 50 * shortTransferTimeout, Logger: quiet})
		tr := instructions.Transfer{ID: newID("pay"), Parts: []instructions.Part{
			part(payer, ops().SettleLeg("ord-1", "CNY", "1.00")),
			part(payee, ops().Credit("CNY", "1.00")),
		}}
		forgetAllOnCleanup(t, tr.ID, payer, payee)
		require.NoError(t, driverSteps(ctx, short, tr, "begin,commit:0"))
		gb := cluster.Tx(payer, instructions.TransferHoldPrefix+tr.ID+":g")
		require.NoError(t, rdb.Set(ctx, gb, "another-version!1", time.Minute).Err())
		was := state(t, payer)
		back := hideHolder(t, payee)
		st := recoverWith(t, short, tr.ID)
		back()
		require.Equal(t, engine.TransferAborted, st.Status)
		assert.True(t, st.Complete, "given back: done")
		asWas(t, payer, was, 0)
	})
	t.Run("a hold settled whole has closed: to available", func(t *testing.T) {
		e := quickEngine(t, nil, payer, payee)
		was := state(t, payer)
		held := was.Holds["ord-1"].Legs["CNY"]
		back := hideHolder(t, payee)
		tr := instructions.Transfer{ID: newID("pay"), Parts: []instructions.Part{
			part(payer, ops().SettleLeg("ord-1", "CNY", held)),
			part(payee, ops().Credit("CNY", held)),
		}}
		forgetAllOnCleanup(t, tr.ID, payer, payee)
		st, err := e.Transfer(ctx, tr)
		require.NoError(t, err)
		back()
		require.Equal(t, engine.TransferAborted, st.Status)
		now := state(t, payer)
		assert.NotContains(t, now.Holds, "ord-1", "closed by the settle")
		assert.Equal(t, "0.00", now.Balances["CNY"].Frozen)
		avail, _ := instructions.ToUnits(was.Balances["CNY"].Available, 2)
		back1, _ := instructions.ToUnits(held, 2)
		assert.Equal(t, cny(avail+back1), now.Balances["CNY"].Available)
		assert.Equal(t, was.Holds["ord-p"], now.Holds["ord-p"])
	})
}
