package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/engine"
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

// conf3Start starts a daemon, and gives it, a client of its cluster and
// the fixture of cases.
func conf3Start(t *testing.T) (*daemon, *redis.ClusterClient, contracttest.File) {
	t.Helper()
	d := startServe(t, nil)
	rdb := testCluster.Client(nil)
	t.Cleanup(func() { _ = rdb.Close() })
	return d, rdb, contracttest.Load[contracttest.File](t, "../../testdata/conformance3/cases.json")
}

// conf3Open opens a holder through d with the fixture's setup and extra,
// makes its hold h-exp and coupon c-hexp expired in its hash alone (the
// expiry index still says an hour from now, out of the daemon's sweeper's
// reach), and suspends it if asked.
func conf3Open(t *testing.T, d *daemon, rdb *redis.ClusterClient, f contracttest.File, extra []map[string]any, suspend bool) string {
	t.Helper()
	h := newID("c3")
	a := d.post(t, string(f.SetupText(t, h, newID("setup"), false, extra)))
	require.Equal(t, http.StatusOK, a.status, "%s", a)
	contracttest.Expire(t, rdb, h)
	if suspend {
		a = d.post(t, instructionJSON(newID("suspend"), h, `[{"op": "suspend"}]`))
		require.Equal(t, http.StatusOK, a.status, "%s", a)
	}
	return h
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
	d, rdb, f := conf3Start(t)

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
				h = conf3Open(t, d, rdb, f, nil, c.Suspend)
			}
			id := c.ID(newID("c3"))
			body := string(c.Text(t, h, id, false))
			var seq0 int64
			if !c.Unopened {
				var st instructions.State
				require.NoError(t, json.Unmarshal([]byte(d.state(t, h)), &st))
				seq0 = st.Seq
			}
			// conflict: once the id has an answer, another body under it is
			// 409 IDEMPOTENCY_CONFLICT, naming no op, changing nothing.
			conflict := func() {
				t.Helper()
				before := snapshot(t, h)
				a := d.post(t, string(c.OtherText(t, h, id, false)))
				wantErrorAnswer(t, a, http.StatusConflict, "IDEMPOTENCY_CONFLICT")
				assert.Nil(t, errorField(t, a, "op_index"), "%s", a)
				assert.Equal(t, before, snapshot(t, h), "a conflict changed the holder")
			}
			// byID: GET /v1/holders/{h}/instructions/{id} answers what Redis
			// remembers of the id: the result, the rejection, or 404.
			byID := func(status string) {
				t.Helper()
				if _, own := c.Top["id"]; own {
					return // ids of the cases of ids, some of which no path can carry
				}
				a := d.do(t, http.MethodGet, "/v1/holders/"+h+"/instructions/"+id, "")
				if status == "" {
					wantErrorAnswer(t, a, http.StatusNotFound, "INSTRUCTION_NOT_FOUND")
					return
				}
				require.Equal(t, http.StatusOK, a.status, "%s", a)
				var got struct {
					Status string
					Result *instructions.Result
					Error  *instructions.Error
				}
				require.NoError(t, json.Unmarshal(a.body, &got), "%s", a)
				assert.Equal(t, status, got.Status, "%s", a)
				if got.Error != nil {
					assert.Equal(t, c.Code, string(got.Error.Code), "%s", a)
					assert.Equal(t, *c.OpIndex, got.Error.OpIndex, "%s", a)
				} else if assert.NotNil(t, got.Result, "%s", a) {
					assert.Equal(t, seq0+1, got.Result.Seq, "%s", a)
				}
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
					wantErrorAnswer(t, d.do(t, http.MethodGet, "/v1/holders/"+h, ""), http.StatusNotFound, "HOLDER_NOT_FOUND")
				}
				a = d.post(t, body)
				wantErrorAnswer(t, a, conf3Status(c.Code), c.Code)
				if c.Recorded() {
					assert.JSONEq(t, `true`, string(errorField(t, a, "replayed")), "sent again: %s", a)
				} else {
					assert.Nil(t, errorField(t, a, "replayed"), "sent again: %s", a)
				}
				assert.Equal(t, before, snapshot(t, h), "sent again, the rejection changed the holder")
				if c.Recorded() {
					byID("rejected")
					conflict()
				} else {
					byID("")
				}
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
			res["replayed"] = true
			a = d.post(t, body)
			require.Equal(t, http.StatusOK, a.status, "sent again: %s", a)
			assert.Equal(t, res, contracttest.Decode(t, a.body), "sent again: the first answer, replayed")
			assert.Equal(t, after, snapshot(t, h), "a replay changed the holder")
			byID("applied")
			conflict()
		})
	}
}

// DESIGN.md's rules of transfers, each a case of
// testdata/conformance3/transfers.json, through POST /v1/transfers: a
// transfer refused before it starts is 400 with its code; else 200 committed
// or 422 aborted with its error's code, part and op, every holder's figures
// as they were after an abort, and the part of each holder's state the case
// names after a commit. GET /v1/transfers/{id} then reads the same status,
// and the same body posted again is its first answer, replayed.
func TestConformance3_TransfersThroughTheDaemon(t *testing.T) {
	needRedis(t)
	t.Parallel()
	ctx := context.Background()
	d, rdb, f := conf3Start(t)
	tf := contracttest.Load[contracttest.TransferFile](t, "../../testdata/conformance3/transfers.json")
	for _, c := range tf.Cases {
		t.Run(c.Name, func(t *testing.T) {
			holders := map[string]string{contracttest.Ghost: newID("ghost")}
			values := map[string]instructions.State{}
			for _, name := range contracttest.Holders {
				holders[name] = conf3Open(t, d, rdb, f, c.Setup[name], c.Suspended(name))
				values[name] = holderValue(t, d, holders[name])
			}
			id := newID("t")
			body := string(c.Text(t, id, holders))
			a := d.do(t, http.MethodPost, "/v1/transfers", body)
			switch c.Status {
			case "":
				wantErrorAnswer(t, a, http.StatusBadRequest, c.Code)
			case engine.TransferCommitted:
				c.Check(t, wantTransfer(t, a, http.StatusOK), false)
			default:
				c.Check(t, wantTransfer(t, a, http.StatusUnprocessableEntity), false)
			}
			if c.Status != "" {
				got := wantTransfer(t, d.do(t, http.MethodGet, "/v1/transfers/"+id, ""), http.StatusOK)
				assert.Equal(t, c.Status, got.Status, "GET /v1/transfers/{id}")
				again := d.do(t, http.MethodPost, "/v1/transfers", body)
				assert.Equal(t, a.status, again.status, "posted again: %s", again)
				c.Check(t, wantTransfer(t, again, a.status), true)
			}
			if c.Status != engine.TransferCommitted {
				for _, name := range contracttest.Holders {
					assert.Equal(t, values[name], holderValue(t, d, holders[name]), "holder %s changed", name)
				}
			}
			n, err := rdb.Exists(ctx, cluster.Holder(holders[contracttest.Ghost])).Result()
			require.NoError(t, err)
			assert.Zero(t, n, "the hash of an unknown holder")
			for name, want := range c.Want {
				contracttest.Contains(t, want, []byte(d.state(t, holders[name])))
			}
		})
	}
}
