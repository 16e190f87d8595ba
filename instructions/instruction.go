package instructions

import "time"

// Op names, as they appear in JSON.
const (
	OpOpen         = "open"
	OpCredit       = "credit"
	OpDebit        = "debit"
	OpFreeze       = "freeze"
	OpFreezePoints = "freeze_points"
	OpLockCoupon   = "lock_coupon"
	OpSettle       = "settle"
	OpRelease      = "release"
	OpEarnPoints   = "earn_points"
	OpSpendPoints  = "spend_points"
	OpGrantCoupon  = "grant_coupon"
	OpRedeemCoupon = "redeem_coupon"
	OpSuspend      = "suspend"
	OpResume       = "resume"
	OpSetLanes     = "set_lanes"

	// The ops that serve transfers; the engine alone sends them.
	OpCheck = "check" // opens the transfer's hold; with units, a credit of them must fit
	OpTake  = "take"  // a leg's units from a hold into the transfer's hold; the hold stays open
	OpGive  = "give"  // back from the transfer's hold into the original one, or to available
	OpClose = "close" // at commit, a hold take counted the transfer on: closed once empty and counting no other (Units 1: settled whole, closed)
	// A one-payer transfer's payer given back what a settle took: from the
	// counterparty back into the hold while it is open, else to available.
	OpRestore = "restore"
)

// DefaultCounterparty is the other side of every movement when an
// instruction names none.
const DefaultCounterparty = "external"

// Instruction is applied to one holder's accounts, all or nothing. ID is the
// idempotency key, scoped to the holder.
type Instruction struct {
	ID           string `json:"id"`
	Holder       string `json:"holder"`
	Counterparty string `json:"counterparty,omitempty"`
	Memo         string `json:"memo,omitempty"`
	Ops          []Op   `json:"ops"`
}

// Op is one step of an instruction. Which fields an op takes is in the
// contract's op table; a field an op does not take is INVALID_INSTRUCTION.
type Op struct {
	Op        string `json:"op"`
	Asset     string `json:"asset,omitempty"`
	Amount    Amount `json:"amount,omitempty"`
	Hold      string `json:"hold,omitempty"`
	Leg       string `json:"leg,omitempty"`
	Coupon    string `json:"coupon,omitempty"`
	TTLMs     *int64 `json:"ttl_ms,omitempty"`     // freeze, freeze_points, lock_coupon: the hold's lifetime
	ExpiresMs *int64 `json:"expires_ms,omitempty"` // grant_coupon: Unix time in ms
	Lanes     *int   `json:"lanes,omitempty"`      // open (optional), set_lanes: a hot holder's lanes, MinLanes .. MaxLanes
}

// Amount is a decimal string such as "80.00". In JSON it must be a string:
// a JSON number is INVALID_AMOUNT, as big numbers lose precision on the way.
type Amount string

// New starts an instruction for the builder:
//
//	instructions.New("order-55-pay", "u1001").Debit("CNY", "80.00").SpendPoints("2000")
//
// Each builder method returns a new Instruction and leaves its receiver as it was.
func New(id, holder string) Instruction {
	return Instruction{ID: id, Holder: holder}
}

func (in Instruction) with(op Op) Instruction {
	in.Ops = append(in.Ops[:len(in.Ops):len(in.Ops)], op)
	return in
}

// WithCounterparty names the other side of every movement.
func (in Instruction) WithCounterparty(cp string) Instruction { in.Counterparty = cp; return in }

// WithMemo sets the free-text memo (at most 256 bytes of UTF-8 without
// control characters).
func (in Instruction) WithMemo(memo string) Instruction { in.Memo = memo; return in }

// Open creates the holder.
func (in Instruction) Open() Instruction { return in.with(Op{Op: OpOpen}) }

// OpenHot creates the holder hot, over lanes lanes (MinLanes .. MaxLanes):
// credits to it spread over that many slots.
func (in Instruction) OpenHot(lanes int) Instruction { return in.with(Op{Op: OpOpen, Lanes: &lanes}) }

