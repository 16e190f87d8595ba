package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"

	"github.com/atomledger/atomledger/instructions"
)

// Outcome is the answer to one instruction of a batch: a Result or an Err.
type Outcome struct {
	Result instructions.Result
	Err    error
}

// Apply applies one instruction, all or nothing, and returns the state of
// every account it touched. Calls made at the same time share round trips
// to Redis (group.go).
//
// Errors (an *Error; match with errors.Is):
//   - before Redis: INVALID_INSTRUCTION, INVALID_AMOUNT, INVALID_ID, UNKNOWN_ASSET, TOO_MANY_OPS;
//   - from the script: HOLDER_NOT_FOUND, HOLDER_EXISTS, HOLDER_SUSPENDED, INSUFFICIENT_FUNDS,
//     INSUFFICIENT_POINTS, HOLD_NOT_FOUND, HOLD_EXISTS, HOLD_EXPIRED, EXCEEDS_HOLD,
//     COUPON_NOT_FOUND, COUPON_EXISTS, COUPON_UNAVAILABLE, COUPON_EXPIRED, OVERFLOW,
//     IDEMPOTENCY_CONFLICT;
//   - UNAVAILABLE when the outcome is unknown (retry with the same id), or, with
//     Options.MinReplicaAcks, when it is not known to be on enough replicas;
//     INTERNAL for a bug.
func (e *Engine) Apply(ctx context.Context, in instructions.Instruction) (instructions.Result, error) {
	c, err := e.prepare(in)
	if err != nil {
		return instructions.Result{}, err
	}
	o := e.applyRouted(ctx, c)
	return o.Result, o.Err
}

// applyRouted applies c where it belongs (hot.go): a credit-only
// instruction on its lane, an instruction that opens or raises lanes after
// them, anything else on lane 0.
func (e *Engine) applyRouted(ctx context.Context, c call) Outcome {
	if count := setsLanes(c.n); count > 0 {
		return e.applyLanes(ctx, c, count)
	}
	if creditOnly(c.n) {
		return e.applyCredit(ctx, c)
	}
	return e.waitingNote(ctx, c, e.applyGrouped(ctx, c))
}

// ApplyBatch applies many instructions in pipelines, one round trip per
// master. Each instruction is atomic on its own; the batch is not: the
// outcomes, in the order of ins, may mix results and errors (the codes of
// Apply). A master that does not answer before ctx ends fails its own
// entries only (UNAVAILABLE); the others answer what they did. Entries
// answered "Function not found" did not run: the library is
// loaded on their masters and only those entries are sent again. With
// Options.MinReplicaAcks, each master's pipeline ends with a WAIT (see there).
func (e *Engine) ApplyBatch(ctx context.Context, ins []instructions.Instruction) []Outcome {
	out := make([]Outcome, len(ins))
	calls := make([]call, len(ins))
	pending := make([]int, 0, len(ins))
	for i, in := range ins {
		c, err := e.prepare(in)
		if err != nil {
			out[i].Err = err
			continue
		}
		calls[i] = c
		pending = append(pending, i)
	}
	// Credit-only instructions go to their lanes (hot.go), checked. The
	// batch keeps its order: an instruction that opens or raises lanes is
	// applied alone, between the pipelines before and after it. A credit
	// refused for a count this engine did not know is applied again after
	// its pipeline: credits to a hot holder land in lanes, where nothing
	// else of the batch could have needed them.
	routed := slices.Clone(calls)
	var batch []int
	flush := func() {
		e.runRouted(ctx, calls, routed, batch, out)
		batch = batch[:0]
	}
	for _, i := range pending {
		switch {
		case setsLanes(calls[i].n) > 0:
			flush()
			out[i] = e.applyRouted(ctx, calls[i])
			continue
		case creditOnly(calls[i].n):
			rc, err := e.routeCredit(ctx, calls[i])
			if err != nil {
				out[i].Err = err
				continue
			}
			routed[i] = rc
		}
		batch = append(batch, i)
	}
	flush()
	return out
}

// runRouted runs routed[i] for every i of pending, calls[i] being the
// instruction as it was before routing, and answers each for its holder.
func (e *Engine) runRouted(ctx context.Context, calls, routed []call, pending []int, out []Outcome) {
	if len(pending) == 0 {
		return
	}
	e.run(ctx, routed, pending, out)
	for _, i := range pending {
		switch {
		case lanesChanged(out[i].Err):
			out[i] = e.applyRouted(ctx, calls[i])
		case creditOnly(calls[i].n):
			out[i] = onHolder(out[i], routed[i], calls[i].n.Holder)
		default:
			out[i] = e.waitingNote(ctx, calls[i], out[i])
		}
	}
}

// run sends calls[i] for every i of pending and sets out[i].
func (e *Engine) run(ctx context.Context, calls []call, pending []int, out []Outcome) {
	reqs := make([]req, len(pending))
	for j, i := range pending {
		reqs[j] = calls[i].req()
	}
	got := e.submit(ctx, reqs)
	for j, i := range pending {
		out[i] = e.finish(calls[i], got[j].cmd)
	}
	if e.minAcks > 0 {
		e.confirmAcks(ctx, calls, pending, got, out)
	}
}

// runAlong runs every call, setting out, and sends the requests extra in the
// same round trip; it answers what each of extra got.
func (e *Engine) runAlong(ctx context.Context, calls []call, out []Outcome, extra ...req) []sent {
	reqs := make([]req, 0, len(calls)+len(extra))
	pending := make([]int, len(calls))
	for i, c := range calls {
		reqs, pending[i] = append(reqs, c.req()), i
	}
	got := e.submit(ctx, append(reqs, extra...))
	for i, c := range calls {
		out[i] = e.finish(c, got[i].cmd)
	}
	if e.minAcks > 0 {
		e.confirmAcks(ctx, calls, pending, got, out)
	}
	return got[len(calls):]
}

// prepare validates an instruction and builds the script's keys and arguments.
func (e *Engine) prepare(in instructions.Instruction) (call, error) {
	n, err := in.Normalize(e.assets)
	if err != nil {
		return call{}, err
	}
	return e.build(n), nil
}

// fingerprint identifies the normalized body of an instruction: the same body
// (even spelled "80.0" once and "80.00" the next time) gives the same print.
// Idempotency records and the ledger keep it, so its value never changes: the
// first 16 bytes of the SHA-256 of "<length>:<bytes>" of each argument but
// the print, the TTL and the route, in hex. The text is hashed in one piece, on the
// stack when it fits, rather than written piece by piece to a hash.Hash,
// which cost an allocation per piece.
func fingerprint(args []any) string {
	var stack [512]byte
	b := stack[:0]
	for i, a := range args {
		if i == argFP || i == argTTL || i == argRoute { // the fingerprint itself, the TTL (configuration), the route
			continue
		}
		s := a.(string)
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
	}
	sum := sha256.Sum256(b)
	var out [32]byte
	hex.Encode(out[:], sum[:16])
	return string(out[:])
}
