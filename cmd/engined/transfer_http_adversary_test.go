package main

// An adversarial pass over POST /v1/transfers and GET /v1/transfers/{id}, as
// a hostile or careless HTTP client calls them: every refusal has the
// contract's status and code (DESIGN.md, Errors; docs/openapi.yaml), an
// error body in the user's words, and changes nothing on any holder; a
// transfer sent again, or raced, applies once.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// goInternals matches what a message to an HTTP client must not say: Go's
// types and packages, the decoder's or Redis's own words.
var goInternals = regexp.MustCompile(`(?i)(encoding/json|go-json|goccy|RawMessage|\bstruct\b|int64|float64|\[\]|map\[|\bunmarshal|` +
	`instructions\.|engine\.|main\.|reflect|\bredis\b|\blua\b|script|panic|runtime error|nil pointer)`)

// wantCleanRefusal checks an error answer (status, code) whose message
// names no Go internals, and gives the message.
func wantCleanRefusal(t *testing.T, a reply, status int, code string) string {
	t.Helper()
	wantErrorAnswer(t, a, status, code)
	var e errorBody
	require.NoError(t, json.Unmarshal(a.body, &e), "%s", a)
	assert.NotRegexp(t, goInternals, e.Error.Message, "the message speaks the user's terms")
	return e.Error.Message
}

// snapshot is the whole state of each holder (raw JSON, seq included), or
// "404" for one that does not exist.
func snapshot(t *testing.T, d *daemon, holders ...string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, h := range holders {
		a := d.do(t, http.MethodGet, "/v1/holders/"+h, "")
		switch a.status {
		case http.StatusOK:
			m[h] = string(a.body)
		case http.StatusNotFound:
			require.Equal(t, "HOLDER_NOT_FOUND", a.errorCode(), "%s", a)
			m[h] = "404"
		default:
			require.FailNow(t, "GET holder", "%s: %s", h, a)
		}
	}
	return m
}

// wantNoTransfer checks that GET /v1/transfers/{id} knows nothing of id.
func wantNoTransfer(t *testing.T, d *daemon, id string) {
	t.Helper()
	wantCleanRefusal(t, d.do(t, http.MethodGet, "/v1/transfers/"+id, ""), http.StatusNotFound, "TRANSFER_NOT_FOUND")
}

func cnyOf(t *testing.T, d *daemon, h string) instructions.Balance {
	t.Helper()
	return holderValue(t, d, h).Balances["CNY"]
}

