package engine

import (
	"context"
	"strconv"
	"strings"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// State reads everything a holder has, in one consistent step: one HGETALL
// of its hash.
//
// Errors: INVALID_ID, HOLDER_NOT_FOUND, UNAVAILABLE, INTERNAL.
func (e *Engine) State(ctx context.Context, holder string) (instructions.State, error) {
	if err := instructions.CheckID(instructions.NoOp, "holder", holder); err != nil {
		return instructions.State{}, err
	}
	hs, err := e.hashes(ctx, holder)
	if err != nil {
		return instructions.State{}, err
	}
	if hs[0][stored.FieldStatus] == "" {
		return instructions.State{}, instructions.Errorf(instructions.CodeHolderNotFound, instructions.NoOp, "holder %s not found", holder)
	}
	st := e.stateOf(holder, hs[0])
	if len(hs) == 1 {
		return st, nil
	}
	return e.sumLanes(st, hs)
}

// hashes reads the holder's hash and, for a hot holder, every lane's, each
// in one step (a lane's figures may move between the reads: a sweep's
// transfer is in one lane and not yet in the other; the sum is then short
// or long by what is in flight, and right again once it is done).
func (e *Engine) hashes(ctx context.Context, holder string) ([]map[string]string, error) {
	key := cluster.Holder(holder)
	got := e.submit(ctx, []req{{keys: []string{key}, args: []any{"hgetall", key}}})
	v, err := got[0].cmd.Result()
	if err != nil {
		return nil, redisFailure("", err)
	}
	h := hashOf(v)
	count, _ := strconv.Atoi(h[stored.FieldLanes])
	if count < 2 {
		return []map[string]string{h}, nil
	}
	reqs := make([]req, count-1)
	for i := range reqs {
		k := cluster.Holder(instructions.LaneHolder(holder, i+1))
		reqs[i] = req{keys: []string{k}, args: []any{"hgetall", k}}
	}
	hs := []map[string]string{h}
	for _, got := range e.submit(ctx, reqs) {
		v, err := got.cmd.Result()
		if err != nil {
			return nil, redisFailure("", err)
		}
		hs = append(hs, hashOf(v))
	}
	return hs, nil
}

// stateOf reads one hash.
func (e *Engine) stateOf(holder string, h map[string]string) instructions.State {
	seq, _ := strconv.ParseInt(h[stored.FieldSeq], 10, 64)
	st := instructions.State{
		Holder: holder, Status: h[stored.FieldStatus], Seq: seq,
		Balances: map[string]instructions.Balance{},
		Points:   instructions.Points{Available: "0", Frozen: "0"},
		Coupons:  map[string]string{},
		Holds:    map[string]instructions.Hold{},
	}
	for f, raw := range h {
		switch {
		case strings.HasPrefix(f, stored.PrefixBalance), strings.HasPrefix(f, stored.PrefixFrozen):
			a := f[len(stored.PrefixBalance):] // as long as PrefixFrozen
			st.Balances[a] = instructions.Balance{Available: e.amount(a, orZero(h[stored.PrefixBalance+a])),
				Frozen: e.amount(a, orZero(h[stored.PrefixFrozen+a]))}
		case f == stored.FieldPointsAvailable, f == stored.FieldPointsFrozen:
			st.Points = instructions.Points{Available: orZero(h[stored.FieldPointsAvailable]), Frozen: orZero(h[stored.FieldPointsFrozen])}
		case strings.HasPrefix(f, stored.PrefixCoupon):
			st.Coupons[f[len(stored.PrefixCoupon):]] = couponState(raw)
		case strings.HasPrefix(f, stored.PrefixHold):
			st.Holds[f[len(stored.PrefixHold):]] = e.hold(raw)
		}
	}
	return st
}

// sumLanes gives a hot holder's state: lane 0's status, seq, coupons and
// holds; balances and points summed over the lanes; each lane's share. A
// lane that is missing (its master lost its data) is UNAVAILABLE: the sum
// would be wrong until it is rebuilt.
func (e *Engine) sumLanes(st instructions.State, hs []map[string]string) (instructions.State, error) {
	units := map[string][2]int64{}
	var points [2]int64
	for i, h := range hs {
		name := instructions.LaneHolder(st.Holder, i)
		if h[stored.FieldStatus] == "" {
			return instructions.State{}, instructions.Errorf(instructions.CodeUnavailable, instructions.NoOp,
				"lane %d of hot holder %s (%s) is missing: rebuild it from the ledger (engined rebuild)", i, st.Holder, name)
		}
		ls := e.stateOf(name, h)
		st.Lanes = append(st.Lanes, instructions.Lane{Lane: i, Holder: name, Seq: ls.Seq, Balances: ls.Balances, Points: ls.Points})
		for f, raw := range h {
			v, _ := strconv.ParseInt(raw, 10, 64)
			switch {
			case strings.HasPrefix(f, stored.PrefixBalance):
				a := f[len(stored.PrefixBalance):]
				u := units[a]
				u[0] += v
				units[a] = u
			case strings.HasPrefix(f, stored.PrefixFrozen):
				a := f[len(stored.PrefixFrozen):]
				u := units[a]
				u[1] += v
				units[a] = u
			case f == stored.FieldPointsAvailable:
				points[0] += v
			case f == stored.FieldPointsFrozen:
				points[1] += v
			}
		}
	}
	for a, u := range units {
		st.Balances[a] = instructions.Balance{Available: e.amount(a, strconv.FormatInt(u[0], 10)), Frozen: e.amount(a, strconv.FormatInt(u[1], 10))}
	}
	st.Points = instructions.Points{Available: strconv.FormatInt(points[0], 10), Frozen: strconv.FormatInt(points[1], 10)}
	return st, nil
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}
