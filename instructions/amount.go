package instructions

import (
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// MaxUnits is the largest amount and the largest stored value, in minor units:
// 2^53-1, the last integer a double holds exactly.
const MaxUnits = 1<<53 - 1

// decimalSyntax tells whether s is a decimal amount: 1 to 40 digits,
// optionally a point and 1 to 40 more. No sign, no exponent, no spaces:
// anything else is INVALID_AMOUNT. The length bound keeps parsing cheap on
// hostile input.
func decimalSyntax(s string) bool {
	whole, frac, point := strings.Cut(s, ".")
	return digits(whole) && (!point || digits(frac))
}

func digits(s string) bool {
	if len(s) == 0 || len(s) > 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ToUnits converts a decimal string to minor units at the given scale. It never
// rounds: more fractional digits than the scale (even zeros, as the contract
// words it), zero, or more than MaxUnits is an error.
func ToUnits(amount string, scale int32) (int64, bool) {
	if !decimalSyntax(amount) {
		return 0, false
	}
	whole, frac, ok := strings.Cut(amount, ".")
	if ok && len(frac) > int(scale) {
		return 0, false
	}
	if scale >= 0 && len(whole)+int(scale) <= 18 {
		// 18 digits always fit an int64: the common case needs no
		// decimal, which allocates big.Ints on every call.
		var units int64
		for _, c := range whole + frac {
			units = units*10 + int64(c-'0')
		}
		for range int(scale) - len(frac) {
			units *= 10
		}
		if units <= 0 || units > MaxUnits {
			return 0, false
		}
		return units, true
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

// FromUnits formats minor units as a decimal string with exactly scale digits
// after the point.
func FromUnits(units int64, scale int32) string {
	if units < 0 || scale < 0 || scale > 18 {
		return decimal.New(units, -scale).StringFixed(scale)
	}
	// decimal's answer without its big.Int: the digits, zero-padded to one
	// more than the scale, and the point before the last scale of them. It
	// formats every amount of every result.
	if units == 0 && scale > 0 { // most frozen balances: no allocation at all
		return "0.000000000000000000"[:2+scale]
	}
	var buf [40]byte
	b := strconv.AppendInt(buf[:0], units, 10)
	for len(b) <= int(scale) {
		b = slices.Insert(b, 0, '0')
	}
	if scale > 0 {
		b = slices.Insert(b, len(b)-int(scale), '.')
	}
	return string(b)
}
