package outbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/outbox"
	"github.com/atomledger/atomledger/stored"
)

// TestRelay_StopsPromptlyWhenIdle: an idle relay, its change-notice watches
// blocked waiting for a notice, returns from Run soon after its context
// ends, not after the watch's ping interval. The interval is made an hour
// here, so that the bound can be a generous minute: a relay that waits for
// the ping (the defect took 6.6-10 s with the real 10 s) waits for an hour.
func TestRelay_StopsPromptlyWhenIdle(t *testing.T) {
	needRedis(t)
	c, e := ownEngine(t)
	rdb := c.Client(nil)
	defer rdb.Close()
	r := outbox.NewRelay(rdb, &memSink{events: map[string]int{}}, nil)
	outbox.SetWatchPing(r, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	// Let it discover, subscribe and deliver one event, then go idle.
	_, err := e.Apply(ctx, instructions.New("o", newID("stop")).Open())
	require.NoError(t, err)
	require.Eventually(t, func() bool { return r.Stats().Relayed > 0 }, time.Minute, 50*time.Millisecond)
	time.Sleep(time.Second)
	stopped := time.Now()
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
		t.Logf("Run returned %v after its context ended", time.Since(stopped))
	case <-time.After(time.Minute):
		t.Fatal("Run still running a minute after its context ended")
	}
}

// cancelSink records a batch, then ends the relay's context, as a shutdown
// arriving between the sink's write and the relay's acknowledgement.
type cancelSink struct {
	memSink
	cancel context.CancelFunc
}

func (s *cancelSink) Write(ctx context.Context, batch []stored.Entry) error {
	err := s.memSink.Write(ctx, batch)
	s.cancel()
	return err
}

// TestRelay_StoppedAfterTheSinkWroteStillRemoves: a relay stopped once the
// sink has a batch removes it from its stream before Run returns, so a
// restart does not deliver it again.
func TestRelay_StoppedAfterTheSinkWroteStillRemoves(t *testing.T) {
	needRedis(t)
	c, e := ownEngine(t)
	rdb := c.Client(nil)
	defer rdb.Close()
	holder := newID("stopack")
	_, err := e.Apply(context.Background(), instructions.New("o", holder).Open().Credit("CNY", "1.00"))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	sink := &cancelSink{memSink: memSink{events: map[string]int{}}, cancel: cancel}
	r := outbox.NewRelay(rdb, sink, nil)
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("Run did not return after its context ended")
	}
	require.Equal(t, 1, sink.count())
	stream := cluster.Outbox(cluster.HolderSlot(holder))
	n, err := rdb.XLen(context.Background(), stream).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "the outbox is empty")
}
