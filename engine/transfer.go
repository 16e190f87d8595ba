package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/internal/worker"
)

// Cross-holder transfers (docs/transfers.md). A transfer is all or nothing
// over several holders in three steps, each one idempotent:
//
//  1. prepare: each part runs as an instruction ("x:<id>:p") that checks what
//     the part takes out and reserves it under the hold "x:<id>": a debit
//     freezes, a settle takes its amount from its hold into that one (which
//     stays open, even when emptied, until the commit). Credits wait, but
//     are checked to fit. Every part's prepare opens "x:<id>", empty if the
//     part only receives.
//  2. decide: one run of the library's transfer function turns the record {x:<id>} from
//     preparing to committed (every part prepared) or aborted (a part was
//     rejected). This is the commit point.
//  3. finish: committed, each part settles its reservation and takes its
//     credits ("x:<id>:c"); aborted, each part gets back what was reserved
//     ("x:<id>:a"), after a fence that makes a prepare still on its way
//     fail. Each part's commit or abort consumes "x:<id>" first, so it cannot
//     apply twice, whatever has become of its id's record; once it has
//     applied, the record marks the part finished and no one sends it again.
//     With every part finished, the record leaves its slot's index.
//
// Whoever drives a transfer (the caller of Transfer, the same call retried,
// the recovery worker) goes forward from the state in the record.

// Transfer statuses.
const (
	TransferPending   = "pending" // not decided yet (the record says preparing)
	TransferCommitted = "committed"
	TransferAborted   = "aborted"
)

// DefaultTransferTimeout is how long a transfer may stay undecided, or
// decided with parts unfinished, before the recovery worker takes it over.
const DefaultTransferTimeout = 30 * time.Second

// Transfer applies a transfer: every part or none. It answers once the
// transfer is committed or aborted and every part finished, or, when ctx
// ends first, with what is known: pending (the recovery worker will abort it
// if it stays so), or committed or aborted but not complete (the worker
// finishes it). Sent again with the same id and body, it answers the
// transfer's state, Replayed, going on with it if it is unfinished.
//
// Errors: the codes of Normalize before Redis; IDEMPOTENCY_CONFLICT for
// another body under an id already used; UNAVAILABLE when the record could
// not be read or written (retry with the same id). A part's rejection is not
// an error: it is the Error of an aborted state.
func (e *Engine) Transfer(ctx context.Context, t instructions.Transfer) (TransferState, error) {
	if strings.HasPrefix(t.ID, instructions.HotSweepPrefix) {
		return TransferState{}, &Error{ID: t.ID, Code: instructions.CodeInvalidID, OpIndex: instructions.NoOp,
			Message: fmt.Sprintf("transfer id %q: ids beginning with %q are kept for the sweep of hot holders; choose another", t.ID, instructions.HotSweepPrefix)}
	}
	n, err := t.Normalize(e.assets)
	if err != nil {
		return TransferState{}, err
	}
	e.routeParts(ctx, &n)
	return e.transfer(ctx, t, n)
}

// transfer runs normalized transfer n of body t.
func (e *Engine) transfer(ctx context.Context, t instructions.Transfer, n instructions.NormalizedTransfer) (TransferState, error) {
	// What EncodeTransfer writes, without reflection (a normalized
	// transfer's strings are valid UTF-8).
	body := t.AppendJSON(make([]byte, 0, 256))
	// A one-payer transfer reads, in the same round trip, what its payees'
	// credits must fit in and the hold of a settle without an amount
	// (transfer_pay.go, transfer_rest.go).
	payer := e.payerOf(n)
	if e.quick(n, payer) {
		return e.transferQuick(ctx, n, body, payer)
	}
	rec, reads, err := e.begin(ctx, n, body, payer)
	if err != nil {
		return TransferState{}, err
	}
	if pinLanes(&n, rec.holders) {
		reads = e.submit(ctx, checkReads(n, payer))
	}
	if rec.outcome == "conflict" {
		return TransferState{}, conflictOf(n.ID)
	}
	var st TransferState
	if rec.payer >= 0 && rec.payer == payer {
		n.Payer = payer
		st, _ = e.drivePayment(ctx, n, rec, reads, false, nil)
	} else {
		st, _ = e.drive(ctx, n, rec)
	}
	st.Replayed = rec.outcome == "found"
	return st, nil
}

