package engine_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/stored"
)

// An adversarial pass over a one-payer transfer's claim in its packed form
// (docs/transfers.md, One payer, "The claim's packed form"): one field,
// claim, written by HSETNX and read back by HMGET in the shared pipelines,
// without MULTI; the booking writing the claim again; the library and the
// engine reading a field of the record's own before the claim's; and the
// give-back of a quick payment's run found applied for a transfer past its
// window (transferQuick, giveBackRun).

// claimSplit is a go-redis hook that sends the first pipeline holding the
// claim of record key (its HSETNX, then its HMGET) in two parts: up to the
// HMGET, then, once between has returned, the rest. A pipeline is not a
// transaction: another client's commands, or a key's expiry, may come
// between two of its commands. hsetnx keeps the claim's HSETNX answer (0:
// the record was there).
type claimSplit struct {
	on      *atomic.Bool
	key     string
	between func()
	hsetnx  *atomic.Int64
}

func (h claimSplit) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h claimSplit) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h claimSplit) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		read, claim := -1, -1
		for i, c := range cmds {
			a := c.Args()
			if len(a) > 1 && a[1] == h.key && a[0] == "hsetnx" {
				claim = i
			}
			if len(a) > 1 && a[1] == h.key && a[0] == "hmget" && claim >= 0 && read < 0 {
				read = i
			}
		}
		if read < 0 || !h.on.CompareAndSwap(true, false) {
			return next(ctx, cmds)
		}
		err := next(ctx, cmds[:read])
		if v, e := cmds[claim].(*redis.Cmd).Int64(); e == nil {
			h.hsetnx.Store(v)
		}
		h.between()
		if err2 := next(ctx, cmds[read:]); err == nil {
			err = err2
		}
		return err
	}
}

// A payment booked, sent again as its record's life ends: the claim's
// HSETNX finds the record (and so writes nothing), and the record expires
// before the claim's HMGET reads it, which then reads nothing at all (the
// claim is no MULTI). The claim is made again: the same body must not be
// answered IDEMPOTENCY_CONFLICT, and the payer's run, which replays (its
// step made to live on here), must not be given back as a run "made under
// an id another transfer has" while the payee keeps the credit.
func TestClaimAdversary_RecordExpiringBetweenTheClaimAndItsRead(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil)
	tr := payment(hs[0], "4.00", hs[1])
	forgetAllOnCleanup(t, tr.ID, hs...)
	key := cluster.Transfer(tr.ID)
	step := cluster.Tx(hs[0], "x:"+tr.ID+":c")
	h := claimSplit{on: new(atomic.Bool), key: key, hsetnx: new(atomic.Int64), between: func() {
		// Until the record has expired (polled from the hook's goroutine,
		// where require cannot stop the test).
		for end := time.Now().Add(10 * time.Second); rdb.Exists(ctx, key).Val() != 0 && time.Now().Before(end); {
			time.Sleep(5 * time.Millisecond)
		}
	}}
	h.hsetnx.Store(-1)
	e := quickEngine(t, hookedClient(t, h), hs[0], hs[1])

	st, err := e.Transfer(ctx, tr)
	require.NoError(t, err)
	require.Equal(t, engine.TransferCommitted, st.Status, "%v", st.Error)
	require.True(t, st.Complete)
	e.Flush()
	before, seqs := totals(t, hs...), seqsOf(t, hs)

	// The record at the end of its life; its steps left to live on, so
	// that what this test sees is the claim's. (They expire before the
	// record, TestClaimAdversary_TheRecordOutlivesEveryStep: sent again
	// once they are gone, the body is a new payment.)
	require.True(t, rdb.PExpire(ctx, key, 2*time.Second).Val())
	require.True(t, rdb.PExpire(ctx, step, 2*time.Second+shortTransferTimeout).Val())
	h.on.Store(true)
	again, err := e.Transfer(ctx, tr)
	e.Flush()
	require.Equal(t, int64(0), h.hsetnx.Load(), "the claim found the record (it wrote nothing)")
	assert.NoError(t, err, "the same body is not another transfer's")
	if err == nil {
		assert.Equal(t, engine.TransferCommitted, again.Status, "%v", again.Error)
	}
	assert.Equal(t, before, totals(t, hs...), "money is conserved")
	assert.Equal(t, "5.00", state(t, hs[0]).Balances["CNY"].Available, "the payer stays charged: its payee was paid")
	assert.Equal(t, "5.00", state(t, hs[1]).Balances["CNY"].Available, "the payee paid once")
	assert.Equal(t, seqs[0], state(t, hs[0]).Seq, "nothing given back to the payer")
}

