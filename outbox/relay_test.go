package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/outbox"
	"github.com/atomledger/atomledger/stored"
)

// memSink keeps what it is given; it fails while down is set.
type memSink struct {
	mu     sync.Mutex
	down   bool
	events map[string]int // holder/seq -> deliveries
	writes int
}

func (s *memSink) Write(_ context.Context, batch []stored.Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return errors.New("sink down")
	}
	s.writes++
	for _, e := range batch {
		// The relay hands events read: an entry it could not read fails the write.
		if e.Err != nil || e.Stream == "" || e.ID == "" {
			return fmt.Errorf("entry %s %s not read: %v", e.Stream, e.ID, e.Err)
		}
		s.events[e.Event.Holder+"/"+strconv.FormatInt(e.Event.Seq, 10)]++
	}
	return nil
}

// has tells whether holder's event seq was delivered.
func (s *memSink) has(holder string, seq int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.events[holder+"/"+strconv.Itoa(seq)] > 0
}

func (s *memSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events)
}

func TestRelay_DeliversThroughSinkFailureAndAfterADeadRelay(t *testing.T) {
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
	r1 := outbox.NewRelay(rdb, dead, &outbox.Options{DiscoverInterval: time.Hour})
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = r1.Run(rctx); close(done) }()
	require.Eventually(t, func() bool { return r1.Stats().Errors > 0 }, 2*time.Minute, 10*time.Millisecond)
	cancel()
	<-done
	assert.Zero(t, dead.count())

	// A second relay delivers what the dead one had read: it is still at
	// the head of its streams.
	sink := &memSink{events: map[string]int{}}
	r2 := outbox.NewRelay(rdb, sink, &outbox.Options{DiscoverInterval: 100 * time.Millisecond, PollInterval: 10 * time.Millisecond})
	rctx, cancel = context.WithCancel(ctx)
	done = make(chan struct{})
	go func() { _ = r2.Run(rctx); close(done) }()
	// Generous deadlines: like the first, this relay's first discovery
	// probes every slot.
	require.Eventually(t, func() bool { return sink.count() == len(ins) }, 2*time.Minute, 20*time.Millisecond,
		"delivered %d of %d; stats %+v", sink.count(), len(ins), r2.Stats())
	require.Eventually(t, func() bool { return r2.Stats().Backlog == 0 }, time.Minute, 50*time.Millisecond)
	cancel()
	<-done
	assert.Equal(t, int64(len(ins)), r2.Stats().Relayed)

	n := 0
	for _, in := range ins {
		msgs, err := rdb.XLen(ctx, cluster.Outbox(cluster.HolderSlot(in.Holder))).Result()
		require.NoError(t, err)
		n += int(msgs)
	}
	assert.Zero(t, n, "every delivered event was deleted from its stream")
}

