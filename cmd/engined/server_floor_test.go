package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/internal/bench"
)

// TestServe_BenchFloorDeductsOnlyWithTheFlag: with --bench-floor the floor
// route runs the seed's deduct on the holder's floor key; bad input gets
// its code and changes nothing; without the flag the route does not exist.
func TestServe_BenchFloorDeductsOnlyWithTheFlag(t *testing.T) {
	needRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rdb := testCluster.Client(nil)
	defer rdb.Close()
	h := newID("floor")
	key := bench.FloorKey(h)
	require.NoError(t, rdb.Set(ctx, key, 100, 0).Err())
	t.Cleanup(func() { rdb.Del(context.Background(), key) })
	balance := func() string {
		v, err := rdb.Get(ctx, key).Result()
		require.NoError(t, err)
		return v
	}

	d := startServe(t, nil, "--bench-floor")
	a := d.do(t, http.MethodPost, bench.FloorPath+h, `{"amount": 30}`)
	require.Equal(t, http.StatusOK, a.status, "%s", a)
	assert.JSONEq(t, `{"balance": 70}`, string(a.body))
	assert.Equal(t, "70", balance())

	for _, c := range []struct {
		name, holder, body string
		status             int
		code               string
	}{
		{"more than the balance", h, `{"amount": 71}`, http.StatusUnprocessableEntity, "INSUFFICIENT_FUNDS"},
		{"zero", h, `{"amount": 0}`, http.StatusBadRequest, "INVALID_AMOUNT"},
		{"negative", h, `{"amount": -5}`, http.StatusBadRequest, "INVALID_AMOUNT"},
		{"not a number", h, `{"amount": "5"}`, http.StatusBadRequest, "INVALID_INSTRUCTION"},
		{"not JSON", h, `amount=5`, http.StatusBadRequest, "INVALID_INSTRUCTION"},
		{"another field", h, `{"amount": 5, "holder": "x"}`, http.StatusBadRequest, "INVALID_INSTRUCTION"},
		{"two values", h, `{"amount": 5} {"amount": 5}`, http.StatusBadRequest, "INVALID_INSTRUCTION"},
		{"no floor key", newID("none"), `{"amount": 1}`, http.StatusUnprocessableEntity, "HOLDER_NOT_FOUND"},
		{"a bad holder id", "a%20b", `{"amount": 1}`, http.StatusBadRequest, "INVALID_ID"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantErrorAnswer(t, d.do(t, http.MethodPost, bench.FloorPath+c.holder, c.body), c.status, c.code)
			assert.Equal(t, "70", balance(), "nothing changed")
		})
	}
	a = d.doWith(t, http.MethodPost, bench.FloorPath+h, "", nil)
	wantErrorAnswer(t, a, http.StatusUnauthorized, "UNAUTHENTICATED")

	// A master that lost the seed's library (restarted empty, flushed) gets
	// it again on its first "Function not found".
	require.NoError(t, rdb.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		return m.FunctionDelete(ctx, "atomledger_bench_seed").Err()
	}))
	a = d.do(t, http.MethodPost, bench.FloorPath+h, `{"amount": 10}`)
	require.Equal(t, http.StatusOK, a.status, "%s", a)
	assert.JSONEq(t, `{"balance": 60}`, string(a.body))

	plain := startServe(t, nil)
	a = plain.do(t, http.MethodPost, bench.FloorPath+h, `{"amount": 1}`)
	assert.Equal(t, http.StatusNotFound, a.status, "%s", a)
	assert.Equal(t, "60", balance())
}
