package engine

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// A one-payer transfer's record without the library (docs/transfers.md, One
// payer). The payer's run and the payees' credits are the only runs of the
// library on its happy path; the record is written around them with plain
// commands:
//
//   - claim: the record as the transfer function's begin writes it, in one
//     MULTI of HSETNX per field (a record that exists keeps every field, so
//     a second claim of the id changes nothing and reads it), its index
//     entry (ZADD NX) and a read of it. It goes in the same round trip as
//     the reads of the payees.
//   - booking: once the payer's run and every credit applied, the record
//     says committed and done, expires, and leaves its index. A one-payer
//     transfer's decision is its payer step's outcome, which every driver
//     reads the same, so the booking needs no check of what the record says:
//     it is queued and written in the background, many transfers per
//     pipeline (transferBooks), and not waited for. Until it is written a
//     reader derives the state from the steps' records (GetTransfer), and
//     a booking that never comes (the process stopped) is the recovery
//     worker's: it finds the record preparing, its payer's step applied,
//     and finishes it as a driver would.
//
// With Options.MinReplicaAcks the record is written by the library as for
// the two phases, so that its writes are confirmed by replicas like every
// other (a MULTI's WAIT would need a connection of its own).

// claimArgs are the claim's fields and values: what begin writes for a
// one-payer transfer.
func (e *Engine) claimArgs(n instructions.NormalizedTransfer, body []byte, payer int, now int64) []string {
	ms := func(v int64) string { return strconv.FormatInt(v, 10) }
	return []string{stored.XferStatus, "preparing", stored.XferFP, transferPrint(n), stored.XferBody, string(body),
		stored.XferHolders, holdersOf(n), stored.XferCreatedMs, ms(now),
		stored.XferDeadlineMs, ms(now + e.xferTimeout.Milliseconds()), stored.XferPayer, strconv.Itoa(payer),
		stored.XferUntilMs, ms(now + (e.ttl - 2*e.xferTimeout).Milliseconds()), stored.XferTTLMs, e.idemTTL}
}

// claim writes transfer n's record unless it exists, and reads it: outcome
// "new" when this claim wrote it, "found" or "conflict" (another body) when
// it was there.
func (e *Engine) claim(ctx context.Context, n instructions.NormalizedTransfer, body []byte, payer int) (transferRecord, error) {
	now := time.Now().UnixMilli()
	key := cluster.Transfer(n.ID)
	args := e.claimArgs(n, body, payer, now)
	var got *redis.SliceCmd
	cmds, err := e.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for i := 0; i < len(args); i += 2 {
			p.HSetNX(ctx, key, args[i], args[i+1])
		}
		p.ZAddNX(ctx, cluster.Transfers(cluster.Slot(key)), redis.Z{Score: float64(now + e.xferTimeout.Milliseconds()), Member: n.ID})
		got = p.HMGet(ctx, key, stored.XferReadFields...)
		return nil
	})
	for _, c := range cmds {
		if err == nil {
			err = c.Err()
		}
	}
	if err != nil {
		e.reloadAfter(ctx, err)
		return transferRecord{}, redisFailure(n.ID, err)
	}
	v := make([]string, 1+len(stored.XferReadFields))
	for i, f := range got.Val() {
		v[1+i], _ = f.(string)
	}
	switch {
	case v[len(v)-1] != args[3]: // fp
		v[0] = "conflict"
	case v[4] == args[9]: // created_ms: this claim's
		v[0] = "new"
	default:
		v[0] = "found"
	}
	return parseRecord(v), nil
}

// claimWith claims transfer n's record (claim) and, in the same round
// trip, sends sets (submitSets), answering what they got.
func (e *Engine) claimWith(ctx context.Context, n instructions.NormalizedTransfer, body []byte, payer int, sets ...[]req) (transferRecord, []sent, error) {
	var rec transferRecord
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		rec, err = e.claim(ctx, n, body, payer)
	}()
	got := e.submitSets(ctx, sets...)
	<-done
	return rec, got, err
}