// TestTransferHTTPAdversary_RefusedBodies: every malformed, ill-typed or
// invalid body is refused before Redis with the contract's status and code,
// a message in the user's terms, no transfer recorded under its id and
// nothing changed on any holder, not even a seq.
func TestTransferHTTPAdversary_RefusedBodies(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	payer, payee := twoMasters(t, d)
	third := newID("third")
	d.mustApply(t, instructions.New(newID("open"), third).Open().Credit("CNY", "10.00").EarnPoints("50"))
	before := snapshot(t, d, payer, payee, third)

	debit := func(amount string) string { return `[{"op": "debit", "asset": "CNY", "amount": "` + amount + `"}]` }
	credit := func(amount string) string { return `[{"op": "credit", "asset": "CNY", "amount": "` + amount + `"}]` }
	manyParts := func(id string, n int) string {
		args := []string{payer, debit(fmt.Sprintf("%d.00", n-1))}
		for i := 1; i < n; i++ {
			args = append(args, newID("p"), credit("1.00"))
		}
		return transferJSON(id, args...)
	}
	manyOps := func(n int) string {
		ops := make([]string, n)
		for i := range ops {
			ops[i] = `{"op": "credit", "asset": "CNY", "amount": "0.01"}`
		}
		return "[" + strings.Join(ops, ", ") + "]"
	}
	type refusal struct {
		name   string
		id     string // the id the body names, checked unknown afterwards; "" when it is not a valid one
		body   string
		status int
		code   string
		says   string // a word the message must contain, if any
	}
	var cases []refusal
	add := func(name, code string, body func(id string) string, says string) {
		id := newID("bad")
		cases = append(cases, refusal{name: name, id: id, body: body(id), status: 400, code: code, says: says})
	}
	addBadID := func(name, id string) {
		cases = append(cases, refusal{name: name, body: payment(id, payer, payee, "1.00"), status: 400, code: "INVALID_ID", says: "id"})
	}
	pay := func(id string) string { return payment(id, payer, payee, "1.00") }
	const II, IA, ID = "INVALID_INSTRUCTION", "INVALID_AMOUNT", "INVALID_ID"

	// Malformed and truncated.
	add("an empty body", II, func(string) string { return "" }, "")
	add("a truncated body", II, func(id string) string { b := pay(id); return b[:len(b)/2] }, "JSON")
	add("a body cut after the last brace", II, func(id string) string { return strings.TrimSuffix(pay(id), "]}\n") }, "")
	add("null", II, func(string) string { return "null" }, "")
	add("a list", II, func(id string) string { return "[" + pay(id) + "]" }, "")
	add("a string", II, func(string) string { return `"transfer"` }, "")
	add("two transfers in one body", II, func(id string) string { return pay(id) + pay(id) }, "")
	add("a trailing comma", II, func(id string) string { return strings.Replace(pay(id), "]}\n", "],}", 1) }, "")
	add("a byte order mark", II, func(id string) string { return "\xef\xbb\xbf" + pay(id) }, "")
	add("invalid UTF-8", II, func(id string) string { return strings.Replace(pay(id), `"parts"`, "\"parts\xff\"", 1) }, "UTF-8")
	// Keys given twice, however spelled, and unknown keys.
	add(`"id" twice, the same`, II, func(id string) string { return strings.Replace(pay(id), `"parts"`, `"id": "`+id+`", "parts"`, 1) }, "twice")
	add(`"id" twice, another`, II, func(id string) string { return strings.Replace(pay(id), `"parts"`, `"id": "`+id+`-2", "parts"`, 1) }, "twice")
	add(`"id" twice, once escaped`, II, func(id string) string { return strings.Replace(pay(id), `"parts"`, `"i\u0064": "`+id+`", "parts"`, 1) }, "twice")
	add(`"parts" twice`, II, func(id string) string {
		return `{"id": "` + id + `", "parts": [], "parts": [{"holder": "` + payer + `", "ops": ` + debit("1.00") +
			`}, {"holder": "` + payee + `", "ops": ` + credit("1.00") + `}]}`
	}, "twice")
	add(`"holder" twice in a part`, II, func(id string) string {
		return strings.Replace(pay(id), `"holder": "`+payee+`"`, `"holder": "`+third+`", "holder": "`+payee+`"`, 1)
	}, "twice")
	add(`"ops" twice in a part`, II, func(id string) string {
		return strings.Replace(pay(id), `"holder": "`+payer+`", "ops": `, `"holder": "`+payer+`", "ops": `+debit("2.00")+`, "ops": `, 1)
	}, "twice")
	add(`"amount" twice in an op`, II, func(id string) string {
		return strings.Replace(pay(id), `"asset": "CNY", "amount": "1.00"}`, `"asset": "CNY", "amount": "9.00", "amount": "1.00"}`, 1)
	}, "twice")
	add(`"ID" in capitals`, II, func(id string) string { return strings.Replace(pay(id), `"id"`, `"ID"`, 1) }, "")
	add(`"Parts" in capitals`, II, func(id string) string { return strings.Replace(pay(id), `"parts"`, `"Parts"`, 1) }, "")
	add("an unknown field in the transfer", II, func(id string) string { return strings.Replace(pay(id), `"parts"`, `"memo": "m", "parts"`, 1) }, "memo")
	add("a counterparty in a part", II, func(id string) string { return strings.Replace(pay(id), `"ops"`, `"counterparty": "shop", "ops"`, 1) }, "counterparty")
	add("an unknown field in an op", II, func(id string) string { return strings.Replace(pay(id), `"asset"`, `"memo": "m", "asset"`, 1) }, "memo")
	add("a ttl_ms on a debit", II, func(id string) string { return strings.Replace(pay(id), `"asset"`, `"ttl_ms": 1000, "asset"`, 1) }, "")
	// Wrong JSON types.
	add("a number for the id", II, func(string) string { return `{"id": 5, "parts": []}` }, "id")
	add("an object for parts", II, func(id string) string { return `{"id": "` + id + `", "parts": {}}` }, "parts")
	add("a string for parts", II, func(id string) string { return `{"id": "` + id + `", "parts": "all"}` }, "parts")
	add("parts null", II, func(id string) string { return `{"id": "` + id + `", "parts": null}` }, "parts")
	add("parts left out", II, func(id string) string { return `{"id": "` + id + `"}` }, "")
	add("no parts", II, func(id string) string { return `{"id": "` + id + `", "parts": []}` }, "")
	add("null parts", II, func(id string) string { return `{"id": "` + id + `", "parts": [null, null]}` }, "")
	add("a number for a part", II, func(id string) string { return `{"id": "` + id + `", "parts": [1, 2]}` }, "")
	add("an object for ops", II, func(id string) string { return strings.Replace(pay(id), debit("1.00"), `{"op": "debit"}`, 1) }, "ops")
	add("a null op", II, func(id string) string { return strings.Replace(pay(id), debit("1.00"), `[null]`, 1) }, "")
	add("a number for an op", II, func(id string) string { return strings.Replace(pay(id), debit("1.00"), `[7]`, 1) }, "")
	add("a number for the op's name", II, func(id string) string { return strings.Replace(pay(id), `"op": "debit"`, `"op": 1`, 1) }, "op")
	add("an asset null", II, func(id string) string { return strings.Replace(pay(id), `"asset": "CNY"`, `"asset": null`, 1) }, "asset")
	add("a boolean for the holder", II, func(id string) string { return strings.Replace(pay(id), `"holder": "`+payer+`"`, `"holder": true`, 1) }, "holder")
	// Amounts.
	add("an amount as a JSON number", IA, func(id string) string { return strings.Replace(pay(id), `"1.00"`, `1.00`, 2) }, "")
	add("an amount as a big JSON number", IA, func(id string) string { return strings.Replace(pay(id), `"1.00"`, `9007199254740993`, 2) }, "")
	add("an amount null", IA, func(id string) string { return strings.Replace(pay(id), `"1.00"`, `null`, 2) }, "")
	add("an amount left out", II, func(id string) string { return strings.ReplaceAll(pay(id), `, "amount": "1.00"`, ``) }, "amount")
	for _, amt := range []string{"-1.00", "0", "0.00", "0.001", "1.001", "1.000", "1e2", "+1.00", " 1.00", "1.00 ", "1,00", "0x10", "１.00", "NaN",
		"Infinity", ".5", "1.", "90071992547409.92", "99999999999999999999999999999999999999999"} {
		add(fmt.Sprintf("the amount %q", amt), IA, func(id string) string { return payment(id, payer, payee, amt) }, "")
	}
	// An empty amount is refused as an empty op field ("leave it out"), as
	// in an instruction: INVALID_INSTRUCTION naming the field.
	add("the amount \"\"", II, func(id string) string { return payment(id, payer, payee, "") }, "amount")
	add("points with a fraction", IA, func(id string) string {
		return transferJSON(id, third, `[{"op": "spend_points", "amount": "1.5"}]`, payee, `[{"op": "earn_points", "amount": "1.5"}]`)
	}, "")
	add("an unknown asset", "UNKNOWN_ASSET", func(id string) string {
		return transferJSON(id, payer, `[{"op": "debit", "asset": "XYZ", "amount": "1.00"}]`, payee, `[{"op": "credit", "asset": "XYZ", "amount": "1.00"}]`)
	}, "XYZ")
	// Parts.
	add("a part with no ops", II, func(id string) string { return transferJSON(id, payer, debit("1.00"), payee, `[]`) }, "")
	add("a part with ops null", II, func(id string) string { return transferJSON(id, payer, debit("1.00"), payee, `null`) }, "")
	add("a part without ops", II, func(id string) string {
		return `{"id": "` + id + `", "parts": [{"holder": "` + payer + `", "ops": ` + debit("1.00") + `}, {"holder": "` + payee + `"}]}`
	}, "")
	add("a part without a holder", ID, func(id string) string {
		return `{"id": "` + id + `", "parts": [{"holder": "` + payer + `", "ops": ` + debit("1.00") + `}, {"ops": ` + credit("1.00") + `}]}`
	}, "holder")
	add("one holder in two parts", II, func(id string) string { return transferJSON(id, payer, debit("1.00"), payer, credit("1.00")) }, payer)
	add("a holder paying itself in one part", II, func(id string) string {
		return transferJSON(id, payer, `[{"op": "debit", "asset": "CNY", "amount": "1.00"}, {"op": "credit", "asset": "CNY", "amount": "1.00"}]`)
	}, "")
	add("a single part", II, func(id string) string { return transferJSON(id, payer, `[{"op": "earn_points", "amount": "1"}]`) }, "")
	add("17 parts", II, func(id string) string { return manyParts(id, 17) }, "")
	add("65 ops in a part", "TOO_MANY_OPS", func(id string) string { return transferJSON(id, payer, debit("0.65"), payee, manyOps(65)) }, "")
	add("parts that do not balance", II, func(id string) string { return transferJSON(id, payer, debit("1.00"), payee, credit("0.99")) }, "balance")
	add("parts that balance in another asset", II, func(id string) string {
		return transferJSON(id, payer, debit("1.00"), payee, `[{"op": "credit", "asset": "USD", "amount": "1.00"}]`)
	}, "balance")
	add("money for points", II, func(id string) string {
		return transferJSON(id, payer, `[{"op": "debit", "asset": "CNY", "amount": "1"}]`, payee, `[{"op": "earn_points", "amount": "1"}]`)
	}, "balance")
	add("credits only", II, func(id string) string { return transferJSON(id, payer, credit("1.00"), payee, credit("1.00")) }, "balance")
	add("an op a transfer cannot take", II, func(id string) string {
		return transferJSON(id, payer, `[{"op": "freeze", "asset": "CNY", "amount": "1.00", "hold": "h1"}]`, payee, credit("1.00"))
	}, "freeze")
	add("an open in a part", II, func(id string) string {
		return transferJSON(id, payer, debit("1.00"), newID("new"), `[{"op": "open"}, {"op": "credit", "asset": "CNY", "amount": "1.00"}]`)
	}, "open")
	add("an unknown op", II, func(id string) string {
		return transferJSON(id, payer, `[{"op": "teleport", "asset": "CNY", "amount": "1.00"}]`, payee, credit("1.00"))
	}, "teleport")
	add("a settle with an amount and no leg", II, func(id string) string {
		return transferJSON(id, payee, `[{"op": "settle", "hold": "order-1", "amount": "1.00"}]`, payer, `[{"op": "credit", "asset": "USD", "amount": "1.00"}]`)
	}, "")
	add("a settle with an empty leg", II, func(id string) string {
		return transferJSON(id, payee, `[{"op": "settle", "hold": "order-1", "leg": ""}]`, payer, `[{"op": "credit", "asset": "USD", "amount": "1.00"}]`)
	}, "leg")
	add("two settles without an amount", II, func(id string) string {
		return transferJSON(id, payee, `[{"op": "settle", "hold": "order-1", "leg": "USD"}, {"op": "settle", "hold": "order-2", "leg": "USD"}]`,
			payer, `[{"op": "credit", "asset": "USD", "amount": "1.00"}]`)
	}, "")
	add("a settle of a transfer's hold", ID, func(id string) string {
		return transferJSON(id, payee, `[{"op": "settle", "hold": "x:other", "leg": "USD", "amount": "1.00"}]`, payer, `[{"op": "credit", "asset": "USD", "amount": "1.00"}]`)
	}, "x:")
	add("a lane's name as a holder", ID, func(id string) string { return payment(id, payer, payee+"#1", "1.00") }, "")
	add("braces in a holder", ID, func(id string) string { return payment(id, payer, "{"+payee+"}", "1.00") }, "")
	add("an empty holder", ID, func(id string) string { return payment(id, payer, "", "1.00") }, "")
	add("a holder of 65 characters", ID, func(id string) string { return payment(id, payer, strings.Repeat("h", 65), "1.00") }, "")
	// Sizes.
	add("a body over 64 KiB", II, func(id string) string { return pay(id) + strings.Repeat(" ", 64<<10) }, "")
	cases = append(cases, refusal{name: "a body over 1 MiB", id: newID("bad"), status: 413, code: "PAYLOAD_TOO_LARGE"})
	cases[len(cases)-1].body = pay(cases[len(cases)-1].id) + strings.Repeat(" ", 1<<20)
	// Ids.
	addBadID("an empty id", "")
	addBadID("the id .", ".")
	addBadID("the id ..", "..")
	addBadID("an id with a space", "pay 1")
	addBadID("an id with a slash", "pay/1")
	addBadID("an id with braces", "{pay}")
	addBadID("an id with a hash", "pay#1")
	addBadID("an id with an accent", "payé")
	addBadID("an id of 61 characters", strings.Repeat("a", 61))
	addBadID("an id with an escaped NUL", `pay\u00001`)
	addBadID("an id with a newline", `pay\n1`)
	addBadID("an id of the hot sweep's", "hot-"+newID("x"))
	cases = append(cases, refusal{name: "an id null", body: `{"id": null, "parts": [{"holder": "` + payer + `", "ops": ` + debit("1.00") +
		`}, {"holder": "` + payee + `", "ops": ` + credit("1.00") + `}]}`, status: 400, code: ID})

	for _, c := range cases {
		t.Run(c.name+" is "+c.code, func(t *testing.T) {
			msg := wantCleanRefusal(t, d.do(t, http.MethodPost, "/v1/transfers", c.body), c.status, c.code)
			if c.says != "" {
				assert.Contains(t, msg, c.says)
			}
			if c.id != "" {
				wantNoTransfer(t, d, c.id)
			}
		})
	}
	assert.Equal(t, before, snapshot(t, d, payer, payee, third), "no refused body changed any holder, not even its seq")

	t.Run("an id refused before Redis is not taken: the same id with a good body applies", func(t *testing.T) {
		id := newID("reuse")
		wantCleanRefusal(t, d.do(t, http.MethodPost, "/v1/transfers", transferJSON(id, payer, debit("1.00"), payee, credit("0.99"))), 400, II)
		st := wantTransfer(t, d.do(t, http.MethodPost, "/v1/transfers", payment(id, payer, payee, "1.00")), http.StatusOK)
		assert.Equal(t, engine.TransferCommitted, st.Status)
		assert.False(t, st.Replayed)
		assert.Equal(t, "99.00", cnyOf(t, d, payer).Available)
	})
}

