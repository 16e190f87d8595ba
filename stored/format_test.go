package stored_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/stored"
)

func TestParseHold(t *testing.T) {
	t.Run("a well-formed hold gives its expiry, legs and coupons", func(t *testing.T) {
		exp, legs, coupons, err := stored.ParseHold("1700000000000|CNY=8000,points=50|c-1,c-2")
		require.NoError(t, err)
		assert.Equal(t, int64(1700000000000), exp)
		assert.Equal(t, map[string]int64{"CNY": 8000, "points": 50}, legs)
		assert.Equal(t, []string{"c-1", "c-2"}, coupons)
	})
	t.Run("a hold without legs or coupons has empty ones, not nil", func(t *testing.T) {
		exp, legs, coupons, err := stored.ParseHold("0||")
		require.NoError(t, err)
		assert.Equal(t, int64(0), exp)
		assert.Equal(t, map[string]int64{}, legs)
		assert.Equal(t, []string{}, coupons)
	})
	t.Run("a count of undecided takes is read past the coupons", func(t *testing.T) {
		exp, legs, coupons, err := stored.ParseHold("5|||2")
		require.NoError(t, err)
		assert.Equal(t, int64(5), exp)
		assert.Equal(t, map[string]int64{}, legs)
		assert.Equal(t, []string{}, coupons)
		_, legs, coupons, err = stored.ParseHold("5|CNY=1|c-1|1")
		require.NoError(t, err)
		assert.Equal(t, map[string]int64{"CNY": 1}, legs)
		assert.Equal(t, []string{"c-1"}, coupons)
	})
	for _, raw := range []string{"", "0", "0|CNY=1", "x|CNY=1|", "0|CNY|", "0|CNY=x|", "0|CNY=1,|", "0|CNY=99999999999999999999|",
		"0|CNY=1||", "0|CNY=1||0", "0|CNY=1||x", "0|CNY=1||1|2"} {
		t.Run("a malformed hold is an error: "+raw, func(t *testing.T) {
			_, legs, _, err := stored.ParseHold(raw)
			assert.Error(t, err)
			assert.Nil(t, legs)
		})
	}
}

func TestReadHold_ReadsWhatItCanOfAMalformedHold(t *testing.T) {
	legs := map[string]string{}
	exp, coupons, err := stored.ReadHold("5|CNY=1,bad,USDT=x|c-1", func(a, units string) { legs[a] = units })
	assert.Error(t, err, "ParseHold refuses it")
	assert.Equal(t, int64(5), exp)
	assert.Equal(t, map[string]string{"CNY": "1", "USDT": "x"}, legs, "a leg without = is skipped")
	assert.Equal(t, []string{"c-1"}, coupons)
}

func TestParseCoupon(t *testing.T) {
	st, exp := stored.ParseCoupon("available")
	assert.Equal(t, "available", st)
	assert.Equal(t, int64(0), exp)
	st, exp = stored.ParseCoupon("held:h-1|1700000000000")
	assert.Equal(t, "held:h-1", st)
	assert.Equal(t, int64(1700000000000), exp)
}

func TestParseResult(t *testing.T) {
	r, err := stored.ParseResult(`{"s":"7","st":"active","b":{"CNY":["100","20"]},"p":["5","0"],"c":{"c-1":"used"},"h":{"h-1":"0|CNY=20|"}}`)
	require.NoError(t, err)
	assert.Equal(t, stored.Result{Seq: "7", Balances: map[string][2]string{"CNY": {"100", "20"}}, Points: &[2]string{"5", "0"},
		Coupons: map[string]string{"c-1": "used"}, Holds: map[string]string{"h-1": "0|CNY=20|"}}, r)
	_, err = stored.ParseResult(`{"s":7}`)
	assert.Error(t, err, "seq is a string")
}

// Whatever the text, ParseHold succeeds exactly when ReadHold finds no flaw,
// with the same expiry, legs and coupons.
func FuzzParseHold(f *testing.F) {
	for _, s := range []string{"0||", "1700000000000|CNY=8000,points=50|c-1,c-2", "x|CNY|", "|||"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		exp, legs, coupons, err := stored.ParseHold(raw)
		read := map[string]int64{}
		rexp, rcoupons, rerr := stored.ReadHold(raw, func(a, units string) { read[a] = 0 })
		if (err == nil) != (rerr == nil) {
			t.Fatalf("%q: ParseHold %v, ReadHold %v", raw, err, rerr)
		}
		if err != nil {
			return
		}
		assert.Equal(t, rexp, exp)
		assert.Equal(t, rcoupons, coupons)
		assert.Len(t, legs, len(read))
	})
}
