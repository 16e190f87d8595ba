package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/atomledger/atomledger/engine"
)

// The rows of docs/bad-input.md that the daemon answers, sent to the real
// binary against the real cluster. Keep the two in step: each test and subtest
// name here is named in the document.

// TestBadInput_Refused: every bad body is refused with its status and code,
// and the holder it names is unchanged afterwards.
func TestBadInput_Refused(t *testing.T) {
	needRedis(t)
	t.Parallel()
	d := startServe(t, nil)
	h := richHolder(t, d)

	// in builds an instruction for h with the given ops; op builds one op.
	in := func(ops string) string { return instructionJSON(newID("i"), h, ops) }
	credit := func(amount string) string {
		return in(`[{"op": "credit", "asset": "CNY", "amount": ` + amount + `}]`)
	}
	deep := func(open, close string) string { return strings.Repeat(open, 10000) + strings.Repeat(close, 10000) }
	long := strings.Repeat("a", 65)
	// memoIn gives h an instruction that would apply but for its memo.
	memoIn := func(memo string) string {
		return `{"id": "` + newID("i") + `", "holder": "` + h + `", "memo": ` + memo + `, "ops": [{"op": "earn_points", "amount": "1"}]}`
	}

	tests := []struct {
		name   string
		body   string
		status int
		code   string
	}{
		// Malformed JSON.
		{"a cut-off body", `{"id": "x", "holder": "` + h + `", "ops": [`, 400, "INVALID_INSTRUCTION"},
		{"an empty body", ``, 400, "INVALID_INSTRUCTION"},
		{"a trailing comma", `{"id": "x", "holder": "` + h + `", "ops": [{"op": "open"},]}`, 400, "INVALID_INSTRUCTION"},
		{"single quotes", `{'id': "x", "holder": "` + h + `", "ops": [{"op": "open"}]}`, 400, "INVALID_INSTRUCTION"},
		{"a comment", `{"id": "x", /* c */ "holder": "` + h + `", "ops": [{"op": "open"}]}`, 400, "INVALID_INSTRUCTION"},
		{"a byte order mark", "\ufeff" + in(`[{"op": "open"}]`), 400, "INVALID_INSTRUCTION"},
		{"two instructions in one body", in(`[{"op": "open"}]`) + in(`[{"op": "open"}]`), 400, "INVALID_INSTRUCTION"},
		{"an array instead of an object", `[` + in(`[{"op": "open"}]`) + `]`, 400, "INVALID_INSTRUCTION"},
		// Deep nesting.
		{"10000 nested arrays in the memo", `{"id": "x", "holder": "` + h + `", "memo": ` + deep("[", "]") + `, "ops": [{"op": "open"}]}`, 400, "INVALID_INSTRUCTION"},
		{"10000 nested objects in the memo", `{"id": "x", "holder": "` + h + `", "memo": ` + strings.Repeat(`{"a": `, 10000) + "1" + strings.Repeat("}", 10000) + `, "ops": [{"op": "open"}]}`, 400, "INVALID_INSTRUCTION"},
		{"10000 nested arrays as ops", `{"id": "x", "holder": "` + h + `", "ops": ` + deep("[", "]") + `}`, 400, "INVALID_INSTRUCTION"},
		{"10000 nested arrays as an amount", credit(deep("[", "]")), 400, "INVALID_INSTRUCTION"},
		// Numbers.
		{"an amount as a JSON number", credit(`1`), 400, "INVALID_AMOUNT"},
		{"a huge JSON number as an amount", credit(strings.Repeat("9", 400)), 400, "INVALID_AMOUNT"},
		{"a huge decimal string", credit(`"` + strings.Repeat("9", 400) + `"`), 400, "INVALID_AMOUNT"},
		{"2^53 minor units", credit(`"90071992547409.92"`), 400, "INVALID_AMOUNT"},
		{"a negative amount", credit(`"-1.00"`), 400, "INVALID_AMOUNT"},
		{"a plus sign", credit(`"+1.00"`), 400, "INVALID_AMOUNT"},
		{"a zero amount", credit(`"0"`), 400, "INVALID_AMOUNT"},
		{"a zero amount with decimals", credit(`"0.00"`), 400, "INVALID_AMOUNT"},
		{"too many decimals", credit(`"1.001"`), 400, "INVALID_AMOUNT"},
		{"a zero past the scale", credit(`"1.000"`), 400, "INVALID_AMOUNT"},
		{"1e3 as a string", credit(`"1e3"`), 400, "INVALID_AMOUNT"},
		{"1e3 as a JSON number", credit(`1e3`), 400, "INVALID_AMOUNT"},
		{"0x10", credit(`"0x10"`), 400, "INVALID_AMOUNT"},
		{"NaN as a string", credit(`"NaN"`), 400, "INVALID_AMOUNT"},
		{"NaN bare", credit(`NaN`), 400, "INVALID_INSTRUCTION"},
		{"Infinity as a string", credit(`"Infinity"`), 400, "INVALID_AMOUNT"},
		{"inf as a string", credit(`"inf"`), 400, "INVALID_AMOUNT"},
		{"Infinity bare", credit(`Infinity`), 400, "INVALID_INSTRUCTION"},
		{"a leading space", credit(`" 5"`), 400, "INVALID_AMOUNT"},
		{"a decimal comma", credit(`"1,50"`), 400, "INVALID_AMOUNT"},
		{"a full-width digit", credit(`"１"`), 400, "INVALID_AMOUNT"},
		{"decimal points for points", in(`[{"op": "earn_points", "amount": "1.5"}]`), 400, "INVALID_AMOUNT"},
		{"a huge ttl_ms", in(`[{"op": "freeze", "asset": "CNY", "amount": "1", "hold": "x", "ttl_ms": 99999999999999999999999}]`), 400, "INVALID_INSTRUCTION"},
		{"a negative ttl_ms", in(`[{"op": "freeze", "asset": "CNY", "amount": "1", "hold": "x", "ttl_ms": -5}]`), 400, "INVALID_INSTRUCTION"},
		{"ttl_ms of 1e3", in(`[{"op": "freeze", "asset": "CNY", "amount": "1", "hold": "x", "ttl_ms": 1e3}]`), 400, "INVALID_INSTRUCTION"},
		{"a negative expires_ms", in(`[{"op": "grant_coupon", "coupon": "c-2", "expires_ms": -1}]`), 400, "INVALID_INSTRUCTION"},
		// Ids.
		{"braces in the holder", instructionJSON(newID("i"), "{"+h+"}", `[{"op": "open"}]`), 400, "INVALID_ID"},
		{"an escaped brace in the id", `{"id": "a\u007bb", "holder": "` + h + `", "ops": [{"op": "open"}]}`, 400, "INVALID_ID"},
		{"braces in a hold", in(`[{"op": "freeze", "asset": "CNY", "amount": "1", "hold": "{o}"}]`), 400, "INVALID_ID"},
		{"braces in a coupon", in(`[{"op": "grant_coupon", "coupon": "{c}"}]`), 400, "INVALID_ID"},
		{"braces in the counterparty", `{"id": "x", "holder": "` + h + `", "counterparty": "{m}", "ops": [{"op": "open"}]}`, 400, "INVALID_ID"},
		{"a newline in the id", `{"id": "a\nb", "holder": "` + h + `", "ops": [{"op": "open"}]}`, 400, "INVALID_ID"},
		{"a newline in the holder", instructionJSON(newID("i"), `h\n`, `[{"op": "open"}]`), 400, "INVALID_ID"},
		{"a NUL byte in the id", `{"id": "a\u0000", "holder": "` + h + `", "ops": [{"op": "open"}]}`, 400, "INVALID_ID"},
		{"a non-ASCII id", instructionJSON("é", h, `[{"op": "open"}]`), 400, "INVALID_ID"},
		{"an empty id", instructionJSON("", h, `[{"op": "open"}]`), 400, "INVALID_ID"},
		{"an id of 65 bytes", instructionJSON(long, h, `[{"op": "open"}]`), 400, "INVALID_ID"},
		{"a holder of 65 bytes", instructionJSON(newID("i"), long, `[{"op": "open"}]`), 400, "INVALID_ID"},
		{"a hold of 65 bytes", in(`[{"op": "freeze", "asset": "CNY", "amount": "1", "hold": "` + long + `"}]`), 400, "INVALID_ID"},
		{"an id of 60 KiB", instructionJSON(strings.Repeat("a", 60<<10), h, `[{"op": "open"}]`), 400, "INVALID_ID"},
		{"the sweeper's id for a hold", instructionJSON(engine.SweepID(h, "o", 1796000000000), h, `[{"op": "release", "hold": "o"}]`), 400, "INVALID_ID"},
		{"a transfer's commit id", instructionJSON("x:t1:c", h, `[{"op": "credit", "asset": "CNY", "amount": "1"}]`), 400, "INVALID_ID"},
		{"an id of 100 KiB", instructionJSON(strings.Repeat("a", 100<<10), h, `[{"op": "open"}]`), 400, "INVALID_INSTRUCTION"},
		// Ops.
		{"an unknown op", in(`[{"op": "steal", "asset": "CNY", "amount": "1"}]`), 400, "INVALID_INSTRUCTION"},
		{"an op in capitals", in(`[{"op": "CREDIT", "asset": "CNY", "amount": "1"}]`), 400, "INVALID_INSTRUCTION"},
		{"an asset in lower case", in(`[{"op": "credit", "asset": "cny", "amount": "1"}]`), 400, "UNKNOWN_ASSET"},
		{"a field the op does not take", in(`[{"op": "debit", "asset": "CNY", "amount": "1", "hold": "x"}]`), 400, "INVALID_INSTRUCTION"},
		{"a missing amount", in(`[{"op": "credit", "asset": "CNY"}]`), 400, "INVALID_INSTRUCTION"},
		{"an unknown field", in(`[{"op": "credit", "asset": "CNY", "amount": "1", "note": "x"}]`), 400, "INVALID_INSTRUCTION"},
		{"65 ops", instructionWithOps(newID("i"), h, 65), 400, "TOO_MANY_OPS"},
		// Empty ops.
		{"an empty ops list", in(`[]`), 400, "INVALID_INSTRUCTION"},
		{"ops null", in(`null`), 400, "INVALID_INSTRUCTION"},
		{"no ops field", `{"id": "x", "holder": "` + h + `"}`, 400, "INVALID_INSTRUCTION"},
		{"an empty op", in(`[{}]`), 400, "INVALID_INSTRUCTION"},
		{"a null op", in(`[null]`), 400, "INVALID_INSTRUCTION"},
		// Wrong types.
		{"the id as a number", `{"id": 1, "holder": "` + h + `", "ops": [{"op": "open"}]}`, 400, "INVALID_INSTRUCTION"},
		{"the id as an array", `{"id": ["x"], "holder": "` + h + `", "ops": [{"op": "open"}]}`, 400, "INVALID_INSTRUCTION"},
		{"the holder as null", `{"id": "x", "holder": null, "ops": [{"op": "open"}]}`, 400, "INVALID_ID"},
		{"ops as an object", in(`{"op": "open"}`), 400, "INVALID_INSTRUCTION"},
		{"an op name as a number", in(`[{"op": 1}]`), 400, "INVALID_INSTRUCTION"},
		{"an amount as true", credit(`true`), 400, "INVALID_AMOUNT"},
		{"an amount as null", credit(`null`), 400, "INVALID_AMOUNT"},
		{"ttl_ms as a string", in(`[{"op": "freeze", "asset": "CNY", "amount": "1", "hold": "x", "ttl_ms": "60000"}]`), 400, "INVALID_INSTRUCTION"},
		{"a memo over 256 bytes", `{"id": "x", "holder": "` + h + `", "memo": "` + strings.Repeat("m", 257) + `", "ops": [{"op": "open"}]}`, 400, "INVALID_INSTRUCTION"},
		{"a NUL in the memo", memoIn(`"poison\u0000x"`), 400, "INVALID_INSTRUCTION"},
		{"a newline in the memo", memoIn(`"line one\nline two"`), 400, "INVALID_INSTRUCTION"},
		{"a tab in the memo", memoIn(`"a\tb"`), 400, "INVALID_INSTRUCTION"},
		{"U+001F in the memo", memoIn(`"a\u001fb"`), 400, "INVALID_INSTRUCTION"},
		{"a DEL in the memo", memoIn(`"a\u007fb"`), 400, "INVALID_INSTRUCTION"},
		// Keys whose meaning would depend on the decoder: duplicates, other cases.
		{"a duplicate amount", in(`[{"op": "credit", "asset": "CNY", "amount": "1.00", "amount": "1000.00"}]`), 400, "INVALID_INSTRUCTION"},
		{"a duplicate amount in another case", in(`[{"op": "credit", "asset": "CNY", "amount": "1.00", "AMOUNT": "1000.00"}]`), 400, "INVALID_INSTRUCTION"},
		{"a duplicate holder", `{"id": "x", "holder": "` + newID("other") + `", "holder": "` + h + `", "ops": [{"op": "earn_points", "amount": "1"}]}`, 400, "INVALID_INSTRUCTION"},
		{"duplicate ops", `{"id": "x", "holder": "` + h + `", "ops": [{"op": "debit", "asset": "CNY", "amount": "1.00"}], "ops": [{"op": "earn_points", "amount": "1"}]}`, 400, "INVALID_INSTRUCTION"},
		{"a duplicate id", `{"id": "x", "id": "y", "holder": "` + h + `", "ops": [{"op": "earn_points", "amount": "1"}]}`, 400, "INVALID_INSTRUCTION"},
		{"a null duplicate", `{"id": "x", "id": null, "holder": "` + h + `", "ops": [{"op": "earn_points", "amount": "1"}]}`, 400, "INVALID_INSTRUCTION"},
		{"keys in capitals", `{"ID": "x", "Holder": "` + h + `", "OPS": [{"Op": "earn_points", "AMOUNT": "1"}]}`, 400, "INVALID_INSTRUCTION"},
		{"an op key in capitals", in(`[{"Op": "earn_points", "amount": "1"}]`), 400, "INVALID_INSTRUCTION"},
		{"a memo of invalid UTF-8", "{\"id\": \"x\", \"holder\": \"" + h + "\", \"memo\": \"a\xff\xfeb\", \"ops\": [{\"op\": \"earn_points\", \"amount\": \"1\"}]}", 400, "INVALID_INSTRUCTION"},
	}
	before := d.state(t, h)
	for _, tt := range tests {
		t.Run(tt.name+" is "+tt.code, func(t *testing.T) {
			wantErrorAnswer(t, d.post(t, tt.body), tt.status, tt.code)
		})
	}
	assert.Equal(t, before, d.state(t, h), "no bad input changed the holder")
}
