package engine_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// Hot holders at their edges: each test is one behaviour a payments
// engineer would probe.

// idOnLane gives an id of prefix whose lane among n is lane.
func idOnLane(prefix string, n, lane int) string {
	for i := 0; ; i++ {
		id := prefix + strconv.Itoa(i)
		if engine.LaneOf(id, n) == lane {
			return id
		}
	}
}

// TestHot_SweepIntoASuspendedLane0: a suspended holder accepts credits
// (DESIGN.md): its lanes keep taking them, and the sweep's credit to lane 0
// is a credit too.
func TestHot_SweepIntoASuspendedLane0(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 3)
	_, err := eng.Apply(ctx, instructions.New("s", h).Suspend())
	require.NoError(t, err)
	for _, lane := range []int{1, 2} {
		_, err := eng.Apply(ctx, instructions.New(idOnLane("c", 3, lane), h).Credit("CNY", "2.00").EarnPoints("5"))
		require.NoError(t, err, "a credit to lane %d of a suspended holder", lane)
	}
	got, err := eng.SweepHot(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, 2, got.Moved)
	st := state(t, h)
	assert.Equal(t, "4.00", st.Balances["CNY"].Available)
	assert.Equal(t, "4.00", st.Lanes[0].Balances["CNY"].Available, "all of it in lane 0")
	assert.Equal(t, "10", st.Lanes[0].Points.Available)
	assert.Equal(t, "suspended", st.Status)
}

// TestHot_HotPayerPaysHotPayee: a payment from one hot holder (its lane
// 0 pays) to another (a lane receives), then both swept: each total moves
// by the amount once.
func TestHot_HotPayerPaysHotPayee(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	a, b := newHot(t, 3), newHot(t, 4)
	_, err := eng.Apply(ctx, instructions.New("fund", a).Credit("CNY", "10.00").Debit("CNY", "0.01"))
	require.NoError(t, err) // mixed: lane 0
	for i := range 5 {
		st, err := eng.Transfer(ctx, instructions.Transfer{ID: newID("pay" + strconv.Itoa(i)), Parts: []instructions.Part{
			{Holder: a, Ops: []instructions.Op{{Op: instructions.OpDebit, Asset: "CNY", Amount: "1.00"}}},
			{Holder: b, Ops: []instructions.Op{{Op: instructions.OpCredit, Asset: "CNY", Amount: "1.00"}}},
		}})
		require.NoError(t, err)
		require.Equal(t, engine.TransferCommitted, st.Status, "%+v", st.Error)
	}
	_, err = eng.SweepHot(ctx, a)
	require.NoError(t, err)
	_, err = eng.SweepHot(ctx, b)
	require.NoError(t, err)
	assert.Equal(t, "4.99", state(t, a).Balances["CNY"].Available)
	sb := state(t, b)
	assert.Equal(t, "5.00", sb.Balances["CNY"].Available)
	assert.Equal(t, "5.00", sb.Lanes[0].Balances["CNY"].Available)
}

// TestHot_TwoPhaseSweepIntoASuspendedLane0: an engine whose idempotency
// TTL is under ten transfer timeouts sweeps by two-phase transfers; a
// suspended holder accepts credits, so its sweep goes through all the same.
func TestHot_TwoPhaseSweepIntoASuspendedLane0(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	short := engine.New(rdb, &engine.Options{IdempotencyTTL: 2 * 60 * 1000 * 1000 * 1000})
	h := newHot(t, 3)
	_, err := eng.Apply(ctx, instructions.New("s", h).Suspend())
	require.NoError(t, err)
	_, err = eng.Apply(ctx, instructions.New(idOnLane("c", 3, 1), h).Credit("CNY", "2.00"))
	require.NoError(t, err)
	got, err := short.SweepHot(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, 1, got.Moved)
	st := state(t, h)
	assert.Equal(t, "2.00", st.Lanes[0].Balances["CNY"].Available)
	assert.Equal(t, "2.00", st.Balances["CNY"].Available)
	assert.Equal(t, "0.00", st.Balances["CNY"].Frozen)
}

