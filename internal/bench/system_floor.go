package bench

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// The floor of the system part: engined serve --bench-floor mounts a
// minimal handler that runs the seed article's deduct script on one key per
// holder, with only the amount in the body. The daemon and the bench share
// these names so that the key the bench fills is the key the handler takes.

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
