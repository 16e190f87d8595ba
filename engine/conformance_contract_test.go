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

// maxCNY is 2^53-1 minor units of CNY (scale 2).
const maxCNY = "90071992547409.91"

// refused applies in, which must fail with code at op, and checks that the
// holder's hash, events and expiry entries are as they were.
func refused(t *testing.T, holder string, in instructions.Instruction, code instructions.Code, op int) {
	t.Helper()
	before := readRaw(t, holder)
	e := applyErr(t, in)
	assert.Equal(t, code, e.Code, "%v", e)
	assert.Equal(t, op, e.OpIndex, "%v", e)
	assert.Equal(t, before, readRaw(t, holder), "a rejection changed the holder")
}

// serverNowMs is the Redis server's clock, which judges expiry.
func serverNowMs(t *testing.T) int64 {
	t.Helper()
	now, err := rdb.Time(context.Background()).Result()
	require.NoError(t, err)
	return now.UnixMilli()
}

// couponLead is how far past the server's clock a test sets the expiry of a
// coupon that its next instruction must still find unexpired, in ms: on a
// loaded machine that instruction can reach the server long after the clock
// was read.
const couponLead = 2000

// waitServerPast polls until the server's clock has passed ms.
func waitServerPast(t *testing.T, ms int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for serverNowMs(t) <= ms {
		require.True(t, time.Now().Before(deadline), "the server's clock never passed %d", ms)
		time.Sleep(10 * time.Millisecond)
	}
}

