package instructions

import (
	"strings"
	"unicode/utf8"
)

// Limits of an instruction.
const (
	MaxOps     = 64
	MaxMemo    = 256
	MaxTTLMs   = 10 * 365 * 24 * 3600 * 1000 // ten years
	maxIDBytes = 64
)

// ValidID reports whether s may be a holder, instruction, hold or coupon id,
// [A-Za-z0-9_.:-]{1,64} and not dots alone. Braces above all are refused: they would move a key
// to another slot. (A byte loop: it runs several times per instruction, and a
// regexp costs a quarter of the engine's own time per call.)
func ValidID(s string) bool {
	if len(s) == 0 || len(s) > maxIDBytes {
		return false
	}
	dots := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			dots++
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	// "." and ".." are steps of a URL path: such an id could be written but
	// never read back through GET /v1/holders/{holder}.
	return dots < len(s)
}

// CheckID is nil for a valid id (ValidID), else the INVALID_ID error that
// says what name must be, for op (NoOp outside an op).
func CheckID(op int, name, v string) *Error {
	switch {
	case ValidID(v):
		return nil
	case v == "":
		return Errorf(CodeInvalidID, op, "%s is required", name)
	case strings.Trim(v, ".") == "":
		return Errorf(CodeInvalidID, op, "%s %q is dots alone, a step of a URL path: give it a letter or digit", name, clip(v))
	}
	return Errorf(CodeInvalidID, op, "%s %q must match [A-Za-z0-9_.:-]{1,64}", name, clip(v))
}

// Normalized is a valid instruction with every amount in minor units, ready
// to be applied.
type Normalized struct {
	ID           string
	Holder       string
	Counterparty string
	Memo         string
	Transfer     string // the transfer this instruction is a part of; "" for none
	Steps        []Step
}

// Step is one normalized op.
type Step struct {
	Op     string
	Asset  string // asset code; for settle and release the leg ("" = the whole hold)
	Units  int64  // amount in minor units; 0 for none (settle/release of a whole leg); open and set_lanes: the lanes
	Hold   string
	Coupon string
	Ms     int64 // ttl_ms (hold-creating ops) or expires_ms (grant_coupon); 0 for none
	// Rest marks a transfer's settle sent without an amount (RestLeg,
	// RestHold): Asset and Units are then what balances the transfer, and
	// the hold must hold exactly that. 0 otherwise.
	Rest int8
}

// Leg is what the step moves: its asset, or PointsLeg for the points ops.
func (s Step) Leg() string {
	if s.Op == OpEarnPoints || s.Op == OpSpendPoints {
		return PointsLeg
	}
	return s.Asset
}

// The kinds of Step.Rest.
const (
	RestLeg  int8 = 1 // all that is left of the leg
	RestHold int8 = 2 // the whole hold, which has one leg
)

// Which fields each op takes.
type field uint8

const (
	fAsset field = 1 << iota
	fAmount
	fHold
	fLeg
	fCoupon
	fTTL
	fExpires
	fLanes
)

// fieldNames are the JSON keys of Op but op, in Op's order, which is the
// order they are checked in (TestFieldNames_AreOpsJSONKeysInOrder).
var fieldNames = []string{"asset", "amount", "hold", "leg", "coupon", "ttl_ms", "expires_ms", "lanes"}

// OpSpec is one op: the one row that says what it is. The library
// (lua/atomledger.lua) has this table in its generated part (internal/luagen)
// and one handler per op of it (TestLibrary_HandlesTheOpsOfTheTable).
type OpSpec struct {
	Name string
	// Client: clients may send it. The others serve transfers; the engine
	// alone sends them (docs/transfers.md).
	Client bool
	// TakesOut: it takes value out of the holder, so a suspended holder is
	// refused it (HOLDER_SUSPENDED).
	TakesOut bool
	// NotWhenSuspended: a suspended holder is refused it although it takes
	// nothing out (set_lanes: a suspended holder's lanes stay as they are).
	NotWhenSuspended bool

	required, optional field
}

