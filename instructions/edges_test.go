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
