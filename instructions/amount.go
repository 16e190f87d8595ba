package instructions

import (
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

// FromUnits formats minor units as a decimal string with exactly scale digits
// after the point.
func FromUnits(units int64, scale int32) string {
	return decimal.New(units, -scale).StringFixed(scale)
}
