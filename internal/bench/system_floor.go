package bench

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/instructions"
)

// The floor of the system part: the least a request can cost in the
// daemon's binary, as the baseline of the system part. Floor is a minimal
// handler that runs the seed article's deduct script on one key per holder,
// with only the amount in the body; engined serve mounts it only when the
// system part starts it with --bench-floor. The handler and the part share
// these names so that the key the part fills is the key the handler takes.

// SeedDeductLibrary is the seed article's deduct script as a Redis function
// library (see seedDeduct); SeedDeductFunction is its function's name.
const (
	SeedDeductLibrary  = seedDeduct
	SeedDeductFunction = seedFn
)

// FloorPath is the route of the floor handler, with the holder as its last
// segment.
const FloorPath = "/bench/floor/"

// FloorKey is the one key the floor handler deducts from for holder: a
// string holding an integer balance, in the holder's own slot.
func FloorKey(holder string) string { return "bench-floor:{" + holder + "}" }

// FloorDeduct runs the seed's deduct of amount on holder's floor key and
// gives its answer: the balance left, or -1 (no balance), -2 (not a
// positive amount), -3 (not enough). A master that answers "Function not
// found" (one that restarted, or one LoadFloor did not reach) gets the
// library, and the call once more.
func FloorDeduct(ctx context.Context, rdb redis.UniversalClient, holder string, amount int64) (int64, error) {
	keys := []string{FloorKey(holder)}
	n, err := rdb.FCall(ctx, SeedDeductFunction, keys, amount).Int64()
	if err != nil && redis.HasErrorPrefix(err, "Function not found") {
		if err = LoadFloor(ctx, rdb); err == nil {
			n, err = rdb.FCall(ctx, SeedDeductFunction, keys, amount).Int64()
		}
	}
	return n, err
}

// LoadFloor loads the seed's deduct library on every master.
func LoadFloor(ctx context.Context, rdb redis.UniversalClient) error {
	load := func(ctx context.Context, c *redis.Client) error {
		return c.FunctionLoadReplace(ctx, SeedDeductLibrary).Err()
	}
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, load)
	case *redis.Client:
		return load(ctx, c)
	}
	return rdb.FunctionLoadReplace(ctx, SeedDeductLibrary).Err()
}

// Floor is the floor's handler, for POST FloorPath{holder} with
// {"amount": N}: it runs the seed's deduct on the holder's floor key
// (FloorKey) and answers {"balance": N}. No instruction, no idempotency, no
// event, no request log or metrics: only HTTP, JSON of one number, one
// script run. The daemon that mounts it gives its Redis client and its own
// reading of a body and answer of an error, so that the floor's answers are
// the daemon's, and guards it with its tokens.
type Floor struct {
	Redis   redis.UniversalClient
	Timeout time.Duration // of each request's script run
	// ReadBody reads the whole body, or answers why not and says false.
	ReadBody func(http.ResponseWriter, *http.Request) ([]byte, bool)
	// WriteError answers an *instructions.Error.
	WriteError func(http.ResponseWriter, error)
}

// floorBody is the whole request body of the floor.
type floorBody struct {
	Amount int64 `json:"amount"`
}

func (f Floor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	holder := r.PathValue("holder")
	if !instructions.ValidID(holder) {
		f.WriteError(w, instructions.Errorf(instructions.CodeInvalidID, instructions.NoOp, "holder %q is not a valid id", holder))
		return
	}
	body, ok := f.ReadBody(w, r)
	if !ok {
		return
	}
	var b floorBody
	if err := instructions.DecodeStrict(body, &b); err != nil {
		f.WriteError(w, instructions.Errorf(instructions.CodeInvalidInstruction, instructions.NoOp, "the body is not {\"amount\": N}: %s", err.Message))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), f.Timeout)
	defer cancel()
	n, err := FloorDeduct(ctx, f.Redis, holder, b.Amount)
	switch {
	case err != nil:
		f.WriteError(w, instructions.Errorf(instructions.CodeUnavailable, instructions.NoOp, "redis: %v", err))
	case n == -1:
		f.WriteError(w, instructions.Errorf(instructions.CodeHolderNotFound, instructions.NoOp, "holder %s has no floor balance", holder))
	case n == -2:
		f.WriteError(w, instructions.Errorf(instructions.CodeInvalidAmount, instructions.NoOp, "amount %d is not a positive whole number", b.Amount))
	case n == -3:
		f.WriteError(w, instructions.Errorf(instructions.CodeInsufficientFunds, instructions.NoOp, "the floor balance of %s is below %d", holder, b.Amount))
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"balance":` + strconv.FormatInt(n, 10) + "}\n"))
	}
}
