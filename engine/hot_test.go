package engine_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// newHot opens a hot holder of n lanes.
func newHot(t *testing.T, n int) string {
	t.Helper()
	h := newID("hot")
	_, err := eng.Apply(context.Background(), instructions.New(newID("open"), h).OpenHot(n))
	require.NoError(t, err)
	return h
}

// laneHashes reads every lane's hash of a hot holder of n lanes.
func laneHashes(t *testing.T, h string, n int) []map[string]string {
	t.Helper()
	out := make([]map[string]string, n)
	for i := range out {
		m, err := rdb.HGetAll(context.Background(), cluster.Holder(instructions.LaneHolder(h, i))).Result()
		require.NoError(t, err)
		out[i] = m
	}
	return out
}

// TestHot_OpenMakesEveryLane: open with lanes makes lane 0 and lanes 1..n-1,
// each knowing the count, and the holder's state answers the sum and each
// lane's share.
func TestHot_OpenMakesEveryLane(t *testing.T) {
	needRedis(t)
	h := newHot(t, 4)
	for i, m := range laneHashes(t, h, 4) {
		assert.Equal(t, "4", m[stored.FieldLanes], "lane %d", i)
		assert.Equal(t, "active", m[stored.FieldStatus], "lane %d", i)
	}
	st := state(t, h)
	require.Len(t, st.Lanes, 4)
	for i, l := range st.Lanes {
		assert.Equal(t, i, l.Lane)
		assert.Equal(t, instructions.LaneHolder(h, i), l.Holder)
	}
	members, err := rdb.SMembers(context.Background(), cluster.HotHolders()).Result()
	require.NoError(t, err)
	assert.Contains(t, members, h)
}

// TestHot_CreditsSpreadAndReplayOnTheirLane: each credit goes to the lane its
// id picks; a retry replays there; the state sums the lanes.
func TestHot_CreditsSpreadAndReplayOnTheirLane(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 4)
	used := map[int]bool{}
	for i := range 40 {
		id := "c" + strconv.Itoa(i)
		res, err := eng.Apply(ctx, instructions.New(id, h).Credit("CNY", "1.00"))
		require.NoError(t, err)
		lane := engine.LaneOf(id, 4)
		used[lane] = true
		assert.Equal(t, lane, res.Lane, "id %s", id)
		assert.Equal(t, h, res.Holder)
		again, err := eng.Apply(ctx, instructions.New(id, h).Credit("CNY", "1.00"))
		require.NoError(t, err)
		assert.True(t, again.Replayed)
		assert.Equal(t, lane, again.Lane)
	}
	assert.Len(t, used, 4, "40 ids reach every one of 4 lanes")
	// Outcome finds each on its lane.
	for i := range 40 {
		id := "c" + strconv.Itoa(i)
		o, err := eng.Outcome(ctx, h, id)
		require.NoError(t, err)
		require.NoError(t, o.Err)
		assert.Equal(t, engine.LaneOf(id, 4), o.Result.Lane, "id %s", id)
		assert.True(t, o.Result.Replayed)
	}
	st := state(t, h)
	assert.Equal(t, "40.00", st.Balances["CNY"].Available)
	var sum int64
	for _, m := range laneHashes(t, h, 4) {
		v, _ := strconv.ParseInt(m[stored.PrefixBalance+"CNY"], 10, 64)
		sum += v
	}
	assert.Equal(t, int64(4000), sum)
}

