package instructions

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// PointsLeg is the leg name of points in a hold; points have scale 0.
const PointsLeg = "points"

// DefaultAssets is the registry used when none is configured.
const DefaultAssets = "CNY:2,USD:2,EUR:2,USDT:6,BTC:8"

// MaxScale bounds an asset's scale: one minor unit must stay a meaningful
// fraction of a value that fits in 2^53-1.
const MaxScale = 15

var assetCode = regexp.MustCompile(`^[A-Z0-9_]{1,16}$`)

// Registry maps asset codes to their scale (digits after the decimal point).
// It is immutable once parsed and safe for concurrent use.
type Registry struct {
	scales map[string]int32
}

// ParseAssets reads a registry such as "CNY:2,USDT:6,BTC:8".
func ParseAssets(spec string) (*Registry, error) {
	r := &Registry{scales: map[string]int32{}}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		code, scale, ok := strings.Cut(item, ":")
		if !ok {
			return nil, fmt.Errorf("asset %q: want CODE:SCALE", item)
		}
		if !assetCode.MatchString(code) {
			return nil, fmt.Errorf("asset %q: code must match [A-Z0-9_]{1,16}", code)
		}
		n, err := strconv.Atoi(scale)
		if err != nil || n < 0 || n > MaxScale {
			return nil, fmt.Errorf("asset %q: scale must be 0..%d", code, MaxScale)
		}
		if _, dup := r.scales[code]; dup {
			return nil, fmt.Errorf("asset %q: listed twice", code)
		}
		r.scales[code] = int32(n)
	}
	return r, nil
}

// MustParseAssets is ParseAssets for specs known to be valid; it panics otherwise.
func MustParseAssets(spec string) *Registry {
	r, err := ParseAssets(spec)
	if err != nil {
		panic(err)
	}
	return r
}

// Scale gives an asset's scale; points (PointsLeg) have scale 0.
func (r *Registry) Scale(asset string) (int32, bool) {
	if asset == PointsLeg {
		return 0, true
	}
	s, ok := r.scales[asset]
	return s, ok
}

// Codes lists the registered asset codes, sorted.
func (r *Registry) Codes() []string {
	codes := make([]string, 0, len(r.scales))
	for c := range r.scales {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	return codes
}

// String gives the registry back in the form ParseAssets reads.
func (r *Registry) String() string {
	parts := make([]string, 0, len(r.scales))
	for _, c := range r.Codes() {
		parts = append(parts, fmt.Sprintf("%s:%d", c, r.scales[c]))
	}
	return strings.Join(parts, ",")
}
