package engine_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// Apply calls made at the same time go to Redis in shared pipelines, each
// still atomic and answered on its own.
func TestApply_ConcurrentCallsSharePipelines(t *testing.T) {
	needRedis(t)
	e := engine.New(rdb, nil)
	const workers, each = 64, 20
	hs := make([]string, workers)
	for i := range hs {
		hs[i] = newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "100.00") })
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for k := range each {
				res, err := e.Apply(context.Background(), newIn(hs[w]).Debit("CNY", "1.00"))
				if err == nil && res.Balances["CNY"].Available != instructions.FromUnits(int64(100-k-1)*100, 2) {
					err = assert.AnError
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for _, h := range hs {
		assert.Equal(t, "80.00", state(t, h).Balances["CNY"].Available, "%s: each debit once", h)
	}
	calls, pipelines := e.GroupStats()
	t.Logf("%d calls in %d pipelines", calls, pipelines)
	assert.Equal(t, int64(workers*each), calls)
	assert.Less(t, pipelines, calls, "calls made at once shared pipelines")
}

// While four pipelines are in flight, every call that arrives waits, and
// the senders then take the queue 128 calls at a time: four calls held at a
// paused master, then 300 queued behind them, go in 4 + 3 pipelines (128,
// 128, 44), each call applied once. The figure is the same on any machine:
// nothing moves until the master is unpaused.
func TestApply_QueuedCallsGoInPipelinesOfAtMost128(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	e := engine.New(rdb, nil)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "100.00") })
	seq := state(t, h).Seq
	master, err := rdb.MasterForKey(ctx, cluster.Holder(h))
	require.NoError(t, err)
	require.NoError(t, master.Do(ctx, "client", "pause", "600000", "write").Err())
	t.Cleanup(func() { _ = master.Do(ctx, "client", "unpause").Err() })

	const first, queued = 4, 300
	var wg sync.WaitGroup
	errs := make(chan error, first+queued)
	debit := func() {
		defer wg.Done()
		if _, err := e.Apply(ctx, newIn(h).Debit("CNY", "0.01")); err != nil {
			errs <- err
		}
	}
	for i := range first { // one at a time: each its own pipeline, held
		wg.Add(1)
		go debit()
		require.Eventually(t, func() bool {
			n, err := clustertest.HeldCalls(ctx, master)
			return err == nil && n == i+1
		}, 2*time.Minute, time.Millisecond, "call %d is not held at the master", i)
	}
	for range queued {
		wg.Add(1)
		go debit()
	}
	require.Eventually(t, func() bool { return e.GroupQueued() == queued }, 2*time.Minute, time.Millisecond)
	require.NoError(t, master.Do(ctx, "client", "unpause").Err())
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	calls, pipelines := e.GroupStats()
	assert.Equal(t, int64(first+queued), calls)
	assert.Equal(t, int64(first+3), pipelines, "four of one call, then 128, 128 and 44")
	st := state(t, h)
	assert.Equal(t, seq+first+queued, st.Seq, "each call applied once")
	assert.Equal(t, "96.96", st.Balances["CNY"].Available)
}

// A call whose context ends before it is sent is never sent: it answers
// UNAVAILABLE, and the same id applies once when sent again.
func TestApply_CallCutShortBeforeItIsSent(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") })
	in := newIn(h).Debit("CNY", "1.00")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := eng.Apply(ctx, in)
	assert.ErrorIs(t, err, engine.ErrUnavailable)
	assert.Equal(t, "10.00", state(t, h).Balances["CNY"].Available)

	res, err := eng.Apply(context.Background(), in)
	require.NoError(t, err)
	assert.False(t, res.Replayed)
	assert.Equal(t, "9.00", res.Balances["CNY"].Available)
	for i := range 3 {
		res, err = eng.Apply(context.Background(), in)
		require.NoError(t, err, strconv.Itoa(i))
		assert.True(t, res.Replayed)
	}
}

// One master paused (CLIENT PAUSE WRITE) holds the calls sent to it, as many
// as there are senders: calls to the other masters still answer, and a
// queued call whose context ends before it is sent answers UNAVAILABLE and
// never applies, not even once the master runs again.
func TestApply_OneMasterPausedHoldsOnlyItsOwnCalls(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	e := engine.New(rdb, nil)
	hundred := func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "100.00") }
	hs := holdersOnMasters(t, hundred, hundred)
	paused, healthy := hs[0], hs[1]
	seqP, seqH := state(t, paused).Seq, state(t, healthy).Seq
	master, err := rdb.MasterForKey(ctx, cluster.Holder(paused))
	require.NoError(t, err)
	require.NoError(t, master.Do(ctx, "client", "pause", "600000", "write").Err())
	t.Cleanup(func() { _ = master.Do(ctx, "client", "unpause").Err() })

	// Four calls, one at a time, each held in a pipeline of its own: every
	// sender waits on the paused master. Four more queue behind them.
	const senders, held = 4, 8
	var wg sync.WaitGroup
	errs := make(chan error, held)
	for i := range held {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := e.Apply(ctx, newIn(paused).Debit("CNY", "1.00")); err != nil {
				errs <- err
			}
		}()
		require.Eventually(t, func() bool {
			n, err := clustertest.HeldCalls(ctx, master)
			return err == nil && n == min(i+1, senders) && e.GroupQueued() == max(0, i+1-senders)
		}, 2*time.Minute, time.Millisecond, "call %d", i)
	}

	// A call to a healthy master answers while the other is paused.
	answered, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	res, err := e.Apply(answered, newIn(healthy).Debit("CNY", "1.00"))
	require.NoError(t, err, "a call to a healthy master waits for a paused one")
	assert.Equal(t, seqH+1, res.Seq)

	// A call to the paused master whose context ends while it waits.
	gaveUp := newIn(paused).Debit("CNY", "50.00")
	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err = e.Apply(short, gaveUp)
	cancelShort()
	assert.ErrorIs(t, err, engine.ErrUnavailable)

	require.NoError(t, master.Do(ctx, "client", "unpause").Err())
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	_, err = eng.Apply(ctx, newIn(paused).Debit("CNY", "1.00")) // after everything sent before it
	require.NoError(t, err)
	st := state(t, paused)
	assert.Equal(t, seqP+held+1, st.Seq, "the held calls applied once each, the abandoned one never")
	assert.Equal(t, "91.00", st.Balances["CNY"].Available)
	n, err := rdb.Exists(ctx, cluster.Tx(paused, gaveUp.ID)).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "the abandoned call was never sent")
}
