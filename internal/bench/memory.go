package bench

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
)

// The memory part opens Holders typical trading holders (two assets,
// points, two coupons, one open hold: one instruction each) and reads
// used_memory, summed over the masters, at four points: before, after, after
// DEL of their idempotency records (they expire after the idempotency TTL)
// and after XDEL of their outbox events (the relay deletes each once
// PostgreSQL has it).
//
// A deployment has many holders per slot, so every slot's expiry index and
// outbox stream already exist: what a new holder costs is its share of their
// entries, not the keys themselves. So before the first reading, one warm-up
// holder of the same kind is opened in every slot the measured holders use,
// and its event is left in place.

// memSample is how many holders MEMORY USAGE looks at.
const memSample = 200

func runMemory(ctx context.Context, e *env) (Memory, error) {
	const part = "memory"
	n := e.s.Holders
	out := Memory{Holders: n}
	ids := e.holderIDs("mem", n)
	slots := map[int]bool{}
	for _, id := range ids {
		slots[cluster.HolderSlot(id)] = true
	}
	e.step(part, 0, 4, "warming the slots")
	if err := e.applyAll(ctx, slotWarmers(e.prefix+"-warm-", slots)); err != nil {
		return out, err
	}
	e.step(part, 0, 4, "opening holders")

	m0, err := e.usedMemory(ctx)
	if err != nil {
		return out, err
	}
	exp0, outbox0, err := slotKeysUsage(ctx, e, slots)
	if err != nil {
		return out, err
	}
	ins := make([]instructions.Instruction, n)
	for i, id := range ids {
		ins[i] = typical(id)
	}
	if err := e.applyAll(ctx, ins); err != nil {
		return out, err
	}
	m1, err := e.usedMemory(ctx)
	if err != nil {
		return out, err
	}
	e.step(part, 1, 4, "per key")
	exp1, outbox1, err := slotKeysUsage(ctx, e, slots)
	if err != nil {
		return out, err
	}
	keys, err := keyCosts(ctx, e, ids)
	if err != nil {
		return out, err
	}
	per := func(b int64) float64 { return round(float64(b) / float64(n)) }
	out.Keys = append(keys,
		KeyCost{Key: "share of {slot}:expiry", Bytes: per(exp1 - exp0)},
		KeyCost{Key: "share of {slot}:outbox (transient)", Bytes: per(outbox1 - outbox0)})

	// Idempotency records.
	for lo := 0; lo < n; lo += 1000 {
		pipe := e.rdb.Pipeline()
		for _, id := range ids[lo:min(lo+1000, n)] {
			pipe.Del(ctx, cluster.Tx(id, "open"))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return out, err
		}
	}
	m2, err := e.usedMemory(ctx)
	if err != nil {
		return out, err
	}
	e.step(part, 2, 4, "deleting events")

	// Outbox events, as the relay deletes them.
	if err := deleteEvents(ctx, e, slots, e.prefix+"-mem-"); err != nil {
		return out, err
	}
	m3, err := e.usedMemory(ctx)
	if err != nil {
		return out, err
	}
	out.WithTransient = per(m1 - m0)
	out.OpenRecord = per(m1 - m2)
	out.OutboxEvent = per(m2 - m3)
	out.BytesPerHolder = per(m3 - m0)
	if out.TxRecord, err = debitRecordBytes(ctx, e, ids); err != nil {
		return out, err
	}
	if err := deleteEvents(ctx, e, slots, e.prefix+"-mem-"); err != nil {
		return out, err
	}
	e.step(part, 4, 4, "")
	return out, nil
}

