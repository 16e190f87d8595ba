// Package stored holds the shapes of what the library stores, in its own
// terms, and reads them in one place: a holder's whole state (Snapshot), the
// outbox event (Event, ParseEvent, Digest) and the entry the relay hands its
// sink (Entry), the stored hold and coupon strings, and the result json that
// a call answers and an event's state field carries. The engine reads them
// from Redis, the ledger from the outbox and PostgreSQL, reconciliation
// compares the two.
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
