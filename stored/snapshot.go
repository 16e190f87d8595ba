package stored

// Snapshot is a holder's whole state in the library's terms: minor units,
// coupons and holds in their stored form. The engine reads it from Redis,
// the ledger from PostgreSQL; reconciliation compares the two and a rebuild
// writes the ledger's back to Redis.
type Snapshot struct {
	Holder    string
	Status    string
	Seq       int64
	Digest    string
	CreatedMs int64
	Lanes     int                 // a hot holder's lane count (its field lanes); 0 for a plain holder
	Balances  map[string][2]int64 // asset -> available, frozen
	Points    *[2]int64           // available, frozen; nil if the holder has no points fields (p:a, p:f)
	Coupons   map[string]string   // coupon -> "<state>" or "<state>|<expires ms>" (ParseCoupon)
	Holds     map[string]string   // open hold -> "<expires ms or 0>|<leg>=<units>,...|<coupon>,..." (ParseHold)
	// Recent lists instructions whose idempotency records a rebuild writes
	// again, in seq order: the ledger fills it for those applied since a
	// cut-off; the engine's Snapshots leaves it empty.
	Recent []RecentInstruction
}

// RecentInstruction is an applied instruction whose idempotency record a
// rebuild writes: the record is the start of FP, then State without what a
// replay does not need, as the library writes it, and lives until TsMs plus
// the idempotency TTL.
type RecentInstruction struct {
	ID    string
	FP    string // the request fingerprint
	TsMs  int64  // when it was applied: Redis server time, Unix ms
	State string // the event's state, byte for byte the result json the client got
}
