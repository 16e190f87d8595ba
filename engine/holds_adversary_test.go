package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/internal/libcall"
	"github.com/atomledger/atomledger/lua"
	"github.com/atomledger/atomledger/stored"
)

// holdExpiry reads the expiry of holder's open hold from its hash.
func holdExpiry(t *testing.T, holder, hold string) int64 {
	t.Helper()
	raw, err := rdb.HGet(context.Background(), cluster.Holder(holder), stored.PrefixHold+hold).Result()
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

// At the expiry's very millisecond a hold is expired: settle is refused
// HOLD_EXPIRED and release is allowed; one millisecond before, settle is
// allowed. A script reads the server's clock and sets the hold's expiry
// (hash and index alike) to that millisecond plus d, the settle or release
// follows in the same pipeline, then a read of the clock: a sample counts
// where the clock read after is still the millisecond read before, so the
// op ran at exactly expiry - d.
func TestHoldsAdversary_ExpiryAtTheExactMillisecond(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "10.00").Freeze("CNY", "10.00", "o", time.Hour)
	})
	slot := cluster.HolderSlot(h)
	const setExpiry = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local exp = now + tonumber(ARGV[1])
local v = redis.call('HGET', KEYS[1], 'h:o')
redis.call('HSET', KEYS[1], 'h:o', string.format('%d', exp) .. string.sub(v, (string.find(v, '|', 1, true))))
redis.call('ZADD', KEYS[2], exp, ARGV[2])
return now`
	const clock = `local t = redis.call('TIME') return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`
	for _, c := range []struct {
		name string
		op   string
		d    int
		code string // "" for applied
	}{
		{"a settle at the expiry's millisecond is refused", "settle", 0, "HOLD_EXPIRED"},
		{"a settle a millisecond before is applied", "settle", 1, ""},
		{"a release at the expiry's millisecond is applied", "release", 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			exact := 0
			for try := 0; exact < 5; try++ {
				require.Less(t, try, 2000, "the clock never stayed on one millisecond for a pipeline")
				id := newID("edge")
				text := fmt.Sprintf(`{"id":%q,"holder":%q,"ops":[{"op":%q,"hold":"o","leg":"CNY","amount":"1"}]}`, id, h, c.op)
				before := readRaw(t, h)
				var set, after *redis.Cmd
				var apply *redis.Cmd
				_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
					set = p.Eval(ctx, setExpiry, []string{cluster.Holder(h), cluster.Expiry(slot)}, c.d, h+" o")
					apply = p.FCall(ctx, lua.FuncApplyJSON, jsonKeys(h, id), text)
					after = p.Eval(ctx, clock, []string{cluster.Holder(h)})
					return nil
				})
				require.NoError(t, err)
				reply, err := apply.Slice()
				require.NoError(t, err)
				outcome := reply[1].(string)
				if c.d == 0 {
					// Run at or after the expiry whatever the clock read after.
					assert.Equal(t, c.code, cliCode(outcome), "%s", outcome)
				}
				if set.Val().(int64) != after.Val().(int64) {
					continue
				}
				exact++
				require.Equal(t, c.code, cliCode(outcome), "%s", outcome)
				if c.code != "" {
					// Nothing but the expiry the script itself set.
					now := readRaw(t, h)
					before.Hashes[hHolds]["o"] = now.Hashes[hHolds]["o"]
					before.Expiry[h+" o"] = now.Expiry[h+" o"]
					assert.Equal(t, before, now)
				}
			}
		})
	}
	st := state(t, h)
	assert.Equal(t, st.Balances["CNY"].Frozen, st.Holds["o"].Legs["CNY"])
}

// Settles sent back to back across a hold's expiry, while at the expiry the
// sweeper's release and a client's release of the same hold race: every
// settle the script applied ran before the expiry by the server's clock,
// every later one is refused, exactly one release gives back what is left,
// and the money adds up. At least one settle runs before the expiry (the
// hold's ttl doubled until the first gets there in time) and the settles
// end on a refusal (the hold outlasts any run of them), so both sides of
// the expiry are reached, however fast or slow the machine.
func TestHoldsAdversary_SettlesAndReleasesRaceTheExpiry(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	const holders, held = 6, 100000 // 1000.00 CNY under the hold
	for range holders {
		var h string
		for ttl := 300 * time.Millisecond; ; ttl *= 2 {
			require.Less(t, ttl, time.Minute, "no settle reached the hold before its expiry")
			h = newHolder(t, func(in instructions.Instruction) instructions.Instruction {
				return in.Credit("CNY", "1000.00").EarnPoints("100").GrantCoupon("c", time.Time{}).
					Freeze("CNY", "1000.00", "o", ttl).FreezePoints("100", "o").LockCoupon("c", "o")
			})
			_, err := eng.Apply(ctx, newIn(h).SettleLeg("o", "CNY", "0.01"))
			if err == nil {
				break
			}
			require.ErrorIs(t, err, engine.ErrHoldExpired)
			t.Logf("the hold of %v expired before the first settle: again with %v", ttl, 2*ttl)
		}
		exp := holdExpiry(t, h, "o")
		settled := 1
		var refusal, sweepErr, clientErr error
		var wg sync.WaitGroup
		wg.Add(3)
		go func() {
			defer wg.Done()
			for settled < held-1 { // never the whole hold: it stays open until it expires
				_, err := eng.Apply(ctx, newIn(h).SettleLeg("o", "CNY", "0.01"))
				if err != nil {
					refusal = err
					return
				}
				settled++
			}
		}()
		afterExpiry := func() {
			deadline := time.Now().Add(2 * time.Minute)
			for {
				now, err := rdb.Time(ctx).Result()
				if err == nil && now.UnixMilli() >= exp {
					return
				}
				if !assert.True(t, time.Now().Before(deadline), "the server's clock did not reach the expiry: %v", err) {
					return
				}
				time.Sleep(time.Millisecond)
			}
		}
		go func() { defer wg.Done(); afterExpiry(); _, sweepErr = eng.ReleaseExpired(ctx, h, "o", exp) }()
		go func() { defer wg.Done(); afterExpiry(); _, clientErr = eng.Apply(ctx, newIn(h).Release("o")) }()
		wg.Wait()

		require.Error(t, refusal, "the settles ended on a refusal: some were sent after the expiry")
		assert.True(t, errors.Is(refusal, engine.ErrHoldExpired) || errors.Is(refusal, engine.ErrHoldNotFound), "%v", refusal)
		require.True(t, (sweepErr == nil) != (clientErr == nil), "one release applies: sweeper %v, client %v", sweepErr, clientErr)
		for _, err := range []error{sweepErr, clientErr} {
			if err != nil {
				assert.ErrorIs(t, err, engine.ErrHoldNotFound, "the other release finds the hold gone")
			}
		}
		st := state(t, h)
		left := instructions.FromUnits(int64(held-settled), 2)
		assert.Equal(t, instructions.Balance{Available: left, Frozen: "0.00"}, st.Balances["CNY"])
		assert.Equal(t, instructions.Points{Available: "100", Frozen: "0"}, st.Points)
		assert.Equal(t, "available", st.Coupons["c"])
		assert.Empty(t, st.Holds)
		assert.Empty(t, readRaw(t, h).Expiry)

		// The events: each applied settle ran before the expiry, the release at or after it.
		var settles, releases int
		for _, ev := range readRaw(t, h).Events {
			ops, ts := ev["ops"].(string), ev["ts"].(string)
			ms, err := strconv.ParseInt(ts, 10, 64)
			require.NoError(t, err)
			switch {
			case strings.Contains(ops, `"op":"settle"`):
				settles++
				assert.Less(t, ms, exp, "a settle applied at %d, the hold expiring at %d", ms, exp)
			case strings.Contains(ops, `"op":"release"`):
				releases++
				assert.GreaterOrEqual(t, ms, exp)
			}
		}
		assert.Equal(t, settled, settles)
		assert.Equal(t, 1, releases)
	}
}

// A direct caller of the library's apply (not the engine, not the JSON
// door, which check ids) could name a coupon, hold or asset with one of the
// characters the stored hold is written with ("|" between its parts, ","
// between legs and coupons, "=" in a leg): the hold read back would name
// other coupons or legs. A coupon "a,b" locked and settled would use the
// coupons "a" and "b" and leave "a,b" held by a closed hold; an asset "A=5"
// frozen would read back as 5 of "A". The library refuses them as
// malformed arguments, writing nothing.
func TestHoldsAdversary_DirectCallerNamesWithTheHoldSeparators(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "10.00").GrantCoupon("a", time.Time{}).GrantCoupon("b", time.Time{})
	})
	for _, c := range []struct {
		name string
		in   instructions.Instruction
		at   int // the argument edited
		to   string
	}{
		{"a coupon with a comma", newIn(h).GrantCoupon("a-b", time.Time{}), libcall.Fixed + 4, "a,b"},
		{"a hold with a bar", newIn(h).Freeze("CNY", "1.00", "o-1", 0), libcall.Fixed + 3, "o|1"},
		{"an asset with an equals sign", newIn(h).Credit("CNY", "1.00"), libcall.Fixed + 1, "CNY=5"},
		{"an asset with a comma", newIn(h).Credit("CNY", "1.00"), libcall.Fixed + 1, "CNY,B"},
	} {
		t.Run(c.name, func(t *testing.T) {
			keys, args, err := eng.Encode(c.in)
			require.NoError(t, err)
			args[c.at] = c.to
			before := readRaw(t, h)
			v, err := rdb.FCall(ctx, lua.FuncApply, keys, args...).Result()
			require.NoError(t, err)
			assert.Equal(t, "err\nINVALID_INSTRUCTION\n-1\nmalformed function arguments", v.([]any)[1])
			assert.Equal(t, before, readRaw(t, h), "nothing written")
			n, err := rdb.Exists(ctx, cluster.Tx(h, c.in.ID)).Result()
			require.NoError(t, err)
			assert.Zero(t, n, "no idempotency record")
		})
	}
}

// The sweeper, running, with holds on holders in every condition: a
// suspended holder's expired hold is released (it stays suspended); a hold
// settled early leaves the index in the settle's own run; a hold partly
// settled has the rest released; the hash of a holder deleted by hand
// leaves a stale entry, removed with nothing written for that holder. Then
// a master is killed: holds on the other keep being released; it comes
// back empty (no data, no library), and a hold frozen there is released;
// so is one frozen on a master flushed while it runs.
func TestHoldsAdversary_SweeperThroughSuspensionDeletionRestartAndFlush(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	c := clustertest.StartForTest(t, clustertest.Options{Masters: 3, ExtraConfig: []string{"cluster-require-full-coverage no"}})
	cl := c.Client(nil)
	t.Cleanup(func() { _ = cl.Close() })
	e := engine.New(cl, nil)
	masters := c.MasterAddrs()
	on := func(addr string) string { // a new holder whose slot addr serves
		for {
			h := newID("sw")
			m, err := c.MasterOf(ctx, cluster.HolderSlot(h))
			require.NoError(t, err)
			if m == addr {
				return h
			}
		}
	}
	do := func(in instructions.Instruction) instructions.Result {
		t.Helper()
		res, err := e.Apply(ctx, in)
		require.NoError(t, err)
		return res
	}
	open := func(h string) instructions.Instruction {
		return instructions.New(newID("open"), h).Open().Credit("CNY", "10.00")
	}
	released := func(h string) func() bool {
		return func() bool { st, err := e.State(ctx, h); return err == nil && len(st.Holds) == 0 }
	}

	a, b, cc, d := on(masters[0]), on(masters[0]), on(masters[1]), on(masters[1])
	do(open(a).GrantCoupon("c", time.Time{}).Freeze("CNY", "4.00", "o", 700*time.Millisecond).LockCoupon("c", "o").Suspend())
	do(open(b).Freeze("CNY", "4.00", "o", time.Hour))
	do(instructions.New(newID("in"), b).Settle("o"))
	_, err := cl.ZScore(ctx, cluster.Expiry(cluster.HolderSlot(b)), b+" o").Result()
	assert.ErrorIs(t, err, redis.Nil, "a hold settled early leaves the index at once")
	do(open(cc).Freeze("CNY", "4.00", "o", 700*time.Millisecond))
	require.NoError(t, cl.Del(ctx, cluster.Holder(cc)).Err())
	// Settled in part in the instruction that freezes it: a later one could
	// come after the expiry on a loaded machine, and be refused HOLD_EXPIRED.
	do(open(d).Freeze("CNY", "4.00", "o", 700*time.Millisecond).SettleLeg("o", "CNY", "1.00"))

	sw := engine.NewSweeper(e, &engine.SweeperOptions{Interval: 50 * time.Millisecond})
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = sw.Run(sctx); close(done) }()
	defer func() { cancel(); <-done }()

	require.Eventually(t, released(a), 2*time.Minute, 20*time.Millisecond, "suspended holder's hold; %+v", sw.Stats())
	require.Eventually(t, released(d), 2*time.Minute, 20*time.Millisecond, "partly settled hold; %+v", sw.Stats())
	st, err := e.State(ctx, a)
	require.NoError(t, err)
	assert.Equal(t, "suspended", st.Status)
	assert.Equal(t, instructions.Balance{Available: "10.00", Frozen: "0.00"}, st.Balances["CNY"])
	assert.Equal(t, "available", st.Coupons["c"])
	st, err = e.State(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, instructions.Balance{Available: "9.00", Frozen: "0.00"}, st.Balances["CNY"])
	require.Eventually(t, func() bool {
		return cl.Exists(ctx, cluster.Expiry(cluster.HolderSlot(cc))).Val() == 0 && sw.Stats().Stale >= 1
	}, 2*time.Minute, 20*time.Millisecond, "the deleted holder's entry; %+v", sw.Stats())
	for _, k := range keysOn(t, cl, cc) { // its open's record only: no hash again, no release recorded
		assert.NotEqual(t, cluster.Holder(cc), k)
		assert.NotContains(t, k, ":tx:"+instructions.SweepIDPrefix)
	}

	// masters[0] down (the two others still a majority, serving their slots):
	// masters[1]'s holds still released.
	require.NoError(t, c.Kill(masters[0]))
	f := on(masters[1])
	do(open(f).Freeze("CNY", "4.00", "o", 300*time.Millisecond))
	require.Eventually(t, released(f), 2*time.Minute, 20*time.Millisecond, "a hold beside a dead master; %+v", sw.Stats())

	// Back empty: no holders, no library; a new hold there is released.
	require.NoError(t, c.Restart(ctx, masters[0]))
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Minute)
	require.NoError(t, c.WaitReady(wctx))
	wcancel()
	_, err = e.State(ctx, a)
	require.ErrorIs(t, err, engine.ErrHolderNotFound, "the master came back empty")
	g := on(masters[0])
	first := open(g).Freeze("CNY", "4.00", "o", 300*time.Millisecond) // sent again as it is: a retry replays
	require.Eventually(t, func() bool { _, err := e.Apply(ctx, first); return err == nil },
		2*time.Minute, 50*time.Millisecond, "apply on the restarted master")
	require.Eventually(t, released(g), 2*time.Minute, 20*time.Millisecond, "a hold on the restarted master; %+v", sw.Stats())
	st, err = e.State(ctx, g)
	require.NoError(t, err)
	assert.Equal(t, instructions.Balance{Available: "10.00", Frozen: "0.00"}, st.Balances["CNY"])

	// FLUSHALL and FUNCTION FLUSH on a master that stays up, a hold of its
	// pending: a hold frozen there afterwards is released.
	k := on(masters[1])
	do(open(k).Freeze("CNY", "4.00", "o", time.Hour))
	node := redis.NewClient(&redis.Options{Addr: masters[1]})
	defer node.Close()
	require.NoError(t, node.FlushAll(ctx).Err())
	require.NoError(t, node.FunctionFlush(ctx).Err())
	m := on(masters[1])
	do(open(m).Freeze("CNY", "4.00", "o", 300*time.Millisecond))
	require.Eventually(t, released(m), 2*time.Minute, 20*time.Millisecond, "a hold frozen after a flush; %+v", sw.Stats())
}

// A checkout (a coupon, points, money, and a hold with a coupon in it) in
// one instruction, each part made to fail in turn after the parts before it
// passed: the code of that part, its op index, and the holder's whole state
// (hash, events, expiry entries) as it was. Then the checkout applies.
func TestHoldsAdversary_CheckoutEachPartFailsInTurn(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "100.00").EarnPoints("500").GrantCoupon("c-ok", time.Time{}).GrantCoupon("c-2", time.Time{}).
			GrantCoupon("c-used", time.Time{}).RedeemCoupon("c-used").GrantCoupon("c-old", time.UnixMilli(1)).
			Freeze("CNY", "0.01", "ord-1", time.Hour)
	})
	type part func(instructions.Instruction) instructions.Instruction
	coupon := func(c string) part {
		return func(in instructions.Instruction) instructions.Instruction { return in.RedeemCoupon(c) }
	}
	points := func(n string) part {
		return func(in instructions.Instruction) instructions.Instruction { return in.SpendPoints(n) }
	}
	money := func(a string) part {
		return func(in instructions.Instruction) instructions.Instruction { return in.Debit("CNY", a) }
	}
	freeze := func(a, hold string) part {
		return func(in instructions.Instruction) instructions.Instruction {
			return in.Freeze("CNY", a, hold, time.Minute)
		}
	}
	lock := func(c string) part {
		return func(in instructions.Instruction) instructions.Instruction { return in.LockCoupon(c, "pay-1") }
	}
	ok := []part{coupon("c-ok"), points("200"), money("80.00"), freeze("19.99", "pay-1"), lock("c-2")}
	for _, c := range []struct {
		name string
		at   int
		bad  part
		code instructions.Code
	}{
		{"a coupon that does not exist", 0, coupon("c-none"), instructions.CodeCouponNotFound},
		{"a coupon already used", 0, coupon("c-used"), instructions.CodeCouponUnavailable},
		{"a coupon expired", 0, coupon("c-old"), instructions.CodeCouponExpired},
		{"more points than there are", 1, points("501"), instructions.CodeInsufficientPoints},
		{"more money than there is", 2, money("100.00"), instructions.CodeInsufficientFunds},
		{"a freeze of more than the debit left", 3, freeze("20.00", "pay-1"), instructions.CodeInsufficientFunds},
		{"a freeze under a hold already open", 3, freeze("19.99", "ord-1"), instructions.CodeHoldExists},
		{"a lock of the coupon redeemed by the first op", 4, lock("c-ok"), instructions.CodeCouponUnavailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := newIn(h).WithCounterparty("merchant:88")
			for i, p := range ok {
				if i == c.at {
					p = c.bad
				}
				in = p(in)
			}
			refused(t, h, in, c.code, c.at)
		})
	}
	in := newIn(h).WithCounterparty("merchant:88")
	for _, p := range ok {
		in = p(in)
	}
	res := apply(t, in)
	assert.Equal(t, instructions.Balance{Available: "0.00", Frozen: "20.00"}, res.Balances["CNY"])
	assert.Equal(t, &instructions.Points{Available: "300", Frozen: "0"}, res.Points)
	assert.Equal(t, map[string]string{"c-ok": "used", "c-2": "held:pay-1"}, res.Coupons)
}

// Points at 2^53-1 in and out of a hold (with a CNY leg beside them), with
// the two checks a points op can fail (points, then overflow) each failing
// alone and both at once.
func TestHoldsAdversary_PointsAtTheLimit(t *testing.T) {
	needRedis(t)
	const max = "9007199254740991"
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.EarnPoints(max).FreezePoints(max, "p").Credit("CNY", "1.00").Freeze("CNY", "1.00", "p", 0)
	})
	assert.Equal(t, instructions.Points{Available: "0", Frozen: max}, state(t, h).Points)
	refused(t, h, newIn(h).FreezePoints("1", "q"), instructions.CodeInsufficientPoints, 0) // and frozen would pass 2^53-1
	apply(t, newIn(h).EarnPoints(max))
	refused(t, h, newIn(h).FreezePoints("1", "q"), instructions.CodeOverflow, 0)
	// The whole hold: its CNY leg is released first, then points overflow; nothing changes.
	refused(t, h, newIn(h).Release("p"), instructions.CodeOverflow, 0)
	refused(t, h, newIn(h).ReleaseLeg("p", "points", "1"), instructions.CodeOverflow, 0)
	refused(t, h, newIn(h).SettleLeg("p", "points", "9007199254740992"), instructions.CodeInvalidAmount, 0)
	res := apply(t, newIn(h).SettleLeg("p", "points", "1"))
	assert.Equal(t, "9007199254740990", res.Holds["p"].Legs["points"])
	res = apply(t, newIn(h).SpendPoints(max))
	assert.Equal(t, &instructions.Points{Available: "0", Frozen: "9007199254740990"}, res.Points)
	refused(t, h, newIn(h).SpendPoints("1"), instructions.CodeInsufficientPoints, 0)
	res = apply(t, newIn(h).Release("p"))
	assert.Equal(t, &instructions.Points{Available: "9007199254740990", Frozen: "0"}, res.Points)
	assert.Equal(t, instructions.Balance{Available: "1.00", Frozen: "0.00"}, res.Balances["CNY"])
	assert.Empty(t, res.Holds)
	assert.NotContains(t, readRaw(t, h).Hashes[hPoints], "frozen", "frozen points at zero are deleted")
	apply(t, newIn(h).EarnPoints("1"))
	refused(t, h, newIn(h).EarnPoints("1"), instructions.CodeOverflow, 0)
}

// A coupon's expiry and its hold's: a coupon that expires while its hold
// is open is captured by the settle (the hold reserved it while it was
// valid) and, released, goes back available but unusable; a hold that
// expires before its coupon cannot be settled, and releasing it gives the
// coupon back usable. Ids at 64 characters, and coupons named like states.
func TestHoldsAdversary_CouponExpiryAgainstHoldExpiry(t *testing.T) {
	needRedis(t)
	exp := serverNowMs(t) + couponLead
	long64 := strings.Repeat("c", 64)
	hold64 := strings.Repeat("h", 64)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		in = in.GrantCoupon("c1", time.UnixMilli(exp)).GrantCoupon("c2", time.UnixMilli(exp)).GrantCoupon("c3", time.Time{}).
			GrantCoupon(long64, time.Time{}).GrantCoupon("held:a", time.Time{}).GrantCoupon("used", time.Time{})
		in = lockFor(lockFor(lockFor(in, "c1", "a", time.Hour), "c2", "b", time.Hour), "c3", "c", time.Millisecond)
		return lockFor(in, long64, hold64, time.Hour).LockCoupon("held:a", hold64).LockCoupon("used", "b")
	})
	refused(t, h, newIn(h).GrantCoupon(long64+"c", time.Time{}), instructions.CodeInvalidID, 0)
	waitServerPast(t, exp)

	res := apply(t, newIn(h).Settle("a"))
	assert.Equal(t, map[string]string{"c1": "used|" + strconv.FormatInt(exp, 10)}, rawCoupons(t, h, "c1"))
	assert.Empty(t, res.Holds)
	apply(t, newIn(h).Release("b"))
	assert.Equal(t, "available", state(t, h).Coupons["c2"])
	refused(t, h, newIn(h).RedeemCoupon("c2"), instructions.CodeCouponExpired, 0)
	refused(t, h, newIn(h).LockCoupon("c2", "d"), instructions.CodeCouponExpired, 0)
	apply(t, newIn(h).RedeemCoupon("used")) // released with c2, named like a state

	refused(t, h, newIn(h).Settle("c"), instructions.CodeHoldExpired, 0)
	apply(t, newIn(h).Release("c"))
	apply(t, newIn(h).RedeemCoupon("c3"))

	res = apply(t, newIn(h).Settle(hold64))
	assert.Equal(t, map[string]string{long64: "used", "held:a": "used"}, res.Coupons)
	st := state(t, h)
	assert.Empty(t, st.Holds)
	assert.Empty(t, readRaw(t, h).Expiry)
}

// rawCoupons reads coupons' stored values (state and expiry).
func rawCoupons(t *testing.T, holder string, coupons ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range coupons {
		v, err := rdb.HGet(context.Background(), cluster.Holder(holder), stored.PrefixCoupon+c).Result()
		require.NoError(t, err)
		out[c] = v
	}
	return out
}

// lockFor locks coupon under a new hold that expires after ttl.
func lockFor(in instructions.Instruction, coupon, hold string, ttl time.Duration) instructions.Instruction {
	in = in.LockCoupon(coupon, hold)
	ms := ttl.Milliseconds()
	in.Ops[len(in.Ops)-1].TTLMs = &ms
	return in
}

// ttl_ms at its edges through the Go builder: absent (no expiry, no index
// entry), 1 ms and ten years (the expiry exactly the script's clock plus the
// ttl, as its event's ts tells), and what is refused before Redis: under a
// millisecond, negative, past ten years.
func TestHoldsAdversary_TTLAtItsEdges(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") })
	for _, c := range []struct {
		name string
		ttl  time.Duration
		ms   int64 // the hold's ttl in ms; 0 for none
	}{
		{"absent", 0, 0},
		{"one millisecond", time.Millisecond, 1},
		{"ten years", time.Duration(instructions.MaxTTLMs) * time.Millisecond, instructions.MaxTTLMs},
	} {
		t.Run(c.name, func(t *testing.T) {
			hold := newID("o")
			res := apply(t, newIn(h).Freeze("CNY", "1.00", hold, c.ttl))
			raw := readRaw(t, h)
			ts, err := strconv.ParseInt(raw.Events[len(raw.Events)-1]["ts"].(string), 10, 64)
			require.NoError(t, err)
			if c.ms == 0 {
				assert.Zero(t, res.Holds[hold].ExpiresMs)
				assert.NotContains(t, raw.Expiry, h+" "+hold)
			} else {
				assert.Equal(t, ts+c.ms, res.Holds[hold].ExpiresMs)
				assert.Equal(t, float64(ts+c.ms), raw.Expiry[h+" "+hold])
			}
			apply(t, newIn(h).Release(hold))
		})
	}
	for _, c := range []struct {
		name string
		ttl  time.Duration
	}{
		{"half a millisecond", 500 * time.Microsecond},
		{"negative", -time.Second},
		{"ten years and a millisecond", time.Duration(instructions.MaxTTLMs+1) * time.Millisecond},
	} {
		t.Run(c.name+" is refused", func(t *testing.T) {
			e := applyErr(t, newIn(h).Credit("CNY", "1.00").Freeze("CNY", "1.00", "o", c.ttl))
			assert.Equal(t, instructions.CodeInvalidInstruction, e.Code)
			assert.Equal(t, 1, e.OpIndex)
			assert.Contains(t, e.Message, "ttl_ms must be 1 .. 315360000000")
		})
	}
	st := state(t, h)
	assert.Equal(t, instructions.Balance{Available: "10.00", Frozen: "0.00"}, st.Balances["CNY"])
}

// A hold settled in part down to nothing: without a coupon it closes (its
// field, its frozen field and its index entry go in the same run); with a
// coupon it stays open, in the index, until the coupon leaves. A hold's name
// closed and opened again in one instruction, with another ttl or none: the
// index follows (the cleanup checks hash and index agree).
func TestHoldsAdversary_SettledInPartToNothingAndReopened(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "10.00").Credit("USDT", "5").GrantCoupon("c", time.Time{}).
			Freeze("CNY", "3.00", "a", time.Hour).
			Freeze("CNY", "2.00", "b", time.Hour).Freeze("USDT", "5", "b", 0).LockCoupon("c", "b")
	})
	res := apply(t, newIn(h).SettleLeg("a", "CNY", "1.00").SettleLeg("a", "CNY", "2.00"))
	assert.Empty(t, res.Holds)
	raw := readRaw(t, h)
	assert.NotContains(t, raw.Hashes[hHolds], "a")
	assert.NotContains(t, raw.Expiry, h+" a")

	res = apply(t, newIn(h).SettleLeg("b", "CNY", "2.00").SettleLeg("b", "USDT", "5"))
	assert.Equal(t, instructions.Hold{Legs: map[string]string{}, Coupons: []string{"c"}, ExpiresMs: res.Holds["b"].ExpiresMs}, res.Holds["b"])
	assert.Equal(t, instructions.Balance{Available: "5.00", Frozen: "0.00"}, res.Balances["CNY"])
	raw = readRaw(t, h)
	assert.NotContains(t, raw.Hashes[hFrozen], "CNY", "a frozen field at zero is deleted")
	assert.Contains(t, raw.Expiry, h+" b", "a hold holding only a coupon stays in the index")
	refused(t, h, newIn(h).SettleLeg("b", "CNY", "0.01"), instructions.CodeExceedsHold, 0)

	first := res.Holds["b"].ExpiresMs
	res = apply(t, newIn(h).Settle("b").Freeze("CNY", "1.00", "b", 2*time.Hour))
	assert.Equal(t, "used", res.Coupons["c"])
	assert.Greater(t, res.Holds["b"].ExpiresMs, first, "the op that opens it again sets its ttl")
	assert.Equal(t, float64(res.Holds["b"].ExpiresMs), readRaw(t, h).Expiry[h+" b"])
	res = apply(t, newIn(h).Release("b").Freeze("CNY", "1.00", "b", 0))
	assert.Zero(t, res.Holds["b"].ExpiresMs)
	assert.NotContains(t, readRaw(t, h).Expiry, h+" b", "opened again without a ttl, it leaves the index")
}

// Two checks failing in one instruction where holds, coupons, suspension
// and the sweeper's release meet: the code is the first of DESIGN.md's
// order (holder, suspended, hold, coupon, amount, overflow), and a later op
// sees the earlier ones.
func TestHoldsAdversary_PrecedenceWhereHoldsAndCouponsMeet(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	var couponExp int64 // c-old expires once locked in the hold "open"
	setup := func(in instructions.Instruction) instructions.Instruction {
		couponExp = serverNowMs(t) + couponLead
		in = in.Credit("CNY", "10.00").GrantCoupon("c-old", time.UnixMilli(couponExp)).
			Freeze("CNY", "2.00", "exp", time.Millisecond).Freeze("CNY", "2.00", "open", time.Hour).LockCoupon("c-old", "open")
		return in.Credit("CNY", "90071992547402.91") // available: 2^53-1 less 1.00
	}
	cases := []struct {
		name    string
		suspend bool
		in      func(h string) instructions.Instruction
		code    instructions.Code
		op      int
	}{
		{"a suspended holder's settle of an expired hold: the hold", true,
			func(h string) instructions.Instruction { return newIn(h).Settle("exp") }, instructions.CodeHoldExpired, 0},
		{"a suspended holder's release past 2^53-1: overflow", true,
			func(h string) instructions.Instruction { return newIn(h).Release("exp") }, instructions.CodeOverflow, 0},
		{"a coupon held and expired: expired before unavailable", false,
			func(h string) instructions.Instruction { return newIn(h).RedeemCoupon("c-old") }, instructions.CodeCouponExpired, 0},
		{"a coupon held and expired, locked elsewhere: expired", false,
			func(h string) instructions.Instruction { return newIn(h).LockCoupon("c-old", "new") }, instructions.CodeCouponExpired, 0},
		{"suspend then debit: the debit sees the suspension", false,
			func(h string) instructions.Instruction { return newIn(h).Suspend().Debit("CNY", "1.00") }, instructions.CodeHolderSuspended, 1},
		{"a release of a leg the expired hold lacks: exceeds hold", false,
			func(h string) instructions.Instruction { return newIn(h).ReleaseLeg("exp", "USDT", "1") }, instructions.CodeExceedsHold, 0},
		{"a freeze under a hold of an earlier instruction, expired: exists", false,
			func(h string) instructions.Instruction { return newIn(h).Freeze("CNY", "1000000.00", "exp", 0) }, instructions.CodeHoldExists, 0},
	}
	// Every case's holder first, so that their coupons expire in one wait.
	holders := make([]string, len(cases))
	for i := range cases {
		holders[i] = newHolder(t, setup)
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := holders[i]
			waitServerPast(t, max(holdExpiry(t, h, "exp"), couponExp))
			if c.suspend {
				apply(t, newIn(h).Suspend())
			}
			refused(t, h, c.in(h), c.code, c.op)
		})
	}
	t.Run("the sweeper's release of a hold of another expiry, past 2^53-1: not found", func(t *testing.T) {
		h := newHolder(t, setup)
		exp := holdExpiry(t, h, "exp")
		waitServerPast(t, exp)
		before := readRaw(t, h)
		_, err := eng.ReleaseExpired(ctx, h, "exp", exp+1)
		assert.ErrorIs(t, err, engine.ErrHoldNotFound)
		_, err = eng.ReleaseExpired(ctx, h, "exp", exp)
		assert.ErrorIs(t, err, engine.ErrOverflow)
		assert.Equal(t, before, readRaw(t, h))
	})
}

// Two sweepers at once (two daemons on one cluster), each with its own
// engine and client: every expired hold is released once, one event each,
// whichever sweeper got there first; the other's release replays or finds
// the hold gone.
func TestHoldsAdversary_TwoSweepersReleaseEachHoldOnce(t *testing.T) {
	needRedis(t)
	c, e := ownEngine(t)
	ctx := context.Background()
	var holders []string
	for i := range 40 {
		h := newID("two" + strconv.Itoa(i))
		holders = append(holders, h)
		_, err := e.Apply(ctx, instructions.New("open", h).Open().Credit("CNY", "10.00").EarnPoints("5").
			Freeze("CNY", "3.00", "o", 400*time.Millisecond).FreezePoints("5", "o"))
		require.NoError(t, err)
	}
	other := c.Client(nil)
	t.Cleanup(func() { _ = other.Close() })
	sweepers := []*engine.Sweeper{
		engine.NewSweeper(e, &engine.SweeperOptions{Interval: 10 * time.Millisecond}),
		engine.NewSweeper(engine.New(other, nil), &engine.SweeperOptions{Interval: 10 * time.Millisecond}),
	}
	sctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, sw := range sweepers {
		wg.Add(1)
		go func() { defer wg.Done(); _ = sw.Run(sctx) }()
	}
	defer func() { cancel(); wg.Wait() }()

	rdb := c.Client(nil)
	defer rdb.Close()
	for _, h := range holders {
		require.Eventually(t, func() bool {
			st, err := e.State(ctx, h)
			return err == nil && len(st.Holds) == 0
		}, 2*time.Minute, 20*time.Millisecond, "%s; %+v %+v", h, sweepers[0].Stats(), sweepers[1].Stats())
	}
	for _, h := range holders {
		st, err := e.State(ctx, h)
		require.NoError(t, err)
		assert.Equal(t, int64(2), st.Seq, "one release, not two")
		assert.Equal(t, instructions.Balance{Available: "10.00", Frozen: "0.00"}, st.Balances["CNY"])
		assert.Equal(t, instructions.Points{Available: "5", Frozen: "0"}, st.Points)
		msgs, err := rdb.XRange(ctx, cluster.Outbox(cluster.HolderSlot(h)), "-", "+").Result()
		require.NoError(t, err)
		n := 0
		for _, m := range msgs {
			if m.Values["holder"] == h {
				n++
			}
		}
		assert.Equal(t, 2, n, "the open and one release")
	}
	a, b := sweepers[0].Stats(), sweepers[1].Stats()
	t.Logf("sweepers: %+v, %+v", a, b)
	// A release replayed is the other sweeper's: together one each.
	assert.Equal(t, int64(len(holders)), a.Released+b.Released, "%+v %+v", a, b)
	assert.Zero(t, a.Errors+b.Errors, "%+v %+v", a, b)
}
