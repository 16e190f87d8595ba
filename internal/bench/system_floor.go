package bench

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