// SetLanes makes a plain holder hot over lanes lanes, or raises a hot
// holder's lanes to that many; a count lower than the holder's is refused.
func (in Instruction) SetLanes(lanes int) Instruction {
	return in.with(Op{Op: OpSetLanes, Lanes: &lanes})
}

// Credit adds amount of asset to the available balance.
func (in Instruction) Credit(asset, amount string) Instruction {
	return in.with(Op{Op: OpCredit, Asset: asset, Amount: Amount(amount)})
}

// Debit takes amount of asset from the available balance.
func (in Instruction) Debit(asset, amount string) Instruction {
	return in.with(Op{Op: OpDebit, Asset: asset, Amount: Amount(amount)})
}

// Freeze moves amount of asset from available to frozen under hold. A ttl of
// zero means the hold does not expire; only the op that creates a hold sets it.
func (in Instruction) Freeze(asset, amount, hold string, ttl time.Duration) Instruction {
	return in.with(Op{Op: OpFreeze, Asset: asset, Amount: Amount(amount), Hold: hold, TTLMs: ttlMs(ttl)})
}

// FreezePoints moves points from available to frozen under hold.
func (in Instruction) FreezePoints(amount, hold string) Instruction {
	return in.with(Op{Op: OpFreezePoints, Amount: Amount(amount), Hold: hold})
}

// LockCoupon holds an available coupon under hold.
func (in Instruction) LockCoupon(coupon, hold string) Instruction {
	return in.with(Op{Op: OpLockCoupon, Coupon: coupon, Hold: hold})
}

// Settle captures everything left in hold and closes it.
func (in Instruction) Settle(hold string) Instruction {
	return in.with(Op{Op: OpSettle, Hold: hold})
}

// SettleLeg captures amount of one leg (an asset code or "points") of hold;
// an empty amount captures the whole leg.
func (in Instruction) SettleLeg(hold, leg, amount string) Instruction {
	return in.with(Op{Op: OpSettle, Hold: hold, Leg: leg, Amount: Amount(amount)})
}

// Release returns everything left in hold to available and closes it.
func (in Instruction) Release(hold string) Instruction {
	return in.with(Op{Op: OpRelease, Hold: hold})
}

// ReleaseLeg returns amount of one leg of hold to available; an empty amount
// releases the whole leg.
func (in Instruction) ReleaseLeg(hold, leg, amount string) Instruction {
	return in.with(Op{Op: OpRelease, Hold: hold, Leg: leg, Amount: Amount(amount)})
}

// EarnPoints adds points.
func (in Instruction) EarnPoints(amount string) Instruction {
	return in.with(Op{Op: OpEarnPoints, Amount: Amount(amount)})
}

// SpendPoints takes points.
func (in Instruction) SpendPoints(amount string) Instruction {
	return in.with(Op{Op: OpSpendPoints, Amount: Amount(amount)})
}

// GrantCoupon gives the holder a new available coupon; a zero expires means
// it never expires.
func (in Instruction) GrantCoupon(coupon string, expires time.Time) Instruction {
	op := Op{Op: OpGrantCoupon, Coupon: coupon}
	if !expires.IsZero() {
		ms := expires.UnixMilli()
		op.ExpiresMs = &ms
	}
	return in.with(op)
}

// RedeemCoupon uses an available coupon.
func (in Instruction) RedeemCoupon(coupon string) Instruction {
	return in.with(Op{Op: OpRedeemCoupon, Coupon: coupon})
}

// Suspend stops the holder from giving value out; credits, settle and release still apply.
func (in Instruction) Suspend() Instruction { return in.with(Op{Op: OpSuspend}) }

// Resume undoes Suspend.
func (in Instruction) Resume() Instruction { return in.with(Op{Op: OpResume}) }

func ttlMs(ttl time.Duration) *int64 {
	if ttl == 0 {
		return nil
	}
	ms := ttl.Milliseconds()
	return &ms
}
