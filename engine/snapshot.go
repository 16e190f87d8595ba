package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

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
		s, err := snapshotOf(h, cmds[i].Val())
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

// snapshotOf parses the holder hash m that readState read; nil when Redis
// lacks the holder.
func snapshotOf(h string, m map[string]string) (*stored.Snapshot, error) {
	if m[cluster.FieldStatus] == "" {
		return nil, nil
	}
	s := &stored.Snapshot{Holder: h, Status: m[cluster.FieldStatus], Digest: m[cluster.FieldDigest],
		Balances: map[string][2]int64{}, Coupons: map[string]string{}, Holds: map[string]string{}}
	var errs []error
	num := func(what, v string) int64 {
		if v == "" {
			return 0
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %q", what, v))
		}
		return n
	}
	s.Seq, s.CreatedMs = num("seq", m[cluster.FieldSeq]), num("created_ms", m[cluster.FieldCreatedMs])
	s.Lanes = int(num("lanes", m[cluster.FieldLanes]))
	for f, v := range m {
		switch {
		case strings.HasPrefix(f, cluster.PrefixBalance), strings.HasPrefix(f, cluster.PrefixFrozen):
			a := f[len(cluster.PrefixBalance):]
			s.Balances[a] = [2]int64{num(a, m[cluster.PrefixBalance+a]), num(a, m[cluster.PrefixFrozen+a])}
		case f == cluster.FieldPointsAvailable, f == cluster.FieldPointsFrozen:
			s.Points = &[2]int64{num("points", m[cluster.FieldPointsAvailable]), num("points", m[cluster.FieldPointsFrozen])}
		case strings.HasPrefix(f, cluster.PrefixCoupon):
			s.Coupons[f[len(cluster.PrefixCoupon):]] = v
		case strings.HasPrefix(f, cluster.PrefixHold):
			s.Holds[f[len(cluster.PrefixHold):]] = v
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("holder %s: %w", h, err)
	}
	return s, nil
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
