package instructions_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
)

// TestDecode_EdgesSayWhatIsWrong: null and empty fields are refused, and a
// message names the field and what it must be, never Go's types.
func TestDecode_EdgesSayWhatIsWrong(t *testing.T) {
	reg := instructions.MustParseAssets(instructions.DefaultAssets)
	cases := []struct {
		name, body string
		code       instructions.Code
		msg        string
	}{
		{"an empty body says so", "", instructions.CodeInvalidInstruction, `the body is empty: want a JSON object`},
		{"a body of white space says it is empty", " \n\t ", instructions.CodeInvalidInstruction, `the body is empty`},
		{"a null hold is refused", `{"id":"a","holder":"u","ops":[{"op":"credit","asset":"CNY","amount":"1","hold":null}]}`,
			instructions.CodeInvalidInstruction, `field "hold" is null: leave it out`},
		{"a null asset on earn_points is refused", `{"id":"a","holder":"u","ops":[{"op":"earn_points","amount":"1","asset":null}]}`,
			instructions.CodeInvalidInstruction, `field "asset" is null`},
		{"a null memo is refused", `{"id":"a","holder":"u","memo":null,"ops":[{"op":"credit","asset":"CNY","amount":"1"}]}`,
			instructions.CodeInvalidInstruction, `field "memo" is null`},
		{"a null ttl_ms is refused", `{"id":"a","holder":"u","ops":[{"op":"freeze","asset":"CNY","amount":"1","hold":"h","ttl_ms":null}]}`,
			instructions.CodeInvalidInstruction, `field "ttl_ms" is null`},
		{"an empty leg on earn_points is refused", `{"id":"a","holder":"u","ops":[{"op":"earn_points","amount":"1","leg":""}]}`,
			instructions.CodeInvalidInstruction, `field "leg" is empty: leave it out`},
		{"an empty leg on settle is refused", `{"id":"a","holder":"u","ops":[{"op":"settle","hold":"h","leg":""}]}`,
			instructions.CodeInvalidInstruction, `field "leg" is empty`},
		{"a ttl_ms given as a string names the field", `{"id":"a","holder":"u","ops":[{"op":"freeze","asset":"CNY","amount":"1","hold":"h","ttl_ms":"5"}]}`,
			instructions.CodeInvalidInstruction, `field "ttl_ms" must be a whole number, got string`},
		{"a missing id says it is required", `{"holder":"u","ops":[{"op":"credit","asset":"CNY","amount":"1"}]}`,
			instructions.CodeInvalidID, `id is required`},
		{"a holder of dots alone is refused", `{"id":"a","holder":"..","ops":[{"op":"credit","asset":"CNY","amount":"1"}]}`,
			instructions.CodeInvalidID, `holder ".." is dots alone`},
		{"an id of one dot is refused", `{"id":".","holder":"u","ops":[{"op":"credit","asset":"CNY","amount":"1"}]}`,
			instructions.CodeInvalidID, `id "." is dots alone`},
		{"a hold of dots alone is refused", `{"id":"a","holder":"u","ops":[{"op":"freeze","asset":"CNY","amount":"1","hold":"..."}]}`,
			instructions.CodeInvalidID, `hold "..." is dots alone`},
		{"a byte order mark is named", "\ufeff" + `{"id":"a","holder":"u","ops":[{"op":"credit","asset":"CNY","amount":"1"}]}`,
			instructions.CodeInvalidInstruction, `starts with a UTF-8 byte order mark`},
		{"a settle with an asset is told to use leg", `{"id":"a","holder":"u","ops":[{"op":"settle","hold":"h","asset":"CNY"}]}`,
			instructions.CodeInvalidInstruction, `settle takes no asset: it names the hold's asset as leg`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, err := instructions.Decode([]byte(c.body))
			if err == nil {
				err = in.Validate(reg)
			}
			require.Error(t, err)
			var e *instructions.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, c.code, e.Code)
			assert.Contains(t, e.Message, c.msg)
			assert.NotContains(t, e.Message, "Go struct")
		})
	}
	// Ids with dots among other characters stay valid.
	for _, id := range []string{"a.b", ".a", "a..", "v1.2.3"} {
		assert.True(t, instructions.ValidID(id), id)
	}
}

