package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"
	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// One-payer transfers (docs/transfers.md, "One payer"). When only one part
// takes value out (a payment, a payout, a refund), no vote is needed: the
// payer's part runs once, as the client wrote it, and that run is the commit
// point. The driver
//
//  1. begins the record, marking the payer, and in the same round trip reads
//     what the payees' credits must fit in (a payee that does not exist, or
//     a credit that would pass 2^53-1, aborts before anyone is charged), and
//     the hold of a settle without an amount (transfer_rest.go);
//  2. runs the payer's part ("x:<id>:c" on the payer): applied, the transfer
//     is committed; rejected, aborted, and nothing anywhere has changed;
//  3. sends the payees' credits ("x:<id>:c" on each), in one round trip;
//  4. records the decision and, in the same run, the parts finished, which
//     makes the record done.
//
// Four round trips and n + 2 script runs for n parts, where the two phases
// take five and 2n + 5. Its steps apply once because a finished part is
// never sent again and an unfinished one only while its idempotency record
// is sure to live (the record's until_ms): past that, the part is left to an
// operator, as a lost part of the two phases is. A driver that gives up
// before step 2 is known leaves the record preparing; recovery then fences
// the payer's step (writes its record as a rejection unless it has one) and
// sends it: its answer, the fence's or the first run's, decides.

// payTTLFactor: a transfer takes the one-payer path only when the
// idempotency TTL is at least this many transfer timeouts, so that its steps'
// records outlive the recovery's attempts by far. With a shorter TTL every
// transfer runs the two phases, whose holds keep each step once at any TTL.
const payTTLFactor = 10

// payerOf gives the index of the part that will commit transfer n in its own
// run, or -1 for the two phases.
func (e *Engine) payerOf(n instructions.NormalizedTransfer) int {
	if n.Payer < 0 || e.ttl < payTTLFactor*e.xferTimeout {
		return -1
	}
	return n.Payer
}

// beginArgs are the begin action's arguments after the holders: the payer's
// index and for how long (ms) its steps may be sent again ("" and "" for the
// two phases), then this engine's idempotency TTL, which the record keeps
// for every driver (stepTTL).
func (e *Engine) beginArgs(payer int) []any {
	if payer < 0 {
		return []any{"", "", e.idemTTL}
	}
	return []any{indexArg(payer), (e.ttl - 2*e.xferTimeout).Milliseconds(), e.idemTTL}
}

// stepTTL is the idempotency TTL (ms) of a transfer's steps, of its fences
// and of its done record: that of the engine which began it, as the record
// tells it (ttl_ms; for a one-payer record begun before ttl_ms was kept,
// until_ms less the start plus two of the timeouts deadline_ms gives).
// Whatever engine drives the transfer uses it, not its own. A shorter one
// would let a step's record expire while another driver may send the step
// again (inside a one-payer transfer's window), or a fence expire before a
// stalled driver's step arrives; and the done record, expiring before the
// beginner's step records, would let the client's retry begin the transfer
// anew, replay some parts' prepares and run others again: a part paid twice.
// A two-phase record that does not say gets the driver's own.
func (e *Engine) stepTTL(rec transferRecord) string {
	if ms, ok := rec.stepTTLMs(); ok {
		return strconv.FormatInt(ms, 10)
	}
	return e.idemTTL
}

// stepTTLMs is the steps' TTL (ms) the record tells, ok false for a
// two-phase record that does not say (stepTTL).
func (rec transferRecord) stepTTLMs() (ms int64, ok bool) {
	switch {
	case rec.ttlMs > 0:
		return rec.ttlMs, true
	case rec.payer >= 0:
		return rec.untilMs - rec.createdMs + 2*(rec.deadline-rec.createdMs), true
	}
	return 0, false
}

// payStepID is the id of each part's one instruction in one-payer transfer
// n (payCall).
func payStepID(n instructions.NormalizedTransfer) string {
	return instructions.TransferHoldPrefix + n.ID + commitSuffix
}