// TestHot_DebitBeyondLane0SaysWhatWaits: a debit lane 0 cannot cover is
// INSUFFICIENT_FUNDS, nothing changed, and its message says how much the
// receiving lanes hold; after a sweep it passes.
func TestHot_DebitBeyondLane0SaysWhatWaits(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 3)
	for i := range 12 {
		_, err := eng.Apply(ctx, instructions.New("c"+strconv.Itoa(i), h).Credit("CNY", "5.00"))
		require.NoError(t, err)
	}
	before := laneHashes(t, h, 3)
	lane0, _ := strconv.ParseInt(before[0][stored.PrefixBalance+"CNY"], 10, 64)
	require.Less(t, lane0, int64(6000), "not every credit reached lane 0")
	e := applyErr(t, instructions.New("d1", h).Debit("CNY", "60.00"))
	assert.Equal(t, instructions.CodeInsufficientFunds, e.Code)
	waiting := instructions.FromUnits(6000-lane0, 2)
	assert.Contains(t, e.Message, waiting+" CNY more waits")
	assert.Equal(t, before, laneHashes(t, h, 3), "nothing changed")

	got, err := eng.SweepHot(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, 3, got.Lanes)
	after := laneHashes(t, h, 3)
	assert.Equal(t, "6000", after[0][stored.PrefixBalance+"CNY"])
	for _, m := range after[1:] {
		assert.Equal(t, "0", orZero(m[stored.PrefixBalance+"CNY"]))
	}
	again, err := eng.SweepHot(ctx, h)
	require.NoError(t, err)
	assert.Zero(t, again.Moved, "a second sweep finds nothing to move")
	_, err = eng.Apply(ctx, instructions.New("d1", h).Debit("CNY", "60.00"))
	require.Error(t, err, "the rejection is remembered under its id")
	res, err := eng.Apply(ctx, instructions.New("d2", h).Debit("CNY", "50.00"))
	require.NoError(t, err)
	assert.Equal(t, "10.00", res.Balances["CNY"].Available)
	// An instruction that takes value out goes to lane 0 whole, its credit too.
	before = laneHashes(t, h, 3)
	res, err = eng.Apply(ctx, instructions.New("mixed", h).Credit("CNY", "1.00").Debit("CNY", "11.00"))
	require.NoError(t, err)
	assert.Zero(t, res.Lane)
	after = laneHashes(t, h, 3)
	assert.Equal(t, "0", after[0][stored.PrefixBalance+"CNY"])
	assert.Equal(t, before[1:], after[1:])
}

// TestHot_RaiseKeepsEveryIDOnItsLane: after lanes are raised, an id applied
// before replays where it went, also from an engine that still knew the old
// count, and new ids reach the new lanes.
func TestHot_RaiseKeepsEveryIDOnItsLane(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 2)
	stale := engine.New(rdb, nil) // learns the count of 2 and keeps it
	for i := range 30 {
		_, err := stale.Apply(ctx, instructions.New("a"+strconv.Itoa(i), h).Credit("CNY", "1.00"))
		require.NoError(t, err)
	}
	_, err := eng.Apply(ctx, instructions.New(newID("raise"), h).SetLanes(8))
	require.NoError(t, err)
	for i, m := range laneHashes(t, h, 8) {
		assert.Equal(t, "8", m[stored.FieldLanes], "lane %d", i)
	}
	assert.NotEmpty(t, laneHashes(t, h, 1)[0][stored.FieldLanesHist])
	for _, e := range []*engine.Engine{stale, eng, engine.New(rdb, nil)} {
		for i := range 30 {
			id := "a" + strconv.Itoa(i)
			res, err := e.Apply(ctx, instructions.New(id, h).Credit("CNY", "1.00"))
			require.NoError(t, err)
			assert.True(t, res.Replayed, "%s replays", id)
			assert.Equal(t, engine.LaneOf(id, 2), res.Lane, "%s stays on its lane", id)
		}
	}
	assert.Equal(t, "30.00", state(t, h).Balances["CNY"].Available)
	newLanes := 0
	for i := range 40 {
		res, err := stale.Apply(ctx, instructions.New("b"+strconv.Itoa(i), h).Credit("CNY", "1.00"))
		require.NoError(t, err)
		assert.Equal(t, engine.LaneOf("b"+strconv.Itoa(i), 8), res.Lane)
		if res.Lane >= 2 {
			newLanes++
		}
	}
	assert.Positive(t, newLanes)
	assert.Equal(t, "70.00", state(t, h).Balances["CNY"].Available)
}

// TestHot_SetLanesRefusals: lowering, a suspended holder and an unknown one
// are refused with their codes, and nothing of the holder or its lanes changes.
func TestHot_SetLanesRefusals(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 4)
	before := laneHashes(t, h, 6)
	e := applyErr(t, instructions.New("low", h).SetLanes(3))
	assert.Equal(t, instructions.CodeInvalidInstruction, e.Code)
	assert.Equal(t, before, laneHashes(t, h, 6))

	_, err := eng.Apply(ctx, instructions.New("s", h).Suspend())
	require.NoError(t, err)
	before = laneHashes(t, h, 6)
	e = applyErr(t, instructions.New("up", h).SetLanes(6))
	assert.Equal(t, instructions.CodeHolderSuspended, e.Code)
	assert.Equal(t, before, laneHashes(t, h, 6), "no lane opened or raised")

	e = applyErr(t, instructions.New("up", newID("nobody")).SetLanes(6))
	assert.Equal(t, instructions.CodeHolderNotFound, e.Code)

	e = applyErr(t, instructions.New("again", h).OpenHot(8))
	assert.Equal(t, instructions.CodeHolderExists, e.Code)
	assert.Equal(t, before, laneHashes(t, h, 6))
}

