package engine_test

import (
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	"Engine.Encode", "Engine.GetTransfer", "Engine.Holders", "Engine.IdempotencyTTL", "Engine.Load",
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
	// The workers: relay, sweepers, transfer recovery.
	"HotSweepID", "HotSweeper", "HotSweeper.Run", "HotSweeper.Stats", "HotSweeperStats", "HotSwept",
	"NewHotSweeper", "NewRecovery", "NewRelay", "NewSweeper", "Recovery", "Recovery.Recover",
	"Recovery.Run", "Recovery.Stats", "RecoveryOptions", "RecoveryStats", "Relay", "Relay.Round",
	"Relay.Run", "Relay.Stats", "RelayOptions", "RelayStats", "Sink", "Sweeper", "Sweeper.Run",
	"Sweeper.Stats", "Sweeper.Sweep", "SweeperOptions", "SweeperStats",
	// For the benchmark and the tests (above).
	"SweepID",
}

// TestSurface_ExportsAreDeliberate holds engine's exported identifiers to
// surface.
func TestSurface_ExportsAreDeliberate(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	require.NoError(t, err)
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(pkg.Dir, name), nil, parser.ParseComments)
		require.NoError(t, err)
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/atomledger/atomledger/engine")
	require.NoError(t, err)
	var got []string
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			got = append(got, v.Names...)
		}
	}
	funcs := func(recv string, fs []*doc.Func) {
		for _, f := range fs {
			got = append(got, recv+f.Name)
		}
	}
	values(p.Consts)
	values(p.Vars)
	funcs("", p.Funcs)
	for _, ty := range p.Types {
		got = append(got, ty.Name)
		values(ty.Consts)
		values(ty.Vars)
		funcs("", ty.Funcs)
		funcs(ty.Name+".", ty.Methods)
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(surface))
	assert.Equal(t, want, got, "engine's exported identifiers: an export added or removed must be added to or removed from surface")
}
