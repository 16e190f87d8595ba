package engine

import (
	"context"
	"strconv"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/lua"
)

// State reads everything a holder has, in one consistent step.
//
// Errors: INVALID_ID, HOLDER_NOT_FOUND, UNAVAILABLE, INTERNAL.
func (e *Engine) State(ctx context.Context, holder string) (instructions.State, error) {
	if !instructions.ValidID(holder) {
		return instructions.State{}, instructions.Errorf(instructions.CodeInvalidID, instructions.NoOp, "holder %q must match [A-Za-z0-9_.:-]{1,64}", holder)
	}
	hk := cluster.Holder(holder)
	keys := []string{hk.Meta, hk.Balance, hk.Frozen, hk.Points, hk.Coupons, hk.Holds}
	cmd := e.rdb.EvalSha(ctx, lua.State.SHA1, keys)
	if isNoScript(cmd.Err()) {
		cmd = e.rdb.Eval(ctx, lua.State.Source, keys)
	}
	v, err := cmd.Result()
	if err != nil {
		return instructions.State{}, redisFailure("", err)
	}
	parts, _ := v.([]any)
	if len(parts) != 6 {
		return instructions.State{}, e.internal("", "unexpected state reply %T", v)
	}
	meta := hashOf(parts[0])
	if meta["status"] == "" {
		return instructions.State{}, instructions.Errorf(instructions.CodeHolderNotFound, instructions.NoOp, "holder %s not found", holder)
	}
	seq, _ := strconv.ParseInt(meta["seq"], 10, 64)
	st := instructions.State{
		Holder: holder, Status: meta["status"], Seq: seq,
		Balances: map[string]instructions.Balance{},
		Points:   instructions.Points{Available: "0", Frozen: "0"},
		Coupons:  map[string]string{},
		Holds:    map[string]instructions.Hold{},
	}
	avail, frozen := hashOf(parts[1]), hashOf(parts[2])
	for _, m := range []map[string]string{avail, frozen} {
		for a := range m {
			st.Balances[a] = instructions.Balance{Available: e.amount(a, orZero(avail[a])), Frozen: e.amount(a, orZero(frozen[a]))}
		}
	}
	if p := hashOf(parts[3]); len(p) > 0 {
		st.Points = instructions.Points{Available: orZero(p["available"]), Frozen: orZero(p["frozen"])}
	}
	for c, raw := range hashOf(parts[4]) {
		st.Coupons[c] = couponState(raw)
	}
	for h, raw := range hashOf(parts[5]) {
		st.Holds[h] = e.hold(raw)
	}
	return st, nil
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}