// The give-back of a run that applied for a transfer past its window
// (transferQuick) spares a run sent inside the window. A driver claims a payment and stops before its payer's run. Past the
// deadline the client's call is sent again: its payer's run applies inside
// the window (the transfer's first and only charge, its commit point) while
// its claim is held on the way to the record's master; recovery, meeting
// the record past its deadline, finishes the payment from that very run:
// the payee is paid, the record booked committed. The second driver's
// claim then arrives, after the window's end. It finds its run "applied
// now" and the transfer past its window, and gives the charge back: the
// payee would keep what the payer no longer paid, were the window judged
// by the clock once the claim is back rather than when the run was sent.
func TestClaimAdversary_RunAppliedInsideTheWindowIsNotGivenBackPastIt(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	// A window of 7 s (the TTL less two timeouts): a loaded machine's
	// recovery passes took more than the 4 s of the least TTL that keeps
	// the one-payer path.
	const timeout, ttl = 500 * time.Millisecond, 8 * time.Second
	hs := holdersOnMasters(t, tenCNY, nil)
	tr := paymentOnThirdMaster(t, hs[0], "4.00", hs[1]) // holding its claim holds nothing else
	forgetAllOnCleanup(t, tr.ID, hs...)
	h := newStall(func(a []any) bool { return len(a) > 1 && a[0] == "hsetnx" && a[1] == cluster.Transfer(tr.ID) }, false)
	on := new(atomic.Bool)
	second := quickEngineWith(t, hookedClient(t, onlyWhen{on: on, hook: h}), timeout, ttl, hs[0], hs[1])
	before, seqs := totals(t, hs...), seqsOf(t, hs)

	first := engine.New(rdb, &engine.Options{TransferTimeout: timeout, IdempotencyTTL: ttl, Logger: quiet})
	require.NoError(t, first.TransferStep(ctx, tr, "begin", 0), "the first driver claims, then stops")
	begun, err := eng.GetTransfer(ctx, tr.ID)
	require.NoError(t, err)
	require.Equal(t, engine.TransferPending, begun.Status)
	until := time.UnixMilli(begun.CreatedMs).Add(ttl - 2*timeout) // until_ms
	time.Sleep(time.Until(time.UnixMilli(begun.CreatedMs).Add(timeout + 50*time.Millisecond)))

	on.Store(true)
	answered := make(chan engine.TransferState, 1)
	go func() {
		st, err := second.Transfer(ctx, tr)
		assert.NoError(t, err)
		answered <- st
	}()
	<-h.hit
	require.Eventually(t, func() bool { return cnyOf(t, hs[0]) == 500 }, 5*time.Second, 10*time.Millisecond,
		"the second driver's run went without its claim")
	re := engine.New(rdb, &engine.Options{TransferTimeout: timeout, Logger: quiet})
	r := engine.NewRecovery(re, &engine.RecoveryOptions{Logger: quiet})
	require.Eventually(t, func() bool {
		require.NoError(t, r.RecoverSlots(ctx, slotsOf(tr.ID, hs...)...))
		st, err := eng.GetTransfer(ctx, tr.ID)
		return err == nil && st.Complete
	}, 6*time.Second, 50*time.Millisecond, "recovery finishes the payment from that run")
	re.Flush()
	require.True(t, time.Now().Before(until), "all of this inside the window")
	st, err := eng.GetTransfer(ctx, tr.ID)
	require.NoError(t, err)
	require.Equal(t, engine.TransferCommitted, st.Status)
	require.Equal(t, "5.00", state(t, hs[1]).Balances["CNY"].Available, "the payee paid from that run")

	time.Sleep(time.Until(until.Add(300 * time.Millisecond)))
	close(h.release) // the claim arrives past the window
	got := <-answered
	on.Store(false)
	second.Flush()
	assert.Equal(t, engine.TransferCommitted, got.Status, "%v", got.Error)
	assert.Equal(t, before, totals(t, hs...), "money is conserved")
	assert.Equal(t, "5.00", state(t, hs[0]).Balances["CNY"].Available, "the payer charged once, and not given back")
	assert.Equal(t, "5.00", state(t, hs[1]).Balances["CNY"].Available, "the payee paid once")
	assert.Equal(t, seqs[0]+1, state(t, hs[0]).Seq, "the payer's run, and no give-back")
}