// payCall is part p's one instruction in one-payer transfer n, its commit:
// the payer's ops as the client wrote them (its run is the commit point), or
// a payee's credits.
func (e *Engine) payCall(n instructions.NormalizedTransfer, p instructions.Normalized) call {
	id := payStepID(n)
	hold := id[:len(id)-len(commitSuffix)] // n.Hold(), without a string of its own
	return e.build(instructions.Normalized{ID: id, Holder: p.Holder, Counterparty: hold,
		Memo: "transfer " + n.ID + ": commit", Transfer: n.ID, Steps: p.Steps})
}

// commitOf is part p's commit, its record kept for stepTTL.
func (e *Engine) commitOf(n instructions.NormalizedTransfer, p instructions.Normalized, rec transferRecord) call {
	if n.Payer >= 0 {
		c := e.payCall(n, p) // as callsOf, without its pointer
		c.args[argTTL] = e.stepTTL(rec)
		return c
	}
	return *e.callsOf(n, p, e.stepTTL(rec)).commit
}

// forgetRefusal deletes the idempotency record of c, a one-payer transfer's
// credit, if it records the refusal OVERFLOW: the credit did not apply (its
// payee was filled after the begin's read), and, its id forgotten, the next
// attempt applies it once room is made. Kept, the refusal would replay until
// the window had passed, leaving the payee to an operator. Only a refusal is
// deleted, under WATCH: an id that has applied since keeps its record.
func (e *Engine) forgetRefusal(ctx context.Context, c call) error {
	key := c.keys[keyTx]
	fp := c.args[argFP].(string)
	return e.rdb.Watch(ctx, func(tx *redis.Tx) error {
		v, err := tx.Get(ctx, key).Result()
		if err != nil || !stored.RecordRefused(v, fp, string(instructions.CodeOverflow)) {
			return nil // gone, or not that refusal
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error { return p.Del(ctx, key).Err() })
		return err
	}, key)
}

// checkReads are what the one-payer path reads before the payer's run:
// payeeReads, then restReads (transfer_rest.go); none for the two phases.
func checkReads(n instructions.NormalizedTransfer, payer int) []req {
	if payer < 0 {
		return nil
	}
	return append(payeeReads(n, payer), restReads(n)...)
}

// checkFails tells, from checkReads' answers, the first part whose run
// would fail (its index and error): a payee's credits (payeeCheck), or a
// settle without an amount whose hold does not hold what it must settle.
func (e *Engine) checkFails(n instructions.NormalizedTransfer, payer int, got []sent) (part int, reject *Error, known bool) {
	payees := len(n.Parts) - 1
	if part, reject, known = e.payeeCheck(n, payer, got[:payees]); !known || reject != nil {
		return part, reject, known
	}
	return e.restCheck(n, got[payees:])
}

// payeeReads reads, for each part but the payer's, its holder's status and
// the balances its credits go to.
func payeeReads(n instructions.NormalizedTransfer, payer int) []req {
	var out []req
	for i, p := range n.Parts {
		if i == payer {
			continue
		}
		key := cluster.Holder(p.Holder)
		args := []any{"hmget", key, stored.FieldStatus}
		for _, s := range p.Steps {
			args = append(args, balanceField(s))
		}
		out = append(out, req{keys: []string{key}, args: args})
	}
	return out
}

// balanceField is the holder hash's field a credit or earn_points adds to.
func balanceField(s instructions.Step) string {
	if s.Op == instructions.OpEarnPoints {
		return stored.FieldPointsAvailable
	}
	return stored.PrefixBalance + s.Asset
}

