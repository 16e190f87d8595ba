package instructions

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testAssets = MustParseAssets(DefaultAssets)

func TestDecode_DesignExample(t *testing.T) {
	in, err := Decode([]byte(`{
	  "id": "order-55-pay", "holder": "u1001", "counterparty": "merchant:88", "memo": "checkout order 55",
	  "ops": [
	    {"op": "debit", "asset": "CNY", "amount": "80.00"},
	    {"op": "spend_points", "amount": "2000"},
	    {"op": "redeem_coupon", "coupon": "c-9"}
	  ]}`))
	require.NoError(t, err)
	want := New("order-55-pay", "u1001").WithCounterparty("merchant:88").WithMemo("checkout order 55").
		Debit("CNY", "80.00").SpendPoints("2000").RedeemCoupon("c-9")
	assert.Equal(t, want, in)
	require.NoError(t, in.Validate(testAssets))
}

func TestDecode_Rejects(t *testing.T) {
	cases := []struct {
		name, body string
		code       error
	}{
		{"amount as a JSON number", `{"id":"a","holder":"h","ops":[{"op":"credit","asset":"CNY","amount":80}]}`, ErrInvalidAmount},
		{"big amount as a JSON number", `{"id":"a","holder":"h","ops":[{"op":"credit","asset":"CNY","amount":123456789012345678901234567890}]}`, ErrInvalidAmount},
		{"amount as null", `{"id":"a","holder":"h","ops":[{"op":"credit","asset":"CNY","amount":null}]}`, ErrInvalidAmount},
		{"unknown field", `{"id":"a","holder":"h","extra":1,"ops":[{"op":"open"}]}`, ErrInvalidInstruction},
		{"unknown op field", `{"id":"a","holder":"h","ops":[{"op":"open","colour":"red"}]}`, ErrInvalidInstruction},
		{"malformed JSON", `{"id":"a",`, ErrInvalidInstruction},
		{"trailing data", `{"id":"a","holder":"h","ops":[{"op":"open"}]} {}`, ErrInvalidInstruction},
		{"wrong type", `{"id":1,"holder":"h","ops":[{"op":"open"}]}`, ErrInvalidInstruction},
		{"not an object", `[1,2]`, ErrInvalidInstruction},
		{"empty", ``, ErrInvalidInstruction},
		{"too large", `{"id":"a","holder":"h","memo":"` + strings.Repeat("x", MaxPayload) + `","ops":[{"op":"open"}]}`, ErrInvalidInstruction},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode([]byte(c.body))
			require.Error(t, err)
			assert.ErrorIs(t, err, c.code)
			var e *Error
			assert.True(t, errors.As(err, &e))
		})
	}
}

func TestNormalize(t *testing.T) {
	n, err := New("i", "h").Credit("CNY", "1.5").Freeze("BTC", "0.1", "o", time.Minute).SettleLeg("o", "points", "").
		GrantCoupon("c", time.UnixMilli(1796000000000)).Normalize(testAssets)
	require.NoError(t, err)
	assert.Equal(t, DefaultCounterparty, n.Counterparty)
	assert.Equal(t, []Step{
		{Op: OpCredit, Asset: "CNY", Units: 150},
		{Op: OpFreeze, Asset: "BTC", Units: 10000000, Hold: "o", Ms: 60000},
		{Op: OpSettle, Asset: "points", Hold: "o"},
		{Op: OpGrantCoupon, Coupon: "c", Ms: 1796000000000},
	}, n.Steps)
}

