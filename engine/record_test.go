package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/internal/libcall"
	"github.com/atomledger/atomledger/lua"
	"github.com/atomledger/atomledger/stored"
)

// The idempotency record of an applied instruction is 16 characters of the
// fingerprint and a short form of the result: the same bytes Restore writes
// from the event (stored.AppliedRecord), small enough that one remembered 1-op debit
// stays within 160 bytes, and its replay answers what the first call did.
func TestApply_IdempotencyRecordIsCompact(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newID("u")
	exp := time.Now().Add(time.Hour)
	ins := []instructions.Instruction{
		instructions.New(newID("open"), h).Open().Credit("CNY", "1250.00").EarnPoints("4200").GrantCoupon("c-1", exp).GrantCoupon("c-2", exp),
		instructions.New(newID("co"), h).Debit("CNY", "80.00").SpendPoints("2000").RedeemCoupon("c-1").
			Freeze("CNY", "100.00", "ord-1", 15*time.Minute).LockCoupon("c-2", "ord-1"),
		instructions.New("order-55-pay", h).Debit("CNY", "80.00"),
	}
	for _, in := range ins {
		first, err := eng.Apply(ctx, in)
		require.NoError(t, err)
		again, err := eng.Apply(ctx, in)
		require.NoError(t, err)
		assert.True(t, again.Replayed)
		again.Replayed = false
		assert.Equal(t, first, again, "%s: the replay answers what the first call did", in.ID)
	}
	events := readRaw(t, h).Events
	require.Len(t, events, len(ins))
	for _, ev := range events {
		id, fp, st := ev["id"].(string), ev["fp"].(string), ev["state"].(string)
		rec, err := rdb.Get(ctx, cluster.Tx(h, id)).Result()
		require.NoError(t, err)
		assert.Equal(t, stored.AppliedRecord(fp, st), rec, "%s", id)
		assert.NotContains(t, rec, `"`, "the short form, not the result json")
		assert.Equal(t, "2", ev["dv"], "the event names its digest version")
	}
	n, err := rdb.MemoryUsage(ctx, cluster.Tx(h, "order-55-pay"), 0).Result()
	require.NoError(t, err)
	assert.LessOrEqual(t, n, int64(160), "MEMORY USAGE of one remembered 1-op debit")
}

// Arguments that no engine sends are refused before the first write: an
// idempotency TTL under 1 ms, a quote or a control character in an id that
// the event's JSON would carry.
func TestApply_MalformedFunctionArgumentsWriteNothing(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") })
	for _, tt := range []struct {
		name string
		edit func(args []any)
	}{
		{"a TTL of 0", func(a []any) { a[libcall.TTL] = "0" }},
		{"a TTL of 00", func(a []any) { a[libcall.TTL] = "00" }},
		{"a TTL that is not digits", func(a []any) { a[libcall.TTL] = "1e3" }},
		{"a quote in the asset", func(a []any) { a[libcall.Fixed+1] = `CNY"` }},
		{"a newline in the hold", func(a []any) { a[libcall.Fixed+3] = "o\n1" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := newID("bad")
			keys, args, err := eng.Encode(instructions.New(id, h).Freeze("CNY", "1.00", "o1", 0))
			require.NoError(t, err)
			tt.edit(args)
			before := readRaw(t, h)
			v, err := rdb.FCall(ctx, lua.FuncApply, keys, args...).Result()
			require.NoError(t, err)
			reply := v.([]any)
			assert.True(t, strings.HasPrefix(reply[1].(string), "err\nINVALID_INSTRUCTION\n-1\n"), "%q", reply[1])
			assert.Equal(t, before, readRaw(t, h), "nothing written")
			n, err := rdb.Exists(ctx, cluster.Tx(h, id)).Result()
			require.NoError(t, err)
			assert.Zero(t, n, "no idempotency record")
		})
	}
}

