package engine_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/lua"
	"github.com/atomledger/atomledger/stored"
)

// DESIGN.md, rule 1: the transfer function checks every argument before its
// first write. A decision carrying finish's arguments, one of them bad, is
// refused with the record and the index as they were; a good one decides
// and finishes in one run, and leaves the index.
func TestTransferFunction_DecideAndFinishChecksBeforeItWrites(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	require.NoError(t, eng.Load(ctx))
	id := newID("tf")
	keys := []string{cluster.Transfer(id), cluster.Transfers(cluster.TransferSlot(id))}
	fcall := func(args ...any) ([]any, error) {
		return rdb.FCall(ctx, lua.FuncTransfer, keys, args...).Slice()
	}
	_, err := fcall("begin", id, "fp", "{}", "30000", "a,b")
	require.NoError(t, err)
	record := func() map[string]string {
		m, err := rdb.HGetAll(ctx, keys[0]).Result()
		require.NoError(t, err)
		return m
	}
	score := func() float64 {
		s, err := rdb.ZScore(ctx, keys[1], id).Result()
		require.NoError(t, err)
		return s
	}
	before, due := record(), score()

	for _, bad := range [][]any{
		{"86400000", "2", "2"},  // part 2 of 2
		{"86400000", "2", "-1"}, // not an index
		{"soon", "2", "0"},      // not a ttl
	} {
		_, err := fcall(append([]any{"decide", id, "committed", "", "30000"}, bad...)...)
		require.Error(t, err, "%v", bad)
		assert.Equal(t, before, record(), "%v: the record as it was", bad)
		assert.Equal(t, due, score(), "%v: the index as it was", bad)
	}

	v, err := fcall("decide", id, "committed", "", "30000", "86400000", "2", "0", "1")
	require.NoError(t, err)
	assert.Equal(t, "committed", v[1])
	assert.Equal(t, "1", v[3], "done")
	assert.Equal(t, "11", v[7], "both parts finished")
	after := record()
	assert.Equal(t, "committed", after["status"])
	assert.Equal(t, "1", after["done"])
	_, err = rdb.ZScore(ctx, keys[1], id).Result()
	assert.Error(t, err, "done: out of the index")
	ttl, err := rdb.PTTL(ctx, keys[0]).Result()
	require.NoError(t, err)
	assert.Positive(t, ttl.Milliseconds(), "done: the record expires")
}

// Begin keeps the beginner's idempotency TTL for every driver (ttl_ms) and
// answers it; a TTL that is not a whole number of ms, 1 or more, is refused
// before anything is written.
func TestTransferFunction_BeginKeepsTheTTLAndChecksItFirst(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	require.NoError(t, eng.Load(ctx))
	id := newID("tf")
	keys := []string{cluster.Transfer(id), cluster.Transfers(cluster.TransferSlot(id))}
	fcall := func(args ...any) ([]any, error) {
		return rdb.FCall(ctx, lua.FuncTransfer, keys, append([]any{"begin", id, "fp", "{}", "30000", "a,b"}, args...)...).Slice()
	}
	for _, bad := range []string{"0", "-1", "1h", "1e3"} {
		_, err := fcall("", "", bad)
		require.Error(t, err, bad)
		n, err := rdb.Exists(ctx, keys[0]).Result()
		require.NoError(t, err)
		assert.Zero(t, n, "%s: no record", bad)
		_, err = rdb.ZScore(ctx, keys[1], id).Result()
		assert.ErrorIs(t, err, redis.Nil, "%s: not indexed", bad)
	}
	v, err := fcall("", "", "1000")
	require.NoError(t, err)
	require.Len(t, v, 11)
	assert.Equal(t, "1000", v[10], "the reply tells the TTL")
	again, err := fcall("", "", "86400000") // another driver's begin finds it
	require.NoError(t, err)
	assert.Equal(t, "found", again[0])
	assert.Equal(t, "1000", again[10], "the beginner's TTL stands")
}

