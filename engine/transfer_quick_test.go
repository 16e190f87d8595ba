package engine_test

import (
	"context"
	"errors"
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
)

// A payment to a payee seen a moment ago (docs/transfers.md, One payer):
// its claim, the read of its payee and its payer's run in one round trip,
// the credit in the second.

// rounds is a go-redis hook that holds every pipeline for a while and
// numbers it by the round trips before it: one more than the most of those
// that had ended when it began. Held long, the pipelines of one round trip
// all begin before any ends, however the goroutines are scheduled.
type rounds struct {
	on     *atomic.Bool
	mu     *sync.Mutex
	done   *int
	max    *int // the most of the payment's pipelines (a booking's not counted)
	fcalls *int // the runs of the library
}

func newRounds() rounds {
	return rounds{on: new(atomic.Bool), mu: new(sync.Mutex), done: new(int), max: new(int), fcalls: new(int)}
}

func (h rounds) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h rounds) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h rounds) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !h.on.Load() {
			return next(ctx, cmds)
		}
		booking, fcalls := false, 0
		for _, c := range cmds {
			a := c.Args()
			booking = booking || len(a) > 1 && a[0] == "pexpire"
			if a[0] == "fcall" {
				fcalls++
			}
		}
		h.mu.Lock()
		*h.fcalls += fcalls
		round := *h.done + 1
		h.mu.Unlock()
		time.Sleep(300 * time.Millisecond)
		err := next(ctx, cmds)
		h.mu.Lock()
		*h.done = max(*h.done, round)
		if !booking {
			*h.max = max(*h.max, round)
		}
		h.mu.Unlock()
		return err
	}
}

func TestTransfer_APaymentToAPayeeSeenIsTwoRoundTrips(t *testing.T) {
	needRedis(t)
	hs := holdersOnMasters(t, tenCNY, nil)
	client := testCluster.Client(nil)
	defer client.Close()
	h := newRounds()
	client.AddHook(h)
	e := engine.New(client, &engine.Options{Logger: quiet})
	defer e.Flush()
	ctx := context.Background()
	// The first payment reads whether its payee is hot (the engine caches
	// it), then reads the payee before it runs the payer; the second goes
	// in two.
	for i, want := range []int{4, 2} {
		e.Flush() // the booking before, which the hook may still hold
		h.mu.Lock()
		*h.done, *h.max, *h.fcalls = 0, 0, 0
		h.mu.Unlock()
		h.on.Store(true)
		st, err := e.Transfer(ctx, payment(hs[0], "1.00", hs[1]))
		h.on.Store(false)
		require.NoError(t, err)
		require.Equal(t, engine.TransferCommitted, st.Status, "%v", st.Error)
		assert.True(t, st.Complete)
		h.mu.Lock()
		assert.Equal(t, want, *h.max, "payment %d: round trips", i)
		assert.Equal(t, 2, *h.fcalls, "payment %d: runs of the library", i)
		h.mu.Unlock()
	}
	e.Flush()
	assert.Equal(t, "8.00", state(t, hs[0]).Balances["CNY"].Available)
	assert.Equal(t, "2.00", state(t, hs[1]).Balances["CNY"].Available)
}

// failClaims is a go-redis hook under which the claim of a transfer's
// record never reaches Redis, as if its driver stopped before it went.
type failClaims struct{ on *atomic.Bool }

func (h failClaims) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h failClaims) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h failClaims) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !h.on.Load() {
			return next(ctx, cmds)
		}
		// The claim shares its pipeline with other commands, which go.
		var rest []redis.Cmder
		for _, c := range cmds {
			if a := c.Args(); len(a) > 1 && (a[0] == "hsetnx" || a[0] == "hmget") && strings.HasPrefix(a[1].(string), "{x:") {
				c.SetErr(errors.New("connection lost"))
				continue
			}
			rest = append(rest, c)
		}
		if len(rest) == 0 {
			return errors.New("connection lost")
		}
		return next(ctx, rest)
	}
}

