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

	json "github.com/goccy/go-json"
	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/instructions"
)

// Cross-holder transfers (docs/transfers.md). A transfer is all or nothing
// over several holders in three steps, each one idempotent:
//
//  1. prepare: each part runs as an instruction ("x:<id>:p") that checks what
//     the part takes out and reserves it under the hold "x:<id>": a debit
//     freezes, a settle takes its amount from its hold into that one (which
//     stays open, even when emptied, until the commit). Credits wait.
//  2. decide: one run of transfer.lua turns the record {x:<id>} from
//     preparing to committed (every part prepared) or aborted (a part was
//     rejected). This is the commit point.
//  3. finish: committed, each part settles its reservation and takes its
//     credits ("x:<id>:c"); aborted, each part gets back what was reserved
//     ("x:<id>:a"), after a fence that makes a prepare still on its way
//     fail. Then the record leaves its slot's index.
//
// Whoever drives a transfer (the caller of Transfer, the same call retried,
// the recovery worker) goes forward from the state in the record; the
// instruction ids make a step done twice count once.

// Transfer statuses.
const (
	TransferPending   = "pending" // not decided yet (the record says preparing)
	TransferCommitted = "committed"
	TransferAborted   = "aborted"
)

// DefaultTransferTimeout is how long a transfer may stay undecided, or
// decided with parts unfinished, before the recovery worker takes it over.
const DefaultTransferTimeout = 30 * time.Second

// TransferState is the answer of Transfer and GetTransfer.
type TransferState struct {
	ID     string `json:"id"`
	Status string `json:"status"` // pending, committed or aborted
	// Complete is true once every part is finished: settled and credited
	// (committed) or given back (aborted). Until then readers may see one
	// part finished and another not.
	Complete bool `json:"complete"`
	Replayed bool `json:"replayed"`
	// Holders are the parts' holders, in the transfer's order.
	Holders []string `json:"holders"`
	// For an aborted transfer: the part whose rejection aborted it (absent
	// when it was aborted for want of a decision in time), and the error.
	PartIndex *int                `json:"part_index,omitempty"`
	Error     *instructions.Error `json:"error,omitempty"`
	CreatedMs int64               `json:"created_ms"`
}

// transferRecord is the reply of transfer.lua.
type transferRecord struct {
	outcome, status, err string
	done                 bool
	createdMs, deadline  int64
	holders              string // comma-separated
}

// holdersOf gives the parts' holders as the record keeps them.
func holdersOf(n instructions.NormalizedTransfer) string {
	hs := make([]string, len(n.Parts))
	for i, p := range n.Parts {
		hs[i] = p.Holder
	}
	return strings.Join(hs, ",")
}

// abortReason is the err field of an aborted record.
type abortReason struct {
	PartIndex *int                `json:"part_index,omitempty"`
	Error     *instructions.Error `json:"error"`
}

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
	n, err := t.Normalize(e.assets)
	if err != nil {
		return TransferState{}, err
	}
	body, err := instructions.EncodeTransfer(t)
	if err != nil {
		return TransferState{}, e.internal(t.ID, "encode transfer: %v", err)
	}
	rec, err := e.transferScript(ctx, n.ID, "begin", transferPrint(n), body, e.xferTimeout.Milliseconds(), holdersOf(n))
	if err != nil {
		return TransferState{}, err
	}
	if rec.outcome == "conflict" {
		return TransferState{}, &Error{ID: n.ID, Code: instructions.CodeIdempotencyConflict, OpIndex: instructions.NoOp,
			Message: fmt.Sprintf("transfer id %q was used with another body", n.ID)}
	}
	st := e.drive(ctx, n, rec)
	st.Replayed = rec.outcome == "found"
	return st, nil
}

// GetTransfer reads a transfer's state. Errors: TRANSFER_NOT_FOUND (never
// seen, or finished longer ago than the idempotency TTL), UNAVAILABLE.
func (e *Engine) GetTransfer(ctx context.Context, id string) (TransferState, error) {
	if !instructions.ValidID(id) || len(id) > instructions.MaxTransferID {
		return TransferState{}, &Error{ID: id, Code: instructions.CodeInvalidID, OpIndex: instructions.NoOp,
			Message: fmt.Sprintf("transfer id must match [A-Za-z0-9_.:-]{1,%d}", instructions.MaxTransferID)}
	}
	rec, err := e.transferScript(ctx, id, "read")
	if err != nil {
		return TransferState{}, err
	}
	if rec.outcome == "missing" {
		return TransferState{}, &Error{ID: id, Code: instructions.CodeTransferNotFound, OpIndex: instructions.NoOp,
			Message: fmt.Sprintf("transfer %s not found", id)}
	}
	return stateOf(id, rec), nil
}

