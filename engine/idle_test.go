package engine_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// An idle engine's background workers read no per-slot index: reading every
// slot's on every pass cost 16,384 reads a pass per worker. Counted from the
// masters' commandstats over passes, never over time: after the reads of
// every slot that a start makes, a window of 20 passes of each worker may
// read at most one index per pass. Then a hold frozen while they idle is
// released all the same: a change notice names its slot.
func TestWorkers_IdleEngineReadsNoIndex(t *testing.T) {
	needRedis(t)
	// The notices are keyspace events where the servers send them, else
	// client tracking's.
	for _, events := range []string{"", "Etz"} {
		t.Run("notify-keyspace-events "+events, func(t *testing.T) { idleEngineReadsNoIndex(t, events) })
	}
}

func idleEngineReadsNoIndex(t *testing.T, events string) {
	c, e := ownEngine(t)
	ctx := context.Background()
	for _, n := range c.Nodes {
		m := redis.NewClient(&redis.Options{Addr: n.Addr})
		require.NoError(t, m.ConfigSet(ctx, "notify-keyspace-events", events).Err())
		require.NoError(t, m.Close())
	}
	sw := engine.NewSweeper(e, &engine.SweeperOptions{Interval: 20 * time.Millisecond})
	rec := engine.NewRecovery(e, &engine.RecoveryOptions{Interval: 20 * time.Millisecond})
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{}, 2)
	go func() { _ = sw.Run(wctx); done <- struct{}{} }()
	go func() { _ = rec.Run(wctx); done <- struct{}{} }()
	defer func() { cancel(); <-done; <-done }()

	var masters []*redis.Client
	for _, addr := range c.MasterAddrs() {
		m := redis.NewClient(&redis.Options{Addr: addr})
		defer m.Close()
		masters = append(masters, m)
	}
	require.Len(t, masters, 2)
	reads := func() int64 {
		var n int64
		for _, m := range masters {
			info, err := m.Info(ctx, "commandstats").Result()
			require.NoError(t, err)
			for line := range strings.Lines(info) {
				if v, ok := strings.CutPrefix(line, "cmdstat_zrangebyscore:calls="); ok {
					k, _ := strconv.ParseInt(v[:strings.IndexByte(v, ',')], 10, 64)
					n += k
				}
			}
		}
		return n
	}
	passes := func() int64 { return min(sw.Stats().Sweeps, rec.Stats().Passes) }
	waitPasses := func(n int64) {
		to := passes() + n
		require.Eventually(t, func() bool { return passes() >= to }, time.Minute, 5*time.Millisecond,
			"sweeper %+v, recovery %+v", sw.Stats(), rec.Stats())
	}

	// The first windows may hold the reads of every slot at the start and
	// once the notices are subscribed; then a window must be quiet.
	var last string
	quiet := false
	for try := 0; try < 8 && !quiet; try++ {
		r0, p0 := reads(), passes()
		waitPasses(20)
		r1, p1 := reads(), passes()
		last = strconv.FormatInt(r1-r0, 10) + " index reads in " + strconv.FormatInt(p1-p0, 10) + " passes of each worker"
		quiet = r1-r0 <= p1-p0
	}
	require.True(t, quiet, "an idle engine reads its indexes at most once a pass; the last window: %s", last)
	t.Log("idle:", last)
	if events != "" {
		// Each worker hears the writes of indexes only: an outbox entry,
		// written by every instruction, would cost a notice to each.
		for _, m := range masters {
			subs, err := m.PubSubNumSub(ctx, "__keyevent@0__:zadd", "__keyevent@0__:xadd").Result()
			require.NoError(t, err)
			assert.Equal(t, map[string]int64{"__keyevent@0__:zadd": 2, "__keyevent@0__:xadd": 0}, subs,
				"the sweeper and recovery subscribe to index writes, not to outbox ones")
		}
	}

	h := newID("idle")
	_, err := e.Apply(ctx, instructions.New("open", h).Open().Credit("CNY", "5.00").Freeze("CNY", "2.00", "o-1", 300*time.Millisecond))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return sw.Stats().Released == 1 }, 2*time.Minute, 10*time.Millisecond,
		"the hold frozen while idle is released; sweeper %+v", sw.Stats())
	st, err := e.State(ctx, h)
	require.NoError(t, err)
	assert.Empty(t, st.Holds)
	assert.Equal(t, instructions.Balance{Available: "5.00", Frozen: "0.00"}, st.Balances["CNY"])
}
