package engine_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// holdExpiry reads the expiry of holder's open hold from its hash.
func holdExpiry(t *testing.T, holder, hold string) int64 {
	t.Helper()
	raw, err := rdb.HGet(context.Background(), cluster.Holder(holder), cluster.PrefixHold+hold).Result()
	require.NoError(t, err)
	ms, err := strconv.ParseInt(raw[:strings.IndexByte(raw, '|')], 10, 64)
	require.NoError(t, err)
	return ms
}

// The sweeper's release of an expired hold that would take the holder's
// available funds past 2^53-1 is refused OVERFLOW. Its id is derived from
// the hold, so a refusal recorded under it would answer every later pass
// for the record's whole life (24 h), even once the holder has made room:
// the hold would stay frozen and the sweeper would fail on it every pass.
func TestHoldsAdversary_SweeperReleaseRefusedThenRoomIsMade(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	// A hold of 1 ms (the shortest ttl) is expired by the next instruction.
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "10.00").Freeze("CNY", "10.00", "o", time.Millisecond)
	})
	apply(t, newIn(h).Credit("CNY", maxCNY))
	exp := holdExpiry(t, h, "o")
	waitServerPast(t, exp)

	before := readRaw(t, h)
	_, err := eng.ReleaseExpired(ctx, h, "o", exp)
	require.ErrorIs(t, err, engine.ErrOverflow)
	assert.Equal(t, before, readRaw(t, h), "a refused release changes nothing")
	n, err := rdb.Exists(ctx, cluster.Tx(h, engine.SweepID(h, "o", exp))).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "the sweeper's refusal is not recorded under its id")

	apply(t, newIn(h).Debit("CNY", "10.00"))
	res, err := eng.ReleaseExpired(ctx, h, "o", exp)
	require.NoError(t, err, "once room is made the next pass releases")
	assert.False(t, res.Replayed)
	assert.Empty(t, res.Holds)
	assert.Equal(t, instructions.Balance{Available: maxCNY, Frozen: "0.00"}, res.Balances["CNY"])
	again, err := eng.ReleaseExpired(ctx, h, "o", exp)
	require.NoError(t, err)
	assert.True(t, again.Replayed, "a release that applied is recorded: a second pass replays it")
	assert.Empty(t, readRaw(t, h).Expiry)
}
