package engine

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// The apply function answers {replayed, outcome}: outcome is "ok\n<result
// json>" ("ok\n" and the idempotency record's short form for a replay) or
// "err\n<code>\n<op index>\n<detail>". This file is the one place that
// reads it; the stored forms in it (the result json and its kept form,
// coupons, holds) are read by package stored.

func (e *Engine) finish(c call, cmd *redis.Cmd) Outcome {
	v, err := cmd.Result()
	if err != nil {
		return Outcome{Err: redisFailure(c.n.ID, err)}
	}
	res, err := e.parseReply(c.n, v)
	if err != nil {
		return Outcome{Err: err}
	}
	return Outcome{Result: res}
}

func (e *Engine) parseReply(n instructions.Normalized, v any) (instructions.Result, error) {
	reply, ok := v.([]any)
	if !ok || len(reply) != 2 {
		return instructions.Result{}, e.internal(n.ID, "unexpected script reply %T", v)
	}
	replayed, _ := reply[0].(int64)
	outcome, _ := reply[1].(string)
	kind, body, _ := strings.Cut(outcome, "\n")
	switch kind {
	case "ok":
		if body != "" && body[0] != '{' {
			return e.keptReply(n, replayed == 1, body)
		}
		if res, ok := e.plainResult(n, replayed == 1, body); ok {
			return res, nil
		}
		sr, err := stored.ParseResult(body)
		if err != nil {
			return instructions.Result{}, e.internal(n.ID, "script result: %v", err)
		}
		return e.result(n, replayed == 1, sr)
	case "err":
		parts := strings.SplitN(body, "\n", 3)
		if len(parts) != 3 {
			return instructions.Result{}, e.internal(n.ID, "script error reply %q", body)
		}
		idx, err := strconv.Atoi(parts[1])
		if err != nil {
			return instructions.Result{}, e.internal(n.ID, "script error reply %q", body)
		}
		code := instructions.Code(parts[0])
		msg := e.describe(n, idx, code, parts[2])
		if replayed == 1 {
			// A client that sends the same id again after fixing the cause
			// (a top-up, a new coupon) would otherwise read the old refusal
			// as the new attempt's.
			msg += ReplayNote
		}
		return instructions.Result{}, &Error{ID: n.ID, Code: code, OpIndex: idx, Message: msg, Replayed: replayed == 1}
	}
	return instructions.Result{}, e.internal(n.ID, "unexpected script outcome %q", kind)
}

// ReplayNote ends the message of a replayed rejection: the id's answer is
// kept for the idempotency TTL, so only a new id is a new attempt.
const ReplayNote = " (replayed: this id already has this answer; a new attempt needs a new id)"

func (e *Engine) internal(id, format string, args ...any) *Error {
	err := instructions.Errorf(instructions.CodeInternal, instructions.NoOp, format, args...)
	err.ID = id
	return err
}

func (e *Engine) result(n instructions.Normalized, replayed bool, sr stored.Result) (instructions.Result, error) {
	seq, err := strconv.ParseInt(sr.Seq, 10, 64)
	if err != nil {
		return instructions.Result{}, e.internal(n.ID, "script result seq %q", sr.Seq)
	}
	res := instructions.Result{
		ID: n.ID, Holder: n.Holder, Seq: seq, Replayed: replayed,
		Balances: make(map[string]instructions.Balance, len(sr.Balances)),
		Coupons:  make(map[string]string, len(sr.Coupons)),
		Holds:    make(map[string]instructions.Hold, len(sr.Holds)),
	}
	for a, v := range sr.Balances {
		res.Balances[a] = instructions.Balance{Available: e.amount(a, v[0]), Frozen: e.amount(a, v[1])}
	}
	if sr.Points != nil {
		res.Points = &instructions.Points{Available: sr.Points[0], Frozen: sr.Points[1]}
	}
	for c, raw := range sr.Coupons {
		res.Coupons[c] = couponState(raw)
	}
	for h, raw := range sr.Holds {
		res.Holds[h] = e.hold(raw)
	}
	return res, nil
}

// plainResult reads the result json as the apply function writes it
// (stored.ReadResult) straight into the Result, its strings slices of body
// (which they keep alive, a few hundred bytes): decoding into maps and
// copying them into the Result's maps was most of the engine's own cost per
// call. On anything else, or an account named twice, it answers false, and
// the JSON decoder reads the body as it always has.
func (e *Engine) plainResult(n instructions.Normalized, replayed bool, body string) (instructions.Result, bool) {
	res, seq := newResult(n, replayed), ""
	ok := stored.ReadResult(body, e.account(&res, &seq, true))
	var err error
	res.Seq, err = strconv.ParseInt(seq, 10, 64)
	return res, ok && err == nil
}

// keptReply reads the short form of a result an idempotency record keeps
// (stored.KeptResult), which a replay answers.
func (e *Engine) keptReply(n instructions.Normalized, replayed bool, body string) (instructions.Result, error) {
	res, seq := newResult(n, replayed), ""
	ok := stored.ReadKept(body, e.account(&res, &seq, false))
	var err error
	if res.Seq, err = strconv.ParseInt(seq, 10, 64); !ok || err != nil {
		return instructions.Result{}, e.internal(n.ID, "recorded result %q", body)
	}
	return res, nil
}

func newResult(n instructions.Normalized, replayed bool) instructions.Result {
	return instructions.Result{ID: n.ID, Holder: n.Holder, Replayed: replayed,
		Balances: map[string]instructions.Balance{}, Coupons: map[string]string{}, Holds: map[string]instructions.Hold{}}
}