// TestHot_PlainMadeHot: set_lanes makes a plain holder hot; its balance stays
// in lane 0 and credits spread from then on.
func TestHot_PlainMadeHot(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") })
	_, err := eng.Apply(ctx, instructions.New("hot", h).SetLanes(4))
	require.NoError(t, err)
	fresh := engine.New(rdb, nil) // knows nothing: the holder refuses its plain route
	for i := range 20 {
		id := "p" + strconv.Itoa(i)
		res, err := fresh.Apply(ctx, instructions.New(id, h).Credit("CNY", "1.00"))
		require.NoError(t, err)
		if engine.LaneOf(id, 4) != engine.LaneOf(id, 1) {
			// Applied before the raise? No: a plain id never ran: it goes to its lane.
			assert.Equal(t, engine.LaneOf(id, 4), res.Lane)
		}
	}
	st := state(t, h)
	assert.Equal(t, "30.00", st.Balances["CNY"].Available)
	assert.Len(t, st.Lanes, 4)
}

// TestHot_TransferCreditsALane: a one-payer transfer to a hot payee credits
// the lane its id picks; the transfer reads back whole, and the holder's sum
// has it.
func TestHot_TransferCreditsALane(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 4)
	payer := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "100.00") })
	for i := range 8 {
		id := newID("pay" + strconv.Itoa(i))
		st, err := eng.Transfer(ctx, instructions.Transfer{ID: id, Parts: []instructions.Part{
			{Holder: payer, Ops: []instructions.Op{{Op: instructions.OpDebit, Asset: "CNY", Amount: "2.00"}}},
			{Holder: h, Ops: []instructions.Op{{Op: instructions.OpCredit, Asset: "CNY", Amount: "2.00"}}},
		}})
		require.NoError(t, err)
		require.Equal(t, engine.TransferCommitted, st.Status)
		got, err := eng.GetTransfer(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, engine.TransferCommitted, got.Status)
		// The holders as the client named them, not the lane credited.
		assert.Equal(t, []string{payer, h}, st.Holders)
		assert.Equal(t, []string{payer, h}, got.Holders)
	}
	// An id used again with another body names the holder, not its lane.
	id := newID("c")
	for engine.LaneOf(id, 4) == 0 {
		id = newID("c")
	}
	_, err := eng.Apply(ctx, instructions.New(id, h).Credit("CNY", "1.00"))
	require.NoError(t, err)
	_, err = eng.Apply(ctx, instructions.New(id, h).Credit("CNY", "2.00"))
	require.ErrorIs(t, err, instructions.CodeIdempotencyConflict)
	assert.Contains(t, err.Error(), "used by "+h+" with")
	eng.Flush()
	assert.Equal(t, "17.00", state(t, h).Balances["CNY"].Available)
	assert.Equal(t, "84.00", state(t, payer).Balances["CNY"].Available)
	_, err = eng.Transfer(ctx, instructions.Transfer{ID: "hot-x", Parts: []instructions.Part{
		{Holder: payer, Ops: []instructions.Op{{Op: instructions.OpDebit, Asset: "CNY", Amount: "2.00"}}},
		{Holder: h, Ops: []instructions.Op{{Op: instructions.OpCredit, Asset: "CNY", Amount: "2.00"}}},
	}})
	require.ErrorIs(t, err, instructions.CodeInvalidID)
	assert.True(t, strings.Contains(err.Error(), "hot-"))
}

// TestHot_JSONDoorRefusesCredits: the library's JSON door cannot pick a
// credit's lane, so a hot holder refuses it credits (nothing written, not
// recorded: the same id then goes through the engine to its lane, once);
// what takes value out it applies on lane 0 like the engine.
func TestHot_JSONDoorRefusesCredits(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 4)
	before := laneHashes(t, h, 4)
	_, out := cliJSON(t, h, "j1", `{"id":"j1","holder":"`+h+`","ops":[{"op":"credit","asset":"CNY","amount":"500"}]}`)
	assert.Equal(t, "INVALID_INSTRUCTION", cliCode(out), out)
	assert.Contains(t, out, "is hot (4 lanes)")
	assert.Equal(t, before, laneHashes(t, h, 4))
	n, err := rdb.Exists(ctx, cluster.Tx(h, "j1")).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "not recorded")
	res, err := eng.Apply(ctx, instructions.New("j1", h).Credit("CNY", "5.00"))
	require.NoError(t, err)
	assert.Equal(t, engine.LaneOf("j1", 4), res.Lane)
	// A plain holder takes the same credit through the door.
	p := newHolder(t, nil)
	_, out = cliJSON(t, p, "j1", `{"id":"j1","holder":"`+p+`","ops":[{"op":"credit","asset":"CNY","amount":"500"}]}`)
	assert.True(t, strings.HasPrefix(out, "ok\n"), out)
}