// payeeCheck tells, from payeeReads' answers, the first payee part whose
// credits would fail (its index and error), as the library would refuse them;
// known is false when a read failed.
func (e *Engine) payeeCheck(n instructions.NormalizedTransfer, payer int, got []sent) (part int, reject *Error, known bool) {
	j := 0
	for i, p := range n.Parts {
		if i == payer {
			continue
		}
		v, err := got[j].cmd.Slice()
		j++
		if err != nil || len(v) != 1+len(p.Steps) {
			return 0, nil, false
		}
		if v[0] == nil {
			return i, &Error{Code: instructions.CodeHolderNotFound, OpIndex: 0,
				Message: e.describe(p, 0, instructions.CodeHolderNotFound, "")}, true
		}
		added := map[string]int64{}
		top := int64(0)
		for k, s := range p.Steps {
			field := balanceField(s)
			s0, _ := v[1+k].(string)
			have, _ := strconv.ParseInt(s0, 10, 64)
			top = max(top, have+added[field]+s.Units)
			if have+added[field]+s.Units > instructions.MaxUnits {
				a := s.Asset
				if s.Op == instructions.OpEarnPoints {
					a = instructions.PointsLeg
				}
				detail := a + ":" + strconv.FormatInt(have, 10)
				return i, &Error{Code: instructions.CodeOverflow, OpIndex: k,
					Message: e.describe(p, k, instructions.CodeOverflow, detail)}, true
			}
			added[field] += s.Units
		}
		e.payees.add(p.Holder, top)
	}
	return 0, nil, true
}

// pay runs the payer's part, the commit point, and tells what it decided;
// ok is false while that is unknown. reads are checkReads' answers, or nil
// to read now. late (recovery, past the deadline) fences the payer's step
// first, so that the run answers what was decided or, if nothing was, a
// rejection. first is the run's outcome when it went with the reads (a
// quick transfer), nil when it is yet to be sent. back tells that the run
// applied but the payee's credit cannot (the reads said so: the payee gone,
// or the credit past 2^53-1): the payer is to be given back what it paid now,
// the transfer aborted with reason. That is so only for a run that applied
// now, with the reads (first): one that had applied before is a payment
// committed, whose credit is sent again while the window lasts.
func (e *Engine) pay(ctx context.Context, n instructions.NormalizedTransfer, rec transferRecord, reads []sent, late bool,
	first *Outcome) (status, reason string, back, ok bool) {
	payer := rec.payer
	step := e.commitOf(n, n.Parts[payer], rec)
	var why *Error
	whyPart := 0
	if !late {
		if reads == nil {
			reads = e.submitGrouped(ctx, checkReads(n, payer))
		}
		var known bool
		if whyPart, why, known = e.checkFails(n, payer, reads); !known {
			return "", "", false, false
		}
	}
	var o Outcome
	if first != nil && known(*first) {
		o = *first
	} else {
		if late || why != nil {
			if err := e.fence(ctx, n.ID, &step); err != nil {
				return "", "", false, false
			}
		}
		o = e.runUntilKnown(ctx, []call{step})[0]
		if first != nil && o.Err == nil {
			// A quick run whose answer was lost: it may have applied with this
			// engine's TTL, before the record was read.
			e.keepStepTTL(ctx, rec, step)
		}
	}
	var err *Error
	if !late && errors.As(o.Err, &err) && err.Code == instructions.CodeHolderNotFound {
		// No record keeps this refusal (nothing is written for an unknown
		// holder): another driver's run, or the client's retry of a quick
		// payment, arriving once the payer has been opened, would apply
		// under an aborted transfer. Fenced, the step answers for good: the
		// fence, or a run that got in before it. So whatever else the reads
		// found (the payee gone too: its error stays the reason).
		if e.fence(ctx, n.ID, &step) != nil {
			return "", "", false, false
		}
		if why == nil {
			whyPart, why = payer, err
		}
		o = e.runUntilKnown(ctx, []call{step})[0]
	}
	if o.Err == nil {
		if why != nil && first != nil && !o.Result.Replayed && len(n.Parts) == 2 {
			return TransferAborted, abortFor(n, whyPart, *why), true, true
		}
		return TransferCommitted, "", false, true
	}
	if !errors.As(o.Err, &err) || !decisive(err) {
		return "", "", false, false
	}
	fenced := err.Code == instructions.CodeUnavailable // only a fence records UNAVAILABLE
	if !fenced {
		_ = errors.As(e.waitingNote(ctx, step, o).Err, &err) // a hot payer: what its lanes hold
	}
	switch {
	case why != nil:
		return TransferAborted, abortFor(n, whyPart, *why), false, true
	case fenced:
		return TransferAborted, e.lateReason(), false, true
	}
	return TransferAborted, abortFor(n, payer, *err), false, true
}