// TestHot_SweepIntoAFullLane0: lane 0 near 2^53-1 cannot take a lane's
// balance: the sweep fails, and it must change nothing (no event, no seq)
// pass after pass, and lose nothing.
func TestHot_SweepIntoAFullLane0(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 2)
	_, err := eng.Apply(ctx, instructions.New(idOnLane("a", 2, 0), h).Credit("CNY", "90071992547409.00"))
	require.NoError(t, err)
	_, err = eng.Apply(ctx, instructions.New(idOnLane("b", 2, 1), h).Credit("CNY", "5.00"))
	require.NoError(t, err)
	before := laneHashes(t, h, 2)
	for range 3 {
		_, err := eng.SweepHot(ctx, h)
		assert.Error(t, err, "lane 0 cannot take 5.00 more")
	}
	after := laneHashes(t, h, 2)
	assert.Equal(t, before[1][stored.FieldSeq], after[1][stored.FieldSeq], "lane 1's seq: each pass wrote to it")
	assert.Equal(t, before[0][stored.PrefixBalance+"CNY"], after[0][stored.PrefixBalance+"CNY"])
	assert.Equal(t, before[1][stored.PrefixBalance+"CNY"], after[1][stored.PrefixBalance+"CNY"])
}

// TestHot_UnknownAssetBlocksTheLanesSweep: an asset removed from the
// registry while a lane holds it (DESIGN.md allows it: shown in minor units)
// makes that lane's sweep transfer invalid, and with it every other asset
// of the lane: they never reach lane 0, whose debits keep failing.
func TestHot_UnknownAssetBlocksTheLanesSweep(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 2)
	_, err := eng.Apply(ctx, instructions.New(idOnLane("b", 2, 1), h).Credit("CNY", "5.00").Credit("USDT", "1.000000"))
	require.NoError(t, err)
	narrow := engine.New(rdb, &engine.Options{Assets: instructions.MustParseAssets("CNY:2")})
	_, err = narrow.SweepHot(ctx, h)
	assert.NoError(t, err, "sweep with USDT unknown")
	st := state(t, h)
	assert.Equal(t, "5.00", st.Lanes[0].Balances["CNY"].Available, "CNY reached lane 0")
}

// TestHot_SweepClaimedThenKilledIsSweptAgain: a sweeper that wrote its
// transfer's record and died before the lane paid leaves it to recovery,
// which aborts it (the payer's step never ran). The lane's seq has not
// moved, so every later sweep computes the same id, finds that aborted
// transfer and moves nothing: the lane's balance stays out of lane 0's reach
// until the lane receives something else or the record expires (24 h).
func TestHot_SweepClaimedThenKilledIsSweptAgain(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	e := shortTimeout()
	h := newHot(t, 2)
	_, err := e.Apply(ctx, instructions.New(idOnLane("b", 2, 1), h).Credit("CNY", "5.00"))
	require.NoError(t, err)
	lane := laneHashes(t, h, 2)[1]
	seq, _ := strconv.ParseInt(lane[stored.FieldSeq], 10, 64)
	sweep := instructions.Transfer{ID: engine.HotSweepID(h, 1, seq), Parts: []instructions.Part{
		{Holder: instructions.LaneHolder(h, 1), Ops: []instructions.Op{{Op: instructions.OpDebit, Asset: "CNY", Amount: "5.00"}}},
		{Holder: h, Ops: []instructions.Op{{Op: instructions.OpCredit, Asset: "CNY", Amount: "5.00"}}},
	}}
	require.NoError(t, e.TransferStep(ctx, sweep, "begin", 0)) // then the sweeper dies
	st := recoverUntilComplete(t, sweep.ID)
	t.Logf("recovery left the sweep %s", st.Status)

	got, err := e.SweepHot(ctx, h)
	assert.NoError(t, err)
	assert.Equal(t, 1, got.Moved)
	assert.Equal(t, "5.00", state(t, h).Lanes[0].Balances["CNY"].Available, "the lane swept into lane 0")
}

