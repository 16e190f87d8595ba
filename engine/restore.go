package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/stored"
)

// This file holds what a rebuild writes back to Redis: a holder's whole
// state and the idempotency records of its recent instructions.

// IdempotencyTTL is how long the engine remembers an instruction id.
func (e *Engine) IdempotencyTTL() time.Duration {
	ms, _ := strconv.ParseInt(e.idemTTL, 10, 64)
	return time.Duration(ms) * time.Millisecond
}

// ErrRedisAhead is returned by Restore when Redis holds a later state than
// the snapshot (or the same seq with another digest): writing would lose
// changes.
var ErrRedisAhead = errors.New("redis is ahead of the snapshot")

// ErrStateDiffers is returned by Restore when Redis has the snapshot's seq
// and digest but other figures: the same history, yet a balance, a hold or
// another value was changed outside the script (what reconcile calls a
// mismatch). Writing repairs it, but only force writes: the operator should
// see what differs first.
var ErrStateDiffers = errors.New("redis has the snapshot's seq and digest but other figures")

// Restore writes a holder's whole state from s, replacing what Redis has of
// it, and its entries in the expiry index, in one MULTI on the holder's
// slot. In the same MULTI it writes the idempotency record of each of
// s.Recent, with what is left of its TTL (the engine's IdempotencyTTL from
// TsMs, on the clock of the holder's master): one already expired is
// skipped, one Redis still has is left as it is. Other idempotency records
// are neither read nor deleted. It does nothing when Redis already has the
// whole of s (seq, digest and every figure). Unless force, it refuses with
// ErrRedisAhead when Redis's seq is higher than s.Seq, or equal with another
// digest, and with ErrStateDiffers when Redis has s.Seq and s.Digest but
// other figures. It reports whether it wrote.
//
// Errors: ErrRedisAhead, ErrStateDiffers, UNAVAILABLE, INTERNAL (a stored
// value that is not a number).
func (e *Engine) Restore(ctx context.Context, s *stored.Snapshot, force bool) (bool, error) {
	key := cluster.Holder(s.Holder)
	slot := cluster.HolderSlot(s.Holder)
	exp := cluster.Expiry(slot)
	wrote := false
	err := e.rdb.Watch(ctx, func(tx *redis.Tx) error {
		cmd := readState(ctx, tx, s.Holder)
		if err := cmd.Err(); err != nil {
			return err
		}
		cur, err := snapshotOf(s.Holder, cmd.Val())
		if err != nil {
			return e.internal("", "%v", err)
		}
		var seq int64
		if cur != nil {
			seq = cur.Seq
		}
		switch {
		case seq == s.Seq && cur != nil && cur.Digest == s.Digest:
			// The same history: in sync only if every figure agrees too
			// (a figure changed by hand leaves seq and digest as they were).
			d := Differences(cur, s, "snapshot")
			if len(d) == 0 {
				return nil
			}
			if !force {
				return fmt.Errorf("%w: holder %s at seq %d: %s", ErrStateDiffers, s.Holder, seq, strings.Join(d, "; "))
			}
		case !force && seq >= s.Seq:
			return fmt.Errorf("%w: holder %s has seq %d in Redis, %d in the snapshot", ErrRedisAhead, s.Holder, seq, s.Seq)
		}
		var holds []string // their expiry index entries go too
		if cur != nil {
			holds = slices.Collect(maps.Keys(cur.Holds))
		}
		now, err := tx.Time(ctx).Result()
		if err != nil {
			return err
		}
		ttl := e.IdempotencyTTL().Milliseconds()
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, key)
			for _, h := range holds {
				p.ZRem(ctx, exp, s.Holder+" "+h)
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
	var ee *Error
	if errors.Is(err, ErrRedisAhead) || errors.Is(err, ErrStateDiffers) || errors.As(err, &ee) {
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
	if len(fp) == jsonDoorFP {
		return record(fp, state) // the JSON door's replays answer the whole result
	}
	return record(fp, keptResult(state))
}

// jsonDoorFP is the length of the JSON door's fingerprints (the SHA-1 of the
// text, in hex), where the engine's are SHA-256.
const jsonDoorFP = 40

// snapshotFields are the fields of the holder hash that hold s, as apply
// writes them: no frozen field at zero.
func snapshotFields(s *stored.Snapshot) []any {
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

// holdExpiry reads the expiry of a stored hold (0: none, or unreadable).
func holdExpiry(raw string) int64 {
	ms, _, _ := stored.ReadHold(raw, func(string, string) {})
	return ms
}