// conflictOf is the error of transfer id sent with another body.
func conflictOf(id string) *Error {
	return &Error{ID: id, Code: instructions.CodeIdempotencyConflict, OpIndex: instructions.NoOp,
		Message: fmt.Sprintf("transfer id %q was used with another body", id)}
}

// begin writes transfer n's record unless it exists and reads it, and for
// a one-payer transfer, in the same round trip, what its payer's run must
// be checked against (checkReads).
func (e *Engine) begin(ctx context.Context, n instructions.NormalizedTransfer, body []byte, payer int) (transferRecord, []sent, error) {
	if payer >= 0 && e.minAcks == 0 {
		return e.claimWith(ctx, n, body, payer, apart(nil, checkReads(n, payer))...)
	}
	args := append(make([]any, 0, 7), transferPrint(n), body, e.xferTimeout.Milliseconds(), holdersOf(n))
	args = append(args, e.beginArgs(payer)...)
	got := e.submit(ctx, append([]req{transferReq(n.ID, "begin", args...)}, checkReads(n, payer)...))
	rec, err := e.recordOf(n.ID, got[0])
	return rec, got[1:], err
}

// GetTransfer reads a transfer's state. Errors: TRANSFER_NOT_FOUND (never
// seen, or finished longer ago than the idempotency TTL), UNAVAILABLE.
func (e *Engine) GetTransfer(ctx context.Context, id string) (TransferState, error) {
	if e := instructions.CheckTransferID(id); e != nil {
		return TransferState{}, &Error{ID: id, Code: e.Code, OpIndex: e.OpIndex, Message: e.Message}
	}
	rec, err := e.transferScript(ctx, id, "read")
	if err != nil {
		return TransferState{}, err
	}
	if rec.outcome == "missing" {
		return TransferState{}, &Error{Code: instructions.CodeTransferNotFound, OpIndex: instructions.NoOp,
			Message: fmt.Sprintf("transfer %s not found", id)}
	}
	if rec.status == "preparing" && rec.payer >= 0 {
		return e.paymentState(ctx, id, rec)
	}
	return stateOf(id, rec), nil
}

// drive takes a transfer forward from rec as far as it can go now. It also
// tells how many parts it found stuck (see commitParts).
func (e *Engine) drive(ctx context.Context, n instructions.NormalizedTransfer, rec transferRecord) (TransferState, int) {
	// The record says how the transfer runs, whoever began it.
	if n.Payer = rec.payer; n.Payer >= len(n.Parts) {
		e.log.Error("transfer: the record names a payer part that the body does not have", "transfer", n.ID, "payer", n.Payer)
		return stateOf(n.ID, rec), 0
	}
	if n.Payer >= 0 {
		return e.drivePayment(ctx, n, rec, nil, false, nil)
	}
	if rec.status == "preparing" {
		status, reason, ok := e.prepareParts(ctx, n, rec)
		if !ok {
			return stateOf(n.ID, rec), 0
		}
		decided, err := e.transferScript(ctx, n.ID, "decide", status, reason, e.xferTimeout.Milliseconds())
		if err != nil || decided.outcome == "missing" { // missing: lost in a failover; a retry begins it again
			return stateOf(n.ID, rec), 0
		}
		rec = decided
	}
	stuck := 0
	if !rec.done && rec.status == TransferCommitted {
		rec, stuck = e.commitParts(ctx, n, rec)
	} else if !rec.done && rec.status == TransferAborted {
		rec = e.abortParts(ctx, n, rec)
	}
	return stateOf(n.ID, rec), stuck
}

// partCalls are the three instructions of a part.
type partCalls struct {
	prepare, commit, abort *call
	origin                 []int // per prepare step, the index of the part's op it comes from
}

