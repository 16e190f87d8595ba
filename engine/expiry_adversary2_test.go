package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// xa2MaxCNY is 2^53-1 minor units of CNY (scale 2).
const xa2MaxCNY = "90071992547409.91"

// xa2WaitPast waits until the server clock has passed ms.
func xa2WaitPast(t *testing.T, ms int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for serverNowMs(t) <= ms {
		require.True(t, time.Now().Before(deadline), "the server's clock never passed %d", ms)
		time.Sleep(10 * time.Millisecond)
	}
}

// xa2SameSlot finds a fresh holder id in the slot of holder.
func xa2SameSlot(holder string) string {
	slot := cluster.HolderSlot(holder)
	for {
		if h := newID("ys"); cluster.HolderSlot(h) == slot {
			return h
		}
	}
}

// xa2Quiet is a logger for sweepers whose refusals are the point of a test.
func xa2Quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// xa2Open opens holder with setup ops.
func xa2Open(t *testing.T, holder string, setup func(instructions.Instruction) instructions.Instruction) {
	t.Helper()
	in := instructions.New(newID("open"), holder).Open()
	if setup != nil {
		in = setup(in)
	}
	apply(t, in)
}

// A slot's expiry index is read from its earliest entry, at most Limit
// (default 256) a pass, and an entry whose release the script refuses
// (OVERFLOW: the holder's available is full) stays in the index, due, at
// the head. One holder with 256 expired holds it cannot take back (a market
// maker's orders, its available at 2^53-1) used to fill every pass's window
// of its slot for good: another holder of the same slot, whose hold expired
// later, was never released, its money frozen for as long as the first
// holder stayed full. Now a read that gives Limit entries makes the next
// skip them (dueOn), so the other hold is released on the next pass.
func TestExpiryAdversary2_RefusedReleasesDoNotStarveTheRestOfTheSlot(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	full := newID("mm")
	xa2Open(t, full, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "2.56") })
	for b := 0; b < 4; b++ { // 256 holds of 0.01 CNY, 64 to an instruction, each expired at once
		in := newIn(full)
		for i := 0; i < 64; i++ {
			in = in.Freeze("CNY", "0.01", fmt.Sprintf("o%03d", b*64+i), time.Millisecond)
		}
		apply(t, in)
	}
	apply(t, newIn(full).Credit("CNY", xa2MaxCNY))
	t.Cleanup(func() { // room made: the next sweep (the one below, or any test's) releases everything
		apply(t, newIn(full).Debit("CNY", xa2MaxCNY))
		_ = engine.NewSweeper(eng, &engine.SweeperOptions{Logger: xa2Quiet()}).Sweep(context.Background())
	})

	other := xa2SameSlot(full)
	xa2Open(t, other, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "10.00").Freeze("CNY", "4.00", "o", 200*time.Millisecond)
	})
	xa2WaitPast(t, holdExpiry(t, other, "o"))

	// The daemon's sweeper (Run) reads the slots whose entries fall due,
	// Limit entries from the head of each, every pass.
	var log bytes.Buffer // written by the sweeper only, read once it has stopped
	sw := engine.NewSweeper(eng, &engine.SweeperOptions{Interval: 50 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = sw.Run(sctx); close(done) }()
	released := func() bool { return len(state(t, other).Holds) == 0 }
	ok := assert.Eventually(t, released, 20*time.Second, 50*time.Millisecond,
		"another holder's expired hold, in the same slot, is released")
	cancel()
	<-done
	if !ok {
		t.Logf("sweeper after the wait: %+v", sw.Stats())
		return
	}
	assert.Equal(t, instructions.Balance{Available: "10.00", Frozen: "0.00"}, state(t, other).Balances["CNY"])
	// The refusals are logged one line a pass, not one a hold.
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	assert.LessOrEqual(t, int64(len(lines)), sw.Stats().Sweeps+1, "%s", log.String())
	assert.Regexp(t, `count=(25[6-9]|2[6-9]\d|[3-9]\d\d)\b`, lines[0], "the head's 256 refusals (and any other test's) in one line")
}

// Pins exactly once at scale: a holder with 2,048 holds expiring together
// (eight passes' worth at the default Limit), two daemons' sweepers (two
// engines) running at once, and an expiry index of another type in some
// other slot (every pass then fails after releasing what the other slots
// gave). Every hold is released once: one "hold expired" event per hold,
// under the sweeper's id for that hold and expiry, the money back once to
// the cent, the index emptied.
func TestExpiryAdversary2_ThousandsOfHoldsTwoDaemonsReleaseEachOnce(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	const holds = 2048
	big := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "100.00") })
	for b := 0; b < holds/64; b++ {
		in := newIn(big)
		for i := 0; i < 64; i++ {
			in = in.Freeze("CNY", "0.01", fmt.Sprintf("o%04d", b*64+i), 300*time.Millisecond)
		}
		apply(t, in)
	}
	var badKey string
	for badKey == "" || cluster.Slot(badKey) == cluster.HolderSlot(big) {
		badKey = cluster.Expiry(cluster.HolderSlot(newID("bad")))
	}
	require.NoError(t, rdb.Set(ctx, badKey, "not a zset", 0).Err())
	t.Cleanup(func() { _ = rdb.Del(context.Background(), badKey).Err() })

	sctx, cancel := context.WithCancel(ctx)
	var done []chan struct{}
	for _, e := range []*engine.Engine{eng, engine.New(rdb, nil)} {
		sw := engine.NewSweeper(e, &engine.SweeperOptions{Interval: 50 * time.Millisecond, Logger: xa2Quiet()})
		d := make(chan struct{})
		done = append(done, d)
		go func() { _ = sw.Run(sctx); close(d) }()
	}
	require.Eventually(t, func() bool { return len(state(t, big).Holds) == 0 }, 60*time.Second, 100*time.Millisecond)
	cancel()
	for _, d := range done {
		<-d
	}

	st := state(t, big)
	assert.Equal(t, instructions.Balance{Available: "100.00", Frozen: "0.00"}, st.Balances["CNY"])
	raw := readRaw(t, big)
	assert.Empty(t, raw.Expiry)
	seen := map[string]int{}
	for _, ev := range raw.Events {
		if ev["memo"] != "hold expired" {
			continue
		}
		var ops []struct{ Op, Hold, Ms string }
		require.NoError(t, json.Unmarshal([]byte(ev["ops"].(string)), &ops))
		require.Len(t, ops, 1)
		ms, err := strconv.ParseInt(ops[0].Ms, 10, 64)
		require.NoError(t, err)
		assert.Equal(t, engine.SweepID(big, ops[0].Hold, ms), ev["id"])
		seen[ops[0].Hold]++
	}
	assert.Len(t, seen, holds, "every hold released")
	for h, n := range seen {
		assert.Equal(t, 1, n, "hold %s released once", h)
	}
	assert.Equal(t, int64(1+holds/64+holds), st.Seq, "one applied instruction per release, nothing else")
}

