package engine_test

import (
	"context"
	"strings"
	"sync"
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

// An adversarial pass over the quick one-payer payment (docs/transfers.md,
// One payer: two round trips to a payee seen lately): several drivers of
// one id at once, other bodies under the id, a payee that changes after it
// was seen, a transfer begun on the other path, reads at every stage. Each
// test compares whole balances and seqs before and after, and the sum of
// money over every holder involved.

// quickEngine is an engine whose payments to hs[1] go the quick way: it
// has paid hs[1] once already (from hs[0], 1.00 CNY), so its read found it.
// Its transfer timeout is short, so that recovery can take over soon.
func quickEngine(t *testing.T, client redis.UniversalClient, payer, payee string) *engine.Engine {
	t.Helper()
	return quickEngineWith(t, client, shortTransferTimeout, 0, payer, payee)
}

// quickEngineWith is quickEngine with transfer timeout timeout and
// idempotency TTL ttl (0: the default).
func quickEngineWith(t *testing.T, client redis.UniversalClient, timeout, ttl time.Duration, payer, payee string) *engine.Engine {
	t.Helper()
	if client == nil {
		client = rdb
	}
	e := engine.New(client, &engine.Options{TransferTimeout: timeout, IdempotencyTTL: ttl, Logger: quiet})
	st, err := e.Transfer(context.Background(), payment(payer, "1.00", payee))
	require.NoError(t, err)
	require.Equal(t, engine.TransferCommitted, st.Status, "%v", st.Error)
	require.True(t, st.Complete)
	e.Flush()
	return e
}

// quietRecoveryEngine is shortTimeout's engine, logging nowhere.
func quietRecoveryEngine() *engine.Engine {
	return engine.New(rdb, &engine.Options{TransferTimeout: shortTransferTimeout, Logger: quiet})
}

// hookedClient is a cluster client of its own with hook on it.
func hookedClient(t *testing.T, hook redis.Hook) *redis.ClusterClient {
	t.Helper()
	c := testCluster.Client(&redis.ClusterOptions{ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
	t.Cleanup(func() { _ = c.Close() })
	c.AddHook(hook)
	return c
}

// paymentOnThirdMaster is payment(payer, amount, payee), its id picked so
// that its record lives on neither holder's master.
func paymentOnThirdMaster(t *testing.T, payer, amount, payee string) instructions.Transfer {
	t.Helper()
	ctx := context.Background()
	masters := map[string]bool{}
	for _, h := range []string{payer, payee} {
		m, err := testCluster.MasterOf(ctx, cluster.HolderSlot(h))
		require.NoError(t, err)
		masters[m] = true
	}
	for {
		tr := payment(payer, amount, payee)
		m, err := testCluster.MasterOf(ctx, cluster.TransferSlot(tr.ID))
		require.NoError(t, err)
		if !masters[m] {
			return tr
		}
	}
}

// hideHolder moves holder h's hash out of the way, under another name in
// the same slot, as an operator's mistake (or a master that lost it) would:
// to the engine the holder is gone. back brings it back; the test's end
// does, if back was not called.
func hideHolder(t *testing.T, h string) (back func()) {
	t.Helper()
	ctx := context.Background()
	gone := cluster.Holder(h) + ":gone" // the same slot
	require.NoError(t, rdb.Rename(ctx, cluster.Holder(h), gone).Err())
	hidden := true
	t.Cleanup(func() {
		if hidden {
			rdb.Rename(ctx, gone, cluster.Holder(h))
		}
	})
	return func() {
		t.Helper()
		require.NoError(t, rdb.Rename(ctx, gone, cluster.Holder(h)).Err())
		hidden = false
	}
}

// entriesOf counts the payment entries of transfer id in holder's slot.
func entriesOf(t *testing.T, holder, id string) int {
	t.Helper()
	n := 0
	for _, m := range rdb.ZRange(context.Background(), cluster.Transfers(cluster.HolderSlot(holder)), 0, -1).Val() {
		if strings.HasPrefix(m, id+"\n") {
			n++
		}
	}
	return n
}

// forgetAllOnCleanup takes transfer id out of its slot's index, and its
// payment entries out of holders' slots, when the test ends (forgetOnCleanup):
// a transfer a failing test leaves unfinished would otherwise be retried by
// every later recovery pass of the package.
func forgetAllOnCleanup(t *testing.T, id string, holders ...string) {
	forgetOnCleanup(t, id)
	t.Cleanup(func() {
		ctx := context.Background()
		for _, h := range holders {
			index := cluster.Transfers(cluster.HolderSlot(h))
			for _, m := range rdb.ZRange(ctx, index, 0, -1).Val() {
				if strings.HasPrefix(m, id+"\n") {
					_ = rdb.ZRem(ctx, index, m).Err()
				}
			}
		}
	})
}

// slotsOf lists the slots whose indexes hold transfer id's entries: its
// record's and its holders'.
func slotsOf(id string, holders ...string) []int {
	slots := []int{cluster.TransferSlot(id)}
	for _, h := range holders {
		slots = append(slots, cluster.HolderSlot(h))
	}
	return slots
}

// recoverEntries runs recovery passes until no payment entry of id is left
// in any of holders' slots and the transfer is complete.
func recoverEntries(t *testing.T, id string, holders ...string) engine.TransferState {
	t.Helper()
	ctx := context.Background()
	r := engine.NewRecovery(quietRecoveryEngine(), &engine.RecoveryOptions{Logger: quiet})
	deadline := time.Now().Add(20 * time.Second)
	for {
		require.NoError(t, r.Recover(ctx))
		left := 0
		for _, h := range holders {
			left += entriesOf(t, h, id)
		}
		st, err := eng.GetTransfer(ctx, id)
		require.NoError(t, err)
		if left == 0 && st.Complete {
			return st
		}
		require.True(t, time.Now().Before(deadline), "transfer %s: %d entries left, state %+v", id, left, st)
		time.Sleep(100 * time.Millisecond)
	}
}

// The same quick payment sent at once by many goroutines of one engine:
// one payer's run applies, the others replay it; the credit applies once;
// every answer is committed and complete; one event per holder.
func TestQuickAdversary_SameBodyFromManyGoroutines(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	for round := range 3 {
		hs := holdersOnMasters(t, tenCNY, nil)
		e := quickEngine(t, nil, hs[0], hs[1])
		before, seqs := totals(t, hs...), seqsOf(t, hs)
		tr := payment(hs[0], "4.00", hs[1])
		var wg sync.WaitGroup
		answers := make(chan engine.TransferState, 16)
		errs := make(chan error, 16)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := e.Transfer(ctx, tr)
				if err != nil {
					errs <- err
					return
				}
				answers <- st
			}()
		}
		wg.Wait()
		close(answers)
		close(errs)
		e.Flush()
		for err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
		for st := range answers {
			assert.Equal(t, engine.TransferCommitted, st.Status, "round %d: %v", round, st.Error)
			assert.True(t, st.Complete, "round %d", round)
		}
		assert.Equal(t, before, totals(t, hs...), "round %d: money is conserved", round)
		assert.Equal(t, "5.00", state(t, hs[0]).Balances["CNY"].Available, "round %d: charged once", round)
		assert.Equal(t, "5.00", state(t, hs[1]).Balances["CNY"].Available, "round %d: paid once", round)
		for i, h := range hs {
			assert.Equal(t, seqs[i]+1, state(t, h).Seq, "round %d, holder %d: one instruction", round, i)
			assert.Len(t, eventsOf(t, h, tr.ID), 1, "round %d, holder %d: one event", round, i)
		}
		got, err := eng.GetTransfer(ctx, tr.ID)
		require.NoError(t, err)
		assert.Equal(t, engine.TransferCommitted, got.Status)
		assert.True(t, got.Complete)
		assert.Zero(t, entriesOf(t, hs[0], tr.ID), "round %d: the payment's entry is gone", round)
	}
}

// One id, bodies from several payers to one payee, sent at once: each
// payer's run goes with the claim, so every one of them applies; the
// claim's winner is the transfer, every other payer is given back. Exactly
// one payer is charged, the payee is paid once, and every answer agrees
// with the record.
func TestQuickAdversary_OneIDManyPayersAtOnce(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, tenCNY, tenCNY, nil)
	payers, payee := hs[:3], hs[3]
	e := quickEngine(t, nil, payers[0], payee)
	before, seqs := totals(t, hs...), seqsOf(t, hs)
	was := []int64{cnyOf(t, payers[0]), cnyOf(t, payers[1]), cnyOf(t, payers[2])}
	id := newID("pay")
	bodies := make([]instructions.Transfer, len(payers))
	for i, p := range payers {
		bodies[i] = instructions.Transfer{ID: id, Parts: []instructions.Part{
			part(p, ops().Debit("CNY", "4.00")), part(payee, ops().Credit("CNY", "4.00"))}}
	}
	type answer struct {
		st  engine.TransferState
		err error
	}
	got := make([]answer, len(bodies))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got[i].st, got[i].err = e.Transfer(ctx, bodies[i])
		}()
	}
	close(start)
	wg.Wait()
	e.Flush()
	final := recoverEntries(t, id, hs...)
	require.Equal(t, engine.TransferCommitted, final.Status, "%v", final.Error)
	winner := -1
	for i, a := range got {
		if a.err == nil {
			require.Equal(t, -1, winner, "two bodies answered as the transfer: %d and %d", winner, i)
			winner = i
			assert.Equal(t, engine.TransferCommitted, a.st.Status, "%v", a.st.Error)
			continue
		}
		assert.ErrorIs(t, a.err, engine.ErrIdempotencyConflict, "body %d", i)
	}
	require.NotEqual(t, -1, winner, "one body is the transfer")
	assert.Equal(t, payers[winner], final.Holders[0], "the record is the winner's")

	assert.Equal(t, before, totals(t, hs...), "money is conserved")
	for i, p := range payers {
		s := state(t, p)
		if i == winner {
			assert.Equal(t, cny(was[i]-400), s.Balances["CNY"].Available, "the winner charged once")
			assert.Equal(t, seqs[i]+1, s.Seq)
			continue
		}
		assert.Equal(t, cny(was[i]), s.Balances["CNY"].Available, "payer %d given back", i)
		assert.Equal(t, seqs[i]+2, s.Seq, "payer %d: its run and its give-back", i)
	}
	assert.Equal(t, "5.00", state(t, payee).Balances["CNY"].Available, "paid once")
	assert.Equal(t, seqs[3]+1, state(t, payee).Seq)

	// Each body sent again: the winner's replays, the others conflict and
	// take nothing again.
	for i, b := range bodies {
		st, err := e.Transfer(ctx, b)
		if i == winner {
			require.NoError(t, err)
			assert.True(t, st.Replayed)
			continue
		}
		assert.ErrorIs(t, err, engine.ErrIdempotencyConflict)
	}
	e.Flush()
	recoverEntries(t, id, hs...)
	assert.Equal(t, before, totals(t, hs...), "money is conserved after the retries")
}

