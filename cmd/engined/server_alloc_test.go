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
	needRedis(t)
	rdb := testCluster.Client(nil)
	defer rdb.Close()
	eng := engine.New(rdb, nil)
	ctx := context.Background()
	holder := "alloc-" + newID("h")
	_, err := eng.Apply(ctx, instructions.New("open", holder).Open().Credit("CNY", "1000000.00"))
	require.NoError(t, err)
	s := newServer(eng, rdb, []string{"t"}, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	h := s.handler()

	n := 0
	post := func() *httptest.ResponseRecorder {
		n++
		body, _ := instructions.Encode(instructions.New("d-"+strconv.Itoa(n), holder).Debit("CNY", "0.01"))
		r := httptest.NewRequest(http.MethodPost, "/v1/instructions", bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer t")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	w := post()
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	var res instructions.Result
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &res))
	want, err := json.Marshal(res)
	require.NoError(t, err)
	assert.Equal(t, string(want)+"\n", w.Body.String())
	assert.Equal(t, strconv.Itoa(w.Body.Len()), w.Header().Get("Content-Length"))
	assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
	assert.Equal(t, "no-store", w.Header().Get("Cache-Control"))
	assert.Equal(t, "nosniff", w.Header().Get("X-Content-Type-Options"))

	// A request and its test scaffolding (the body, the recorder) alone, to
	// take away.
	base := testing.AllocsPerRun(200, func() {
		body, _ := instructions.Encode(instructions.New("d-"+strconv.Itoa(n), holder).Debit("CNY", "0.01"))
		r := httptest.NewRequest(http.MethodPost, "/v1/instructions", bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer t")
		_ = httptest.NewRecorder()
	})
	all := testing.AllocsPerRun(200, func() {
		if w := post(); w.Code != http.StatusOK {
			t.Fatal(w.Body.String())
		}
	})
	t.Logf("%.0f allocations a request (%.0f with the scaffolding)", all-base, all)
	assert.LessOrEqual(t, all-base, 100.0)
}
