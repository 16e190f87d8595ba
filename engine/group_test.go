package engine_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// Apply calls made at the same time go to Redis in shared pipelines, each
// still atomic and answered on its own.
func TestApply_ConcurrentCallsSharePipelines(t *testing.T) {
	needRedis(t)
	e := engine.New(rdb, nil)
	const workers, each = 64, 20
	hs := make([]string, workers)
	for i := range hs {
		hs[i] = newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "100.00") })
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for k := range each {
				res, err := e.Apply(context.Background(), newIn(hs[w]).Debit("CNY", "1.00"))
				if err == nil && res.Balances["CNY"].Available != instructions.FromUnits(int64(100-k-1)*100, 2) {
					err = assert.AnError
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for _, h := range hs {
		assert.Equal(t, "80.00", state(t, h).Balances["CNY"].Available, "%s: each debit once", h)
	}
	calls, pipelines := e.GroupStats()
	t.Logf("%d calls in %d pipelines", calls, pipelines)
	assert.Equal(t, int64(workers*each), calls)
	assert.Less(t, pipelines, calls, "calls made at once shared pipelines")
}

// A call whose context ends before it is sent is never sent: it answers
// UNAVAILABLE, and the same id applies once when sent again.
func TestApply_CallCutShortBeforeItIsSent(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") })
	in := newIn(h).Debit("CNY", "1.00")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := eng.Apply(ctx, in)
	assert.ErrorIs(t, err, engine.ErrUnavailable)
	assert.Equal(t, "10.00", state(t, h).Balances["CNY"].Available)

	res, err := eng.Apply(context.Background(), in)
	require.NoError(t, err)
	assert.False(t, res.Replayed)
	assert.Equal(t, "9.00", res.Balances["CNY"].Available)
	for i := range 3 {
		res, err = eng.Apply(context.Background(), in)
		require.NoError(t, err, strconv.Itoa(i))
		assert.True(t, res.Replayed)
	}
}