// TestHot_BatchRetriesAcrossRaisesFromSeveralEngines: four engines (one
// that never saw the holder, each new round) send the same 40 credits in
// batches, over and over, while a fifth raises the lanes 2 -> 4 -> 8 -> 16
// and sweeps: each credit applies exactly once, on one lane, and the total
// is their sum.
func TestHot_BatchRetriesAcrossRaisesFromSeveralEngines(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 2)
	ids := make([]string, 40)
	batch := make([]instructions.Instruction, len(ids))
	for i := range ids {
		ids[i] = "rc-" + strconv.Itoa(i)
		batch[i] = instructions.New(ids[i], h).Credit("CNY", "1.00")
	}
	engines := []*engine.Engine{engine.New(rdb, nil), engine.New(rdb, nil), engine.New(rdb, nil)}
	for _, e := range engines[:2] {
		_, err := e.Apply(ctx, instructions.New(newID("warm"), h).Credit("CNY", "0.01"))
		require.NoError(t, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, n := range []int{4, 8, 16} {
			_, err := eng.Apply(ctx, instructions.New("raise-"+strconv.Itoa(n), h).SetLanes(n))
			assert.NoError(t, err)
			_, _ = eng.SweepHot(ctx, h)
		}
	}()
	for round := 0; ; round++ {
		select {
		case <-done:
		default:
			for _, e := range append(engines, engine.New(rdb, nil)) {
				for i, o := range e.ApplyBatch(ctx, batch) {
					require.NoError(t, o.Err, "round %d, %s", round, ids[i])
				}
			}
			continue
		}
		break
	}
	for _, e := range append(engines, engine.New(rdb, nil)) {
		for i, o := range e.ApplyBatch(ctx, batch) {
			require.NoError(t, o.Err, ids[i])
			assert.True(t, o.Result.Replayed, ids[i])
		}
	}
	for _, id := range ids {
		assert.Len(t, lanesHolding(t, h, id, 16), 1, id)
	}
	assert.Equal(t, int64(4000+2), hotTotal(t, h, 16))
}

// TestHot_ClientIDTakesARaisesStepID: the engine opens and raises lanes
// under the ids "lanes-open-<n>" and "lanes-set-<n>", which are a client's
// ids too (DESIGN.md: the engine's own ids use a prefix clients are
// refused, "so that no client can take one first"). A client's credit under
// such an id lands on a receiving lane, and the raise to n then meets its
// record there: the raise fails, for as long as the id is remembered.
func TestHot_ClientIDTakesARaisesStepID(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	for _, step := range []string{"lanes-open-", "lanes-set-"} {
		h := newHot(t, 4)
		n := 5
		for engine.LaneOf(step+strconv.Itoa(n), 4) == 0 {
			n++
		}
		res, err := eng.Apply(ctx, instructions.New(step+strconv.Itoa(n), h).Credit("CNY", "1.00"))
		require.NoError(t, err, "a client's credit under the id %s%d", step, n)
		t.Logf("%s%d landed on lane %d", step, n, res.Lane)
		_, err = eng.Apply(ctx, instructions.New(newID("raise"), h).SetLanes(n))
		assert.NoError(t, err, "the raise to %d after a client's credit under %s%d", n, step, n)
	}
}

// TestHot_ResumeAndRaiseInOneInstruction: applyLanes opens the new lanes
// only for a holder it reads active; an instruction that resumes a
// suspended holder and raises its lanes applies on lane 0 (the resume comes
// first), so lane 0 says the new count and the new lanes were never opened.
func TestHot_ResumeAndRaiseInOneInstruction(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 2)
	_, err := eng.Apply(ctx, instructions.New("s", h).Suspend())
	require.NoError(t, err)
	_, err = eng.Apply(ctx, instructions.New("r", h).Resume().SetLanes(4))
	if err != nil {
		t.Skipf("refused: %v", err)
	}
	for i := 1; i < 4; i++ {
		n, err := rdb.Exists(ctx, cluster.Holder(instructions.LaneHolder(h, i))).Result()
		require.NoError(t, err)
		assert.Equal(t, int64(1), n, "lane %d of 4", i)
	}
	_, err = eng.State(ctx, h)
	assert.NoError(t, err)
}

