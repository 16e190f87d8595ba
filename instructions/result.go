package instructions

// Result is the state, after an applied instruction, of every account it
// touched. Replayed is true when the answer comes from the idempotency record
// of an earlier identical instruction.
type Result struct {
	ID       string             `json:"id"`
	Holder   string             `json:"holder"`
	Seq      int64              `json:"seq"`
	Replayed bool               `json:"replayed"`
	Balances map[string]Balance `json:"balances"`
	Points   *Points            `json:"points,omitempty"`
	Coupons  map[string]string  `json:"coupons"`
	Holds    map[string]Hold    `json:"holds"` // open holds only: a closed hold is absent
}

// State is everything a holder has.
type State struct {
	Holder   string             `json:"holder"`
	Status   string             `json:"status"`
	Seq      int64              `json:"seq"`
	Balances map[string]Balance `json:"balances"`
	Points   Points             `json:"points"`
	Coupons  map[string]string  `json:"coupons"`
	Holds    map[string]Hold    `json:"holds"`
}

// Holder statuses.
const (
	StatusActive    = "active"
	StatusSuspended = "suspended"
)

// Coupon states; a held coupon reads "held:<hold>".
const (
	CouponAvailable = "available"
	CouponUsed      = "used"
	CouponHeldBy    = "held:"
)

// Balance of one asset, as decimal strings at the asset's scale.
type Balance struct {
	Available string `json:"available"`
	Frozen    string `json:"frozen"`
}

// Points of a holder, as integer strings.
type Points struct {
	Available string `json:"available"`
	Frozen    string `json:"frozen"`
}

// Hold is an open hold: what is left of each leg (asset code or "points"), the
// coupons it holds, and when it expires (Unix ms, absent when it does not).
type Hold struct {
	Legs      map[string]string `json:"legs"`
	Coupons   []string          `json:"coupons"`
	ExpiresMs int64             `json:"expires_ms,omitempty"`
}