// DESIGN.md: "When several checks fail, the code reported is the first in
// this order: holder exists, holder not suspended, hold (exists, not
// expired), coupon (exists, not expired, available), amount (funds, points,
// hold remaining), overflow. Validation errors found before Redis come
// first of all." Each case makes two checks fail at once.
func TestConformance_PrecedenceOfTwoFailingChecks(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	// A hold "exp" of 1 ms, expired once the server's clock passes it, and
	// a coupon "c-exp" that expired long ago and was used.
	rich := func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "10.00").EarnPoints("5").GrantCoupon("c-ok", time.Time{}).
			GrantCoupon("c-exp", time.UnixMilli(1000)).
			Freeze("CNY", "2.00", "open-1", 0).Freeze("CNY", "1.00", "exp", time.Millisecond)
	}
	expiredHold := func(t *testing.T, h string) {
		raw, err := rdb.HGet(ctx, cluster.Holder(h), "h:exp").Result()
		require.NoError(t, err)
		ms, err := strconv.ParseInt(raw[:strings.IndexByte(raw, '|')], 10, 64)
		require.NoError(t, err)
		waitServerPast(t, ms)
	}
	cases := []struct {
		name     string
		suspend  bool
		op       func(instructions.Instruction) instructions.Instruction
		code     instructions.Code
		opIndex  int
		unopened bool
	}{
		{"an unknown holder before a validation error: validation wins", false, func(in instructions.Instruction) instructions.Instruction {
			return in.Debit("CNY", "1.00").Credit("CNY", "1.001")
		}, instructions.CodeInvalidAmount, 1, true},
		{"an unknown holder before funds", false, func(in instructions.Instruction) instructions.Instruction {
			return in.Debit("CNY", "1.00")
		}, instructions.CodeHolderNotFound, 0, true},
		{"suspended before a hold that exists", true, func(in instructions.Instruction) instructions.Instruction {
			return in.Freeze("CNY", "1.00", "open-1", 0)
		}, instructions.CodeHolderSuspended, 0, false},
		{"suspended before funds", true, func(in instructions.Instruction) instructions.Instruction {
			return in.Debit("CNY", "1000.00")
		}, instructions.CodeHolderSuspended, 0, false},
		{"suspended before a coupon not found", true, func(in instructions.Instruction) instructions.Instruction {
			return in.RedeemCoupon("nope")
		}, instructions.CodeHolderSuspended, 0, false},
		{"a suspended holder settles: hold not found", true, func(in instructions.Instruction) instructions.Instruction {
			return in.Settle("nope")
		}, instructions.CodeHoldNotFound, 0, false},
		{"hold exists before funds", false, func(in instructions.Instruction) instructions.Instruction {
			return in.Freeze("CNY", "1000.00", "open-1", 0)
		}, instructions.CodeHoldExists, 0, false},
		{"hold exists before points", false, func(in instructions.Instruction) instructions.Instruction {
			return in.FreezePoints("1000", "open-1")
		}, instructions.CodeHoldExists, 0, false},
		{"hold exists before coupon not found", false, func(in instructions.Instruction) instructions.Instruction {
			return in.LockCoupon("nope", "open-1")
		}, instructions.CodeHoldExists, 0, false},
		{"hold expired before exceeds hold", false, func(in instructions.Instruction) instructions.Instruction {
			return in.SettleLeg("exp", "CNY", "5.00")
		}, instructions.CodeHoldExpired, 0, false},
		{"hold expired before a leg the hold lacks", false, func(in instructions.Instruction) instructions.Instruction {
			return in.SettleLeg("exp", "USDT", "1")
		}, instructions.CodeHoldExpired, 0, false},
		{"release of an expired hold: exceeds hold", false, func(in instructions.Instruction) instructions.Instruction {
			return in.ReleaseLeg("exp", "CNY", "1.01")
		}, instructions.CodeExceedsHold, 0, false},
		{"coupon expired before used", false, func(in instructions.Instruction) instructions.Instruction {
			return in.RedeemCoupon("c-exp")
		}, instructions.CodeCouponExpired, 0, false},
		{"coupon expired before used, locked", false, func(in instructions.Instruction) instructions.Instruction {
			return in.LockCoupon("c-exp", "new-1")
		}, instructions.CodeCouponExpired, 0, false},
		{"coupon held by a hold is unavailable", false, func(in instructions.Instruction) instructions.Instruction {
			return in.LockCoupon("c-ok", "new-2").RedeemCoupon("c-ok")
		}, instructions.CodeCouponUnavailable, 1, false},
		{"a credit past 2^53-1", false, func(in instructions.Instruction) instructions.Instruction {
			return in.Credit("CNY", maxCNY)
		}, instructions.CodeOverflow, 0, false},
		{"a later op sees the earlier ones: the second debit finds no funds", false, func(in instructions.Instruction) instructions.Instruction {
			return in.Debit("CNY", "5.00").Debit("CNY", "5.00")
		}, instructions.CodeInsufficientFunds, 1, false},
		{"points before anything else of a later op", false, func(in instructions.Instruction) instructions.Instruction {
			return in.SpendPoints("5").FreezePoints("1", "new-3")
		}, instructions.CodeInsufficientPoints, 1, false},
		{"a settle of more than the leg holds", false, func(in instructions.Instruction) instructions.Instruction {
			return in.SettleLeg("open-1", "CNY", "2.01")
		}, instructions.CodeExceedsHold, 0, false},
		{"a settle of a leg the hold lacks", false, func(in instructions.Instruction) instructions.Instruction {
			return in.SettleLeg("open-1", "points", "1")
		}, instructions.CodeExceedsHold, 0, false},
		{"open of a holder that exists, even suspended", true, func(in instructions.Instruction) instructions.Instruction {
			return in.Open()
		}, instructions.CodeHolderExists, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var h string
			if c.unopened {
				h = newID("nobody")
				t.Cleanup(func() { checkInvariants(t, h) })
			} else {
				h = newHolder(t, rich)
				expiredHold(t, h)
				if c.suspend {
					apply(t, newIn(h).Suspend())
				}
			}
			refused(t, h, c.op(newIn(h)), c.code, c.opIndex)
			if c.unopened {
				assert.Empty(t, keysOfHolder(t, h), "nothing is written for an unknown holder")
			}
		})
	}
}

