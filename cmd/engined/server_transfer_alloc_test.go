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

// TestPostTransfer_Allocations bounds what POST /v1/transfers allocates for
// a P2P payment (one payer, one payee) through the daemon's whole handler
// (request log, metrics, token, decode, Transfer's four round trips,
// answer), as TestApplyOne_Allocations bounds a debit's. The answer is
// still json.Marshal's, byte for byte.
func TestPostTransfer_Allocations(t *testing.T) {
	needRedis(t)
	rdb := testCluster.Client(nil)
	defer rdb.Close()
	eng := engine.New(rdb, nil)
	ctx := context.Background()
	payer, payee := "alloc-"+newID("payer"), "alloc-"+newID("payee")
	for _, h := range []string{payer, payee} {
		_, err := eng.Apply(ctx, instructions.New("open", h).Open().Credit("CNY", "1000000.00"))
		require.NoError(t, err)
	}
	s := newServer(eng, rdb, []string{"t"}, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	h := s.handler()

	run, n, paid := newID("p"), 0, 0
	request := func() *http.Request {
		n++
		r := httptest.NewRequest(http.MethodPost, "/v1/transfers",
			bytes.NewReader([]byte(payment(run+"-"+strconv.Itoa(n), payer, payee, "0.01"))))
		r.Header.Set("Authorization", "Bearer t")
		return r
	}
	post := func() *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, request())
		paid++
		return w
	}
	w := post()
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	var st engine.TransferState
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &st))
	assert.Equal(t, engine.TransferCommitted, st.Status)
	assert.True(t, st.Complete)
	assert.Equal(t, []string{payer, payee}, st.Holders)
	want, err := json.Marshal(st)
	require.NoError(t, err)
	assert.Equal(t, string(want)+"\n", w.Body.String())
	assert.Equal(t, strconv.Itoa(w.Body.Len()), w.Header().Get("Content-Length"))
	assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
	assert.Equal(t, "no-store", w.Header().Get("Cache-Control"))
	assert.Equal(t, "nosniff", w.Header().Get("X-Content-Type-Options"))

	// A request and its test scaffolding (the body, the recorder) alone, to
	// take away.
	base := testing.AllocsPerRun(200, func() {
		_ = request()
		_ = httptest.NewRecorder()
	})
	all := testing.AllocsPerRun(200, func() {
		if w := post(); w.Code != http.StatusOK {
			t.Fatal(w.Body.String())
		}
	})
	t.Logf("%.0f allocations a payment (%.0f with the scaffolding)", all-base, all)
	assert.LessOrEqual(t, all-base, 315.0)

	// Every payment moved its cent, once.
	got, err := eng.State(ctx, payer)
	require.NoError(t, err)
	cents := 100_000_000 - paid
	assert.Equal(t, strconv.Itoa(cents/100)+"."+strconv.Itoa(cents%100/10)+strconv.Itoa(cents%10), got.Balances["CNY"].Available)
}
