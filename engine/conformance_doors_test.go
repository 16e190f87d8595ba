package engine_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/lua"
)

// fcallJSON sends text to the JSON door with go-redis and gives the outcome.
func fcallJSON(t *testing.T, holder, id, text string) string {
	t.Helper()
	v, err := rdb.FCall(context.Background(), lua.FuncApplyJSON, jsonKeys(holder, id), text).Slice()
	require.NoError(t, err)
	require.Len(t, v, 2)
	s, _ := v[1].(string)
	return s
}

// engineCode applies text through the engine's door (Decode, then Apply) and
// gives the error code, "" when it applied.
func engineCode(t *testing.T, text string) string {
	t.Helper()
	in, err := instructions.Decode([]byte(text))
	if err == nil {
		_, err = eng.Apply(context.Background(), in)
	}
	if err == nil {
		return ""
	}
	var e *instructions.Error
	require.True(t, errors.As(err, &e), "%v", err)
	return string(e.Code)
}

// DESIGN.md: the JSON door makes "the same checks, codes" as the engine.
// Each instruction goes through both doors, on two fresh holders set up alike;
// the amounts are written {A} (1.00 CNY: "1.00" to the engine, "100" to the
// door). Both must give the same code, or both apply; a refusal changes
// neither hash.
func TestConformance_BothDoorsJudgeAlike(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	require.NoError(t, eng.Load(ctx))
	setup := func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "100.00").EarnPoints("50").GrantCoupon("c1", time.Time{}).
			Freeze("CNY", "10.00", "hold1", 0)
	}

	cases := []struct{ name, top, ops string }{
		// Optional fields given as null or "" (docs/bad-input.md: "leave it out").
		{"a null hold on credit", "", `{"op":"credit","asset":"CNY","amount":"{A}","hold":null}`},
		{"a null ttl_ms on freeze", "", `{"op":"freeze","asset":"CNY","amount":"{A}","hold":"n1","ttl_ms":null}`},
		{"a null leg on settle", "", `{"op":"settle","hold":"hold1","leg":null}`},
		{"a null amount on settle", "", `{"op":"settle","hold":"hold1","leg":"CNY","amount":null}`},
		{"a null expires_ms on grant_coupon", "", `{"op":"grant_coupon","coupon":"g1","expires_ms":null}`},
		{"a null asset on earn_points", "", `{"op":"earn_points","amount":"1","asset":null}`},
		{"an empty leg on settle", "", `{"op":"settle","hold":"hold1","leg":""}`},
		{"an empty amount on settle", "", `{"op":"settle","hold":"hold1","leg":"CNY","amount":""}`},
		{"an empty asset on settle", "", `{"op":"settle","hold":"hold1","asset":""}`},
		{"an empty hold on credit", "", `{"op":"credit","asset":"CNY","amount":"{A}","hold":""}`},
		{"an empty coupon on earn_points", "", `{"op":"earn_points","amount":"1","coupon":""}`},
		{"a null memo", `"memo":null`, `{"op":"earn_points","amount":"1"}`},
		{"a null counterparty", `"counterparty":null`, `{"op":"earn_points","amount":"1"}`},
		{"an empty memo", `"memo":""`, `{"op":"earn_points","amount":"1"}`},
		{"an empty counterparty", `"counterparty":""`, `{"op":"earn_points","amount":"1"}`},
		// Ids.
		{"an id with colons", `"id":"a:b:c"`, `{"op":"earn_points","amount":"1"}`},
		{"an id with a brace", `"id":"a{b}"`, `{"op":"earn_points","amount":"1"}`},
		{"a unicode id", `"id":"é"`, `{"op":"earn_points","amount":"1"}`},
		{"an id of 65 bytes", `"id":"` + strings.Repeat("i", 65) + `"`, `{"op":"earn_points","amount":"1"}`},
		{"an id of 64 bytes", `"id":"` + strings.Repeat("i", 64) + `"`, `{"op":"earn_points","amount":"1"}`},
		{"an empty id", `"id":""`, `{"op":"earn_points","amount":"1"}`},
		{"a hold with a colon", "", `{"op":"freeze","asset":"CNY","amount":"{A}","hold":"o:1"}`},
		{"a hold beginning sweep-", "", `{"op":"freeze","asset":"CNY","amount":"{A}","hold":"sweep-1"}`},
		{"a coupon beginning x:", "", `{"op":"grant_coupon","coupon":"x:1"}`},
		{"a coupon with a space", "", `{"op":"grant_coupon","coupon":"a b"}`},
		{"a counterparty with a brace", `"counterparty":"{m}"`, `{"op":"earn_points","amount":"1"}`},
		// Amounts.
		{"an amount with a sign", "", `{"op":"credit","asset":"CNY","amount":"-{A}"}`},
		{"an amount with a space", "", `{"op":"credit","asset":"CNY","amount":" {A}"}`},
		{"an amount in exponent form", "", `{"op":"earn_points","amount":"1e3"}`},
		{"an amount of leading zeros", "", `{"op":"earn_points","amount":"000000000000000000001"}`},
		{"points at 2^53-1 on top of 50", "", `{"op":"earn_points","amount":"9007199254740991"}`},
		{"points at 2^53", "", `{"op":"earn_points","amount":"9007199254740992"}`},
		// Shapes.
		{"an amount that is an object", "", `{"op":"credit","asset":"CNY","amount":{"units":"{A}"}}`},
		{"an amount that is an array", "", `{"op":"credit","asset":"CNY","amount":["{A}"]}`},
		{"an amount that is true", "", `{"op":"credit","asset":"CNY","amount":true}`},
		{"a hold that is an object", "", `{"op":"freeze","asset":"CNY","amount":"{A}","hold":{"h":"x"}}`},
		{"a memo that is an object", `"memo":{"m":"x"}`, `{"op":"earn_points","amount":"1"}`},
		{"a memo of 256 bytes of 3-byte characters and one ASCII", `"memo":"` + strings.Repeat("€", 85) + `a"`, `{"op":"earn_points","amount":"1"}`},
		{"a memo of 258 bytes of 3-byte characters", `"memo":"` + strings.Repeat("€", 86) + `"`, `{"op":"earn_points","amount":"1"}`},
		{"a memo holding U+0085", `"memo":"ab"`, `{"op":"earn_points","amount":"1"}`},
		{"a memo holding an escaped tab", `"memo":"a\tb"`, `{"op":"earn_points","amount":"1"}`},
		{"a memo holding a raw tab", `"memo":"a` + "\t" + `b"`, `{"op":"earn_points","amount":"1"}`},
		{"a memo of 900 nested objects", `"memo":` + strings.Repeat(`{"m":`, 900) + `1` + strings.Repeat(`}`, 900), `{"op":"earn_points","amount":"1"}`},
		{"ops null", `"ops":null`, ""},
		{"an op that is a string", "", `"credit"`},
		{"an op that is null", "", `null`},
		{"an op name in capitals", "", `{"op":"CREDIT","asset":"CNY","amount":"{A}"}`},
		{"an asset the op does not take", "", `{"op":"earn_points","amount":"1","asset":"CNY"}`},
		{"ttl_ms as a string", "", `{"op":"freeze","asset":"CNY","amount":"{A}","hold":"n2","ttl_ms":"5"}`},
		{"ttl_ms negative", "", `{"op":"freeze","asset":"CNY","amount":"{A}","hold":"n3","ttl_ms":-1}`},
		{"ttl_ms of ten years and a ms", "", `{"op":"freeze","asset":"CNY","amount":"{A}","hold":"n4","ttl_ms":315360000001}`},
		{"ttl_ms a fraction", "", `{"op":"freeze","asset":"CNY","amount":"{A}","hold":"n5","ttl_ms":1.5}`},
		{"expires_ms of zero", "", `{"op":"grant_coupon","coupon":"g2","expires_ms":0}`},
		{"a leg points on release of a CNY hold", "", `{"op":"release","hold":"hold1","leg":"points"}`},
		{"a leg in lower case", "", `{"op":"release","hold":"hold1","leg":"cny"}`},
		// Numbers: JSON's grammar only (cjson reads them with strtod, which takes more).
		{"an amount as a hex number", "", `{"op":"credit","asset":"CNY","amount":0x10}`},
		{"a memo of a number with leading zeros", `"memo":007`, `{"op":"earn_points","amount":"1"}`},
		{"a trailing true after a number", "", `{"op":"earn_points","amount":"1","ttl_ms":1 true}`},
		{"an id holding a byte that is not UTF-8", "\"id\":\"a\xffb\"", `{"op":"earn_points","amount":"1"}`},
		{"a hold holding a surrogate in UTF-8", "", "{\"op\":\"freeze\",\"asset\":\"CNY\",\"amount\":\"{A}\",\"hold\":\"a\xed\xa0\x80\"}"},
		{"an id holding a raw tab", "\"id\":\"a\tb\"", `{"op":"earn_points","amount":"1"}`},
		{"a coupon holding a raw newline", "", "{\"op\":\"grant_coupon\",\"coupon\":\"a\nb\"}"},
		{"a coupon holding a raw control character", "", "{\"op\":\"grant_coupon\",\"coupon\":\"a\x01b\"}"},
		{"a vertical tab between tokens", "", "{\"op\":\"earn_points\",\v\"amount\":\"1\"}"},
		{"expires_ms spelt with an escape", "", `{"op":"grant_coupon","coupon":"ge","expires\u005fms":4102444800000}`},
		{"expires_ms spelt with an escape, in exponent form", "", `{"op":"grant_coupon","coupon":"ge","expires\u005fms":1e3}`},
		// Lanes: a JSON integer 2 .. 64, on open (optional) and set_lanes (required) only.
		{"lanes on credit", "", `{"op":"credit","asset":"CNY","amount":"{A}","lanes":4}`},
		{"lanes on earn_points", "", `{"op":"earn_points","amount":"1","lanes":2}`},
		{"set_lanes without lanes", "", `{"op":"set_lanes"}`},
		{"set_lanes with an asset", "", `{"op":"set_lanes","lanes":4,"asset":"CNY"}`},
	}
	for _, n := range []string{"0x10", "0X1F", "007", "+5", "5.", " 1", "9007199254740990.7", "1e3", "1E3", "1.0", "-0", "inf",
		"nan", "Infinity", "-Infinity", ".5", "\f1", "1\u000b", "- 1", "60000"} {
		cases = append(cases,
			struct{ name, top, ops string }{"ttl_ms " + n, "", `{"op":"freeze","asset":"CNY","amount":"{A}","hold":"nt","ttl_ms":` + n + `}`},
			struct{ name, top, ops string }{"expires_ms " + n, "", `{"op":"grant_coupon","coupon":"gn","expires_ms":` + n + `}`})
	}
	for _, n := range []string{"0", "1", "65", `"3"`, "3.0", "1e1", "-2", "2.5", "null", "true", "99999999999999999999"} {
		cases = append(cases,
			struct{ name, top, ops string }{"set_lanes lanes " + n, "", `{"op":"set_lanes","lanes":` + n + `}`},
			struct{ name, top, ops string }{"open lanes " + n, "", `{"op":"open","lanes":` + n + `}`})
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := fmt.Sprintf("doors-%03d", i)
			text := func(holder, amount string) string {
				top := `"id":"` + id + `","holder":"` + holder + `",`
				if strings.HasPrefix(c.top, `"id":`) {
					top = `"holder":"` + holder + `",`
				}
				if c.top != "" {
					top += c.top + ","
				}
				ops := `"ops":[` + c.ops + `]`
				if strings.HasPrefix(c.top, `"ops":`) {
					ops, top = "", strings.TrimSuffix(top, ",")
				}
				return strings.ReplaceAll("{"+top+ops+"}", "{A}", amount)
			}
			keyID := id
			if strings.HasPrefix(c.top, `"id":"`) {
				keyID = strings.TrimSuffix(strings.TrimPrefix(c.top, `"id":"`), `"`)
			}
			he, hd := newHolder(t, setup), newHolder(t, setup)
			judgeAlike(t, he, hd, keyID, text(he, "1.00"), text(hd, "100"))
		})
	}
}

