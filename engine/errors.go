package engine

import (
	"errors"
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
	return &Error{ID: id, Code: code, OpIndex: instructions.NoOp, Message: err.Error(), Err: err}
}

func isTransient(msg string) bool {
	for _, p := range transientPrefixes {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}
