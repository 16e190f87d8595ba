package reconcile

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger/ledgertest"
	"github.com/atomledger/atomledger/stored"
)

// applyOnLane applies in, addressed to a hot holder, on its lane.
func (r *ledgerRig) applyOnLane(t *testing.T, in instructions.Instruction, lane string) {
	t.Helper()
	require.NoError(t, ledgertest.ApplyOnLane(context.Background(), r.rdb, r.eng, in, lane))
}

// rawHolder reads a holder's hash as Redis has it.
func (r *ledgerRig) rawHolder(t *testing.T, holder string) map[string]string {
	t.Helper()
	m, err := r.rdb.HGetAll(context.Background(), cluster.Holder(holder)).Result()
	require.NoError(t, err)
	return m
}

func TestReconcile_AMissingLaneIsReportedUnderItsHolderAndRebuilt(t *testing.T) {
	needRedis(t)
	r := newLedgerRig(t)
	ctx := context.Background()
	r.startRelay(t)
	const hot = "merchant-1"
	lane1, lane2 := hot+"#1", hot+"#2"
	// Opened hot by the engine: lanes 1 and 2 opened before lane 0, each
	// knowing the count, which a rebuild must write back.
	r.applyAll(t, []instructions.Instruction{instructions.New("open-"+hot, hot).OpenHot(3),
		instructions.New("open-other", "other-1").Open().Credit("CNY", "3.00")})
	for i, id := range []string{"pay-1", "pay-2", "pay-3"} {
		r.applyOnLane(t, instructions.New(id, hot).Credit("CNY", "1.25").EarnPoints(strconv.Itoa(10*(i+1))), lane1)
	}
	r.applyOnLane(t, instructions.New("pay-4", hot).Credit("CNY", "2.00"), lane2)
	// A hold on the lane, to see its expiry index entry come back too.
	r.applyOnLane(t, instructions.New("pay-5", hot).Credit("CNY", "1.00").Freeze("CNY", "0.50", "h-1", time.Hour), lane1)
	rep := r.waitInSync(t)
	require.False(t, rep.Drift, "%+v", rep)
	require.Equal(t, 4, rep.Holders, "each lane is a holder")

	before := r.rawHolder(t, lane1)
	require.Equal(t, "5", before["seq"])
	require.Equal(t, "3", before[stored.FieldLanes])
	slot := cluster.HolderSlot(lane1)
	score, err := r.rdb.ZScore(ctx, cluster.Expiry(slot), lane1+" h-1").Result()
	require.NoError(t, err)
	// The master of the lane's slot emptied: its hash and expiry entry gone.
	require.NoError(t, r.rdb.Del(ctx, cluster.Holder(lane1)).Err())
	require.NoError(t, r.rdb.ZRem(ctx, cluster.Expiry(slot), lane1+" h-1").Err())

	rep = r.run(t)
	assert.True(t, rep.Drift)
	require.Len(t, rep.Findings, 1, "%+v", rep.Findings)
	assert.Equal(t, Finding{Holder: lane1, Parent: hot, Lane: 1, Kind: KindMissingInRedis, LedgerSeq: 5}, rep.Findings[0],
		"the finding names the hot holder and the lane")

	t.Run("rebuilding the hot holder rebuilds its missing lane exactly", func(t *testing.T) {
		res, err := Rebuild(ctx, r.eng, r.led, []string{hot}, false)
		require.NoError(t, err)
		assert.Equal(t, RebuildResult{Rebuilt: 1, InSync: 2}, res, "lane 0 and lane 2 in sync, lane 1 written")
		assert.Equal(t, before, r.rawHolder(t, lane1), "the lane's hash is back as it was")
		got, err := r.rdb.ZScore(ctx, cluster.Expiry(slot), lane1+" h-1").Result()
		require.NoError(t, err)
		assert.Equal(t, score, got, "the expiry index entry is back")
		rep := r.run(t)
		assert.False(t, rep.Drift, "%+v", rep)
		assert.Equal(t, 4, rep.InSync)
	})
	t.Run("a retry of an instruction the lane applied gets its first answer", func(t *testing.T) {
		rec, err := r.rdb.Get(ctx, cluster.Tx(lane1, "pay-5")).Result()
		require.NoError(t, err, "the idempotency record is rebuilt with the lane")
		assert.NotEmpty(t, rec)
	})
	t.Run("a lane rebuilt by its own name, like any holder", func(t *testing.T) {
		require.NoError(t, r.rdb.Del(ctx, cluster.Holder(lane2)).Err())
		res, err := Rebuild(ctx, r.eng, r.led, []string{lane2}, false)
		require.NoError(t, err)
		assert.Equal(t, RebuildResult{Rebuilt: 1}, res)
		assert.Equal(t, "2", r.rawHolder(t, lane2)["seq"])
		assert.Equal(t, "3", r.rawHolder(t, lane2)[stored.FieldLanes])
	})
	t.Run("lane 0 rebuilt keeps its count, and reconcile sees a count that differs", func(t *testing.T) {
		lane0 := r.rawHolder(t, hot)
		require.Equal(t, "3", lane0[stored.FieldLanes])
		require.NoError(t, r.rdb.HSet(ctx, cluster.Holder(hot), stored.FieldLanes, "5").Err())
		rep := r.run(t)
		require.Len(t, rep.Findings, 1, "%+v", rep.Findings)
		assert.Contains(t, strings.Join(rep.Findings[0].Difference, "; "), "lanes: redis 5, ledger 3")
		require.NoError(t, r.rdb.Del(ctx, cluster.Holder(hot)).Err())
		_, err := Rebuild(ctx, r.eng, r.led, []string{hot}, false)
		require.NoError(t, err)
		assert.Equal(t, lane0, r.rawHolder(t, hot), "lane 0's hash is back, its count with it")
	})
}