// creditTwiceAcrossABehindLane: lane 1 of h still says 2 while lane 0 says
// 4 (a raise that reached lane 0 without its lanes). An engine that knows
// 4 sends credit id (lane 1 under both counts) to lane 1, is refused, and
// applies it on lane 0; an engine that still routes by 2 sends the same id
// (a client's retry) to lane 1, which says 2 and takes it: applied twice.
func creditTwiceAcrossABehindLane(t *testing.T, h string, stale *engine.Engine) {
	t.Helper()
	ctx := context.Background()
	id := "c0"
	for i := 0; engine.LaneOf(id, 2) != 1 || engine.LaneOf(id, 4) != 1; i++ {
		id = "c" + strconv.Itoa(i)
	}
	before := hotTotal(t, h, 2)
	fresh := engine.New(rdb, nil)
	_, err := fresh.Apply(ctx, instructions.New(id, h).Credit("CNY", "1.00"))
	require.NoError(t, err)
	_, err = stale.Apply(ctx, instructions.New(id, h).Credit("CNY", "1.00"))
	require.NoError(t, err)
	assert.Len(t, lanesHolding(t, h, id, 2), 1, "credit %s on one lane", id)
	assert.Equal(t, before+100, hotTotal(t, h, 2), "credit %s counted once", id)
}

// staleEngine is an engine that has learnt h has 2 lanes.
func staleEngine(t *testing.T, h string) *engine.Engine {
	t.Helper()
	e := engine.New(rdb, nil)
	_, err := e.Apply(context.Background(), instructions.New(newID("warm"), h).Credit("CNY", "0.01"))
	require.NoError(t, err)
	return e
}

// TestHot_ResumeAndRaiseThenACreditAppliesTwice: the resume-and-raise of
// TestHot_ResumeAndRaiseInOneInstruction leaves lane 1 behind lane 0;
// a retried credit then applies twice.
func TestHot_ResumeAndRaiseThenACreditAppliesTwice(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 2)
	stale := staleEngine(t, h)
	_, err := eng.Apply(ctx, instructions.New("s", h).Suspend())
	require.NoError(t, err)
	_, err = eng.Apply(ctx, instructions.New("r", h).Resume().SetLanes(4))
	require.NoError(t, err)
	creditTwiceAcrossABehindLane(t, h, stale)
}

// TestHot_TwoRaisesInOneInstruction: setsLanes takes the first count of
// an instruction, and applyLanes opens the lanes for it; lane 0 applies
// every op and ends at the last count. An open with 2 lanes followed by a
// set_lanes to 4, in one instruction, leaves lane 0 at 4, lane 1 at 2,
// lanes 2 and 3 never opened: the state is UNAVAILABLE ("rebuild it from
// the ledger", which has nothing of them) and so is every credit whose id
// picks lane 2 or 3.
func TestHot_TwoRaisesInOneInstruction(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newID("tworaise")
	_, err := eng.Apply(ctx, instructions.New("open", h).OpenHot(2).SetLanes(4))
	if err != nil {
		t.Skipf("refused: %v", err)
	}
	m := laneHashes(t, h, 4)
	for i := 1; i < 4; i++ {
		assert.Equal(t, "4", m[i][stored.FieldLanes], "lane %d's count", i)
	}
	_, err = eng.State(ctx, h)
	assert.NoError(t, err)
	_, err = eng.Apply(ctx, instructions.New(idOnLane("c", 4, 3), h).Credit("CNY", "1.00"))
	assert.NoError(t, err, "a credit whose id picks lane 3")
}

