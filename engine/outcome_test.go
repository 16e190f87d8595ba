package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

func TestOutcome_ReadsTheRecordedAnswer(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "100.00") })

	pay := instructions.New(newID("pay"), h).Debit("CNY", "30.50")
	res, err := eng.Apply(ctx, pay)
	require.NoError(t, err)
	t.Run("an applied instruction gives its result, replayed", func(t *testing.T) {
		o, err := eng.Outcome(ctx, h, pay.ID)
		require.NoError(t, err)
		require.NoError(t, o.Err)
		want := res
		want.Replayed = true
		assert.Equal(t, want, o.Result)
		assert.Equal(t, "69.50", o.Result.Balances["CNY"].Available)
	})

	over := instructions.New(newID("over"), h).Credit("CNY", "1.00").Debit("CNY", "500.00")
	first := applyErr(t, over)
	t.Run("a rejected one gives its rejection: code and op index", func(t *testing.T) {
		o, err := eng.Outcome(ctx, h, over.ID)
		require.NoError(t, err)
		var e *engine.Error
		require.ErrorAs(t, o.Err, &e)
		assert.ErrorIs(t, o.Err, engine.ErrInsufficientFunds)
		assert.Equal(t, first.OpIndex, e.OpIndex)
		assert.Equal(t, 1, e.OpIndex)
		assert.True(t, e.Replayed)
		assert.Contains(t, e.Message, "op 1 was refused with INSUFFICIENT_FUNDS")
		assert.Equal(t, over.ID, e.ID)
	})
	t.Run("nothing changes", func(t *testing.T) {
		before := readRaw(t, h)
		_, err := eng.Outcome(ctx, h, pay.ID)
		require.NoError(t, err)
		assert.Equal(t, before, readRaw(t, h))
	})
	t.Run("an id never seen, or forgotten, is INSTRUCTION_NOT_FOUND", func(t *testing.T) {
		_, err := eng.Outcome(ctx, h, "never-sent")
		assert.ErrorIs(t, err, engine.ErrInstructionNotFound)
		_, err = eng.Outcome(ctx, newID("nobody"), pay.ID)
		assert.ErrorIs(t, err, engine.ErrInstructionNotFound)
		require.NoError(t, rdb.Del(ctx, cluster.Tx(h, pay.ID)).Err())
		_, err = eng.Outcome(ctx, h, pay.ID)
		assert.ErrorIs(t, err, engine.ErrInstructionNotFound)
	})
	t.Run("bad ids are INVALID_ID", func(t *testing.T) {
		for _, c := range [][2]string{{"{h}", "x"}, {h, "a b"}, {h, ".."}, {"", "x"}, {h, ""}} {
			_, err := eng.Outcome(ctx, c[0], c[1])
			assert.ErrorIs(t, err, engine.ErrInvalidID, "%q", c)
		}
	})
	t.Run("a record it cannot read is INTERNAL", func(t *testing.T) {
		require.NoError(t, rdb.Set(ctx, cluster.Tx(h, "garbled"), "no newline here", 0).Err())
		t.Cleanup(func() { rdb.Del(context.Background(), cluster.Tx(h, "garbled")) })
		_, err := eng.Outcome(ctx, h, "garbled")
		assert.ErrorIs(t, err, engine.ErrInternal)
	})
}
