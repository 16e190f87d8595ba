package main

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
)

// One id through every door of a daemon whose ids are kept for a second:
// POST /v1/instructions, the batch and the outcome read answer the same
// recorded answer, applied or rejected, marked replayed; once the TTL has
// passed the outcome read says INSTRUCTION_NOT_FOUND and the same body is a
// new instruction (DESIGN.md, Idempotency: ids are kept for a configurable
// time), applied again or refused afresh without the replay mark.
func TestIdempotencyAdversary_DaemonDoorsShareOneAnswerUntilTheTTL(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil, "--idempotency-ttl", "1s")
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

	// Past the TTL the ids are forgotten.
	deadline := time.Now().Add(30 * time.Second)
	for _, id := range []string{pay, big} {
		for d.do(t, http.MethodGet, "/v1/holders/"+h+"/instructions/"+id, "").status != http.StatusNotFound {
			require.True(t, time.Now().Before(deadline), "%s never forgotten", id)
			time.Sleep(50 * time.Millisecond)
		}
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
