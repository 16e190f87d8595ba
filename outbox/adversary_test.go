package outbox_test

import (
	"context"
	"fmt"
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
)

// TestRelayAdversary_SlotStuckMidReshard moves every key of a holder's slot
// to the other master by MIGRATE and leaves the slot there, MIGRATING on its
// owner and IMPORTING on the other, as a reshard that stopped half-way does:
// the owner answers ASK for its outbox. That one stream waits; it is no
// failure of the relay's rounds, which go on delivering the other holders'
// events without backing off. Once the slot is given to the other master,
// the waiting events are delivered there, each holder's every seq, none
// lost.
func TestRelayAdversary_SlotStuckMidReshard(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	c, e := ownEngine(t)
	a, b := c.Nodes[0], c.Nodes[1]
	moving := c.HolderOn(ctx, t, "mv", a.Addr, nil)
	slot := cluster.HolderSlot(moving)
	other := c.HolderOn(ctx, t, "mv", a.Addr, map[int]bool{slot: true})
	for _, h := range []string{moving, other} {
		_, err := e.Apply(ctx, instructions.New("open", h).Open().Credit("CNY", "10.00"))
		require.NoError(t, err)
	}
	// The moving holder's next event waits in its outbox: the relay starts
	// only once the slot's keys are on b.
	_, err := e.Apply(ctx, instructions.New("pay", moving).Debit("CNY", "1.00"))
	require.NoError(t, err)
	require.Positive(t, clustertest.MoveSlotKeys(ctx, t, slot, a, b))

	sink := &memSink{events: map[string]int{}}
	rdb := c.Client(nil)
	t.Cleanup(func() { _ = rdb.Close() })
	relay := outbox.NewRelay(rdb, sink, &outbox.Options{PollInterval: 10 * time.Millisecond, DiscoverInterval: 100 * time.Millisecond})
	runUntilCleanup(t, relay)

	delivered := sink.has
	require.Eventually(t, func() bool { return delivered(other, 1) }, 2*time.Minute, 10*time.Millisecond)
	errs := relay.Stats().Errors
	for i := range 20 {
		_, err := e.Apply(ctx, instructions.New(fmt.Sprintf("c-%d", i), other).Credit("CNY", "1.00"))
		require.NoError(t, err)
		require.Eventually(t, func() bool { return delivered(other, i+2) }, 2*time.Minute, 10*time.Millisecond)
	}
	assert.Equal(t, errs, relay.Stats().Errors, "the stream asked for elsewhere failed no round")
	assert.False(t, delivered(moving, 1), "the moving slot's events wait")

	clustertest.AssignSlot(ctx, t, slot, a, b)
	_, err = e.Apply(ctx, instructions.New("pay-2", moving).Debit("CNY", "1.00"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return delivered(moving, 1) && delivered(moving, 2) && delivered(moving, 3) },
		2*time.Minute, 10*time.Millisecond, "delivered from the slot's new master")
	// A removal may wait for a round with nothing to read (TrimInterval).
	outboxes := map[string]bool{cluster.Outbox(cluster.HolderSlot(moving)): true, cluster.Outbox(cluster.HolderSlot(other)): true}
	require.Eventually(t, func() bool { return streamsLen(t, rdb, outboxes) == 0 }, 2*time.Minute, 10*time.Millisecond,
		"the outboxes emptied")
}