// known tells whether o is a run's final answer (decisive).
func known(o Outcome) bool {
	var err *Error
	return o.Err == nil || errors.As(o.Err, &err) && decisive(err)
}

// lateReason is the abort reason of a transfer not decided in time.
func (e *Engine) lateReason() string {
	b, _ := json.Marshal(abortReason{Error: &Error{Code: instructions.CodeUnavailable, OpIndex: instructions.NoOp,
		Message: fmt.Sprintf("transfer was not decided within %v of its start", e.xferTimeout)}})
	return string(b)
}

// abortFor is the abort reason of part i's rejection err (its op index that of
// the client's op).
func abortFor(n instructions.NormalizedTransfer, i int, err Error) string {
	// The step's id is the engine's own, not one the client could renew.
	err.ID, err.Replayed = "", false
	err.Message = fmt.Sprintf("part %d (%s): %s", i, n.Parts[i].Holder, strings.TrimSuffix(err.Message, ReplayNote))
	if parent, lane := instructions.ParentOf(n.Parts[i].Holder); lane > 0 && err.Code == instructions.CodeHolderNotFound {
		err.Message = fmt.Sprintf("part %d (%s): lane %d of hot holder %s is missing from Redis (its master lost its data): "+
			"rebuild it from the ledger (engined rebuild), then send a new transfer", i, parent, lane, parent)
	}
	b, _ := json.Marshal(abortReason{PartIndex: &i, Error: &err})
	return string(b)
}

// drivePayment takes a one-payer transfer forward from rec, as drive does
// for the two phases; reads, late and first are pay's.
func (e *Engine) drivePayment(ctx context.Context, n instructions.NormalizedTransfer, rec transferRecord, reads []sent, late bool,
	first *Outcome) (TransferState, int) {
	if e.giveBackDue(n, rec) && time.Now().UnixMilli() <= rec.untilMs {
		st, _ := e.giveBack(ctx, n, rec, "")
		return st, 0
	}
	if !rec.done && time.Now().UnixMilli() > rec.untilMs {
		// Its steps' records may be gone: sending one again could apply it twice.
		stuck := 0
		for i := range n.Parts {
			if !rec.partFinished(i) {
				stuck++
			}
		}
		e.log.Error("transfer: a one-payer transfer is still unfinished when its steps' idempotency records may have "+
			"expired; its parts are left for an operator (see docs/transfers.md, One payer)",
			"transfer", n.ID, "status", rec.status, "unfinished_parts", stuck)
		return stateOf(n.ID, rec), stuck
	}
	if rec.status == "preparing" {
		status, reason, back, ok := e.pay(ctx, n, rec, reads, late, first)
		if !ok {
			return stateOf(n.ID, rec), 0
		}
		if back {
			st, _ := e.giveBack(ctx, n, rec, reason)
			return st, 0
		}
		// Committed, the credits go first, then the decision with the parts
		// it finished; aborted, nothing was applied: every part is finished
		// with the decision. Either way one run of the record.
		var finished []int
		if status == TransferCommitted {
			var credits []call
			var parts []int
			for i, p := range n.Parts {
				if i != rec.payer && !rec.partFinished(i) {
					credits, parts = append(credits, e.commitOf(n, p, rec)), append(parts, i)
				}
			}
			out := make([]Outcome, len(credits))
			e.runGrouped(ctx, credits, out)
			finished = []int{rec.payer}
			for j, o := range out {
				if o.Err == nil {
					finished = append(finished, parts[j])
				}
			}
		} else {
			for i := range n.Parts {
				finished = append(finished, i)
			}
		}
		if status == TransferCommitted && len(finished) == len(n.Parts) && e.minAcks == 0 {
			// Every part applied: the record is booked in the background.
			e.book(n, rec)
			rec.status, rec.done = TransferCommitted, true
			return stateOf(n.ID, rec), 0
		}
		args := e.appendFinishArgs(append(make([]any, 0, 5+len(finished)), status, reason, e.xferTimeout.Milliseconds()),
			n, rec, finished)
		reqs := []req{transferReq(n.ID, "decide", args...)}
		if len(finished) == len(n.Parts) { // the record done: its payer's entry goes
			reqs = e.unpend(reqs, n, rec)
		}
		decided, err := e.recordOf(n.ID, e.submit(ctx, reqs)[0])
		if err != nil || decided.outcome == "missing" { // missing: lost in a failover; a retry begins it again
			if status == TransferCommitted {
				rec.status = TransferCommitted // the payer's run is the commit point: decided, if not done
			}
			return stateOf(n.ID, rec), 0
		}
		rec = decided
		// Had another driver decided otherwise first, its decision stands
		// and nothing was finished: go on from it.
	}
	stuck := 0
	switch {
	case rec.done:
	case rec.status == TransferCommitted:
		rec, stuck = e.commitParts(ctx, n, rec)
	case rec.status == TransferAborted:
		all := make([]int, len(n.Parts))
		for i := range all {
			all[i] = i
		}
		rec = e.finishParts(ctx, n, rec, all, false)
	}
	return stateOf(n.ID, rec), stuck
}

