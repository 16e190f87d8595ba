package engine_test

import (
	"context"
	"errors"
	"fmt"
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

// TestApply_SentinelFailover: one master, one replica, three sentinels; the
// engine on a go-redis failover client. Workers credit one holder, retrying
// UNAVAILABLE with the same id, while the master is killed with SIGKILL. The
// engine serves again (how soon is logged, not asserted: the deadlines are
// generous for a loaded machine, only a failing run reaches them);
// afterwards every acknowledged credit, retried once more with its id, is
// either replayed or (lost with the old master: replication is
// asynchronous) applied then, once; the balance is then exactly the
// acknowledged sum and seq counts each credit once.
func TestApply_SentinelFailover(t *testing.T) {
	needRedis(t)
	s := clustertest.StartSentinelForTest(t, clustertest.SentinelOptions{})
	rdb := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName: s.MasterName, SentinelAddrs: s.SentinelAddrs(), ContextTimeoutEnabled: true,
		DialTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second,
	})
	t.Cleanup(func() { _ = rdb.Close() })
	e := engine.New(rdb, nil)
	ctx := context.Background()
	require.NoError(t, e.Load(ctx))
	h := newID("h")
	_, err := e.Apply(ctx, instructions.New("open", h).Open())
	require.NoError(t, err)

	credit := func(id string) instructions.Instruction { return instructions.New(id, h).Credit("CNY", "1.00") }
	// apply retries UNAVAILABLE with the same id until it gets an answer.
	apply := func(in instructions.Instruction, deadline time.Time) (instructions.Result, error) {
		for {
			actx, cancel := context.WithTimeout(ctx, 3*time.Second)
			res, err := e.Apply(actx, in)
			cancel()
			if !errors.Is(err, engine.ErrUnavailable) || time.Now().After(deadline) {
				return res, err
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	const workers = 4
	var (
		mu        sync.Mutex
		acked     []string
		problems  []string
		killedAt  atomic.Int64 // unix ns; 0 before the kill
		firstBack atomic.Int64 // unix ns of the first answer sent after the kill
		stop      = make(chan struct{})
		wg        sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("w%d-%d", w, i)
				sent := time.Now()
				_, err := apply(credit(id), time.Now().Add(2*time.Minute))
				mu.Lock()
				if err != nil {
					problems = append(problems, fmt.Sprintf("%s: %v", id, err))
					mu.Unlock()
					return
				}
				acked = append(acked, id)
				mu.Unlock()
				if k := killedAt.Load(); k != 0 && sent.UnixNano() > k {
					firstBack.CompareAndSwap(0, time.Now().UnixNano())
				}
			}
		})
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	require.Eventually(t, func() bool { return count() >= 50 }, time.Minute, 10*time.Millisecond)

	old, err := s.MasterAddr(ctx)
	require.NoError(t, err)
	killedAt.Store(time.Now().UnixNano())
	require.NoError(t, s.Kill(old))
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	newMaster, err := s.WaitFailover(wctx, old)
	cancel()
	require.NoError(t, err)
	require.Eventually(t, func() bool { return firstBack.Load() != 0 }, 2*time.Minute, 10*time.Millisecond,
		"no instruction sent after the kill was answered")
	served := time.Duration(firstBack.Load() - killedAt.Load())
	before := count()
	require.Eventually(t, func() bool { return count() >= before+50 }, time.Minute, 10*time.Millisecond)
	close(stop)
	wg.Wait()
	require.Empty(t, problems)

	// Retry every acknowledged credit once more with its id.
	var lost int
	for _, id := range acked {
		res, err := apply(credit(id), time.Now().Add(time.Minute))
		require.NoError(t, err, id)
		if !res.Replayed {
			lost++
		}
	}
	st, err := e.State(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("%d.00", len(acked)), st.Balances["CNY"].Available, "every acknowledged credit applied once")
	assert.Equal(t, int64(len(acked)+1), st.Seq, "the open and one seq per credit")
	n, err := rdb.XLen(ctx, cluster.Outbox(cluster.HolderSlot(h))).Result()
	require.NoError(t, err)
	assert.Equal(t, st.Seq, n, "one outbox event per applied instruction")
	t.Logf("master %s killed, %s promoted; served again after %s; %d credits acknowledged, %d of them lost by the failover and applied on retry",
		old, newMaster, served.Round(time.Millisecond), len(acked), lost)
}