func TestNormalize_Rejects(t *testing.T) {
	base := New("i", "h")
	many := base
	for i := 0; i < MaxOps+1; i++ {
		many = many.Credit("CNY", "1")
	}
	neg := int64(-1)
	cases := []struct {
		name string
		in   Instruction
		code error
		op   int
	}{
		{"no ops", base, ErrInvalidInstruction, NoOp},
		{"65 ops", many, ErrTooManyOps, NoOp},
		{"brace in the holder", New("i", "{h}").Open(), ErrInvalidID, NoOp},
		{"space in the id", New("a b", "h").Open(), ErrInvalidID, NoOp},
		{"newline in the holder", New("i", "h\n").Open(), ErrInvalidID, NoOp},
		{"id of 65 bytes", New(strings.Repeat("i", 65), "h").Open(), ErrInvalidID, NoOp},
		{"bad counterparty", base.WithCounterparty("a b").Open(), ErrInvalidID, NoOp},
		{"memo too long", base.WithMemo(strings.Repeat("m", MaxMemo+1)).Open(), ErrInvalidInstruction, NoOp},
		{"unknown op", Instruction{ID: "i", Holder: "h", Ops: []Op{{Op: "steal"}}}, ErrInvalidInstruction, 0},
		{"credit without amount", Instruction{ID: "i", Holder: "h", Ops: []Op{{Op: OpCredit, Asset: "CNY"}}}, ErrInvalidInstruction, 0},
		{"debit with a hold", Instruction{ID: "i", Holder: "h", Ops: []Op{{Op: OpDebit, Asset: "CNY", Amount: "1", Hold: "x"}}}, ErrInvalidInstruction, 0},
		{"open with an asset", Instruction{ID: "i", Holder: "h", Ops: []Op{{Op: OpOpen, Asset: "CNY"}}}, ErrInvalidInstruction, 0},
		{"settle amount without a leg", Instruction{ID: "i", Holder: "h", Ops: []Op{{Op: OpSettle, Hold: "x", Amount: "1"}}}, ErrInvalidInstruction, 0},
		{"unknown asset", base.Open().Credit("XYZ", "1"), ErrUnknownAsset, 1},
		{"points as an asset", base.Credit(PointsLeg, "1"), ErrUnknownAsset, 0},
		{"unknown leg", base.SettleLeg("x", "XYZ", ""), ErrUnknownAsset, 0},
		{"points with decimals", base.EarnPoints("1.5"), ErrInvalidAmount, 0},
		{"bad hold id", base.Freeze("CNY", "1", "a{b}", 0), ErrInvalidID, 0},
		{"bad coupon id", base.RedeemCoupon(strings.Repeat("c", 65)), ErrInvalidID, 0},
		{"negative ttl", Instruction{ID: "i", Holder: "h", Ops: []Op{{Op: OpFreeze, Asset: "CNY", Amount: "1", Hold: "x", TTLMs: &neg}}}, ErrInvalidInstruction, 0},
		{"negative expiry", Instruction{ID: "i", Holder: "h", Ops: []Op{{Op: OpGrantCoupon, Coupon: "c", ExpiresMs: &neg}}}, ErrInvalidInstruction, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.in.Validate(testAssets)
			require.Error(t, err)
			assert.ErrorIs(t, err, c.code)
			var e *Error
			require.True(t, errors.As(err, &e))
			assert.Equal(t, c.op, e.OpIndex)
			assert.Equal(t, c.in.ID, e.ID)
		})
	}
}

func TestBuilder_LeavesItsReceiverAlone(t *testing.T) {
	base := New("i", "h").Credit("CNY", "1")
	a := base.Debit("CNY", "1")
	b := base.EarnPoints("1")
	assert.Len(t, base.Ops, 1)
	assert.Equal(t, OpDebit, a.Ops[1].Op)
	assert.Equal(t, OpEarnPoints, b.Ops[1].Op)
}

func TestError_JSON(t *testing.T) {
	b, err := (&Error{Code: CodeInsufficientFunds, OpIndex: 0, Message: "m"}).MarshalJSON()
	require.NoError(t, err)
	assert.JSONEq(t, `{"code":"INSUFFICIENT_FUNDS","op_index":0,"message":"m"}`, string(b))
	b, err = (&Error{Code: CodeIdempotencyConflict, OpIndex: NoOp, Message: "m"}).MarshalJSON()
	require.NoError(t, err)
	assert.JSONEq(t, `{"code":"IDEMPOTENCY_CONFLICT","message":"m"}`, string(b))
}

// Every accepted instruction survives a round trip through Encode.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"id":"order-55-pay","holder":"u1001","ops":[{"op":"debit","asset":"CNY","amount":"80.00"}]}`))
	f.Add([]byte(`{"id":"a","holder":"h","ops":[{"op":"freeze","asset":"BTC","amount":"0.1","hold":"o","ttl_ms":60000}]}`))
	f.Add([]byte(`{"id":"a","holder":"h","ops":[{"op":"grant_coupon","coupon":"c","expires_ms":1796000000000}]}`))
	f.Add([]byte(`{"id":"a","holder":"h","ops":[{"op":"settle","hold":"o","leg":"points","amount":"5"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := Decode(data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Decode error %v is not an *Error", err)
			}
			return
		}
		n, err := in.Normalize(testAssets)
		if err != nil {
			return
		}
		b, err := Encode(in)
		require.NoError(t, err)
		again, err := Decode(b)
		require.NoError(t, err, "re-encoded %s", b)
		n2, err := again.Normalize(testAssets)
		require.NoError(t, err, "re-encoded %s", b)
		require.Equal(t, n, n2)
	})
}

func TestDecode_RefusesAmbiguousKeys(t *testing.T) {
	for name, body := range map[string]string{
		"a duplicate key":             `{"id":"a","id":"b","holder":"h","ops":[{"op":"open"}]}`,
		"a duplicate op key":          `{"id":"a","holder":"h","ops":[{"op":"credit","asset":"CNY","amount":"1","amount":"1000"}]}`,
		"a key in another case":       `{"ID":"a","holder":"h","ops":[{"op":"open"}]}`,
		"an op key in another case":   `{"id":"a","holder":"h","ops":[{"op":"credit","asset":"CNY","Amount":"1"}]}`,
		"a duplicate in another case": `{"id":"a","holder":"h","ops":[{"op":"credit","asset":"CNY","amount":"1","AMOUNT":"2"}]}`,
		"invalid UTF-8":               "{\"id\":\"a\",\"holder\":\"h\",\"memo\":\"\xff\",\"ops\":[{\"op\":\"open\"}]}",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Decode([]byte(body))
			assert.ErrorIs(t, err, ErrInvalidInstruction)
		})
	}
}
