package instructions

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
