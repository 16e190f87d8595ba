package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
)

// One id through every door of a daemon whose ids are kept for an hour:
// POST /v1/instructions, the batch and the outcome read answer the same
// recorded answer, applied or rejected, marked replayed; each record lives
// the daemon's --idempotency-ttl; once it has expired (the test makes it
// expire now rather than wait, so no step can outrun it on a slow machine)
// the outcome read says INSTRUCTION_NOT_FOUND and the same body is a new
// instruction (DESIGN.md, Idempotency: ids are kept for a configurable
// time), applied again or refused afresh without the replay mark.
func TestIdempotencyAdversary_DaemonDoorsShareOneAnswerUntilTheTTL(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil, "--idempotency-ttl", "1h")
	h := newID("h")
	d.mustApply(t, instructions.New(newID("open"), h).Open().Credit("CNY", "10.00"))
	pay, big := newID("pay"), newID("big")
	payBody := instructionJSON(pay, h, `[{"op": "debit", "asset": "CNY", "amount": "1.00"}]`)
	bigBody := instructionJSON(big, h, `[{"op": "debit", "asset": "CNY", "amount": "100.00"}]`)

	first := d.post(t, payBody)
	require.Equal(t, http.StatusOK, first.status, "%s", first)
	var res instructions.Result
	strictJSON(t, string(first.body), &res)
	refusal := d.post(t, bigBody)
	wantErrorAnswer(t, refusal, http.StatusUnprocessableEntity, "INSUFFICIENT_FUNDS")
	var refused errorBody
	strictJSON(t, string(refusal.body), &refused)
	assert.False(t, refused.Error.Replayed)

	// The batch, with the same bodies spelled otherwise, answers both.
	a := d.do(t, http.MethodPost, "/v1/instructions/batch", `{"instructions": [`+
		instructionJSON(pay, h, `[{"op": "debit", "asset": "CNY", "amount": "1.0"}]`)+`, `+
		instructionJSON(big, h, `[{"op": "debit", "asset": "CNY", "amount": "100"}]`)+`]}`)
	require.Equal(t, http.StatusOK, a.status, "%s", a)
	var batch struct{ Results []json.RawMessage }
	require.NoError(t, json.Unmarshal(a.body, &batch))
	require.Len(t, batch.Results, 2)
	var again instructions.Result
	strictJSON(t, string(batch.Results[0]), &again)
	assert.True(t, again.Replayed)
	again.Replayed = false
	assert.Equal(t, res, again, "the batch's entry answers the first call's result")
	var againRefused errorBody
	strictJSON(t, string(batch.Results[1]), &againRefused)
	assert.Equal(t, "INSUFFICIENT_FUNDS", againRefused.Error.Code)
	assert.True(t, againRefused.Error.Replayed, "the rejection replays, marked")

	for id, status := range map[string]string{pay: "applied", big: "rejected"} {
		ans := lookupByID(t, d, h, id)
		assert.Equal(t, "redis", ans.Source)
		assert.Equal(t, status, ans.Status, id)
	}

	// Each record lives the TTL, then the id is forgotten.
	ctx := context.Background()
	rdb := testCluster.Client(nil)
	defer rdb.Close()
	for _, id := range []string{pay, big} {
		ttl, err := rdb.PTTL(ctx, cluster.Tx(h, id)).Result()
		require.NoError(t, err)
		assert.True(t, ttl > 50*time.Minute && ttl <= time.Hour, "%s's record expires in %v, not the daemon's hour", id, ttl)
		require.NoError(t, rdb.PExpire(ctx, cluster.Tx(h, id), time.Millisecond).Err())
	}
	for _, id := range []string{pay, big} {
		require.Eventually(t, func() bool {
			return d.do(t, http.MethodGet, "/v1/holders/"+h+"/instructions/"+id, "").status == http.StatusNotFound
		}, 2*time.Minute, 5*time.Millisecond, "%s never forgotten", id)
	}
	wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/holders/"+h+"/instructions/"+big, ""), http.StatusNotFound, "INSTRUCTION_NOT_FOUND")
	anew := d.post(t, payBody)
	require.Equal(t, http.StatusOK, anew.status, "%s", anew)
	var res2 instructions.Result
	strictJSON(t, string(anew.body), &res2)
	assert.False(t, res2.Replayed, "a forgotten id is a new instruction")
	assert.Equal(t, res.Seq+1, res2.Seq)
	assert.Equal(t, "8.00", res2.Balances["CNY"].Available)
	refusal = d.post(t, bigBody)
	wantErrorAnswer(t, refusal, http.StatusUnprocessableEntity, "INSUFFICIENT_FUNDS")
	strictJSON(t, string(refusal.body), &refused)
	assert.False(t, refused.Error.Replayed, "refused afresh")
}
