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
var ErrStateDiffers = errors.New("redis has figures its history in the snapshot does not explain (changed outside the engine)")

// ErrInFlight is returned by Restore when events of the holder past the
// snapshot's seq are on their way to the ledger: still in the holder's
// outbox, or arrived in the ledger after the snapshot was read. Written over,
// Redis would forget instructions the ledger then applies (the ledger ahead,
// and the money they took out free to be spent again), so not even force
// writes: let the relay deliver them, and read the ledger again.
var ErrInFlight = errors.New("events past the snapshot are on their way to the ledger")

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
// other figures (stored.Differences), or lacks a hold's entry in the expiry
// index. Whatever force, it refuses with ErrInFlight when the holder's
// outbox holds one of its events past s.Seq. It reports whether it wrote.
//
// Errors: ErrRedisAhead, ErrStateDiffers (too when a value Redis has is not
// a number), ErrInFlight, UNAVAILABLE.
func (e *Engine) Restore(ctx context.Context, s *stored.Snapshot, force bool) (bool, error) {
	return e.RestoreUnlessArrived(ctx, s, force, nil)
}

// RestoreUnlessArrived is Restore for a snapshot read from the ledger while
// the relay may run: before it writes the holder, it calls arrived, which
// tells whether the ledger has, by now, applied an event of the holder past
// s.Seq (the relay delivered it after s was read), and then refuses with
// ErrInFlight. It asks after reading the outbox under the
// same WATCH: an event leaves the outbox only once the ledger has it, and its
// leaving after the read makes the write fail.
func (e *Engine) RestoreUnlessArrived(ctx context.Context, s *stored.Snapshot, force bool, arrived func(context.Context) (bool, error)) (bool, error) {
	wrote := false
	var err error
	// A write to the slot's outbox (another holder's event, the relay's
	// delete) fails the MULTI: read again and try again, a few times.
	for range restoreTries {
		if err = e.restoreOnce(ctx, s, force, arrived, &wrote); !errors.Is(err, redis.TxFailedErr) {
			break
		}
	}
	var ee *Error
	if errors.Is(err, ErrRedisAhead) || errors.Is(err, ErrStateDiffers) || errors.Is(err, ErrInFlight) || errors.As(err, &ee) {
		return false, err
	}
	if err != nil {
		return false, redisFailure("", err)
	}
	return wrote, nil
}

// restoreTries bounds the reads and writes of one restore that a write to
// its slot interrupts.
const restoreTries = 5

// restoreOnce is one try of RestoreUnlessArrived, under WATCH.
func (e *Engine) restoreOnce(ctx context.Context, s *stored.Snapshot, force bool, arrived func(context.Context) (bool, error), wrote *bool) error {
	key := cluster.Holder(s.Holder)
	exp := cluster.Expiry(cluster.HolderSlot(s.Holder))
	return e.rdb.Watch(ctx, func(tx *redis.Tx) error {
		cmd := readState(ctx, tx, s.Holder)
		if err := cmd.Err(); err != nil {
			return err
		}
		cur := stored.ParseHolder(s.Holder, cmd.Val())
		var seq int64
		if cur != nil {
			seq = cur.Seq
		}
		switch {
		case !force && cur != nil && len(cur.Unreadable) > 0:
			// Changed outside the engine: its seq may be unreadable too.
			return fmt.Errorf("%w: holder %s: %s", ErrStateDiffers, s.Holder, strings.Join(stored.Differences(cur, s, "snapshot"), "; "))
		case seq == s.Seq && cur != nil && cur.Digest == s.Digest:
			// The same history: in sync only if every figure agrees too
			// (a figure changed by hand leaves seq and digest as they were).
			d := stored.Differences(cur, s, "snapshot")
			lost, err := lostExpiries(ctx, tx, s)
			if err != nil {
				return err
			}
			if d = append(d, lost...); len(d) == 0 {
				return nil
			}
			if !force {
				return fmt.Errorf("%w: holder %s at seq %d: %s", ErrStateDiffers, s.Holder, seq, strings.Join(d, "; "))
			}
		case !force && seq >= s.Seq:
			return fmt.Errorf("%w: holder %s has seq %d in Redis, %d in the snapshot", ErrRedisAhead, s.Holder, seq, s.Seq)
		}
		if err := e.checkInFlight(ctx, tx, s, arrived); err != nil {
			return err
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
			p.HSet(ctx, key, stored.HolderFields(s)...)
			for h, raw := range s.Holds {
				if ms := holdExpiry(raw); ms > 0 {
					p.ZAdd(ctx, exp, redis.Z{Score: float64(ms), Member: s.Holder + " " + h})
				}
			}
			// NX: a record Redis has is the one its clients were answered from.
			for _, r := range s.Recent {
				if left := r.TsMs + ttl - now.UnixMilli(); left > 0 {
					p.SetNX(ctx, cluster.Tx(s.Holder, r.ID), stored.AppliedRecord(r.FP, r.State), time.Duration(left)*time.Millisecond)
				}
			}
			return nil
		})
		*wrote = err == nil
		return err
	}, key)
}