// TestRelay_DeliversOnlyWhatAReplicaHas stops the only replica of the only
// master (SIGSTOP: it stays connected, so the master still counts it, but
// acknowledges nothing): events applied meanwhile are not delivered, they
// stay in their streams; once the replica runs again they are, each once.
func TestRelay_DeliversOnlyWhatAReplicaHas(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	// A cluster of its own, started here whatever ATOMLEDGER_TEST_REDIS says:
	// its replica is stopped.
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	c, err := clustertest.Start(sctx, clustertest.Options{Masters: 1, Replicas: 1})
	cancel()
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Stop() })
	rdb := c.Client(nil)
	defer rdb.Close()
	e := engine.New(rdb, nil)
	replica := c.Nodes[1].Addr // masters first, then their replicas

	holders := make([]string, 20)
	var ins []instructions.Instruction
	for i := range holders {
		holders[i] = newID("rw")
		ins = append(ins, instructions.New("o", holders[i]).Open().Credit("CNY", "1.00"))
	}
	for _, o := range e.ApplyBatch(ctx, ins) {
		require.NoError(t, o.Err)
	}
	sink := &memSink{events: map[string]int{}}
	relay := outbox.NewRelay(rdb, sink, &outbox.Options{DiscoverInterval: time.Hour,
		PollInterval: 10 * time.Millisecond, MaxIdle: 10 * time.Millisecond, ReplicaTimeout: 300 * time.Millisecond})
	// Run discovers the outboxes and delivers the first events.
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = relay.Run(rctx); close(done) }()
	require.Eventually(t, func() bool { return sink.count() == len(ins) }, 2*time.Minute, 10*time.Millisecond)
	cancel()
	<-done

	pid := clustertest.ProcessID(t, replica)
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	stopped := true
	t.Cleanup(func() {
		if stopped {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	})
	var more []instructions.Instruction
	for _, h := range holders {
		more = append(more, instructions.New("d", h).Debit("CNY", "0.25"), instructions.New("c", h).Credit("CNY", "0.10"))
	}
	for _, o := range e.ApplyBatch(ctx, more) {
		require.NoError(t, o.Err)
	}
	time.Sleep(20 * time.Millisecond) // every stream due again
	n, err := relay.Round(ctx)
	require.Error(t, err, "no replica confirmed the entries read")
	assert.Zero(t, n)
	assert.Equal(t, len(ins), sink.count(), "nothing delivered while the replica lacks the events")
	var left int64
	for slot := range pendingSlots(holders) {
		n, err := rdb.XLen(ctx, cluster.Outbox(slot)).Result()
		require.NoError(t, err)
		left += n
	}
	assert.Equal(t, int64(len(more)), left, "the events read stay in their streams")

	require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
	stopped = false
	outboxes := map[string]bool{}
	for slot := range pendingSlots(holders) {
		outboxes[cluster.Outbox(slot)] = true
	}
	// Until delivered and removed: a removal may wait for a round with
	// nothing to read (TrimInterval).
	deadline := time.Now().Add(2 * time.Minute)
	for (sink.count() < len(ins)+len(more) || streamsLen(t, rdb, outboxes) > 0) && time.Now().Before(deadline) {
		if _, err := relay.Round(ctx); err != nil {
			t.Logf("round: %v", err)
			time.Sleep(50 * time.Millisecond)
		}
	}
	require.Equal(t, len(ins)+len(more), sink.count(), "everything delivered once the replica has it")
	for k, v := range sink.events {
		assert.Equal(t, 1, v, "event %s delivered once", k)
	}
	for slot := range pendingSlots(holders) {
		l, err := rdb.XLen(ctx, cluster.Outbox(slot)).Result()
		require.NoError(t, err)
		assert.Zero(t, l, "outbox of slot %d empty", slot)
	}
}

// pendingSlots is the set of the holders' slots.
func pendingSlots(holders []string) map[int]bool {
	out := map[int]bool{}
	for _, h := range holders {
		out[cluster.HolderSlot(h)] = true
	}
	return out
}

// TestRelay_BusyStreamRemovedOncePerTrimInterval writes to one stream
// between rounds, with a TrimInterval of an hour: the first delivery is
// removed at once, the next ones stay in the stream, passed over by the
// reads (each event reaches the sink once), until a round finds nothing to
// read and removes them all.
func TestRelay_BusyStreamRemovedOncePerTrimInterval(t *testing.T) {
	needRedis(t)
	c, e := ownEngine(t)
	ctx := context.Background()
	rdb := c.Client(nil)
	defer rdb.Close()
	h := newID("bt")
	outboxes := map[string]bool{cluster.Outbox(cluster.HolderSlot(h)): true}
	sink := &memSink{events: map[string]int{}}
	relay := outbox.NewRelay(rdb, sink, &outbox.Options{PollInterval: time.Nanosecond, MaxIdle: time.Nanosecond,
		TrimInterval: time.Hour})
	for i := range 6 {
		in := instructions.New(fmt.Sprintf("c-%d", i), h).Credit("CNY", "1.00")
		if i == 0 {
			in = instructions.New("o", h).Open().Credit("CNY", "1.00")
		}
		_, err := e.Apply(ctx, in)
		require.NoError(t, err)
		if i == 0 {
			require.NoError(t, relay.Discover(ctx)) // the stream exists now
		}
		n, err := relay.Round(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n, "round %d delivers the event written before it, and only it", i)
		assert.Equal(t, int64(i), streamsLen(t, rdb, outboxes), "round %d: what the sink has since the first removal stays", i)
	}
	assert.Equal(t, int64(1), relay.Stats().Relayed, "counted once removed")
	n, err := relay.Round(ctx)
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Zero(t, streamsLen(t, rdb, outboxes), "a round with nothing to read removes everything delivered")
	assert.Equal(t, int64(6), relay.Stats().Relayed)
	sink.mu.Lock()
	defer sink.mu.Unlock()
	require.Len(t, sink.events, 6)
	for ev, k := range sink.events {
		assert.Equal(t, 1, k, "event %s delivered once", ev)
	}
}