// Records written by key format 1 ("<fp>\n<outcome>") stay until their TTL
// runs out after an upgrade: a retry still replays them, and another body is
// still a conflict.
func TestApply_ReplaysRecordsOfKeyFormat1(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") })
	for _, tt := range []struct {
		name, outcome string
		in            instructions.Instruction
		check         func(t *testing.T, res instructions.Result, err error)
	}{
		{"an applied instruction", `ok` + "\n" + `{"s":"7","st":"active","b":{"CNY":["500","0"]},"c":{},"h":{}}`,
			instructions.New(newID("old"), h).Debit("CNY", "1.00"),
			func(t *testing.T, res instructions.Result, err error) {
				require.NoError(t, err)
				assert.True(t, res.Replayed)
				assert.Equal(t, int64(7), res.Seq)
				assert.Equal(t, instructions.Balance{Available: "5.00", Frozen: "0.00"}, res.Balances["CNY"])
			}},
		// HOLD_EXPIRED is 12 characters: its record of key format 2 also has
		// a newline at byte 33.
		{"a rejection", "err\nHOLD_EXPIRED\n0\n", instructions.New(newID("old"), h).Settle("o-1"),
			func(t *testing.T, _ instructions.Result, err error) {
				var e *engine.Error
				require.ErrorAs(t, err, &e)
				assert.Equal(t, instructions.CodeHoldExpired, e.Code)
				assert.True(t, e.Replayed)
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, args, err := eng.Encode(tt.in)
			require.NoError(t, err)
			fp := args[2].(string)
			require.Len(t, fp, 32)
			key := cluster.Tx(h, tt.in.ID)
			require.NoError(t, rdb.Set(ctx, key, fp+"\n"+tt.outcome, time.Minute).Err())
			before := readRaw(t, h)
			res, err := eng.Apply(ctx, tt.in)
			tt.check(t, res, err)
			assert.Equal(t, before, readRaw(t, h), "a replay changes nothing")

			other := tt.in
			other.Memo = "another body"
			_, err = eng.Apply(ctx, other)
			assert.ErrorIs(t, err, engine.ErrIdempotencyConflict)
		})
	}

	// A record of key format 2 with a newline at byte 33 as well: a
	// HOLD_EXPIRED rejection, as the library writes it.
	in := instructions.New(newID("settle"), h).Settle("exp-1")
	_, args, err := eng.Encode(in)
	require.NoError(t, err)
	rec := args[2].(string)[:16] + "err\nHOLD_EXPIRED\n0\n"
	require.Equal(t, byte('\n'), rec[32])
	require.NoError(t, rdb.Set(ctx, cluster.Tx(h, in.ID), rec, time.Minute).Err())
	_, err = eng.Apply(ctx, in)
	var e *engine.Error
	require.ErrorAs(t, err, &e)
	assert.True(t, e.Replayed)
	assert.Equal(t, instructions.CodeHoldExpired, e.Code)
}

// A replayed rejection says why the same id cannot succeed later: its
// answer is kept, and only a new id is a new attempt. The first answer's
// message stands as it was, and the note is not carried into a transfer's
// abort (its step ids are the engine's own).
func TestApply_ReplayedRejectionSaysANewAttemptNeedsANewID(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "12.00") })
	in := instructions.New(newID("pay"), h).Debit("CNY", "80.00")
	first := applyErr(t, in)
	require.False(t, first.Replayed)
	assert.NotContains(t, first.Message, "new id", "a fresh rejection")

	again := applyErr(t, in)
	assert.True(t, again.Replayed)
	assert.Equal(t, first.Code, again.Code)
	assert.Equal(t, first.Message+" (replayed: this id already has this answer; a new attempt needs a new id)", again.Message)
	assert.Contains(t, again.Error(), "a new attempt needs a new id")

	o, err := eng.Outcome(context.Background(), h, in.ID)
	require.NoError(t, err)
	assert.ErrorContains(t, o.Err, "a new attempt needs a new id", "the answer kept under the id, read back")

	fresh := applyErr(t, instructions.New(newID("pay"), h).Debit("CNY", "80.00"))
	assert.Equal(t, first.Message, fresh.Message, "a new id is a new attempt, answered afresh")
}