// The payer's run went, its record did not: the call answers pending, and
// the entry the run left in the payer's slot lets recovery write the
// record and finish the payment.
func TestTransfer_APaymentWhoseRecordNeverCameIsFinishedFromItsPayersSlot(t *testing.T) {
	needRedis(t)
	hs := holdersOnMasters(t, tenCNY, nil)
	client := testCluster.Client(nil)
	defer client.Close()
	h := failClaims{on: new(atomic.Bool)}
	client.AddHook(h)
	e := engine.New(client, &engine.Options{TransferTimeout: shortTransferTimeout, Logger: quiet})
	ctx := context.Background()
	_, err := e.Transfer(ctx, payment(hs[0], "1.00", hs[1])) // the payee seen
	require.NoError(t, err)
	e.Flush()

	h.on.Store(true)
	tr := payment(hs[0], "4.00", hs[1])
	st, err := e.Transfer(ctx, tr)
	require.NoError(t, err, "the payer's run applied: the call answers pending, not UNAVAILABLE")
	assert.Equal(t, engine.TransferPending, st.Status)
	assert.Equal(t, "5.00", state(t, hs[0]).Balances["CNY"].Available, "the payer's run applied")
	_, err = eng.GetTransfer(ctx, tr.ID)
	require.ErrorIs(t, err, engine.ErrTransferNotFound, "no record")
	index := cluster.Transfers(cluster.HolderSlot(hs[0]))
	entries := func() (n int) {
		for _, m := range rdb.ZRange(ctx, index, 0, -1).Val() {
			if strings.HasPrefix(m, tr.ID+"\n{") {
				n++
			}
		}
		return n
	}
	require.Equal(t, 1, entries(), "the payment's entry, with its body, in the payer's slot")

	r := engine.NewRecovery(shortTimeout(), &engine.RecoveryOptions{Logger: quiet})
	deadline := time.Now().Add(2 * time.Minute) // only a failing run reaches it
	for {
		require.NoError(t, r.Recover(ctx))
		st, err := eng.GetTransfer(ctx, tr.ID)
		if err == nil && st.Complete {
			assert.Equal(t, engine.TransferCommitted, st.Status)
			break
		}
		require.True(t, time.Now().Before(deadline), "transfer %s not complete: %v %v", tr.ID, st, err)
		time.Sleep(100 * time.Millisecond)
	}
	assert.Equal(t, "5.00", state(t, hs[0]).Balances["CNY"].Available, "charged once")
	assert.Equal(t, "5.00", state(t, hs[1]).Balances["CNY"].Available, "paid once")
	require.NoError(t, r.Recover(ctx))
	assert.Zero(t, entries(), "the entry gone")

	h.on.Store(false)
	again, err := e.Transfer(ctx, tr)
	require.NoError(t, err)
	assert.True(t, again.Replayed)
	assert.True(t, again.Complete)
	assert.Equal(t, "5.00", state(t, hs[1]).Balances["CNY"].Available, "the retry pays nothing again")
}

// A quick payment's driver that stops after its first round trip (its
// credit held here, as a process stopped) leaves the payer charged and the
// record preparing: recovery, from the record's index and from the entry in
// the payer's slot both, finishes it once; the credit held, sent at last,
// replays.
func TestTransfer_AQuickPaymentsDriverStoppedAfterItsFirstRoundTripIsFinished(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, tenCNY, nil)
	client := testCluster.Client(nil)
	defer client.Close()
	h := newStall(func(a []any) bool { return len(a) > 3 && a[0] == "fcall" && a[3] == cluster.Holder(hs[1]) }, false)
	on := new(atomic.Bool)
	client.AddHook(onlyWhen{on: on, hook: h})
	e := engine.New(client, &engine.Options{TransferTimeout: shortTransferTimeout, Logger: quiet})
	_, err := e.Transfer(ctx, payment(hs[0], "1.00", hs[1])) // the payee seen
	require.NoError(t, err)
	e.Flush()

	on.Store(true)
	tr := payment(hs[0], "4.00", hs[1])
	cctx, cancel := context.WithCancel(ctx)
	answered := make(chan engine.TransferState, 1)
	go func() {
		st, _ := e.Transfer(cctx, tr)
		answered <- st
	}()
	<-h.hit
	cancel()
	st := <-answered
	assert.NotEqual(t, engine.TransferAborted, st.Status)
	assert.False(t, st.Complete)
	assert.Equal(t, "5.00", state(t, hs[0]).Balances["CNY"].Available, "the payer's run applied")

	st = recoverWith(t, shortTimeout(), tr.ID)
	assert.Equal(t, engine.TransferCommitted, st.Status)
	close(h.release)
	e.Flush()
	assert.Equal(t, "5.00", state(t, hs[0]).Balances["CNY"].Available, "charged once")
	assert.Equal(t, "5.00", state(t, hs[1]).Balances["CNY"].Available, "paid once")
	r := engine.NewRecovery(shortTimeout(), &engine.RecoveryOptions{Logger: quiet})
	require.Eventually(t, func() bool {
		require.NoError(t, r.Recover(ctx))
		for _, m := range rdb.ZRange(ctx, cluster.Transfers(cluster.HolderSlot(hs[0])), 0, -1).Val() {
			if strings.HasPrefix(m, tr.ID+"\n") {
				return false
			}
		}
		return true
	}, 2*time.Minute, 100*time.Millisecond, "the entry in the payer's slot goes")
	assert.Equal(t, "5.00", state(t, hs[1]).Balances["CNY"].Available, "paid once")
}

// onlyWhen applies hook while on is set.
type onlyWhen struct {
	on   *atomic.Bool
	hook redis.Hook
}

func (h onlyWhen) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h onlyWhen) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}
func (h onlyWhen) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	hooked := h.hook.ProcessPipelineHook(next)
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.on.Load() {
			return hooked(ctx, cmds)
		}
		return next(ctx, cmds)
	}
}