// partIDs are the suffixes of the instruction ids of a part's steps.
const (
	prepareSuffix = ":p"
	commitSuffix  = ":c"
	abortSuffix   = ":a"
)

// callsOf builds the instructions of part p of transfer n, their records
// kept for ttl (stepTTL). The prepare opens the hold "x:<id>" in every part
// (check does for a part that only receives), and the commit and the abort
// begin by consuming it: that hold is what makes each of them apply at most
// once, whatever the idempotency TTL (docs/transfers.md, "Exactly once").
func (e *Engine) callsOf(n instructions.NormalizedTransfer, p instructions.Normalized, ttl string) partCalls {
	if n.Payer >= 0 {
		c := e.payCall(n, p)
		c.args[argTTL] = ttl
		return partCalls{commit: &c}
	}
	hold := n.Hold()
	var reserve, checks, credits, abort, reserveSay, checkSay, closes []instructions.Step
	var reserveFrom, checkFrom []int
	closeAt := map[string]int{} // order hold -> its close in closes
	for i, s := range p.Steps {
		switch s.Op {
		case instructions.OpDebit:
			reserve = append(reserve, instructions.Step{Op: instructions.OpFreeze, Asset: s.Asset, Units: s.Units, Hold: hold})
			abort = append(abort, instructions.Step{Op: instructions.OpRelease, Asset: s.Asset, Units: s.Units, Hold: hold})
		case instructions.OpSpendPoints:
			reserve = append(reserve, instructions.Step{Op: instructions.OpFreezePoints, Units: s.Units, Hold: hold})
			abort = append(abort, instructions.Step{Op: instructions.OpRelease, Asset: instructions.PointsLeg, Units: s.Units, Hold: hold})
		case instructions.OpSettle:
			reserve = append(reserve, instructions.Step{Op: opTake, Asset: s.Asset, Units: s.Units, Hold: s.Hold, Coupon: hold})
			abort = append(abort, instructions.Step{Op: opGive, Asset: s.Asset, Units: s.Units, Hold: hold, Coupon: s.Hold})
			at, ok := closeAt[s.Hold]
			if !ok {
				at, closeAt[s.Hold] = len(closes), len(closes)
				closes = append(closes, instructions.Step{Op: opClose, Hold: s.Hold})
			}
			if s.Rest == instructions.RestHold {
				closes[at].Units = 1 // settled whole: closed whatever else took from it
			}
		default: // credit, earn_points: applied at commit, checked at prepare
			leg := s.Asset
			if s.Op == instructions.OpEarnPoints {
				leg = instructions.PointsLeg
			}
			checks = append(checks, instructions.Step{Op: opCheck, Asset: leg, Units: s.Units, Hold: hold})
			checkSay, checkFrom = append(checkSay, s), append(checkFrom, i)
			credits = append(credits, s)
			continue
		}
		reserveSay, reserveFrom = append(reserveSay, s), append(reserveFrom, i)
	}
	// The checks come after what the part takes out: they see the balance
	// its commit will credit.
	prep := append(reserve, checks...)
	commit := append(append([]instructions.Step{{Op: instructions.OpSettle, Hold: hold}}, closes...), credits...)
	if len(abort) == 0 {
		abort = []instructions.Step{{Op: instructions.OpRelease, Hold: hold}}
	}
	mk := func(suffix, what string, steps []instructions.Step) *call {
		c := e.build(instructions.Normalized{ID: hold + suffix, Holder: p.Holder, Counterparty: hold,
			Memo: "transfer " + n.ID + ": " + what, Transfer: n.ID, Steps: steps})
		c.args[argTTL] = ttl // not in the fingerprint
		return &c
	}
	pc := partCalls{prepare: mk(prepareSuffix, "prepare", prep), commit: mk(commitSuffix, "commit", commit),
		abort: mk(abortSuffix, "abort", abort), origin: append(reserveFrom, checkFrom...)}
	pc.prepare.n.Steps = append(reserveSay, checkSay...) // a rejection speaks of the client's ops
	return pc
}

