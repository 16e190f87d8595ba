package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// TestApplyOne_Allocations bounds what POST /v1/instructions allocates for
// a one-op debit through the daemon's whole handler (request log, metrics,
// token, decode, Apply, answer): 86 in one run, most of them Apply's (its
// keys and arguments, the Redis client's pipeline), against 198 when the
// decode walked the body three times and the answer went through reflection.
// The answer is still json.Marshal's, byte for byte.
func TestApplyOne_Allocations(t *testing.T) {
	eng, h := allocDaemon(t)
	holder := "alloc-" + newID("h")
	_, err := eng.Apply(context.Background(), instructions.New("open", holder).Open().Credit("CNY", "1000000.00"))
	require.NoError(t, err)
	n := 0
	request := func() *http.Request {
		n++
		body, _ := instructions.Encode(instructions.New("d-"+strconv.Itoa(n), holder).Debit("CNY", "0.01"))
		r := httptest.NewRequest(http.MethodPost, "/v1/instructions", bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer t")
		return r
	}
	var res instructions.Result
	answerIsMarshal(t, serveRecorded(h, request()), &res)
	allocs := allocsPerRequest(t, h, request)
	t.Logf("%.0f allocations a request", allocs)
	assert.LessOrEqual(t, allocs, 100.0)
}

// TestPostTransfer_Allocations bounds what POST /v1/transfers allocates for
// a P2P payment (one payer, one payee) through the daemon's whole handler
// (request log, metrics, token, decode, Transfer's two round trips and
// the booking of its record, answer), as TestApplyOne_Allocations bounds a
// debit's. The answer is still json.Marshal's, byte for byte. The record's
// claim and booking are plain commands, which allocate more on this side
// than the two library runs they replace (315 then) but cost Redis, the
// scarce side, less; the claim is one field and goes in the shared
// pipelines (a MULTI of an HSETNX per field, sent alone, before). The steps go through
// group commit's queues (410 before): a queue entry, a sender and its
// pipeline's deadline per step, for a quarter off a payment's latency. The
// payment's entry in its payer's slot, written with its payer's run and
// removed with the booking, for two round trips instead of three, costs
// 15 to 40 more (444 before: the count moves with how the steps share
// pipelines).
func TestPostTransfer_Allocations(t *testing.T) {
	eng, daemon := allocDaemon(t)
	sent := 0
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sent++; daemon.ServeHTTP(w, r) })
	ctx := context.Background()
	payer, payee := "alloc-"+newID("payer"), "alloc-"+newID("payee")
	for _, h := range []string{payer, payee} {
		_, err := eng.Apply(ctx, instructions.New("open", h).Open().Credit("CNY", "1000000.00"))
		require.NoError(t, err)
	}
	run, n := newID("p"), 0
	request := func() *http.Request {
		n++
		r := httptest.NewRequest(http.MethodPost, "/v1/transfers",
			bytes.NewReader([]byte(payment(run+"-"+strconv.Itoa(n), payer, payee, "0.01"))))
		r.Header.Set("Authorization", "Bearer t")
		return r
	}
	var st engine.TransferState
	answerIsMarshal(t, serveRecorded(h, request()), &st)
	assert.Equal(t, engine.TransferCommitted, st.Status)
	assert.True(t, st.Complete)
	assert.Equal(t, []string{payer, payee}, st.Holders)
	allocs := allocsPerRequest(t, h, request)
	t.Logf("%.0f allocations a payment", allocs)
	assert.LessOrEqual(t, allocs, 500.0)

	// Every payment moved its cent, once.
	got, err := eng.State(ctx, payer)
	require.NoError(t, err)
	cents := 100_000_000 - sent
	assert.Equal(t, strconv.Itoa(cents/100)+"."+strconv.Itoa(cents%100/10)+strconv.Itoa(cents%10), got.Balances["CNY"].Available)
}

// allocDaemon is an engine on the test cluster and the daemon's handler.
func allocDaemon(t *testing.T) (*engine.Engine, http.Handler) {
	t.Helper()
	needRedis(t)
	rdb := testCluster.Client(nil)
	t.Cleanup(func() { rdb.Close() })
	eng := engine.New(rdb, nil)
	return eng, newServer(eng, rdb, []string{"t"}, slog.New(slog.NewJSONHandler(io.Discard, nil))).handler()
}

func serveRecorded(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// answerIsMarshal reads w's 200 answer into v and checks that it is what
// json.Marshal writes for v, with the daemon's headers.
func answerIsMarshal(t *testing.T, w *httptest.ResponseRecorder, v any) {
	t.Helper()
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), v))
	want, err := json.Marshal(v)
	require.NoError(t, err)
	assert.Equal(t, string(want)+"\n", w.Body.String())
	assert.Equal(t, strconv.Itoa(w.Body.Len()), w.Header().Get("Content-Length"))
	assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
	assert.Equal(t, "no-store", w.Header().Get("Cache-Control"))
	assert.Equal(t, "nosniff", w.Header().Get("X-Content-Type-Options"))
}

// allocsPerRequest is what h allocates for a request, less what building the
// request and its recorder (the test's scaffolding) takes.
func allocsPerRequest(t *testing.T, h http.Handler, request func() *http.Request) float64 {
	t.Helper()
	base := testing.AllocsPerRun(200, func() {
		_ = request()
		_ = httptest.NewRecorder()
	})
	all := testing.AllocsPerRun(200, func() {
		if w := serveRecorded(h, request()); w.Code != http.StatusOK {
			t.Fatal(w.Body.String())
		}
	})
	return all - base
}