// TestRelayAdversary_OutboxOfAnotherType replaces a slot's outbox, which the
// relay follows, by a string, and writes a string under the name of another
// slot's outbox: its reads, its measure and its group's creation answer
// WRONGTYPE. Those keys alone wait: the other holders' events go on being
// delivered, and once the key is a stream again its events are delivered
// too.
func TestRelayAdversary_OutboxOfAnotherType(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	c, e := ownEngine(t)
	a := c.Nodes[0]
	x := c.HolderOn(ctx, t, "mv", a.Addr, nil)
	y := c.HolderOn(ctx, t, "mv", a.Addr, map[int]bool{cluster.HolderSlot(x): true})
	sink := &memSink{events: map[string]int{}}
	rdb := c.Client(nil)
	t.Cleanup(func() { _ = rdb.Close() })
	relay := outbox.NewRelay(rdb, sink, &outbox.Options{PollInterval: 10 * time.Millisecond, DiscoverInterval: 100 * time.Millisecond})
	runUntilCleanup(t, relay)
	delivered := sink.has
	for _, h := range []string{x, y} {
		_, err := e.Apply(ctx, instructions.New("open", h).Open().Credit("CNY", "10.00"))
		require.NoError(t, err)
		require.Eventually(t, func() bool { return delivered(h, 1) }, 2*time.Minute, 10*time.Millisecond)
	}

	stream := cluster.Outbox(cluster.HolderSlot(x))
	require.NoError(t, rdb.Del(ctx, stream).Err())
	require.NoError(t, rdb.Set(ctx, stream, "not a stream", 0).Err())
	// And a string under the name of an outbox the relay does not follow.
	unfollowed := (cluster.HolderSlot(y) + 1) % cluster.Slots
	require.NoError(t, rdb.Set(ctx, cluster.Outbox(unfollowed), "not a stream either", 0).Err())
	for i := range 10 {
		_, err := e.Apply(ctx, instructions.New(fmt.Sprintf("c-%d", i), y).Credit("CNY", "1.00"))
		require.NoError(t, err)
		require.Eventually(t, func() bool { return delivered(y, i+2) }, 2*time.Minute, 10*time.Millisecond,
			"the other holders' events flow")
	}

	require.NoError(t, rdb.Del(ctx, stream).Err())
	_, err := e.Apply(ctx, instructions.New("after", x).Credit("CNY", "1.00"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return delivered(x, 2) }, 2*time.Minute, 10*time.Millisecond,
		"the outbox, a stream again, is read")
}

// TestRelayAdversary_OneMastersReplicaFrozen freezes the one replica of a
// master (SIGSTOP: still connected, confirming nothing) while another
// master, without replicas, takes instructions too. The frozen master's
// events wait, as they must (the relay delivers only what a replica has);
// the other master's keep being delivered, and once the replica runs again
// the waiting ones follow.
func TestRelayAdversary_OneMastersReplicaFrozen(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	// A cluster of its own whatever ATOMLEDGER_TEST_REDIS says: its replica is stopped.
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	c, err := clustertest.Start(sctx, clustertest.Options{Masters: 1, Replicas: 1})
	cancel()
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Stop() })
	a, replica := c.Nodes[0], c.Nodes[1]
	b, err := c.AddMaster(ctx)
	require.NoError(t, err)
	y := newID("y")
	clustertest.MoveSlotKeys(ctx, t, cluster.HolderSlot(y), a, b)
	clustertest.AssignSlot(ctx, t, cluster.HolderSlot(y), a, b)
	x := c.HolderOn(ctx, t, "mv", a.Addr, nil)
	rdb := c.Client(nil)
	t.Cleanup(func() { _ = rdb.Close() })
	e := engine.New(rdb, nil)

	sink := &memSink{events: map[string]int{}}
	relay := outbox.NewRelay(rdb, sink, &outbox.Options{PollInterval: 10 * time.Millisecond, MaxIdle: 10 * time.Millisecond,
		DiscoverInterval: 100 * time.Millisecond, ReplicaTimeout: 300 * time.Millisecond})
	runUntilCleanup(t, relay)
	delivered := sink.has
	apply := func(in instructions.Instruction) {
		t.Helper()
		require.Eventually(t, func() bool {
			_, err := e.Apply(ctx, in)
			return err == nil
		}, 2*time.Minute, 50*time.Millisecond, "apply %s", in.ID)
	}
	for _, h := range []string{x, y} {
		apply(instructions.New("open", h).Open().Credit("CNY", "10.00"))
		require.Eventually(t, func() bool { return delivered(h, 1) }, 2*time.Minute, 10*time.Millisecond)
	}

	pid := clustertest.ProcessID(t, replica.Addr)
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	frozen := true
	t.Cleanup(func() {
		if frozen {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	})
	apply(instructions.New("pay", x).Debit("CNY", "1.00"))
	for i := range 5 {
		apply(instructions.New(fmt.Sprintf("c-%d", i), y).Credit("CNY", "1.00"))
		require.Eventually(t, func() bool { return delivered(y, i+2) }, 2*time.Minute, 10*time.Millisecond,
			"the other master's events flow")
	}
	assert.False(t, delivered(x, 2), "what no replica confirmed waits")

	require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
	frozen = false
	require.Eventually(t, func() bool { return delivered(x, 2) }, 2*time.Minute, 10*time.Millisecond,
		"delivered once the replica has it")
}