// Pins a hot holder's hold (in lane 0) holding funds, points and a coupon
// with its own expiry, released by the sweeper: everything comes back
// available, the coupon keeps its own expiry; the release's event names the
// sweeper's id for that hold and expiry, the default counterparty, the memo
// "hold expired" and the expiry it required; a second sweep writes nothing.
func TestExpiryAdversary2_HotHolderLane0HoldSweptWithItsEvent(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hot := newID("hot")
	apply(t, instructions.New(newID("open"), hot).OpenHot(4))
	for i := 0; i < 4; i++ {
		apply(t, newIn(hot).Credit("CNY", "5.00"))
	}
	_, err := eng.SweepHot(ctx, hot) // the lanes' credits into lane 0
	require.NoError(t, err)
	cpnExp := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	apply(t, newIn(hot).GrantCoupon("c1", cpnExp).EarnPoints("50"))
	ttl := int64(200)
	in := newIn(hot).Freeze("CNY", "3.00", "o", 200*time.Millisecond)
	in.Ops = append(in.Ops, instructions.Op{Op: instructions.OpLockCoupon, Coupon: "c1", Hold: "o", TTLMs: &ttl},
		instructions.Op{Op: instructions.OpFreezePoints, Amount: "20", Hold: "o"})
	apply(t, in)
	exp := holdExpiry(t, hot, "o")
	xa2WaitPast(t, exp)

	sw := engine.NewSweeper(eng, &engine.SweeperOptions{Logger: xa2Quiet()})
	require.NoError(t, sw.Sweep(ctx))
	st := state(t, hot)
	assert.Empty(t, st.Holds)
	assert.Equal(t, instructions.Balance{Available: "20.00", Frozen: "0.00"}, st.Balances["CNY"])
	assert.Equal(t, instructions.Points{Available: "50", Frozen: "0"}, st.Points)
	assert.Equal(t, "available", st.Coupons["c1"])
	raw := readRaw(t, hot)
	assert.Equal(t, "available|"+strconv.FormatInt(cpnExp.UnixMilli(), 10), raw.Hashes[hCoupons]["c1"], "the coupon keeps its own expiry")
	last := raw.Events[len(raw.Events)-1]
	assert.Equal(t, engine.SweepID(hot, "o", exp), last["id"])
	assert.Equal(t, instructions.DefaultCounterparty, last["cp"])
	assert.Equal(t, "hold expired", last["memo"])
	var ops []struct {
		Op, Hold, Ms string
		Mv           [][]string
	}
	require.NoError(t, json.Unmarshal([]byte(last["ops"].(string)), &ops))
	require.Len(t, ops, 1)
	assert.Equal(t, "release", ops[0].Op)
	assert.Equal(t, "o", ops[0].Hold)
	assert.Equal(t, strconv.FormatInt(exp, 10), ops[0].Ms)
	assert.ElementsMatch(t, [][]string{{"CNY", "frozen", "avail", "300"}, {"points", "frozen", "avail", "20"}}, ops[0].Mv)

	require.NoError(t, sw.Sweep(ctx))
	assert.Equal(t, raw, readRaw(t, hot), "a second sweep writes nothing")
}

// An expiry index entry the library never writes, put there by hand: a
// member without a space (no holder and hold), or one scored 0, which as a
// release's expiry would mean "whatever its expiry" and take the hold it
// names, expiring or not. The sweeper removes both and releases nothing:
// the holder's hold without an expiry stays as it was.
func TestExpiryAdversary2_AMalformedIndexEntryIsRemovedNotReleased(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "10.00").Freeze("CNY", "4.00", "o", 0)
	})
	exp := cluster.Expiry(cluster.HolderSlot(h))
	require.NoError(t, rdb.ZAdd(ctx, exp, redis.Z{Score: 0, Member: h + " o"}, redis.Z{Score: 1, Member: "nospace-" + h}).Err())
	before := state(t, h)

	sw := engine.NewSweeper(eng, &engine.SweeperOptions{Logger: xa2Quiet()})
	require.NoError(t, sw.Sweep(ctx))
	assert.Equal(t, before, state(t, h), "the hold without an expiry is not released")
	for _, m := range []string{h + " o", "nospace-" + h} {
		_, err := rdb.ZScore(ctx, exp, m).Result()
		assert.ErrorIs(t, err, redis.Nil, "%q is removed", m)
	}
	assert.GreaterOrEqual(t, sw.Stats().Stale, int64(2))
}