// checkInFlight refuses, with ErrInFlight, to write s over a holder one of
// whose events past s.Seq is in its slot's outbox (watched from here on, so
// that the relay taking it away fails the write) or, when arrived is given,
// already applied by the ledger: whatever Redis has of the holder, even
// nothing (its hash lost, its last event taken from the outbox by the relay
// after s was read).
func (e *Engine) checkInFlight(ctx context.Context, tx *redis.Tx, s *stored.Snapshot, arrived func(context.Context) (bool, error)) error {
	outbox := cluster.Outbox(cluster.HolderSlot(s.Holder))
	if err := tx.Watch(ctx, outbox).Err(); err != nil {
		return err
	}
	var past []int64
	err := readOutboxes(ctx, tx, []string{outbox}, func(h string, seq int64) {
		if h == s.Holder && seq > s.Seq {
			past = append(past, seq)
		}
	})
	if err != nil {
		return err
	}
	if len(past) > 0 {
		return fmt.Errorf("%w: holder %s: %d of its events past seq %d, the ledger's (the first at seq %d), are still in the outbox: "+
			"let the relay deliver them, then rebuild again", ErrInFlight, s.Holder, len(past), s.Seq, slices.Min(past))
	}
	if arrived == nil {
		return nil
	}
	moved, err := arrived(ctx)
	if err != nil {
		return err
	}
	if moved {
		return fmt.Errorf("%w: holder %s: the ledger applied events past seq %d since it was read: rebuild again", ErrInFlight, s.Holder, s.Seq)
	}
	return nil
}

// lostExpiries lists the holds of s with an expiry whose entry Redis's
// expiry index lacks, or has at another time: the sweeper would never
// release them.
func lostExpiries(ctx context.Context, tx *redis.Tx, s *stored.Snapshot) ([]string, error) {
	var check func() ([]string, error)
	if _, err := tx.Pipelined(ctx, func(p redis.Pipeliner) error { // one round trip
		check = queueExpiries(ctx, p, s)
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	return check()
}

// queueExpiries queues on p the reads of the expiry index entries of s's
// holds with an expiry; check, once p has run, lists those the index lacks
// or has at another time.
func queueExpiries(ctx context.Context, p redis.Pipeliner, s *stored.Snapshot) (check func() ([]string, error)) {
	exp := cluster.Expiry(cluster.HolderSlot(s.Holder))
	holds := slices.Sorted(maps.Keys(s.Holds))
	scores := make([]*redis.FloatCmd, len(holds))
	for i, h := range holds {
		if holdExpiry(s.Holds[h]) > 0 {
			scores[i] = p.ZScore(ctx, exp, s.Holder+" "+h)
		}
	}
	return func() ([]string, error) {
		var d []string
		for i, h := range holds {
			if scores[i] == nil {
				continue
			}
			ms := holdExpiry(s.Holds[h])
			switch got, err := scores[i].Result(); {
			case errors.Is(err, redis.Nil):
				d = append(d, fmt.Sprintf("hold %s: no entry in the expiry index, due at %d", h, ms))
			case err != nil:
				return nil, err
			case int64(got) != ms:
				d = append(d, fmt.Sprintf("hold %s: due at %d in the expiry index, %d in the snapshot", h, int64(got), ms))
			}
		}
		return d, nil
	}
}

// holdExpiry reads the expiry of a stored hold (0: none, or unreadable).
func holdExpiry(raw string) int64 {
	ms, _, _ := stored.ReadHold(raw, func(string, string) {})
	return ms
}
