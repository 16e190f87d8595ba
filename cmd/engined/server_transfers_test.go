package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/cluster/clustertest"
	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/stored"
)

// transferJSON is a transfer body: parts alternate holder and ops (a JSON
// array), as in transferJSON(id, "alice", `[...]`, "bob", `[...]`).
func transferJSON(id string, parts ...string) string {
	var ps []string
	for i := 0; i+1 < len(parts); i += 2 {
		ps = append(ps, `{"holder": "`+parts[i]+`", "ops": `+parts[i+1]+`}`)
	}
	return `{"id": "` + id + `", "parts": [` + strings.Join(ps, ", ") + "]}\n"
}

// payment is a transfer of amount CNY from one holder to another.
func payment(id, from, to, amount string) string {
	return transferJSON(id,
		from, `[{"op": "debit", "asset": "CNY", "amount": "`+amount+`"}]`,
		to, `[{"op": "credit", "asset": "CNY", "amount": "`+amount+`"}]`)
}

// twoMasters opens two holders whose slots are on different masters, so
// that a transfer between them really spans shards: payer with 100.00 CNY,
// payee with 5.00 USD and an open hold.
func twoMasters(t *testing.T, d *daemon) (payer, payee string) {
	t.Helper()
	payer, payee = idsOnTwoMasters(t, testCluster)
	d.mustApply(t, instructions.New(newID("open"), payer).Open().Credit("CNY", "100.00"))
	d.mustApply(t, instructions.New(newID("open"), payee).Open().Credit("USD", "5.00").Freeze("USD", "1.00", "order-1", 0))
	return payer, payee
}

// idsOnTwoMasters gives a payer's and a payee's ids whose slots c serves
// on two masters.
func idsOnTwoMasters(t *testing.T, c *clustertest.Cluster) (payer, payee string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	payer = newID("payer")
	first, err := c.MasterOf(ctx, cluster.HolderSlot(payer))
	require.NoError(t, err)
	for {
		payee = newID("payee")
		m, err := c.MasterOf(ctx, cluster.HolderSlot(payee))
		require.NoError(t, err)
		if m != first {
			return payer, payee
		}
	}
}

// holderValue reads a holder through the daemon without its seq: the two
// phases of a transfer count on a holder's seq even when it aborts, and
// nothing else.
func holderValue(t *testing.T, d *daemon, holder string) instructions.State {
	t.Helper()
	return holderValueOf(t, d.state(t, holder))
}

// holderValueOf is holderValue of a state already read (raw JSON).
func holderValueOf(t *testing.T, raw string) instructions.State {
	t.Helper()
	var st instructions.State
	strictJSON(t, raw, &st)
	st.Seq = 0
	return st
}

// wantTransfer checks a transfer answer's status and decodes its state.
func wantTransfer(t *testing.T, a reply, status int) engine.TransferState {
	t.Helper()
	require.Equal(t, status, a.status, "%s", a)
	assert.Equal(t, "application/json", a.header.Get("Content-Type"))
	var st engine.TransferState
	strictJSON(t, string(a.body), &st)
	return st
}