// TestTransferHTTPAdversary_SameIDAgain: the same transfer sent again is
// replayed (the amount spelled otherwise, keys in another order, other
// spaces: the same body by its fingerprint) and applies nothing twice;
// another body under the id is 409 IDEMPOTENCY_CONFLICT and changes
// nothing anywhere, whoever its holders.
func TestTransferHTTPAdversary_SameIDAgain(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	payer, payee := twoMasters(t, d)
	other := newID("other")
	d.mustApply(t, instructions.New(newID("open"), other).Open().Credit("CNY", "50.00"))
	post := func(t *testing.T, body string) reply { return d.do(t, http.MethodPost, "/v1/transfers", body) }

	id := newID("pay")
	first := wantTransfer(t, post(t, payment(id, payer, payee, "30.00")), http.StatusOK)
	require.Equal(t, engine.TransferCommitted, first.Status)
	require.False(t, first.Replayed)
	after := snapshot(t, d, payer, payee, other)
	require.Equal(t, "70.00", cnyOf(t, d, payer).Available)
	require.Equal(t, "30.00", cnyOf(t, d, payee).Available)

	reordered := `{"parts":[{"ops":[{"amount":"30.00","asset":"CNY","op":"debit"}],"holder":"` + payer + `"},` +
		`{"ops":[{"amount":"30.00","asset":"CNY","op":"credit"}],"holder":"` + payee + `"}],"id":"` + id + `"}`
	for name, body := range map[string]string{
		"the same body":                       payment(id, payer, payee, "30.00"),
		`the amount spelled "30.0"`:           payment(id, payer, payee, "30.0"),
		`the amount spelled "30"`:             payment(id, payer, payee, "30"),
		`the amount spelled "030.00"`:         payment(id, payer, payee, "030.00"),
		"keys in another order, no spaces":    reordered,
		"an escaped character in a holder id": strings.Replace(payment(id, payer, payee, "30.00"), `"holder": "p`, `"holder": "\u0070`, 1),
	} {
		t.Run(name+" is replayed: 200, the first answer, nothing applied again", func(t *testing.T) {
			again := wantTransfer(t, post(t, body), http.StatusOK)
			assert.True(t, again.Replayed)
			again.Replayed = false
			assert.Equal(t, first, again)
			assert.Equal(t, after, snapshot(t, d, payer, payee, other))
		})
	}
	ghost := newID("ghost")
	for _, c := range []struct{ name, body string }{
		{"another amount", payment(id, payer, payee, "30.01")},
		{"another payee", payment(id, payer, other, "30.00")},
		{"the parts the other way round", transferJSON(id, payee, `[{"op": "credit", "asset": "CNY", "amount": "30.00"}]`, payer, `[{"op": "debit", "asset": "CNY", "amount": "30.00"}]`)},
		{"another op", transferJSON(id, payer, `[{"op": "debit", "asset": "CNY", "amount": "30.00"}, {"op": "earn_points", "amount": "1"}]`, payee, `[{"op": "credit", "asset": "CNY", "amount": "30.00"}, {"op": "spend_points", "amount": "1"}]`)},
		{"a payee that does not exist", payment(id, payer, ghost, "30.00")},
		{"another payer", payment(id, other, payee, "30.00")},
	} {
		t.Run(c.name+" is 409 IDEMPOTENCY_CONFLICT and changes no balance", func(t *testing.T) {
			prev := snapshot(t, d, payer, payee, other, ghost)
			wantCleanRefusal(t, post(t, c.body), http.StatusConflict, "IDEMPOTENCY_CONFLICT")
			now := snapshot(t, d, payer, payee, other, ghost)
			assert.Equal(t, after[payer], now[payer], "the payer's run replays: not even its seq moves")
			assert.Equal(t, after[payee], now[payee])
			assert.Equal(t, "404", now[ghost])
			if c.name == "another payer" {
				// Its run, sent beside the claim, applied and was given back
				// (docs/transfers.md, What two round trips cost): its seq
				// moved, nothing else.
				assert.Equal(t, holderValueOf(t, prev[other]), holderValue(t, d, other))
			} else {
				assert.Equal(t, prev[other], now[other])
			}
			assert.Equal(t, first, wantTransfer(t, d.do(t, http.MethodGet, "/v1/transfers/"+id, ""), http.StatusOK), "the transfer is the first body's")
		})
	}
	t.Run("the first body again after the conflicts is still replayed", func(t *testing.T) {
		again := wantTransfer(t, post(t, payment(id, payer, payee, "30.00")), http.StatusOK)
		assert.True(t, again.Replayed)
		assert.Equal(t, "70.00", cnyOf(t, d, payer).Available)
		assert.Equal(t, "30.00", cnyOf(t, d, payee).Available)
		assert.Equal(t, "50.00", cnyOf(t, d, other).Available)
	})

	// An aborted transfer stays aborted: the same body replays the abort,
	// spelled otherwise too, even once the payer could pay; a smaller amount
	// that would pass is another body.
	refused := newID("refused")
	var aborted engine.TransferState
	t.Run("a payer without the funds is 422 aborted INSUFFICIENT_FUNDS", func(t *testing.T) {
		before := snapshot(t, d, payer, payee)
		aborted = wantTransfer(t, post(t, payment(refused, payer, payee, "70.01")), http.StatusUnprocessableEntity)
		assert.Equal(t, engine.TransferAborted, aborted.Status)
		require.NotNil(t, aborted.PartIndex)
		assert.Equal(t, 0, *aborted.PartIndex)
		require.NotNil(t, aborted.Error)
		assert.Equal(t, instructions.CodeInsufficientFunds, aborted.Error.Code)
		assert.Equal(t, 0, aborted.Error.OpIndex)
		assert.NotRegexp(t, goInternals, aborted.Error.Message)
		assert.Equal(t, before, snapshot(t, d, payer, payee), "a one-payer run rejected changes nothing but its idempotency record")
	})
	d.mustApply(t, instructions.New(newID("topup"), payer).Credit("CNY", "100.00"))
	before := snapshot(t, d, payer, payee)
	t.Run("sent again once the payer could pay, it is the same abort, replayed", func(t *testing.T) {
		for _, amount := range []string{"70.01", "70.010", "70.0100"} {
			if amount != "70.01" {
				// More digits than the scale are refused before anything.
				wantCleanRefusal(t, post(t, payment(refused, payer, payee, amount)), 400, "INVALID_AMOUNT")
				continue
			}
			again := wantTransfer(t, post(t, payment(refused, payer, payee, amount)), http.StatusUnprocessableEntity)
			assert.True(t, again.Replayed)
			again.Replayed = false
			assert.Equal(t, aborted, again)
		}
		assert.Equal(t, before, snapshot(t, d, payer, payee))
	})
	t.Run("a smaller amount under the aborted id is 409, not a payment", func(t *testing.T) {
		wantCleanRefusal(t, post(t, payment(refused, payer, payee, "1.00")), http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		assert.Equal(t, before, snapshot(t, d, payer, payee))
		assert.Equal(t, aborted, wantTransfer(t, d.do(t, http.MethodGet, "/v1/transfers/"+refused, ""), http.StatusOK))
	})
}

// TestTransferHTTPAdversary_UnknownHolders: a payment to or from a holder
// that does not exist is 422 aborted HOLDER_NOT_FOUND naming its part;
// nothing changes anywhere (the payer unmoved, the unknown holder still
// unknown); the transfer stays aborted once the holder is opened.
func TestTransferHTTPAdversary_UnknownHolders(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	payer, payee := twoMasters(t, d)
	post := func(t *testing.T, body string) reply { return d.do(t, http.MethodPost, "/v1/transfers", body) }
	// The payee paid once, so that the engine has seen it (the quick path).
	wantTransfer(t, post(t, payment(newID("warm"), payer, payee, "1.00")), http.StatusOK)

	for _, tt := range []struct {
		name string
		part int
	}{{"to a payee that does not exist", 1}, {"from a payer that does not exist", 0}} {
		t.Run(tt.name, func(t *testing.T) {
			ghost, id := newID("ghost"), newID("pay")
			from, to := payer, ghost
			known := payer
			if tt.part == 0 {
				from, to, known = ghost, payee, payee
			}
			before := snapshot(t, d, known, ghost)
			require.Equal(t, "404", before[ghost])
			body := payment(id, from, to, "5.00")
			st := wantTransfer(t, post(t, body), http.StatusUnprocessableEntity)
			assert.Equal(t, engine.TransferAborted, st.Status)
			assert.True(t, st.Complete)
			assert.Equal(t, []string{from, to}, st.Holders)
			require.NotNil(t, st.PartIndex)
			assert.Equal(t, tt.part, *st.PartIndex)
			require.NotNil(t, st.Error)
			assert.Equal(t, instructions.CodeHolderNotFound, st.Error.Code)
			assert.NotRegexp(t, goInternals, st.Error.Message)
			assert.Equal(t, before, snapshot(t, d, known, ghost), "nothing changed anywhere, not even a seq")
			got := wantTransfer(t, d.do(t, http.MethodGet, "/v1/transfers/"+id, ""), http.StatusOK)
			assert.Equal(t, st, got)

			// The unknown holder opened, with funds: the same body is the
			// same abort, and nobody is paid or charged.
			d.mustApply(t, instructions.New(newID("open"), ghost).Open().Credit("CNY", "20.00"))
			opened := snapshot(t, d, known, ghost)
			again := wantTransfer(t, post(t, body), http.StatusUnprocessableEntity)
			assert.True(t, again.Replayed)
			again.Replayed = false
			assert.Equal(t, st, again)
			assert.Equal(t, opened, snapshot(t, d, known, ghost))
			assert.Equal(t, "20.00", cnyOf(t, d, ghost).Available)
		})
	}
	t.Run("two payers, one of them unknown: 422 HOLDER_NOT_FOUND, the other's value unchanged", func(t *testing.T) {
		ghost, id := newID("ghost"), newID("trade")
		before := holderValue(t, d, payer)
		// payer sells CNY for the ghost's USD: two paying parts, two phases.
		st := wantTransfer(t, post(t, transferJSON(id,
			payer, `[{"op": "debit", "asset": "CNY", "amount": "2.00"}, {"op": "credit", "asset": "USD", "amount": "1.00"}]`,
			ghost, `[{"op": "debit", "asset": "USD", "amount": "1.00"}, {"op": "credit", "asset": "CNY", "amount": "2.00"}]`)), http.StatusUnprocessableEntity)
		require.NotNil(t, st.Error)
		assert.Equal(t, instructions.CodeHolderNotFound, st.Error.Code)
		require.NotNil(t, st.PartIndex)
		assert.Equal(t, 1, *st.PartIndex)
		assert.True(t, st.Complete)
		assert.Equal(t, before, holderValue(t, d, payer), "balances, holds, points as they were (the two phases count seq)")
		assert.Equal(t, "404", snapshot(t, d, ghost)[ghost], "nothing is ever written for an unknown holder's state")
	})
	t.Run("a payer without funds towards a payee seen: 422 INSUFFICIENT_FUNDS, nothing changed", func(t *testing.T) {
		before := snapshot(t, d, payer, payee)
		st := wantTransfer(t, post(t, payment(newID("pay"), payer, payee, "1000.00")), http.StatusUnprocessableEntity)
		require.NotNil(t, st.Error)
		assert.Equal(t, instructions.CodeInsufficientFunds, st.Error.Code)
		assert.Equal(t, before, snapshot(t, d, payer, payee))
	})
}

// TestTransferHTTPAdversary_RacedRetries: a careless client sends one
// transfer id from several connections at once, with the same body or with
// others: one body wins and is applied once; the same body answers its
// state, every other body 409; no money is made or lost.
func TestTransferHTTPAdversary_RacedRetries(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	payer, payee := twoMasters(t, d)
	second := newID("second")
	d.mustApply(t, instructions.New(newID("open"), second).Open().Credit("CNY", "100.00"))
	// Paid once each, so that the engine has seen the payee (the quick path).
	wantTransfer(t, d.do(t, http.MethodPost, "/v1/transfers", payment(newID("warm"), payer, payee, "1.00")), http.StatusOK)
	wantTransfer(t, d.do(t, http.MethodPost, "/v1/transfers", payment(newID("warm"), second, payee, "1.00")), http.StatusOK)
	const n = 8
	race := func(bodies []string) []reply {
		var wg sync.WaitGroup
		out := make([]reply, len(bodies))
		start := make(chan struct{})
		for i, b := range bodies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				out[i] = d.do(t, http.MethodPost, "/v1/transfers", b)
			}()
		}
		close(start)
		wg.Wait()
		return out
	}

	t.Run("the same body from 8 connections: every answer 200 committed, applied once", func(t *testing.T) {
		id := newID("same")
		bodies := make([]string, n)
		for i := range bodies {
			bodies[i] = payment(id, payer, payee, []string{"5.00", "5.0", "5"}[i%3])
		}
		fresh := 0
		for _, a := range race(bodies) {
			st := wantTransfer(t, a, http.StatusOK)
			assert.Equal(t, engine.TransferCommitted, st.Status)
			if !st.Replayed {
				fresh++
			}
		}
		assert.GreaterOrEqual(t, fresh, 1)
		assert.Equal(t, "94.00", cnyOf(t, d, payer).Available, "100 - 1 - 5")
		assert.Equal(t, "7.00", cnyOf(t, d, payee).Available, "1 + 1 + 5")
	})
	t.Run("8 bodies under one id, amounts and payers differing: one applies, the others 409", func(t *testing.T) {
		id := newID("raced")
		bodies := make([]string, n)
		for i := range bodies {
			from := payer
			if i%2 == 1 {
				from = second
			}
			bodies[i] = payment(id, from, payee, fmt.Sprintf("%d.00", i+1))
		}
		p0, s0, q0 := cnyOf(t, d, payer), cnyOf(t, d, second), cnyOf(t, d, payee)
		winner := -1
		answers := race(bodies)
		for i, a := range answers {
			t.Logf("body %d (%s pays %d.00): %d %s", i, []string{"payer", "second"}[i%2], i+1, a.status, a.body)
		}
		owner := -1 // the body that claimed the id
		for i, a := range answers {
			switch a.status {
			case http.StatusOK:
				winner = i
			case http.StatusUnprocessableEntity:
				st := wantTransfer(t, a, http.StatusUnprocessableEntity)
				assert.Equal(t, engine.TransferAborted, st.Status)
				if assert.NotNil(t, st.Error) {
					assert.ErrorIs(t, st.Error, engine.ErrIdempotencyConflict)
				}
			default:
				wantCleanRefusal(t, a, http.StatusConflict, "IDEMPOTENCY_CONFLICT")
				continue
			}
			assert.Equal(t, -1, owner, "one body owns the id: %d and %d both answered as it", owner, i)
			owner = i
		}
		// A known limit (docs/transfers.md, Limits): the body that claimed
		// the id can find its payer's step taken by another body's run of
		// the same payer, which reached the payer's master first; it is then
		// aborted IDEMPOTENCY_CONFLICT, and no body applies.
		assert.GreaterOrEqual(t, owner, 0, "one body owns the id")
		if winner < 0 {
			for _, h := range []string{payer, second, payee} {
				assert.Empty(t, holderValue(t, d, h).Holds[("x:"+id)], "no transfer hold left")
			}
			assert.Equal(t, []instructions.Balance{p0, s0, q0}, []instructions.Balance{cnyOf(t, d, payer), cnyOf(t, d, second), cnyOf(t, d, payee)},
				"nobody applied: nothing moved")
			return
		}
		paid := int64(winner+1) * 100
		units := func(b instructions.Balance) int64 {
			v, ok := instructions.ToUnits(b.Available, 2)
			require.True(t, ok, b.Available)
			return v
		}
		p1, s1, q1 := cnyOf(t, d, payer), cnyOf(t, d, second), cnyOf(t, d, payee)
		assert.Equal(t, units(q0)+paid, units(q1), "the payee paid once, the winner's amount")
		if winner%2 == 0 {
			assert.Equal(t, units(p0)-paid, units(p1))
			assert.Equal(t, s0, s1, "the other payer's runs given back")
		} else {
			assert.Equal(t, units(s0)-paid, units(s1))
			assert.Equal(t, p0, p1, "the other payer's runs given back")
		}
		for _, h := range []string{payer, second, payee} {
			assert.Equal(t, "0.00", cnyOf(t, d, h).Frozen)
			assert.Empty(t, holderValue(t, d, h).Holds[("x:"+id)], "no transfer hold left")
		}
		st := wantTransfer(t, d.do(t, http.MethodGet, "/v1/transfers/"+id, ""), http.StatusOK)
		t.Logf("GET: %+v; payer %v -> %v, second %v -> %v, payee %v -> %v", st, p0, p1, s0, s1, q0, q1)
		assert.Equal(t, engine.TransferCommitted, st.Status)
		assert.Equal(t, []string{[]string{payer, second}[winner%2], payee}, st.Holders)
	})
}