// judgeAlike sends textE through the engine's door for holder he and textD
// (the same instruction, its amounts in minor units) through the JSON door,
// under id keyID, for holder hd, set up alike: both give the same code, or
// both apply with the same change and the same event; a refusal changes
// neither hash, and one found before the script's checks is not recorded.
// It gives the code, "" when both applied.
// engineAlone applies textE through the engine, on he, and gives its code,
// checking that the JSON door refuses textD, on hd, writing nothing: the
// door cannot open or raise lanes, which live in other slots
// (docs/hot-holders.md).
func engineAlone(t *testing.T, he, hd, keyID, textE, textD string) string {
	t.Helper()
	beforeE, beforeD := holderHash(t, he), holderHash(t, hd)
	ce := engineCode(t, textE)
	if ce != "" {
		assert.Equal(t, beforeE, holderHash(t, he), "the engine's refusal changed the holder")
	}
	out := fcallJSON(t, hd, keyID, textD)
	assert.Equal(t, string(instructions.CodeInvalidInstruction), cliCode(out), out)
	assert.Contains(t, out, "through the engine")
	assert.Equal(t, beforeD, holderHash(t, hd), "the door's refusal changed the holder")
	n, err := rdb.Exists(context.Background(), cluster.Tx(hd, keyID)).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "the door's refusal is not recorded")
	return ce
}