// Funds before overflow: a freeze that would take frozen funds past 2^53-1
// and lacks the funds is INSUFFICIENT_FUNDS; with the funds, OVERFLOW.
func TestConformance_FundsBeforeOverflow(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", maxCNY).Freeze("CNY", maxCNY, "all", 0).Credit("CNY", "0.05")
	})
	refused(t, h, newIn(h).Freeze("CNY", "0.10", "more", 0), instructions.CodeInsufficientFunds, 0)
	refused(t, h, newIn(h).Freeze("CNY", "0.05", "more", 0), instructions.CodeOverflow, 0)
	// A release that would take available past 2^53-1 is OVERFLOW too.
	apply(t, newIn(h).Credit("CNY", "90071992547409.86"))
	refused(t, h, newIn(h).ReleaseLeg("all", "CNY", "0.01"), instructions.CodeOverflow, 0)
}

// Holds: partial settles, an over-settle, a release after the settle that
// closed the hold, and a hold's name free again once it closed.
func TestConformance_HoldLifecycle(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("BTC", "1").EarnPoints("100").GrantCoupon("c1", time.Time{}).
			Freeze("BTC", "0.5", "o", time.Hour).FreezePoints("40", "o").LockCoupon("c1", "o")
	})
	res := apply(t, newIn(h).SettleLeg("o", "BTC", "0.00000001"))
	assert.Equal(t, "0.49999999", res.Holds["o"].Legs["BTC"])
	assert.Equal(t, instructions.Balance{Available: "0.50000000", Frozen: "0.49999999"}, res.Balances["BTC"])
	refused(t, h, newIn(h).SettleLeg("o", "BTC", "0.5"), instructions.CodeExceedsHold, 0)
	refused(t, h, newIn(h).SettleLeg("o", "BTC", "0.000000001"), instructions.CodeInvalidAmount, 0)
	res = apply(t, newIn(h).ReleaseLeg("o", "points", ""))
	assert.Equal(t, &instructions.Points{Available: "100", Frozen: "0"}, res.Points)
	assert.Equal(t, map[string]string{"BTC": "0.49999999"}, res.Holds["o"].Legs)
	res = apply(t, newIn(h).WithCounterparty("shop").Settle("o"))
	assert.Empty(t, res.Holds, "a closed hold is absent from the result")
	assert.Equal(t, "used", res.Coupons["c1"])
	assert.Equal(t, instructions.Balance{Available: "0.50000000", Frozen: "0.00000000"}, res.Balances["BTC"])
	refused(t, h, newIn(h).Release("o"), instructions.CodeHoldNotFound, 0)
	refused(t, h, newIn(h).ReleaseLeg("o", "BTC", "0.1"), instructions.CodeHoldNotFound, 0)

	st := state(t, h)
	assert.Empty(t, st.Holds)
	assert.Equal(t, instructions.Points{Available: "100", Frozen: "0"}, st.Points)
	raw := readRaw(t, h)
	assert.Empty(t, raw.Expiry, "a closed hold leaves the expiry index")
	// Key format 2: a frozen field at zero and a closed hold are deleted from the hash.
	assert.Empty(t, raw.Hashes[hFrozen])
	assert.Empty(t, raw.Hashes[hHolds])
	assert.NotContains(t, raw.Hashes[hPoints], "frozen")
	assert.Equal(t, "active", raw.Hashes[hMeta]["status"])
	res = apply(t, newIn(h).Freeze("BTC", "0.1", "o", 0))
	assert.Equal(t, map[string]string{"BTC": "0.10000000"}, res.Holds["o"].Legs, "a closed hold's name is free again")
	assert.Zero(t, res.Holds["o"].ExpiresMs, "the op that opens the hold again sets its ttl")
}