// quick tells whether one-payer transfer n, paid by part payer, takes two
// round trips (docs/transfers.md, One payer): its claim, the read of its
// payee and the payer's run (after its entry, pending) go together, and the
// credit follows. That is so when its payee was found by a payment's read
// a moment ago (seenHolders): a payee that does not exist, or one not seen
// lately, is read first, so that a payment to a holder that is not there
// changes nothing anywhere. A transfer with several payees or with a settle
// without an amount reads first and runs the payer after too: one payee's
// share cannot be given back alone, and a hold must be read before its
// rest is taken. A hot holder's sweep reads first too: no caller waits for
// it, and one that cannot go (lane 0 full) would charge its lane and give
// it back every pass.
func (e *Engine) quick(n instructions.NormalizedTransfer, payer int) bool {
	if e.minAcks > 0 || !quickShape(n, payer) || strings.HasPrefix(n.ID, instructions.HotSweepPrefix) {
		return false
	}
	payee := n.Parts[1-payer]
	adds := int64(0)
	for _, s := range payee.Steps {
		adds += s.Units
	}
	return e.payees.fits(payee.Holder, adds)
}

// quickShape tells whether transfer n, paid by part payer, has the shape of
// a quick transfer, whatever the engine.
func quickShape(n instructions.NormalizedTransfer, payer int) bool {
	return payer >= 0 && len(n.Parts) == 2 && len(rests(n)) == 0
}

// beginQuick is begin for a quick transfer: the claim, the reads of the
// payee, and the payer's entry (pending) and run, step, in one round trip.
// It answers the run's outcome too.
func (e *Engine) beginQuick(ctx context.Context, n instructions.NormalizedTransfer, body []byte, entry string, step call) (transferRecord, []sent, Outcome, error) {
	run := []req{e.pending(n, entry, n.Payer, time.Now().UnixMilli()+e.xferTimeout.Milliseconds()), step.req()}
	rec, got, err := e.claimWith(ctx, n, body, n.Payer, apart([][]req{run}, payeeReads(n, n.Payer))...)
	return rec, got[len(run):], e.finish(step, got[len(run)-1].cmd), err
}