func judgeAlike(t *testing.T, he, hd, keyID, textE, textD string) string {
	t.Helper()
	beforeE, beforeD := holderHash(t, he), holderHash(t, hd)
	ce := engineCode(t, textE)
	out := fcallJSON(t, hd, keyID, textD)
	cd := cliCode(out)
	assert.Equal(t, ce, cd, "engine %q, JSON door %q (%s)", ce, cd, out)
	if ce == "" && cd == "" {
		// Both applied: the same change, the same event (a hold's
		// expiry, from each run's server clock, within a minute).
		assert.Equal(t, sameClock(t, fmt.Sprint(holderHash(t, he)), fmt.Sprint(holderHash(t, hd))),
			fmt.Sprint(holderHash(t, hd)), "the doors left different holders")
		ee, ed := readRaw(t, he).Events, readRaw(t, hd).Events
		require.Equal(t, len(ee), len(ed))
		require.NotEmpty(t, ee)
		for _, f := range []string{"seq", "id", "cp", "memo", "ops", "state", "dv"} {
			assert.Equal(t, sameClock(t, fmt.Sprint(ee[len(ee)-1][f]), fmt.Sprint(ed[len(ed)-1][f])), fmt.Sprint(ed[len(ed)-1][f]), "the event's %s", f)
		}
	}
	if ce != "" {
		assert.Equal(t, beforeE, holderHash(t, he), "the engine's refusal changed the holder")
	}
	if cd != "" {
		assert.Equal(t, beforeD, holderHash(t, hd), "the door's refusal changed the holder")
		if instructions.Code(cd) == instructions.CodeInvalidInstruction || instructions.Code(cd) == instructions.CodeInvalidID ||
			instructions.Code(cd) == instructions.CodeInvalidAmount || instructions.Code(cd) == instructions.CodeUnknownAsset {
			// Not recorded when found before the script's checks, as the
			// engine finds it before Redis; recorded by both when the script
			// finds it (a lane count that would lower the holder's).
			ne, err := rdb.Exists(context.Background(), cluster.Tx(he, keyID)).Result()
			require.NoError(t, err)
			nd, err := rdb.Exists(context.Background(), cluster.Tx(hd, keyID)).Result()
			require.NoError(t, err)
			assert.Equal(t, ne, nd, "a refusal is recorded by both doors or by neither")
			if instructions.Code(cd) != instructions.CodeInvalidInstruction {
				assert.Zero(t, nd, "a refusal before the script's checks is not recorded")
			}
		}
	}
	return cd
}

