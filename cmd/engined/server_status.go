package main

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"

	"github.com/atomledger/atomledger/instructions"
)

// statusRow is one row of the contract's error table.
type statusRow struct {
	code   instructions.Code
	status int
	// read is the status when the request reads a holder or a transfer
	// instead of applying an instruction; 0 means the same as status. Only
	// HOLDER_NOT_FOUND differs: a read of a missing holder is 404, but an
	// instruction naming one is a well-formed request the ledger refused,
	// like any other 422.
	read int
}

// statusTable maps every code to its HTTP status (DESIGN.md, "Errors"). It is
// the only place that does.
var statusTable = []statusRow{
	{code: instructions.CodeInvalidInstruction, status: http.StatusBadRequest},
	{code: instructions.CodeInvalidAmount, status: http.StatusBadRequest},
	{code: instructions.CodeInvalidID, status: http.StatusBadRequest},
	{code: instructions.CodeUnknownAsset, status: http.StatusBadRequest},
	{code: instructions.CodeTooManyOps, status: http.StatusBadRequest},
	{code: instructions.CodeUnauthenticated, status: http.StatusUnauthorized},
	{code: instructions.CodeForbidden, status: http.StatusForbidden}, // the project's addition: a token without the route's scope
	{code: instructions.CodeHolderNotFound, status: http.StatusUnprocessableEntity, read: http.StatusNotFound},
	// The project's addition to the contract's table. Only GET
	// /v1/transfers/{id} answers it: a transfer id names no account, so an
	// unknown one is never a rejection.
	{code: instructions.CodeTransferNotFound, status: http.StatusNotFound},
	// Only GET /v1/holders/{holder}/instructions/{id} answers it.
	{code: instructions.CodeInstructionNotFound, status: http.StatusNotFound},
	{code: instructions.CodeIdempotencyConflict, status: http.StatusConflict},
	{code: instructions.CodePayloadTooLarge, status: http.StatusRequestEntityTooLarge},
	// The project's additions: a path no route has, a method its routes do
	// not take (with Allow).
	{code: instructions.CodeNotFound, status: http.StatusNotFound},
	{code: instructions.CodeMethodNotAllowed, status: http.StatusMethodNotAllowed},
	// The project's addition: a token over its requests or remembered
	// rejections a second (--rate-limit, --rejection-limit).
	{code: instructions.CodeRateLimited, status: http.StatusTooManyRequests},
	{code: instructions.CodeHolderExists, status: http.StatusUnprocessableEntity},
	{code: instructions.CodeHolderSuspended, status: http.StatusUnprocessableEntity},
	{code: instructions.CodeInsufficientFunds, status: http.StatusUnprocessableEntity},
	{code: instructions.CodeInsufficientPoints, status: http.StatusUnprocessableEntity},
	{code: instructions.CodeHoldNotFound, status: http.StatusUnprocessableEntity},
	{code: instructions.CodeHoldExists, status: http.StatusUnprocessableEntity},
	{code: instructions.CodeHoldExpired, status: http.StatusUnprocessableEntity},
	{code: instructions.CodeExceedsHold, status: http.StatusUnprocessableEntity},
	{code: instructions.CodeCouponNotFound, status: http.StatusUnprocessableEntity},
	{code: instructions.CodeCouponExists, status: http.StatusUnprocessableEntity},
	{code: instructions.CodeCouponUnavailable, status: http.StatusUnprocessableEntity},
	{code: instructions.CodeCouponExpired, status: http.StatusUnprocessableEntity},
	{code: instructions.CodeOverflow, status: http.StatusUnprocessableEntity},
	{code: instructions.CodeUnavailable, status: http.StatusServiceUnavailable},
	{code: instructions.CodeInternal, status: http.StatusInternalServerError},
}

// httpStatus gives the status of code; read tells whether the request reads
// a holder or a transfer. A code missing from the table is a bug: 500.
func httpStatus(code instructions.Code, read bool) int {
	for _, row := range statusTable {
		if row.code != code {
			continue
		}
		if read && row.read != 0 {
			return row.read
		}
		return row.status
	}
	return http.StatusInternalServerError
}

// status is the body of a successful health or readiness answer.
type status struct {
	Status string `json:"status"`
}

// errorObject is the error answer of the contract: {"error": {...}}.
type errorObject struct {
	Error *instructions.Error `json:"error"`
}

// asError gives the *instructions.Error that err is or wraps; any other
// error, or one of a code outside the contract's table (the engine's own,
// such as LANES_CHANGED, which it answers itself), is a bug, reported as
// INTERNAL.
func asError(err error) *instructions.Error {
	var e *instructions.Error
	if errors.As(err, &e) && slices.Contains(instructions.Codes, e.Code) {
		return e
	}
	return &instructions.Error{ID: idOf(e), Code: instructions.CodeInternal, OpIndex: instructions.NoOp, Message: err.Error(), Err: err}
}

// idOf is e's instruction id, "" for none.
func idOf(e *instructions.Error) string {
	if e == nil {
		return ""
	}
	return e.ID
}

// writeJSON answers v as JSON, one line.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		// Only a bug gets here; the answer is still the contract's.
		status, body = http.StatusInternalServerError, []byte(`{"error":{"code":"INTERNAL","message":"encode the answer"}}`)
	}
	writeBody(w, status, append(body, '\n'))
}

// The values of the headers every answer has, shared by all answers: a
// header is only ever read once set (net/http copies it to write it), and
// sharing them saves the slice that Header.Set makes for each.
var (
	jsonContentType = []string{"application/json"}
	noStore         = []string{"no-store"}
	noSniff         = []string{"nosniff"}
)

// writeBody answers body, a line of JSON. Answers describe money and must
// never be served from a cache.
func writeBody(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	// A length lets a client tell a whole answer from a cut one.
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	h["Content-Type"] = jsonContentType
	h["Cache-Control"] = noStore
	h["X-Content-Type-Options"] = noSniff
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeError answers err as an error object with the status of its code;
// read tells whether the request reads a holder or a transfer.
func writeError(w http.ResponseWriter, err error, read bool) {
	e := asError(err)
	if x, ok := w.(*exchange); ok {
		x.code = e.Code
	}
	if e.Code == instructions.CodeUnavailable && e.Err != nil {
		// The answer says what a lost connection or a deadline means to the
		// client; what Go said (sockets, addresses) goes to the request log.
		note(w, slog.String("cause", e.Err.Error()))
	}
	writeJSON(w, httpStatus(e.Code, read), errorObject{Error: e})
}