// The ops the apply function takes for transfers only (clients cannot send them).
const (
	opCheck = instructions.OpCheck
	opTake  = instructions.OpTake
	opGive  = instructions.OpGive
	opClose = instructions.OpClose
)

// prepareParts prepares every part of n, begun as rec says, and tells what
// to decide: committed, or aborted with the reason; ok is false when some
// part's outcome stays unknown (ctx ended, Redis unreachable).
func (e *Engine) prepareParts(ctx context.Context, n instructions.NormalizedTransfer, rec transferRecord) (status, reason string, ok bool) {
	// Every driver checks the hold of a settle without an amount
	// (transfer_rest.go): the one that began the transfer may have stopped
	// before it did.
	if rs := restReads(n); len(rs) > 0 {
		part, why, known := e.restCheck(n, e.submit(ctx, rs))
		if !known {
			return "", "", false
		}
		if why != nil {
			return TransferAborted, abortFor(n, part, *why), true
		}
	}
	parts := make([]partCalls, len(n.Parts))
	calls := make([]call, len(n.Parts))
	for i, p := range n.Parts {
		parts[i] = e.callsOf(n, p, e.stepTTL(rec))
		calls[i] = *parts[i].prepare
	}
	known := true
	for i, o := range e.runUntilKnown(ctx, calls) {
		var err *Error
		if o.Err == nil {
			continue
		}
		o = e.waitingNote(ctx, calls[i], o) // a hot payer: what its lanes hold
		if !errors.As(o.Err, &err) || !decisive(err) {
			known = false
			continue
		}
		reject := *err
		switch {
		case reject.Code == instructions.CodeHolderNotFound:
			// Every op of an unknown holder's part fails: its first, as in
			// an instruction and in a one-payer transfer (the prepare's
			// first op may be a later one: credits wait).
			reject.OpIndex = 0
		case reject.OpIndex >= 0:
			reject.OpIndex = parts[i].origin[reject.OpIndex]
		}
		return TransferAborted, abortFor(n, i, reject), true
	}
	if !known {
		return "", "", false
	}
	return TransferCommitted, "", true
}

// decisive tells whether an error is a part's final answer. UNAVAILABLE is
// not, unless replayed: the script never answers it, so a recorded one is
// the fence an abort left (abortParts).
func decisive(err *Error) bool {
	return err.Code != instructions.CodeUnavailable && err.Code != instructions.CodeInternal || err.Replayed
}

// runUntilKnown runs calls in a batch, again for those whose outcome is
// unknown, a few times while ctx lasts.
func (e *Engine) runUntilKnown(ctx context.Context, calls []call) []Outcome {
	out := make([]Outcome, len(calls))
	e.runGrouped(ctx, calls, out)
	for attempt := 0; ; attempt++ {
		var again []call
		var where []int
		for i, o := range out {
			var err *Error
			if errors.As(o.Err, &err) && !decisive(err) {
				again, where = append(again, calls[i]), append(where, i)
			}
		}
		if len(again) == 0 || attempt == 4 || ctx.Err() != nil {
			return out
		}
		worker.Sleep(ctx, time.Duration(50<<attempt)*time.Millisecond)
		got := make([]Outcome, len(again))
		e.runGrouped(ctx, again, got)
		for j, i := range where {
			out[i] = got[j]
		}
	}
}