// An expired hold: settle refused, release allowed; a coupon released from
// it goes back to available but stays unusable once expired itself.
func TestConformance_ExpiredHoldAndCoupon(t *testing.T) {
	needRedis(t)
	exp := serverNowMs(t) + couponLead
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "5.00").GrantCoupon("c1", time.UnixMilli(exp)).
			Freeze("CNY", "2.00", "o", 100*time.Millisecond).LockCoupon("c1", "o")
	})
	waitServerPast(t, exp)
	refused(t, h, newIn(h).Settle("o"), instructions.CodeHoldExpired, 0)
	refused(t, h, newIn(h).SettleLeg("o", "CNY", "1.00"), instructions.CodeHoldExpired, 0)
	res := apply(t, newIn(h).ReleaseLeg("o", "CNY", "0.50"))
	assert.Equal(t, "1.50", res.Holds["o"].Legs["CNY"])
	res = apply(t, newIn(h).Release("o"))
	assert.Empty(t, res.Holds)
	assert.Equal(t, instructions.Balance{Available: "5.00", Frozen: "0.00"}, res.Balances["CNY"])
	assert.Equal(t, "available", res.Coupons["c1"])
	refused(t, h, newIn(h).RedeemCoupon("c1"), instructions.CodeCouponExpired, 0)
	refused(t, h, newIn(h).LockCoupon("c1", "p"), instructions.CodeCouponExpired, 0)
	assert.Empty(t, readRaw(t, h).Expiry)
}

// Idempotency: the first answer again, marked replayed, whatever happened
// since; another body is IDEMPOTENCY_CONFLICT; a rejection keeps its
// answer; nothing recorded for an unknown holder or a validation error;
// after the record's TTL the id is new again.
func TestConformance_Idempotency(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") })

	pay := instructions.New(newID("pay"), h).Debit("CNY", "4.00")
	first := apply(t, pay)
	// Key layout: the record is {h:X}:tx:<id>, a string kept 24 h by default.
	typ, err := rdb.Type(ctx, cluster.Holder(h)+":tx:"+pay.ID).Result()
	require.NoError(t, err)
	assert.Equal(t, "string", typ)
	pttl, err := rdb.PTTL(ctx, cluster.Holder(h)+":tx:"+pay.ID).Result()
	require.NoError(t, err)
	assert.True(t, pttl > 23*time.Hour && pttl <= 24*time.Hour, "the record's TTL is 24 h: %v", pttl)
	apply(t, newIn(h).Credit("CNY", "100.00"))
	before := readRaw(t, h)
	again := apply(t, pay)
	assert.True(t, again.Replayed)
	again.Replayed = false
	assert.Equal(t, first, again, "a replay is the first answer")
	assert.Equal(t, before, readRaw(t, h), "a replay changes nothing")
	same := instructions.New(pay.ID, h).Debit("CNY", "4.0") // the same amount, written otherwise
	res := apply(t, same)
	assert.True(t, res.Replayed)
	refused(t, h, instructions.New(pay.ID, h).Debit("CNY", "4.01"), instructions.CodeIdempotencyConflict, instructions.NoOp)
	refused(t, h, instructions.New(pay.ID, h).WithMemo("other").Debit("CNY", "4.00"), instructions.CodeIdempotencyConflict, instructions.NoOp)
	refused(t, h, instructions.New(pay.ID, h).WithCounterparty("shop").Debit("CNY", "4.00"), instructions.CodeIdempotencyConflict, instructions.NoOp)

	// Every field of every op is part of the body: a ttl, an expiry, the order of the ops.
	fz := instructions.New(newID("fz"), h).Freeze("CNY", "1.00", newID("o"), time.Hour).EarnPoints("1")
	apply(t, fz)
	other := fz
	other.Ops = append([]instructions.Op(nil), fz.Ops...)
	ttl := int64(time.Hour.Milliseconds() + 1)
	other.Ops[0].TTLMs = &ttl
	refused(t, h, other, instructions.CodeIdempotencyConflict, instructions.NoOp)
	other.Ops = []instructions.Op{fz.Ops[1], fz.Ops[0]}
	refused(t, h, other, instructions.CodeIdempotencyConflict, instructions.NoOp)
	gc := instructions.New(newID("gc"), h).GrantCoupon(newID("c"), time.UnixMilli(4102444800000))
	apply(t, gc)
	refused(t, h, instructions.New(gc.ID, h).GrantCoupon(gc.Ops[0].Coupon, time.UnixMilli(4102444800001)), instructions.CodeIdempotencyConflict, instructions.NoOp)

	big := instructions.New(newID("big"), h).Debit("CNY", "1000.00")
	refused(t, h, big, instructions.CodeInsufficientFunds, 0)
	apply(t, newIn(h).Credit("CNY", "1000.00"))
	e := applyErr(t, big)
	assert.Equal(t, instructions.CodeInsufficientFunds, e.Code)
	assert.True(t, e.Replayed, "a rejection replays as it was, even once funds are there")
	refused(t, h, instructions.New(big.ID, h).Debit("CNY", "1.00"), instructions.CodeIdempotencyConflict, instructions.NoOp)

	// A validation error is not recorded: the id stays free.
	id := newID("v")
	refused(t, h, instructions.New(id, h).Debit("CNY", "1.001"), instructions.CodeInvalidAmount, 0)
	assert.False(t, apply(t, instructions.New(id, h).Debit("CNY", "1.00")).Replayed)

	// A rejection for an unknown holder is not recorded: once the holder is
	// opened, the same id applies.
	ghost := newID("ghost")
	t.Cleanup(func() { checkInvariants(t, ghost) })
	early := instructions.New(newID("early"), ghost).Credit("CNY", "1.00")
	refused(t, ghost, early, instructions.CodeHolderNotFound, 0)
	apply(t, instructions.New(newID("open"), ghost).Open())
	assert.Equal(t, int64(2), apply(t, early).Seq)

	// After the record's TTL the id is new again: the same body applies once
	// more. Two seconds, not less: the second call must come within it even
	// on a loaded machine.
	short := engine.New(rdb, &engine.Options{IdempotencyTTL: 2 * time.Second})
	in := instructions.New(newID("ttl"), h).Credit("CNY", "1.00")
	r1, err := short.Apply(ctx, in)
	require.NoError(t, err)
	r2, err := short.Apply(ctx, in)
	require.NoError(t, err)
	assert.True(t, r2.Replayed, "within its TTL the id replays")
	deadline := time.Now().Add(30 * time.Second)
	for rdb.Exists(ctx, cluster.Tx(h, in.ID)).Val() != 0 {
		require.True(t, time.Now().Before(deadline), "the idempotency record never expired")
		time.Sleep(20 * time.Millisecond)
	}
	r3, err := short.Apply(ctx, in)
	require.NoError(t, err)
	assert.False(t, r3.Replayed)
	assert.Equal(t, r1.Seq+1, r3.Seq, "past its TTL the id applies anew")
}

