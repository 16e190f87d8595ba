package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/lua"
)

func TestApplyBatch_MixedOutcomesInOrder(t *testing.T) {
	needRedis(t)
	// Holders on every master: the batch spans the whole cluster.
	var holders []string
	masters := map[int]bool{}
	for len(holders) < 30 {
		h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10") })
		holders = append(holders, h)
		masters[cluster.HolderSlot(h)*3/cluster.Slots] = true
	}
	require.Len(t, masters, 3)

	var batch []instructions.Instruction
	for _, h := range holders {
		batch = append(batch,
			newIn(h).Debit("CNY", "4"),
			newIn(h).Debit("CNY", "7"),  // INSUFFICIENT_FUNDS after the first
			newIn(h).Debit("CNY", "0"),  // INVALID_AMOUNT, before Redis
			newIn(h).Credit("CNY", "1"), // still applies: the batch is not atomic
		)
	}
	out := eng.ApplyBatch(context.Background(), batch)
	require.Len(t, out, len(batch))
	for i, h := range holders {
		o := out[4*i : 4*i+4]
		require.NoError(t, o[0].Err)
		assert.Equal(t, "6.00", o[0].Result.Balances["CNY"].Available)
		assert.ErrorIs(t, o[1].Err, engine.ErrInsufficientFunds)
		assert.ErrorIs(t, o[2].Err, engine.ErrInvalidAmount)
		require.NoError(t, o[3].Err)
		assert.Equal(t, h, o[3].Result.Holder)
		assert.Equal(t, "7.00", o[3].Result.Balances["CNY"].Available)
	}

	// The same batch again is replayed whole.
	again := eng.ApplyBatch(context.Background(), batch)
	require.Len(t, again, len(batch), "one outcome per instruction of the replayed batch")
	for i := range again {
		if out[i].Err != nil {
			// A recorded rejection says so when replayed; one found before
			// Redis is not recorded, and answered afresh.
			want := out[i].Err.Error()
			var e *engine.Error
			if errors.As(again[i].Err, &e) && e.Replayed {
				want += engine.ReplayNote
			}
			assert.Equal(t, want, again[i].Err.Error())
			continue
		}
		require.NoError(t, again[i].Err)
		assert.True(t, again[i].Result.Replayed)
	}
}

// flushFunctions drops the library from every master (replicas follow).
func flushFunctions(t *testing.T) {
	t.Helper()
	require.NoError(t, rdb.ForEachMaster(context.Background(), func(ctx context.Context, c *redisClient) error {
		return c.FunctionFlush(ctx).Err()
	}))
}

func TestApply_FunctionFlushIsInvisible(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "100") })

	flushFunctions(t)
	_, err := eng.Apply(ctx, newIn(h).Debit("CNY", "1"))
	require.NoError(t, err)
	_, err = eng.State(ctx, h)
	require.NoError(t, err)

	flushFunctions(t)
	var batch []instructions.Instruction
	for i := 0; i < 50; i++ {
		batch = append(batch, newIn(h).Debit("CNY", "1"))
	}
	for i, o := range eng.ApplyBatch(ctx, batch) {
		require.NoError(t, o.Err, "entry %d", i)
	}
	assert.Equal(t, "49.00", state(t, h).Balances["CNY"].Available)

	// A transfer's record and a sweeper's release go through the same path.
	flushFunctions(t)
	st, err := eng.GetTransfer(ctx, newID("t"))
	require.ErrorIs(t, err, engine.ErrTransferNotFound, "%v", st)
	checkInvariants(t, h)
}

func TestLoad_ChecksVersionAndLoadsEverywhere(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	flushFunctions(t)
	require.NoError(t, eng.Load(ctx))
	// Masters only: a replica may still be applying the flush it got from its master.
	err := rdb.ForEachMaster(ctx, func(ctx context.Context, c *redisClient) error {
		libs, err := c.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: lua.Library.Name, WithCode: true}).Result()
		if err != nil {
			return err
		}
		if len(libs) != 1 || libs[0].Code != lua.Library.Source {
			return fmt.Errorf("%s lacks library %s", c.Options().Addr, lua.Library.Name)
		}
		return nil
	})
	require.NoError(t, err)
}

// A master that does not answer in time fails, in a batch, its own holders'
// entries only: the entries of the other masters answer their results, as
// they applied. The batch went as one pipeline of the cluster client, and
// go-redis sets the error of a pipeline whose context ends on every command
// of it: every entry was UNAVAILABLE, those applied included.
func TestApplyBatch_OneMasterPausedFailsOnlyItsOwnEntries(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hundred := func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "100.00") }
	hs := holdersOnMasters(t, hundred, hundred, hundred)
	unpause := pauseWrites(t, cluster.Holder(hs[0]))

	short, cancel := context.WithTimeout(ctx, time.Second)
	out := eng.ApplyBatch(short, []instructions.Instruction{
		newIn(hs[0]).Debit("CNY", "1.00"), newIn(hs[1]).Debit("CNY", "1.00"), newIn(hs[2]).Debit("CNY", "1.00")})
	cancel()
	assert.ErrorIs(t, out[0].Err, engine.ErrUnavailable, "the paused master's entry")
	var e *engine.Error
	require.ErrorAs(t, out[0].Err, &e)
	assert.Equal(t, "Redis did not answer in time: the outcome is unknown; send it again with the same id", e.Message,
		"what the client reads names no socket and no Go context")
	for i, o := range out[1:] {
		require.NoError(t, o.Err, "entry %d, on a master that answered", i+1)
		assert.Equal(t, "99.00", o.Result.Balances["CNY"].Available)
	}
	unpause()
}
