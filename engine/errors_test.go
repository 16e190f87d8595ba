package engine_test

import (
	"context"
	"errors"
	"fmt"
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

type (
	setupFn = func(instructions.Instruction) instructions.Instruction
	instrFn = func(h string) instructions.Instruction
)

// A holder with money, points, coupons and an open hold, for the error table.
func richSetup(in instructions.Instruction) instructions.Instruction {
	return in.Credit("CNY", "100.00").EarnPoints("500").
		GrantCoupon("c-ok", time.Time{}).GrantCoupon("c-used", time.Time{}).RedeemCoupon("c-used").
		GrantCoupon("c-old", time.UnixMilli(1)).
		Freeze("CNY", "30.00", "ord-1", 0).FreezePoints("100", "ord-1")
}

func TestApply_EveryScriptErrorChangesNothing(t *testing.T) {
	needRedis(t)
	cases := []struct {
		name  string
		setup setupFn // after open and richSetup
		instr instrFn
		code  error
		op    int
	}{
		{"open of an existing holder", nil, func(h string) instructions.Instruction { return newIn(h).Credit("CNY", "1").Open() }, engine.ErrHolderExists, 1},
		{"debit on a suspended holder", func(in instructions.Instruction) instructions.Instruction { return in.Suspend() },
			func(h string) instructions.Instruction { return newIn(h).Credit("CNY", "1").Debit("CNY", "1000.00") }, engine.ErrHolderSuspended, 1},
		{"freeze on a suspended holder", func(in instructions.Instruction) instructions.Instruction { return in.Suspend() },
			func(h string) instructions.Instruction { return newIn(h).Freeze("CNY", "1", "x", 0) }, engine.ErrHolderSuspended, 0},
		{"spend_points on a suspended holder", func(in instructions.Instruction) instructions.Instruction { return in.Suspend() },
			func(h string) instructions.Instruction { return newIn(h).SpendPoints("1") }, engine.ErrHolderSuspended, 0},
		{"redeem_coupon on a suspended holder", func(in instructions.Instruction) instructions.Instruction { return in.Suspend() },
			func(h string) instructions.Instruction { return newIn(h).RedeemCoupon("c-ok") }, engine.ErrHolderSuspended, 0},
		{"debit beyond available", nil, func(h string) instructions.Instruction { return newIn(h).Debit("CNY", "70.01") }, engine.ErrInsufficientFunds, 0},
		{"debit after an earlier op spent it", nil, func(h string) instructions.Instruction {
			return newIn(h).Debit("CNY", "70.00").Debit("CNY", "0.01")
		}, engine.ErrInsufficientFunds, 1},
		{"freeze beyond available", nil, func(h string) instructions.Instruction { return newIn(h).Freeze("CNY", "70.01", "ord-2", 0) }, engine.ErrInsufficientFunds, 0},
		{"spend_points beyond available", nil, func(h string) instructions.Instruction { return newIn(h).SpendPoints("401") }, engine.ErrInsufficientPoints, 0},
		{"freeze_points beyond available", nil, func(h string) instructions.Instruction { return newIn(h).FreezePoints("401", "ord-2") }, engine.ErrInsufficientPoints, 0},
		{"settle of an unknown hold", nil, func(h string) instructions.Instruction { return newIn(h).Settle("nope") }, engine.ErrHoldNotFound, 0},
		{"release of an unknown hold", nil, func(h string) instructions.Instruction { return newIn(h).ReleaseLeg("nope", "CNY", "1") }, engine.ErrHoldNotFound, 0},
		{"freeze under a hold of an earlier instruction", nil, func(h string) instructions.Instruction { return newIn(h).Freeze("CNY", "1", "ord-1", 0) }, engine.ErrHoldExists, 0},
		{"lock_coupon under a hold of an earlier instruction", nil, func(h string) instructions.Instruction { return newIn(h).LockCoupon("c-ok", "ord-1") }, engine.ErrHoldExists, 0},
		{"settle more than the leg", nil, func(h string) instructions.Instruction { return newIn(h).SettleLeg("ord-1", "CNY", "30.01") }, engine.ErrExceedsHold, 0},
		{"settle a leg the hold lacks", nil, func(h string) instructions.Instruction { return newIn(h).SettleLeg("ord-1", "USDT", "1") }, engine.ErrExceedsHold, 0},
		{"release more points than the leg", nil, func(h string) instructions.Instruction { return newIn(h).ReleaseLeg("ord-1", "points", "101") }, engine.ErrExceedsHold, 0},
		{"lock of an unknown coupon", nil, func(h string) instructions.Instruction { return newIn(h).LockCoupon("c-none", "ord-2") }, engine.ErrCouponNotFound, 0},
		{"redeem of an unknown coupon", nil, func(h string) instructions.Instruction { return newIn(h).RedeemCoupon("c-none") }, engine.ErrCouponNotFound, 0},
		{"grant of an existing coupon", nil, func(h string) instructions.Instruction { return newIn(h).GrantCoupon("c-used", time.Time{}) }, engine.ErrCouponExists, 0},
		{"redeem of a used coupon", nil, func(h string) instructions.Instruction { return newIn(h).RedeemCoupon("c-used") }, engine.ErrCouponUnavailable, 0},
		{"redeem twice in one instruction", nil, func(h string) instructions.Instruction { return newIn(h).RedeemCoupon("c-ok").RedeemCoupon("c-ok") }, engine.ErrCouponUnavailable, 1},
		{"redeem of an expired coupon", nil, func(h string) instructions.Instruction { return newIn(h).RedeemCoupon("c-old") }, engine.ErrCouponExpired, 0},
		{"lock of an expired coupon", nil, func(h string) instructions.Instruction { return newIn(h).LockCoupon("c-old", "ord-2") }, engine.ErrCouponExpired, 0},
		{"credit past 2^53-1", nil, func(h string) instructions.Instruction { return newIn(h).Credit("CNY", "90071992547409.91") }, engine.ErrOverflow, 0},
		{"earn_points past 2^53-1", nil, func(h string) instructions.Instruction { return newIn(h).EarnPoints("9007199254740991") }, engine.ErrOverflow, 0},
		{"release back past 2^53-1", nil, func(h string) instructions.Instruction {
			return newIn(h).Credit("CNY", "90071992547339.91").Release("ord-1")
		}, engine.ErrOverflow, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
				in = richSetup(in)
				if tc.setup != nil {
					in = tc.setup(in)
				}
				return in
			})
			before := readRaw(t, h)
			in := tc.instr(h)
			e := applyErr(t, in)
			assert.ErrorIs(t, e, tc.code)
			assert.Equal(t, tc.op, e.OpIndex)
			assert.Equal(t, before, readRaw(t, h), "a rejected instruction changes nothing")

			// The rejection is recorded: the same id and body get it again.
			n, err := rdb.Exists(context.Background(), cluster.Tx(h, in.ID)).Result()
			require.NoError(t, err)
			assert.Equal(t, int64(1), n, "rejection recorded under the id")
			again := applyErr(t, in)
			assert.False(t, e.Replayed)
			assert.True(t, again.Replayed, "a recorded rejection is marked replayed")
			again.Replayed = false
			want := *e
			want.Message += engine.ReplayNote
			assert.Equal(t, &want, again, "the first answer, saying that a new attempt needs a new id")
		})
	}
}

