package reconcile

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/ledger"
)

// TestFindInstruction_RedisThenLedger: what Redis remembers is answered
// from Redis without asking the ledger (an applied instruction and a
// rejection); once Redis forgets, an applied instruction is found in the
// ledger, a rejection nowhere; without a ledger Redis's answer stands, and
// a ledger that cannot be had is the error.
func TestFindInstruction_RedisThenLedger(t *testing.T) {
	needRedis(t)
	r := newLedgerRig(t)
	ctx := context.Background()
	r.startRelay(t)
	h := "lookup-h"
	open := instructions.New("lookup-open", h).Open().Credit("CNY", "1.50")
	tooMuch := instructions.New("lookup-too-much", h).Debit("CNY", "9")
	_, err := r.eng.Apply(ctx, open)
	require.NoError(t, err)
	_, err = r.eng.Apply(ctx, tooMuch)
	require.ErrorIs(t, err, instructions.ErrInsufficientFunds)

	noLedger := func() (*ledger.Ledger, error) {
		t.Error("the ledger is asked for what Redis remembers")
		return nil, errors.New("not asked")
	}
	f, err := FindInstruction(ctx, r.eng, noLedger, h, open.ID)
	require.NoError(t, err)
	assert.Equal(t, "redis", f.Source)
	assert.Equal(t, "applied", f.Status)
	require.NotNil(t, f.Result)
	assert.Equal(t, "1.50", f.Result.Balances["CNY"].Available)
	f, err = FindInstruction(ctx, r.eng, noLedger, h, tooMuch.ID)
	require.NoError(t, err)
	assert.Equal(t, "rejected", f.Status)
	require.NotNil(t, f.Error)
	assert.Equal(t, instructions.CodeInsufficientFunds, f.Error.Code)

	require.Zero(t, r.waitInSync(t).EventsInFlight)
	require.NoError(t, r.rdb.Del(ctx, cluster.Tx(h, open.ID), cluster.Tx(h, tooMuch.ID)).Err())
	led := func() (*ledger.Ledger, error) { return r.led, nil }
	f, err = FindInstruction(ctx, r.eng, led, h, open.ID)
	require.NoError(t, err)
	assert.Equal(t, "ledger", f.Source)
	require.NotNil(t, f.Instruction)
	assert.Equal(t, open.ID, f.Instruction.ID)
	assert.Nil(t, f.Result)

	_, err = FindInstruction(ctx, r.eng, led, h, tooMuch.ID)
	require.ErrorIs(t, err, instructions.ErrInstructionNotFound)
	assert.Contains(t, err.Error(), "Redis does not remember")
	assert.Contains(t, err.Error(), "and the ledger has no applied instruction under it")

	_, err = FindInstruction(ctx, r.eng, nil, h, open.ID)
	require.ErrorIs(t, err, instructions.ErrInstructionNotFound)
	assert.NotContains(t, err.Error(), "ledger")

	down := instructions.Errorf(instructions.CodeUnavailable, instructions.NoOp, "the ledger is down")
	_, err = FindInstruction(ctx, r.eng, func() (*ledger.Ledger, error) { return nil, down }, h, open.ID)
	assert.Equal(t, error(down), err)
}