// A done payment's record outlives every one of its steps, whose lives
// began at their runs, before the record was given its own, and a timeout
// more, whatever the masters' clocks (recordDone):
// booked, a payment's payer's and payees' steps (three parts here); given
// back, the payer's run, the credit's fence and the give-back. Once the
// record has expired, a body sent again finds none of them and is a new
// payment; never one that replays the payer's run beside a credit that
// runs anew (the payee paid twice), or a charge that replays beside a
// give-back that runs anew (the payer refunded twice).
func TestClaimAdversary_TheRecordOutlivesEveryStep(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	outlives := func(t *testing.T, id string, steps ...string) {
		t.Helper()
		lr := rdb.PTTL(ctx, cluster.Transfer(id)).Val()
		require.Greater(t, lr, time.Duration(0))
		for _, step := range steps {
			ls := rdb.PTTL(ctx, step).Val()
			assert.Greater(t, ls, time.Duration(0), "%s lives", step)
			assert.Less(t, ls, lr-shortTransferTimeout/2, "the record outlives %s, by a timeout", step)
		}
	}
	t.Run("booked", func(t *testing.T) {
		hs := holdersOnMasters(t, tenCNY, nil, nil)
		tr := payment(hs[0], "2.00", hs[1], hs[2])
		forgetAllOnCleanup(t, tr.ID, hs...)
		st, err := eng.Transfer(ctx, tr)
		require.NoError(t, err)
		require.True(t, st.Complete)
		eng.Flush()
		step := "x:" + tr.ID + ":c"
		outlives(t, tr.ID, cluster.Tx(hs[0], step), cluster.Tx(hs[1], step), cluster.Tx(hs[2], step))
	})
	t.Run("given back", func(t *testing.T) {
		hs := holdersOnMasters(t, tenCNY, nil)
		tr := payment(hs[0], "4.00", hs[1])
		forgetAllOnCleanup(t, tr.ID, hs...)
		e := quickEngine(t, nil, hs[0], hs[1])
		back := hideHolder(t, hs[1])
		st, err := e.Transfer(ctx, tr)
		back()
		require.NoError(t, err)
		require.Equal(t, engine.TransferAborted, st.Status, "given back")
		e.Flush()
		step := "x:" + tr.ID + ":c"
		outlives(t, tr.ID, cluster.Tx(hs[0], step), cluster.Tx(hs[1], step), cluster.Tx(hs[0], "x:"+tr.ID+":g"))
	})
}