func newIn(h string) instructions.Instruction { return instructions.New(newID("in"), h) }

func TestApply_UnknownHolderWritesNothing(t *testing.T) {
	needRedis(t)
	h := newID("ghost")
	slot := cluster.HolderSlot(h)
	outboxLen := func() int64 {
		n, err := rdb.XLen(context.Background(), cluster.Outbox(slot)).Result()
		require.NoError(t, err)
		return n
	}
	for _, in := range []instructions.Instruction{
		newIn(h).Credit("CNY", "1.00"),
		newIn(h).Open().Credit("CNY", "1.00").Debit("CNY", "2.00"), // opened, then rejected: not opened
		newIn(h).Freeze("CNY", "1.00", "hold-1", time.Hour),
	} {
		events := outboxLen()
		applyErr(t, in)
		// Not a single key of the holder's tag: no hash, no idempotency
		// record; nothing in its slot's outbox or expiry index either.
		assert.Empty(t, keysOfHolder(t, h), "%s: no key for an unknown holder", in.ID)
		assert.Equal(t, events, outboxLen(), "%s: no event in the slot's outbox", in.ID)
		raw := readRaw(t, h)
		assert.Empty(t, raw.Events)
		assert.Empty(t, raw.Expiry)
	}
	e := applyErr(t, newIn(h).Credit("CNY", "1.00"))
	assert.ErrorIs(t, e, engine.ErrHolderNotFound)
	assert.Equal(t, 0, e.OpIndex)
	e = applyErr(t, newIn(h).Open().Credit("CNY", "1.00").Debit("CNY", "2.00"))
	assert.ErrorIs(t, e, engine.ErrInsufficientFunds)
	assert.Equal(t, 2, e.OpIndex)
	_, err := eng.State(context.Background(), h)
	assert.ErrorIs(t, err, engine.ErrHolderNotFound)
	checkInvariants(t, h)
}