// TestTransfer_UnbalancedSaysDecimals: the message of parts that do not
// balance speaks in the asset's decimals, as the request did.
func TestTransfer_UnbalancedSaysDecimals(t *testing.T) {
	tr := instructions.Transfer{ID: "t1", Parts: []instructions.Part{
		{Holder: "a", Ops: instructions.New("", "").Debit("CNY", "1.00").Ops},
		{Holder: "b", Ops: instructions.New("", "").Credit("CNY", "2.00").Ops},
	}}
	_, err := tr.Normalize(instructions.MustParseAssets(instructions.DefaultAssets))
	var e *instructions.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, instructions.CodeInvalidInstruction, e.Code)
	assert.Equal(t, "the parts do not balance: 1.00 CNY leave, 2.00 arrive", e.Message)
}

// A settle without an amount in a transfer takes what balances the
// transfer: all that is left of its leg, or of the whole hold's one leg.
func TestTransfer_SettleWithoutAnAmountTakesWhatBalances(t *testing.T) {
	reg := instructions.MustParseAssets(instructions.DefaultAssets)
	op := func() instructions.Instruction { return instructions.New("", "") }
	for _, c := range []struct {
		name  string
		payer instructions.Instruction
		payee instructions.Instruction
		asset string
		units int64
		rest  int8
		err   string
	}{
		{"the rest of a leg", op().SettleLeg("o", "CNY", ""), op().Credit("CNY", "3.00"), "CNY", 300, instructions.RestLeg, ""},
		{"the rest of a leg beside a debit", op().SettleLeg("o", "CNY", "").Debit("CNY", "1.00"), op().Credit("CNY", "3.00"), "CNY", 200, instructions.RestLeg, ""},
		{"a whole hold", op().Settle("o"), op().Credit("USDT", "100"), "USDT", 100000000, instructions.RestHold, ""},
		{"points", op().SettleLeg("o", "points", ""), op().EarnPoints("70"), "points", 70, instructions.RestLeg, ""},
		{"nothing left to balance", op().SettleLeg("o", "CNY", "").Debit("CNY", "3.00"), op().Credit("CNY", "3.00"), "", 0, 0,
			"settle of all that is left of CNY in hold o: the other parts receive 3.00 CNY, and 3.00 leave without it"},
		{"a whole hold, two assets arriving", op().Settle("o"), op().Credit("CNY", "1.00").Credit("USD", "1.00"), "", 0, 0,
			"settle of the whole hold o: the other parts receive CNY, USD: a transfer settles a whole hold of one leg"},
		{"a whole hold, nothing arriving", op().Settle("o").Debit("CNY", "1.00"), op().Credit("CNY", "1.00"), "", 0, 0,
			"settle of the whole hold o: no other part receives what it would move"},
		{"two without an amount", op().Settle("o").SettleLeg("p", "CNY", ""), op().Credit("CNY", "1.00"), "", 0, 0,
			"a transfer settles at most one hold without an amount"},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, err := instructions.Transfer{ID: "t1", Parts: []instructions.Part{
				{Holder: "a", Ops: c.payer.Ops}, {Holder: "b", Ops: c.payee.Ops}}}.Normalize(reg)
			if c.err != "" {
				var e *instructions.Error
				require.ErrorAs(t, err, &e)
				assert.Equal(t, instructions.CodeInvalidInstruction, e.Code)
				assert.Contains(t, e.Message, c.err)
				assert.Contains(t, e.Message, "part 0")
				return
			}
			require.NoError(t, err)
			s := n.Parts[0].Steps[0]
			assert.Equal(t, c.asset, s.Asset)
			assert.Equal(t, c.units, s.Units)
			assert.Equal(t, c.rest, s.Rest)
			assert.Equal(t, 0, n.Payer, "a settle pays")
		})
	}
}
