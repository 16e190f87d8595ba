package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/atomledger/atomledger/instructions"
)

const (
	// maxBody bounds a request body; past it the answer is 413.
	maxBody = 1 << 20
	// maxBatch bounds the instructions of one batch request. Each runs as
	// its own script, so the bound is on the time a batch holds the daemon,
	// not on Redis.
	maxBatch = 1000
	// requestTimeout bounds the Redis work of one request. Past it the
	// outcome is unknown (UNAVAILABLE): the client retries with the same id.
	requestTimeout = 10 * time.Second
)

// applyOne is POST /v1/instructions: one instruction, all or nothing. It
// answers 200 with the result, a replayed one included.
//
// Errors: 400 INVALID_INSTRUCTION (malformed JSON, an unknown field, over
// 64 KiB, a Content-Encoding, a body cut short), INVALID_AMOUNT, INVALID_ID, UNKNOWN_ASSET, TOO_MANY_OPS;
// 401 UNAUTHENTICATED; 409 IDEMPOTENCY_CONFLICT; 413 PAYLOAD_TOO_LARGE;
// 422 HOLDER_NOT_FOUND, HOLDER_EXISTS, HOLDER_SUSPENDED, INSUFFICIENT_FUNDS,
// INSUFFICIENT_POINTS, HOLD_NOT_FOUND, HOLD_EXISTS, HOLD_EXPIRED, EXCEEDS_HOLD,
// COUPON_NOT_FOUND, COUPON_EXISTS, COUPON_UNAVAILABLE, COUPON_EXPIRED,
// OVERFLOW; 503 UNAVAILABLE; 500 INTERNAL.
func (s *server) applyOne(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	in, err := instructions.Decode(body)
	var res instructions.Result
	if err == nil {
		note(w, slog.String("id", in.ID), slog.String("holder", in.Holder))
		ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
		defer cancel()
		res, err = s.eng.Apply(ctx, in)
	}
	s.outcome(w, err)
	if err != nil {
		writeError(w, err, false)
		return
	}
	// Written without reflection, in a buffer the size of most answers.
	writeBody(w, http.StatusOK, append(res.AppendJSON(make([]byte, 0, 512)), '\n'))
}

// batchRequest is the body of POST /v1/instructions/batch. Entries stay raw
// so that a malformed one is that entry's error, not the whole batch's.
type batchRequest struct {
	Instructions []json.RawMessage `json:"instructions"`
}

// batchResponse answers a batch: results[i] answers instructions[i].
type batchResponse struct {
	Results []any `json:"results"`
}

// applyBatch is POST /v1/instructions/batch: 1 to maxBatch instructions,
// each atomic on its own; the batch is not. It answers 200 with one entry
// per instruction, in order: a result, or {"error": {...}} with the codes of
// applyOne (an entry over 64 KiB, with an unknown field or an amount given
// as a number included).
//
// Errors of the batch as a whole: 400 INVALID_INSTRUCTION (a body that is not
// JSON, an unknown field beside "instructions", no instructions, more than
// maxBatch); 401 UNAUTHENTICATED; 413 PAYLOAD_TOO_LARGE.
func (s *server) applyBatch(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var req batchRequest
	why := ""
	if err := instructions.CheckKeys(body, "instructions"); err != nil {
		why = err.Message
	} else if err := instructions.DecodeStrict(body, &req); err != nil {
		why = err.Message
	}
	if why != "" {
		writeError(w, instructions.Errorf(instructions.CodeInvalidInstruction, instructions.NoOp, "batch: %s", why), false)
		return
	}
	switch n := len(req.Instructions); {
	case n == 0:
		writeError(w, instructions.Errorf(instructions.CodeInvalidInstruction, instructions.NoOp,
			`batch: want {"instructions": [...]} with at least one instruction`), false)
		return
	case n > maxBatch:
		writeError(w, instructions.Errorf(instructions.CodeInvalidInstruction, instructions.NoOp,
			"batch: %d instructions, at most %d", n, maxBatch), false)
		return
	}
	s.metrics.batchSize.Observe(float64(len(req.Instructions)))
	note(w, slog.Int("instructions", len(req.Instructions)))

	results := make([]any, len(req.Instructions))
	var decoded []instructions.Instruction
	var at []int // at[j] is the index in the batch of decoded[j]
	for i, raw := range req.Instructions {
		in, err := instructions.Decode(raw)
		if err != nil {
			results[i] = err
			continue
		}
		decoded = append(decoded, in)
		at = append(at, i)
	}
	if len(decoded) > 0 {
		ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
		defer cancel()
		for j, o := range s.eng.ApplyBatch(ctx, decoded) {
			if o.Err != nil {
				results[at[j]] = o.Err
			} else {
				results[at[j]] = o.Result
			}
		}
	}

	x, _ := w.(*exchange)
	for i, v := range results {
		err, isErr := v.(error)
		if !isErr {
			s.metrics.outcome(nil)
			continue
		}
		s.outcome(w, err)
		e := asError(err)
		results[i] = errorObject{Error: e}
		if x != nil {
			if x.rejected == nil {
				x.rejected = map[instructions.Code]int{}
			}
			x.rejected[e.Code]++
		}
	}
	writeJSON(w, http.StatusOK, batchResponse{Results: results})
}

// holder is GET /v1/holders/{holder}: everything the holder has.
//
// Errors: 400 INVALID_ID (braces, spaces, over 64 bytes...); 401
// UNAUTHENTICATED; 404 HOLDER_NOT_FOUND; 503 UNAVAILABLE; 500 INTERNAL.
func (s *server) holder(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	st, err := s.eng.State(ctx, r.PathValue("holder"))
	if err != nil {
		writeError(w, err, true)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// sweepHot sweeps a hot holder's receiving lanes into lane 0 now
// (engine.SweepHot), answering what it did.
func (s *server) sweepHot(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	got, err := s.eng.SweepHot(ctx, r.PathValue("holder"))
	if err != nil {
		writeError(w, err, true)
		return
	}
	writeJSON(w, http.StatusOK, got)
}

// readBody reads the request body, answering 413 PAYLOAD_TOO_LARGE past
// maxBody. ok is false when an answer was written.
func readBody(w http.ResponseWriter, r *http.Request) (body []byte, ok bool) {
	// The daemon decodes no content coding: a compressed body read as JSON
	// would be refused for a wrong reason, and a plain one labelled gzip
	// applied against what its sender said.
	if ce := r.Header.Values("Content-Encoding"); len(ce) > 0 && (len(ce) > 1 || !strings.EqualFold(strings.TrimSpace(ce[0]), "identity")) {
		writeError(w, instructions.Errorf(instructions.CodeInvalidInstruction, instructions.NoOp,
			"Content-Encoding %q: send the body uncompressed, without a Content-Encoding", strings.Join(ce, ", ")), false)
		return nil, false
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeError(w, instructions.Errorf(instructions.CodePayloadTooLarge, instructions.NoOp,
			"request body over %d bytes", maxBody), false)
		return nil, false
	case errors.Is(err, io.ErrUnexpectedEOF):
		writeError(w, instructions.Errorf(instructions.CodeInvalidInstruction, instructions.NoOp,
			"the body ended before its Content-Length: send the whole body"), false)
		return nil, false
	case err != nil:
		// A broken or too slow connection; net/http's text would name
		// sockets and addresses, which say nothing to the client.
		writeError(w, instructions.Errorf(instructions.CodeInvalidInstruction, instructions.NoOp,
			"the body could not be read whole (the connection broke or was too slow)"), false)
		return nil, false
	}
	return data, true
}
