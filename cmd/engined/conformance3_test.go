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

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/internal/contracttest"
)

// conf3Status is DESIGN.md's HTTP status of an instruction's error code.
func conf3Status(code string) int {
	switch instructions.Code(code) {
	case instructions.CodeInvalidInstruction, instructions.CodeInvalidAmount, instructions.CodeInvalidID,
		instructions.CodeUnknownAsset, instructions.CodeTooManyOps:
		return http.StatusBadRequest
	case instructions.CodeIdempotencyConflict:
		return http.StatusConflict
	}
	return http.StatusUnprocessableEntity
}

// DESIGN.md's rules, each a case of testdata/conformance3/cases.json, through
// POST /v1/instructions: each rejection's status, code and op, the holder's
// hash and GET state unchanged by it, recorded only when the script judged a
// holder that exists, and replayed so; for an instruction that applies, 200,
// the part of the state and of the result the case names, seq one more, and
// a replay marked so that changes nothing.
func TestConformance3_EveryRuleThroughTheDaemon(t *testing.T) {
	needRedis(t)
	t.Parallel()
	ctx := context.Background()
	d := startServe(t, nil)
	rdb := testCluster.Client(nil)
	t.Cleanup(func() { _ = rdb.Close() })
	f := contracttest.Load(t, "../../testdata/conformance3/cases.json")

	// The hash and what GET answers: what a rejection must leave as it was.
	snapshot := func(t *testing.T, h string) string {
		t.Helper()
		m, err := rdb.HGetAll(ctx, cluster.Holder(h)).Result()
		require.NoError(t, err)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		a := d.do(t, http.MethodGet, "/v1/holders/"+h, "")
		return string(b) + " " + strconv.Itoa(a.status) + " " + string(a.body)
	}
	for _, c := range f.Cases {
		if !c.Runs(contracttest.DoorHTTP) {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			h := newID("c3")
			if !c.Unopened {
				a := d.post(t, string(f.SetupText(t, h, newID("setup"), false)))
				require.Equal(t, http.StatusOK, a.status, "%s", a)
				// Expired in the hash alone: the expiry index still says an
				// hour from now, out of the daemon's sweeper's reach.
				key := cluster.Holder(h)
				hold, err := rdb.HGet(ctx, key, "h:"+contracttest.ExpiredHold).Result()
				require.NoError(t, err)
				_, rest, _ := strings.Cut(hold, "|")
				exp := strconv.Itoa(contracttest.Expired)
				require.NoError(t, rdb.HSet(ctx, key, "h:"+contracttest.ExpiredHold, exp+"|"+rest,
					"c:"+contracttest.ExpiredCoupon, "held:"+contracttest.ExpiredHold+"|"+exp).Err())
				if c.Suspend {
					a = d.post(t, instructionJSON(newID("suspend"), h, `[{"op": "suspend"}]`))
					require.Equal(t, http.StatusOK, a.status, "%s", a)
				}
			}
			id := c.ID(newID("c3"))
			body := string(c.Text(t, h, id, false))
			var seq0 int64
			if !c.Unopened {
				var st instructions.State
				require.NoError(t, json.Unmarshal([]byte(d.state(t, h)), &st))
				seq0 = st.Seq
			}
			before := snapshot(t, h)
			a := d.post(t, body)
			if c.Code != "" {
				wantErrorAnswer(t, a, conf3Status(c.Code), c.Code)
				if c.OpIndex != nil {
					assert.JSONEq(t, strconv.Itoa(*c.OpIndex), string(errorField(t, a, "op_index")), "%s", a)
				} else {
					assert.Nil(t, errorField(t, a, "op_index"), "%s", a)
				}
				assert.Nil(t, errorField(t, a, "replayed"), "%s", a)
				assert.Equal(t, before, snapshot(t, h), "the rejection changed the holder")
				n, err := rdb.Exists(ctx, cluster.Tx(h, id)).Result()
				require.NoError(t, err)
				assert.Equal(t, c.Recorded(), n == 1, "the rejection recorded under its id")
				if c.Unopened {
					n, err := rdb.Exists(ctx, cluster.Holder(h)).Result()
					require.NoError(t, err)
					assert.Zero(t, n, "nothing is written for an unknown holder")
				}
				a = d.post(t, body)
				wantErrorAnswer(t, a, conf3Status(c.Code), c.Code)
				if c.Recorded() {
					assert.JSONEq(t, `true`, string(errorField(t, a, "replayed")), "sent again: %s", a)
				} else {
					assert.Nil(t, errorField(t, a, "replayed"), "sent again: %s", a)
				}
				assert.Equal(t, before, snapshot(t, h), "sent again, the rejection changed the holder")
				return
			}
			require.Equal(t, http.StatusOK, a.status, "%s: %s", body, a)
			res := contracttest.Decode(t, a.body)
			assert.Equal(t, json.Number(strconv.FormatInt(seq0+1, 10)), res["seq"], "the result's seq")
			assert.Equal(t, false, res["replayed"])
			assert.Equal(t, id, res["id"])
			assert.Equal(t, h, res["holder"])
			if c.Result != nil {
				contracttest.Contains(t, c.Result, a.body)
			}
			st := d.state(t, h)
			contracttest.Contains(t, c.Want, []byte(st))
			assert.Equal(t, json.Number(strconv.FormatInt(seq0+1, 10)), contracttest.Decode(t, []byte(st))["seq"], "seq")
			after := snapshot(t, h)
			a = d.post(t, body)
			require.Equal(t, http.StatusOK, a.status, "sent again: %s", a)
			assert.Equal(t, true, contracttest.Decode(t, a.body)["replayed"], "sent again: replayed")
			assert.Equal(t, after, snapshot(t, h), "a replay changed the holder")
		})
	}
}
