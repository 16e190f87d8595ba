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
//   - claim: the record's fields as the transfer function's begin writes
//     them, packed in one field written by HSETNX (a record that exists
//     keeps every field, so a second claim of the id changes nothing and
//     reads it), its index entry (ZADD NX) and a read of it. It goes in the
//     same round trip as the reads of the payees, in the shared pipelines.
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

// claimOf is the claim of transfer n, of body body, paid by part payer,
// begun now (ms): what begin writes for a one-payer transfer, packed in one
// field (stored.XferClaimFields).
func (e *Engine) claimOf(n instructions.NormalizedTransfer, body []byte, payer int, now int64) string {
	ms := func(v int64) string { return strconv.FormatInt(v, 10) }
	return stored.PackClaim(transferPrint(n), holdersOf(n), ms(now), ms(now+e.xferTimeout.Milliseconds()),
		strconv.Itoa(payer), ms(now+(e.ttl-2*e.xferTimeout).Milliseconds()), e.idemTTL, string(body))
}

// recordFields are the fields a read of a transfer's record asks for: those
// the library's transfer function answers, then the claim.
var recordFields = func() []any {
	fs := make([]any, 0, len(stored.XferReadFields)+1)
	for _, f := range stored.XferReadFields {
		fs = append(fs, f)
	}
	return append(fs, stored.XferClaim)
}()

// readRecord gives, from the answer of HMGET recordFields, the record's
// fields as the library answers them (stored.XferReadFields), each taken
// from the packed claim where the record has no field of its own, and the
// claim when the record is in its packed form (no status of its own).
func readRecord(got []any) (fields []string, claim string) {
	claim, _ = got[len(got)-1].(string)
	fields = make([]string, len(stored.XferReadFields))
	for i, f := range stored.XferReadFields {
		v, ok := got[i].(string)
		if !ok && claim != "" {
			v = stored.ClaimValue(claim, f)
		}
		fields[i] = v
	}
	if got[0] != nil {
		return fields, ""
	}
	if claim != "" {
		fields[0] = "preparing"
	}
	return fields, claim
}

// claim writes transfer n's record unless it exists, and reads it: outcome
// "new" when this claim wrote it, "found" or "conflict" (another body) when
// it was there.
func (e *Engine) claim(ctx context.Context, n instructions.NormalizedTransfer, body []byte, payer int) (transferRecord, error) {
	rec, _, err := e.claimWith(ctx, n, body, payer)
	return rec, err
}

// claimWith claims transfer n's record (claim) and, in the same round
// trip, sends sets (submitSets), answering what they got. The claim is
// three commands on the record's master, in this order on one connection:
// its index entry (ZADD NX: a record is never without one, so that recovery
// meets it), the claim (HSETNX of its one field: a record that exists keeps
// every field) and a read of the record. They need no MULTI: the claim's
// one write is atomic, and whatever another driver writes between it and
// the read is the record's later state, which any driver may read. But for
// the record's end: one that expires (or is lost) between the two leaves
// the read empty, and the claim is then made again, alone.
func (e *Engine) claimWith(ctx context.Context, n instructions.NormalizedTransfer, body []byte, payer int, sets ...[]req) (transferRecord, []sent, error) {
	rec, got, err := e.claimOnce(ctx, n, body, payer, sets)
	for try := 0; err == nil && rec.outcome == "" && try < 3; try++ {
		rec, _, err = e.claimOnce(ctx, n, body, payer, nil)
	}
	if err == nil && rec.outcome == "" {
		err = redisFailure(n.ID, errors.New("the transfer's record vanished each time it was claimed"))
	}
	return rec, got, err
}

// claimOnce is one claim of claimWith; outcome "" when the read found no
// record at all.
func (e *Engine) claimOnce(ctx context.Context, n instructions.NormalizedTransfer, body []byte, payer int, sets [][]req) (transferRecord, []sent, error) {
	now := time.Now().UnixMilli()
	key := cluster.Transfer(n.ID)
	index := cluster.Transfers(cluster.Slot(key))
	mine := e.claimOf(n, body, payer, now)
	claim := []req{
		{keys: []string{key}, args: []any{"zadd", index, "nx", now + e.xferTimeout.Milliseconds(), n.ID}},
		{keys: []string{key}, args: []any{"hsetnx", key, stored.XferClaim, mine}},
		{keys: []string{key}, args: append([]any{"hmget", key}, recordFields...)},
	}
	got := e.submitSets(ctx, append([][]req{claim}, sets...)...)
	for _, s := range got[:len(claim)] {
		if err := s.cmd.Err(); err != nil {
			return transferRecord{}, got[len(claim):], redisFailure(n.ID, err)
		}
	}
	read, _ := got[len(claim)-1].cmd.Slice()
	if len(read) != len(recordFields) {
		return transferRecord{}, got[len(claim):], e.internal(n.ID, "unexpected record %v", read)
	}
	if read[0] == nil && read[len(read)-1] == nil { // neither a status nor a claim
		return transferRecord{}, got[len(claim):], nil
	}
	fields, claimed := readRecord(read)
	outcome := "found"
	switch {
	case fields[len(fields)-1] != stored.ClaimValue(mine, stored.XferFP):
		outcome = "conflict"
	case claimed == mine:
		outcome = "new"
	}
	rec := parseRecord(append([]string{outcome}, fields...))
	rec.claim = claimed
	return rec, got[len(claim):], nil
}

