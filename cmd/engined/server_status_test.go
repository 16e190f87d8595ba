package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/instructions"
)

// TestStatus_TableIsTheContracts checks the code -> status table against the
// contract's error table, written out again here.
func TestStatus_TableIsTheContracts(t *testing.T) {
	want := map[instructions.Code]int{
		"INVALID_INSTRUCTION": 400, "INVALID_AMOUNT": 400, "INVALID_ID": 400, "UNKNOWN_ASSET": 400, "TOO_MANY_OPS": 400,
		"UNAUTHENTICATED":       401,
		"FORBIDDEN":             403, // the project's addition: a token without the route's scope
		"HOLDER_NOT_FOUND":      422,
		"TRANSFER_NOT_FOUND":    404, // the project's addition to the contract's table: GET /v1/transfers/{id}
		"INSTRUCTION_NOT_FOUND": 404, // GET /v1/holders/{holder}/instructions/{id}
		"IDEMPOTENCY_CONFLICT":  409,
		"PAYLOAD_TOO_LARGE":     413,
		"NOT_FOUND":             404, // the project's additions: no route has the path,
		"METHOD_NOT_ALLOWED":    405, // or its routes take other methods
		"RATE_LIMITED":          429, // the project's addition: a token over its limits
		"HOLDER_EXISTS":         422, "HOLDER_SUSPENDED": 422, "INSUFFICIENT_FUNDS": 422, "INSUFFICIENT_POINTS": 422,
		"HOLD_NOT_FOUND": 422, "HOLD_EXISTS": 422, "HOLD_EXPIRED": 422, "EXCEEDS_HOLD": 422,
		"COUPON_NOT_FOUND": 422, "COUPON_EXISTS": 422, "COUPON_UNAVAILABLE": 422, "COUPON_EXPIRED": 422, "OVERFLOW": 422,
		"UNAVAILABLE": 503,
		"INTERNAL":    500,
	}
	require.Len(t, instructions.Codes, len(want), "every code of the contract")
	require.Len(t, statusTable, len(want), "one row per code")
	for _, code := range instructions.Codes {
		assert.Equal(t, want[code], httpStatus(code, false), "%s in an instruction", code)
		read := want[code]
		if code == instructions.CodeHolderNotFound {
			read = 404
		}
		assert.Equal(t, read, httpStatus(code, true), "%s on a read", code)
	}
	assert.Equal(t, 500, httpStatus("NO_SUCH_CODE", false), "a code outside the table is a bug")
}

func TestWriteError_AnswersTheErrorObject(t *testing.T) {
	rec := httptest.NewRecorder()
	writeError(rec, instructions.Errorf(instructions.CodeInsufficientFunds, 1, "debit 80.00 CNY: available 12.00"), false)
	assert.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	assert.JSONEq(t, `{"error": {"code": "INSUFFICIENT_FUNDS", "op_index": 1, "message": "debit 80.00 CNY: available 12.00"}}`, rec.Body.String())
}

func TestWriteError_AnyOtherErrorIsInternal(t *testing.T) {
	rec := httptest.NewRecorder()
	writeError(rec, assert.AnError, false)
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.JSONEq(t, `{"error": {"code": "INTERNAL", "message": "`+assert.AnError.Error()+`"}}`, rec.Body.String())
}

// The engine's own codes (LANES_CHANGED: it routes again) never reach a
// client: one that escaped would be a bug, answered INTERNAL.
func TestWriteError_AnEngineCodeIsInternal(t *testing.T) {
	rec := httptest.NewRecorder()
	err := &instructions.Error{ID: "i-1", Code: instructions.CodeLanesChanged, OpIndex: instructions.NoOp, Message: "8"}
	writeError(rec, err, false)
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.JSONEq(t, `{"error": {"code": "INTERNAL", "message": "apply \"i-1\": LANES_CHANGED: 8"}}`, rec.Body.String())
	assert.Equal(t, instructions.CodeInternal, asError(err).Code)
	assert.ErrorIs(t, asError(err), instructions.CodeLanesChanged, "the cause is kept")
}