// commitParts settles and credits every part not finished yet, and marks
// finished in the record those whose commit applied, now or before (a
// replay). A commit answered HOLD_NOT_FOUND (or HOLDER_NOT_FOUND) found no
// hold "x:<id>" to consume: either it applied before and its id's record has
// expired since, or the part's prepare was lost in a failover. Nothing here
// can tell which, and marking it finished in the second case would leave a
// payee unpaid or, for a paying part, pay the others with money its holder
// never gave. So such a part stays unfinished, logged, and counted (the
// number of them is returned) for an operator to settle from the ledger.
func (e *Engine) commitParts(ctx context.Context, n instructions.NormalizedTransfer, rec transferRecord) (transferRecord, int) {
	var calls []call
	var parts, applied, lost, broken []int
	for i, p := range n.Parts {
		if !rec.partFinished(i) {
			calls, parts = append(calls, e.commitOf(n, p, rec)), append(parts, i)
		}
	}
	for j, o := range e.runUntilKnown(ctx, calls) {
		switch i := parts[j]; {
		case o.Err == nil:
			applied = append(applied, i)
		case errors.Is(o.Err, ErrHoldNotFound), errors.Is(o.Err, ErrHolderNotFound):
			lost = append(lost, i)
		case errors.Is(o.Err, ErrInternal):
			// Not an answer of the library's: Redis refused the call itself
			// (the holder's key of another type, say), and will again.
			broken = append(broken, i)
			e.log.Error("transfer: a part's commit failed with an error that sending it again will not cure; the part "+
				"is left unfinished and tried again until an operator repairs its holder", "transfer", n.ID, "part", i,
				"holder", n.Parts[i].Holder, "instruction", n.Hold()+commitSuffix, "err", o.Err)
		default:
			if rec.payer >= 0 && i != rec.payer && errors.Is(o.Err, ErrOverflow) {
				if err := e.forgetRefusal(ctx, calls[j]); err != nil {
					e.log.Warn("transfer: forget a credit's refusal", "transfer", n.ID, "part", i, "err", err)
				}
			}
			e.log.Warn("transfer: commit of a part failed; it will be retried", "transfer", n.ID, "part", i,
				"holder", n.Parts[i].Holder, "err", o.Err)
		}
	}
	rec = e.finishParts(ctx, n, rec, applied, len(lost)+len(broken) > 0)
	stuck := 0
	for _, i := range broken {
		if !rec.partFinished(i) {
			stuck++
		}
	}
	for _, i := range lost {
		if rec.partFinished(i) { // another driver applied it and said so
			continue
		}
		stuck++
		if rec.payer >= 0 { // a credit, which takes no hold: its holder is not there
			e.log.Error("transfer: a payee's credit found no holder; the part is left unfinished and tried again "+
				"until the holder is there (see docs/transfers.md, One payer)",
				"transfer", n.ID, "part", i, "holder", n.Parts[i].Holder, "instruction", n.Hold()+commitSuffix)
			continue
		}
		e.log.Error("transfer: a part's commit found no transfer hold: it applied before, or its prepare was lost "+
			"in a failover; the part is left unfinished for an operator (see docs/transfers.md, Exactly once)",
			"transfer", n.ID, "part", i, "holder", n.Parts[i].Holder, "instruction", n.Hold()+commitSuffix)
	}
	return rec, stuck
}

// abortParts gives back what every part not finished yet reserved, and marks
// finished those given back. A part first gets a fence: its prepare's
// idempotency record is written as a rejection if it is not there yet, so a
// prepare still on its way (a slow or dead driver's) is refused when it
// arrives. Then its abort, which consumes the hold "x:<id>" the prepare
// opened: HOLD_NOT_FOUND (or HOLDER_NOT_FOUND) there means that nothing is
// reserved (the prepare was refused, fenced, lost, or given back already)
// and, the fence being in place, that nothing will be: the part is finished.
func (e *Engine) abortParts(ctx context.Context, n instructions.NormalizedTransfer, rec transferRecord) transferRecord {
	var calls []call
	var parts, done []int
	for i, p := range n.Parts {
		if rec.partFinished(i) {
			continue
		}
		pc := e.callsOf(n, p, e.stepTTL(rec))
		if err := e.fence(ctx, n.ID, pc.prepare); err != nil {
			e.log.Warn("transfer: fence a part", "transfer", n.ID, "holder", p.Holder, "err", err)
			continue
		}
		calls, parts = append(calls, *pc.abort), append(parts, i)
	}
	for j, o := range e.runUntilKnown(ctx, calls) {
		switch i := parts[j]; {
		case o.Err == nil, errors.Is(o.Err, ErrHoldNotFound), errors.Is(o.Err, ErrHolderNotFound):
			done = append(done, i)
		default:
			e.log.Warn("transfer: abort of a part failed; it will be retried", "transfer", n.ID, "part", i,
				"holder", n.Parts[i].Holder, "err", o.Err)
		}
	}
	return e.finishParts(ctx, n, rec, done, false)
}