// booking is a one-payer transfer's record marked committed and done.
func (e *Engine) booking(n instructions.NormalizedTransfer, rec transferRecord) []req {
	return e.recordDone(n, rec, e.decision(n, rec, TransferCommitted, "")...)
}

// decision is what recordDone writes of a one-payer transfer decided
// status (with reason err): the decision, and the claimed fields again, so
// that a record lost since the claim (a failover) comes back whole for its
// readers, and a claim of another body under the id finds it: the claim as
// read, or, for a record not in its packed form, its fields but the body.
func (e *Engine) decision(n instructions.NormalizedTransfer, rec transferRecord, status, err string) []any {
	fields := []any{stored.XferStatus, status, stored.XferErr, err,
		stored.XferDecidedMs, strconv.FormatInt(time.Now().UnixMilli(), 10)}
	if rec.claim != "" {
		return append(fields, stored.XferClaim, rec.claim)
	}
	ms := func(v int64) string { return strconv.FormatInt(v, 10) }
	return append(fields, stored.XferFP, transferPrint(n), stored.XferHolders, holdersOf(n),
		stored.XferCreatedMs, ms(rec.createdMs), stored.XferDeadlineMs, ms(rec.deadline),
		stored.XferPayer, strconv.Itoa(rec.payer), stored.XferUntilMs, ms(rec.untilMs), stored.XferTTLMs, e.stepTTL(rec))
}

// recordDone writes fields to transfer n's record with every part finished
// and the record done, gives it its life and takes it out of its index. The
// record outlives every step of the transfer (their lives began at their
// runs, before this), by a timeout more, whatever the masters' clocks say:
// once it has expired, a body sent again under the id finds none of them
// and is a new transfer, never one that replays some steps and runs others
// anew.
// While it lives, a quick payment sent again after its payer's step expired
// charges the payer, and that run is given back at once (transferQuick).
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
	ttl, _ := rec.stepTTLMs() // a one-payer record always tells it
	reqs := []req{
		{keys: []string{key}, args: append([]any{"hset", key}, fields...)},
		{keys: []string{key}, args: []any{"pexpire", key, ttl + e.xferTimeout.Milliseconds()}},
		{keys: []string{key}, args: []any{"zrem", cluster.Transfers(cluster.Slot(key)), n.ID}},
	}
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

// dueNow makes the entry of quick transfer n, paid by n.Payer, due at once
// (if it is still there), in the background: recovery takes the payment up
// at its next pass.
func (e *Engine) dueNow(n instructions.NormalizedTransfer, entry string) {
	index := cluster.Transfers(cluster.HolderSlot(n.Parts[n.Payer].Holder))
	e.background([]req{{keys: []string{index}, args: []any{"zadd", index, "xx", time.Now().UnixMilli(), entry}}})
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

// transferBody is the body of transfer id as its record keeps it, its own
// field or its claim's; redis.Nil when it has neither.
func (e *Engine) transferBody(ctx context.Context, id string) (string, error) {
	got, err := e.rdb.HMGet(ctx, cluster.Transfer(id), stored.XferBody, stored.XferClaim).Result()
	switch {
	case err != nil:
		return "", err
	case got[0] != nil:
		return got[0].(string), nil
	case got[1] != nil:
		return stored.ClaimValue(got[1].(string), stored.XferBody), nil
	}
	return "", redis.Nil
}

// paymentState is the state of a one-payer transfer whose record says
// preparing: committed once its payer's step applied (complete once every
// credit did too), as the booking will say; else what the record says.
func (e *Engine) paymentState(ctx context.Context, id string, rec transferRecord) (TransferState, error) {
	st := stateOf(id, rec)
	body, err := e.transferBody(ctx, id)
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
