// Package ledger is the PostgreSQL side of atomledger, the source of truth:
// it applies the events of the Redis outbox as a double-entry ledger, and
// reads it back for reconciliation and rebuild. It is the only package that
// talks to PostgreSQL.
//
// # Basics
//
// Open connects and applies the embedded schema migrations (versioned, each
// in its own transaction, under an advisory lock, so several processes may
// start at once). Everything lives in the schema "ledger".
//
// Write takes a batch of outbox events (stored.Entry: each stream entry read
// as an event, see docs/events.md) and commits it in one transaction. Per holder, events
// apply in seq order, exactly once:
//
//   - an event at or below the holder's seq is a duplicate and is skipped
//     (one whose digest differs from the one recorded is a conflict: Redis
//     rewrote history, typically after losing acknowledged writes);
//   - an event past the next seq is parked in ledger.parked until the missing
//     ones arrive (a gap), counted and logged;
//   - the next event applies only if its digest is sha1(previous digest,
//     event), by the event's digest version (Digest; the version is kept
//     per instruction), and chains on the holder's digest; otherwise it is set
//     aside (recorded in ledger.set_aside) and the holder stops there: its
//     later events park behind it.
//
// An event PostgreSQL refuses (U+0000 in a text field, say) would fail the
// whole batch's transaction, every time it is sent: the sink then finds it
// (the batch by halves of its holders, then the failing holder's events one
// by one) and sets it aside too, so that it stalls only its own holder. A
// malformed event is set aside as well. Repair applies one once mended, with
// the events parked behind it.
//
// Each movement of an event becomes two entries, one leaving an account and
// one arriving at another: the holder's available, frozen (points use the
// asset "points") and the counterparty's account. An event's entries sum to
// zero per asset and every account is the sum of its entries: Audit checks
// both over what was written since its last clean run, Unbalanced and
// AccountDrifts over the whole history.
//
// A cross-holder transfer arrives as its parts' instructions, one per step
// and holder, each in its holder's history, tagged with the transfer
// (instructions.transfer, from the event's xfer field, which the digest also
// covers). Their counterparty is the transfer's clearing account; the view
// ledger.transfer_balances sums it per transfer and asset from the entries:
// zero once every part's commit is in. The sink keeps the sums that are not
// zero in ledger.transfer_clearing, in the same transaction as the entries,
// so UnsettledTransfers lists the transfers some of whose commits are in and
// others not without reading history; reconciliation judges them against the
// transfers' Redis records. Those sums are the clearing accounts' amounts:
// ledger.accounts holds none, and an account without a row is zero (the view
// ledger.account_amounts gives every account's).
//
// A row stores nothing other fields of it already say (compact.go, migration
// 7): a transfer part's id, counterparty and memo, the fingerprint and digest
// as bytes, a debit's or credit's movement, the head of a state, an entry's
// account when it is the holder's own. The view ledger.events gives each
// event back as Redis wrote it; whoever reads events reads it, so that every
// digest checks again.
//
// Write returns nil once everything in the batch is committed (applied,
// skipped, parked, refused or set aside), so the relay may then delete the events
// from Redis; on error nothing was committed and the batch is sent again.
//
// Snapshots reads holders back in Redis's terms, for reconciliation and
// rebuild; with a cut-off, it also lists the instructions applied since then
// (id, request fingerprint and result), from which a rebuild writes their
// idempotency records again.
//
// Statement reads a page of a holder's applied instructions from a seq,
// oldest first, with their movements in decimals (Options.Assets); Instruction
// reads one by id. The primary key (holder, seq) and the index (holder, id)
// (a transfer part's id through the index on transfer) serve them
// (docs/ledger.md shows the plan).
//
// A lane of a hot holder X, the holder X#i (1 to 63), is a holder in every
// respect here (its seq, digest chain, entries); ledger.holders.parent
// names X (migration 11). X's statement merges X's history and its lanes'
// in the feed's order, each event naming its lane, and pages by a cursor of
// each lane's seq (Statement, StatementAfter); Instruction under X finds an
// id on any lane; the feed gives a lane's events with their parent and lane.
//
// # Caveats
//
// Rejections are not events: the ledger never sees them, so a holder rebuilt
// from it remembers the ids of its recent applied instructions but not those
// of its recent rejections.
package ledger
