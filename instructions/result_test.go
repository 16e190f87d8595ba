package instructions

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// resultSamples are results of every shape: touched accounts or none, open
// holds with and without coupons and expiry, nil and empty maps.
func resultSamples(s string) []Result {
	return []Result{
		{ID: "order-55-pay", Holder: "u1001", Seq: 17, Balances: map[string]Balance{"CNY": {"120.00", "0.00"}},
			Points: &Points{"3000", "0"}, Coupons: map[string]string{"c-9": "used"}, Holds: map[string]Hold{}},
		{ID: "i", Holder: "h", Seq: 1, Replayed: true, Balances: map[string]Balance{"USDT": {"5.000000", "1.000000"}, "CNY": {"0.01", "0.00"}, "BTC": {"0", "0"}},
			Coupons: map[string]string{"c-2": "held:o", "c-1": "available"},
			Holds: map[string]Hold{"o": {Legs: map[string]string{"points": "20", "CNY": "30.00"}, Coupons: []string{"c-2", "c-3"}, ExpiresMs: 1796000000000},
				"p": {Legs: map[string]string{}, Coupons: []string{}}, "q": {}}},
		{},
		{ID: s, Holder: s, Seq: -1, Balances: map[string]Balance{s: {s, s}, "A": {}}, Points: &Points{s, s},
			Coupons: map[string]string{s: s, "b": s}, Holds: map[string]Hold{s: {Legs: map[string]string{s: s}, Coupons: []string{s, s}, ExpiresMs: -5}}},
	}
}

// TestResult_AppendJSONIsMarshal: AppendJSON writes what json.Marshal
// writes, byte for byte, escapes included.
func TestResult_AppendJSONIsMarshal(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "<a&b>", "\x00\n\t\x1f\x7f", "é\u2028\u2029", "\xff\xfe", "held:order-55"} {
		for _, r := range resultSamples(s) {
			want, err := json.Marshal(r)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(r.AppendJSON(nil)))
		}
	}
}

// TestResult_AppendJSONAllocations: an answer is written into the caller's
// buffer, with nothing allocated on the way.
func TestResult_AppendJSONAllocations(t *testing.T) {
	r := resultSamples("")[1]
	buf := make([]byte, 0, 1024)
	assert.Zero(t, testing.AllocsPerRun(100, func() { buf = r.AppendJSON(buf[:0]) }))
}

func FuzzResult_AppendJSON(f *testing.F) {
	f.Add("CNY", "120.00", "held:o")
	f.Add("<&>", "\xff", "\u2028")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		for _, r := range append(resultSamples(a), resultSamples(b)...) {
			r.Holds = map[string]Hold{c: {Legs: map[string]string{a: b, c: a}, Coupons: []string{c}}}
			want, err := json.Marshal(r)
			require.NoError(t, err)
			require.Equal(t, string(want), string(r.AppendJSON(nil)))
		}
	})
}