// applyOn matches the library's run of instruction id on holder.
func applyOn(holder, id string) func([]any) bool {
	return func(a []any) bool {
		return len(a) > 4 && a[0] == "fcall" && a[1] == "apply" && a[4] == cluster.Tx(holder, id)
	}
}

// A payee seen, then gone (its hash moved away, as an operator's mistake
// would) before a quick payment to it: the driver whose run applied gives
// the payer back. A second driver of the same payment (the client's call
// sent again) comes while the give-back is on its way: its run replays,
// its read finds the payee gone too. The record ends aborted with the
// payee's error, no answer says done otherwise; the payer is given back
// once, the payee never paid.
func TestQuickAdversary_PayeeGoneWhileASecondDriverComes(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil)
	tr := payment(hs[0], "4.00", hs[1])
	forgetAllOnCleanup(t, tr.ID, hs...)
	h := newStall(applyOn(hs[0], "x:"+tr.ID+":g"), false) // the give-back, before it is sent
	first := quickEngine(t, hookedClient(t, h), hs[0], hs[1])
	second := quickEngine(t, nil, hs[0], hs[1])
	payer0, payee0 := state(t, hs[0]), state(t, hs[1])
	back := hideHolder(t, hs[1])

	answered := make(chan engine.TransferState, 1)
	go func() {
		st, err := first.Transfer(ctx, tr)
		assert.NoError(t, err)
		answered <- st
	}()
	<-h.hit // the credit fenced, the payer about to be given back
	mid, err := eng.GetTransfer(ctx, tr.ID)
	require.NoError(t, err)
	// A one-payer payment is committed by its payer's run; one whose credit
	// cannot apply is then given back and reported aborted (DESIGN.md): a
	// read meanwhile may say committed, never complete.
	assert.False(t, mid.Status == engine.TransferCommitted && mid.Complete, "%+v", mid)
	st2, err := second.Transfer(ctx, tr)
	require.NoError(t, err)
	close(h.release)
	st1 := <-answered
	first.Flush()
	second.Flush()

	final, err := eng.GetTransfer(ctx, tr.ID)
	require.NoError(t, err)
	assert.Equal(t, engine.TransferAborted, final.Status, "the payee's error: the payer given back")
	assert.True(t, final.Complete)
	if assert.NotNil(t, final.Error) {
		assert.ErrorIs(t, final.Error, engine.ErrHolderNotFound)
	}
	assert.Equal(t, final.Status, st1.Status, "the first driver answers what the record says")
	assert.False(t, st2.Status == engine.TransferCommitted && st2.Complete,
		"the second driver answers aborted, or committed and unfinished: never done (it answered %+v)", st2)

	payer := state(t, hs[0])
	assert.Equal(t, payer0.Balances, payer.Balances, "the payer given back")
	assert.Equal(t, payer0.Seq+2, payer.Seq, "charged, given back: once each")
	back()
	recoverEntries(t, tr.ID, hs...)
	again, err := second.Transfer(ctx, tr)
	require.NoError(t, err)
	assert.Equal(t, engine.TransferAborted, again.Status)
	second.Flush()
	recoverEntries(t, tr.ID, hs...)
	assert.Equal(t, payer.Balances, state(t, hs[0]).Balances, "given back once")
	assert.Equal(t, payer.Seq, state(t, hs[0]).Seq)
	assert.Equal(t, payee0, state(t, hs[1]), "the payee never paid")
}

