package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// migrateSlot moves slot from the master at src to the master at dst by
// hand, as `redis-cli --cluster reshard` does: IMPORTING on the target,
// MIGRATING on the source, MIGRATE of every key of the slot (the holder's
// keys, its idempotency records, the slot's outbox stream and expiry index),
// then the new owner announced to both masters. It returns the number of
// keys moved.
func migrateSlot(ctx context.Context, t *testing.T, slot int, src, dst *clustertest.Node) int {
	t.Helper()
	moved := clustertest.MoveSlotKeys(ctx, t, slot, src, dst)
	clustertest.AssignSlot(ctx, t, slot, src, dst)
	return moved
}

// TestFaults_ReshardingBusyHolderAppliesWholeOrRetries moves the slot of a
// busy holder to the other master while workers credit and debit it,
// retrying every UNAVAILABLE answer verbatim. Afterwards the holder is
// exactly what the acknowledged instructions make it, with one event each,
// and the engine answers from the new master.
func TestFaults_ReshardingBusyHolderAppliesWholeOrRetries(t *testing.T) {
	needFaults(t)
	ctx := context.Background()
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	c, err := clustertest.Start(sctx, clustertest.Options{Masters: 2})
	cancel()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, c.Stop()) })
	rdb := c.Client(&redis.ClusterOptions{ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second,
		ClusterStateReloadInterval: time.Second})
	t.Cleanup(func() { _ = rdb.Close() })
	r := &faultRig{c: c, rdb: rdb, eng: engine.New(rdb, nil), led: newFaultLedger()}
	require.NoError(t, r.eng.Load(ctx))

	h := newID("rh")
	open := "open-" + h
	r.led.send(open, h, 100000)
	res, err := r.eng.Apply(ctx, instructions.New(open, h).Open().Credit("CNY", "1000.00"))
	require.NoError(t, err)
	r.led.ack(open, res.Seq)
	r.holders = []string{h}

	slot := cluster.HolderSlot(h)
	srcAddr, err := c.MasterOf(ctx, slot)
	require.NoError(t, err)
	var src, dst *clustertest.Node
	for _, n := range c.Nodes[:2] {
		if n.Addr == srcAddr {
			src = n
		} else {
			dst = n
		}
	}
	require.NotNil(t, src, "the holder's master %s is not one of the two masters", srcAddr)
	require.NotNil(t, dst)

	var (
		stop         atomic.Bool
		moving       atomic.Bool
		unavailable  atomic.Int64 // every UNAVAILABLE answer, retried
		duringMove   atomic.Int64 // those between IMPORTING and the last SETSLOT NODE
		afterMove    atomic.Int64 // instructions answered after the move
		moveFinished atomic.Bool
		wg           sync.WaitGroup
	)
	// Generous: only a run in which the engine never answers again reaches it.
	giveUp := time.Now().Add(3 * time.Minute)
	var (
		kindsMu sync.Mutex
		kinds   = map[string]int{} // the Redis error behind an UNAVAILABLE
	)
	for w := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for !stop.Load() {
				in := r.instruction(rng, fmt.Sprintf("w%d", w))
				for {
					actx, cancel := context.WithTimeout(ctx, 6*time.Second)
					res, err := r.eng.Apply(actx, in)
					cancel()
					if r.answer(t, in, res, err) {
						break
					}
					unavailable.Add(1)
					if moving.Load() {
						duringMove.Add(1)
					}
					kind := err.Error()
					for _, k := range []string{"TRYAGAIN", "ASK", "MOVED", "CLUSTERDOWN", "deadline", "timeout"} {
						if strings.Contains(kind, k) {
							kind = k
							break
						}
					}
					kindsMu.Lock()
					kinds[kind]++
					kindsMu.Unlock()
					if time.Now().After(giveUp) {
						t.Errorf("%s: still UNAVAILABLE after retrying until the deadline: %v", in.ID, err)
						return
					}
					time.Sleep(5 * time.Millisecond)
				}
				if moveFinished.Load() {
					afterMove.Add(1)
				}
			}
		})
	}

	time.Sleep(1500 * time.Millisecond)
	moving.Store(true)
	start := time.Now()
	moved := migrateSlot(ctx, t, slot, src, dst)
	took := time.Since(start)
	moving.Store(false)
	moveFinished.Store(true)
	// Load on the new master until it has answered, rather than for a time
	// a loaded machine may spend answering nothing.
	assert.Eventually(t, func() bool { return afterMove.Load() >= 20 }, 2*time.Minute, 10*time.Millisecond,
		"the engine answers once the slot has moved")
	stop.Store(true)
	wg.Wait()

	r.led.mu.Lock()
	acked := len(r.led.acked)
	r.led.mu.Unlock()
	t.Logf("moved slot %d (%d keys) from %s to %s in %v; %d instructions acknowledged, %d answers UNAVAILABLE in all (retried), %d of them during the move; %d answered after it",
		slot, moved, src.Addr, dst.Addr, took.Round(time.Millisecond), acked, unavailable.Load(), duringMove.Load(), afterMove.Load())
	t.Logf("UNAVAILABLE answers by the Redis error behind them: %v", kinds)
	assert.Positive(t, afterMove.Load(), "the engine answers once the slot has moved")

	// The slot lives on the new master only.
	newMaster, err := c.MasterOf(ctx, slot)
	require.NoError(t, err)
	assert.Equal(t, dst.Addr, newMaster)
	sc := redis.NewClient(&redis.Options{Addr: src.Addr, MaxRetries: -1})
	defer sc.Close()
	dc := redis.NewClient(&redis.Options{Addr: dst.Addr, MaxRetries: -1})
	defer dc.Close()
	n, err := sc.ClusterCountKeysInSlot(ctx, slot).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "keys of slot %d left on the old master", slot)

	// Every instruction applied once, seq contiguous, balance the sum of
	// what applied, nothing acknowledged lost.
	assert.Empty(t, r.verify(t), "acknowledged instructions lost by the move")

	// The balance is what the acknowledged instructions imply, seq counts
	// them, and their events are on the new master's stream.
	st, err := r.eng.State(ctx, h)
	require.NoError(t, err)
	r.led.mu.Lock()
	var sum int64
	for id := range r.led.acked {
		sum += r.led.delta[id]
	}
	nAcked := int64(len(r.led.acked))
	ackedIDs := make(map[string]int64, len(r.led.acked))
	for id, seq := range r.led.acked {
		ackedIDs[id] = seq
	}
	r.led.mu.Unlock()
	assert.Equal(t, instructions.FromUnits(sum, 2), st.Balances["CNY"].Available,
		"balance = opening + acknowledged credits - acknowledged debits")
	assert.Equal(t, nAcked, st.Seq, "seq = number of instructions applied")
	for a, b := range st.Balances {
		assert.Equal(t, "0.00", b.Frozen, "asset %s: frozen with no hold ever made", a)
	}
	assert.Empty(t, st.Holds, "holds with no freeze ever made")
	assert.Equal(t, "0", st.Points.Available)
	assert.Equal(t, "0", st.Points.Frozen)

	msgs, err := dc.XRange(ctx, cluster.Outbox(slot), "-", "+").Result()
	require.NoError(t, err, "read the outbox on the new master")
	events := 0
	for _, m := range msgs {
		if m.Values["holder"] != h {
			continue
		}
		events++
		id, _ := m.Values["id"].(string)
		seq, err := strconv.ParseInt(fmt.Sprint(m.Values["seq"]), 10, 64)
		require.NoError(t, err)
		want, ok := ackedIDs[id]
		if assert.True(t, ok, "event of %s, never acknowledged", id) {
			assert.Equal(t, want, seq, "event of %s", id)
		}
	}
	assert.Equal(t, int(nAcked), events, "one event on the new master per applied instruction")

	// The engine still serves the holder, now from the new master.
	in := instructions.New(newID("after"), h).Credit("CNY", "0.01")
	res, err = r.eng.Apply(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, nAcked+1, res.Seq)
	ex, err := dc.Exists(ctx, cluster.Tx(h, in.ID)).Result()
	require.NoError(t, err)
	assert.EqualValues(t, 1, ex, "the idempotency record of a new instruction is on the new master")
}