var opTable = []OpSpec{
	{Name: OpOpen, Client: true, optional: fLanes},
	{Name: OpCredit, Client: true, required: fAsset | fAmount},
	{Name: OpDebit, Client: true, TakesOut: true, required: fAsset | fAmount},
	{Name: OpFreeze, Client: true, TakesOut: true, required: fAsset | fAmount | fHold, optional: fTTL},
	{Name: OpFreezePoints, Client: true, TakesOut: true, required: fAmount | fHold, optional: fTTL},
	{Name: OpLockCoupon, Client: true, TakesOut: true, required: fCoupon | fHold, optional: fTTL},
	{Name: OpSettle, Client: true, required: fHold, optional: fLeg | fAmount},
	{Name: OpRelease, Client: true, required: fHold, optional: fLeg | fAmount},
	{Name: OpEarnPoints, Client: true, required: fAmount},
	{Name: OpSpendPoints, Client: true, TakesOut: true, required: fAmount},
	{Name: OpGrantCoupon, Client: true, required: fCoupon, optional: fExpires},
	{Name: OpRedeemCoupon, Client: true, TakesOut: true, required: fCoupon},
	{Name: OpSuspend, Client: true},
	{Name: OpResume, Client: true},
	{Name: OpSetLanes, Client: true, NotWhenSuspended: true, required: fLanes},
	{Name: OpCheck},
	{Name: OpTake},
	{Name: OpGive},
	{Name: OpClose},
	{Name: OpRestore},
}

// RefusedWhenSuspended tells whether a suspended holder is refused the op
// (HOLDER_SUSPENDED): it takes value out, or it is NotWhenSuspended.
func (s OpSpec) RefusedWhenSuspended() bool { return s.TakesOut || s.NotWhenSuspended }

// Ops lists every op, clients' and the engine's own.
func Ops() []OpSpec { return opTable }

// opSpecs are the ops clients may send, by name.
var opSpecs = func() map[string]OpSpec {
	m := map[string]OpSpec{}
	for _, s := range opTable {
		if s.Client {
			m[s.Name] = s
		}
	}
	return m
}()

func (op *Op) fields() field {
	var f field
	for bit, present := range []bool{op.Asset != "", op.Amount != "", op.Hold != "", op.Leg != "", op.Coupon != "", op.TTLMs != nil, op.ExpiresMs != nil, op.Lanes != nil} {
		if present {
			f |= 1 << bit
		}
	}
	return f
}

// Validate checks an instruction against the registry; see Normalize.
func (in Instruction) Validate(reg *Registry) error {
	_, err := in.Normalize(reg)
	return err
}

// Normalize checks an instruction and converts its amounts to minor units.
// The first problem found is returned as an *Error with one of the codes
// INVALID_INSTRUCTION, INVALID_ID, INVALID_AMOUNT, UNKNOWN_ASSET, TOO_MANY_OPS.
func (in Instruction) Normalize(reg *Registry) (Normalized, error) {
	n, err := in.normalize(reg)
	if err == nil {
		err = enginesOwn(n)
	}
	if err != nil {
		err.ID = in.ID
		return Normalized{}, err
	}
	return n, nil
}

// validMemo checks a memo: at most MaxMemo bytes of UTF-8 without control
// characters (U+0000-U+001F, U+007F). The memo goes verbatim into the event
// and the ledger: PostgreSQL refuses U+0000 in text and jsonb, and a newline
// or other control character would let one memo pass for another line of
// a statement or a log.
func validMemo(m string) *Error {
	if len(m) > MaxMemo {
		return Errorf(CodeInvalidInstruction, NoOp, "memo of %d bytes: at most %d", len(m), MaxMemo)
	}
	if !utf8.ValidString(m) {
		return Errorf(CodeInvalidInstruction, NoOp, "memo must be valid UTF-8")
	}
	for i := 0; i < len(m); i++ {
		if c := m[i]; c < 0x20 || c == 0x7f {
			return Errorf(CodeInvalidInstruction, NoOp, "memo holds the control character U+%04X at byte %d: control characters (U+0000-U+001F, U+007F) are not allowed", c, i)
		}
	}
	return nil
}

// enginesOwn refuses, in a plain instruction, the names the engine makes
// for itself (reserved.go): its id and counterparty.
func enginesOwn(n Normalized) *Error {
	if err := reservedName("id", n.ID, NoOp); err != nil {
		return err
	}
	return reservedName("counterparty", n.Counterparty, NoOp)
}

func (in Instruction) normalize(reg *Registry) (Normalized, *Error) {
	n := Normalized{ID: in.ID, Holder: in.Holder, Counterparty: in.Counterparty, Memo: in.Memo}
	if n.Counterparty == "" {
		n.Counterparty = DefaultCounterparty
	}
	for _, id := range []struct{ name, v string }{{"id", in.ID}, {"holder", in.Holder}, {"counterparty", n.Counterparty}} {
		if err := CheckID(NoOp, id.name, id.v); err != nil {
			return n, err
		}
	}
	if err := validMemo(in.Memo); err != nil {
		return n, err
	}
	switch {
	case len(in.Ops) == 0:
		return n, Errorf(CodeInvalidInstruction, NoOp, "an instruction needs at least one op")
	case len(in.Ops) > MaxOps:
		return n, Errorf(CodeTooManyOps, NoOp, "%d ops, at most %d", len(in.Ops), MaxOps)
	}
	n.Steps = make([]Step, len(in.Ops))
	for i := range in.Ops {
		s, err := normalizeOp(&in.Ops[i], i, reg)
		if err != nil {
			return n, err
		}
		n.Steps[i] = s
	}
	return n, nil
}

