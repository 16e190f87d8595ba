package instructions

import (
	"fmt"
	"strconv"
)

// Code is a stable, machine-readable outcome. Codes are never renamed or reused.
// A Code is an error: an *Error unwraps to its code, so errors.Is(err,
// CodeInsufficientFunds) tells a failure of that code.
type Code string

// Error gives the code itself.
func (c Code) Error() string { return string(c) }

// Codes of the contract. The HTTP status of each lives in the daemon.
const (
	CodeInvalidInstruction  Code = "INVALID_INSTRUCTION"
	CodeInvalidAmount       Code = "INVALID_AMOUNT"
	CodeInvalidID           Code = "INVALID_ID"
	CodeUnknownAsset        Code = "UNKNOWN_ASSET"
	CodeTooManyOps          Code = "TOO_MANY_OPS"
	CodeUnauthenticated     Code = "UNAUTHENTICATED"
	CodeForbidden           Code = "FORBIDDEN" // the project's addition: a token without the route's scope
	CodeHolderNotFound      Code = "HOLDER_NOT_FOUND"
	CodeTransferNotFound    Code = "TRANSFER_NOT_FOUND"
	CodeInstructionNotFound Code = "INSTRUCTION_NOT_FOUND"
	CodeIdempotencyConflict Code = "IDEMPOTENCY_CONFLICT"
	CodePayloadTooLarge     Code = "PAYLOAD_TOO_LARGE"
	CodeNotFound            Code = "NOT_FOUND"          // the project's addition: no route has the path
	CodeMethodNotAllowed    Code = "METHOD_NOT_ALLOWED" // the project's addition: the path's routes take other methods
	CodeRateLimited         Code = "RATE_LIMITED"       // the project's addition: a token over its requests or rejections a second
	CodeHolderExists        Code = "HOLDER_EXISTS"
	CodeHolderSuspended     Code = "HOLDER_SUSPENDED"
	CodeInsufficientFunds   Code = "INSUFFICIENT_FUNDS"
	CodeInsufficientPoints  Code = "INSUFFICIENT_POINTS"
	CodeHoldNotFound        Code = "HOLD_NOT_FOUND"
	CodeHoldExists          Code = "HOLD_EXISTS"
	CodeHoldExpired         Code = "HOLD_EXPIRED"
	CodeExceedsHold         Code = "EXCEEDS_HOLD"
	CodeCouponNotFound      Code = "COUPON_NOT_FOUND"
	CodeCouponExists        Code = "COUPON_EXISTS"
	CodeCouponUnavailable   Code = "COUPON_UNAVAILABLE"
	CodeCouponExpired       Code = "COUPON_EXPIRED"
	CodeOverflow            Code = "OVERFLOW"
	CodeUnavailable         Code = "UNAVAILABLE"
	CodeInternal            Code = "INTERNAL"
)

// CodeLanesChanged is the engine's own, never a client's (not in Codes):
// the library's apply refuses with it an instruction the engine routed by a
// lane count the holder no longer has, changing nothing and recording nothing;
// the message is the holder's count. The engine routes again; were it ever
// to reach a client, it would be INTERNAL.
const CodeLanesChanged Code = "LANES_CHANGED"

// Codes lists every code of the contract, in the order of its error table.
var Codes = []Code{
	CodeInvalidInstruction, CodeInvalidAmount, CodeInvalidID, CodeUnknownAsset, CodeTooManyOps,
	CodeUnauthenticated, CodeForbidden, CodeHolderNotFound, CodeTransferNotFound, CodeInstructionNotFound, CodeIdempotencyConflict, CodePayloadTooLarge,
	CodeRateLimited, CodeHolderExists, CodeHolderSuspended, CodeInsufficientFunds, CodeInsufficientPoints,
	CodeHoldNotFound, CodeHoldExists, CodeHoldExpired, CodeExceedsHold, CodeCouponNotFound,
	CodeCouponExists, CodeCouponUnavailable, CodeCouponExpired, CodeOverflow,
	CodeUnavailable, CodeInternal,
	CodeNotFound, CodeMethodNotAllowed, // added later: last, so that the order above stays
}

