package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
)

// A quick payment whose credit never went, met by recovery only past its
// window: left to an operator (counted stuck), its two index entries (the
// record's and the payer's slot's) are looked at again as long after as
// the window has been past, not a timeout later, so that transfers left to
// an operator do not fill every later pass.
func TestRecovery_ATransferLeftToAnOperatorIsLookedAtLessOften(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	const timeout, ttl = 300 * time.Millisecond, 3 * time.Second // the least TTL of the one-payer path: the window ends 2.4 s after the start
	hs := holdersOnMasters(t, tenCNY, nil)
	tr := paymentOnThirdMaster(t, hs[0], "4.00", hs[1])
	credit := "x:" + tr.ID + ":c"
	driver := quickEngineWith(t, hookedClient(t, loseAnswers{match: applyOn(hs[1], credit), ran: false}), timeout, ttl, hs[0], hs[1])
	forgetAllOnCleanup(t, tr.ID, hs...)
	st, err := driver.Transfer(ctx, tr)
	require.NoError(t, err)
	require.Equal(t, engine.TransferCommitted, st.Status, "%v", st.Error)
	require.False(t, st.Complete, "the credit never went")
	driver.Flush()

	const past = 2 * time.Second // nearly seven timeouts
	until := time.UnixMilli(st.CreatedMs).Add(ttl - 2*timeout)
	time.Sleep(time.Until(until.Add(past)))
	r := engine.NewRecovery(engine.New(rdb, &engine.Options{TransferTimeout: timeout, IdempotencyTTL: ttl, Logger: quiet}),
		&engine.RecoveryOptions{Logger: quiet})
	looked := time.Now()
	require.NoError(t, r.RecoverSlots(ctx, slotsOf(tr.ID, hs...)...))
	assert.Positive(t, r.Stats().Stuck, "left to an operator")

	scores := map[string]float64{}
	for _, index := range []string{cluster.Transfers(cluster.TransferSlot(tr.ID)), cluster.Transfers(cluster.HolderSlot(hs[0]))} {
		for _, z := range rdb.ZRangeWithScores(ctx, index, 0, -1).Val() {
			if m := z.Member.(string); m == tr.ID || strings.HasPrefix(m, tr.ID+"\n") {
				scores[index] = z.Score
			}
		}
	}
	require.Len(t, scores, 2, "the record's entry and the payment's")
	for index, score := range scores {
		next := time.UnixMilli(int64(score))
		assert.True(t, next.After(looked.Add(past-2*timeout)), "%s: next look %v after the pass, not a timeout", index, next.Sub(looked))
		assert.True(t, next.Before(looked.Add(past+time.Minute)), "%s: next look %v after the pass", index, next.Sub(looked))
	}
	st, err = eng.GetTransfer(ctx, tr.ID)
	require.NoError(t, err)
	assert.False(t, st.Complete, "still the operator's")
}