// A decision with finish's arguments from a driver whose view is stale: a
// record another driver decided otherwise keeps its decision and finishes
// nothing; one decided the same way adds the parts given to those it has,
// never takes any away; a done record changes in nothing, its expiry
// neither.
func TestTransferAdversary_DecisionWithAStaleViewOfTheParts(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	require.NoError(t, eng.Load(ctx))
	var key string
	begin := func() (func(args ...any) []any, func() map[string]string) {
		id := newID("tf")
		keys := []string{cluster.Transfer(id), cluster.Transfers(cluster.TransferSlot(id))}
		key = keys[0]
		fcall := func(args ...any) []any {
			v, err := rdb.FCall(ctx, lua.FuncTransfer, keys, append([]any{args[0], id}, args[1:]...)...).Slice()
			require.NoError(t, err)
			return v
		}
		fcall("begin", "fp", "{}", "30000", "a,b,c", "0", "86400000")
		return fcall, func() map[string]string {
			m, err := rdb.HGetAll(ctx, keys[0]).Result()
			require.NoError(t, err)
			return m
		}
	}

	t.Run("decided otherwise first", func(t *testing.T) {
		fcall, record := begin()
		fcall("decide", "aborted", "late", "30000", "86400000", "3", "0", "1", "2")
		v := fcall("decide", "committed", "", "30000", "86400000", "3", "0", "1")
		assert.Equal(t, "aborted", v[1], "the first decision stands")
		assert.Equal(t, "late", v[2])
		assert.Equal(t, "111", v[7])
		assert.Equal(t, "aborted", record()["status"])
	})
	t.Run("decided the same way with other parts", func(t *testing.T) {
		fcall, record := begin()
		fcall("decide", "committed", "", "30000", "86400000", "3", "0", "2")
		v := fcall("decide", "committed", "", "30000", "86400000", "3", "0")
		assert.Equal(t, "101", v[7], "a part finished stays finished")
		assert.Equal(t, "", v[3], "not done")
		v = fcall("decide", "committed", "", "30000", "86400000", "3", "0", "1")
		assert.Equal(t, "111", v[7])
		assert.Equal(t, "1", v[3], "done")
		assert.Equal(t, "1", record()["done"])
	})
	t.Run("done", func(t *testing.T) {
		fcall, record := begin()
		fcall("decide", "committed", "", "30000", "1000000", "3", "0", "1", "2")
		before := record()
		for _, to := range []string{"aborted", "committed"} {
			v := fcall("decide", to, "late", "30000", "86400000", "3", "0", "1", "2")
			assert.Equal(t, "committed", v[1])
			assert.Equal(t, before, record(), "a done record changes in nothing")
			ttl, err := rdb.PTTL(ctx, key).Result()
			require.NoError(t, err)
			assert.LessOrEqual(t, ttl.Milliseconds(), int64(1000000), "its expiry is not pushed back")
		}
	})
}

// A one-payer transfer's record in its packed form (the engine's claim, one
// field): the library reads it preparing with the claim's fields, finds it
// at begin (another fingerprint: a conflict), and decides and finishes it,
// its own fields read before the claim's from then on. A claim written on a
// record the library began changes nothing the library reads.
func TestTransferFunction_ReadsThePackedClaim(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	require.NoError(t, eng.Load(ctx))
	id := newID("tf")
	keys := []string{cluster.Transfer(id), cluster.Transfers(cluster.TransferSlot(id))}
	fcall := func(args ...any) []string {
		v, err := rdb.FCall(ctx, lua.FuncTransfer, keys, args...).StringSlice()
		require.NoError(t, err)
		return v
	}
	claim := stored.PackClaim("fp1", "a,b", "1000", "31000", "0", "900000", "86400000", `{"id":"`+id+`"}`)
	require.NoError(t, rdb.HSet(ctx, keys[0], stored.XferClaim, claim).Err())
	want := []string{"found", "preparing", "", "", "1000", "31000", "a,b", "", "0", "900000", "86400000"}
	assert.Equal(t, want, fcall("read", id))
	assert.Equal(t, want, fcall("begin", id, "fp1", "{}", "30000", "a,b"))
	assert.Equal(t, "conflict", fcall("begin", id, "fp2", "{}", "30000", "a,b")[0])

	v := fcall("decide", id, "aborted", `{"error":"no"}`, "30000", "86400000", "2", "0", "1")
	assert.Equal(t, []string{"found", "aborted", `{"error":"no"}`, "1", "1000", "31000", "a,b", "11", "0", "900000",
		"86400000"}, v)
	assert.Equal(t, v[1:], fcall("read", id)[1:])
	assert.Equal(t, claim, rdb.HGet(ctx, keys[0], stored.XferClaim).Val(), "the claim keeps the body")

	begun := newID("tf")
	keys = []string{cluster.Transfer(begun), cluster.Transfers(cluster.TransferSlot(begun))}
	first := fcall("begin", begun, "fp1", "{}", "30000", "a,b", "0", "900000", "86400000")
	require.Equal(t, "new", first[0])
	ok, err := rdb.HSetNX(ctx, keys[0], stored.XferClaim, stored.PackClaim("fp2", "c,d", "1", "2", "1", "3", "4", "{}")).Result()
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, append([]string{"found"}, first[1:]...), fcall("read", begun), "the library's fields, not the claim's")
}
