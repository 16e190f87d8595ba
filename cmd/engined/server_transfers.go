package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// transferWait bounds how long POST /v1/transfers waits for a transfer to be
// decided and finished. It is shorter than requestTimeout because a
// transfer not decided by then need not fail: it is answered pending (202)
// with its id, the recovery worker takes it from there, and the client
// polls GET /v1/transfers/{id} or sends it again with the same id.
const transferWait = 5 * time.Second

// postTransfer is POST /v1/transfers: several holders' parts, all or none
// (DESIGN.md, "Cross-holder transfers"). It answers the transfer's state,
// a replayed one included:
//
//   - 200 committed (complete tells whether every part is finished yet);
//   - 202 pending: not decided within transferWait;
//   - 422 aborted, with the state as the body, so that it holds both
//     "status": "aborted" and the "error" that caused it: a part's
//     rejection (INSUFFICIENT_FUNDS...), or UNAVAILABLE when no decision
//     came in time. Whatever the cause the abort is final, and sending the
//     transfer again answers the same: a 503 here would tell clients to
//     retry what can no longer change.
//
// Errors, as error objects: 400 INVALID_INSTRUCTION (malformed JSON, an
// unknown field, over 64 KiB, unbalanced parts, an op a transfer cannot
// take), INVALID_AMOUNT, INVALID_ID, UNKNOWN_ASSET, TOO_MANY_OPS;
// 401 UNAUTHENTICATED; 409 IDEMPOTENCY_CONFLICT; 413 PAYLOAD_TOO_LARGE;
// 503 UNAVAILABLE (retry with the same id); 500 INTERNAL.
func (s *server) postTransfer(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	t, err := instructions.DecodeTransfer(body)
	var st engine.TransferState
	if err == nil {
		note(w, slog.String("id", t.ID), slog.Int("parts", len(t.Parts)))
		ctx, cancel := context.WithTimeout(r.Context(), transferWait)
		defer cancel()
		st, err = s.eng.Transfer(ctx, t)
	}
	if err != nil {
		s.metrics.transfer(string(asError(err).Code))
		writeError(w, err, false)
		return
	}
	outcome := st.Status
	if st.Status == engine.TransferAborted {
		code := abortCode(st)
		outcome = string(code)
		if x, ok := w.(*exchange); ok {
			x.code = code
		}
	}
	s.metrics.transfer(outcome)
	// What writeJSON would write, without reflection.
	writeBody(w, transferStatus(st), append(st.AppendJSON(make([]byte, 0, 256)), '\n'))
}

// transferStatus is the HTTP status that answers a transfer's state.
func transferStatus(st engine.TransferState) int {
	switch st.Status {
	case engine.TransferCommitted:
		return http.StatusOK
	case engine.TransferPending:
		return http.StatusAccepted
	default:
		return http.StatusUnprocessableEntity
	}
}

// abortCode is the code of an aborted transfer's error: INTERNAL if the
// state lacks one, which only a bug would do.
func abortCode(st engine.TransferState) instructions.Code {
	if st.Error == nil {
		return instructions.CodeInternal
	}
	return st.Error.Code
}

// getTransfer is GET /v1/transfers/{id}: a transfer's state, 200 whatever
// its status.
//
// Errors: 400 INVALID_ID; 401 UNAUTHENTICATED; 404 TRANSFER_NOT_FOUND (never
// seen, or finished longer ago than the idempotency TTL); 503 UNAVAILABLE;
// 500 INTERNAL.
func (s *server) getTransfer(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	st, err := s.eng.GetTransfer(ctx, r.PathValue("id"))
	if err != nil {
		writeError(w, err, true)
		return
	}
	writeJSON(w, http.StatusOK, st)
}
