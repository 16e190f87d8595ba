// Package libcall is the layout of the engine's call of the library's apply
// (lua/atomledger.lua): which argument is which, and the idempotency ttl of
// a call that gives none (how much of the fingerprint an idempotency record
// keeps is package stored's, with the record's form). The engine builds its
// calls with it; internal/luagen writes its numbers into the library.
package libcall

import "time"

// The ARGV of apply: these, then PerOp per op (op, asset or leg, units,
// hold, coupon or other hold, ms).
const (
	Holder = iota
	ID
	FP
	TTL
	CP
	Memo
	Xfer
	// Route is the lane count the engine routed the instruction by, "" when
	// it did not route it by a count: apply refuses it LANES_CHANGED if the
	// holder's count is another. Not in the fingerprint: the same body
	// routed by two counts is one body.
	Route
	Fixed // how many come before the ops
	PerOp = 6
)

// DefaultTTL is how long an instruction id is remembered when the caller
// says nothing: the engine's default (engine.DefaultIdempotencyTTL) and the
// JSON door's.
const DefaultTTL = 24 * time.Hour
