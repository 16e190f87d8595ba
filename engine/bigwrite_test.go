package engine_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// TestApply_MoreWritesThanOneCallCarriesRefusedBeforeWriting: one
// instruction that settles 64 holds of 64 coupons each would change 4,096
// coupons, more fields than one HSET can carry out of Lua (about 8,000
// values). It is refused INVALID_INSTRUCTION before the first write: the
// holder's hash, events and expiry entries as they were, no event.
func TestApply_MoreWritesThanOneCallCarriesRefusedBeforeWriting(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHolder(t, nil)
	for g := range 64 {
		grant := instructions.New(fmt.Sprintf("grant-%d", g), h)
		lock := instructions.New(fmt.Sprintf("lock-%d", g), h)
		for c := range 64 {
			coupon := fmt.Sprintf("c-%d-%d", g, c)
			grant = grant.GrantCoupon(coupon, time.Time{})
			lock = lock.LockCoupon(coupon, fmt.Sprintf("hold-%d", g))
		}
		for _, in := range []instructions.Instruction{grant, lock} {
			_, err := eng.Apply(ctx, in)
			require.NoError(t, err)
		}
	}
	before := readRaw(t, h)
	settle := instructions.New("settle-all", h)
	for g := range 64 {
		settle = settle.Settle(fmt.Sprintf("hold-%d", g))
	}
	_, err := eng.Apply(ctx, settle)
	require.ErrorIs(t, err, engine.ErrInvalidInstruction)
	assert.Contains(t, err.Error(), "split it")
	after := readRaw(t, h)
	assert.Len(t, after.Events, len(before.Events), "no event")
	assert.True(t, reflect.DeepEqual(before, after), "nothing written") // the states are too large to print

	// Half of it fits, and applies whole.
	half := instructions.New("settle-half", h)
	for g := range 32 {
		half = half.Settle(fmt.Sprintf("hold-%d", g))
	}
	res, err := eng.Apply(ctx, half)
	require.NoError(t, err)
	assert.Equal(t, int64(len(before.Events)+1), res.Seq)
}
