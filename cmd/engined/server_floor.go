package main

import (
	"context"
	"net/http"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/instructions"
	"github.com/atomledger/atomledger/internal/bench"
)

// The bench floor (serve --bench-floor, for benchmarks only): the least a
// request can cost in this binary, as the baseline of the system bench.
// POST /bench/floor/{holder} with {"amount": N} runs the seed article's
// deduct script on the holder's floor key (bench.FloorKey) and answers
// {"balance": N}. No instruction, no idempotency, no event, no request log
// or metrics: only HTTP, JSON of one number, one script run. It is off
// unless the flag is given, and needs a token like /v1/ when tokens are
// configured.

// floorBody is the whole request body of the floor.
type floorBody struct {
	Amount int64 `json:"amount"`
}

// withFloor serves the floor beside h.
func (s *server) withFloor(h http.Handler, rdb redis.UniversalClient) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST "+bench.FloorPath+"{holder}", s.auth.require(scopeWrite, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		floorDeduct(w, r, rdb)
	})))
	mux.Handle("/", h)
	return mux
}

func floorDeduct(w http.ResponseWriter, r *http.Request, rdb redis.UniversalClient) {
	holder := r.PathValue("holder")
	if !instructions.ValidID(holder) {
		writeError(w, instructions.Errorf(instructions.CodeInvalidID, instructions.NoOp, "holder %q is not a valid id", holder), false)
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var b floorBody
	if err := instructions.DecodeStrict(body, &b); err != nil {
		writeError(w, instructions.Errorf(instructions.CodeInvalidInstruction, instructions.NoOp, "the body is not {\"amount\": N}: %s", err.Message), false)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	n, err := bench.FloorDeduct(ctx, rdb, holder, b.Amount)
	switch {
	case err != nil:
		writeError(w, instructions.Errorf(instructions.CodeUnavailable, instructions.NoOp, "redis: %v", err), false)
	case n == -1:
		writeError(w, instructions.Errorf(instructions.CodeHolderNotFound, instructions.NoOp, "holder %s has no floor balance", holder), false)
	case n == -2:
		writeError(w, instructions.Errorf(instructions.CodeInvalidAmount, instructions.NoOp, "amount %d is not a positive whole number", b.Amount), false)
	case n == -3:
		writeError(w, instructions.Errorf(instructions.CodeInsufficientFunds, instructions.NoOp, "the floor balance of %s is below %d", holder, b.Amount), false)
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"balance":` + strconv.FormatInt(n, 10) + "}\n"))
	}
}