// booking is a one-payer transfer's record marked committed and done.
func (e *Engine) booking(n instructions.NormalizedTransfer, rec transferRecord) []req {
	// The whole record but its body, so that a record lost since the claim
	// (a failover) comes back whole for its readers.
	ms := func(v int64) string { return strconv.FormatInt(v, 10) }
	return e.recordDone(n, rec, stored.XferStatus, TransferCommitted, stored.XferErr, "",
		stored.XferDecidedMs, strconv.FormatInt(time.Now().UnixMilli(), 10), stored.XferFP, transferPrint(n),
		stored.XferHolders, holdersOf(n), stored.XferCreatedMs, ms(rec.createdMs), stored.XferDeadlineMs, ms(rec.deadline),
		stored.XferPayer, strconv.Itoa(rec.payer), stored.XferUntilMs, ms(rec.untilMs), stored.XferTTLMs, e.stepTTL(rec))
}

// recordDone writes fields to transfer n's record with every part finished
// and the record done, gives it its life (it outlives its steps' records, as
// the transfer function's finish writes it, but for its payer's) and takes
// it out of its index.
// The record's writes in this order on one connection: cut short, the record
// stays in its index, where the recovery worker meets it (and removes a done
// one).
func (e *Engine) recordDone(n instructions.NormalizedTransfer, rec transferRecord, fields ...any) []req {
	key := cluster.Transfer(n.ID)
	finished := make([]byte, len(n.Parts))
	for i := range finished {
		finished[i] = '1'
	}
	fields = append(fields, stored.XferFinished, string(finished), stored.XferDone, "1",
		stored.XferDoneMs, strconv.FormatInt(time.Now().UnixMilli(), 10))
	// The payer's step outlives the record, by a timeout: a quick payment
	// sent again sends its payer's run before it reads the record, and
	// while the record is there that run must replay, not charge the payer
	// a second time (the step's own life began at its run, before this).
	ttl, _ := rec.stepTTLMs() // a one-payer record always tells it
	step := cluster.Tx(n.Parts[rec.payer].Holder, payStepID(n))
	reqs := make([]req, 4, 5)
	reqs[0] = req{keys: []string{step}, args: []any{"pexpire", step, ttl + e.xferTimeout.Milliseconds()}}
	reqs[1] = req{keys: []string{key}, args: append([]any{"hset", key}, fields...)}
	reqs[2] = req{keys: []string{key}, args: []any{"pexpire", key, ttl}}
	reqs[3] = req{keys: []string{key}, args: []any{"zrem", cluster.Transfers(cluster.Slot(key)), n.ID}}
	return e.unpend(reqs, n, rec)
}

// pending is the entry of quick transfer n (quick) in its payer's slot:
// one member of the slot's index of transfers, entry (entryOf), due when
// the record's deadline is. It goes with the payer's run, before it, so
// that recovery can finish a payment whose run applied when its record was
// never written (the driver stopped before the claim got through, or the
// claim's master lost it): with the record gone it claims the transfer
// again from the body the entry holds (recoverPayment).
func (e *Engine) pending(n instructions.NormalizedTransfer, entry string, payer int, due int64) req {
	index := cluster.Transfers(cluster.HolderSlot(n.Parts[payer].Holder))
	return req{keys: []string{index}, args: []any{"zadd", index, "nx", due, entry}}
}

// entryOf is the index member of a payment's entry: its id, a newline (no
// id has one, nor a body in compact JSON), its body.
func entryOf(id string, body []byte) string { return id + "\n" + string(body) }

// unpend appends to reqs the removal of the entry of quick transfer n, if
// rec knows it (a driver that does not leaves it to recovery, which meets
// it at its deadline and removes it once the record is done).
func (e *Engine) unpend(reqs []req, n instructions.NormalizedTransfer, rec transferRecord) []req {
	if !quickShape(n, rec.payer) || rec.entry == "" {
		return reqs
	}
	index := cluster.Transfers(cluster.HolderSlot(n.Parts[rec.payer].Holder))
	return append(reqs, req{keys: []string{index}, args: []any{"zrem", index, rec.entry}})
}

