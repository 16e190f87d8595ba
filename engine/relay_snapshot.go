package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
)

// This file holds what reconciliation and rebuild need of Redis: a holder's
// raw state, and writing it back. (It sits with the relay, the other side of
// the ledger, as a file of its own.)

// Snapshot is a holder's whole state in Redis's own terms: minor units, and
// coupons and holds in their stored form. ledger.Snapshot has the same shape.
type Snapshot struct {
	Holder    string
	Status    string
	Seq       int64
	Digest    string
	CreatedMs int64
	Balances  map[string][2]int64 // asset -> available, frozen
	Points    *[2]int64           // available, frozen; nil if the holder has no points fields (p:a, p:f)
	Coupons   map[string]string   // coupon -> "<state>" or "<state>|<expires ms>"
	Holds     map[string]string   // open hold -> "<expires ms or 0>|<leg>=<units>,...|<coupon>,..."
	Recent    []RecentInstruction // instructions whose idempotency records Restore writes; Snapshots leaves it empty
}

// RecentInstruction is an applied instruction whose idempotency record
// Restore writes: the record is the start of FP, then State without what a
// replay does not need (keptResult), as the library writes it,
// and lives until TsMs plus the idempotency TTL. It is an alias of an unnamed
// struct, like ledger.RecentInstruction, so that the ledger's snapshots
// convert to this package's.
type RecentInstruction = struct {
	ID    string
	FP    string // the request fingerprint
	TsMs  int64  // when it was applied: Redis server time, Unix ms
	State string // the result json, as the instruction's event carries it
}

// IdempotencyTTL is how long the engine remembers an instruction id.
func (e *Engine) IdempotencyTTL() time.Duration {
	ms, _ := strconv.ParseInt(e.idemTTL, 10, 64)
	return time.Duration(ms) * time.Millisecond
}

// Snapshots reads the raw state of holders in pipelines; a holder Redis does
// not have is absent from the map. Recent stays empty: idempotency records
// have keys of their own, which only a SCAN would find.
//
// Errors: UNAVAILABLE, INTERNAL (a stored value that is not a number).
func (e *Engine) Snapshots(ctx context.Context, holders []string) (map[string]*Snapshot, error) {
	pipe := e.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(holders))
	for i, h := range holders {
		cmds[i] = pipe.HGetAll(ctx, cluster.Holder(h))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, redisFailure("", err)
	}
	out := make(map[string]*Snapshot, len(holders))
	for i, h := range holders {
		m := cmds[i].Val()
		if m[cluster.FieldStatus] == "" {
			continue
		}
		s := &Snapshot{Holder: h, Status: m[cluster.FieldStatus], Digest: m[cluster.FieldDigest],
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
		for f, v := range m {
			switch {
			case strings.HasPrefix(f, cluster.PrefixBalance), strings.HasPrefix(f, cluster.PrefixFrozen):
				a := f[2:]
				s.Balances[a] = [2]int64{num(a, m[cluster.PrefixBalance+a]), num(a, m[cluster.PrefixFrozen+a])}
			case f == cluster.FieldPointsAvailable, f == cluster.FieldPointsFrozen:
				s.Points = &[2]int64{num("points", m[cluster.FieldPointsAvailable]), num("points", m[cluster.FieldPointsFrozen])}
			case strings.HasPrefix(f, cluster.PrefixCoupon):
				s.Coupons[f[2:]] = v
			case strings.HasPrefix(f, cluster.PrefixHold):
				s.Holds[f[2:]] = v
			}
		}
		if err := errors.Join(errs...); err != nil {
			return nil, e.internal("", "holder %s: %v", h, err)
		}
		out[h] = s
	}
	return out, nil
}

