package engine

import (
	"context"
	"strconv"
	"strings"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
)

// State reads everything a holder has, in one consistent step: one HGETALL
// of its hash.
//
// Errors: INVALID_ID, HOLDER_NOT_FOUND, UNAVAILABLE, INTERNAL.
func (e *Engine) State(ctx context.Context, holder string) (instructions.State, error) {
	if err := instructions.CheckID(instructions.NoOp, "holder", holder); err != nil {
		return instructions.State{}, err
	}
	key := cluster.Holder(holder)
	got := e.submit(ctx, []req{{keys: []string{key}, args: []any{"hgetall", key}}})
	v, err := got[0].cmd.Result()
	if err != nil {
		return instructions.State{}, redisFailure("", err)
	}
	h := hashOf(v)
	if h[cluster.FieldStatus] == "" {
		return instructions.State{}, instructions.Errorf(instructions.CodeHolderNotFound, instructions.NoOp, "holder %s not found", holder)
	}
	seq, _ := strconv.ParseInt(h[cluster.FieldSeq], 10, 64)
	st := instructions.State{
		Holder: holder, Status: h[cluster.FieldStatus], Seq: seq,
		Balances: map[string]instructions.Balance{},
		Points:   instructions.Points{Available: "0", Frozen: "0"},
		Coupons:  map[string]string{},
		Holds:    map[string]instructions.Hold{},
	}
	for f, raw := range h {
		switch {
		case strings.HasPrefix(f, cluster.PrefixBalance), strings.HasPrefix(f, cluster.PrefixFrozen):
			a := f[2:]
			st.Balances[a] = instructions.Balance{Available: e.amount(a, orZero(h[cluster.PrefixBalance+a])),
				Frozen: e.amount(a, orZero(h[cluster.PrefixFrozen+a]))}
		case f == cluster.FieldPointsAvailable, f == cluster.FieldPointsFrozen:
			st.Points = instructions.Points{Available: orZero(h[cluster.FieldPointsAvailable]), Frozen: orZero(h[cluster.FieldPointsFrozen])}
		case strings.HasPrefix(f, cluster.PrefixCoupon):
			st.Coupons[f[2:]] = couponState(raw)
		case strings.HasPrefix(f, cluster.PrefixHold):
			st.Holds[f[2:]] = e.hold(raw)
		}
	}
	return st, nil
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}