// A payee seen with little, then filled to near 2^53-1 by other
// instructions: the quick payment's run applies with the read, which finds
// the credit would overflow. The payer is given back at once; the answer
// is aborted OVERFLOW on part 1; the payee's whole state is as it was. Sent
// again, it replays aborted and takes nothing again; a new payment to the
// same payee aborts the same way (the payee is still "seen").
func TestQuickAdversary_PayeeFilledAfterItWasSeen(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil)
	e := quickEngine(t, nil, hs[0], hs[1])
	full := int64(instructions.MaxUnits - 100) // 1.00 room; the payment is 4.00
	apply(t, newIn(hs[1]).Credit("CNY", cny(full-100)))
	require.Equal(t, full, cnyOf(t, hs[1]))
	payer0, payee0 := state(t, hs[0]), state(t, hs[1])

	for i := range 2 {
		tr := payment(hs[0], "4.00", hs[1])
		st, err := e.Transfer(ctx, tr)
		require.NoError(t, err)
		require.Equal(t, engine.TransferAborted, st.Status, "payment %d", i)
		assert.True(t, st.Complete)
		if assert.NotNil(t, st.PartIndex) {
			assert.Equal(t, 1, *st.PartIndex)
		}
		if assert.NotNil(t, st.Error) {
			assert.ErrorIs(t, st.Error, engine.ErrOverflow)
		}
		payer := state(t, hs[0])
		assert.Equal(t, payer0.Balances, payer.Balances, "payment %d: the payer given back", i)
		assert.Equal(t, payer0.Seq+2*int64(i+1), payer.Seq, "payment %d: a run and a give-back each", i)
		assert.Equal(t, payee0, state(t, hs[1]), "payment %d: the payee's whole state unchanged", i)

		again, err := e.Transfer(ctx, tr)
		require.NoError(t, err)
		assert.Equal(t, engine.TransferAborted, again.Status)
		assert.True(t, again.Replayed)
		e.Flush()
		got, err := eng.GetTransfer(ctx, tr.ID)
		require.NoError(t, err)
		assert.Equal(t, engine.TransferAborted, got.Status)
		assert.Equal(t, payer, state(t, hs[0]), "payment %d: the retry takes nothing again", i)
		assert.Equal(t, payee0, state(t, hs[1]))
		recoverEntries(t, tr.ID, hs...)
		assert.Equal(t, payer, state(t, hs[0]), "payment %d: recovery takes nothing again", i)
	}
}