// TestHot_MissingLane: a lane gone from Redis (its master lost its data)
// makes a credit routed to it UNAVAILABLE naming the lane, nothing written;
// the state is UNAVAILABLE too (the sum would be wrong), and the sweep
// reports it while moving the other lanes.
func TestHot_MissingLane(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 3)
	for i := range 10 {
		_, err := eng.Apply(ctx, instructions.New("c"+strconv.Itoa(i), h).Credit("CNY", "1.00"))
		require.NoError(t, err)
	}
	lost := instructions.LaneHolder(h, 2)
	require.NoError(t, rdb.Del(ctx, cluster.Holder(lost)).Err())
	id := "x0"
	for i := 0; engine.LaneOf(id, 3) != 2; i++ {
		id = "x" + strconv.Itoa(i)
	}
	before := laneHashes(t, h, 3)
	e := applyErr(t, instructions.New(id, h).Credit("CNY", "1.00"))
	assert.Equal(t, instructions.CodeUnavailable, e.Code)
	assert.Contains(t, e.Message, lost)
	assert.Equal(t, before, laneHashes(t, h, 3))

	_, err := eng.State(ctx, h)
	require.ErrorIs(t, err, instructions.CodeUnavailable)
	assert.Contains(t, err.Error(), lost)

	got, err := eng.SweepHot(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, []string{lost}, got.Missing)
	assert.Equal(t, before[1][stored.PrefixBalance+"CNY"] != "" && before[1][stored.PrefixBalance+"CNY"] != "0", got.Moved == 1)
}

// TestHot_OrphanLanesAheadDoNotBlockAnOpen: an open with lanes whose
// instruction lane 0 refused leaves its lanes opened, but not the holder in
// the sweep's set of hot holders (the sweep would fail on it every pass); a
// later open with fewer lanes works, and every credit still applies once.
func TestHot_OrphanLanesAheadDoNotBlockAnOpen(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newID("orphan")
	e := applyErr(t, instructions.New("o1", h).OpenHot(6).Debit("CNY", "1.00"))
	assert.Equal(t, instructions.CodeInsufficientFunds, e.Code)
	listed := func() bool {
		in, err := rdb.SIsMember(ctx, cluster.HotHolders(), h).Result()
		require.NoError(t, err)
		return in
	}
	assert.False(t, listed(), "no holder: not in the sweep's set")
	_, err := engine.New(rdb, nil).SweepHot(ctx, h)
	require.ErrorIs(t, err, instructions.CodeHolderNotFound)
	_, err = eng.Apply(ctx, instructions.New("o2", h).OpenHot(4))
	require.NoError(t, err)
	assert.True(t, listed())
	e = applyErr(t, instructions.New("o3", h).OpenHot(4))
	assert.Equal(t, instructions.CodeHolderExists, e.Code)
	assert.True(t, listed(), "an open refused for a holder that exists keeps it")
	for i := range 12 {
		_, err := eng.Apply(ctx, instructions.New("c"+strconv.Itoa(i), h).Credit("CNY", "1.00"))
		require.NoError(t, err)
		again, err := engine.New(rdb, nil).Apply(ctx, instructions.New("c"+strconv.Itoa(i), h).Credit("CNY", "1.00"))
		require.NoError(t, err)
		assert.True(t, again.Replayed)
	}
	assert.Equal(t, "12.00", state(t, h).Balances["CNY"].Available)
}

// TestHot_SetOfHotHoldersComesBack: the sweep's set of hot holders lives on
// one master; lost (that master emptied), an engine that learns a holder is
// hot puts it back.
func TestHot_SetOfHotHoldersComesBack(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 3)
	require.NoError(t, rdb.SRem(ctx, cluster.HotHolders(), h).Err())
	_, err := engine.New(rdb, nil).Apply(ctx, instructions.New("c1", h).Credit("CNY", "1.00"))
	require.NoError(t, err)
	in, err := rdb.SIsMember(ctx, cluster.HotHolders(), h).Result()
	require.NoError(t, err)
	assert.True(t, in)
}
