package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// TestRelay_StopsPromptlyWhenIdle: an idle relay, its change-notice watches
// blocked waiting for a notice, returns from Run soon after its context
// ends, not after the watch's ping interval (10 s). The bound is loose for
// a busy machine; the defect it guards took 6.6-10 s.
func TestRelay_StopsPromptlyWhenIdle(t *testing.T) {
	needRedis(t)
	c, e := ownEngine(t)
	rdb := c.Client(nil)
	defer rdb.Close()
	r := engine.NewRelay(rdb, &memSink{events: map[string]int{}}, nil)
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
	case <-time.After(5 * time.Second):
		t.Fatal("Run still running 5 s after its context ended")
	}
}
