package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/lua"
	"github.com/atomledger/atomledger/stored"
)

// cliJSON sends text to the library's JSON door with the redis-cli binary
// itself, as a client in another language would (cluster mode: it follows
// MOVED), and returns the reply's replayed flag and outcome.
func cliJSON(t *testing.T, holder, id, text string) (replayed int, outcome string) {
	t.Helper()
	return cliJSONKeys(t, jsonKeys(holder, id), text)
}

// jsonKeys are the KEYS of apply_json for holder and instruction id.
func jsonKeys(holder, id string) []string {
	slot := cluster.HolderSlot(holder)
	return []string{cluster.Holder(holder), cluster.Tx(holder, id), cluster.Outbox(slot), cluster.Expiry(slot)}
}

func cliJSONKeys(t *testing.T, keys []string, text string) (replayed int, outcome string) {
	t.Helper()
	host, port, ok := strings.Cut(testCluster.MasterAddrs()[0], ":")
	require.True(t, ok)
	args := append([]string{"-c", "-h", host, "-p", port, "--json", "FCALL", lua.FuncApplyJSON, "4"}, keys...)
	out, err := exec.Command("redis-cli", append(args, text)...).CombinedOutput()
	require.NoError(t, err, "redis-cli: %s", out)
	var reply []any
	require.NoError(t, json.Unmarshal(out, &reply), "redis-cli: %s", out)
	require.Len(t, reply, 2, "redis-cli: %s", out)
	n, _ := reply[0].(float64)
	s, _ := reply[1].(string)
	return int(n), s
}

// cliCode is the error code of an outcome, "" for a result.
func cliCode(outcome string) string {
	parts := strings.SplitN(outcome, "\n", 3)
	if parts[0] != "err" || len(parts) < 2 {
		return ""
	}
	return parts[1]
}

// holderHash is the holder's hash without what differs between two holders
// fed the same instructions at different times.
func holderHash(t *testing.T, holder string) map[string]string {
	t.Helper()
	m, err := rdb.HGetAll(context.Background(), cluster.Holder(holder)).Result()
	require.NoError(t, err)
	delete(m, stored.FieldDigest)
	delete(m, stored.FieldCreatedMs)
	return m
}