// A quick payment to a payee gone since it was seen: the payer's run
// applies, the read finds the payee gone and the payer is given back. The
// record's claim is lost (a failover) before the give-back writes the
// record aborted and done, which writes the claim again, as the booking
// does. Without it the record would have a status and no fingerprint,
// holders or body: a read by id would answer no holders, and another body
// under the id would be found (its own claim landing beside the status and
// supplying the fingerprint), not refused, its payer, charged by the quick
// run, never given back.
func TestClaimAdversary_ClaimLostBeforeAGiveBack(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil, tenCNY)
	tr := payment(hs[0], "4.00", hs[1])
	forgetAllOnCleanup(t, tr.ID, hs...)
	h := newStall(applyOn(hs[0], "x:"+tr.ID+":g"), false) // the give-back, before it is sent
	e := quickEngine(t, hookedClient(t, h), hs[0], hs[1])
	other := payment(hs[2], "4.00", hs[1])
	other.ID = tr.ID
	_, err := e.Transfer(ctx, payment(hs[2], "1.00", hs[1])) // its payer and payee seen
	require.NoError(t, err)
	e.Flush()
	before := totals(t, hs...)

	back := hideHolder(t, hs[1])
	answered := make(chan engine.TransferState, 1)
	go func() {
		st, err := e.Transfer(ctx, tr)
		assert.NoError(t, err)
		answered <- st
	}()
	<-h.hit
	require.NoError(t, rdb.Del(ctx, cluster.Transfer(tr.ID)).Err(), "the claim lost")
	close(h.release)
	st := <-answered
	e.Flush()
	require.Equal(t, engine.TransferAborted, st.Status)
	back()
	require.Equal(t, before, totals(t, hs...), "the payer given back")

	got, err := eng.GetTransfer(ctx, tr.ID)
	require.NoError(t, err)
	assert.Equal(t, engine.TransferAborted, got.Status)
	assert.Equal(t, []string{hs[0], hs[1]}, got.Holders, "the record read by id names its holders")

	_, err = e.Transfer(ctx, other)
	e.Flush()
	assert.ErrorIs(t, err, engine.ErrIdempotencyConflict, "another body under the id")
	assert.Equal(t, before, totals(t, hs...), "money is conserved")
	assert.Equal(t, "9.00", state(t, hs[2]).Balances["CNY"].Available,
		"the other body's payer, charged by its run, is given back")
}

// A payment whose payer's run is rejected (INSUFFICIENT_FUNDS) on the quick
// path: its record, claimed in the packed form, is then decided aborted and
// finished by the library, which writes only status, err and what it
// finishes. Read by id, the record is aborted with the claim's holders and
// start; sent again, the body replays aborted; another body under the id
// is refused IDEMPOTENCY_CONFLICT: the fingerprint is the claim's. Nothing
// moves anywhere.
func TestClaimAdversary_PackedRecordDecidedByTheLibrary(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil)
	e := quickEngine(t, nil, hs[0], hs[1])
	before, seqs := totals(t, hs...), seqsOf(t, hs)
	tr := payment(hs[0], "90.00", hs[1])
	forgetAllOnCleanup(t, tr.ID, hs...)
	st, err := e.Transfer(ctx, tr)
	require.NoError(t, err)
	require.Equal(t, engine.TransferAborted, st.Status)
	require.True(t, st.Complete)
	e.Flush()
	raw := rdb.HGetAll(ctx, cluster.Transfer(tr.ID)).Val()
	require.Equal(t, engine.TransferAborted, raw[stored.XferStatus], "decided by the library")
	require.NotEmpty(t, raw[stored.XferClaim], "in its packed form")
	assert.NotContains(t, raw, stored.XferFP, "the library wrote only what changes")

	got, err := eng.GetTransfer(ctx, tr.ID)
	require.NoError(t, err)
	assert.Equal(t, engine.TransferAborted, got.Status)
	assert.True(t, got.Complete)
	assert.Equal(t, []string{hs[0], hs[1]}, got.Holders)
	assert.Equal(t, st.CreatedMs, got.CreatedMs)
	if assert.NotNil(t, got.Error) {
		assert.ErrorIs(t, got.Error, engine.ErrInsufficientFunds)
	}

	again, err := e.Transfer(ctx, tr)
	require.NoError(t, err)
	assert.Equal(t, engine.TransferAborted, again.Status)
	assert.True(t, again.Replayed)
	for _, d := range []*engine.Engine{e, engine.New(rdb, &engine.Options{MinReplicaAcks: 1, Logger: quiet})} {
		other := payment(hs[0], "1.00", hs[1])
		other.ID = tr.ID
		_, err = d.Transfer(ctx, other)
		assert.ErrorIs(t, err, engine.ErrIdempotencyConflict, "another body, claimed or begun by the library")
	}
	e.Flush()
	assert.Equal(t, before, totals(t, hs...), "nothing moved")
	for i, h := range hs {
		assert.Equal(t, seqs[i], state(t, h).Seq, "holder %d", i)
	}
}