// TestHot_SweepsRaceDebitsAndCredits: two sweepers, debits on lane 0 and
// credits to the lanes at once: the total is always the credits less the
// debits that passed, and a final sweep leaves it all in lane 0.
func TestHot_SweepsRaceDebitsAndCredits(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 4)
	var credited, debited [2]int64
	done := make(chan struct{})
	errs := make(chan error, 4)
	for w := range 2 {
		go func() {
			for i := range 60 {
				_, err := eng.Apply(ctx, instructions.New("c"+strconv.Itoa(w)+"-"+strconv.Itoa(i), h).Credit("CNY", "1.00"))
				if err != nil {
					errs <- err
					return
				}
				credited[w] += 100
				_, err = eng.Apply(ctx, instructions.New("d"+strconv.Itoa(w)+"-"+strconv.Itoa(i), h).Debit("CNY", "0.50"))
				if err == nil {
					debited[w] += 50
				} else if !strings.Contains(err.Error(), "INSUFFICIENT_FUNDS") {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	var sweepers sync.WaitGroup
	for range 2 {
		sweepers.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
					_, _ = engine.New(rdb, nil).SweepHot(ctx, h)
				}
			}
		})
	}
	for range 2 {
		require.NoError(t, <-errs)
	}
	close(done)
	sweepers.Wait()
	want := credited[0] + credited[1] - debited[0] - debited[1]
	_, err := eng.SweepHot(ctx, h)
	if err != nil {
		for i, m := range laneHashes(t, h, 4) {
			t.Logf("lane %d: seq %s CNY %s", i, m[stored.FieldSeq], m[stored.PrefixBalance+"CNY"])
		}
	}
	require.NoError(t, err, "a sweep after every other ended")
	assert.Equal(t, want, hotTotal(t, h, 4))
	m := laneHashes(t, h, 4)
	assert.Equal(t, strconv.FormatInt(want, 10), m[0][stored.PrefixBalance+"CNY"], "lane 0 holds it all")
	t.Logf("credited %d, debited %d", credited[0]+credited[1], debited[0]+debited[1])
}

// TestHot_WhatASweepLeavesInRedis measures the keys a sweep leaves
// behind once it is done: its transfer record and its steps' idempotency
// records, kept for the idempotency TTL (24 h by default). At one sweep a
// second per lane that received anything, that is what a hot holder costs
// in Redis on top of its lanes; docs/hot-holders.md's "What it costs" does
// not count it. The bound below is one idempotency record of a credit.
func TestHot_WhatASweepLeavesInRedis(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 4)
	const rounds = 20
	var ids []string
	for r := range rounds {
		for lane := 1; lane < 4; lane++ {
			_, err := eng.Apply(ctx, instructions.New(idOnLane("r"+strconv.Itoa(r)+"-", 4, lane), h).Credit("CNY", "1.00"))
			require.NoError(t, err)
		}
		m := laneHashes(t, h, 4)
		for lane := 1; lane < 4; lane++ {
			seq, _ := strconv.ParseInt(m[lane][stored.FieldSeq], 10, 64)
			ids = append(ids, engine.HotSweepID(h, lane, seq))
		}
		got, err := eng.SweepHot(ctx, h)
		require.NoError(t, err)
		require.Equal(t, 3, got.Moved)
	}
	var bytes, keys int64
	var maxTTL time.Duration
	for _, id := range ids {
		ks := []string{cluster.Transfer(id)}
		for lane := range 4 {
			for _, suffix := range []string{":p", ":c", ":a", ""} {
				ks = append(ks, cluster.Tx(instructions.LaneHolder(h, lane), "x:"+id+suffix))
			}
		}
		for _, k := range ks {
			n, err := rdb.MemoryUsage(ctx, k).Result()
			if err == nil && n > 0 {
				bytes += n
				keys++
				ttl, _ := rdb.PTTL(ctx, k).Result()
				maxTTL = max(maxTTL, ttl)
				if keys == 1 {
					t.Logf("e.g. %s: %d bytes, TTL %s", k, n, ttl)
				}
			}
		}
	}
	t.Logf("%d sweep transfers leave %d keys, %d bytes: %d bytes each", len(ids), keys, bytes, bytes/int64(len(ids)))
	assert.Positive(t, keys)
	assert.LessOrEqual(t, maxTTL, time.Hour+engine.DefaultTransferTimeout,
		"what a sweep leaves lives an hour at most (its record a transfer timeout more), not the idempotency TTL")
}