func TestServe_Transfers(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	payer, payee := twoMasters(t, d)
	post := func(t *testing.T, body string) reply { return d.do(t, http.MethodPost, "/v1/transfers", body) }
	get := func(t *testing.T, id string) reply { return d.do(t, http.MethodGet, "/v1/transfers/"+id, "") }

	paid := newID("pay")
	var first engine.TransferState
	t.Run("a payment between two holders is 200 committed, and both holders show it", func(t *testing.T) {
		first = wantTransfer(t, post(t, payment(paid, payer, payee, "30.00")), http.StatusOK)
		assert.Equal(t, paid, first.ID)
		assert.Equal(t, engine.TransferCommitted, first.Status)
		assert.True(t, first.Complete)
		assert.False(t, first.Replayed)
		assert.Nil(t, first.Error)
		assert.Nil(t, first.PartIndex)
		assert.Positive(t, first.CreatedMs)

		p, q := holderValue(t, d, payer), holderValue(t, d, payee)
		assert.Equal(t, instructions.Balance{Available: "70.00", Frozen: "0.00"}, p.Balances["CNY"])
		assert.Empty(t, p.Holds, "the transfer's hold is closed")
		assert.Equal(t, instructions.Balance{Available: "30.00", Frozen: "0.00"}, q.Balances["CNY"])
		assert.Equal(t, instructions.Balance{Available: "4.00", Frozen: "1.00"}, q.Balances["USD"])
		assert.Len(t, q.Holds, 1, "only the payee's own hold")
	})
	t.Run("the same transfer again is replayed and changes nothing", func(t *testing.T) {
		before := []instructions.State{holderValue(t, d, payer), holderValue(t, d, payee)}
		again := wantTransfer(t, post(t, payment(paid, payer, payee, "30.00")), http.StatusOK)
		assert.True(t, again.Replayed)
		again.Replayed = false
		assert.Equal(t, first, again, "the same answer")
		assert.Equal(t, before, []instructions.State{holderValue(t, d, payer), holderValue(t, d, payee)})
	})
	t.Run("GET /v1/transfers/{id} reads it", func(t *testing.T) {
		st := wantTransfer(t, get(t, paid), http.StatusOK)
		assert.Equal(t, first, st)
	})
	t.Run("another body under the same id is 409 IDEMPOTENCY_CONFLICT", func(t *testing.T) {
		wantErrorAnswer(t, post(t, payment(paid, payer, payee, "31.00")), http.StatusConflict, "IDEMPOTENCY_CONFLICT")
	})

	// Part 0 can be prepared, part 1 cannot: part 0's reservation is given back.
	refused := newID("refused")
	refusedBody := transferJSON(refused,
		payer, `[{"op": "debit", "asset": "CNY", "amount": "10.00"}, {"op": "credit", "asset": "USD", "amount": "50.00"}]`,
		payee, `[{"op": "credit", "asset": "CNY", "amount": "10.00"}, {"op": "debit", "asset": "USD", "amount": "50.00"}]`)
	var aborted engine.TransferState
	t.Run("a part that cannot be applied aborts it: 422, and nothing changed in either holder", func(t *testing.T) {
		before := []instructions.State{holderValue(t, d, payer), holderValue(t, d, payee)}
		a := post(t, refusedBody)
		aborted = wantTransfer(t, a, http.StatusUnprocessableEntity)
		assert.Equal(t, engine.TransferAborted, aborted.Status)
		assert.True(t, aborted.Complete, "part 0's reservation is given back before the answer")
		assert.False(t, aborted.Replayed)
		require.NotNil(t, aborted.PartIndex)
		assert.Equal(t, 1, *aborted.PartIndex)
		require.NotNil(t, aborted.Error)
		assert.Equal(t, instructions.CodeInsufficientFunds, aborted.Error.Code)
		assert.Equal(t, 1, aborted.Error.OpIndex, "the op within the part")
		assert.Contains(t, string(a.body), `"status":"aborted"`)
		assert.Contains(t, string(a.body), `"error":{"code":"INSUFFICIENT_FUNDS"`)
		assert.Equal(t, before, []instructions.State{holderValue(t, d, payer), holderValue(t, d, payee)},
			"balances, holds, points and coupons are as they were")
	})
	t.Run("the aborted transfer sent again answers the same abort", func(t *testing.T) {
		again := wantTransfer(t, post(t, refusedBody), http.StatusUnprocessableEntity)
		assert.True(t, again.Replayed)
		again.Replayed = false
		assert.Equal(t, aborted, again)
	})
	t.Run("GET of an aborted transfer is 200 with its state", func(t *testing.T) {
		assert.Equal(t, aborted, wantTransfer(t, get(t, refused), http.StatusOK))
	})

	before := []instructions.State{holderValue(t, d, payer), holderValue(t, d, payee)}
	for _, tt := range []struct {
		name   string
		method string
		path   string
		auth   string // "" sends the daemon's token; "-" none
		body   string
		status int
		code   string
	}{
		{name: "unbalanced parts", body: transferJSON(newID("x"),
			payer, `[{"op": "debit", "asset": "CNY", "amount": "10.00"}]`,
			payee, `[{"op": "credit", "asset": "CNY", "amount": "9.99"}]`), status: 400, code: "INVALID_INSTRUCTION"},
		{name: "an unknown field in the transfer", body: strings.Replace(payment(newID("x"), payer, payee, "1.00"), `"parts"`, `"atomic": true, "parts"`, 1),
			status: 400, code: "INVALID_INSTRUCTION"},
		{name: "an unknown field in a part", body: strings.Replace(payment(newID("x"), payer, payee, "1.00"), `"ops"`, `"memo": "x", "ops"`, 1),
			status: 400, code: "INVALID_INSTRUCTION"},
		{name: "an op a transfer cannot take", body: transferJSON(newID("x"),
			payer, `[{"op": "freeze", "asset": "CNY", "amount": "1.00", "hold": "h"}]`,
			payee, `[{"op": "credit", "asset": "CNY", "amount": "1.00"}]`), status: 400, code: "INVALID_INSTRUCTION"},
		{name: "a single part", body: transferJSON(newID("x"), payer, `[{"op": "earn_points", "amount": "1"}]`), status: 400, code: "INVALID_INSTRUCTION"},
		{name: "an amount as a JSON number", body: strings.Replace(payment(newID("x"), payer, payee, "1.00"), `"1.00"`, `1`, 1),
			status: 400, code: "INVALID_AMOUNT"},
		{name: "braces in the transfer id", body: payment("{x}", payer, payee, "1.00"), status: 400, code: "INVALID_ID"},
		{name: "malformed JSON", body: `{"id": "x", "parts": [`, status: 400, code: "INVALID_INSTRUCTION"},
		{name: "a body over 1 MiB", body: payment(newID("x"), payer, payee, "1.00") + strings.Repeat(" ", 1<<20), status: 413, code: "PAYLOAD_TOO_LARGE"},
		{name: "no token", auth: "-", body: payment(newID("x"), payer, payee, "1.00"), status: 401, code: "UNAUTHENTICATED"},
		{name: "no token on a read", auth: "-", method: http.MethodGet, path: "/v1/transfers/" + paid, status: 401, code: "UNAUTHENTICATED"},
		{name: "a read of an unknown id", method: http.MethodGet, path: "/v1/transfers/" + newID("nothing"), status: 404, code: "TRANSFER_NOT_FOUND"},
		{name: "a read of a bad id", method: http.MethodGet, path: "/v1/transfers/%7Bx%7D", status: 400, code: "INVALID_ID"},
	} {
		t.Run(tt.name+" is "+tt.code, func(t *testing.T) {
			method, path, auth := tt.method, tt.path, "Bearer "+d.token
			if method == "" {
				method, path = http.MethodPost, "/v1/transfers"
			}
			if tt.auth == "-" {
				auth = ""
			}
			wantErrorAnswer(t, d.doWith(t, method, path, auth, strings.NewReader(tt.body)), tt.status, tt.code)
		})
	}
	assert.Equal(t, before, []instructions.State{holderValue(t, d, payer), holderValue(t, d, payee)}, "no refused request changed a holder")

	t.Run("GET /metrics counts transfers by outcome and shows the recovery worker", func(t *testing.T) {
		// The recovery worker's first pass reads every slot's index: on a
		// busy machine it may not have ended yet when the requests above have.
		passed := regexp.MustCompile(`atomledger_transfer_recovery_passes_total [1-9]`)
		var text string
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
			a := d.doWith(t, http.MethodGet, "/metrics", "", nil)
			require.Equal(t, http.StatusOK, a.status)
			if text = string(a.body); passed.MatchString(text) || time.Now().After(deadline) {
				break
			}
		}
		assert.Regexp(t, passed, text, "the worker runs")
		for _, want := range []string{
			`atomledger_transfers_total{outcome="committed"} 2`,          // the payment and its replay
			`atomledger_transfers_total{outcome="INSUFFICIENT_FUNDS"} 2`, // the abort and its replay
			`atomledger_transfers_total{outcome="IDEMPOTENCY_CONFLICT"} 1`,
			`atomledger_transfers_total{outcome="pending"} 0`,
			// The recovery worker's counters are the shared cluster's, whose
			// other tests' transfers it also takes: shown, not counted here.
			`atomledger_transfer_recovery_aborted_total `,
			`atomledger_transfer_recovery_errors_total `,
			`atomledger_transfer_recovery_finished_total `,
			`atomledger_transfer_recovery_stuck_parts_total `,
			`atomledger_http_request_duration_seconds_count{route="POST /v1/transfers",status="422"} 2`,
		} {
			assert.Contains(t, text, want)
		}
		assert.NotContains(t, text, `outcome="TRANSFER_NOT_FOUND"`, "not an outcome of a transfer")
	})
}

