package engine

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/instructions"
)

// Error is the error type of every failure: code, op index and message.
type Error = instructions.Error

// The contract's codes as errors, for errors.Is, under the names they have
// always had here: ErrInsufficientFunds is instructions.CodeInsufficientFunds,
// an error itself. A code added later needs no name here: errors.Is(err,
// instructions.CodeX) works for every code.
var (
	ErrInvalidInstruction  = instructions.ErrInvalidInstruction
	ErrInvalidAmount       = instructions.ErrInvalidAmount
	ErrInvalidID           = instructions.ErrInvalidID
	ErrUnknownAsset        = instructions.ErrUnknownAsset
	ErrTooManyOps          = instructions.ErrTooManyOps
	ErrUnauthenticated     = instructions.ErrUnauthenticated
	ErrForbidden           = instructions.ErrForbidden
	ErrHolderNotFound      = instructions.ErrHolderNotFound
	ErrTransferNotFound    = instructions.ErrTransferNotFound
	ErrInstructionNotFound = instructions.ErrInstructionNotFound
	ErrIdempotencyConflict = instructions.ErrIdempotencyConflict
	ErrPayloadTooLarge     = instructions.ErrPayloadTooLarge
	ErrRateLimited         = instructions.ErrRateLimited
	ErrHolderExists        = instructions.ErrHolderExists
	ErrHolderSuspended     = instructions.ErrHolderSuspended
	ErrInsufficientFunds   = instructions.ErrInsufficientFunds
	ErrInsufficientPoints  = instructions.ErrInsufficientPoints
	ErrHoldNotFound        = instructions.ErrHoldNotFound
	ErrHoldExists          = instructions.ErrHoldExists
	ErrHoldExpired         = instructions.ErrHoldExpired
	ErrExceedsHold         = instructions.ErrExceedsHold
	ErrCouponNotFound      = instructions.ErrCouponNotFound
	ErrCouponExists        = instructions.ErrCouponExists
	ErrCouponUnavailable   = instructions.ErrCouponUnavailable
	ErrCouponExpired       = instructions.ErrCouponExpired
	ErrOverflow            = instructions.ErrOverflow
	ErrUnavailable         = instructions.ErrUnavailable
	ErrInternal            = instructions.ErrInternal
)

// Server errors after which the instruction did not run, or may have run:
// either way a retry with the same id is the answer.
var transientPrefixes = []string{"OOM", "READONLY", "NOREPLICAS", "CLUSTERDOWN", "TRYAGAIN",
	"LOADING", "MASTERDOWN", "BUSY", "MOVED", "ASK", "ERR max number of clients"}

// redisFailure turns an error of the Redis client into UNAVAILABLE (retry
// with the same id) or, for a server reply that no retry will change, INTERNAL.
func redisFailure(id string, err error) *Error {
	code := instructions.CodeUnavailable
	var rerr redis.Error
	if errors.As(err, &rerr) && !isTransient(rerr.Error()) {
		code = instructions.CodeInternal
	}
	return &Error{ID: id, Code: code, OpIndex: instructions.NoOp, Message: failureText(err), Err: err}
}

// failureText is what a client reads of err: a server's reply as it came
// (LOADING, CLUSTERDOWN, ...), the engine's own words as they are, and for
// a deadline, a cancellation or a connection that failed, what it means to
// the caller (with the connection's cause: refused, reset), without the
// sockets and addresses that Go's error names (Err keeps them, for the log).
func failureText(err error) string {
	const retry = ": the outcome is unknown; send it again with the same id"
	var rerr redis.Error
	var nerr net.Error
	switch {
	case errors.As(err, &rerr):
		return err.Error()
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &nerr) && nerr.Timeout():
		return "Redis did not answer in time" + retry
	case errors.Is(err, context.Canceled):
		return "the call was cancelled before Redis answered" + retry
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection to Redis was closed" + retry
	case errors.As(err, &nerr):
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			return "the connection to Redis failed (" + op.Err.Error() + ")" + retry // the cause, not the addresses
		}
		return "the connection to Redis failed" + retry
	}
	return err.Error()
}

func isTransient(msg string) bool {
	for _, p := range transientPrefixes {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}