// Holders calls fn with the ids of the holders Redis has, in batches of at
// most 1000, scanning every master (SCAN for the holder hashes).
//
// Errors: UNAVAILABLE, or fn's error.
func (e *Engine) Holders(ctx context.Context, fn func(holders []string) error) error {
	scan := func(ctx context.Context, c *redis.Client) error {
		it := c.ScanType(ctx, 0, cluster.HolderPattern, 1000, "hash").Iterator()
		batch := make([]string, 0, 1000)
		for it.Next(ctx) {
			h, ok := cluster.HolderOfKey(it.Val())
			if !ok {
				continue
			}
			batch = append(batch, h)
			if len(batch) == cap(batch) {
				if err := fn(batch); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
		if err := it.Err(); err != nil {
			return redisFailure("", err)
		}
		if len(batch) > 0 {
			return fn(batch)
		}
		return nil
	}
	switch c := e.rdb.(type) {
	case *redis.ClusterClient:
		// One master at a time: fn need not be safe for concurrent use.
		var mu sync.Mutex // ForEachMaster calls its function concurrently
		var clients []*redis.Client
		if err := c.ForEachMaster(ctx, func(_ context.Context, m *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			clients = append(clients, m)
			return nil
		}); err != nil {
			return redisFailure("", err)
		}
		for _, m := range clients {
			if err := scan(ctx, m); err != nil {
				return err
			}
		}
		return nil
	case *redis.Client:
		return scan(ctx, c)
	default:
		return fmt.Errorf("holders: unsupported client %T", e.rdb)
	}
}

// ErrRedisAhead is returned by Restore when Redis holds a later state than
// the snapshot (or the same seq with another digest): writing would lose
// changes.
var ErrRedisAhead = errors.New("redis is ahead of the snapshot")

// Restore writes a holder's whole state from s, replacing what Redis has of
// it, and its entries in the expiry index, in one MULTI on the holder's
// slot. In the same MULTI it writes the idempotency record of each of
// s.Recent, with what is left of its TTL (the engine's IdempotencyTTL from
// TsMs, on the clock of the holder's master): one already expired is
// skipped, one Redis still has is left as it is. Other idempotency records
// are neither read nor deleted. Unless force, it refuses with ErrRedisAhead
// when Redis's seq is higher than s.Seq, or equal with another digest; it
// does nothing when Redis already has s.Seq and s.Digest. It reports
// whether it wrote.
//
// Errors: ErrRedisAhead, UNAVAILABLE.
func (e *Engine) Restore(ctx context.Context, s *Snapshot, force bool) (bool, error) {
	key := cluster.Holder(s.Holder)
	slot := cluster.HolderSlot(s.Holder)
	exp := cluster.Expiry(slot)
	wrote := false
	err := e.rdb.Watch(ctx, func(tx *redis.Tx) error {
		fields, err := tx.HKeys(ctx, key).Result()
		if err != nil {
			return err
		}
		have, err := tx.HMGet(ctx, key, cluster.FieldSeq, cluster.FieldDigest).Result()
		if err != nil {
			return err
		}
		seq, _ := strconv.ParseInt(str(have[0]), 10, 64)
		digest := str(have[1])
		switch {
		case seq == s.Seq && digest == s.Digest:
			return nil
		case !force && (seq > s.Seq || seq == s.Seq):
			return fmt.Errorf("%w: holder %s has seq %d in Redis, %d in the snapshot", ErrRedisAhead, s.Holder, seq, s.Seq)
		}
		now, err := tx.Time(ctx).Result()
		if err != nil {
			return err
		}
		ttl := e.IdempotencyTTL().Milliseconds()
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, key)
			for _, f := range fields {
				if h, ok := strings.CutPrefix(f, cluster.PrefixHold); ok {
					p.ZRem(ctx, exp, s.Holder+" "+h)
				}
			}
			p.HSet(ctx, key, snapshotFields(s)...)
			for h, raw := range s.Holds {
				if ms := holdExpiry(raw); ms > 0 {
					p.ZAdd(ctx, exp, redis.Z{Score: float64(ms), Member: s.Holder + " " + h})
				}
			}
			// NX: a record Redis has is the one its clients were answered from.
			for _, r := range s.Recent {
				if left := r.TsMs + ttl - now.UnixMilli(); left > 0 {
					p.SetNX(ctx, cluster.Tx(s.Holder, r.ID), AppliedRecord(r.FP, r.State), time.Duration(left)*time.Millisecond)
				}
			}
			return nil
		})
		wrote = err == nil
		return err
	}, key)
	if errors.Is(err, ErrRedisAhead) {
		return false, err
	}
	if err != nil {
		return false, redisFailure("", err)
	}
	return wrote, nil
}

// AppliedRecord is the idempotency record of an applied instruction whose
// fingerprint is fp and whose event's state is state: what the library
// wrote for it, and what Restore writes again.
func AppliedRecord(fp, state string) string {
	return record(fp, keptResult(state))
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// snapshotFields are the fields of the holder hash that hold s, as apply
// writes them: no frozen field at zero.
func snapshotFields(s *Snapshot) []any {
	f := []any{cluster.FieldStatus, s.Status, cluster.FieldSeq, strconv.FormatInt(s.Seq, 10),
		cluster.FieldDigest, s.Digest, cluster.FieldCreatedMs, strconv.FormatInt(s.CreatedMs, 10)}
	for a, b := range s.Balances {
		f = append(f, cluster.PrefixBalance+a, strconv.FormatInt(b[0], 10))
		if b[1] > 0 {
			f = append(f, cluster.PrefixFrozen+a, strconv.FormatInt(b[1], 10))
		}
	}
	if s.Points != nil {
		f = append(f, cluster.FieldPointsAvailable, strconv.FormatInt(s.Points[0], 10))
		if s.Points[1] > 0 {
			f = append(f, cluster.FieldPointsFrozen, strconv.FormatInt(s.Points[1], 10))
		}
	}
	for c, v := range s.Coupons {
		f = append(f, cluster.PrefixCoupon+c, v)
	}
	for h, v := range s.Holds {
		f = append(f, cluster.PrefixHold+h, v)
	}
	return f
}

// holdExpiry reads the expiry of a stored hold.
func holdExpiry(raw string) int64 {
	for i := 0; i < len(raw); i++ {
		if raw[i] == '|' {
			ms, _ := strconv.ParseInt(raw[:i], 10, 64)
			return ms
		}
	}
	return 0
}
