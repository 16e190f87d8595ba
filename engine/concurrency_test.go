package engine_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// The seed article's scenario: balance 100, two deductions of 10 at once.
func TestDeduct_TwoAtOnceWithDistinctIDs(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "100") })
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = eng.Deduct(context.Background(), h, "CNY", "10")
		}()
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	assert.Equal(t, "80.00", state(t, h).Balances["CNY"].Available)
}

func TestDeduct_DoubleClickAppliesOnce(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "100") })
	click := instructions.New("checkout-7", h).Debit("CNY", "10")
	var wg sync.WaitGroup
	results := make([]instructions.Result, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			results[i], err = eng.Apply(context.Background(), click)
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	assert.NotEqual(t, results[0].Replayed, results[1].Replayed, "one applied, one replayed")
	assert.Equal(t, results[0].Seq, results[1].Seq)
	assert.Equal(t, "90.00", state(t, h).Balances["CNY"].Available)
}

func TestDeduct_ArticleFailuresEachHaveTheirCode(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "5") })
	ctx := context.Background()
	_, err := eng.Deduct(ctx, newID("nobody"), "CNY", "10")
	assert.ErrorIs(t, err, engine.ErrHolderNotFound)
	_, err = eng.Deduct(ctx, h, "CNY", "10")
	assert.ErrorIs(t, err, engine.ErrInsufficientFunds)
	var e *engine.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "debit 10.00 CNY: available 5.00", e.Message)
	for _, bad := range []string{"0", "-10", "0.00"} {
		_, err = eng.Deduct(ctx, h, "CNY", bad)
		assert.ErrorIs(t, err, engine.ErrInvalidAmount, bad)
	}
	assert.Equal(t, "5.00", state(t, h).Balances["CNY"].Available)
}

// 64 goroutines x 2,000 debits of 1 on one holder with 100,000.
func TestApply_HotHolderUnderConcurrency(t *testing.T) {
	needRedis(t)
	const workers, each = 64, 2000
	ctx := context.Background()
	// The holder's slot stream will hold some 100,000 events: too many for
	// the invariant check to read back, so its events are counted with XLEN
	// (the tests of this package run one at a time).
	h := newID("hot")
	outbox := cluster.Outbox(cluster.HolderSlot(h))
	before, err := rdb.XLen(ctx, outbox).Result()
	require.NoError(t, err)
	_, err = eng.Apply(ctx, newIn(h).Open().Credit("CNY", "100000"))
	require.NoError(t, err)
	var applied, rejected atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				_, err := eng.Apply(context.Background(), newIn(h).Debit("CNY", "1"))
				switch {
				case err == nil:
					applied.Add(1)
				case errors.Is(err, engine.ErrInsufficientFunds):
					rejected.Add(1)
				default:
					t.Errorf("debit: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(100000), applied.Load())
	assert.Equal(t, int64(workers*each-100000), rejected.Load())
	st := state(t, h)
	assert.Equal(t, "0.00", st.Balances["CNY"].Available)
	assert.Equal(t, 1+applied.Load(), st.Seq, "seq counts the opening instruction and every applied debit")
	after, err := rdb.XLen(ctx, outbox).Result()
	require.NoError(t, err)
	assert.Equal(t, st.Seq, after-before, "one outbox event per applied instruction")
	assert.Equal(t, "0.00", st.Balances["CNY"].Frozen)
}
