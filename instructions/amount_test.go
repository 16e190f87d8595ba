package instructions

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestToUnits(t *testing.T) {
	cases := []struct {
		in    string
		scale int32
		want  int64
		ok    bool
	}{
		{"80.00", 2, 8000, true},
		{"80", 2, 8000, true},
		{"80.5", 2, 8050, true},
		{"0.01", 2, 1, true},
		{"007.50", 2, 750, true},
		{"90071992547409.91", 2, MaxUnits, true},
		{"9007199254740991", 0, MaxUnits, true},
		{"0.00000001", 8, 1, true},
		{"90071992547409.92", 2, 0, false}, // 2^53
		{"1.001", 2, 0, false},             // a digit past the scale
		{"1.000", 2, 0, false},             // even a zero past the scale
		{"0", 2, 0, false},
		{"0.00", 2, 0, false},
		{"-1", 2, 0, false},
		{"+1", 2, 0, false},
		{"1e3", 2, 0, false},
		{"0x10", 0, 0, false},
		{" 5", 0, 0, false},
		{"5 ", 0, 0, false},
		{"NaN", 0, 0, false},
		{"Infinity", 0, 0, false},
		{"inf", 0, 0, false},
		{".5", 2, 0, false},
		{"5.", 2, 0, false},
		{"", 2, 0, false},
		{"1,5", 2, 0, false},
		{"１", 0, 0, false}, // a full-width digit
		{"99999999999999999999999999999999999999999", 0, 0, false},
	}
	for _, c := range cases {
		got, ok := ToUnits(c.in, c.scale)
		assert.Equal(t, c.ok, ok, "%q", c.in)
		assert.Equal(t, c.want, got, "%q", c.in)
	}
}

func TestFromUnits(t *testing.T) {
	assert.Equal(t, "80.00", FromUnits(8000, 2))
	assert.Equal(t, "0.00000001", FromUnits(1, 8))
	assert.Equal(t, "90071992547409.91", FromUnits(MaxUnits, 2))
	assert.Equal(t, "0", FromUnits(0, 0))
	assert.Equal(t, "0.000000", FromUnits(0, 6))
}

// FromUnits formats most amounts without decimal: its answer must be
// decimal's, byte for byte, at every scale, for edge values and many random
// ones of every length.
func TestFromUnits_AsDecimal(t *testing.T) {
	var values []int64
	for p := int64(1); p <= math.MaxInt64/10; p *= 10 {
		values = append(values, p-1, p, p+1, 2*p, 5*p-1, 9*p)
	}
	values = append(values, MaxUnits, MaxUnits+1, math.MaxInt64, math.MaxInt64-1, -1, -100, math.MinInt64)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	for range 20000 {
		values = append(values, r.Int64N(int64(math.Pow10(1+r.IntN(18)))), r.Int64())
	}
	for scale := int32(-2); scale <= 20; scale++ {
		for _, v := range values {
			require.Equal(t, decimal.New(v, -scale).StringFixed(scale), FromUnits(v, scale), "FromUnits(%d, %d)", v, scale)
		}
	}
}

// toUnitsDecimal is ToUnits as first written, all through decimal.
func toUnitsDecimal(amount string, scale int32) (int64, bool) {
	if !decimalSyntax(amount) {
		return 0, false
	}
	if _, frac, ok := strings.Cut(amount, "."); ok && len(frac) > int(scale) {
		return 0, false
	}
	d, err := decimal.NewFromString(amount)
	if err != nil {
		return 0, false
	}
	units := d.Shift(scale)
	if !units.IsInteger() || units.Sign() <= 0 || units.GreaterThan(decimal.NewFromInt(MaxUnits)) {
		return 0, false
	}
	return units.IntPart(), true
}

// ToUnits reads most amounts without decimal: it must answer as decimal does.
func TestToUnits_AsDecimal(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + r.IntN(10))
			if r.IntN(4) == 0 {
				b[i] = "09"[r.IntN(2)]
			}
		}
		return string(b)
	}
	ins := []string{"0", "0.0", "1", "9007199254740991", "9007199254740992", "90071992547409.91", "90071992547409.92",
		"999999999999999999", "9999999999999999999", "0000000000000000001", "1.", ".1", "", "-1"}
	for range 50000 {
		in := digits(r.IntN(22))
		if r.IntN(2) == 0 {
			in += "." + digits(r.IntN(20))
		}
		ins = append(ins, in)
	}
	for scale := int32(-2); scale <= 20; scale++ {
		for _, in := range ins {
			wantU, wantOK := toUnitsDecimal(in, scale)
			gotU, gotOK := ToUnits(in, scale)
			require.Equal(t, wantOK, gotOK, "ToUnits(%q, %d)", in, scale)
			require.Equal(t, wantU, gotU, "ToUnits(%q, %d)", in, scale)
		}
	}
}

func BenchmarkFromUnits(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = FromUnits(99992000, 2)
	}
}

func BenchmarkToUnits(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_, _ = ToUnits("100.000000", 6)
	}
}

func TestParseAssets(t *testing.T) {
	r, err := ParseAssets("CNY:2,USDT:6,BTC:8")
	assert.NoError(t, err)
	s, ok := r.Scale("USDT")
	assert.True(t, ok)
	assert.Equal(t, int32(6), s)
	s, ok = r.Scale(PointsLeg)
	assert.True(t, ok)
	assert.Equal(t, int32(0), s)
	_, ok = r.Scale("EUR")
	assert.False(t, ok)
	assert.Equal(t, "BTC:8,CNY:2,USDT:6", r.String())

	for _, bad := range []string{"", "CNY", "CNY:x", "cny:2", "CNY:-1", "CNY:16", "CNY:2,CNY:2", "{A}:2", "TOOLONGASSETCODE1:2"} {
		_, err := ParseAssets(bad)
		assert.Error(t, err, "%q", bad)
	}
}