// DESIGN.md: counterparty is optional, "an id like the others": left out it
// is external; given empty it is no id (INVALID_ID), through either door, and
// nothing changes.
func TestConformance_AnEmptyCounterpartyIsInvalidID(t *testing.T) {
	needRedis(t)
	require.NoError(t, eng.Load(context.Background()))
	h := newHolder(t, nil)
	before := holderHash(t, h)
	text := `{"id":"cp-empty","holder":"` + h + `","counterparty":"","ops":[{"op":"earn_points","amount":"1"}]}`
	assert.Equal(t, "INVALID_ID", engineCode(t, text))
	assert.Equal(t, "INVALID_ID", cliCode(fcallJSON(t, h, "cp-empty", text)))
	assert.Equal(t, before, holderHash(t, h))

	left := `{"id":"cp-left","holder":"` + h + `","ops":[{"op":"earn_points","amount":"1"}]}`
	assert.Equal(t, "", engineCode(t, left), "left out, it is the default")
}

// serverMs matches a time in ms from the server's clock (this century's).
var serverMs = regexp.MustCompile(`\b1[0-9]{12}\b`)

// sameClock gives a with each of its server times replaced by b's at the
// same place, once it has checked that they are within a minute of each
// other: two runs of the same instruction read the clock apart.
func sameClock(t *testing.T, a, b string) string {
	t.Helper()
	as, bs := serverMs.FindAllString(a, -1), serverMs.FindAllString(b, -1)
	if len(as) != len(bs) {
		return a
	}
	i := 0
	return serverMs.ReplaceAllStringFunc(a, func(m string) string {
		x, _ := strconv.ParseInt(m, 10, 64)
		y, _ := strconv.ParseInt(bs[i], 10, 64)
		i++
		assert.InDelta(t, x, y, 60000, "server times %d and %d", x, y)
		return strconv.FormatInt(y, 10)
	})
}
