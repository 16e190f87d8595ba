package engine

import (
	"fmt"
	"strconv"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// A transfer's settle sent without an amount (all that is left of a leg, or
// a whole hold of one leg) settles what balances the transfer
// (instructions.Transfer.Normalize gives it that amount). Before anyone is
// charged, the engine reads the hold and checks that it holds exactly that
// (a whole hold: that leg alone, and no coupons, which a transfer does not
// settle): otherwise the transfer aborts EXCEEDS_HOLD. A hold only shrinks until it
// closes, so one that changes after the read fails the settle itself
// (EXCEEDS_HOLD or HOLD_NOT_FOUND) rather than leave part of it behind.
// Every driver checks, not only the one that began the transfer (it may have
// stopped right after begin), except once the part's prepare has taken from
// the hold: the transfer's own hold on that holder is open then, read in the
// same HMGET.

// restAt is where a settle without an amount is: its part and step.
type restAt struct{ part, step int }

// rests lists the settles without an amount of n (at most one).
func rests(n instructions.NormalizedTransfer) []restAt {
	var out []restAt
	for i, p := range n.Parts {
		for k, s := range p.Steps {
			if s.Rest != 0 {
				out = append(out, restAt{i, k})
			}
		}
	}
	return out
}

// restReads reads the holds of the settles without an amount, each with the
// transfer's own hold on its holder (open only between a two-phase
// prepare and its commit or abort).
func restReads(n instructions.NormalizedTransfer) []req {
	var out []req
	for _, r := range rests(n) {
		p := n.Parts[r.part]
		key := cluster.Holder(p.Holder)
		out = append(out, req{keys: []string{key},
			args: []any{"hmget", key, stored.PrefixHold + p.Steps[r.step].Hold, stored.PrefixHold + n.Hold()}})
	}
	return out
}

// restCheck tells, from restReads' answers, the first settle without an
// amount whose hold does not hold exactly what it must settle (its part and
// error); known is false when a read failed.
func (e *Engine) restCheck(n instructions.NormalizedTransfer, got []sent) (part int, reject *Error, known bool) {
	for j, r := range rests(n) {
		p := n.Parts[r.part]
		s := p.Steps[r.step]
		v, err := got[j].cmd.Slice()
		if err != nil || len(v) != 2 {
			return 0, nil, false
		}
		if v[1] != nil { // the part's prepare took its amount already
			continue
		}
		raw, ok := v[0].(string)
		if !ok {
			return r.part, &Error{Code: instructions.CodeHoldNotFound, OpIndex: r.step,
				Message: e.describe(p, r.step, instructions.CodeHoldNotFound, "")}, true
		}
		_, legs, coupons, err := stored.ParseHold(raw)
		if err != nil {
			return 0, nil, false
		}
		have, what := legs[s.Asset], fmt.Sprintf("settle of all that is left of %s in hold %s", s.Asset, s.Hold)
		if s.Rest == instructions.RestHold {
			what = "settle of the whole hold " + s.Hold
		}
		var msg string
		switch {
		case s.Rest == instructions.RestHold && len(legs) > 1:
			msg = fmt.Sprintf("%s: it holds other legs than %s; give each leg and its amount", what, s.Asset)
		case s.Rest == instructions.RestHold && len(coupons) > 0:
			msg = fmt.Sprintf("%s: it holds coupons, which a transfer does not settle; settle its leg, then the hold by an instruction", what)
		case have != s.Units:
			msg = fmt.Sprintf("%s: it holds %s %s, and the transfer balances with %s", what,
				e.amount(s.Asset, strconv.FormatInt(have, 10)), s.Asset, e.amount(s.Asset, strconv.FormatInt(s.Units, 10)))
		default:
			continue
		}
		return r.part, &Error{Code: instructions.CodeExceedsHold, OpIndex: r.step, Message: msg}, true
	}
	return 0, nil, true
}
