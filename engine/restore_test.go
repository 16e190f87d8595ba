package engine_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// recentFromOutbox gives the holder's outbox events as Restore takes them.
func recentFromOutbox(t *testing.T, holder string) []stored.RecentInstruction {
	t.Helper()
	var out []stored.RecentInstruction
	for _, ev := range readRaw(t, holder).Events {
		ts, err := strconv.ParseInt(ev["ts"].(string), 10, 64)
		require.NoError(t, err)
		out = append(out, stored.RecentInstruction{ID: ev["id"].(string), FP: ev["fp"].(string), TsMs: ts, State: ev["state"].(string)})
	}
	return out
}

func TestRestore_WritesIdempotencyRecords(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "100.00") })
	debit := instructions.New("pay-1", h).Debit("CNY", "10.00")
	paid, err := eng.Apply(ctx, debit)
	require.NoError(t, err)
	_, err = eng.Apply(ctx, instructions.New("hold-1", h).Freeze("CNY", "5.00", "order-1", time.Hour))
	require.NoError(t, err)
	_, err = eng.Apply(ctx, instructions.New("pay-2", h).Debit("CNY", "1.00"))
	require.NoError(t, err)
	before := state(t, h)

	snaps, err := eng.Snapshots(ctx, []string{h})
	require.NoError(t, err)
	s := snaps[h]
	require.NotNil(t, s)
	assert.Empty(t, s.Recent, "Snapshots does not read idempotency records")
	s.Recent = recentFromOutbox(t, h)
	require.Len(t, s.Recent, 4)
	// hold-1 was applied longer ago than the TTL: nothing to restore.
	s.Recent[2].TsMs -= eng.IdempotencyTTL().Milliseconds() + 1000

	// Redis loses the holder, but for the record of pay-2, which it keeps
	// with a TTL of its own.
	keep := cluster.Tx(h, "pay-2")
	kept, err := rdb.Get(ctx, keep).Result()
	require.NoError(t, err)
	require.NoError(t, rdb.Set(ctx, keep, kept, 5*time.Minute).Err())
	keys := []string{cluster.Holder(h)}
	for _, r := range s.Recent[:3] {
		keys = append(keys, cluster.Tx(h, r.ID))
	}
	require.NoError(t, rdb.Del(ctx, keys...).Err())

	wrote, err := eng.Restore(ctx, s, false)
	require.NoError(t, err)
	require.True(t, wrote)
	assert.Equal(t, before, state(t, h))

	t.Run("a retried instruction is replayed, not applied again", func(t *testing.T) {
		again, err := eng.Apply(ctx, debit)
		require.NoError(t, err)
		assert.True(t, again.Replayed)
		again.Replayed = false
		assert.Equal(t, paid, again)
		assert.Equal(t, before, state(t, h), "nothing changed")
	})
	t.Run("the same id with another body is a conflict", func(t *testing.T) {
		e := applyErr(t, instructions.New("pay-1", h).Debit("CNY", "20.00"))
		assert.Equal(t, instructions.CodeIdempotencyConflict, e.Code)
	})
	t.Run("the record is kept for what is left of the TTL", func(t *testing.T) {
		ttl, err := rdb.PTTL(ctx, cluster.Tx(h, "pay-1")).Result()
		require.NoError(t, err)
		assert.InDelta(t, float64(eng.IdempotencyTTL()), float64(ttl), float64(time.Minute))
	})
	t.Run("an expired record is not written", func(t *testing.T) {
		n, err := rdb.Exists(ctx, cluster.Tx(h, "hold-1")).Result()
		require.NoError(t, err)
		assert.Zero(t, n)
	})
	t.Run("a record Redis has is left alone", func(t *testing.T) {
		ttl, err := rdb.PTTL(ctx, keep).Result()
		require.NoError(t, err)
		assert.LessOrEqual(t, ttl, 5*time.Minute)
		assert.Equal(t, kept, rdb.Get(ctx, keep).Val())
	})
}

// TestRestore_ComparesFigures changes a balance and a hold's expiry by hand,
// seq and digest untouched: Restore does not call the holder in sync, refuses
// without force (ErrStateDiffers, naming what differs, nothing written), and
// with force writes the snapshot's state, after which it is in sync.
func TestRestore_ComparesFigures(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "100.00").Freeze("CNY", "10.00", "order-1", time.Hour)
	})
	before := state(t, h)
	snaps, err := eng.Snapshots(ctx, []string{h})
	require.NoError(t, err)
	s := snaps[h]

	wrote, err := eng.Restore(ctx, s, false)
	require.NoError(t, err)
	assert.False(t, wrote, "the same state: nothing to write")

	hk := cluster.Holder(h)
	require.NoError(t, rdb.HSet(ctx, hk, stored.PrefixBalance+"CNY", "1").Err())
	require.NoError(t, rdb.HSet(ctx, hk, stored.PrefixHold+"order-1", "1|CNY=1000|").Err())
	tampered := state(t, h)
	require.NotEqual(t, before, tampered)

	wrote, err = eng.Restore(ctx, s, false)
	require.ErrorIs(t, err, engine.ErrStateDiffers)
	assert.False(t, wrote)
	assert.Contains(t, err.Error(), "balance CNY [available frozen]: redis [1 1000], snapshot [9000 1000]")
	assert.Contains(t, err.Error(), "hold order-1")
	assert.Equal(t, tampered, state(t, h), "refused: nothing written")

	wrote, err = eng.Restore(ctx, s, true)
	require.NoError(t, err)
	assert.True(t, wrote)
	assert.Equal(t, before, state(t, h))
	wrote, err = eng.Restore(ctx, s, false)
	require.NoError(t, err)
	assert.False(t, wrote, "in sync again")
}