// drive takes a transfer forward from rec as far as it can go now.
func (e *Engine) drive(ctx context.Context, n instructions.NormalizedTransfer, rec transferRecord) TransferState {
	if rec.status == "preparing" {
		status, reason, ok := e.prepareParts(ctx, n)
		if !ok {
			return stateOf(n.ID, rec)
		}
		decided, err := e.transferScript(ctx, n.ID, "decide", status, reason, e.xferTimeout.Milliseconds())
		if err != nil {
			return stateOf(n.ID, rec)
		}
		rec = decided
	}
	if !rec.done && rec.status != "preparing" {
		finished := false
		if rec.status == TransferCommitted {
			finished = e.commitParts(ctx, n)
		} else {
			finished = e.abortParts(ctx, n)
		}
		if finished {
			if done, err := e.transferScript(ctx, n.ID, "done", e.idemTTL); err == nil {
				rec = done
			}
		}
	}
	return stateOf(n.ID, rec)
}

func stateOf(id string, rec transferRecord) TransferState {
	st := TransferState{ID: id, Status: rec.status, Complete: rec.done, CreatedMs: rec.createdMs,
		Holders: strings.Split(rec.holders, ",")}
	if rec.status == "preparing" {
		st.Status = TransferPending
	}
	if rec.err != "" {
		var r abortReason
		if json.Unmarshal([]byte(rec.err), &r) == nil {
			st.PartIndex, st.Error = r.PartIndex, r.Error
			if st.Error != nil {
				st.Error.ID = id
			}
		}
	}
	return st
}

// partCalls are the three instructions of a part.
type partCalls struct {
	prepare, commit, abort *call // abort is nil when prepare reserves nothing
	origin                 []int // per prepare step, the index of the part's op it comes from
}

// partIDs are the suffixes of the instruction ids of a part's steps.
const (
	prepareSuffix = ":p"
	commitSuffix  = ":c"
	abortSuffix   = ":a"
)

// callsOf builds the instructions of part p of transfer n.
func (e *Engine) callsOf(n instructions.NormalizedTransfer, p instructions.Normalized) partCalls {
	hold := n.Hold()
	var prep, commit, abort, prepSay, closes []instructions.Step
	var origin []int
	closing := map[string]bool{}
	for i, s := range p.Steps {
		switch s.Op {
		case instructions.OpDebit:
			prep = append(prep, instructions.Step{Op: instructions.OpFreeze, Asset: s.Asset, Units: s.Units, Hold: hold})
			abort = append(abort, instructions.Step{Op: instructions.OpRelease, Asset: s.Asset, Units: s.Units, Hold: hold})
		case instructions.OpSpendPoints:
			prep = append(prep, instructions.Step{Op: instructions.OpFreezePoints, Units: s.Units, Hold: hold})
			abort = append(abort, instructions.Step{Op: instructions.OpRelease, Asset: instructions.PointsLeg, Units: s.Units, Hold: hold})
		case instructions.OpSettle:
			prep = append(prep, instructions.Step{Op: opTake, Asset: s.Asset, Units: s.Units, Hold: s.Hold, Coupon: hold})
			abort = append(abort, instructions.Step{Op: opGive, Asset: s.Asset, Units: s.Units, Hold: hold, Coupon: s.Hold})
			if !closing[s.Hold] {
				closing[s.Hold] = true
				closes = append(closes, instructions.Step{Op: opClose, Hold: s.Hold})
			}
		default: // credit, earn_points: at commit
			commit = append(commit, s)
			continue
		}
		prepSay, origin = append(prepSay, s), append(origin, i)
	}
	if len(prep) > 0 {
		commit = append(append([]instructions.Step{{Op: instructions.OpSettle, Hold: hold}}, closes...), commit...)
	} else {
		prep, prepSay, origin = []instructions.Step{{Op: opCheck}}, p.Steps[:1], []int{0}
	}
	mk := func(suffix, what string, steps []instructions.Step) *call {
		c := e.build(instructions.Normalized{ID: hold + suffix, Holder: p.Holder, Counterparty: hold,
			Memo: "transfer " + n.ID + ": " + what, Transfer: n.ID, Steps: steps})
		return &c
	}
	pc := partCalls{prepare: mk(prepareSuffix, "prepare", prep), commit: mk(commitSuffix, "commit", commit), origin: origin}
	pc.prepare.n.Steps = prepSay // a rejection speaks of the client's ops
	if len(abort) > 0 {
		pc.abort = mk(abortSuffix, "abort", abort)
	}
	return pc
}

// The ops the apply function takes for transfers only (clients cannot send them).
const (
	opCheck = instructions.OpCheck
	opTake  = instructions.OpTake
	opGive  = instructions.OpGive
	opClose = instructions.OpClose
)