// TestTransferStatus pins the status of each kind of transfer state,
// including those a test against a healthy cluster does not reach.
func TestTransferStatus(t *testing.T) {
	aborted := func(code instructions.Code) engine.TransferState {
		return engine.TransferState{Status: engine.TransferAborted, Error: instructions.Errorf(code, instructions.NoOp, "x")}
	}
	for _, tt := range []struct {
		name string
		st   engine.TransferState
		want int
	}{
		{"committed is 200", engine.TransferState{Status: engine.TransferCommitted}, 200},
		{"committed with parts unfinished is 200 all the same", engine.TransferState{Status: engine.TransferCommitted, Complete: false}, 200},
		{"pending is 202", engine.TransferState{Status: engine.TransferPending}, 202},
		{"aborted by a rejected part is 422", aborted(instructions.CodeHoldExpired), 422},
		{"aborted for want of a decision in time is 422 too: it is final", aborted(instructions.CodeUnavailable), 422},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, transferStatus(tt.st))
		})
	}
	t.Run("engined apply exits 0 for a committed transfer only", func(t *testing.T) {
		assert.Equal(t, 0, transferExit(engine.TransferCommitted))
		assert.Equal(t, 1, transferExit(engine.TransferPending))
		assert.Equal(t, 1, transferExit(engine.TransferAborted))
	})
}

