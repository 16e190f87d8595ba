package engine_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

func redisZ(score float64, member string) redis.Z { return redis.Z{Score: score, Member: member} }

// memSink keeps what it is given; it fails while down is set.
type memSink struct {
	mu     sync.Mutex
	down   bool
	events map[string]int // holder/seq -> deliveries
	writes int
}

func (s *memSink) Write(_ context.Context, batch []map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return errors.New("sink down")
	}
	s.writes++
	for _, f := range batch {
		s.events[f["holder"]+"/"+f["seq"]]++
	}
	return nil
}

func (s *memSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events)
}

func TestRelay_DeliversThroughSinkFailureAndClaimsFromDeadConsumer(t *testing.T) {
	needRedis(t)
	c, e := ownEngine(t)
	ctx := context.Background()
	rdb := c.Client(nil)
	defer rdb.Close()
	var ins []instructions.Instruction
	for i := range 200 {
		h := newID("rl")
		ins = append(ins, instructions.New("o", h).Open().Credit("CNY", "1.00"))
		if i%2 == 0 {
			ins = append(ins, instructions.New("d", h).Debit("CNY", "0.50"))
		}
	}
	for _, o := range e.ApplyBatch(ctx, ins) {
		require.NoError(t, o.Err)
	}

	// A relay that reads, then dies before acknowledging (its sink fails).
	// It runs until it has failed once rather than for a fixed time: its
	// first discovery probes all 16384 slots, slow on a loaded machine.
	dead := &memSink{events: map[string]int{}, down: true}
	r1 := engine.NewRelay(rdb, dead, &engine.RelayOptions{Consumer: "dead", DiscoverInterval: time.Hour})
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = r1.Run(rctx); close(done) }()
	require.Eventually(t, func() bool { return r1.Stats().Errors > 0 }, 20*time.Second, 10*time.Millisecond)
	cancel()
	<-done
	assert.Zero(t, dead.count())

	// A second relay claims the dead one's entries once idle long enough.
	sink := &memSink{events: map[string]int{}}
	r2 := engine.NewRelay(rdb, sink, &engine.RelayOptions{Consumer: "alive", ClaimIdle: 300 * time.Millisecond,
		DiscoverInterval: 100 * time.Millisecond, PollInterval: 10 * time.Millisecond})
	rctx, cancel = context.WithCancel(ctx)
	done = make(chan struct{})
	go func() { _ = r2.Run(rctx); close(done) }()
	require.Eventually(t, func() bool { return sink.count() == len(ins) }, 10*time.Second, 20*time.Millisecond,
		"delivered %d of %d; stats %+v", sink.count(), len(ins), r2.Stats())
	require.Eventually(t, func() bool { return r2.Stats().Backlog == 0 }, 5*time.Second, 50*time.Millisecond)
	cancel()
	<-done
	assert.Positive(t, r2.Stats().Claimed, "entries of the dead consumer were claimed")
	assert.Equal(t, int64(len(ins)), r2.Stats().Relayed)

	n := 0
	for _, in := range ins {
		msgs, err := rdb.XLen(ctx, cluster.Outbox(cluster.HolderSlot(in.Holder))).Result()
		require.NoError(t, err)
		n += int(msgs)
	}
	assert.Zero(t, n, "every delivered event was deleted from its stream")
}
