package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// Redis keeps an idempotency record in whole milliseconds: a TTL under 1ms
// must neither reach Redis as "0" (SET ... PX 0 fails after the script's
// other writes) nor be accepted by the script.

func TestNew_IdempotencyTTLUnderOneMillisecondIsOne(t *testing.T) {
	needRedis(t)
	e := engine.New(rdb, &engine.Options{IdempotencyTTL: 500 * time.Microsecond})
	assert.Equal(t, time.Millisecond, e.IdempotencyTTL())

	h := newHolder(t, nil)
	res, err := e.Apply(context.Background(), newIn(h).Credit("CNY", "1.00"))
	require.NoError(t, err)
	assert.Equal(t, int64(2), res.Seq)
	assert.Equal(t, "1.00", state(t, h).Balances["CNY"].Available)
}

func TestApplyScript_RefusesTTLUnderOneBeforeWriting(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "1.00") })
	for _, ttl := range []string{"0", "00", "-1", "", "1e3"} {
		t.Run("ttl "+ttl+" changes nothing", func(t *testing.T) {
			e := engine.New(rdb, nil)
			engine.SetScriptTTL(e, ttl)
			in := newIn(h).Credit("CNY", "1.00")
			before := readRaw(t, h)
			for range 3 { // a retry changes nothing either
				_, err := e.Apply(context.Background(), in)
				assert.ErrorIs(t, err, engine.ErrInvalidInstruction)
			}
			assert.Equal(t, before, readRaw(t, h))
			n, err := rdb.Exists(context.Background(), cluster.Tx(h, in.ID)).Result()
			require.NoError(t, err)
			assert.Zero(t, n, "no idempotency record")
		})
	}
	assert.Equal(t, "1.00", state(t, h).Balances["CNY"].Available)
}