// TestTransferHTTPAdversary_OddReads: GET /v1/transfers/{id} with ids that
// are not ids, escaped or not, empty, very long: 400 INVALID_ID in JSON for
// an id the route reaches, 404 TRANSFER_NOT_FOUND for a valid one never
// seen, the plain answers of docs/openapi.yaml for paths off the list; never
// a 500, never the id echoed whole.
func TestTransferHTTPAdversary_OddReads(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	d.client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	long := strings.Repeat("a", 4000)
	for _, tt := range []struct {
		method, path string
		status       int
		code         string // "" for a plain-text answer
		header       string // Location or Allow
	}{
		{http.MethodGet, "/v1/transfers/" + newID("never"), 404, "TRANSFER_NOT_FOUND", ""},
		{http.MethodGet, "/v1/transfers/" + strings.Repeat("z", 60), 404, "TRANSFER_NOT_FOUND", ""},
		{http.MethodGet, "/v1/transfers/x:" + newID("never"), 404, "TRANSFER_NOT_FOUND", ""},
		{http.MethodGet, "/v1/transfers/" + newID("never") + "?id=other", 404, "TRANSFER_NOT_FOUND", ""},
		{http.MethodGet, "/v1/transfers/" + strings.Repeat("a", 61), 400, "INVALID_ID", ""},
		{http.MethodGet, "/v1/transfers/" + long, 400, "INVALID_ID", ""},
		{http.MethodGet, "/v1/transfers/a%2Fb", 400, "INVALID_ID", ""},
		{http.MethodGet, "/v1/transfers/a%2F", 400, "INVALID_ID", ""},
		{http.MethodGet, "/v1/holders/a%2F", 400, "INVALID_ID", ""},
		{http.MethodGet, "/v1/transfers/%2e%2e", 400, "INVALID_ID", ""},
		{http.MethodGet, "/v1/transfers/%2e", 400, "INVALID_ID", ""},
		{http.MethodGet, "/v1/transfers/%7Bx%7D", 400, "INVALID_ID", ""},
		{http.MethodGet, "/v1/transfers/%20", 400, "INVALID_ID", ""},
		{http.MethodGet, "/v1/transfers/a%23b", 400, "INVALID_ID", ""},
		{http.MethodGet, "/v1/transfers/%C3%A9", 400, "INVALID_ID", ""},
		{http.MethodGet, "/v1/transfers/%ff", 400, "INVALID_ID", ""},
		{http.MethodGet, "/v1/transfers/a%0Ab", 400, "INVALID_ID", ""},
		{http.MethodGet, "/v1/transfers/", 404, "", ""},
		{http.MethodGet, "/v1/transfers/a/b", 404, "", ""},
		{http.MethodGet, "/v1/transfers/..", 307, "", "/v1/"},
		{http.MethodGet, "/v1/transfers//x", 307, "", "/v1/transfers/x"},
		{http.MethodGet, "/v1/transfers", 405, "", "POST"},
		{http.MethodPost, "/v1/transfers/x", 405, "", "GET, HEAD"},
		{http.MethodPut, "/v1/transfers", 405, "", "POST"},
		{http.MethodDelete, "/v1/transfers/x", 405, "", "GET, HEAD"},
	} {
		t.Run(fmt.Sprintf("%s %.60s is %d", tt.method, tt.path, tt.status), func(t *testing.T) {
			a := d.do(t, tt.method, tt.path, "")
			if tt.code != "" {
				wantCleanRefusal(t, a, tt.status, tt.code)
				assert.NotContains(t, string(a.body), long, "a long id is clipped in the message")
				return
			}
			assert.Equal(t, tt.status, a.status, "%s", a)
			switch tt.status {
			case 307:
				assert.Equal(t, tt.header, a.header.Get("Location"))
			case 405:
				assert.Equal(t, tt.header, a.header.Get("Allow"))
			}
		})
	}
	t.Run("without a token a read is 401, the id unread", func(t *testing.T) {
		wantCleanRefusal(t, d.doWith(t, http.MethodGet, "/v1/transfers/%7Bx%7D", "", nil), 401, "UNAUTHENTICATED")
	})
}
