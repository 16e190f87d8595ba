package reconcile

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// TestRebuild_AHotHolderKeepsItsLaneHistory: a hot holder's lane 0 keeps
// lanes_hist, the lane counts of the raises still inside the idempotency
// window, so that a credit applied before a raise and retried after it is
// looked for on the lane its old count gave it, and replayed there
// (docs/hot-holders.md). Rebuild writes lane 0 from the ledger without it:
//
//  1. open X with 2 lanes; 24 credits, each on lane jump(id, 2);
//  2. set_lanes 8 (lane 0 now has lanes=8, lanes_hist="2@<ms>;");
//     the relay delivers everything, reconcile is clean;
//  3. lane 0's master loses it (DEL {h:X}); rebuild X from the ledger;
//  4. a client retries its 24 credits (a fresh engine: a daemon restarted).
//
// Every retry replays (replayed, same seq, same lane), as it does without
// the rebuild (checked first, with another fresh engine): the ledger gives
// the rebuilt lane 0 its lanes_hist from the holder's open and set_lanes
// events. Before, rebuild wrote lane 0 without it, the engine routed each
// retry by 8 lanes only, and the ids whose lane moved were applied a second
// time on their new lane: money credited twice.
func TestRebuild_AHotHolderKeepsItsLaneHistory(t *testing.T) {
	needRedis(t)
	r := newLedgerRig(t)
	ctx := context.Background()
	r.startRelay(t)
	const hot = "p4-hot"
	_, err := r.eng.Apply(ctx, instructions.New("open-"+hot, hot).OpenHot(2))
	require.NoError(t, err)
	var credits []instructions.Instruction
	first := map[string]instructions.Result{}
	for i := range 24 {
		in := instructions.New(fmt.Sprintf("pay-%02d", i), hot).Credit("CNY", "1.00")
		res, err := r.eng.Apply(ctx, in)
		require.NoError(t, err)
		credits = append(credits, in)
		first[in.ID] = res
	}
	_, err = r.eng.Apply(ctx, instructions.New("raise-"+hot, hot).SetLanes(8))
	require.NoError(t, err)
	require.NotEmpty(t, r.rawHolder(t, hot)[stored.FieldLanesHist], "the raise is remembered on lane 0")

	retryAll := func(what string) (again int) {
		e := engine.New(r.rdb, nil) // nothing cached
		for _, in := range credits {
			res, err := e.Apply(ctx, in)
			require.NoError(t, err, "%s: %s", what, in.ID)
			if !res.Replayed || res.Seq != first[in.ID].Seq || res.Lane != first[in.ID].Lane {
				again++
				t.Logf("%s: %s applied again: lane %d seq %d (first lane %d seq %d)", what, in.ID, res.Lane, res.Seq, first[in.ID].Lane, first[in.ID].Seq)
			}
		}
		return again
	}
	require.Zero(t, retryAll("before the loss"), "the engine replays every retry across the raise")

	rep := r.waitInSync(t)
	require.False(t, rep.Drift, "%+v", rep)

	require.NoError(t, r.rdb.Del(ctx, cluster.Holder(hot)).Err())
	res, err := Rebuild(ctx, r.eng, r.led, []string{hot}, false)
	require.NoError(t, err)
	require.Equal(t, 1, res.Rebuilt, "%+v", res)
	assert.NotEmpty(t, r.rawHolder(t, hot)[stored.FieldLanesHist], "rebuild must write lane 0's lanes_hist back (the raise is inside the idempotency window)")

	assert.Zero(t, retryAll("after the rebuild"), "a retried credit must replay, not apply twice")

	// lanes_hist alone lost (HDEL by hand): reconcile's in sync does not
	// name it (docs/ledger.md), but rebuild compares the raises of its window,
	// refuses lane 0 and, with --force, writes them back. Before, lane 0 was
	// called in sync and no rebuild could repair it.
	require.NoError(t, r.rdb.HDel(ctx, cluster.Holder(hot), stored.FieldLanesHist).Err())
	res, err = Rebuild(ctx, r.eng, r.led, []string{hot}, false)
	require.NoError(t, err)
	assert.Equal(t, 7, res.InSync, "the seven lanes, lane 0 never: %+v", res)
	if assert.Len(t, res.Refused, 1) {
		assert.Contains(t, res.Refused[0], stored.FieldLanesHist)
	}
	_, err = Rebuild(ctx, r.eng, r.led, []string{hot}, true)
	require.NoError(t, err)
	assert.Zero(t, retryAll("after lanes_hist was lost and rebuilt"), "a retried credit must replay, not apply twice")
}