// GET /v1/transfers/{id} by id alone at every stage of a quick payment:
// before it (not found), with its credit held before it is sent
// (committed, not complete), with the credit applied and its answer held
// (committed, complete), with its booking held (committed, complete), and
// after the booking (committed, complete, done).
func TestQuickAdversary_ReadByIDAtEveryStage(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	type stage struct {
		name     string
		match    func(hs []string, id string) func([]any) bool
		after    bool
		complete bool
	}
	for _, s := range []stage{
		{"the credit held before it is sent", func(hs []string, id string) func([]any) bool { return applyOn(hs[1], "x:"+id+":c") }, false, false},
		{"the credit's answer held", func(hs []string, id string) func([]any) bool { return applyOn(hs[1], "x:"+id+":c") }, true, true},
		{"the booking held", func([]string, string) func([]any) bool { return transferAction("decide") }, false, true},
	} {
		t.Run(s.name, func(t *testing.T) {
			hs := holdersOnMasters(t, tenCNY, nil)
			tr := payment(hs[0], "4.00", hs[1])
			h := newStall(s.match(hs, tr.ID), s.after)
			on := new(atomic.Bool)
			e := quickEngine(t, hookedClient(t, onlyWhen{on: on, hook: h}), hs[0], hs[1])
			before, seqs := totals(t, hs...), seqsOf(t, hs)
			_, err := eng.GetTransfer(ctx, tr.ID)
			require.ErrorIs(t, err, engine.ErrTransferNotFound)

			on.Store(true)
			done := make(chan engine.TransferState, 1)
			go func() {
				st, err := e.Transfer(ctx, tr)
				assert.NoError(t, err)
				done <- st
			}()
			<-h.hit
			st, err := eng.GetTransfer(ctx, tr.ID)
			require.NoError(t, err)
			assert.Equal(t, engine.TransferCommitted, st.Status)
			assert.Equal(t, s.complete, st.Complete)
			assert.Equal(t, []string{hs[0], hs[1]}, st.Holders)
			close(h.release)
			got := <-done
			e.Flush()
			on.Store(false)
			assert.Equal(t, engine.TransferCommitted, got.Status)
			assert.True(t, got.Complete)

			st, err = eng.GetTransfer(ctx, tr.ID)
			require.NoError(t, err)
			assert.Equal(t, engine.TransferCommitted, st.Status)
			assert.True(t, st.Complete)
			assert.Equal(t, before, totals(t, hs...), "money is conserved")
			assert.Equal(t, "5.00", state(t, hs[0]).Balances["CNY"].Available)
			assert.Equal(t, "5.00", state(t, hs[1]).Balances["CNY"].Available)
			for i, h := range hs {
				assert.Equal(t, seqs[i]+1, state(t, h).Seq, "holder %d", i)
			}
			assert.Zero(t, entriesOf(t, hs[0], tr.ID), "the entry went with the booking")
			err = rdb.ZScore(ctx, cluster.Transfers(cluster.Slot(cluster.Transfer(tr.ID))), tr.ID).Err()
			assert.ErrorIs(t, err, redis.Nil, "the record left its index with the booking")
		})
	}
}

