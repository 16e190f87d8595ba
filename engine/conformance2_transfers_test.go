package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// DESIGN.md, cross-holder transfers: the commit point is one write of the
// transfer record, its own key "{x:<id>}" (spelled out here, not taken from
// package cluster), a hash whose status goes to committed or aborted.
func TestConformance2_TransferRecordLiteral(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	hs := holdersOnMasters(t, func(in instructions.Instruction) instructions.Instruction {
		return in.Credit("CNY", "10.00")
	}, nil)
	ok := newID("pay")
	st := transfer(t, instructions.Transfer{ID: ok, Parts: []instructions.Part{
		part(hs[0], ops().Debit("CNY", "4.00")), part(hs[1], ops().Credit("CNY", "4.00"))}})
	require.Equal(t, engine.TransferCommitted, st.Status)
	// A one-payer transfer's record is marked by a batched booking after its
	// answer: wait for it, as a reader of the record would.
	eng.Flush()
	assert.Equal(t, "hash", rdb.Type(ctx, "{x:"+ok+"}").Val())
	assert.Equal(t, "committed", rdb.HGet(ctx, "{x:"+ok+"}", "status").Val())

	no := newID("pay")
	st, err := eng.Transfer(ctx, instructions.Transfer{ID: no, Parts: []instructions.Part{
		part(hs[0], ops().Debit("CNY", "7.00")), part(hs[1], ops().Credit("CNY", "7.00"))}})
	require.NoError(t, err)
	require.Equal(t, engine.TransferAborted, st.Status)
	require.NotNil(t, st.Error)
	assert.Equal(t, instructions.CodeInsufficientFunds, st.Error.Code)
	eng.Flush()
	assert.Equal(t, "aborted", rdb.HGet(ctx, "{x:"+no+"}", "status").Val())
	assert.Equal(t, "6.00", state(t, hs[0]).Balances["CNY"].Available)
	assert.Equal(t, "4.00", state(t, hs[1]).Balances["CNY"].Available)
}

// An id made only of dots is INVALID_ID, and a read by such an id says why.
func TestConformance2_GetTransferOfDotsAlone(t *testing.T) {
	needRedis(t)
	for _, id := range []string{".", ".."} {
		_, err := eng.GetTransfer(context.Background(), id)
		require.ErrorIs(t, err, engine.ErrInvalidID, "id %q", id)
		assert.Contains(t, err.Error(), "is dots alone", "id %q", id)
	}
}