func TestApply_IdempotencyConflict(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") })
	first := instructions.New("pay-1", h).Debit("CNY", "1.00")
	res, err := eng.Apply(context.Background(), first)
	require.NoError(t, err)

	// The same body spelled differently is the same instruction.
	same := instructions.New("pay-1", h).Debit("CNY", "1.0")
	replay, err := eng.Apply(context.Background(), same)
	require.NoError(t, err)
	assert.True(t, replay.Replayed)
	assert.Equal(t, res.Seq, replay.Seq)

	before := readRaw(t, h)
	e := applyErr(t, instructions.New("pay-1", h).Debit("CNY", "2.00"))
	assert.ErrorIs(t, e, engine.ErrIdempotencyConflict)
	assert.Equal(t, instructions.NoOp, e.OpIndex)
	assert.Equal(t, before, readRaw(t, h))
	assert.Equal(t, "9.00", state(t, h).Balances["CNY"].Available)
}

func TestApply_ValidationErrorsNeverReachRedis(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") })
	cases := []struct {
		name  string
		instr instructions.Instruction
		code  error
	}{
		{"zero amount", newIn(h).Debit("CNY", "0"), engine.ErrInvalidAmount},
		{"negative amount", newIn(h).Debit("CNY", "-1"), engine.ErrInvalidAmount},
		{"too many decimals", newIn(h).Debit("CNY", "1.001"), engine.ErrInvalidAmount},
		{"exponent", newIn(h).Debit("CNY", "1e3"), engine.ErrInvalidAmount},
		{"unknown asset", newIn(h).Debit("XYZ", "1"), engine.ErrUnknownAsset},
		{"brace in a hold id", newIn(h).Freeze("CNY", "1", "{x}", 0), engine.ErrInvalidID},
		{"settle amount without leg", instructions.Instruction{ID: newID("in"), Holder: h, Ops: []instructions.Op{{Op: "settle", Hold: "x", Amount: "1"}}}, engine.ErrInvalidInstruction},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := readRaw(t, h)
			e := applyErr(t, tc.instr)
			assert.ErrorIs(t, e, tc.code)
			assert.Equal(t, before, readRaw(t, h))
			n, err := rdb.Exists(context.Background(), cluster.Tx(h, tc.instr.ID)).Result()
			require.NoError(t, err)
			assert.Zero(t, n, "validation errors are not recorded")
		})
	}
}