// A quick payment whose claim is held on its way (a slow connection to the
// record's master) while its payer's run applies: past the deadline the
// recovery worker finds the payment's entry in the payer's slot, claims the
// record from the body itself and finishes the payment. Then the driver's
// own claim arrives and the driver goes on. Each part applies once, and
// the driver answers what recovery decided.
func TestQuickAdversary_ClaimArrivesAfterRecoveryFinishedThePayment(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil)
	// The claim shares its master's pipelines: its record on the third
	// master, so that what it holds up is the claim, not the payer's run.
	tr := paymentOnThirdMaster(t, hs[0], "4.00", hs[1])
	h := newStall(func(a []any) bool { return len(a) > 1 && a[0] == "hsetnx" && a[1] == cluster.Transfer(tr.ID) }, false)
	on := new(atomic.Bool)
	e := quickEngine(t, hookedClient(t, onlyWhen{on: on, hook: h}), hs[0], hs[1])
	before, seqs := totals(t, hs...), seqsOf(t, hs)

	on.Store(true)
	answered := make(chan engine.TransferState, 1)
	go func() {
		st, err := e.Transfer(ctx, tr)
		assert.NoError(t, err)
		answered <- st
	}()
	<-h.hit
	require.Eventually(t, func() bool { return cnyOf(t, hs[0]) == 500 }, 5*time.Second, 10*time.Millisecond,
		"the payer's run went without its claim")
	time.Sleep(2 * shortTransferTimeout) // past the entry's deadline
	r := engine.NewRecovery(quietRecoveryEngine(), &engine.RecoveryOptions{Logger: quiet})
	require.Eventually(t, func() bool {
		require.NoError(t, r.Recover(ctx))
		st, err := eng.GetTransfer(ctx, tr.ID)
		return err == nil && st.Complete
	}, 10*time.Second, 100*time.Millisecond, "recovery finishes the payment from its entry")
	st, err := eng.GetTransfer(ctx, tr.ID)
	require.NoError(t, err)
	assert.Equal(t, engine.TransferCommitted, st.Status)
	assert.Equal(t, "5.00", state(t, hs[1]).Balances["CNY"].Available, "recovery paid the payee")

	close(h.release)
	got := <-answered
	on.Store(false)
	e.Flush()
	assert.Equal(t, engine.TransferCommitted, got.Status, "%v", got.Error)
	assert.True(t, got.Complete)
	final := recoverEntries(t, tr.ID, hs...)
	assert.Equal(t, engine.TransferCommitted, final.Status)
	assert.Equal(t, before, totals(t, hs...), "money is conserved")
	assert.Equal(t, "5.00", state(t, hs[0]).Balances["CNY"].Available, "charged once")
	assert.Equal(t, "5.00", state(t, hs[1]).Balances["CNY"].Available, "paid once")
	for i, h := range hs {
		assert.Equal(t, seqs[i]+1, state(t, h).Seq, "holder %d: one instruction", i)
	}
}

// waitGone polls until key has expired.
func waitGone(t *testing.T, key string) {
	t.Helper()
	require.Eventually(t, func() bool { return rdb.Exists(context.Background(), key).Val() == 0 }, 10*time.Second,
		20*time.Millisecond, "%s never expired", key)
}

// A quick payment given back in the second half of its window (its payee
// gone): the record says aborted and done, and lives a TTL from the
// give-back, longer than the payer's step, whose life began at the run.
// Sent again after the step expired, while the record is still there, the
// quick path's run charges the payer again: it was sent past the window,
// and is given back at once, by an id of its own (the transfer's give-back
// x:<id>:g, still remembered, would replay and refund nothing).
func TestQuickAdversary_SentAgainAfterAGiveBackWhileTheRecordLives(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil)
	tr := payment(hs[0], "4.00", hs[1])
	credit := "x:" + tr.ID + ":c"
	lose := loseAnswers{match: applyOn(hs[1], credit), ran: false}
	// The least TTL that keeps the one-payer path, ten timeouts: a window
	// (until_ms) of 4 s, the give-back due from 2 s.
	const timeout, ttl = 500 * time.Millisecond, 5 * time.Second
	first := quickEngineWith(t, hookedClient(t, lose), timeout, ttl, hs[0], hs[1])
	again := quickEngineWith(t, nil, timeout, ttl, hs[0], hs[1]) // seen by it too
	forgetAllOnCleanup(t, tr.ID, hs...)
	payer0 := state(t, hs[0])

	st, err := first.Transfer(ctx, tr)
	require.NoError(t, err)
	require.Equal(t, engine.TransferCommitted, st.Status, "%v", st.Error)
	require.False(t, st.Complete, "the credit was lost")
	ran := time.Now()
	hideHolder(t, hs[1])

	// Into the second half of the window: recovery gives the payer back.
	for time.Now().UnixMilli() < st.CreatedMs+2100 {
		time.Sleep(20 * time.Millisecond)
	}
	r := engine.NewRecovery(engine.New(rdb, &engine.Options{TransferTimeout: timeout, Logger: quiet}),
		&engine.RecoveryOptions{Logger: quiet})
	require.Eventually(t, func() bool {
		require.NoError(t, r.RecoverSlots(ctx, slotsOf(tr.ID, hs...)...))
		got, err := eng.GetTransfer(ctx, tr.ID)
		return err == nil && got.Status == engine.TransferAborted && got.Complete
	}, 5*time.Second, 50*time.Millisecond, "given back within the window")
	given := state(t, hs[0])
	assert.Equal(t, payer0.Balances, given.Balances, "given back")
	assert.Equal(t, payer0.Seq+2, given.Seq, "charged, given back")

	// Past the life the step's record had from its run: the record, given
	// its life at the give-back, outlives it.
	time.Sleep(time.Until(ran.Add(ttl + 200*time.Millisecond)))
	require.Equal(t, int64(1), rdb.Exists(ctx, cluster.Transfer(tr.ID)).Val(), "the record, given its life at the give-back")
	require.Zero(t, rdb.Exists(ctx, cluster.Tx(hs[0], credit)).Val(), "the payer's step expired")
	st, err = again.Transfer(ctx, tr)
	require.NoError(t, err)
	again.Flush()
	assert.Equal(t, engine.TransferAborted, st.Status)
	assert.True(t, st.Replayed)
	payer := state(t, hs[0])
	assert.Equal(t, given.Balances, payer.Balances, "the payer is not charged again for a transfer given back")
	assert.Equal(t, given.Seq+2, payer.Seq, "its run applied again and was given back at once, by an id of its own")
}

