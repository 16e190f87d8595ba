package instructions

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	json "github.com/goccy/go-json"
)

// Limits of a transfer.
const (
	MinParts = 2
	MaxParts = 16
	// MaxTransferID is the longest transfer id: the ids of its parts'
	// instructions ("x:<id>:p") must stay within 64 bytes.
	MaxTransferID = 60
)

// Transfer spans several holders: each part is applied to its holder, and the
// parts are all applied or none (two-phase, see docs/transfers.md). ID is the
// idempotency key of the whole transfer.
type Transfer struct {
	ID    string `json:"id"`
	Parts []Part `json:"parts"`
}

// Part is what a transfer does to one holder. A part takes the ops that move
// value: credit, debit, settle (with leg and amount), earn_points and
// spend_points.
type Part struct {
	Holder string `json:"holder"`
	Ops    []Op   `json:"ops"`
}

// NormalizedTransfer is a valid transfer with its parts normalized: each part
// is an instruction on its holder whose counterparty is TransferHoldPrefix+ID.
type NormalizedTransfer struct {
	ID    string
	Parts []Normalized
	// Payer is the index of the one part that takes value out (a payment, a
	// payout, a refund: the others only receive), or -1 when several parts
	// do (a trade). Such a transfer can commit in its payer's own run
	// (docs/transfers.md).
	Payer int
}

// Hold is the name of the hold the transfer reserves under on each holder.
func (t NormalizedTransfer) Hold() string { return TransferHoldPrefix + t.ID }

// DecodeTransfer reads one transfer from JSON, as strictly as Decode reads an
// instruction. The payload limit is the instruction's (MaxPayload).
func DecodeTransfer(data []byte) (Transfer, error) {
	if t, ok := decodeTransferOnePass(data); ok {
		return t, nil
	}
	return decodeTransferStrictly(data)
}

// decodeTransferStrictly is DecodeTransfer's strict decoder, as
// decodeStrictly is Decode's.
func decodeTransferStrictly(data []byte) (Transfer, error) {
	if len(data) > MaxPayload {
		return Transfer{}, Errorf(CodeInvalidInstruction, NoOp, "transfer is %d bytes, at most %d", len(data), MaxPayload)
	}
	if !utf8.Valid(data) {
		return Transfer{}, Errorf(CodeInvalidInstruction, NoOp, "transfer is not valid UTF-8")
	}
	var w struct {
		ID    string            `json:"id"`
		Parts []json.RawMessage `json:"parts"`
	}
	if err := checkKeys(data, transferKeys); err != nil {
		return Transfer{}, err
	}
	if err := DecodeStrict(data, &w); err != nil {
		return Transfer{}, err
	}
	t := Transfer{ID: w.ID, Parts: make([]Part, len(w.Parts))}
	for i, raw := range w.Parts {
		var p struct {
			Holder string            `json:"holder"`
			Ops    []json.RawMessage `json:"ops"`
		}
		err := checkKeys(raw, partKeys)
		if err == nil {
			err = DecodeStrict(raw, &p)
		}
		var ops []Op
		if err == nil {
			ops, err = decodeOps(p.Ops)
		}
		if err != nil {
			return Transfer{}, inPart(err, i)
		}
		t.Parts[i] = Part{Holder: p.Holder, Ops: ops}
	}
	return t, nil
}

var (
	transferKeys = []string{"id", "parts"}
	partKeys     = []string{"holder", "ops"}
)

// EncodeTransfer writes a transfer as JSON.
func EncodeTransfer(t Transfer) ([]byte, error) { return marshal(t) }

