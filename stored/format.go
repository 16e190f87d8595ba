package stored

import (
	"fmt"
	"strconv"
	"strings"
)

// Result is the result json: what the library's apply function answers and
// what an event's state field carries, every touched account after the
// instruction. Figures are minor units, coupons and holds in their stored
// form.
type Result struct {
	Seq      string               `json:"s"`
	Balances map[string][2]string `json:"b"`
	Points   *[2]string           `json:"p"`
	Coupons  map[string]string    `json:"c"`
	Holds    map[string]string    `json:"h"`
}

// ParseCoupon reads a stored coupon, "<state>" or "<state>|<expires ms>".
func ParseCoupon(raw string) (state string, expiresMs int64) {
	st, exp, _ := strings.Cut(raw, "|")
	expiresMs, _ = strconv.ParseInt(exp, 10, 64)
	return st, expiresMs
}

// ParseHold reads a stored hold, "<expires ms or 0>|<leg>=<units>,...|<coupon>,...".
// legs maps each asset to its minor units; coupons is never nil.
func ParseHold(raw string) (expiresMs int64, legs map[string]int64, coupons []string, err error) {
	parts := strings.SplitN(raw, "|", 3)
	if len(parts) != 3 {
		return 0, nil, nil, fmt.Errorf("hold %q", raw)
	}
	if expiresMs, err = strconv.ParseInt(parts[0], 10, 64); err != nil {
		return 0, nil, nil, fmt.Errorf("hold %q", raw)
	}
	legs = map[string]int64{}
	if parts[1] != "" {
		for _, leg := range strings.Split(parts[1], ",") {
			a, u, ok := strings.Cut(leg, "=")
			n, err := strconv.ParseInt(u, 10, 64)
			if !ok || err != nil {
				return 0, nil, nil, fmt.Errorf("hold %q", raw)
			}
			legs[a] = n
		}
	}
	coupons = []string{}
	if parts[2] != "" {
		coupons = strings.Split(parts[2], ",")
	}
	return expiresMs, legs, coupons, nil
}