// TestServe_TransferOnDeadRedis: with Redis unreachable nothing is known,
// not even whether the transfer began: 503 UNAVAILABLE as an error object.
func TestServe_TransferOnDeadRedis(t *testing.T) {
	needRedis(t)
	t.Parallel()
	dead := startServe(t, nil, "--redis", deadAddr(t))
	wantErrorAnswer(t, dead.do(t, http.MethodPost, "/v1/transfers", payment(newID("x"), "a", "b", "1.00")),
		http.StatusServiceUnavailable, "UNAVAILABLE")
	wantErrorAnswer(t, dead.do(t, http.MethodGet, "/v1/transfers/"+newID("x"), ""), http.StatusServiceUnavailable, "UNAVAILABLE")
}

// TestApply_Transfer applies transfer files with engined apply, on Redis
// itself and through a daemon.
func TestApply_Transfer(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	bin := buildEngined(t)
	dir := t.TempDir()
	addrs := strings.Join(testCluster.Addrs(), ",")
	payer, payee := twoMasters(t, d)

	// wantState checks that the run printed a transfer's state, indented,
	// with the exit status.
	wantState := func(t *testing.T, e exited, code int) engine.TransferState {
		t.Helper()
		require.Equal(t, code, e.code, "stdout: %s\nstderr: %s", e.stdout, e.stderr)
		assert.True(t, strings.HasPrefix(e.stdout, "{\n  \""), "pretty-printed with two spaces: %s", e.stdout)
		var st engine.TransferState
		strictJSON(t, e.stdout, &st)
		return st
	}
	local := func(file string) proc { return engined(bin, "apply", "-f", file, "--redis", addrs) }
	remote := func(file string) proc {
		return engined(bin, "apply", "-f", file, "--server", d.url, "--token", d.token)
	}

	for _, via := range []struct {
		name string
		run  func(file string) proc
	}{{"on Redis", local}, {"through the daemon", remote}} {
		t.Run(via.name, func(t *testing.T) {
			payID := newID("pay")
			pay := writeFile(t, dir, payID+".json", payment(payID, payer, payee, "1.00"))
			t.Run("a committed transfer prints its state, exit 0", func(t *testing.T) {
				st := wantState(t, via.run(pay).run(t), 0)
				assert.Equal(t, engine.TransferCommitted, st.Status)
				assert.False(t, st.Replayed)
				if via.name == "on Redis" {
					// The process waited for the payment's booking before it
					// closed its client: the record is done, nothing left to
					// the recovery worker.
					rdb := testCluster.Client(nil)
					defer rdb.Close()
					done := rdb.HGet(context.Background(), cluster.Transfer(payID), stored.XferDone).Val()
					assert.Equal(t, "1", done, "the record of a payment that engined apply finished")
				}
			})
			t.Run("the same file again is replayed, exit 0", func(t *testing.T) {
				st := wantState(t, via.run(pay).run(t), 0)
				assert.Equal(t, engine.TransferCommitted, st.Status)
				assert.True(t, st.Replayed)
			})
			t.Run("an aborted transfer prints its state with the error, exit 1", func(t *testing.T) {
				f := writeFile(t, dir, newID("abort")+".json", payment(newID("abort"), payer, payee, "1000.00"))
				st := wantState(t, via.run(f).run(t), 1)
				assert.Equal(t, engine.TransferAborted, st.Status)
				require.NotNil(t, st.Error)
				assert.Equal(t, instructions.CodeInsufficientFunds, st.Error.Code)
				require.NotNil(t, st.PartIndex)
				assert.Equal(t, 0, *st.PartIndex)
			})
			t.Run("an unbalanced transfer is the error object INVALID_INSTRUCTION, exit 1", func(t *testing.T) {
				f := writeFile(t, dir, newID("unbalanced")+".json", transferJSON(newID("u"),
					payer, `[{"op": "debit", "asset": "CNY", "amount": "1.00"}]`,
					payee, `[{"op": "credit", "asset": "CNY", "amount": "2.00"}]`))
				body := wantError(t, via.run(f).run(t))
				assert.Equal(t, "INVALID_INSTRUCTION", body.Error.Code)
			})
			t.Run("another body under a used id is IDEMPOTENCY_CONFLICT, exit 1", func(t *testing.T) {
				f := writeFile(t, dir, newID("conflict")+".json", payment(payID, payer, payee, "2.00"))
				body := wantError(t, via.run(f).run(t))
				assert.Equal(t, "IDEMPOTENCY_CONFLICT", body.Error.Code)
			})
		})
	}
	var p instructions.State
	strictJSON(t, d.state(t, payer), &p)
	assert.Equal(t, "98.00", p.Balances["CNY"].Available, "one payment of 1.00 each way of applying")
}

