package cluster

// Holder returns the key of holder's hash (key format 2): status, seq,
// digest, created_ms and every account of the holder, as fields (their names
// are package stored's). Every key of
// a holder shares its hash tag "{h:<holder>}", so it lives in
// HolderSlot(holder) and one call can touch all of them. The id is used as
// given: callers validate it first (a brace in it would move the key to
// another slot).
func Holder(holder string) string {
	return holderTag(holder)
}

// HolderOfKey gives the holder of a holder hash's key, and false for any
// other key.
func HolderOfKey(key string) (string, bool) {
	if len(key) < 4 || key[:3] != "{h:" || key[len(key)-1] != '}' {
		return "", false
	}
	return key[3 : len(key)-1], true
}

// HolderPattern is the SCAN pattern of the holder hashes (and of nothing
// else with a hash type: idempotency records are strings and do not end in
// a brace).
const HolderPattern = "{h:*}"

// holderTag is the hash tag shared by every key of holder.
func holderTag(holder string) string {
	return "{h:" + holder + "}"
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

// HotHolders returns the key of the set of hot holders' names (a holder
// with lanes: docs/hot-holders.md), which their sweep reads. It is written
// before a holder's lanes are opened or raised.
func HotHolders() string {
	return "{hot}:holders"
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
