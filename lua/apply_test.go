package lua_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/lua"
)

const testFP = "0123456789abcdef0123456789abcdef01234567"

// fcallApply sends FCALL apply for holder h and instruction id with the
// given ops (six arguments each), the outbox key as given.
func fcallApply(ctx context.Context, c *redis.Client, outbox, h, id string, ops ...string) (string, error) {
	keys := []string{"{h:" + h + "}", "{h:" + h + "}:tx:" + id, outbox, "{t}:expiry"}
	args := []any{h, id, testFP, "86400000", "external", "", "", ""}
	for _, o := range ops {
		args = append(args, o)
	}
	r, err := c.FCall(ctx, lua.FuncApply, keys, args...).Slice()
	if err != nil {
		return "", err
	}
	return r[1].(string), nil
}

func startLibrary(t *testing.T) *redis.Client {
	t.Helper()
	srv := clustertest.StartForTest(t, clustertest.Options{Standalone: true})
	c := redis.NewClient(&redis.Options{Addr: srv.Nodes[0].Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.FunctionLoadReplace(context.Background(), lua.Library.Source).Err())
	return c
}

// The library keeps its buffers and per-asset tables from call to call (so
// that a call does not make them again): nothing of one call may show in the
// next, not even of a call that failed half-way with a Lua error.
func TestApply_EachCallStartsAfresh(t *testing.T) {
	ctx := context.Background()
	c := startLibrary(t)

	out, err := fcallApply(ctx, c, "{t}:outbox", "a", "open",
		"open", "", "0", "", "", "0",
		"credit", "USD", "100", "", "", "0",
		"credit", "CNY", "100", "", "", "0",
		"earn_points", "", "50", "", "", "0",
		"grant_coupon", "", "0", "", "c1", "0")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(out, "ok\n"), out)

	// Every kind of account touched, then the XADD fails: an outbox of another type.
	require.NoError(t, c.Set(ctx, "{u}:outbox", "not a stream", 0).Err())
	_, err = fcallApply(ctx, c, "{u}:outbox", "a", "pay",
		"debit", "USD", "1", "", "", "0",
		"spend_points", "", "5", "", "", "0",
		"redeem_coupon", "", "0", "", "c1", "0",
		"freeze", "CNY", "7", "o1", "", "60000")
	require.ErrorContains(t, err, "WRONGTYPE")

	// Another holder, an asset the failed call touched (CNY) and one it did not.
	out, err = fcallApply(ctx, c, "{t}:outbox", "b", "open", "open", "", "0", "", "", "0",
		"credit", "EUR", "5", "", "", "0", "credit", "CNY", "3", "", "", "0")
	require.NoError(t, err)
	assert.Equal(t, `ok
{"s":"1","st":"active","b":{"EUR":["5","0"],"CNY":["3","0"]},"c":{},"h":{}}`, out)
	st, err := c.HGetAll(ctx, "{h:b}").Result()
	require.NoError(t, err)
	assert.Len(t, st, 6)
	assert.Equal(t, "5", st["b:EUR"])
	assert.Equal(t, "3", st["b:CNY"])
	rec, err := c.Get(ctx, "{h:b}:tx:open").Result()
	require.NoError(t, err)
	assert.Equal(t, testFP[:16]+"1 bEUR/5/0 bCNY/3/0", rec)

	// a's state is what its first call left.
	st, err = c.HGetAll(ctx, "{h:a}").Result()
	require.NoError(t, err)
	assert.Equal(t, "100", st["b:USD"])
	assert.Equal(t, "100", st["b:CNY"])
	assert.Equal(t, "50", st["p:a"])
	assert.Equal(t, "available", st["c:c1"])
	assert.Equal(t, "1", st["seq"])
}

// The event's movements carry each amount in its plain decimal form even when
// a direct caller wrote it with leading zeros, and its ts is the server clock
// in ms (TIME's seconds and three digits of milliseconds).
func TestApply_EventFiguresAreCanonical(t *testing.T) {
	ctx := context.Background()
	c := startLibrary(t)

	_, err := fcallApply(ctx, c, "{t}:outbox", "a", "open", "open", "", "0", "", "", "0", "credit", "CNY", "1000", "", "", "0")
	require.NoError(t, err)
	for i := range 30 {
		t0, err := c.Time(ctx).Result()
		require.NoError(t, err)
		out, err := fcallApply(ctx, c, "{t}:outbox", "a", "d"+strconv.Itoa(i), "debit", "CNY", "0002", "", "", "0")
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(out, "ok\n"), out)
		t1, err := c.Time(ctx).Result()
		require.NoError(t, err)

		ev, err := c.XRevRangeN(ctx, "{t}:outbox", "+", "-", 1).Result()
		require.NoError(t, err)
		require.Len(t, ev, 1)
		assert.Contains(t, ev[0].Values["ops"], `["CNY","avail","cp","2"]`)
		ts, err := strconv.ParseInt(ev[0].Values["ts"].(string), 10, 64)
		require.NoError(t, err)
		assert.Equal(t, ev[0].Values["ts"], strconv.FormatInt(ts, 10))
		assert.GreaterOrEqual(t, ts, t0.UnixMilli())
		assert.LessOrEqual(t, ts, t1.UnixMilli())
	}
}
