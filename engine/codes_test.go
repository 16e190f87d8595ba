package engine_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// engine's names for the codes are the codes, in the order of
// instructions.Codes (a code added later may have none).
func TestErrors_NamesAreTheCodes(t *testing.T) {
	names := []error{
		engine.ErrInvalidInstruction, engine.ErrInvalidAmount, engine.ErrInvalidID, engine.ErrUnknownAsset,
		engine.ErrTooManyOps, engine.ErrUnauthenticated, engine.ErrForbidden, engine.ErrHolderNotFound, engine.ErrTransferNotFound,
		engine.ErrInstructionNotFound, engine.ErrIdempotencyConflict, engine.ErrPayloadTooLarge, engine.ErrRateLimited,
		engine.ErrHolderExists, engine.ErrHolderSuspended, engine.ErrInsufficientFunds, engine.ErrInsufficientPoints,
		engine.ErrHoldNotFound, engine.ErrHoldExists, engine.ErrHoldExpired, engine.ErrExceedsHold,
		engine.ErrCouponNotFound, engine.ErrCouponExists, engine.ErrCouponUnavailable, engine.ErrCouponExpired,
		engine.ErrOverflow, engine.ErrUnavailable, engine.ErrInternal,
	}
	for i, e := range names {
		assert.Equal(t, error(instructions.Codes[i]), e, "the name of %s", instructions.Codes[i])
	}
}