// transferBooks is the queue of bookings waiting to be written, sent as
// group commit sends calls: a sender takes everything queued and writes it
// in one pipeline, and exits when the queue is empty.
type transferBooks struct {
	mu      sync.Mutex
	queue   []req
	sending bool
	written sync.Cond // signalled whenever a pipeline is written, for Flush
}

// book queues the booking of a committed one-payer transfer whose parts are
// all finished.
func (e *Engine) book(n instructions.NormalizedTransfer, rec transferRecord) {
	e.background(e.booking(n, rec))
}

// background queues writes that no caller waits for.
func (e *Engine) background(reqs []req) {
	if len(reqs) == 0 {
		return
	}
	b := &e.books
	b.mu.Lock()
	b.queue = append(b.queue, reqs...)
	start := !b.sending
	b.sending = true
	b.mu.Unlock()
	if start {
		go e.sendBooks()
	}
}

func (e *Engine) sendBooks() {
	b := &e.books
	for {
		b.mu.Lock()
		batch := b.queue
		b.queue = nil
		if len(batch) == 0 {
			b.sending = false
			if b.written.L != nil {
				b.written.Broadcast()
			}
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), e.xferTimeout)
		for _, s := range e.submit(ctx, batch) {
			if err := s.cmd.Err(); err != nil && !errors.Is(err, redis.Nil) {
				// The record stays preparing in its index: recovery books it.
				e.log.Warn("transfer: book a finished payment", "err", err)
				break
			}
		}
		cancel()
	}
}

// Flush waits until the writes the engine queued in the background so far
// are done (or failed): the bookings of the one-payer transfers it
// finished, which no caller waits for. Call it before closing the Redis
// client, so that a stop leaves no finished payment for the recovery worker
// to book (it would, losing nothing, but the record says preparing until
// then). The engine stays usable.
func (e *Engine) Flush() {
	b := &e.books
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written.L == nil {
		b.written.L = &b.mu
	}
	for b.sending {
		b.written.Wait()
	}
}

// paymentState is the state of a one-payer transfer whose record says
// preparing: committed once its payer's step applied (complete once every
// credit did too), as the booking will say; else what the record says.
func (e *Engine) paymentState(ctx context.Context, id string, rec transferRecord) (TransferState, error) {
	st := stateOf(id, rec)
	body, err := e.rdb.HGet(ctx, cluster.Transfer(id), stored.XferBody).Result()
	if err != nil {
		return st, redisFailure(id, err)
	}
	t, err := instructions.DecodeTransfer([]byte(body))
	if err != nil {
		return st, e.internal(id, "transfer body: %v", err)
	}
	n, err := t.Normalize(e.assets)
	if err != nil || rec.payer >= len(n.Parts) {
		return st, e.internal(id, "transfer body: %v", err)
	}
	n.Payer = rec.payer
	reqs := make([]req, len(n.Parts))
	prints := make([]string, len(n.Parts))
	for i, p := range n.Parts {
		c := e.payCall(n, p)
		key := c.keys[keyTx]
		reqs[i], prints[i] = req{keys: []string{key}, args: []any{"get", key}}, c.args[argFP].(string)
	}
	got := e.submit(ctx, reqs)
	applied := func(i int) (bool, error) {
		raw, err := got[i].cmd.Text()
		if errors.Is(err, redis.Nil) {
			return false, nil
		}
		if err != nil {
			return false, redisFailure(id, err)
		}
		return stored.RecordApplied(raw, prints[i]), nil
	}
	if ok, err := applied(rec.payer); err != nil || !ok {
		return st, err
	}
	st.Status, st.Complete = TransferCommitted, true
	for i := range n.Parts {
		ok, err := applied(i)
		if err != nil {
			return st, err
		}
		st.Complete = st.Complete && ok
	}
	return st, nil
}