func TestJSONDoor_ThroughRedisCLI(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	require.NoError(t, eng.Load(ctx))
	// The holder most cases run against: 100.00 CNY, 50 points, a coupon,
	// an open hold of 10.00 CNY, and a used coupon.
	h := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "100.00").EarnPoints("50").GrantCoupon("c1", time.Time{}).
			GrantCoupon("c-used", time.Time{}).RedeemCoupon("c-used").
			GrantCoupon("c-old", time.UnixMilli(1000)).Freeze("CNY", "10.00", "hold1", 0)
	})
	suspended := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "1.00").Suspend()
	})
	// A hold of 1 ms: expired once the server's clock has passed it.
	expiring := newHolder(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "1.00").Freeze("CNY", "1.00", "short", time.Millisecond)
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		raw, err := rdb.HGet(ctx, cluster.Holder(expiring), "h:short").Result()
		require.NoError(t, err)
		exp, _, _ := strings.Cut(raw, "|")
		expMs, err := strconv.ParseInt(exp, 10, 64)
		require.NoError(t, err)
		now, err := rdb.Time(ctx).Result()
		require.NoError(t, err)
		if now.UnixMilli() > expMs {
			break
		}
		require.True(t, time.Now().Before(deadline), "the server's clock never passed the hold's expiry")
		time.Sleep(10 * time.Millisecond)
	}
	many := `{"op":"earn_points","amount":"1"}` + strings.Repeat(`,{"op":"earn_points","amount":"1"}`, 64)

	cases := []struct {
		name, holder, ops, top, code string
	}{
		{"text that is not JSON is INVALID_INSTRUCTION", h, "", `{"id":`, string(instructions.CodeInvalidInstruction)},
		{"an array instead of an object is INVALID_INSTRUCTION", h, "", `[]`, string(instructions.CodeInvalidInstruction)},
		{"an id that is a number is INVALID_INSTRUCTION", h, "", `{"id":5,"holder":"` + h + `","ops":[{"op":"earn_points","amount":"1"}]}`, string(instructions.CodeInvalidInstruction)},
		{"ops as an object is INVALID_INSTRUCTION", h, "", `{"id":"o-obj","holder":"` + h + `","ops":{"a":{"op":"earn_points","amount":"1"}}}`, string(instructions.CodeInvalidInstruction)},
		{"a key given twice is INVALID_INSTRUCTION", h, `{"op":"credit","asset":"CNY","amount":"1","amount":"100000"}`, "", string(instructions.CodeInvalidInstruction)},
		{"a key given twice, the last null, is INVALID_INSTRUCTION", h, `{"op":"credit","asset":"CNY","amount":"1"}`, `"memo":"a\":b","memo":null`, string(instructions.CodeInvalidInstruction)},
		{"an unknown field is INVALID_INSTRUCTION", h, `{"op":"credit","asset":"CNY","amount":"1","x":1}`, "", string(instructions.CodeInvalidInstruction)},
		{"an unknown op is INVALID_INSTRUCTION", h, `{"op":"burn"}`, "", string(instructions.CodeInvalidInstruction)},
		{"an op of the engine's own is INVALID_INSTRUCTION", h, `{"op":"check"}`, "", string(instructions.CodeInvalidInstruction)},
		{"a missing field is INVALID_INSTRUCTION", h, `{"op":"credit","asset":"CNY"}`, "", string(instructions.CodeInvalidInstruction)},
		{"a field the op does not take is INVALID_INSTRUCTION", h, `{"op":"debit","asset":"CNY","amount":"1","hold":"a"}`, "", string(instructions.CodeInvalidInstruction)},
		{"settle with an amount and no leg is INVALID_INSTRUCTION", h, `{"op":"settle","hold":"hold1","amount":"1"}`, "", string(instructions.CodeInvalidInstruction)},
		{"no ops is INVALID_INSTRUCTION", h, "", `"ops":[]`, string(instructions.CodeInvalidInstruction)},
		{"a memo with a control character is INVALID_INSTRUCTION", h, `{"op":"earn_points","amount":"1"}`, `"memo":"a\u0007b"`, string(instructions.CodeInvalidInstruction)},
		{"a memo that is not UTF-8 is INVALID_INSTRUCTION", h, `{"op":"earn_points","amount":"1"}`, "\"memo\":\"a\xffb\"", string(instructions.CodeInvalidInstruction)},
		{"a memo over 256 bytes is INVALID_INSTRUCTION", h, `{"op":"earn_points","amount":"1"}`, `"memo":"` + strings.Repeat("m", 257) + `"`, string(instructions.CodeInvalidInstruction)},
		{"a ttl_ms of zero is INVALID_INSTRUCTION", h, `{"op":"freeze","asset":"CNY","amount":"1","hold":"t0","ttl_ms":0}`, "", string(instructions.CodeInvalidInstruction)},
		{"an amount as a JSON number is INVALID_AMOUNT", h, `{"op":"credit","asset":"CNY","amount":100}`, "", string(instructions.CodeInvalidAmount)},
		{"a null amount is INVALID_AMOUNT", h, `{"op":"credit","asset":"CNY","amount":null}`, "", string(instructions.CodeInvalidAmount)},
		{"a decimal amount is INVALID_AMOUNT", h, `{"op":"credit","asset":"CNY","amount":"1.5"}`, "", string(instructions.CodeInvalidAmount)},
		{"an amount of zero is INVALID_AMOUNT", h, `{"op":"credit","asset":"CNY","amount":"0"}`, "", string(instructions.CodeInvalidAmount)},
		{"an amount above 2^53-1 is INVALID_AMOUNT", h, `{"op":"credit","asset":"CNY","amount":"9007199254740992"}`, "", string(instructions.CodeInvalidAmount)},
		{"a hold id with a brace is INVALID_ID", h, `{"op":"freeze","asset":"CNY","amount":"1","hold":"{a}"}`, "", string(instructions.CodeInvalidID)},
		{"a hold of a transfer is INVALID_ID", h, `{"op":"release","hold":"x:t1"}`, "", string(instructions.CodeInvalidID)},
		{"an id of dots is INVALID_ID", h, `{"op":"earn_points","amount":"1"}`, `"id":".."`, string(instructions.CodeInvalidID)},
		{"an id of the sweeper is INVALID_ID", h, `{"op":"earn_points","amount":"1"}`, `"id":"sweep-1"`, string(instructions.CodeInvalidID)},
		{"a counterparty of a transfer is INVALID_ID", h, `{"op":"earn_points","amount":"1"}`, `"counterparty":"x:t1"`, string(instructions.CodeInvalidID)},
		{"an asset code of the wrong form is UNKNOWN_ASSET", h, `{"op":"credit","asset":"cny","amount":"1"}`, "", string(instructions.CodeUnknownAsset)},
		{"65 ops is TOO_MANY_OPS", h, many, "", string(instructions.CodeTooManyOps)},
		{"an unknown holder is HOLDER_NOT_FOUND", "nobody-" + newID("j"), `{"op":"credit","asset":"CNY","amount":"1"}`, "", "HOLDER_NOT_FOUND"},
		{"open of an existing holder is HOLDER_EXISTS", h, `{"op":"open"}`, "", "HOLDER_EXISTS"},
		{"a debit of a suspended holder is HOLDER_SUSPENDED", suspended, `{"op":"debit","asset":"CNY","amount":"1"}`, "", "HOLDER_SUSPENDED"},
		{"a debit above the balance is INSUFFICIENT_FUNDS", h, `{"op":"debit","asset":"CNY","amount":"9001"}`, "", "INSUFFICIENT_FUNDS"},
		{"spending more points than there are is INSUFFICIENT_POINTS", h, `{"op":"spend_points","amount":"51"}`, "", "INSUFFICIENT_POINTS"},
		{"settling an unknown hold is HOLD_NOT_FOUND", h, `{"op":"settle","hold":"nohold"}`, "", "HOLD_NOT_FOUND"},
		{"freezing into an open hold is HOLD_EXISTS", h, `{"op":"freeze","asset":"CNY","amount":"1","hold":"hold1"}`, "", "HOLD_EXISTS"},
		{"settling an expired hold is HOLD_EXPIRED", expiring, `{"op":"settle","hold":"short"}`, "", "HOLD_EXPIRED"},
		{"settling more than the leg holds is EXCEEDS_HOLD", h, `{"op":"settle","hold":"hold1","leg":"CNY","amount":"1001"}`, "", "EXCEEDS_HOLD"},
		{"redeeming an unknown coupon is COUPON_NOT_FOUND", h, `{"op":"redeem_coupon","coupon":"nope"}`, "", "COUPON_NOT_FOUND"},
		{"granting a coupon again is COUPON_EXISTS", h, `{"op":"grant_coupon","coupon":"c1"}`, "", "COUPON_EXISTS"},
		{"redeeming a used coupon is COUPON_UNAVAILABLE", h, `{"op":"redeem_coupon","coupon":"c-used"}`, "", "COUPON_UNAVAILABLE"},
		{"redeeming an expired coupon is COUPON_EXPIRED", h, `{"op":"redeem_coupon","coupon":"c-old"}`, "", "COUPON_EXPIRED"},
		{"a credit past 2^53-1 is OVERFLOW", h, `{"op":"credit","asset":"CNY","amount":"9007199254740991"}`, "", "OVERFLOW"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := newID("j")
			top := `"id":"` + id + `","holder":"` + c.holder + `"`
			if strings.HasPrefix(c.top, `"id"`) {
				id = strings.TrimSuffix(strings.TrimPrefix(c.top, `"id":"`), `"`)
				top = c.top + `,"holder":"` + c.holder + `"`
			} else if c.top != "" {
				top += "," + c.top
			}
			text := "{" + top + `,"ops":[` + c.ops + "]}"
			if c.ops == "" {
				text = "{" + top + "}"
			}
			if strings.HasPrefix(c.top, `{"id":`) || c.top == `[]` {
				text = c.top
			}
			before := holderHash(t, c.holder)
			replayed, outcome := cliJSON(t, c.holder, id, text)
			assert.Equal(t, c.code, cliCode(outcome), "outcome %q", outcome)
			assert.Equal(t, 0, replayed)
			assert.Equal(t, before, holderHash(t, c.holder), "the holder changed")
			rec, err := rdb.Exists(context.Background(), cluster.Tx(c.holder, id)).Result()
			require.NoError(t, err)
			recorded := len(before) > 0 && !strings.HasPrefix(c.code, "INVALID_") &&
				c.code != string(instructions.CodeTooManyOps) && c.code != string(instructions.CodeUnknownAsset)
			assert.Equal(t, recorded, rec == 1, "an idempotency record only for a rejection the script made on a holder that exists")
			if recorded {
				again, outcome2 := cliJSON(t, c.holder, id, text)
				assert.Equal(t, 1, again)
				assert.Equal(t, outcome, outcome2, "a rejection replays as it was")
			}
		})
	}

	t.Run("KEYS of another holder, id or stream are INVALID_INSTRUCTION", func(t *testing.T) {
		id := newID("j")
		text := `{"id":"` + id + `","holder":"` + h + `","ops":[{"op":"earn_points","amount":"1"}]}`
		right := jsonKeys(h, id)
		before := holderHash(t, h)
		// All in the holder's slot: a key of another slot the cluster refuses itself (CROSSSLOT).
		// Among them the record of a transfer's step ending in the same id: taking it
		// would make the engine's own step conflict.
		// Another tag of the holder's slot: the cluster lets it through, the relay never reads it.
		slot := cluster.HolderSlot(h)
		other := ""
		for i := 0; other == ""; i++ {
			if s := strconv.FormatInt(int64(46656+i), 36); cluster.Slot("{"+s+"}") == slot && s != cluster.SlotTag(slot) {
				other = s
			}
		}
		for _, c := range []struct {
			i      []int
			wrongs []string
		}{
			{[]int{0}, []string{cluster.Holder(h) + ":x"}}, {[]int{1}, []string{cluster.Tx(h, id+"x")}},
			{[]int{1}, []string{cluster.Tx(h, "x:t1:"+id)}}, {[]int{1}, []string{cluster.Holder(h) + ":TX:" + id}},
			{[]int{1}, []string{cluster.Holder(h) + "abc:" + id}},
			{[]int{2}, []string{cluster.Holder(h) + ":outbox"}}, {[]int{3}, []string{cluster.Holder(h) + ":expiry"}},
			{[]int{2, 3}, []string{"{" + other + "}:outbox", "{" + other + "}:expiry"}},
		} {
			keys := append([]string(nil), right...)
			for j, i := range c.i {
				keys[i] = c.wrongs[j]
			}
			_, outcome := cliJSONKeys(t, keys, text)
			assert.Equal(t, string(instructions.CodeInvalidInstruction), cliCode(outcome), "KEYS %q: %q", keys, outcome)
			assert.Contains(t, outcome, right[c.i[0]], "the message names the right key")
		}
		assert.Equal(t, before, holderHash(t, h), "the holder changed")
		n, err := rdb.Exists(ctx, cluster.Tx(h, id), "{"+other+"}:outbox").Result()
		require.NoError(t, err)
		assert.Zero(t, n, "no record, no event")
	})

	t.Run("the same text replays and another text under the same id is a conflict", func(t *testing.T) {
		id := newID("j")
		text := `{"id":"` + id + `","holder":"` + h + `","ops":[{"op":"earn_points","amount":"7"}]}`
		replayed, first := cliJSON(t, h, id, text)
		require.Equal(t, "", cliCode(first), first)
		assert.Equal(t, 0, replayed)
		seq := holderHash(t, h)[stored.FieldSeq]
		replayed, again := cliJSON(t, h, id, text)
		assert.Equal(t, 1, replayed)
		assert.Equal(t, first, again, "a replay answers the first answer, byte for byte")
		other := strings.Replace(text, `"7"`, `"8"`, 1)
		replayed, conflict := cliJSON(t, h, id, other)
		assert.Equal(t, 0, replayed)
		assert.Equal(t, "IDEMPOTENCY_CONFLICT", cliCode(conflict))
		assert.Equal(t, seq, holderHash(t, h)[stored.FieldSeq], "a replay or a conflict applied something")
	})

	t.Run("the same instructions give the same state and events through either door", func(t *testing.T) {
		flat, viaJSON := newID("flat"), newID("json")
		steps := []struct {
			in   func(id, holder string) instructions.Instruction
			json string
		}{
			{func(id, hd string) instructions.Instruction { return instructions.New(id, hd).Open() }, `[{"op":"open"}]`},
			{func(id, hd string) instructions.Instruction {
				return instructions.New(id, hd).WithCounterparty("bank:1").WithMemo("top-up").Credit("CNY", "120.50").EarnPoints("3000").
					GrantCoupon("c-9", time.UnixMilli(4102444800000)).GrantCoupon("c-10", time.Time{})
			}, `[{"op":"credit","asset":"CNY","amount":"12050"},{"op":"earn_points","amount":"3000"},{"op":"grant_coupon","coupon":"c-9","expires_ms":4102444800000},{"op":"grant_coupon","coupon":"c-10"}]`},
			{func(id, hd string) instructions.Instruction {
				return instructions.New(id, hd).Freeze("CNY", "30.00", "o-1", 0).FreezePoints("2000", "o-1").LockCoupon("c-9", "o-1")
			}, `[{"op":"freeze","asset":"CNY","amount":"3000","hold":"o-1"},{"op":"freeze_points","amount":"2000","hold":"o-1"},{"op":"lock_coupon","coupon":"c-9","hold":"o-1"}]`},
			{func(id, hd string) instructions.Instruction {
				return instructions.New(id, hd).SettleLeg("o-1", "CNY", "12.00").ReleaseLeg("o-1", "points", "")
			}, `[{"op":"settle","hold":"o-1","leg":"CNY","amount":"1200"},{"op":"release","hold":"o-1","leg":"points"}]`},
			{func(id, hd string) instructions.Instruction {
				return instructions.New(id, hd).WithCounterparty("merchant:88").Debit("CNY", "8.00").SpendPoints("100").RedeemCoupon("c-10").Settle("o-1")
			}, `[{"op":"debit","asset":"CNY","amount":"800"},{"op":"spend_points","amount":"100"},{"op":"redeem_coupon","coupon":"c-10"},{"op":"settle","hold":"o-1"}]`},
			{func(id, hd string) instructions.Instruction {
				return instructions.New(id, hd).Suspend().Credit("USDT", "1.5")
			}, `[{"op":"suspend"},{"op":"credit","asset":"USDT","amount":"1500000"}]`},
			{func(id, hd string) instructions.Instruction { return instructions.New(id, hd).Resume() }, `[{"op":"resume"}]`},
		}
		for i, s := range steps {
			id := fmt.Sprintf("step-%d", i)
			in := s.in(id, flat)
			_, err := eng.Apply(ctx, in)
			require.NoError(t, err, "flat step %d", i)
			top := `{"id":"` + id + `","holder":"` + viaJSON + `"`
			if in.Counterparty != "" {
				top += `,"counterparty":"` + in.Counterparty + `"`
			}
			if in.Memo != "" {
				top += `,"memo":"` + in.Memo + `"`
			}
			_, outcome := cliJSON(t, viaJSON, id, top+`,"ops":`+s.json+"}")
			require.Equal(t, "", cliCode(outcome), "json step %d: %q", i, outcome)
		}
		t.Cleanup(func() { checkInvariants(t, flat); checkInvariants(t, viaJSON) })
		assert.Equal(t, holderHash(t, flat), holderHash(t, viaJSON))
		a, b := readRaw(t, flat).Events, readRaw(t, viaJSON).Events
		require.Len(t, b, len(steps))
		require.Len(t, a, len(steps))
		for i := range a {
			for _, f := range []string{"seq", "id", "cp", "memo", "ops", "state", "dv"} {
				assert.Equal(t, a[i][f], b[i][f], "event %d field %s", i, f)
			}
		}
		// The JSON door's events carry the fingerprint of the text, the
		// engine's that of its arguments: the ledger reads them alike, and
		// the digest chain holds.
		assert.Len(t, b[0]["fp"], 40)
		prev := ""
		for i, raw := range b {
			f := map[string]string{}
			for k, v := range raw {
				f[k] = v.(string)
			}
			ev, err := stored.ParseEvent(f)
			require.NoError(t, err, "event %d", i)
			assert.Equal(t, stored.Digest(prev, ev), ev.Digest, "event %d's digest", i)
			prev = ev.Digest
		}
	})
}