// A payee seen, then suspended before a quick payment to it: a suspended
// holder accepts credits, so the payment commits and pays it once; the
// payer is charged once; sent again, it replays.
func TestQuickAdversary_PayeeSuspendedAfterItWasSeen(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil)
	e := quickEngine(t, nil, hs[0], hs[1])
	apply(t, newIn(hs[1]).Suspend())
	before, seqs := totals(t, hs...), seqsOf(t, hs)
	tr := payment(hs[0], "4.00", hs[1])
	for i := range 2 {
		st, err := e.Transfer(ctx, tr)
		require.NoError(t, err)
		assert.Equal(t, engine.TransferCommitted, st.Status, "%v", st.Error)
		assert.True(t, st.Complete)
		assert.Equal(t, i == 1, st.Replayed)
		e.Flush()
		assert.Equal(t, before, totals(t, hs...), "money is conserved")
		assert.Equal(t, "5.00", state(t, hs[0]).Balances["CNY"].Available, "charged once")
		assert.Equal(t, "5.00", state(t, hs[1]).Balances["CNY"].Available, "paid once")
		for j, h := range hs {
			assert.Equal(t, seqs[j]+1, state(t, h).Seq, "holder %d", j)
		}
	}
	recoverEntries(t, tr.ID, hs...)
	assert.Equal(t, "5.00", state(t, hs[1]).Balances["CNY"].Available, "paid once")
}

// A quick payment sent again after its payer's step's record expired while
// the transfer's record lives: its run, which goes before the record is
// read, charges the payer a second time; the driver, finding the transfer
// past the window in which anyone sends that step (left unfinished, no
// recovery worker running for half a TTL; or done, with a record that
// outlives the step, as one the library gave its life), gives the charge
// back and answers what the record says. Its run then answers the
// give-back's fence: sent a third time, nothing moves.
func TestQuickAdversary_SentAgainAfterItsStepExpiredIsGivenBack(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	// The least TTL that keeps the one-payer path, ten timeouts: a window
	// of 4 s, the payer's step's record living 5 s from its run.
	const timeout, ttl = 500 * time.Millisecond, 5 * time.Second
	for _, c := range []struct {
		name     string
		complete bool
	}{{"left unfinished past its window", false}, {"done", true}} {
		t.Run(c.name, func(t *testing.T) {
			hs := holdersOnMasters(t, tenCNY, nil)
			tr := payment(hs[0], "4.00", hs[1])
			step := "x:" + tr.ID + ":c"
			var hook redis.Hook = loseAnswers{match: func([]any) bool { return false }}
			if !c.complete {
				hook = loseAnswers{match: applyOn(hs[1], step), ran: false} // the credit never goes
			}
			first := quickEngineWith(t, hookedClient(t, hook), timeout, ttl, hs[0], hs[1])
			again := quickEngineWith(t, nil, timeout, ttl, hs[0], hs[1]) // seen by it too
			forgetAllOnCleanup(t, tr.ID, hs...)
			payer0, payee0 := state(t, hs[0]), cnyOf(t, hs[1])

			st, err := first.Transfer(ctx, tr)
			require.NoError(t, err)
			require.Equal(t, engine.TransferCommitted, st.Status, "%v", st.Error)
			require.Equal(t, c.complete, st.Complete)
			first.Flush()
			charged := state(t, hs[0])
			require.Equal(t, payer0.Seq+1, charged.Seq)
			if c.complete {
				require.NoError(t, rdb.Del(ctx, cluster.Tx(hs[0], step)).Err(), "the step's record gone before the record")
				require.True(t, rdb.Persist(ctx, cluster.Transfer(tr.ID)).Val(), "the record outlives it")
				t.Cleanup(func() { rdb.Del(ctx, cluster.Transfer(tr.ID)) })
			}
			time.Sleep(time.Until(time.UnixMilli(st.CreatedMs).Add(ttl + 300*time.Millisecond)))
			require.Zero(t, rdb.Exists(ctx, cluster.Tx(hs[0], step)).Val(), "the step's record expired")
			require.Equal(t, int64(1), rdb.Exists(ctx, cluster.Transfer(tr.ID)).Val(), "the record lives")

			for i := range 2 {
				st, err := again.Transfer(ctx, tr)
				require.NoError(t, err)
				again.Flush()
				assert.Equal(t, engine.TransferCommitted, st.Status, "send %d", i+2)
				assert.Equal(t, c.complete, st.Complete, "send %d", i+2)
				assert.True(t, st.Replayed, "send %d", i+2)
				payer := state(t, hs[0])
				assert.Equal(t, charged.Balances, payer.Balances, "send %d: the payer charged once", i+2)
				assert.Equal(t, charged.Seq+2, payer.Seq, "send %d: charged again and given back, once", i+2)
			}
			paid := int64(0)
			if c.complete {
				paid = 400
			}
			assert.Equal(t, payee0+paid, cnyOf(t, hs[1]), "the payee paid once, or not at all")
			if c.complete {
				assert.Zero(t, entriesOf(t, hs[0], tr.ID), "the payment's entries gone")
			}
		})
	}
}

