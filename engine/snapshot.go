package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/stored"
)

// This file reads a holder's raw state from Redis for reconciliation and
// rebuild, and compares two accounts of it.

// Snapshots reads the raw state of holders in pipelines; a holder Redis does
// not have is absent from the map. Recent stays empty: idempotency records
// have keys of their own, which only a SCAN would find.
//
// Errors: UNAVAILABLE, INTERNAL (a stored value that is not a number).
func (e *Engine) Snapshots(ctx context.Context, holders []string) (map[string]*stored.Snapshot, error) {
	pipe := e.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(holders))
	for i, h := range holders {
		cmds[i] = readState(ctx, pipe, h)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, redisFailure("", err)
	}
	out := make(map[string]*stored.Snapshot, len(holders))
	for i, h := range holders {
		s, err := stored.ParseHolder(h, cmds[i].Val())
		if err != nil {
			return nil, e.internal("", "%v", err)
		}
		if s != nil {
			out[h] = s
		}
	}
	return out, nil
}

// readState reads a holder's hash (in a pipeline, or at once on a Tx).
func readState(ctx context.Context, c redis.Cmdable, h string) *redis.MapStringStringCmd {
	return c.HGetAll(ctx, cluster.Holder(h))
}

// Differences lists what differs between a holder's state in Redis (r) and
// another account of it (o, named other in the text: the ledger's, as a
// rule): digest, status, created_ms, lanes, balances, points, coupons and holds,
// one line each. The seq is not compared: callers judge it first. An absent
// balance or points hash counts as zero, as the holder's State shows it.
func Differences(r, o *stored.Snapshot, other string) []string {
	var d []string
	add := func(what string, rv, ov any) { d = append(d, fmt.Sprintf("%s: redis %v, %s %v", what, rv, other, ov)) }
	if r.Digest != o.Digest {
		add("digest", r.Digest, o.Digest)
	}
	if r.Status != o.Status {
		add("status", r.Status, o.Status)
	}
	if r.CreatedMs != o.CreatedMs {
		add("created_ms", r.CreatedMs, o.CreatedMs)
	}
	if max(r.Lanes, 1) != max(o.Lanes, 1) {
		add("lanes", max(r.Lanes, 1), max(o.Lanes, 1))
	}
	for _, a := range unionKeys(r.Balances, o.Balances) {
		if r.Balances[a] != o.Balances[a] {
			add("balance "+a+" [available frozen]", r.Balances[a], o.Balances[a])
		}
	}
	pts := func(p *[2]int64) [2]int64 {
		if p == nil {
			return [2]int64{}
		}
		return *p
	}
	if pts(r.Points) != pts(o.Points) {
		add("points [available frozen]", pts(r.Points), pts(o.Points))
	}
	for _, c := range unionKeys(r.Coupons, o.Coupons) {
		if r.Coupons[c] != o.Coupons[c] {
			add("coupon "+c, r.Coupons[c], o.Coupons[c])
		}
	}
	for _, h := range unionKeys(r.Holds, o.Holds) {
		if r.Holds[h] != o.Holds[h] {
			add("hold "+h, r.Holds[h], o.Holds[h])
		}
	}
	return d
}

func unionKeys[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