// AppendJSON appends t as EncodeTransfer writes it, byte for byte, without
// reflection: the engine writes every transfer's body into its record. A
// string that needs escaping goes through encoding/json, which escapes as
// EncodeTransfer does any valid UTF-8 (a normalized transfer's strings are).
func (t Transfer) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, t.ID)
	b = append(b, `,"parts":`...)
	if t.Parts == nil {
		return append(b, "null}"...)
	}
	b = append(b, '[')
	for i, p := range t.Parts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"holder":`...)
		b = appendString(b, p.Holder)
		b = append(b, `,"ops":`...)
		if p.Ops == nil {
			b = append(b, "null}"...)
			continue
		}
		b = append(b, '[')
		for j, o := range p.Ops {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendOp(b, o)
		}
		b = append(b, "]}"...)
	}
	return append(b, "]}"...)
}

// appendOp appends o as encoding/json's Marshal writes it.
func appendOp(b []byte, o Op) []byte {
	b = append(b, `{"op":`...)
	b = appendString(b, o.Op)
	for _, f := range [...]struct{ key, v string }{{`,"asset":`, o.Asset}, {`,"amount":`, string(o.Amount)},
		{`,"hold":`, o.Hold}, {`,"leg":`, o.Leg}, {`,"coupon":`, o.Coupon}} {
		if f.v != "" {
			b = append(b, f.key...)
			b = appendString(b, f.v)
		}
	}
	if o.TTLMs != nil {
		b = append(b, `,"ttl_ms":`...)
		b = strconv.AppendInt(b, *o.TTLMs, 10)
	}
	if o.ExpiresMs != nil {
		b = append(b, `,"expires_ms":`...)
		b = strconv.AppendInt(b, *o.ExpiresMs, 10)
	}
	return append(b, '}')
}

// AppendJSONString appends s as a JSON string, as encoding/json's Marshal
// writes it, for answers written without reflection.
func AppendJSONString(b []byte, s string) []byte { return appendString(b, s) }

// inPart names the part an error is in.
func inPart(err *Error, part int) *Error {
	err.Message = fmt.Sprintf("part %d: %s", part, err.Message)
	return err
}

// transferOps are the ops a part may take, and which way each moves value:
// -1 out of the holder, +1 into it.
// settleRest gives the settle without an amount s its leg and units: what
// the other parts receive of that asset beyond what the rest takes out.
// out and in become what they are with it.
func settleRest(s *Step, assets []string, out, in map[string]int64, reg *Registry) *Error {
	if s.Asset == "" {
		var over []string
		for _, a := range assets {
			if in[a] > out[a] {
				over = append(over, a)
			}
		}
		switch len(over) {
		case 0:
			return Errorf(CodeInvalidInstruction, 0, "settle of the whole hold %s: no other part receives what it would move", s.Hold)
		case 1:
			s.Asset, s.Rest = over[0], RestHold
		default:
			return Errorf(CodeInvalidInstruction, 0, "settle of the whole hold %s: the other parts receive %s: a transfer settles "+
				"a whole hold of one leg; give each leg and its amount", s.Hold, strings.Join(over, ", "))
		}
	} else {
		s.Rest = RestLeg
	}
	a := s.Asset
	if in[a] <= out[a] {
		scale, _ := reg.Scale(a)
		return Errorf(CodeInvalidInstruction, 0, "settle of all that is left of %s in hold %s: the other parts receive %s %s, "+
			"and %s leave without it", a, s.Hold, FromUnits(in[a], scale), a, FromUnits(out[a], scale))
	}
	s.Units = in[a] - out[a]
	out[a] = in[a]
	return nil
}

var transferOps = map[string]int8{
	OpDebit: -1, OpSpendPoints: -1, OpSettle: -1,
	OpCredit: +1, OpEarnPoints: +1,
}

// Normalize checks a transfer and normalizes its parts. Each part must pass
// every rule of an instruction; besides, a transfer has 2 to 16 parts on
// distinct holders, takes only the ops of transferOps, and balances: per
// asset, what leaves the holders arrives at others. One settle may come
// without an amount (all that is left of its leg, or the whole hold if the
// hold has one leg): its amount is then what balances the transfer
// (settleRest), which the engine checks the hold holds. Errors are *Error with the codes of
// Instruction.Normalize; the message names the part.
func (t Transfer) Normalize(reg *Registry) (NormalizedTransfer, error) {
	n, err := t.normalize(reg)
	if err != nil {
		err.ID = t.ID
		return NormalizedTransfer{}, err
	}
	return n, nil
}

// commitSteps is how many steps a part of these steps commits in, in the
// two phases: the transfer's hold settled, each order hold it settles from
// closed, and each credit and earn_points applied.
func commitSteps(steps []Step) int {
	n, holds := 1, map[string]bool{}
	for _, s := range steps {
		switch {
		case s.Op == OpSettle && !holds[s.Hold]:
			holds[s.Hold] = true
			n++
		case s.Op == OpCredit || s.Op == OpEarnPoints:
			n++
		}
	}
	return n
}

// CheckTransferID is nil for a valid transfer id, else the INVALID_ID error
// that says what it must be.
func CheckTransferID(id string) *Error {
	if id == "" || strings.Trim(id, ".") == "" {
		return CheckID(NoOp, "transfer id", id) // what is wrong is not the characters
	}
	if !ValidID(id) || len(id) > MaxTransferID {
		return Errorf(CodeInvalidID, NoOp, "transfer id %q must match [A-Za-z0-9_.:-]{1,%d}", clip(id), MaxTransferID)
	}
	return nil
}

func (t Transfer) normalize(reg *Registry) (NormalizedTransfer, *Error) {
	n := NormalizedTransfer{ID: t.ID, Payer: -1}
	payers := 0
	if err := CheckTransferID(t.ID); err != nil {
		return n, err
	}
	if len(t.Parts) < MinParts || len(t.Parts) > MaxParts {
		return n, Errorf(CodeInvalidInstruction, NoOp, "a transfer has %d to %d parts, not %d", MinParts, MaxParts, len(t.Parts))
	}
	seen := map[string]int{}
	out, in := map[string]int64{}, map[string]int64{} // per asset: what leaves, what arrives
	var assets []string
	var rest *Step // the settle without an amount, if any
	restAt := [2]int{}
	for pi, p := range t.Parts {
		if j, dup := seen[p.Holder]; dup {
			return n, Errorf(CodeInvalidInstruction, NoOp, "parts %d and %d are both for holder %q", j, pi, clip(p.Holder))
		}
		seen[p.Holder] = pi
		// A hot holder's sweep names its lanes, which no client can: checked
		// as the holder's own name, then given back.
		holder := p.Holder
		if strings.HasPrefix(t.ID, HotSweepPrefix) {
			holder, _ = ParentOf(holder)
		}
		part, err := Instruction{ID: t.ID, Holder: holder, Counterparty: n.Hold(), Ops: p.Ops}.normalize(reg)
		if err != nil {
			return n, inPart(err, pi)
		}
		part.Holder = p.Holder
		if steps := commitSteps(part.Steps); steps > MaxOps {
			// A commit the library refuses would leave the transfer
			// committed and never finished: refused before anything runs.
			return n, inPart(Errorf(CodeInvalidInstruction, NoOp, "its commit would be %d steps (the transfer's hold, each order hold "+
				"settled and each credit), at most %d: split the transfer", steps, MaxOps), pi)
		}
		pays := false
		for i, s := range part.Steps {
			way, ok := transferOps[s.Op]
			switch {
			case !ok:
				return n, inPart(Errorf(CodeInvalidInstruction, i, "%s cannot be part of a transfer", s.Op), pi)
			case s.Op == OpSettle && s.Units == 0 && rest != nil:
				return n, inPart(Errorf(CodeInvalidInstruction, i, "a transfer settles at most one hold without an amount "+
					"(its amount is what balances the transfer): give the others theirs"), pi)
			case s.Op == OpSettle && s.Units == 0:
				rest, restAt = &part.Steps[i], [2]int{pi, i}
			}
			a := s.Leg()
			if a == "" { // a settle of a whole hold: its leg is found below
				pays = true
				continue
			}
			if _, ok := out[a]; !ok {
				assets = append(assets, a)
				out[a], in[a] = 0, 0
			}
			if way < 0 {
				out[a] += s.Units
				pays = true
			} else {
				in[a] += s.Units
			}
		}
		if pays {
			payers++
			n.Payer = pi
		}
		part.Transfer = t.ID
		n.Parts = append(n.Parts, part)
	}
	if payers > 1 {
		n.Payer = -1
	}
	if rest != nil {
		if err := settleRest(rest, assets, out, in, reg); err != nil {
			err.OpIndex = restAt[1]
			return n, inPart(err, restAt[0])
		}
	}
	for _, a := range assets {
		if out[a] != in[a] {
			scale, _ := reg.Scale(a)
			return n, Errorf(CodeInvalidInstruction, NoOp, "the parts do not balance: %s %s leave, %s arrive",
				FromUnits(out[a], scale), a, FromUnits(in[a], scale))
		}
	}
	return n, nil
}