// debitRecordBytes applies a 1-op debit to a sample of holders (after the
// other measures) and averages MEMORY USAGE of their idempotency records.
func debitRecordBytes(ctx context.Context, e *env, ids []string) (float64, error) {
	step := max(1, len(ids)/memSample)
	var ins []instructions.Instruction
	for i := 0; i < len(ids); i += step {
		ins = append(ins, oneDebit(ids[i], i))
	}
	if err := e.applyAll(ctx, ins); err != nil {
		return 0, err
	}
	pipe := e.rdb.Pipeline()
	cmds := make([]*redis.IntCmd, len(ins))
	for i, in := range ins {
		cmds[i] = pipe.MemoryUsage(ctx, cluster.Tx(in.Holder, in.ID), 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, err
	}
	var sum int64
	for _, c := range cmds {
		sum += c.Val()
	}
	return round(float64(sum) / float64(len(cmds))), nil
}

// slotWarmers gives one typical holder in each of slots, named prefix<n>.
func slotWarmers(prefix string, slots map[int]bool) []instructions.Instruction {
	var ins []instructions.Instruction
	left := len(slots)
	found := map[int]bool{}
	for i := 0; left > 0; i++ {
		id := prefix + strconv.Itoa(i)
		s := cluster.HolderSlot(id)
		if slots[s] && !found[s] {
			found[s] = true
			left--
			ins = append(ins, typical(id))
		}
	}
	return ins
}

// slotKeysUsage sums MEMORY USAGE of the expiry indexes and the outboxes of slots.
func slotKeysUsage(ctx context.Context, e *env, slots map[int]bool) (expiry, outbox int64, err error) {
	pipe := e.rdb.Pipeline()
	var ec, oc []*redis.IntCmd
	for s := range slots {
		ec = append(ec, pipe.MemoryUsage(ctx, cluster.Expiry(s), 0))
		oc = append(oc, pipe.MemoryUsage(ctx, cluster.Outbox(s), 0))
	}
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return 0, 0, err
	}
	for i := range ec {
		expiry += ec[i].Val()
		outbox += oc[i].Val()
	}
	return expiry, outbox, nil
}

// keyCosts averages MEMORY USAGE (all of each value: SAMPLES 0) of each key
// of a holder over a sample of holders.
func keyCosts(ctx context.Context, e *env, ids []string) ([]KeyCost, error) {
	names := []string{"{h:X}", "{h:X}:tx:<id> (transient)"}
	sum := make([]int64, len(names))
	step := max(1, len(ids)/memSample)
	sampled := 0
	for i := 0; i < len(ids); i += step {
		keys := []string{cluster.Holder(ids[i]), cluster.Tx(ids[i], "open")}
		pipe := e.rdb.Pipeline()
		cmds := make([]*redis.IntCmd, len(keys))
		for j, k := range keys {
			cmds[j] = pipe.MemoryUsage(ctx, k, 0)
		}
		if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
			return nil, err
		}
		for j, c := range cmds {
			sum[j] += c.Val()
		}
		sampled++
	}
	var out []KeyCost
	for j, name := range names {
		out = append(out, KeyCost{Key: name, Bytes: round(float64(sum[j]) / float64(sampled))})
	}
	return out, nil
}

// deleteEvents deletes, from the outboxes of slots, the events of the
// holders whose id starts with holderPrefix, as the relay does once they
// are committed (XDEL).
func deleteEvents(ctx context.Context, e *env, slots map[int]bool, holderPrefix string) error {
	const page = 1000
	keys := make([]string, 0, len(slots))
	for s := range slots {
		keys = append(keys, cluster.Outbox(s))
	}
	for lo := 0; lo < len(keys); lo += 500 {
		chunk := keys[lo:min(lo+500, len(keys))]
		for len(chunk) > 0 {
			pipe := e.rdb.Pipeline()
			reads := make([]*redis.XMessageSliceCmd, len(chunk))
			for i, k := range chunk {
				reads[i] = pipe.XRangeN(ctx, k, "-", "+", page)
			}
			if _, err := pipe.Exec(ctx); err != nil {
				return err
			}
			pipe = e.rdb.Pipeline()
			var more []string
			for i, r := range reads {
				var del []string
				for _, m := range r.Val() {
					if h, _ := m.Values["holder"].(string); strings.HasPrefix(h, holderPrefix) {
						del = append(del, m.ID)
					}
				}
				if len(del) > 0 {
					pipe.XDel(ctx, chunk[i], del...)
				}
				// A full page of this run's events: read the stream again.
				if len(r.Val()) == page && len(del) == page {
					more = append(more, chunk[i])
				}
			}
			if _, err := pipe.Exec(ctx); err != nil {
				return err
			}
			chunk = more
		}
	}
	return nil
}
