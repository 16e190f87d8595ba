package reconcile

import (
	"context"
	"errors"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
)

// Found is what became of an instruction, as FindInstruction found it; its
// JSON is engined's answer to GET /v1/holders/{holder}/instructions/{id}.
type Found struct {
	Holder string `json:"holder"`
	ID     string `json:"id"`
	// Source is "redis" (the idempotency record: the answer the instruction
	// got) or "ledger" (Redis forgot the id; the ledger keeps what applied).
	Source string `json:"source"`
	Status string `json:"status"` // "applied" or "rejected"
	// Result is the recorded result of an applied instruction (from Redis).
	Result *instructions.Result `json:"result,omitempty"`
	// Error is the recorded rejection (from Redis).
	Error *instructions.Error `json:"error,omitempty"`
	// Instruction is the applied instruction as the ledger has it.
	Instruction *ledger.AppliedInstruction `json:"instruction,omitempty"`
}

// FindInstruction looks up instruction id of holder: the answer Redis
// recorded while it remembers the id (engine.Outcome), else the applied
// instruction the ledger keeps (ledger.Instruction). A rejection Redis
// remembers is found too (Status "rejected"). led gives the ledger, and is
// called only when Redis does not know the id; nil: there is no ledger to
// look in.
//
// Errors: those of engine.Outcome: INVALID_ID; INSTRUCTION_NOT_FOUND (with
// led nil, Redis's as it is; else neither Redis nor the ledger has the id);
// UNAVAILABLE; INTERNAL. Then led's error as it is, and the ledger's:
// INSTRUCTION_NOT_FOUND as said, or a plain error when PostgreSQL fails.
func FindInstruction(ctx context.Context, eng *engine.Engine, led func() (*ledger.Ledger, error), holder, id string) (Found, error) {
	f := Found{Holder: holder, ID: id, Source: "redis", Status: "applied"}
	o, err := eng.Outcome(ctx, holder, id)
	if err == nil {
		if o.Err != nil {
			f.Status = "rejected"
			if !errors.As(o.Err, &f.Error) { // not of Outcome's contract: a bug
				f.Error = &instructions.Error{ID: id, Code: instructions.CodeInternal, OpIndex: instructions.NoOp, Message: o.Err.Error(), Err: o.Err}
			}
		} else {
			f.Result = &o.Result
		}
		return f, nil
	}
	var notInRedis *instructions.Error
	if !errors.As(err, &notInRedis) || notInRedis.Code != instructions.CodeInstructionNotFound || led == nil {
		return Found{}, err
	}
	l, err := led()
	if err != nil {
		return Found{}, err
	}
	a, err := l.Instruction(ctx, holder, id)
	if errors.Is(err, instructions.ErrInstructionNotFound) {
		e := *notInRedis
		e.Message += ", and the ledger has no applied instruction under it (rejected, never sent, or not relayed yet)"
		return Found{}, &e
	}
	if err != nil {
		return Found{}, err
	}
	f.Source, f.Instruction = "ledger", &a
	return f, nil
}