// Amounts at the limits of each scale: 2^53-1 minor units taken exactly,
// one more refused, too many decimals refused, and a value that would leave
// 0 .. 2^53-1 OVERFLOW.
func TestConformance_AmountsAtTheLimits(t *testing.T) {
	needRedis(t)
	h := newHolder(t, nil)
	for _, c := range []struct{ asset, max, over, tooFine string }{
		{"CNY", "90071992547409.91", "90071992547409.92", "0.001"},
		{"USDT", "9007199254.740991", "9007199254.740992", "0.0000001"},
		{"BTC", "90071992.54740991", "90071992.54740992", "0.000000001"},
		{"points", "9007199254740991", "9007199254740992", "1.0"},
	} {
		credit := func(in instructions.Instruction, amount string) instructions.Instruction {
			if c.asset == "points" {
				return in.EarnPoints(amount)
			}
			return in.Credit(c.asset, amount)
		}
		refused(t, h, credit(newIn(h), c.over), instructions.CodeInvalidAmount, 0)
		refused(t, h, credit(newIn(h), c.tooFine), instructions.CodeInvalidAmount, 0)
		refused(t, h, credit(newIn(h), "0"), instructions.CodeInvalidAmount, 0)
		refused(t, h, credit(newIn(h), "-1"), instructions.CodeInvalidAmount, 0)
		res := apply(t, credit(newIn(h), c.max))
		if c.asset == "points" {
			assert.Equal(t, c.max, res.Points.Available)
		} else {
			assert.Equal(t, c.max, res.Balances[c.asset].Available)
		}
		refused(t, h, credit(newIn(h), "1"), instructions.CodeOverflow, 0)
	}
	st := state(t, h)
	assert.Equal(t, "9007199254740991", st.Points.Available)
	assert.Equal(t, "90071992.54740991", st.Balances["BTC"].Available)
}