// transferQuick runs quick transfer n of body body, paid by part payer.
func (e *Engine) transferQuick(ctx context.Context, n instructions.NormalizedTransfer, body []byte, payer int) (TransferState, error) {
	n.Payer = payer
	entry, step := entryOf(n.ID, body), e.payCall(n, n.Parts[payer])
	sent := time.Now().UnixMilli()
	rec, reads, first, err := e.beginQuick(ctx, n, body, entry, step)
	if err != nil {
		// Whatever the run did, its entry tells recovery (recoverPayment).
		if first.Err != nil {
			return TransferState{}, err
		}
		// The payer's run applied, the commit point unless the id is another
		// body's, and the claim did not answer (its record's master slow or
		// failing over): until the record is written the id reads
		// TRANSFER_NOT_FOUND. Recovery writes it from the payer's entry, made
		// due now rather than a transfer timeout from now; the caller hears
		// pending with the id, as for any transfer not finished in time.
		e.dueNow(n, entry)
		return TransferState{ID: n.ID, Status: TransferPending}, nil
	}
	rec.entry = entry
	if rec.done { // a retry of a payment booked: the entry just written goes
		e.background(e.unpend(nil, n, rec))
	}
	if rec.outcome == "conflict" || rec.payer != payer {
		// Another body under the id, or one begun by an engine that runs it
		// in two phases: the run applied, if it did, for no transfer.
		e.yieldStep(ctx, n, rec, first)
		if rec.outcome == "conflict" {
			return TransferState{}, conflictOf(n.ID)
		}
		st, _ := e.drive(ctx, n, rec)
		st.Replayed = true
		return st, nil
	}
	fresh := first.Err == nil && !first.Result.Replayed
	if fresh && rec.outcome == "found" && sent > rec.untilMs {
		// The run applied now, sent past the window in which the
		// transfer's payer's step is sent: that step's record had expired
		// while the transfer's lives (a done record outlives its steps; an
		// unfinished one lives on, with no recovery worker for half a TTL),
		// and this run charged the payer a second time. It is given back; the transfer is answered as its
		// record says. A run sent within the window is the transfer's, even
		// when the record is done and the claim is read past the window:
		// recovery may have finished the payment from that very run while
		// this driver's claim was on its way.
		e.giveBackRun(ctx, n, step, first, "sent again after its step's record expired")
	} else if fresh {
		e.keepStepTTL(ctx, rec, step)
	}
	if pinLanes(&n, rec.holders) {
		reads = e.submit(ctx, payeeReads(n, payer))
	}
	st, _ := e.drivePayment(ctx, n, rec, reads, false, &first)
	st.Replayed = rec.outcome == "found"
	return st, nil
}

// keepStepTTL gives the payer's step of quick transfer rec, which this
// engine sent with its own TTL before it read the record, the TTL the
// record keeps (stepTTL) when they differ: the run applied, for a transfer
// another engine began. Shorter, the step would expire inside the window,
// where the same body sent again would charge the payer a second time and
// be taken for the transfer's run; longer, it would outlive the record.
func (e *Engine) keepStepTTL(ctx context.Context, rec transferRecord, step call) {
	if ttl := e.stepTTL(rec); ttl != e.idemTTL {
		key := step.keys[keyTx]
		e.submit(ctx, []req{{keys: []string{key}, args: []any{"pexpire", key, ttl}}})
	}
}

// yieldStep gives the payer of quick transfer n back what its run took, o,
// when the id's record is another's (winner): the run, if it applied, did
// for no transfer. Unless it is the winner's own run: the same payer and
// the same part make the same step (its id and fingerprint), which applied
// once, for the winner. The give-back is the payer's instruction
// "x:<id>:g", once by its id, and then the run's record becomes a fence;
// should either fail now, recovery does them from the payer's entry.
func (e *Engine) yieldStep(ctx context.Context, n instructions.NormalizedTransfer, winner transferRecord, o Outcome) (ok bool) {
	step := e.payCall(n, n.Parts[n.Payer])
	if !known(o) {
		// A fence makes a run still on its way answer a rejection.
		if e.fence(ctx, n.ID, &step) != nil {
			return false
		}
		if o = e.runUntilKnown(ctx, []call{step})[0]; !known(o) {
			return false
		}
	}
	if o.Err != nil {
		return true // not applied: nothing to give back
	}
	if same, err := e.sameStep(ctx, step, winner); err != nil || same {
		return err == nil
	}
	return e.giveBackRun(ctx, n, step, o, "made under an id another transfer has")
}

