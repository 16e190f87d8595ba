package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// beforeRun is a go-redis hook that calls do once, just before the first
// pipeline holding a command match accepts is sent.
type beforeRun struct {
	match func(args []any) bool
	do    func()
}

func (h *beforeRun) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *beforeRun) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *beforeRun) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if h.do != nil && h.match(c.Args()) {
				h.do()
				h.do = nil
			}
		}
		return next(ctx, cmds)
	}
}

// A sweeper whose release replays (another sweeper released the hold
// between its read of the index and its release) does not count it: the
// released counters of two sweepers add up to the holds released.
func TestSweeper_AReleaseAnotherSweeperMadeIsNotCounted(t *testing.T) {
	needRedis(t)
	c, e := ownEngine(t)
	ctx := context.Background()
	h := newID("swept")
	_, err := e.Apply(ctx, instructions.New("open", h).Open().Credit("CNY", "10.00").Freeze("CNY", "3.00", "o", 200*time.Millisecond))
	require.NoError(t, err)
	st, err := e.State(ctx, h)
	require.NoError(t, err)
	exp := st.Holds["o"].ExpiresMs
	time.Sleep(time.Until(time.UnixMilli(exp + 50)))

	client := c.Client(nil)
	t.Cleanup(func() { _ = client.Close() })
	hook := &beforeRun{match: applyOn(h, engine.SweepID(h, "o", exp)), do: func() {
		_, err := e.ReleaseExpired(ctx, h, "o", exp) // the other sweeper
		assert.NoError(t, err)
	}}
	client.AddHook(hook)
	sw := engine.NewSweeper(engine.New(client, nil), &engine.SweeperOptions{Logger: quiet})
	require.NoError(t, sw.Sweep(ctx))
	require.Nil(t, hook.do, "the other sweeper went first")

	after, err := e.State(ctx, h)
	require.NoError(t, err)
	assert.Empty(t, after.Holds)
	assert.Equal(t, st.Seq+1, after.Seq, "released once")
	assert.Equal(t, engine.SweeperStats{Sweeps: 1}, sw.Stats(), "the release was the other's")
}
