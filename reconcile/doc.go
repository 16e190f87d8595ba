// Package reconcile checks Redis against the PostgreSQL ledger, the source
// of truth, rebuilds Redis from it, and looks an instruction up in both. It
// holds the rules; engined's reconcile and rebuild commands parse flags,
// call Run and Rebuild, and print; its lookup by id calls FindInstruction.
//
// # Findings
//
// Run compares every holder either side knows, by seq first:
//
//   - the same seq: the digest, status, balances, points, coupons and holds
//     must agree (stored.Differences, the comparison engine.Restore refuses
//     by); else mismatch: a figure changed outside the engine.
//   - Redis ahead: in_flight while each missing event is still in the
//     holder's outbox or already in the ledger (not drift); lost_in_relay
//     when one is in neither (it left the outbox without being committed),
//     with its seq.
//   - the ledger ahead: pg_ahead, Redis lost acknowledged writes (a failover
//     without replica acknowledgements). A holder only the ledger has is
//     missing_in_redis.
//   - diverged: the ledger refused events of the holder and the two differ:
//     Redis applied events that do not chain on the ledger's history, so
//     Redis being ahead is not in flight any more.
//
// A lane of a hot holder X (the holder X#i, DESIGN.md, Hot holders) is
// compared as any holder; its finding names X (parent) and the lane, and
// comes right after X's own, so that the hot holder reads as a whole.
//
// A transfer whose clearing account is not zero in the ledger is
// transfer_in_flight while younger than Options.TransferTimeout or while one
// of its holders has events on their way, else transfer_unbalanced. The
// ledger's own books are checked too: entries that do not sum to zero,
// accounts that are not the sum of their entries (over what was written
// since the last clean audit: ledger.Audit), events refused, events set
// aside (each stalls its holder) and events parked behind a gap. Everything
// but in_flight, transfer_in_flight and parked events is drift.
//
// # Cost
//
// A run reads every holder once on each side, the transfers whose clearing
// account is not zero (ledger.transfer_clearing holds only those) and the
// entries written since the last clean audit: it costs in proportion to the
// holders and to what is unsettled or new, not to the ledger's history
// (docs/benchmarks.md, "Reconcile at scale").
//
// # Read order
//
// For each batch of holders the ledger is read before Redis. The relay only
// ever commits to the ledger what Redis applied, so a commit landing between
// the two reads makes Redis look ahead (in flight, which the outbox then
// confirms), never the ledger ahead, which would report lost writes that are
// not. For the same reason the outbox is read after Redis's state, and the
// ledger's arrivals after the outbox: an event delivered meanwhile left the
// outbox only once the ledger had it.
//
// # Rebuild
//
// Rebuild writes a holder's whole Redis state from the ledger, with the
// idempotency records of its instructions still within the idempotency TTL
// (so that a retry gets its first answer), in one MULTI per holder, where
// Redis lacks the holder or is behind. It leaves alone a holder Redis already
// has whole, and refuses, listing why, one where Redis is ahead, one whose
// figures differ at the same seq and digest (a mismatch: it is never called
// in sync), and one that diverged, whose acknowledged instructions a rebuild
// would discard. With force it writes the ledger's state over all three.
// A hot holder is rebuilt with every lane the ledger has of it; a lane a
// master lost (missing in Redis) is written back like any holder.
// Rejections are not in the ledger: their idempotency records are not
// rebuilt.
//
// # Lookup
//
// FindInstruction answers what became of an instruction by its id: the
// answer Redis recorded while it remembers the id (a rejection too), else
// the applied instruction the ledger keeps; neither has a rejection Redis
// forgot.
package reconcile
