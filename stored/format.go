package stored

import (
	"encoding/json"
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

// ParseResult reads a result json. It checks the JSON only: the coupons and
// holds in it are read with ParseCoupon and ReadHold or ParseHold.
func ParseResult(body string) (Result, error) {
	var r Result
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return Result{}, err
	}
	return r, nil
}

// ParseCoupon reads a stored coupon, "<state>" or "<state>|<expires ms>"
// (0 without an expiry).
func ParseCoupon(raw string) (state string, expiresMs int64) {
	st, exp, _ := strings.Cut(raw, "|")
	expiresMs, _ = strconv.ParseInt(exp, 10, 64)
	return st, expiresMs
}

// ReadHold reads a stored hold, "<expires ms or 0>|<leg>=<units>,...|<coupon>,...",
// followed by "|<takes>" while transfers that took from it are undecided
// (the hold stays open, even empty, until they are), calling leg with the
// asset and units (decimal minor units, as stored) of each leg. It reads
// what it can of a malformed hold, skipping a leg without "=", and reports
// the first flaw in err: the engine shows a caller what the hold holds all
// the same, the ledger refuses it (ParseHold). coupons is never nil.
func ReadHold(raw string, leg func(asset, units string)) (expiresMs int64, coupons []string, err error) {
	exp, rest, ok1 := strings.Cut(raw, "|")
	legs, cs, ok2 := strings.Cut(rest, "|")
	cs, takes, counted := strings.Cut(cs, "|")
	if n, perr := strconv.ParseInt(takes, 10, 64); !ok1 || !ok2 || counted && (perr != nil || n < 1) {
		err = fmt.Errorf("hold %q", raw)
	}
	expiresMs, perr := strconv.ParseInt(exp, 10, 64)
	if perr != nil && err == nil {
		err = fmt.Errorf("hold %q", raw)
	}
	if legs != "" {
		for l := range strings.SplitSeq(legs, ",") {
			a, units, ok := strings.Cut(l, "=")
			if _, perr := strconv.ParseInt(units, 10, 64); (!ok || perr != nil) && err == nil {
				err = fmt.Errorf("hold %q", raw)
			}
			if ok {
				leg(a, units)
			}
		}
	}
	coupons = []string{}
	if cs != "" {
		coupons = strings.Split(cs, ",")
	}
	return expiresMs, coupons, err
}

// ParseHold reads a well-formed stored hold (see ReadHold): legs maps each
// asset to its minor units. A malformed one is an error.
func ParseHold(raw string) (expiresMs int64, legs map[string]int64, coupons []string, err error) {
	legs = map[string]int64{}
	expiresMs, coupons, err = ReadHold(raw, func(a, units string) {
		legs[a], _ = strconv.ParseInt(units, 10, 64)
	})
	if err != nil {
		return 0, nil, nil, err
	}
	return expiresMs, legs, coupons, nil
}