// TestRelayAdversary_WrittenWhileTheSinkWrites has the sink's every write
// apply one more instruction to each holder of the round, so that each
// stream gains entries after the relay read it and before it removes what
// the sink has; and MaxBatch splits a stream's entries over several
// writes. The removal after each write must take only the entries that
// write held: every later one stays in its stream, is delivered by a later
// round, and every event reaches the sink exactly once.
func TestRelayAdversary_WrittenWhileTheSinkWrites(t *testing.T) {
	needRedis(t)
	c, e := ownEngine(t)
	ctx := context.Background()
	rdb := c.Client(nil)
	t.Cleanup(func() { _ = rdb.Close() })

	var holders []string
	var ins []instructions.Instruction
	keys := map[string]bool{}
	for range 4 {
		h := newID("ww")
		holders = append(holders, h)
		keys[cluster.Outbox(cluster.HolderSlot(h))] = true
		ins = append(ins, instructions.New("o", h).Open().Credit("CNY", "10.00"))
		for i := range 4 {
			ins = append(ins, instructions.New(fmt.Sprintf("d-%d", i), h).Debit("CNY", "0.10"))
		}
	}
	for _, o := range e.ApplyBatch(ctx, ins) {
		require.NoError(t, o.Err)
	}
	const more = 3 // writes that add events; then the sink only records
	var mu sync.Mutex
	writes, added := 0, len(ins)
	sink := &denySink{memSink: memSink{events: map[string]int{}}}
	sink.deny = func() {
		mu.Lock()
		defer mu.Unlock()
		if writes++; writes > more {
			return
		}
		for _, h := range holders {
			_, err := e.Apply(ctx, instructions.New(fmt.Sprintf("w-%d", writes), h).Debit("CNY", "0.10"))
			require.NoError(t, err)
			added++
		}
	}
	relay := outbox.NewRelay(rdb, sink, &outbox.Options{MaxBatch: 3, PollInterval: time.Nanosecond, MaxIdle: time.Nanosecond})
	require.NoError(t, relay.Discover(ctx))
	n, err := relay.Round(ctx)
	require.NoError(t, err)
	require.Equal(t, len(ins), n, "the first round delivers what was there when it read")
	assert.Equal(t, int64(more*len(holders)), streamsLen(t, rdb, keys), "what was written during its writes stays in the streams")
	roundsUntil(t, relay, func() bool { return streamsLen(t, rdb, keys) == 0 })

	mu.Lock()
	defer mu.Unlock()
	sink.mu.Lock()
	defer sink.mu.Unlock()
	require.Len(t, sink.events, added, "every event delivered")
	for ev, n := range sink.events {
		assert.Equal(t, 1, n, "event %s delivered once", ev)
	}
	assert.Equal(t, int64(added), relay.Stats().Relayed)
}

// runUntilCleanup runs relay until the test ends.
func runUntilCleanup(t *testing.T, relay *outbox.Relay) {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = relay.Run(ctx); close(done) }()
	t.Cleanup(func() { stop(); <-done })
}