// TestApply_TellsTransfersFromInstructions: a file is a transfer when it is
// an object with "parts"; anything else is read as an instruction.
func TestApply_TellsTransfersFromInstructions(t *testing.T) {
	for body, want := range map[string]bool{
		`{"id": "t", "parts": []}`:                    true,
		`{"id": "t", "parts": null}`:                  true,
		`{"id": "i", "holder": "h", "ops": []}`:       false,
		`{"id": "i", "holder": "h", "PARTS": []}`:     false,
		`[{"parts": []}]`:                             false,
		`{"id": "t", "parts": [`:                      false,
		`{"id": "i", "holder": "h", "parts": [], "x"`: false,
	} {
		assert.Equal(t, want, isTransfer([]byte(body)), body)
	}
}

// TestPostTransfer_RefusesBeforeRedis runs the handler alone: a body the
// decoder refuses never reaches the engine, whose Redis is not there.
func TestPostTransfer_RefusesBeforeRedis(t *testing.T) {
	s := testServer(t)
	rec := httptest.NewRecorder()
	s.handler().ServeHTTP(rec, authed(httptest.NewRequest(http.MethodPost, "/v1/transfers",
		strings.NewReader(`{"id": "t-1", "parts": [], "holder": "h"}`))))
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	var e errorBody
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e))
	assert.Equal(t, "INVALID_INSTRUCTION", e.Error.Code)
}

// authed adds testServer's token to r.
func authed(r *http.Request) *http.Request {
	r.Header.Set("Authorization", "Bearer t")
	return r
}
