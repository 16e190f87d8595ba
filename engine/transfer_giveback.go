package engine

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// A one-payer transfer's credit that cannot apply after the payer's run (its
// payee gone, or full) is sent again by every driver and by recovery while
// its window lasts (transfer_pay.go). When the transfer has one payee and
// half the window has passed with the credit still not applied, the
// recovery worker (or a driver) gives the payer back what it paid, once,
// and the transfer is aborted with the payee's error (docs/transfers.md,
// One payer):
//
//  1. the credit's idempotency record is made a fence, under WATCH: unless
//     it records the credit applied (then the part is simply finished), it
//     becomes a rejection that every later run of the credit replays;
//  2. the payer gets its money back by an instruction of its own,
//     "x:<id>:g", whose id makes it apply once;
//  3. the record says aborted, with the payee's error, and done.
//
// A transfer with several payees keeps the operator's path: giving one
// payee's share back while the others were paid would leave it neither
// committed nor aborted.
//
// A quick transfer (one payee) whose payer's run applied while the read
// that went with it found the payee unable to take the credit (gone, or
// full) is given back at once, the same way: no credit was sent.

// giveBackSuffix ends the id of the payer's give-back of a transfer; a
// run of the payer's step given back on its own (giveBackRun) has its own,
// the suffix and that run's seq, so that two give-backs under one transfer
// never share an id (the second would replay the first and refund nothing).
const giveBackSuffix = ":g"

// giveBackDue tells whether a committed one-payer transfer's unfinished
// credit is to be given back now: in the second half of the window, which
// the recovery worker visits many times (it looks again every timeout), so
// that a slow pass does not miss it.
func (e *Engine) giveBackDue(n instructions.NormalizedTransfer, rec transferRecord) bool {
	return rec.status == TransferCommitted && !rec.done && len(n.Parts) == 2 && rec.partFinished(rec.payer) &&
		time.Now().UnixMilli() >= rec.untilMs-(rec.untilMs-rec.createdMs)/2
}

// giveBack does the three steps above; ok is false when one could not be
// done now (the next visit does it again: every step is idempotent). The
// transfer is aborted with reason, or, when reason is "", with what the
// credit's record says (fenceCredit).
func (e *Engine) giveBack(ctx context.Context, n instructions.NormalizedTransfer, rec transferRecord, reason string) (TransferState, bool) {
	payee := 1 - rec.payer
	credit := e.commitOf(n, n.Parts[payee], rec)
	reason, applied, err := e.fenceCredit(ctx, n, payee, credit, reason)
	if err != nil {
		e.log.Warn("transfer: fence a credit to give it back", "transfer", n.ID, "err", err)
		return stateOf(n.ID, rec), false
	}
	if applied && rec.status == "preparing" { // a quick transfer's: another driver's credit went in first
		e.book(n, rec)
		rec.status, rec.done = TransferCommitted, true
		return stateOf(n.ID, rec), true
	}
	if applied {
		rec = e.finishParts(ctx, n, rec, []int{payee}, false)
		return stateOf(n.ID, rec), rec.done
	}
	back := e.giveBackCall(n, rec, giveBackSuffix)
	if o := e.runUntilKnown(ctx, []call{back})[0]; !gaveBack(o) {
		e.log.Warn("transfer: give a payment back to its payer", "transfer", n.ID, "holder", n.Parts[rec.payer].Holder,
			"err", o.Err)
		return stateOf(n.ID, rec), false
	}
	got := e.submit(ctx, e.recordDone(n, rec, e.decision(n, rec, TransferAborted, reason)...))
	for _, s := range got {
		if err := s.cmd.Err(); err != nil {
			e.log.Warn("transfer: record a payment given back", "transfer", n.ID, "err", err)
			return stateOf(n.ID, rec), false
		}
	}
	e.log.Warn("transfer: a payee's credit could not apply within the transfer's window; the payer was given back "+
		"what it paid and the transfer aborted", "transfer", n.ID, "payee", n.Parts[payee].Holder, "reason", reason)
	rec.status, rec.err, rec.done = TransferAborted, reason, true
	return stateOf(n.ID, rec), true
}