// giveBackRun gives the payer of quick transfer n back what its run, step,
// took (o, applied), by the payer's instruction "x:<id>:g<seq>", seq the
// run's, and makes the run's record a fence, so that the run answers so
// from now on; why says why in the log. Else, sent again later, this body
// would be claimed anew (once the record that made the run a charge for
// nothing has expired) and its run replay applied, paying the payee with
// money given back. The fence outlives the give-back's record, so that the
// run cannot apply again while the give-back would replay.
func (e *Engine) giveBackRun(ctx context.Context, n instructions.NormalizedTransfer, step call, o Outcome, why string) (ok bool) {
	mine := transferRecord{payer: n.Payer, ttlMs: e.ttl.Milliseconds()}
	back := e.giveBackCall(n, mine, giveBackSuffix+strconv.FormatInt(o.Result.Seq, 10))
	if o := e.runUntilKnown(ctx, []call{back})[0]; !gaveBack(o) {
		e.log.Warn("transfer: give back a payer's run "+why, "transfer", n.ID,
			"holder", n.Parts[n.Payer].Holder, "err", o.Err)
		return false
	}
	key := step.keys[keyTx]
	fence := fenceRecord(step.args[argFP].(string), n.ID, givenBack)
	life := e.ttl.Milliseconds() + e.xferTimeout.Milliseconds()
	if err := e.submit(ctx, []req{{keys: []string{key}, args: []any{"set", key, fence, "xx", "px", life}}})[0].cmd.Err(); err != nil &&
		!errors.Is(err, redis.Nil) {
		return false // the next driver or recovery gives back (a replay) and fences again
	}
	e.log.Warn("transfer: a payer's run "+why+"; it was given back", "transfer", n.ID, "holder", n.Parts[n.Payer].Holder)
	return true
}

// sameStep tells whether step, a one-payer transfer's payer's run, is also
// the winner's (the record of the transfer that has its id).
func (e *Engine) sameStep(ctx context.Context, step call, winner transferRecord) (bool, error) {
	hs := strings.Split(winner.holders, ",")
	if winner.payer < 0 || winner.payer >= len(hs) || hs[winner.payer] != step.n.Holder {
		return false, nil
	}
	body, err := e.transferBody(ctx, step.n.Transfer)
	if err != nil {
		return false, err
	}
	t, err := instructions.DecodeTransfer([]byte(body))
	if err != nil {
		return false, err
	}
	w, err := t.Normalize(e.assets)
	if err != nil {
		return false, err
	}
	return winner.payer < len(w.Parts) && e.payCall(w, w.Parts[winner.payer]).args[argFP] == step.args[argFP], nil
}

// seenHolders remembers for a while (seenFor) the holders that payments'
// reads found, each with the most its balances the payment credited came
// to, at most seenMax of them (past that, it starts again).
type seenHolders struct {
	mu sync.Mutex
	at map[string]seenHolder
}

type seenHolder struct {
	at  time.Time
	top int64
}

const (
	seenFor = time.Minute
	seenMax = 1 << 16
)

func (s *seenHolders) add(holder string, top int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at == nil || len(s.at) >= seenMax {
		s.at = make(map[string]seenHolder)
	}
	s.at[holder] = seenHolder{at: time.Now(), top: top}
}

// fits tells whether holder was seen lately, with room to spare for adds
// more: a balance that came to half of 2^53-1 is read first, for a credit
// that would overflow it is then refused with nothing changed.
func (s *seenHolders) fits(holder string, adds int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.at[holder]
	return ok && time.Since(h.at) < seenFor && h.top+adds <= instructions.MaxUnits/2
}