func normalizeOp(op *Op, i int, reg *Registry) (Step, *Error) {
	s := Step{Op: op.Op, Hold: op.Hold, Coupon: op.Coupon}
	spec, ok := opSpecs[op.Op]
	if !ok {
		return s, Errorf(CodeInvalidInstruction, i, "unknown op %q", clip(op.Op))
	}
	have := op.fields()
	for bit, name := range fieldNames {
		f := field(1) << bit
		switch {
		case spec.required&f != 0 && have&f == 0:
			return s, Errorf(CodeInvalidInstruction, i, "%s needs %s", op.Op, name)
		case (spec.required|spec.optional)&f == 0 && have&f != 0 && f == fAsset && spec.optional&fLeg != 0:
			return s, Errorf(CodeInvalidInstruction, i, "%s takes no asset: it names the hold's asset as leg", op.Op)
		case (spec.required|spec.optional)&f == 0 && have&f != 0:
			return s, Errorf(CodeInvalidInstruction, i, "%s takes no %s", op.Op, name)
		}
	}
	if have&fAmount != 0 && have&(fAsset|fLeg) == 0 && (op.Op == OpSettle || op.Op == OpRelease) {
		return s, Errorf(CodeInvalidInstruction, i, "%s with an amount needs a leg", op.Op)
	}
	for _, id := range []struct{ name, v string }{{"hold", op.Hold}, {"coupon", op.Coupon}} {
		if id.v != "" {
			if err := CheckID(i, id.name, id.v); err != nil {
				return s, err
			}
		}
	}
	if op.Hold != "" {
		if err := reservedName("hold", op.Hold, i); err != nil {
			return s, err
		}
	}

	// The asset whose scale the amount is in: the asset, the leg, or points.
	s.Asset = op.Asset
	if op.Leg != "" {
		s.Asset = op.Leg
	}
	var scale int32
	if s.Asset != "" {
		var ok bool
		if scale, ok = reg.Scale(s.Asset); !ok || (s.Asset == PointsLeg && op.Leg == "") {
			return s, Errorf(CodeUnknownAsset, i, "unknown asset %q", clip(s.Asset))
		}
	}
	if op.Amount != "" {
		units, ok := ToUnits(string(op.Amount), scale)
		if !ok {
			return s, Errorf(CodeInvalidAmount, i, "amount %q must be a decimal in 1 .. 2^53-1 minor units with at most %d decimals", clip(string(op.Amount)), scale)
		}
		s.Units = units
	}
	switch {
	case op.TTLMs != nil:
		if *op.TTLMs < 1 || *op.TTLMs > MaxTTLMs {
			return s, Errorf(CodeInvalidInstruction, i, "ttl_ms must be 1 .. %d", MaxTTLMs)
		}
		s.Ms = *op.TTLMs
	case op.ExpiresMs != nil:
		if *op.ExpiresMs < 1 || *op.ExpiresMs > MaxUnits {
			return s, Errorf(CodeInvalidInstruction, i, "expires_ms must be a Unix time in ms")
		}
		s.Ms = *op.ExpiresMs
	case op.Lanes != nil:
		// In the step, the count travels in Units: the arguments' layout is one for every op.
		if *op.Lanes < MinLanes || *op.Lanes > MaxLanes {
			return s, Errorf(CodeInvalidInstruction, i, "lanes must be %d .. %d, not %d", MinLanes, MaxLanes, *op.Lanes)
		}
		s.Units = int64(*op.Lanes)
	}
	return s, nil
}

// clip keeps hostile input out of messages at a readable length.
func clip(s string) string {
	if len(s) > 70 {
		return s[:64] + "..."
	}
	return s
}

// Fields gives the JSON fields the op takes, in the order they are checked:
// those it needs and those it may have. (The library's JSON door has them
// from here: internal/luagen.)
func (s OpSpec) Fields() (required, optional []string) {
	for bit, name := range fieldNames {
		f := field(1) << bit
		switch {
		case s.required&f != 0:
			required = append(required, name)
		case s.optional&f != 0:
			optional = append(optional, name)
		}
	}
	return required, optional
}
