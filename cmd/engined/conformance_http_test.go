package main

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keysOf lists the keys of a JSON object, sorted.
func keysOf(t *testing.T, body []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &m), "%s", body)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// The daemon's HTTP table of DESIGN.md, read literally: the answers' exact
// shapes, the statuses of each route, and bad input refused with the
// holder unchanged.
func TestConformance_HTTPTable(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	h := richHolder(t, d)
	state := d.state(t, h)

	t.Run("a result has the contract's keys", func(t *testing.T) {
		a := d.post(t, instructionJSON(newID("r"), h, `[{"op": "debit", "asset": "CNY", "amount": "1.00"}]`))
		require.Equal(t, http.StatusOK, a.status, "%s", a)
		assert.Equal(t, []string{"balances", "coupons", "holder", "holds", "id", "replayed", "seq"}, keysOf(t, a.body))
		a = d.post(t, instructionJSON(newID("r"), h, `[{"op": "spend_points", "amount": "1"}]`))
		require.Equal(t, http.StatusOK, a.status, "%s", a)
		assert.Contains(t, keysOf(t, a.body), "points", "a result that touched points shows them")
		state = d.state(t, h)
	})
	t.Run("a holder's state has the contract's keys", func(t *testing.T) {
		assert.Equal(t, []string{"balances", "coupons", "holder", "holds", "points", "seq", "status"}, keysOf(t, []byte(state)))
		var st struct {
			Holds map[string]json.RawMessage `json:"holds"`
		}
		require.NoError(t, json.Unmarshal([]byte(state), &st))
		assert.Equal(t, []string{"coupons", "legs"}, keysOf(t, st.Holds["order-1"]), "a hold without expiry has no expires_ms")
	})
	t.Run("an op's rejection names its op, and replays marked", func(t *testing.T) {
		body := instructionJSON(newID("r"), h, `[{"op": "earn_points", "amount": "1"}, {"op": "debit", "asset": "CNY", "amount": "1000.00"}]`)
		a := d.post(t, body)
		wantErrorAnswer(t, a, http.StatusUnprocessableEntity, "INSUFFICIENT_FUNDS")
		assert.JSONEq(t, `1`, string(errorField(t, a, "op_index")))
		assert.Equal(t, []string{"code", "message", "op_index"}, keysOf(t, errorField(t, a, "")))
		a = d.post(t, body)
		wantErrorAnswer(t, a, http.StatusUnprocessableEntity, "INSUFFICIENT_FUNDS")
		assert.JSONEq(t, `true`, string(errorField(t, a, "replayed")))
	})
	t.Run("a conflict names no op", func(t *testing.T) {
		id := newID("r")
		require.Equal(t, http.StatusOK, d.post(t, instructionJSON(id, h, `[{"op": "earn_points", "amount": "1"}]`)).status)
		a := d.post(t, instructionJSON(id, h, `[{"op": "earn_points", "amount": "2"}]`))
		wantErrorAnswer(t, a, http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		assert.Equal(t, []string{"code", "message"}, keysOf(t, errorField(t, a, "")))
		state = d.state(t, h)
	})
	t.Run("the batch's body is read as strictly as an instruction's", func(t *testing.T) {
		one := func() string { return instructionJSON(newID("b"), h, `[{"op": "earn_points", "amount": "1"}]`) }
		for name, body := range map[string]string{
			"a key in another case":  `{"Instructions": [` + one() + `]}`,
			"a key given twice":      `{"instructions": [], "instructions": [` + one() + `]}`,
			"an unknown field":       `{"instructions": [` + one() + `], "atomic": true}`,
			"instructions null":      `{"instructions": null}`,
			"instructions an object": `{"instructions": {}}`,
		} {
			t.Run(name, func(t *testing.T) {
				a := d.do(t, http.MethodPost, "/v1/instructions/batch", body)
				wantErrorAnswer(t, a, http.StatusBadRequest, "INVALID_INSTRUCTION")
				assert.Equal(t, state, d.state(t, h), "the holder changed")
				state = d.state(t, h)
			})
		}
	})
	t.Run("a transfer's body is read strictly", func(t *testing.T) {
		for name, body := range map[string]string{
			"an unknown field": `{"id": "` + newID("x") + `", "parts": [], "atomic": true}`,
			"a key in another case": `{"ID": "` + newID("x") + `", "parts": [{"holder": "` + h +
				`", "ops": [{"op": "debit", "asset": "CNY", "amount": "1.00"}]}]}`,
			"parts that do not balance": `{"id": "` + newID("x") + `", "parts": [{"holder": "` + h +
				`", "ops": [{"op": "debit", "asset": "CNY", "amount": "1.00"}]}]}`,
		} {
			t.Run(name, func(t *testing.T) {
				a := d.do(t, http.MethodPost, "/v1/transfers", body)
				wantErrorAnswer(t, a, http.StatusBadRequest, "INVALID_INSTRUCTION")
				assert.Equal(t, state, d.state(t, h), "the holder changed")
				state = d.state(t, h)
			})
		}
	})
	t.Run("a transfer answers 200 committed, 422 aborted, 409 for another body", func(t *testing.T) {
		payee := richHolder(t, d)
		payeeState := d.state(t, payee)
		transfer := func(id, amount string) string {
			return `{"id": "` + id + `", "parts": [{"holder": "` + h + `", "ops": [{"op": "debit", "asset": "CNY", "amount": "` + amount +
				`"}]}, {"holder": "` + payee + `", "ops": [{"op": "credit", "asset": "CNY", "amount": "` + amount + `"}]}]}`
		}
		var st struct {
			Status    string          `json:"status"`
			Complete  bool            `json:"complete"`
			Replayed  bool            `json:"replayed"`
			PartIndex *int            `json:"part_index"`
			Error     json.RawMessage `json:"error"`
		}
		short := newID("t")
		a := d.do(t, http.MethodPost, "/v1/transfers", transfer(short, "1000.00"))
		require.Equal(t, http.StatusUnprocessableEntity, a.status, "%s", a)
		require.NoError(t, json.Unmarshal(a.body, &st))
		assert.Equal(t, "aborted", st.Status)
		require.NotNil(t, st.PartIndex)
		assert.Equal(t, 0, *st.PartIndex)
		assert.Contains(t, string(st.Error), `"INSUFFICIENT_FUNDS"`)
		assert.Equal(t, state, d.state(t, h), "an aborted transfer changed the payer")
		assert.Equal(t, payeeState, d.state(t, payee), "an aborted transfer changed the payee")

		id := newID("t")
		for i, want := range []bool{false, true} {
			a = d.do(t, http.MethodPost, "/v1/transfers", transfer(id, "1.00"))
			require.Equal(t, http.StatusOK, a.status, "%s", a)
			require.NoError(t, json.Unmarshal(a.body, &st))
			assert.Equal(t, "committed", st.Status)
			assert.True(t, st.Complete)
			assert.Equal(t, want, st.Replayed, "post %d", i)
		}
		wantErrorAnswer(t, d.do(t, http.MethodPost, "/v1/transfers", transfer(id, "2.00")), http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		a = d.do(t, http.MethodGet, "/v1/transfers/"+id, "")
		require.Equal(t, http.StatusOK, a.status, "%s", a)
		require.NoError(t, json.Unmarshal(a.body, &st))
		assert.Equal(t, "committed", st.Status)
		var payer, got struct {
			Balances map[string]struct{ Available string } `json:"balances"`
		}
		require.NoError(t, json.Unmarshal([]byte(d.state(t, h)), &payer))
		require.NoError(t, json.Unmarshal([]byte(d.state(t, payee)), &got))
		assert.Equal(t, "68.00", payer.Balances["CNY"].Available, "paid once")
		assert.Equal(t, "71.00", got.Balances["CNY"].Available, "credited once")
		state = d.state(t, h)
	})
	t.Run("ids in paths are checked like ids in bodies", func(t *testing.T) {
		for _, p := range []string{"/v1/holders/%7Bh%7D", "/v1/holders/..%2E", "/v1/holders/" + strings.Repeat("a", 65),
			"/v1/transfers/%7Bx%7D", "/v1/holders/" + h + "/instructions/a%20b"} {
			wantErrorAnswer(t, d.do(t, http.MethodGet, p, ""), http.StatusBadRequest, "INVALID_ID")
		}
		a := d.do(t, http.MethodGet, "/v1/holders/"+newID("merchant:88"), "")
		wantErrorAnswer(t, a, http.StatusNotFound, "HOLDER_NOT_FOUND")
	})
	t.Run("a wrong token is 401 on every /v1/ route", func(t *testing.T) {
		for _, r := range [][2]string{{http.MethodPost, "/v1/instructions"}, {http.MethodPost, "/v1/instructions/batch"},
			{http.MethodGet, "/v1/holders/" + h}, {http.MethodGet, "/v1/holders/" + h + "/events"},
			{http.MethodGet, "/v1/holders/" + h + "/instructions/x"}, {http.MethodPost, "/v1/transfers"}, {http.MethodGet, "/v1/transfers/x"}} {
			a := d.doWith(t, r[0], r[1], "Bearer wrong-"+d.token, strings.NewReader(`{}`))
			wantErrorAnswer(t, a, http.StatusUnauthorized, "UNAUTHENTICATED")
		}
	})
	assert.Equal(t, state, d.state(t, h))
}

// errorField is one field of an error answer's error object; "" for the
// whole object.
func errorField(t *testing.T, a reply, name string) json.RawMessage {
	t.Helper()
	var e struct {
		Error map[string]json.RawMessage `json:"error"`
	}
	require.NoError(t, json.Unmarshal(a.body, &e), "%s", a)
	if name == "" {
		b, err := json.Marshal(e.Error)
		require.NoError(t, err)
		return b
	}
	return e.Error[name]
}
