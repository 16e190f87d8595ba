package instructions

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// transferSamples are transfers of every shape: every op field set or left
// out, nil and empty parts and ops.
func transferSamples(s string) []Transfer {
	ttl, at, zero := int64(60000), int64(1796000000000), int64(0)
	return []Transfer{
		{ID: "pay-1", Parts: []Part{
			{Holder: "alice", Ops: []Op{{Op: OpDebit, Asset: "CNY", Amount: "10.00"}}},
			{Holder: "bob", Ops: []Op{{Op: OpCredit, Asset: "CNY", Amount: "10.00"}}}}},
		{ID: "trade", Parts: []Part{
			{Holder: "b", Ops: []Op{{Op: OpSettle, Hold: "o", Leg: "USDT", Amount: "10"}, {Op: OpCredit, Asset: "BTC", Amount: "0.0001"}}},
			{Holder: "s", Ops: []Op{{Op: OpSettle, Hold: "o"}, {Op: OpEarnPoints, Amount: "5"}, {Op: "x", TTLMs: &ttl, ExpiresMs: &at}}},
			{Holder: "n", Ops: nil}, {Holder: "e", Ops: []Op{}}, {Ops: []Op{{Coupon: "c", TTLMs: &zero}}}}},
		{},
		{Parts: []Part{}},
		{ID: s, Parts: []Part{{Holder: s, Ops: []Op{{Op: s, Asset: s, Amount: Amount(s), Hold: s, Leg: s, Coupon: s}}}}},
	}
}

// TestTransfer_AppendJSONIsEncode: AppendJSON writes what EncodeTransfer
// writes, byte for byte, escapes included.
func TestTransfer_AppendJSONIsEncode(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "<a&b>", "\x00\n\t\x1f\x7f", "é\u2028\u2029", "x:pay-1"} {
		for _, tr := range transferSamples(s) {
			want, err := EncodeTransfer(tr)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(tr.AppendJSON(nil)))
		}
	}
}

// TestTransfer_AppendJSONAllocations: a body is written into the caller's
// buffer, with nothing allocated on the way.
func TestTransfer_AppendJSONAllocations(t *testing.T) {
	tr := transferSamples("")[1]
	buf := make([]byte, 0, 1024)
	assert.Zero(t, testing.AllocsPerRun(100, func() { buf = tr.AppendJSON(buf[:0]) }))
}

// FuzzTransfer_AppendJSON holds AppendJSON to EncodeTransfer on any valid
// UTF-8 (the engine encodes only normalized transfers, whose strings are).
func FuzzTransfer_AppendJSON(f *testing.F) {
	f.Add("CNY", "10.00")
	f.Add("<&>", "\u2028")
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			t.Skip()
		}
		for _, tr := range append(transferSamples(a), transferSamples(b)...) {
			tr.Parts = append(tr.Parts, Part{Holder: b, Ops: []Op{{Op: a, Amount: Amount(b)}}})
			want, err := EncodeTransfer(tr)
			require.NoError(t, err)
			require.Equal(t, string(want), string(tr.AppendJSON(nil)))
		}
	})
}