// The codes as errors under the names errors.Is has used from the start:
// ErrInsufficientFunds is CodeInsufficientFunds. A code added later needs no
// such name: errors.Is(err, CodeX) works for every code.
var (
	ErrInvalidInstruction  error = CodeInvalidInstruction
	ErrInvalidAmount       error = CodeInvalidAmount
	ErrInvalidID           error = CodeInvalidID
	ErrUnknownAsset        error = CodeUnknownAsset
	ErrTooManyOps          error = CodeTooManyOps
	ErrUnauthenticated     error = CodeUnauthenticated
	ErrForbidden           error = CodeForbidden
	ErrHolderNotFound      error = CodeHolderNotFound
	ErrTransferNotFound    error = CodeTransferNotFound
	ErrInstructionNotFound error = CodeInstructionNotFound
	ErrIdempotencyConflict error = CodeIdempotencyConflict
	ErrPayloadTooLarge     error = CodePayloadTooLarge
	ErrRateLimited         error = CodeRateLimited
	ErrHolderExists        error = CodeHolderExists
	ErrHolderSuspended     error = CodeHolderSuspended
	ErrInsufficientFunds   error = CodeInsufficientFunds
	ErrInsufficientPoints  error = CodeInsufficientPoints
	ErrHoldNotFound        error = CodeHoldNotFound
	ErrHoldExists          error = CodeHoldExists
	ErrHoldExpired         error = CodeHoldExpired
	ErrExceedsHold         error = CodeExceedsHold
	ErrCouponNotFound      error = CodeCouponNotFound
	ErrCouponExists        error = CodeCouponExists
	ErrCouponUnavailable   error = CodeCouponUnavailable
	ErrCouponExpired       error = CodeCouponExpired
	ErrOverflow            error = CodeOverflow
	ErrUnavailable         error = CodeUnavailable
	ErrInternal            error = CodeInternal
)

// NoOp is the OpIndex of an error that concerns the instruction as a whole.
const NoOp = -1

// Error is the one error type of atomledger, shaped like fs.PathError: the
// instruction, the op, the code and a message for people.
type Error struct {
	ID      string // instruction id; "" when unknown
	Code    Code
	OpIndex int // index of the failing op, or NoOp
	Message string
	// Replayed is true when this rejection comes from the idempotency record
	// of an earlier identical instruction.
	Replayed bool
	Err      error // underlying cause, for UNAVAILABLE and INTERNAL; may be nil
}

// Errorf builds an *Error.
func Errorf(code Code, opIndex int, format string, args ...any) *Error {
	return &Error{Code: code, OpIndex: opIndex, Message: fmt.Sprintf(format, args...)}
}

// Error reads: apply "order-55-pay" op 0: INSUFFICIENT_FUNDS: debit 80.00 CNY: available 12.00
func (e *Error) Error() string {
	// "apply" names an instruction's or transfer's failure; a read's
	// (no id) is its code alone.
	s := ""
	if e.ID != "" {
		s = "apply " + strconv.Quote(e.ID)
	}
	if e.OpIndex >= 0 {
		s += " op " + strconv.Itoa(e.OpIndex)
	}
	if s != "" {
		s += ": "
	}
	s += string(e.Code)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Unwrap gives the code and the cause, if any.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Code, e.Err}
	}
	return []error{e.Code}
}

// errorJSON is the wire form: {"code": ..., "op_index": ..., "message": ...}.
type errorJSON struct {
	Code     Code   `json:"code"`
	OpIndex  *int   `json:"op_index,omitempty"`
	Message  string `json:"message"`
	Replayed bool   `json:"replayed,omitempty"`
}

// MarshalJSON writes the error object of the contract (without the outer
// {"error": ...} envelope); op_index is left out when no single op failed,
// replayed when the rejection is fresh.
func (e *Error) MarshalJSON() ([]byte, error) {
	w := errorJSON{Code: e.Code, Message: e.Message, Replayed: e.Replayed}
	if e.OpIndex >= 0 {
		w.OpIndex = &e.OpIndex
	}
	return marshal(w)
}

// UnmarshalJSON reads the error object written by MarshalJSON.
func (e *Error) UnmarshalJSON(b []byte) error {
	var w errorJSON
	if err := unmarshal(b, &w); err != nil {
		return err
	}
	*e = Error{Code: w.Code, OpIndex: NoOp, Message: w.Message, Replayed: w.Replayed}
	if w.OpIndex != nil {
		e.OpIndex = *w.OpIndex
	}
	return nil
}
