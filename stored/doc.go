// Package stored holds every form the library (lua/atomledger.lua) writes,
// in its own terms, and spells and reads them in one place: the holder
// hash's field names and a holder's whole state (Snapshot, ParseHolder,
// HolderFields, and Differences between two accounts of it), the outbox
// event's fields (Event, ParseEvent, Digest, HolderSeq) and the entry the
// relay hands its sink (Entry), the idempotency record (Record,
// AppliedRecord, RecordOutcome, KeptResult), the stored hold and coupon
// strings, and the result json that a call answers and an event's state
// field carries (ParseResult, ReadResult, ReadKept). The engine reads them
// from Redis, the ledger from the outbox and PostgreSQL, reconciliation
// compares the two. Other packages use these names rather than spell the
// forms again.
//
// # Basics
//
// Amounts here are minor units, as the library keeps them; turning them
// into decimal amounts at an asset's scale is the engine's work, for its
// callers. Clients never see these forms: package instructions is what they
// speak.
//
// # Caveats
//
// The formats are the library's (lua/atomledger.lua, docs/events.md): a
// change here is a change of the stored format, which events and snapshots
// already written must still read.
//
// This package imports nothing of the module: engine and ledger both import
// it, and neither imports the other.
package stored
