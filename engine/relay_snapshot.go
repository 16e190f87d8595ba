package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
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
		cmds[i] = readState(ctx, pipe, h)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, redisFailure("", err)
	}
	out := make(map[string]*Snapshot, len(holders))
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
func snapshotOf(h string, m map[string]string) (*Snapshot, error) {
	if m[cluster.FieldStatus] == "" {
		return nil, nil
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
// rule): digest, status, created_ms, balances, points, coupons and holds,
// one line each. The seq is not compared: callers judge it first. An absent
// balance or points hash counts as zero, as the holder's State shows it.
func Differences(r, o *Snapshot, other string) []string {
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
func (e *Engine) Restore(ctx context.Context, s *Snapshot, force bool) (bool, error) {
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

// outboxPage is how many entries Undelivered reads from an outbox at once.
const outboxPage = 1000

// Undelivered reads the seqs of holders' events still in their slots'
// outboxes: not read by a relay yet, or read and not yet acknowledged (the
// relay deletes an event only once the ledger committed it). Those are on
// their way to the ledger; an event the holder applied that is neither
// there nor in the ledger is lost. It reads the whole of those outboxes, in
// pages; a holder none of whose events is there is absent from the map.
//
// Errors: UNAVAILABLE.
func (e *Engine) Undelivered(ctx context.Context, holders []string) (map[string]map[int64]bool, error) {
	want := map[string]bool{}
	from := map[string]string{} // outbox -> where its next page starts
	for _, h := range holders {
		want[h] = true
		from[cluster.Outbox(cluster.HolderSlot(h))] = "-"
	}
	out := map[string]map[int64]bool{}
	for len(from) > 0 {
		pipe := e.rdb.Pipeline()
		cmds := map[string]*redis.XMessageSliceCmd{}
		for k, start := range from {
			cmds[k] = pipe.XRangeN(ctx, k, start, "+", outboxPage)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return nil, redisFailure("", err)
		}
		for k, c := range cmds {
			msgs := c.Val()
			for _, m := range msgs {
				h, _ := m.Values["holder"].(string)
				v, _ := m.Values["seq"].(string)
				seq, err := strconv.ParseInt(v, 10, 64)
				if !want[h] || err != nil {
					continue
				}
				if out[h] == nil {
					out[h] = map[int64]bool{}
				}
				out[h][seq] = true
			}
			if len(msgs) < outboxPage {
				delete(from, k)
			} else {
				from[k] = "(" + msgs[len(msgs)-1].ID
			}
		}
	}
	return out, nil
}