// TestHot_JSONDoorRefusesLanesOps: the library's JSON door cannot open or
// raise the lanes (other slots), and lane 0 raised alone would let two
// engines route one credit by two counts: it refuses open with lanes and
// set_lanes, writing nothing.
func TestHot_JSONDoorRefusesLanesOps(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	require.NoError(t, eng.Load(ctx))
	plain := newHolder(t, nil)
	before := laneHashes(t, plain, 4)
	for id, text := range map[string]string{
		"r1": `{"id":"r1","holder":"` + plain + `","ops":[{"op":"set_lanes","lanes":4}]}`,
		"r2": `{"id":"r2","holder":"` + plain + `","ops":[{"op":"resume"},{"op":"set_lanes","lanes":4}]}`,
	} {
		out := fcallJSON(t, plain, id, text)
		assert.Equal(t, "INVALID_INSTRUCTION", cliCode(out), out)
		assert.Contains(t, out, "through the engine")
	}
	assert.Equal(t, before, laneHashes(t, plain, 4), "nothing written")
	fresh := newID("fresh")
	out := fcallJSON(t, fresh, "o", `{"id":"o","holder":"`+fresh+`","ops":[{"op":"open","lanes":4}]}`)
	assert.Equal(t, "INVALID_INSTRUCTION", cliCode(out), out)
	n, err := rdb.Exists(ctx, cluster.Holder(fresh)).Result()
	require.NoError(t, err)
	assert.Zero(t, n)
}

// TestHot_TransferPayerBeyondLane0SaysWhatWaits: a hot holder paying in a
// transfer more than lane 0 holds aborts it INSUFFICIENT_FUNDS, nothing
// changed, its message saying what waits in the lanes, as a debit's does:
// on the one-payer path and on the two phases.
func TestHot_TransferPayerBeyondLane0SaysWhatWaits(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHot(t, 3)
	for range 12 {
		_, err := eng.Apply(ctx, instructions.New(newID("c"), h).Credit("CNY", "5.00"))
		require.NoError(t, err)
	}
	other := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "100.00").Freeze("CNY", "10.00", "ord-1", 0)
	})
	before := laneHashes(t, h, 3)
	lane0, _ := strconv.ParseInt(before[0][stored.PrefixBalance+"CNY"], 10, 64)
	require.Less(t, lane0, int64(6000), "not every credit reached lane 0")
	waiting := instructions.FromUnits(6000-lane0, 2) + " CNY more waits"
	pay := []instructions.Part{
		{Holder: h, Ops: instructions.New("", "").Debit("CNY", "60.00").Ops},
		{Holder: other, Ops: instructions.New("", "").Credit("CNY", "60.00").Ops}}
	trade := []instructions.Part{ // two paying parts: the two phases
		{Holder: h, Ops: instructions.New("", "").Debit("CNY", "60.00").Credit("CNY", "10.00").Ops},
		{Holder: other, Ops: instructions.New("", "").SettleLeg("ord-1", "CNY", "10.00").Credit("CNY", "60.00").Ops}}
	for name, parts := range map[string][]instructions.Part{"one payer": pay, "two phases": trade} {
		otherBefore := readRaw(t, other).Hashes
		st, err := eng.Transfer(ctx, instructions.Transfer{ID: newID("x"), Parts: parts})
		require.NoError(t, err, name)
		assert.Equal(t, engine.TransferAborted, st.Status, name)
		require.NotNil(t, st.Error, name)
		assert.Equal(t, instructions.CodeInsufficientFunds, st.Error.Code, name)
		assert.Contains(t, st.Error.Message, waiting, name)
		assert.Equal(t, before, laneHashes(t, h, 3), "%s: nothing changed on the hot holder", name)
		otherAfter := readRaw(t, other).Hashes
		if name == "two phases" { // the other's prepare applied, then its abort: its seq moved
			delete(otherBefore, hMeta)
			delete(otherAfter, hMeta)
		}
		assert.Equal(t, otherBefore, otherAfter, "%s: the other's accounts unchanged", name)
	}
}