// fenceCredit makes the record of credit c, part i's, a fence unless it
// records the credit applied (applied true). A recorded refusal (OVERFLOW)
// is replaced, under WATCH, so that no driver's forgetRefusal can delete it
// and send the credit again. It answers the abort reason: reason when given,
// else the refusal's error, or HOLDER_NOT_FOUND when the credit left no
// record (its payee gone). The fence keeps the reason, so that a give-back
// resumed after it (a driver stopped before the payer's x:<id>:g) tells
// what refused the credit.
func (e *Engine) fenceCredit(ctx context.Context, n instructions.NormalizedTransfer, i int, c call, reason string) (out string, applied bool, err error) {
	key := c.keys[keyTx]
	fp := c.args[argFP].(string)
	kept := fenceText(n.ID, givenBack) + ": "
	err = e.rdb.Watch(ctx, func(tx *redis.Tx) error {
		v, err := tx.Get(ctx, key).Result()
		why := Error{Code: instructions.CodeHolderNotFound, OpIndex: 0,
			Message: e.describe(n.Parts[i], 0, instructions.CodeHolderNotFound, "")}
		out = reason
		switch {
		case errors.Is(err, redis.Nil):
		case err != nil:
			return err
		case stored.RecordApplied(v, fp):
			applied = true
			return nil
		case stored.RecordRefused(v, fp, string(instructions.CodeUnavailable)): // fenced already
			if _, _, detail, _ := stored.RecordRejection(v, fp); out == "" {
				out = strings.TrimPrefix(detail, kept)
				if out == detail { // a fence that keeps no reason
					out = abortFor(n, i, why)
				}
			}
			return nil
		default:
			if c, idx, detail, ok := stored.RecordRejection(v, fp); ok {
				code := instructions.Code(c)
				why = Error{Code: code, OpIndex: 0, Message: e.describe(n.Parts[i], 0, code, detail)}
				if idx, err := strconv.Atoi(idx); err == nil {
					why.OpIndex = idx
				}
			}
		}
		if out == "" {
			out = abortFor(n, i, why)
		}
		// The fence lives as long as the credit's record would.
		ms, _ := strconv.ParseInt(c.args[argTTL].(string), 10, 64)
		fence := fenceRecord(fp, n.ID, givenBack+": "+out)
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			return p.Set(ctx, key, fence, time.Duration(ms)*time.Millisecond).Err()
		})
		return err
	}, key)
	if err != nil || applied {
		return "", applied, err
	}
	return out, false, nil
}

// giveBackCall is the payer's instruction, its id the transfer's hold and
// suffix, that gives it back what it paid: what the payee's part would have
// added (giveBackSteps).
func (e *Engine) giveBackCall(n instructions.NormalizedTransfer, rec transferRecord, suffix string) call {
	hold := n.Hold()
	payer := n.Parts[rec.payer]
	c := e.build(instructions.Normalized{ID: hold + suffix, Holder: payer.Holder, Counterparty: hold,
		Memo: "transfer " + n.ID + ": given back", Transfer: n.ID, Steps: giveBackSteps(payer, n.Parts[1-rec.payer])})
	c.args[argTTL] = e.stepTTL(rec)
	return c
}

// gaveBack tells whether o, the outcome of a give-back, says the payer has
// it: applied, now or before, or IDEMPOTENCY_CONFLICT. Its id is the
// engine's own (x:, which no client may use), so another body under it is
// the same give-back made by an engine of another version, which wrote its
// steps otherwise (before restore, a settle came back as a credit): it
// applied, and must not be sent again.
func gaveBack(o Outcome) bool {
	return o.Err == nil || errors.Is(o.Err, instructions.CodeIdempotencyConflict)
}

// giveBackSteps undo the payer's ops that took value out, in their order,
// as far as what the payee's credits come to per asset or points (the
// payer's part may also receive): a settle's units go back into its hold
// (restore: to available once that hold has closed), a debit's and a
// spend_points' come back as a credit and an earn_points. So a payer that
// only pays is as it was, its orders' holds included.
func giveBackSteps(payer, payee instructions.Normalized) []instructions.Step {
	due := map[string]int64{}
	for _, s := range payee.Steps {
		due[s.Leg()] += s.Units
	}
	var out []instructions.Step
	for _, s := range payer.Steps {
		a := s.Leg()
		n := min(s.Units, due[a])
		var back instructions.Step
		switch {
		case n == 0:
			continue
		case s.Op == instructions.OpSettle:
			back = instructions.Step{Op: instructions.OpRestore, Asset: s.Asset, Units: n, Hold: s.Hold}
		case s.Op == instructions.OpDebit:
			back = instructions.Step{Op: instructions.OpCredit, Asset: s.Asset, Units: n}
		case s.Op == instructions.OpSpendPoints:
			back = instructions.Step{Op: instructions.OpEarnPoints, Units: n}
		default: // what the payer receives
			continue
		}
		due[a] -= n
		out = append(out, back)
	}
	return out
}