// TestApply_MemoControlCharacters: a memo is at most 256 bytes of UTF-8
// without control characters (U+0000-U+001F, U+007F); anything else is
// INVALID_INSTRUCTION, naming what is wrong, and nothing changes. Other
// characters, C1 controls and a memo of exactly 256 bytes included, apply.
func TestApply_MemoControlCharacters(t *testing.T) {
	needRedis(t)
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction { return in.Credit("CNY", "10.00") })
	for _, tc := range []struct{ name, memo, msg string }{
		{"a NUL byte", "poison\x00x", "U+0000 at byte 6"},
		{"a newline", "line one\nline two", "U+000A"},
		{"a tab", "a\tb", "U+0009"},
		{"a carriage return", "a\rb", "U+000D"},
		{"an escape", "\x1b[31mred", "U+001B"},
		{"U+001F", "a\x1fb", "U+001F"},
		{"a DEL", "a\x7fb", "U+007F"},
		{"257 bytes", strings.Repeat("m", 257), "memo of 257 bytes: at most 256"},
		{"invalid UTF-8", "a\xff\xfeb", "valid UTF-8"},
	} {
		t.Run(tc.name+" is refused", func(t *testing.T) {
			in := newIn(h).WithMemo(tc.memo).Credit("CNY", "1.00")
			before := readRaw(t, h)
			e := applyErr(t, in)
			assert.ErrorIs(t, e, engine.ErrInvalidInstruction)
			assert.Contains(t, e.Message, tc.msg)
			assert.Equal(t, before, readRaw(t, h), "nothing changed")
		})
	}
	for _, memo := range []string{strings.Repeat("m", 256), "caf\u00e9 \u8ba2\u5355 \U0001F600", "a\u0085b (a C1 control)", " spaces  and ~ "} {
		t.Run(fmt.Sprintf("%.20q applies", memo), func(t *testing.T) {
			_, err := eng.Apply(context.Background(), newIn(h).WithMemo(memo).Credit("CNY", "0.01"))
			require.NoError(t, err)
		})
	}
}

func TestError_MatchesSentinelAndReads(t *testing.T) {
	err := error(&engine.Error{ID: "order-55-pay", Code: instructions.CodeInsufficientFunds, OpIndex: 0, Message: "debit 80.00 CNY: available 12.00"})
	assert.True(t, errors.Is(err, engine.ErrInsufficientFunds))
	assert.False(t, errors.Is(err, engine.ErrInsufficientPoints))
	assert.Equal(t, `apply "order-55-pay" op 0: INSUFFICIENT_FUNDS: debit 80.00 CNY: available 12.00`, err.Error())
}

// A read's error (no instruction id) is not told as a failure to apply, and
// the ids a read takes are refused with the words the instructions use.
func TestError_ReadsSayWhatWasRead(t *testing.T) {
	_, err := eng.State(context.Background(), "..")
	assert.Equal(t, `INVALID_ID: holder ".." is dots alone, a step of a URL path: give it a letter or digit`, err.Error())
	_, err = eng.Outcome(context.Background(), "h-1", "a b")
	assert.Equal(t, `INVALID_ID: instruction id "a b" must match [A-Za-z0-9_.:-]{1,64}`, err.Error())
}

// A Redis that cannot be reached answers UNAVAILABLE with what it means to
// the caller, never Go's text of the dial (its sockets and addresses): the
// daemon's clients read the message; the cause stays in the error's Err.
func TestApply_RedisUnreachableSaysSoWithoutAddresses(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	_, err := engine.New(c, nil).Apply(context.Background(), instructions.New("i1", "u1").Credit("CNY", "1.00"))
	var e *engine.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, instructions.CodeUnavailable, e.Code)
	assert.Equal(t, "the connection to Redis failed (connect: connection refused): the outcome is unknown; send it again with the same id", e.Message)
	assert.ErrorContains(t, e.Err, "127.0.0.1:1", "the cause keeps the address, for the log")
}