// prepareParts prepares every part and tells what to decide: committed, or
// aborted with the reason; ok is false when some part's outcome stays
// unknown (ctx ended, Redis unreachable).
func (e *Engine) prepareParts(ctx context.Context, n instructions.NormalizedTransfer) (status, reason string, ok bool) {
	parts := make([]partCalls, len(n.Parts))
	calls := make([]call, len(n.Parts))
	for i, p := range n.Parts {
		parts[i] = e.callsOf(n, p)
		calls[i] = *parts[i].prepare
	}
	known := true
	for i, o := range e.runUntilKnown(ctx, calls) {
		var err *Error
		if o.Err == nil {
			continue
		}
		if !errors.As(o.Err, &err) || !decisive(err) {
			known = false
			continue
		}
		reject := *err
		reject.ID, reject.Replayed = "", false
		if reject.OpIndex >= 0 {
			reject.OpIndex = parts[i].origin[reject.OpIndex]
		}
		reject.Message = fmt.Sprintf("part %d (%s): %s", i, n.Parts[i].Holder, reject.Message)
		b, _ := json.Marshal(abortReason{PartIndex: &i, Error: &reject})
		return TransferAborted, string(b), true
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
	pending := make([]int, len(calls))
	for i := range calls {
		pending[i] = i
	}
	for attempt := 0; ; attempt++ {
		e.run(ctx, calls, pending, out)
		var again []int
		for _, i := range pending {
			var err *Error
			if errors.As(out[i].Err, &err) && !decisive(err) {
				again = append(again, i)
			}
		}
		if len(again) == 0 || attempt == 4 || ctx.Err() != nil {
			return out
		}
		sleep(ctx, time.Duration(50<<attempt)*time.Millisecond)
		pending = again
	}
}

// commitParts settles and credits every part; true when all are done.
func (e *Engine) commitParts(ctx context.Context, n instructions.NormalizedTransfer) bool {
	calls := make([]call, len(n.Parts))
	for i, p := range n.Parts {
		calls[i] = *e.callsOf(n, p).commit
	}
	return e.allApplied(ctx, n.ID, "commit", calls)
}

// abortParts gives back what every part reserved; true when all are done.
// A part first gets a fence: its prepare's idempotency record is written as
// a rejection if it is not there yet, so a prepare still on its way (a slow
// or dead driver's) is refused when it arrives. A part whose prepare was
// refused, or is fenced now, has nothing to give back.
func (e *Engine) abortParts(ctx context.Context, n instructions.NormalizedTransfer) bool {
	var calls []call
	for _, p := range n.Parts {
		pc := e.callsOf(n, p)
		applied, err := e.fence(ctx, n.ID, pc.prepare)
		if err != nil {
			e.log.Warn("transfer: fence a part", "transfer", n.ID, "holder", p.Holder, "err", err)
			return false
		}
		if applied && pc.abort != nil {
			calls = append(calls, *pc.abort)
		}
	}
	return e.allApplied(ctx, n.ID, "abort", calls)
}

// fence writes the prepare's idempotency record as a rejection unless it
// exists, and tells whether the prepare applied.
func (e *Engine) fence(ctx context.Context, id string, prep *call) (applied bool, err error) {
	key := prep.keys[keyTx]
	rejection := record(prep.args[argFP].(string), "err\n"+string(instructions.CodeUnavailable)+"\n-1\ntransfer "+id+" was aborted")
	got := e.submit(ctx, []req{{keys: []string{key}, args: []any{"set", key, rejection, "nx", "get", "px", e.idemTTL}}})
	old, err := got[0].cmd.Text()
	if errors.Is(err, redis.Nil) {
		err = nil
	}
	if err == nil {
		err = e.acked(got[0])
	}
	if err != nil {
		return false, err
	}
	if old == "" {
		return false, nil // fenced now: the prepare never ran
	}
	return recordApplied(old), nil
}

// allApplied runs calls and tells whether every one applied (now or before).
func (e *Engine) allApplied(ctx context.Context, id, what string, calls []call) bool {
	ok := true
	for i, o := range e.runUntilKnown(ctx, calls) {
		if o.Err != nil {
			ok = false
			e.log.Warn("transfer: "+what+" of a part failed; it will be retried", "transfer", id,
				"holder", calls[i].n.Holder, "err", o.Err)
		}
	}
	return ok
}

// transferPrint identifies a transfer's normalized body.
func transferPrint(n instructions.NormalizedTransfer) string {
	h := sha256.New()
	for _, p := range n.Parts {
		fmt.Fprintf(h, "%d:%s|", len(p.Holder), p.Holder)
		for _, s := range p.Steps {
			fmt.Fprintf(h, "%s|%s|%d|%d:%s|\n", s.Op, s.Asset, s.Units, len(s.Hold), s.Hold)
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// transferScript runs one action of the library's transfer function on a
// transfer's record.
func (e *Engine) transferScript(ctx context.Context, id, action string, args ...any) (transferRecord, error) {
	got := e.submit(ctx, []req{transferReq(id, action, args...)})
	err := got[0].cmd.Err()
	if err == nil {
		err = e.acked(got[0])
	}
	if err != nil {
		return transferRecord{}, redisFailure(id, err)
	}
	v, _ := got[0].cmd.StringSlice()
	if len(v) != 7 {
		return transferRecord{}, e.internal(id, "unexpected transfer function reply %v", got[0].cmd.Val())
	}
	rec := transferRecord{outcome: v[0], status: v[1], err: v[2], done: v[3] == "1", holders: v[6]}
	rec.createdMs, _ = strconv.ParseInt(v[4], 10, 64)
	rec.deadline, _ = strconv.ParseInt(v[5], 10, 64)
	return rec, nil
}
