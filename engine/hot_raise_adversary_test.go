package engine_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// Raises of a hot holder's lanes, by an adversarial review: a lane lost
// from Redis, and raises while credits, debits and sweeps go on. Each test
// checks money over every lane, raw hashes and the engine's answers.

// TestHotAdversary_ARaiseNeverOpensALostLaneAnew: a receiving lane is lost from
// Redis (its hash gone, as a master that lost its data leaves it). The
// contract: reads of the holder are UNAVAILABLE naming the lane until it
// is rebuilt from the ledger, and the sweep reports it missing.
//
// Sequence: hot holder of 3 lanes; 5.00 credited to lane 2, 2.00 to lane
// 1; lane 2's hash deleted; State is UNAVAILABLE (as documented). Then a
// client raises the lanes to 4: the lanes below lane 0's count are raised,
// never opened, so the raise fails naming lane 2 and changes nothing.
// Before, raiseLanes opened every lane that did not answer HOLDER_EXISTS:
// lane 2 came back empty and active at seq 0, State answered 2.00 with no
// error (the 5.00 silently gone), the sweep stopped reporting the lane
// missing, and lane 2's next events gave the ledger seqs 1, 2, ... again.
func TestHotAdversary_ARaiseNeverOpensALostLaneAnew(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 3)
	_, err := eng.Apply(ctx, instructions.New(idOnLane("a", 3, 2), h).Credit("CNY", "5.00"))
	require.NoError(t, err)
	_, err = eng.Apply(ctx, instructions.New(idOnLane("b", 3, 1), h).Credit("CNY", "2.00"))
	require.NoError(t, err)
	lost := instructions.LaneHolder(h, 2)
	seqBefore := laneHashes(t, h, 3)[2][stored.FieldSeq]
	require.NoError(t, rdb.Del(ctx, cluster.Holder(lost)).Err())
	_, err = eng.State(ctx, h)
	require.ErrorIs(t, err, instructions.CodeUnavailable, "the lost lane makes the read UNAVAILABLE (documented)")

	_, raiseErr := eng.Apply(ctx, instructions.New("raise", h).SetLanes(4))
	t.Logf("set_lanes 4 with lane 2 missing: err=%v", raiseErr)

	m := laneHashes(t, h, 4)[2]
	t.Logf("lane 2 after the raise: %v (its seq before the loss was %s)", m, seqBefore)
	assert.Empty(t, m[stored.FieldStatus], "a raise must not re-create a lost lane empty: its money and history are in the ledger only")
	seqs := map[string]int{}
	for _, ev := range readRaw(t, lost).Events {
		seqs[ev["seq"].(string)]++
	}
	t.Logf("lane 2's events in its slot's outbox, by seq: %v", seqs)
	assert.LessOrEqual(t, seqs["1"], 1, "lane 2's seq 1 written twice: the ledger gets two histories for one lane")
	st, err := eng.State(ctx, h)
	if err == nil {
		t.Logf("State answers CNY %s with no error (lane 2 held 5.00)", st.Balances["CNY"].Available)
	}
	require.ErrorIs(t, err, instructions.CodeUnavailable, "the holder's read stays UNAVAILABLE until lane 2 is rebuilt")
	got, err := eng.SweepHot(ctx, h)
	require.NoError(t, err)
	assert.Contains(t, got.Missing, lost, "the sweep still names the lost lane")
}

// TestHotAdversary_RaisesSweepsCreditsDebitsAllAtOnce: credits (each sent twice,
// the second time from an engine that never saw the holder), debits on
// lane 0, two sweepers and a raiser, all at once. Each credit lands once on
// one lane, the holder ends with credits minus debits, every lane's seq
// equals its events, and every id sent again after it all replays.
func TestHotAdversary_RaisesSweepsCreditsDebitsAllAtOnce(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 2)
	const final = 12
	stale := engine.New(rdb, nil)
	_, err := stale.Apply(ctx, instructions.New("warm", h).Credit("CNY", "1.00"))
	require.NoError(t, err)
	var credited, debited atomic.Int64
	credited.Add(100)
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	ids := make([][]string, 3)
	for w := range 3 {
		wg.Go(func() {
			for i := range 25 {
				id := "c" + strconv.Itoa(w) + "-" + strconv.Itoa(i)
				in := instructions.New(id, h).Credit("CNY", "1.00")
				var e1 *engine.Engine
				switch w {
				case 0:
					e1 = eng
				case 1:
					e1 = stale
				default:
					e1 = engine.New(rdb, nil)
				}
				r1, err := e1.Apply(ctx, in)
				if err != nil {
					errs <- err
					return
				}
				r2, err := engine.New(rdb, nil).Apply(ctx, in)
				if err != nil {
					errs <- err
					return
				}
				if r1.Replayed || !r2.Replayed || r1.Lane != r2.Lane {
					errs <- errors.New(id + ": first " + strconv.FormatBool(r1.Replayed) + " lane " + strconv.Itoa(r1.Lane) +
						", again " + strconv.FormatBool(r2.Replayed) + " lane " + strconv.Itoa(r2.Lane))
				}
				credited.Add(100)
				ids[w] = append(ids[w], id)
				if i%3 == 0 {
					_, err := eng.Apply(ctx, instructions.New("d"+strconv.Itoa(w)+"-"+strconv.Itoa(i), h).Debit("CNY", "0.70"))
					if err == nil {
						debited.Add(70)
					} else if !errors.Is(err, instructions.CodeInsufficientFunds) {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Go(func() {
		for _, n := range []int{3, 4, 6, 8, final} {
			_, err := engine.New(rdb, nil).Apply(ctx, instructions.New("raise-"+strconv.Itoa(n), h).SetLanes(n))
			if err != nil {
				errs <- err
				return
			}
			time.Sleep(30 * time.Millisecond)
		}
	})
	var sweepers sync.WaitGroup
	for range 2 {
		sweepers.Go(func() {
			s := engine.New(rdb, &engine.Options{Logger: quiet})
			for {
				select {
				case <-done:
					return
				default:
					_, _ = s.SweepHot(ctx, h)
				}
			}
		})
	}
	wg.Wait()
	close(done)
	sweepers.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	_, err = eng.SweepHot(ctx, h)
	require.NoError(t, err)
	want := credited.Load() - debited.Load()
	assert.Equal(t, want, hotTotal(t, h, final), "credits minus debits over every lane")
	st := state(t, h)
	assert.Equal(t, instructions.FromUnits(want, 2), st.Balances["CNY"].Available, "the engine's answer")
	for w := range ids {
		for _, id := range ids[w] {
			assert.Len(t, lanesHolding(t, h, id, final), 1, "id %s on one lane", id)
			again, err := engine.New(rdb, nil).Apply(ctx, instructions.New(id, h).Credit("CNY", "1.00"))
			require.NoError(t, err)
			assert.True(t, again.Replayed, "id %s replays", id)
		}
	}
	assert.Equal(t, want, hotTotal(t, h, final))
	for i := range final {
		checkInvariants(t, instructions.LaneHolder(h, i))
	}
	t.Logf("credited %d, debited %d", credited.Load(), debited.Load())
}