// A quick payment (its payee seen lately) whose payer's hash AND
// payee's hash are both gone when it is sent (an operator's mistake, a
// master that lost both, a rebuild under way):
//
//  1. the claim, the payee's read and the payer's run go together; the run
//     is refused HOLDER_NOT_FOUND (which no idempotency record keeps), the
//     read finds the payee gone (why != nil);
//  2. the transfer is decided aborted with the payee's error, done; the
//     payer's step x:<id>:c is fenced all the same;
//  3. both holders are brought back; the client sends the same body again
//     (a retry within the TTL: it must replay aborted). The quick path sends
//     the payer's run beside the claim, and the fence refuses it.
//
// Before, pay fenced the step after a HOLDER_NOT_FOUND only when the reads
// had found nothing wrong: with the payee gone too, the step had no record,
// the retry's run applied, charging 4.00, and nothing gave it back (the
// record aborted and done, the run sent inside the window).
// docs/transfers.md, Limits, "Fences for unknown holders".
func TestQuickAdversary_PayerAndPayeeBothGoneFencesThePayersStep(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil)
	e := quickEngine(t, nil, hs[0], hs[1]) // payer 9.00, payee 1.00, payee seen
	tr := payment(hs[0], "4.00", hs[1])
	forgetAllOnCleanup(t, tr.ID, hs...)
	before, seqs := totals(t, hs...), seqsOf(t, hs)

	backPayer, backPayee := hideHolder(t, hs[0]), hideHolder(t, hs[1])
	st, err := e.Transfer(ctx, tr)
	require.NoError(t, err)
	e.Flush()
	require.Equal(t, engine.TransferAborted, st.Status, "nobody can be charged or paid")
	require.True(t, st.Complete)
	backPayer()
	backPayee()

	again, err := e.Transfer(ctx, tr)
	require.NoError(t, err)
	e.Flush()
	assert.Equal(t, engine.TransferAborted, again.Status)
	assert.True(t, again.Replayed)
	got, err := eng.GetTransfer(ctx, tr.ID)
	require.NoError(t, err)
	assert.Equal(t, engine.TransferAborted, got.Status)
	assert.True(t, got.Complete)

	recoverFor(t, quietRecoveryEngine(), 3*shortTransferTimeout) // nothing left for recovery to do either
	assert.Equal(t, before, totals(t, hs...), "money is conserved")
	assert.Equal(t, "9.00", state(t, hs[0]).Balances["CNY"].Available,
		"the payer of an aborted transfer is not charged by its retry")
	assert.Equal(t, seqs[0], state(t, hs[0]).Seq, "nothing applied on the payer")
	assert.Equal(t, seqs[1], state(t, hs[1]).Seq, "nothing applied on the payee")
}

// A quick payment of a transfer that an engine of the default TTL began,
// driven by one whose TTL is 5 s: its payer's run goes with the driver's
// TTL, before the record is read, and applies, but its answer is lost; sent
// again, it replays. The step must live as long as the record's TTL says,
// as it does when the driver sees its run apply. Before, it kept the
// driver's 5 s: inside the window (the record's), the same body sent after
// those 5 s ran the payer's step anew, charging it a second time, and was
// taken for the transfer's own run.
func TestQuickAdversary_ARunWhoseAnswerWasLostGetsTheRecordsTTL(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil)
	tr := payment(hs[0], "4.00", hs[1])
	forgetAllOnCleanup(t, tr.ID, hs...)
	ids, err := eng.TransferStepIDs(tr, 0)
	require.NoError(t, err)
	run := applyOn(hs[0], ids["commit"])
	var armed, lost atomic.Bool
	client := hookedClient(t, loseAnswers{ran: true, match: func(a []any) bool {
		return armed.Load() && run(a) && lost.CompareAndSwap(false, true)
	}})
	short := quickEngineWith(t, client, shortTransferTimeout, 5*time.Second, hs[0], hs[1])
	require.NoError(t, shortTimeout().TransferStep(ctx, tr, "begin", 0))

	armed.Store(true)
	st, err := short.Transfer(ctx, tr)
	require.NoError(t, err)
	short.Flush()
	require.True(t, lost.Load(), "the run's answer was lost")
	require.Equal(t, engine.TransferCommitted, st.Status, "%v", st.Error)
	require.True(t, st.Complete)
	assert.Greater(t, rdb.PTTL(ctx, cluster.Tx(hs[0], ids["commit"])).Val(), time.Hour,
		"the payer's step lives the record's TTL (the default), not the driver's 5 s")
}

