package instructions

import "strings"

// Prefixes of the names the engine makes for itself. A client's instruction
// may not use them (INVALID_ID): were a client to take one of these ids
// first, the engine's own step would be answered with the client's outcome
// (a replay, or IDEMPOTENCY_CONFLICT) instead of applying.
const (
	// TransferHoldPrefix begins the name of the hold a transfer reserves
	// under on each holder ("x:<transfer id>"), the counterparty of its parts
	// and the ids of their instructions ("x:<transfer id>:p", ":c", ":a").
	TransferHoldPrefix = "x:"
	// SweepIDPrefix begins the ids of the hold-expiry sweeper's releases
	// ("sweep-<hash of holder, hold and expiry>").
	SweepIDPrefix = "sweep-"
	// HotSweepPrefix begins the ids of the transfers that move a hot
	// holder's receiving lanes into lane 0 ("hot-<hash of holder, lane and
	// seq>"): the only transfers whose parts name lanes.
	HotSweepPrefix = "hot-"
)

// reserved lists, once, every prefix of the engine's own names, whose they
// are, and which of a client's names may not begin with it: instruction ids
// (every prefix), counterparties and holds (only transfers name those).
var reserved = []struct {
	prefix, owner string
	idOnly        bool
}{
	{TransferHoldPrefix, "transfers", false},
	{SweepIDPrefix, "the hold-expiry sweeper", true},
}

// reservedName refuses a name a client may not use: what names the value
// ("id", "counterparty", "hold"), its value, and the op index (NoOp for the
// instruction's own fields).
func reservedName(what, v string, op int) *Error {
	for _, r := range reserved {
		if (what == "id" || !r.idOnly) && strings.HasPrefix(v, r.prefix) {
			return Errorf(CodeInvalidID, op, "%s %q: names beginning with %q are kept for the engine's own use (%s); choose another %s",
				what, clip(v), r.prefix, r.owner, what)
		}
	}
	return nil
}