// A record begun by the library's two-phase begin (an engine whose TTL is
// too short for the one-payer path), then another body under its id sent to
// a quick engine: that claim lands on the record as a field the record did
// not have (HSETNX of claim), and is refused IDEMPOTENCY_CONFLICT, its
// payer's run given back. The library's record is unchanged for every
// reader: read by id, pending then committed with its own holders and
// start; driven by its own engine, each of its parts once.
func TestClaimAdversary_ClaimLandsOnARecordTheLibraryBegan(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil, tenCNY)
	q := quickEngine(t, nil, hs[2], hs[1])
	before, seqs := totals(t, hs...), seqsOf(t, hs)
	tr := payment(hs[0], "4.00", hs[1])
	forgetAllOnCleanup(t, tr.ID, hs...)
	two := twoPhaseMinutes()
	require.NoError(t, two.TransferStep(ctx, tr, "begin", 0))
	begun, err := eng.GetTransfer(ctx, tr.ID)
	require.NoError(t, err)
	require.Equal(t, engine.TransferPending, begun.Status)

	other := payment(hs[2], "4.00", hs[1])
	other.ID = tr.ID
	_, err = q.Transfer(ctx, other)
	require.ErrorIs(t, err, engine.ErrIdempotencyConflict)
	q.Flush()
	require.NotEmpty(t, rdb.HGet(ctx, cluster.Transfer(tr.ID), stored.XferClaim).Val(), "the claim landed")
	assert.Equal(t, before, totals(t, hs...), "the other body's payer given back")
	assert.Equal(t, seqs[2]+2, state(t, hs[2]).Seq, "its run and its give-back")

	mid, err := eng.GetTransfer(ctx, tr.ID)
	require.NoError(t, err)
	assert.Equal(t, begun, mid, "the library's record as it was")

	st, err := two.Transfer(ctx, tr)
	require.NoError(t, err)
	require.Equal(t, engine.TransferCommitted, st.Status, "%v", st.Error)
	assert.True(t, st.Complete)
	assert.True(t, st.Replayed)
	got, err := eng.GetTransfer(ctx, tr.ID)
	require.NoError(t, err)
	assert.Equal(t, engine.TransferCommitted, got.Status)
	assert.Equal(t, []string{hs[0], hs[1]}, got.Holders)
	assert.Equal(t, begun.CreatedMs, got.CreatedMs)
	_, err = q.Transfer(ctx, other)
	assert.ErrorIs(t, err, engine.ErrIdempotencyConflict)
	q.Flush()
	assert.Equal(t, before, totals(t, hs...), "money is conserved")
	assert.Equal(t, "6.00", state(t, hs[0]).Balances["CNY"].Available, "charged once")
	assert.Equal(t, cny(100+400), state(t, hs[1]).Balances["CNY"].Available, "paid once")
	assert.Equal(t, seqs[2]+2, state(t, hs[2]).Seq, "the other payer's run answers its fence")
}