// account is what stored.ReadResult and ReadKept call: it puts the seq into
// seq and each account into res, at its asset's scale. once refuses an
// account named twice.
func (e *Engine) account(res *instructions.Result, seq *string, once bool) func(kind byte, name string, v [2]string) bool {
	return func(kind byte, name string, v [2]string) bool {
		dup := false
		switch kind {
		case 's':
			*seq = v[0]
		case 'b':
			_, dup = res.Balances[name]
			res.Balances[name] = instructions.Balance{Available: e.amount(name, v[0]), Frozen: e.amount(name, v[1])}
		case 'p':
			res.Points = &instructions.Points{Available: v[0], Frozen: v[1]}
		case 'c':
			_, dup = res.Coupons[name]
			res.Coupons[name] = couponState(v[0])
		case 'h':
			_, dup = res.Holds[name]
			res.Holds[name] = e.hold(v[0])
		}
		return !(dup && once)
	}
}

// amount formats minor units of an asset at its scale. An asset that left the
// registry is shown in minor units rather than hidden.
func (e *Engine) amount(asset, units string) string {
	scale, ok := e.assets.Scale(asset)
	n, err := strconv.ParseInt(units, 10, 64)
	if !ok || err != nil {
		return units
	}
	return instructions.FromUnits(n, scale)
}

// couponState reads the state of a stored coupon.
func couponState(raw string) string {
	st, _ := stored.ParseCoupon(raw)
	return st
}

// hold reads a stored hold for a caller, its legs at their assets' scales.
// A malformed one (which the library does not write) shows what can be read
// of it rather than nothing.
func (e *Engine) hold(raw string) instructions.Hold {
	h := instructions.Hold{Legs: map[string]string{}}
	h.ExpiresMs, h.Coupons, _ = stored.ReadHold(raw, func(a, units string) { h.Legs[a] = e.amount(a, units) })
	return h
}

// describe writes the message of a script error, in the instruction's own terms.
func (e *Engine) describe(n instructions.Normalized, idx int, code instructions.Code, detail string) string {
	if n.Steps == nil && idx >= 0 {
		// A rejection read back by id (Outcome): the record keeps no ops to
		// say it in their terms.
		return fmt.Sprintf("op %d was refused with %s; the record keeps the code and the op's index, not the op", idx, code)
	}
	if idx < 0 || idx >= len(n.Steps) {
		if code == instructions.CodeIdempotencyConflict {
			holder, _ := instructions.ParentOf(n.Holder) // a hot holder's lane: its holder, as the client named it
			return fmt.Sprintf("id %q was used by %s with another body", n.ID, holder)
		}
		return detail
	}
	s := n.Steps[idx]
	what := s.Op
	if s.Units > 0 {
		what += " " + e.amount(s.Asset, strconv.FormatInt(s.Units, 10))
		if s.Asset != "" {
			what += " " + s.Asset
		}
	}
	switch code {
	case instructions.CodeHolderNotFound:
		return fmt.Sprintf("holder %s not found", n.Holder)
	case instructions.CodeHolderExists:
		return fmt.Sprintf("holder %s exists", n.Holder)
	case instructions.CodeHolderSuspended:
		return fmt.Sprintf("%s: holder %s is suspended", what, n.Holder)
	case instructions.CodeInsufficientFunds:
		return fmt.Sprintf("%s: available %s", what, e.amount(s.Asset, detail))
	case instructions.CodeInsufficientPoints:
		return fmt.Sprintf("%s: available %s", what, detail)
	case instructions.CodeHoldNotFound:
		return fmt.Sprintf("%s: hold %s not found", what, s.Hold)
	case instructions.CodeHoldExists:
		return fmt.Sprintf("%s: hold %s was opened by an earlier instruction", what, s.Hold)
	case instructions.CodeHoldExpired:
		return fmt.Sprintf("%s: hold %s has expired; it can only be released", what, s.Hold)
	case instructions.CodeExceedsHold:
		if detail == "" {
			return fmt.Sprintf("%s: hold %s has no %s leg", what, s.Hold, s.Asset)
		}
		return fmt.Sprintf("%s: hold %s has %s left", what, s.Hold, e.amount(s.Asset, detail))
	case instructions.CodeCouponNotFound:
		return fmt.Sprintf("%s: coupon %s not found", what, s.Coupon)
	case instructions.CodeCouponExists:
		return fmt.Sprintf("%s: coupon %s exists", what, s.Coupon)
	case instructions.CodeCouponUnavailable:
		return fmt.Sprintf("%s: coupon %s is %s", what, s.Coupon, detail)
	case instructions.CodeCouponExpired:
		return fmt.Sprintf("%s: coupon %s has expired", what, s.Coupon)
	case instructions.CodeOverflow:
		a, units, _ := strings.Cut(detail, ":")
		which := a
		if s.Op == instructions.OpFreeze || s.Op == instructions.OpFreezePoints {
			which = "frozen " + a // the figure a freeze would overflow is the frozen one
		}
		return fmt.Sprintf("%s: %s would pass 2^53-1 minor units (now %s)", what, which, e.amount(a, units))
	}
	return what + ": " + detail
}

// hashOf reads the reply of HGETALL: a map (RESP3) or a flat field-value
// array (RESP2).
func hashOf(v any) map[string]string {
	if m, ok := v.(map[any]any); ok {
		out := make(map[string]string, len(m))
		for k, val := range m {
			ks, _ := k.(string)
			vs, _ := val.(string)
			out[ks] = vs
		}
		return out
	}
	flat, _ := v.([]any)
	m := make(map[string]string, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		k, _ := flat[i].(string)
		val, _ := flat[i+1].(string)
		m[k] = val
	}
	return m
}
