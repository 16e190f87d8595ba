package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// DESIGN.md, "Errors": every code the script raises, reached by a real
// instruction through the daemon, answered with the table's status, the
// failing op's index and the holder unchanged; the same rejection inside a
// batch is that entry's error object, the batch itself 200.
func TestConformance2_EveryScriptCodeOverHTTP(t *testing.T) {
	needRedis(t)
	t.Parallel()
	ctx := context.Background()
	d := startServe(t, nil)
	h := newID("codes")
	a := d.post(t, instructionJSON(newID("setup"), h, `[{"op": "open"},
		{"op": "credit", "asset": "CNY", "amount": "10.00"}, {"op": "earn_points", "amount": "10"},
		{"op": "grant_coupon", "coupon": "c-expired", "expires_ms": 1000},
		{"op": "grant_coupon", "coupon": "c-used"}, {"op": "redeem_coupon", "coupon": "c-used"},
		{"op": "grant_coupon", "coupon": "c-ok"},
		{"op": "freeze", "asset": "CNY", "amount": "1.00", "hold": "h-open"},
		{"op": "freeze", "asset": "CNY", "amount": "1.00", "hold": "h-expired", "ttl_ms": 3600000}]`))
	require.Equal(t, http.StatusOK, a.status, "%s", a)
	// h-expired expires in the hash at 1000 while the expiry index still
	// says an hour from now: expired for the script, and out of the
	// daemon's sweeper's reach, which would release it.
	rdb := testCluster.Client(nil)
	t.Cleanup(func() { _ = rdb.Close() })
	key := "{h:" + h + "}"
	raw, err := rdb.HGet(ctx, key, "h:h-expired").Result()
	require.NoError(t, err)
	_, rest, ok := strings.Cut(raw, "|")
	require.True(t, ok, "hold field %q", raw)
	require.NoError(t, rdb.HSet(ctx, key, "h:h-expired", "1000|"+rest).Err())

	susp := newID("susp")
	a = d.post(t, instructionJSON(newID("setup"), susp, `[{"op": "open"}, {"op": "credit", "asset": "CNY", "amount": "1.00"}, {"op": "suspend"}]`))
	require.Equal(t, http.StatusOK, a.status, "%s", a)

	// Each second op fails; the first, an earn, would have changed the
	// holder (on an unknown holder it fails first: op 0).
	cases := []struct {
		code, holder, op string
	}{
		{"HOLDER_NOT_FOUND", newID("nobody"), `{"op": "credit", "asset": "CNY", "amount": "1.00"}`},
		{"HOLDER_EXISTS", h, `{"op": "open"}`},
		{"HOLDER_SUSPENDED", susp, `{"op": "debit", "asset": "CNY", "amount": "1.00"}`},
		{"INSUFFICIENT_FUNDS", h, `{"op": "debit", "asset": "CNY", "amount": "8.01"}`},
		{"INSUFFICIENT_POINTS", h, `{"op": "spend_points", "amount": "12"}`},
		{"HOLD_NOT_FOUND", h, `{"op": "settle", "hold": "h-none"}`},
		{"HOLD_EXISTS", h, `{"op": "freeze", "asset": "CNY", "amount": "1.00", "hold": "h-open"}`},
		{"HOLD_EXPIRED", h, `{"op": "settle", "hold": "h-expired"}`},
		{"EXCEEDS_HOLD", h, `{"op": "settle", "hold": "h-open", "leg": "CNY", "amount": "1.01"}`},
		{"COUPON_NOT_FOUND", h, `{"op": "redeem_coupon", "coupon": "c-none"}`},
		{"COUPON_EXISTS", h, `{"op": "grant_coupon", "coupon": "c-ok"}`},
		{"COUPON_UNAVAILABLE", h, `{"op": "redeem_coupon", "coupon": "c-used"}`},
		{"COUPON_EXPIRED", h, `{"op": "lock_coupon", "coupon": "c-expired", "hold": "h-new"}`},
		{"OVERFLOW", h, `{"op": "credit", "asset": "CNY", "amount": "90071992547409.91"}`},
	}
	before := d.state(t, h)
	for _, c := range cases {
		t.Run(c.code+" is 422 with its op", func(t *testing.T) {
			body := instructionJSON(newID("i"), c.holder, `[{"op": "earn_points", "amount": "1"}, `+c.op+`]`)
			a := d.post(t, body)
			wantErrorAnswer(t, a, http.StatusUnprocessableEntity, c.code)
			want := 1
			if c.code == "HOLDER_NOT_FOUND" {
				want = 0
			}
			assert.JSONEq(t, strconv.Itoa(want), string(errorField(t, a, "op_index")), "%s", a)

			b := d.do(t, http.MethodPost, "/v1/instructions/batch", `{"instructions": [`+instructionJSON(newID("i"), c.holder,
				`[{"op": "earn_points", "amount": "1"}, `+c.op+`]`)+`]}`)
			require.Equal(t, http.StatusOK, b.status, "%s", b)
			var batch struct {
				Results []struct {
					Error *struct {
						Code    string `json:"code"`
						OpIndex *int   `json:"op_index"`
					} `json:"error"`
				} `json:"results"`
			}
			require.NoError(t, json.Unmarshal(b.body, &batch), "%s", b)
			require.Len(t, batch.Results, 1)
			require.NotNil(t, batch.Results[0].Error, "%s", b)
			assert.Equal(t, c.code, batch.Results[0].Error.Code)
			require.NotNil(t, batch.Results[0].Error.OpIndex, "%s", b)
			assert.Equal(t, want, *batch.Results[0].Error.OpIndex)
		})
	}
	assert.Equal(t, before, d.state(t, h), "no rejection changed the holder")
	t.Run("HOLDER_NOT_FOUND is 404 on the reads of a holder", func(t *testing.T) {
		nobody := newID("nobody")
		wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/holders/"+nobody, ""), http.StatusNotFound, "HOLDER_NOT_FOUND")
	})
}