// pauseWrites holds the writes of key's master (CLIENT PAUSE WRITE: reads
// go on) until the returned function, or the test's end, lets them go.
func pauseWrites(t *testing.T, key string) (unpause func()) {
	t.Helper()
	ctx := context.Background()
	master, err := rdb.MasterForKey(ctx, key)
	require.NoError(t, err)
	require.NoError(t, master.Do(ctx, "client", "pause", "600000", "write").Err())
	t.Cleanup(func() { _ = master.Do(ctx, "client", "unpause").Err() })
	return func() { require.NoError(t, master.Do(ctx, "client", "unpause").Err()) }
}

// A quick payment whose record's master holds its writes while the payer's
// run applies on its own (the commit point passed, the claim not landed):
// the call answers pending with the id, not UNAVAILABLE, and the payment's
// entry in its payer's slot falls due at once, so that recovery writes the
// record and pays the payee at its next pass once that master is back,
// not a transfer timeout (here a minute) later.
func TestQuickAdversary_RecordsMasterHeldWhileThePayerPays(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil)
	tr := paymentOnThirdMaster(t, hs[0], "4.00", hs[1])
	forgetAllOnCleanup(t, tr.ID, hs...)
	e := quickEngineWith(t, nil, time.Minute, 0, hs[0], hs[1])
	before := totals(t, hs...)
	unpause := pauseWrites(t, cluster.Transfer(tr.ID))

	short, cancel := context.WithTimeout(ctx, time.Second)
	st, err := e.Transfer(short, tr)
	cancel()
	require.NoError(t, err)
	assert.Equal(t, engine.TransferPending, st.Status)
	assert.Equal(t, tr.ID, st.ID)
	assert.Equal(t, "5.00", state(t, hs[0]).Balances["CNY"].Available, "the payer's run applied")
	index := cluster.Transfers(cluster.HolderSlot(hs[0]))
	require.Eventually(t, func() bool {
		for _, z := range rdb.ZRangeWithScores(ctx, index, 0, -1).Val() {
			if m, _ := z.Member.(string); strings.HasPrefix(m, tr.ID+"\n") {
				return int64(z.Score) <= time.Now().UnixMilli()
			}
		}
		return false
	}, 5*time.Second, 10*time.Millisecond, "the payer's entry falls due now")

	unpause()
	r := engine.NewRecovery(quietRecoveryEngine(), &engine.RecoveryOptions{Logger: quiet})
	require.NoError(t, r.RecoverSlots(ctx, slotsOf(tr.ID, hs...)...))
	got, err := eng.GetTransfer(ctx, tr.ID)
	require.NoError(t, err)
	assert.Equal(t, engine.TransferCommitted, got.Status)
	assert.True(t, got.Complete, "one pass of recovery finished it")
	assert.Equal(t, "5.00", state(t, hs[1]).Balances["CNY"].Available, "the payee paid once")
	assert.Equal(t, before, totals(t, hs...), "money is conserved")
	e.Flush()
}

// A payment whose payee's master holds its writes past the call's deadline
// after the payer's run applied: the call answers committed and not
// complete (its commit point passed), not pending; the credit follows
// through recovery once the master is back.
func TestQuickAdversary_PayeesMasterHeldAnswersCommittedNotComplete(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil)
	for _, quick := range []bool{true, false} {
		t.Run(map[bool]string{true: "quick", false: "payee read first"}[quick], func(t *testing.T) {
			tr := paymentOnThirdMaster(t, hs[0], "1.00", hs[1])
			forgetAllOnCleanup(t, tr.ID, hs...)
			e := engine.New(rdb, &engine.Options{TransferTimeout: shortTransferTimeout, Logger: quiet})
			if quick {
				e = quickEngine(t, nil, hs[0], hs[1])
			}
			payer, payee := cnyOf(t, hs[0]), cnyOf(t, hs[1])
			unpause := pauseWrites(t, cluster.Holder(hs[1]))
			short, cancel := context.WithTimeout(ctx, time.Second)
			st, err := e.Transfer(short, tr)
			cancel()
			require.NoError(t, err)
			assert.Equal(t, engine.TransferCommitted, st.Status, "%+v", st)
			assert.False(t, st.Complete)
			assert.Equal(t, payer-100, cnyOf(t, hs[0]), "the payer's run applied")
			unpause()
			final := recoverEntries(t, tr.ID, hs[0])
			assert.Equal(t, engine.TransferCommitted, final.Status)
			assert.Equal(t, payee+100, cnyOf(t, hs[1]), "the payee paid once")
			e.Flush()
		})
	}
}
