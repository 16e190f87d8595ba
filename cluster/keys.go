package cluster

// HolderKeys are the Redis keys of one holder. They share the hash tag
// "{h:<holder>}", so they all live in HolderSlot(holder) and one script can
// touch all of them.
type HolderKeys struct {
	Meta    string // hash: status, seq, created_ms
	Balance string // hash: asset -> available minor units
	Frozen  string // hash: asset -> frozen minor units
	Points  string // hash: available, frozen
	Coupons string // hash: coupon id -> state and expiry
	Holds   string // hash: hold id -> open hold
}

// holderTag is the hash tag shared by every key of holder.
func holderTag(holder string) string {
	return "{h:" + holder + "}"
}

// Holder returns the keys of holder. The id is used as given: callers validate
// it first (a brace in it would move the keys to another slot).
func Holder(holder string) HolderKeys {
	t := holderTag(holder)
	return HolderKeys{
		Meta:    t + ":meta",
		Balance: t + ":balance",
		Frozen:  t + ":frozen",
		Points:  t + ":points",
		Coupons: t + ":coupons",
		Holds:   t + ":holds",
	}
}

// Tx returns the key of the idempotency record of instruction id of holder.
func Tx(holder, id string) string {
	return holderTag(holder) + ":tx:" + id
}

// HolderSlot returns the slot of every key of holder.
func HolderSlot(holder string) int {
	return Slot(holderTag(holder))
}

// Outbox returns the key of the event stream of slot. It lives in slot itself,
// next to the keys of every holder of that slot.
func Outbox(slot int) string {
	return "{" + SlotTag(slot) + "}:outbox"
}

// Expiry returns the key of the hold-expiry index (a sorted set) of slot. It
// lives in slot itself.
func Expiry(slot int) string {
	return "{" + SlotTag(slot) + "}:expiry"
}

// Transfer returns the key of the record of cross-holder transfer id: a hash
// in a slot of its own, "{x:<id>}".
func Transfer(id string) string {
	return "{x:" + id + "}"
}

// TransferSlot returns the slot of the record of transfer id.
func TransferSlot(id string) int {
	return Slot(Transfer(id))
}

// Transfers returns the key of the index (a sorted set) of the unfinished
// transfers whose records live in slot, scored by when the recovery worker
// should look at them. It lives in slot itself.
func Transfers(slot int) string {
	return "{" + SlotTag(slot) + "}:transfers"
}

// SlotKeyPrefixes are key prefixes that together cover every per-slot key
// ("{<slot tag>}:outbox", ":expiry", ":transfers") and no key of a holder
// ("{h:...") or of a transfer ("{x:..."), and none of which begins another:
// what a Redis client-tracking broadcast (BCAST PREFIX) needs to tell a
// worker that a slot's outbox changed without telling it about every holder
// key written. Tags beginning with h or x get prefixes one character longer.
func SlotKeyPrefixes() []string {
	var out []string
	for _, c := range tagAlphabet {
		if c != 'h' && c != 'x' {
			out = append(out, "{"+string(c))
			continue
		}
		out = append(out, "{"+string(c)+"}")
		for _, c2 := range tagAlphabet {
			out = append(out, "{"+string(c)+string(c2))
		}
	}
	return out
}