// fence writes the prepare's idempotency record as a rejection unless it
// exists, to live as long as the prepare's would.
func (e *Engine) fence(ctx context.Context, id string, prep *call) error {
	key := prep.keys[keyTx]
	rejection := fenceRecord(prep.args[argFP].(string), id, "aborted")
	got := e.submit(ctx, []req{{keys: []string{key}, args: []any{"set", key, rejection, "nx", "px", prep.args[argTTL]}}})
	if err := got[0].cmd.Err(); err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	return e.ackedOn(got[0])
}

// finishParts marks parts finished in the record and answers the record as
// it is then; with no parts, it reads it again if reread. On failure it
// answers rec: the parts stay unfinished, and their next commit or abort
// replays (within the idempotency TTL) and marks them.
func (e *Engine) finishParts(ctx context.Context, n instructions.NormalizedTransfer, rec transferRecord, parts []int, reread bool) transferRecord {
	var next transferRecord
	var err error
	switch {
	case len(parts) > 0:
		next, err = e.transferScript(ctx, n.ID, "finish", e.appendFinishArgs(nil, n, rec, parts)...)
	case reread:
		next, err = e.transferScript(ctx, n.ID, "read")
	default:
		return rec
	}
	if err != nil || next.outcome == "missing" {
		e.log.Warn("transfer: mark parts finished", "transfer", n.ID, "err", err, "outcome", next.outcome)
		return rec
	}
	return next
}

// appendFinishArgs appends to args the arguments of the transfer function's
// finish of parts.
func (e *Engine) appendFinishArgs(args []any, n instructions.NormalizedTransfer, rec transferRecord, parts []int) []any {
	// The record outlives its steps' records.
	args = append(args, e.stepTTL(rec), indexArg(len(n.Parts)))
	for _, i := range parts {
		args = append(args, indexArg(i))
	}
	return args
}

// transferPrint identifies a transfer's normalized body: the first 16 bytes,
// in hex, of the SHA-256 of each part's "<len>:<holder>|", then per step
// "<op>|<asset>|<units>|<len>:<hold>|\n", then a zero byte; a settle sent
// without an amount writes "~<rest kind>" after its units, for the units
// alone would take it for one that names them (and what it asks of the
// hold is not the same). Written into a buffer on the stack rather than
// through fmt: the record keeps it, so it must not change
// (TestTransferPrint_AsTheFirstImplementation).
//
// A lane of a hot holder is printed as its holder: the transfer is the
// same whatever lane an engine sent its credit to (no client's holder
// names a lane, so no print written before lanes existed changes).
func transferPrint(n instructions.NormalizedTransfer) string {
	var stack [1024]byte
	b := stack[:0]
	for _, p := range n.Parts {
		holder := printedHolder(p.Holder)
		b = strconv.AppendInt(b, int64(len(holder)), 10)
		b = append(append(append(b, ':'), holder...), '|')
		for _, s := range p.Steps {
			b = append(append(b, s.Op...), '|')
			b = append(append(b, s.Asset...), '|')
			b = strconv.AppendInt(b, s.Units, 10)
			if s.Rest != 0 {
				b = strconv.AppendInt(append(b, '~'), int64(s.Rest), 10)
			}
			b = append(b, '|')
			b = append(strconv.AppendInt(b, int64(len(s.Hold)), 10), ':')
			b = append(append(b, s.Hold...), "|\n"...)
		}
		b = append(b, 0)
	}
	sum := sha256.Sum256(b)
	var out [32]byte
	hex.Encode(out[:], sum[:16])
	return string(out[:])
}

// printedHolder is the name transferPrint writes for holder: its parent if
// it is a lane.
func printedHolder(holder string) string {
	if parent, lane := instructions.ParentOf(holder); lane > 0 && instructions.ValidID(parent) {
		return parent
	}
	return holder
}
