package engine_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/atomledger/atomledger/internal/surfacetest"
)

// surface is every exported identifier of package engine (outside its
// tests): its constants, variables, functions, types and their methods.
// Adding one to the library means adding it here, a deliberate act.
//
// Some exist for the benchmark and the tests rather than for a user of the
// library, and stay exported because a package outside engine calls them:
//   - Engine.Encode: internal/bench runs the bare library function with the
//     arguments it encodes, and ledger/ledgertest encodes an instruction the
//     same way.
//   - SweepID: the daemon's tests build the sweeper's id to see it refused;
//     a user can find the sweeper's release of a hold by it.
//
// Deduct, which only the engine's tests called, is theirs alone
// (export_test.go).
var surface = []string{
	// The engine and what it answers.
	"Engine", "Engine.Apply", "Engine.ApplyBatch", "Engine.Assets", "Engine.CheckReplicas",
	"Engine.Encode", "Engine.Flush", "Engine.GetTransfer", "Engine.Holders", "Engine.IdempotencyTTL", "Engine.Load", "Engine.LostExpiries",
	"Engine.Outcome", "Engine.Ping", "Engine.ReleaseExpired", "Engine.ReplicaStats", "Engine.Restore",
	"Engine.RestoreUnlessArrived", "Engine.Snapshots", "Engine.State", "Engine.SweepHot",
	"Engine.Transfer", "Engine.Undelivered", "Error", "New", "Options", "Outcome", "ReplicaStats",
	"TransferAborted", "TransferCommitted", "TransferPending", "TransferState",
	"TransferState.AppendJSON",
	// Errors.
	"ErrCouponExists", "ErrCouponExpired", "ErrCouponNotFound", "ErrCouponUnavailable",
	"ErrExceedsHold", "ErrForbidden", "ErrHoldExists", "ErrHoldExpired", "ErrHoldNotFound",
	"ErrHolderExists", "ErrHolderNotFound", "ErrHolderSuspended", "ErrIdempotencyConflict",
	"ErrInFlight", "ErrInstructionNotFound", "ErrInsufficientFunds", "ErrInsufficientPoints",
	"ErrInternal", "ErrInvalidAmount", "ErrInvalidID", "ErrInvalidInstruction", "ErrOverflow",
	"ErrPayloadTooLarge", "ErrRateLimited", "ErrRedisAhead", "ErrStateDiffers", "ErrTooManyOps",
	"ErrTransferNotFound", "ErrUnauthenticated", "ErrUnavailable", "ErrUnknownAsset",
	// Defaults and limits.
	"DefaultIdempotencyTTL", "DefaultReplicaAckTimeout", "DefaultTransferTimeout", "MinRedisVersion",
	"ReplayNote",
	// The workers: sweepers, transfer recovery (the relay is package outbox).
	"HotSweepID", "HotSweeper", "HotSweeper.Run", "HotSweeper.Stats", "HotSweeperStats", "HotSwept",
	"NewHotSweeper", "NewRecovery", "NewSweeper", "Recovery", "Recovery.Recover", "Recovery.Run",
	"Recovery.Stats", "RecoveryOptions", "RecoveryStats", "Sweeper", "Sweeper.Run", "Sweeper.Stats",
	"Sweeper.Sweep", "SweeperOptions", "SweeperStats",
	// For the benchmark and the tests (above).
	"SweepID",
}

// TestSurface_ExportsAreDeliberate holds engine's exported identifiers to
// surface.
func TestSurface_ExportsAreDeliberate(t *testing.T) {
	want := slices.Sorted(slices.Values(surface))
	assert.Equal(t, want, surfacetest.Exported(t, "."), "engine's exported identifiers: an export added or removed must be added to or removed from surface")
}
