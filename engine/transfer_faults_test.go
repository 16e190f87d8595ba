package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// TestFaults_TransfersSurviveAMasterKill runs 32 goroutines of random
// transfers (trades out of order holds, payments, three-way payments with
// points) among 20 holders for 20 s, and kills a master in the middle.
// Afterwards, once the recovery worker has run, every transfer is committed
// or aborted and complete, and every asset's sum over the holders is what
// it was.
func TestFaults_TransfersSurviveAMasterKill(t *testing.T) {
	needFaults(t)
	opt := &engine.Options{MinReplicaAcks: 1, ReplicaAckTimeout: 500 * time.Millisecond, TransferTimeout: 2 * time.Second}
	r := newFaultRig(t, opt, 0)
	ctx := context.Background()
	var holders []string
	for i := range 20 {
		h := fmt.Sprintf("xh%02d-%s", i, newID("x"))
		_, err := applyRetrying(ctx, r.eng, instructions.New("open-"+h, h).Open().
			Credit("USDT", "100000").Credit("BTC", "10").Credit("CNY", "10000.00").EarnPoints("100000").
			Freeze("USDT", "50000", "ord", 0).Freeze("BTC", "5", "ord", 0))
		require.NoError(t, err)
		holders = append(holders, h)
	}
	sums := func() map[string]int64 {
		out := map[string]int64{}
		for _, h := range holders {
			st, err := r.eng.State(ctx, h)
			require.NoError(t, err)
			for a, b := range st.Balances {
				scale, _ := r.eng.Assets().Scale(a)
				for _, v := range []string{b.Available, b.Frozen} {
					n, _ := instructions.ToUnits(v, scale)
					out[a] += n
				}
			}
			assert.NotContains(t, strings.Join(keys(st.Holds), " "), instructions.TransferHoldPrefix, "holder %s", h)
			out["points"] += units(t, st.Points.Available) + units(t, st.Points.Frozen)
		}
		return out
	}
	before := sums()

	random := func(rng *rand.Rand, id string) instructions.Transfer {
		perm := rng.Perm(len(holders))
		a, b, c := holders[perm[0]], holders[perm[1]], holders[perm[2]]
		switch rng.IntN(3) {
		case 0:
			usdt, btc := fmt.Sprint(1+rng.IntN(2000)), fmt.Sprintf("0.%04d", 1+rng.IntN(500))
			return trade(id, a, "ord", b, "ord", usdt, btc)
		case 1:
			cny := fmt.Sprintf("%d.%02d", rng.IntN(800), 1+rng.IntN(99))
			return instructions.Transfer{ID: id, Parts: []instructions.Part{
				part(a, ops().Debit("CNY", cny)), part(b, ops().Credit("CNY", cny))}}
		default:
			return instructions.Transfer{ID: id, Parts: []instructions.Part{
				part(a, ops().Debit("USDT", "30").SpendPoints("500")),
				part(b, ops().Credit("USDT", "29").EarnPoints("500")),
				part(c, ops().Credit("USDT", "1"))}}
		}
	}

	var (
		stop                  atomic.Bool
		mu                    sync.Mutex
		ids                   []string
		begun                 = map[string]bool{} // the record was written: some call answered
		retried, decidedLater atomic.Int64
		wg                    sync.WaitGroup
	)
	for w := range 32 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for n := 0; !stop.Load(); n++ {
				tr := random(rng, fmt.Sprintf("t%02d-%d-%s", w, n, newID("x")))
				mu.Lock()
				ids = append(ids, tr.ID)
				mu.Unlock()
				// A client retries with the same id until it learns the
				// outcome, or gives up and leaves the rest to recovery.
				for attempt := 0; attempt < 20 && !stop.Load(); attempt++ {
					tctx, cancel := context.WithTimeout(ctx, 3*time.Second)
					st, err := r.eng.Transfer(tctx, tr)
					cancel()
					if err == nil {
						mu.Lock()
						begun[tr.ID] = true
						mu.Unlock()
						if st.Status != engine.TransferPending {
							break
						}
					}
					if err != nil && !errors.Is(err, engine.ErrUnavailable) {
						t.Errorf("transfer %s: %v", tr.ID, err)
						break
					}
					retried.Add(1)
					time.Sleep(100 * time.Millisecond)
				}
			}
		})
	}

	time.Sleep(7 * time.Second)
	master, err := r.c.MasterOf(ctx, cluster.HolderSlot(holders[0]))
	require.NoError(t, err)
	require.NoError(t, r.c.Kill(master))
	kill := time.Now()
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	newMaster, err := r.c.WaitFailover(wctx, master)
	cancel()
	require.NoError(t, err)
	t.Logf("killed master %s; %s took over after %v", master, newMaster, time.Since(kill).Round(time.Millisecond))
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	require.NoError(t, r.c.Restart(rctx, master)) // a replica again, for MinReplicaAcks
	cancel()
	time.Sleep(time.Until(kill.Add(13 * time.Second)))
	stop.Store(true)
	wg.Wait()

	// The recovery worker takes over whatever the clients left.
	rec := engine.NewRecovery(r.eng, &engine.RecoveryOptions{Interval: 200 * time.Millisecond})
	deadline := time.Now().Add(3 * time.Minute)
	status := map[string]int{}
	for _, id := range ids {
		for {
			st, err := r.eng.GetTransfer(ctx, id)
			if errors.Is(err, engine.ErrTransferNotFound) && !begun[id] {
				status["never begun"]++ // every call was UNAVAILABLE: no record, so no part ran
				break
			}
			if err == nil && st.Complete {
				if st.Status == engine.TransferAborted && st.PartIndex == nil {
					decidedLater.Add(1)
				}
				status[st.Status]++
				break
			}
			require.True(t, time.Now().Before(deadline), "transfer %s not complete: %+v %v", id, st, err)
			_ = rec.Recover(ctx)
			time.Sleep(200 * time.Millisecond)
		}
	}
	t.Logf("%d transfers: %v; %d client retries; %d aborted by recovery for want of a decision; recovery %+v",
		len(ids), status, retried.Load(), decidedLater.Load(), rec.Stats())
	assert.Zero(t, status[engine.TransferPending])
	assert.Positive(t, status[engine.TransferCommitted])
	assert.Equal(t, before, sums(), "every asset's sum over the holders is unchanged")
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func units(t *testing.T, s string) int64 {
	n, ok := instructions.ToUnits(s, 0)
	if !ok && s != "0" {
		t.Errorf("points %q", s)
	}
	return n
}
