package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// The Redis-side rows of docs/bad-input.md: what Redis itself holds is
// hostile (a key of another type) or full (maxmemory). Each runs on a
// standalone server of its own, so that breaking a slot's outbox or filling
// memory disturbs no other test.

// standalone starts a plain server with extra config lines and gives an
// engine on it with its scripts loaded.
func standalone(t *testing.T, extra ...string) (*engine.Engine, *redis.Client) {
	t.Helper()
	srv := clustertest.StartForTest(t, clustertest.Options{Standalone: true, ExtraConfig: extra})
	c := redis.NewClient(&redis.Options{Addr: srv.Nodes[0].Addr, ContextTimeoutEnabled: true,
		ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
	t.Cleanup(func() { _ = c.Close() })
	e := engine.New(c, nil)
	require.NoError(t, e.Load(context.Background()))
	return e, c
}

// holderKeys lists every key an instruction of id on holder may write.
func holderKeys(holder, id string) []string {
	slot := cluster.HolderSlot(holder)
	return []string{cluster.Holder(holder), cluster.Tx(holder, id), cluster.Outbox(slot), cluster.Expiry(slot)}
}

// dumpKeys gives the serialized value (DUMP) of each key, "" for a missing
// one: two equal dumps mean nothing was written.
func dumpKeys(t *testing.T, c *redis.Client, keys []string) map[string]string {
	t.Helper()
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		v, err := c.Dump(context.Background(), k).Result()
		if err == redis.Nil {
			v, err = "", nil
		}
		require.NoError(t, err, k)
		out[k] = v
	}
	return out
}

// richInstruction touches every key of a holder: a balance, points, a coupon,
// a new hold with an expiry (holds, frozen, expiry index), and the outbox and
// idempotency record that every applied instruction writes.
func richInstruction(id, holder string) instructions.Instruction {
	return instructions.New(id, holder).Credit("CNY", "1.00").EarnPoints("1").GrantCoupon(newID("c"), time.Time{}).
		Freeze("CNY", "1.00", newID("o"), time.Minute)
}

// TestApply_KeyOfAnotherType replaces, one at a time, each key the apply
// script reads or writes with a value of another type. The script must fail
// before its first write: the answer is INTERNAL (no retry will change a
// WRONGTYPE reply) and every key is as it was.
//
// The slot's outbox stream and expiry index are written without being read:
// the XADD is the first write, and the expiry index's type is checked (ZCARD)
// before it when the instruction writes there.
func TestApply_KeyOfAnotherType(t *testing.T) {
	needRedis(t)
	e, c := standalone(t)
	ctx := context.Background()

	for _, tt := range []struct {
		name string
		key  func(holder, id string) string
		// put stores a value of the wrong type at key.
		put func(key string) error
	}{
		{"the holder hash is a string", func(h, _ string) string { return cluster.Holder(h) }, set(c)},
		{"the holder hash is a list", func(h, _ string) string { return cluster.Holder(h) }, push(c)},
		{"the idempotency record is a list", func(h, id string) string { return cluster.Tx(h, id) }, push(c)},
		{"the slot's outbox stream is a string", func(h, _ string) string { return cluster.Outbox(cluster.HolderSlot(h)) }, set(c)},
		{"the slot's expiry index is a string", func(h, _ string) string { return cluster.Expiry(cluster.HolderSlot(h)) }, set(c)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, id := newID("h"), newID("i")
			_, err := e.Apply(ctx, instructions.New(newID("open"), h).Open().Credit("CNY", "10.00").EarnPoints("5").
				Freeze("CNY", "2.00", "old", 0).GrantCoupon("c-old", time.Time{}))
			require.NoError(t, err)
			key := tt.key(h, id)
			require.NoError(t, c.Del(ctx, key).Err())
			require.NoError(t, tt.put(key))
			keys := holderKeys(h, id)
			before := dumpKeys(t, c, keys)

			_, err = e.Apply(ctx, richInstruction(id, h))
			require.Error(t, err)
			var ee *engine.Error
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, instructions.CodeInternal, ee.Code, "%v", err)
			assert.Contains(t, err.Error(), "WRONGTYPE")
			assert.Equal(t, before, dumpKeys(t, c, keys), "the failed script wrote nothing")
		})
	}
}

func set(c *redis.Client) func(string) error {
	return func(k string) error { return c.Set(context.Background(), k, "not a hash", 0).Err() }
}

func push(c *redis.Client) func(string) error {
	return func(k string) error { return c.RPush(context.Background(), k, "not a hash").Err() }
}

// TestApply_RedisAtMaxmemory fills a server with noeviction until it refuses
// writes: an instruction is then refused whole before the script runs (the
// #!lua line makes Redis check memory first), answered UNAVAILABLE, and
// nothing changed. Once memory is freed, the same id applies once.
func TestApply_RedisAtMaxmemory(t *testing.T) {
	needRedis(t)
	e, c := standalone(t, "maxmemory 2mb", "maxmemory-policy noeviction")
	ctx := context.Background()
	h := newID("h")
	_, err := e.Apply(ctx, instructions.New(newID("open"), h).Open().Credit("CNY", "10.00").Freeze("CNY", "2.00", "old", 0))
	require.NoError(t, err)

	filler := strings.Repeat("x", 16<<10)
	var full bool
	for i := 0; i < 1000 && !full; i++ {
		err := c.Set(ctx, "filler:"+newID("f"), filler, 0).Err()
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "OOM"), "%v", err)
			full = true
		}
	}
	require.True(t, full, "the server never refused a write")

	id := newID("i")
	keys := holderKeys(h, id)
	before := dumpKeys(t, c, keys)
	in := richInstruction(id, h)
	_, err = e.Apply(ctx, in)
	require.ErrorIs(t, err, engine.ErrUnavailable)
	assert.Contains(t, err.Error(), "OOM")
	assert.Equal(t, before, dumpKeys(t, c, keys), "nothing written at maxmemory")
	out := e.ApplyBatch(ctx, []instructions.Instruction{in})
	assert.ErrorIs(t, out[0].Err, engine.ErrUnavailable, "a pipelined instruction too")
	assert.Equal(t, before, dumpKeys(t, c, keys), "nothing written at maxmemory")

	// Free the memory: the retry with the same id applies, once.
	var cursor uint64
	for {
		ks, next, err := c.Scan(ctx, cursor, "filler:*", 500).Result()
		require.NoError(t, err)
		if len(ks) > 0 {
			require.NoError(t, c.Unlink(ctx, ks...).Err())
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	res, err := e.Apply(ctx, in)
	require.NoError(t, err)
	assert.False(t, res.Replayed)
	assert.Equal(t, int64(2), res.Seq)
	assert.Equal(t, instructions.Balance{Available: "8.00", Frozen: "3.00"}, res.Balances["CNY"])
	n, err := c.XLen(ctx, cluster.Outbox(cluster.HolderSlot(h))).Result()
	require.NoError(t, err)
	assert.Equal(t, int64(2), n, "one event per applied instruction")
}
